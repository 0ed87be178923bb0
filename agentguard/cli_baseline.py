"""``agentguard baseline``, and ``check --baseline``: accept today's findings so that only
new ones fail the build."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from agentguard.cli_common import (
    ExcludeOption,
    ExtendExcludeOption,
    err,
    fail,
    scan_paths,
    warn,
)

if TYPE_CHECKING:
    from agentguard.engine.baseline import Baseline
    from agentguard.engine.scan_result import ScanResult


def load_baseline(file: Path) -> Baseline:
    """A baseline read before the scan, so that a wrong one is told at once."""
    from agentguard.engine.baseline import Baseline, BaselineError

    try:
        return Baseline.load(file)
    except BaselineError as exc:
        raise fail(str(exc)) from None


def apply_baseline(
    result: ScanResult, loaded: Baseline, file: Path, select: list[str], ignore: list[str]
) -> None:
    from agentguard.checks.base import selected
    from agentguard.engine.baseline import EntryKey, compare

    accepted = _rebased(loaded, result, file, rewriting=False)
    show = result.paths.show
    scanned = {show(rel) for rel in (*result.python_paths, *result.schema_paths)}
    select = select or result.config.select or ["ALL"]
    ignore = ignore + result.config.ignore

    def judged(key: EntryKey) -> bool:
        # An entry of a rule not selected, or of a file not scanned, is not stale: this run
        # could not have found its finding.
        return key.path in scanned and selected(key.code, select, ignore)

    outcome = compare(result.findings, accepted, file.as_posix(), show, judged)
    result.findings = outcome.new
    result.baseline = outcome
    for entry in outcome.stale:
        err.print(
            f"[yellow]stale baseline entry[/] {escape(entry.describe())} "
            f"[dim](no longer found; `agentguard baseline update {escape(str(file))}` drops it)[/]"
        )


def _rebased(loaded: Baseline, result: ScanResult, file: Path, *, rewriting: bool) -> Baseline:
    """A baseline as this run compares it: paths relative to the repository root. One
    written by agentguard 0.1.0 has them relative to the scanned folder: read so, and said."""
    rebased = loaded.rebased(result.paths.show)
    if set(rebased.counts) != set(loaded.counts):
        then = (
            "they are rewritten"
            if rewriting
            else f"`agentguard baseline update {file}` rewrites them"
        )
        warn(
            f"{file}: its paths are relative to the scanned folder (an older agentguard) and "
            f"are read as such; {then} relative to the {result.paths.kind}, as every output "
            "shows them"
        )
    return rebased


baseline_app = typer.Typer(
    help="Accept today's findings so that only new ones fail the build.", no_args_is_help=True
)


@baseline_app.command("create")
def baseline_create(
    file: Annotated[Path, typer.Argument(help="The baseline file to write (JSON).")],
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders to scan.")] = None,
    config: Annotated[Path | None, typer.Option(help="Use this config file.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing baseline.")] = False,
    exclude: ExcludeOption = None,
    extend_exclude: ExtendExcludeOption = None,
) -> None:
    """Write a baseline accepting every current finding."""
    from agentguard.engine.baseline import Baseline

    if file.exists() and not force:
        raise fail(f"{file}: already exists; use `agentguard baseline update` or --force")
    result = scan_paths(paths, config, exclude, extend_exclude)
    accepted = Baseline.from_findings(result.findings, result.paths.show)
    try:
        accepted.write(file)
    except OSError as exc:
        raise fail(f"{file}: cannot write baseline: {exc.strerror or exc}") from None
    typer.echo(
        f"{file}: {len(result.findings)} findings accepted in {len(accepted.counts)} entries"
    )


@baseline_app.command("update")
def baseline_update(
    file: Annotated[Path, typer.Argument(help="The baseline file to rewrite.")],
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders to scan.")] = None,
    config: Annotated[Path | None, typer.Option(help="Use this config file.")] = None,
    exclude: ExcludeOption = None,
    extend_exclude: ExtendExcludeOption = None,
) -> None:
    """Rewrite a baseline from the current findings: stale entries go, new findings join."""
    from agentguard.engine.baseline import Baseline, BaselineError, compare

    try:
        previous = Baseline.load(file)
    except BaselineError as exc:
        raise fail(str(exc)) from None
    result = scan_paths(paths, config, exclude, extend_exclude)
    previous = _rebased(previous, result, file, rewriting=True)
    outcome = compare(result.findings, previous, show=result.paths.show)
    accepted = Baseline.from_findings(result.findings, result.paths.show)
    try:
        accepted.write(file)
    except OSError as exc:
        raise fail(f"{file}: cannot write baseline: {exc.strerror or exc}") from None
    dropped = sum(entry.unmatched for entry in outcome.stale)
    typer.echo(
        f"{file}: {len(result.findings)} findings accepted ({len(outcome.new)} added, "
        f"{dropped} no longer found and dropped)"
    )
