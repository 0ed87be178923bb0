"""``agentguard fix`` and ``check --fix``: the fixes as a diff, applied, or as a patch."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from agentguard.cli_common import (
    EXIT_FINDINGS,
    ExcludeOption,
    ExtendExcludeOption,
    ExtendIgnoreOption,
    ExtendSelectOption,
    QuietOption,
    ShowFixesOption,
    err,
    exclusions,
    fact_options,
    fail,
    selection,
    targets_and_config,
)
from agentguard.config import Config, ConfigError
from agentguard.diagnostics import Applicability

if TYPE_CHECKING:
    from agentguard.engine.apply_fixes import FileChange, FixRun
    from agentguard.engine.speed import FactOptions


def apply_fixes(
    targets: list[Path],
    cfg: Config,
    select: list[str],
    ignore: list[str],
    unsafe: bool,
    facts: FactOptions,
    *,
    quiet: bool = False,
    show_fixes: bool = False,
) -> FixRun:
    """Apply fixes to disk (check --fix, fix --write) and say what happened on stderr:
    the count (unless ``quiet``), and with ``show_fixes`` each file's fixes by rule."""
    from agentguard.engine.apply_fixes import run_fixes, write_changes

    run = run_fixes(targets, cfg, select=select, ignore=ignore, unsafe=unsafe, facts=facts)
    problems = write_changes(run.changes)
    failed = {p.path for p in problems}
    written = [c for c in run.changes if c.path not in failed]
    for problem in problems:
        err.print(
            f"[yellow]not written:[/] {escape(run.paths.show(problem.path))}: "
            f"{escape(problem.reason)}",
            markup=True,
        )
    report_rollbacks(run)
    fixed = sum(len(c.fixed) for c in written)
    if fixed and not quiet:
        err.print(
            f"Fixed {fixed} finding{'s' * (fixed != 1)} in {len(written)} file{'s' * (len(written) != 1)}."
        )
    if show_fixes:
        _show_fixes(run, written)
    return run


def _show_fixes(run: FixRun, written: list[FileChange]) -> None:
    """What was fixed, file by file and rule by rule, as ruff's ``--show-fixes`` lists it."""
    if not written:
        err.print("No findings fixed.", markup=False, highlight=False)
        return
    for change in sorted(written, key=lambda c: run.paths.show(c.path)):
        err.print(f"- {run.paths.show(change.path)}:", markup=False, highlight=False)
        counts = Counter((finding.code, finding.name) for finding in change.fixed)
        for (code, name), count in sorted(counts.items()):
            err.print(f"    {count} x {code} ({name})", markup=False, highlight=False)


def report_rollbacks(run: FixRun) -> None:
    """Fixes undone, fixes on offer that could not be made, and files whose language fixes
    cannot edit yet: never left unsaid, since ``check`` told the user a fix was available
    (or would for the same code in Python)."""
    for rolled in run.unmade:
        f = run.paths.finding(rolled.finding)
        err.print(
            f"[yellow]fix not made:[/] {escape(str(f.location))} {f.code}: {escape(rolled.reason)}",
            markup=True,
            highlight=False,
        )
    by_file: dict[str, set[str]] = {}
    for finding in run.unsupported:
        by_file.setdefault(finding.path, set()).add(finding.code)
    for path, codes in sorted(by_file.items()):
        language = "JavaScript" if path.endswith((".js", ".jsx", ".mjs", ".cjs")) else "TypeScript"
        err.print(
            f"{escape(run.paths.show(path))}: no automatic fix for {language} yet "
            f"({', '.join(sorted(codes))}); the file is left unchanged",
            markup=True,
            highlight=False,
        )
    for rolled in run.rolled_back:
        f = run.paths.finding(rolled.finding)
        err.print(
            f"[yellow]fix rolled back:[/] {escape(str(f.location))} {f.code}: "
            f"{escape(rolled.reason)}",
            markup=True,
            highlight=False,
        )


def fix_command(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders to fix.")] = None,
    write: Annotated[bool, typer.Option("--write", help="Apply the fixes to the files.")] = False,
    unsafe_fixes: Annotated[
        bool,
        typer.Option("--unsafe-fixes", help="Include unsafe fixes (they change behaviour)."),
    ] = False,
    emit_patch: Annotated[
        Path | None,
        typer.Option("--emit-patch", help="Write the fixes as a patch for `git apply`."),
    ] = None,
    select: Annotated[
        list[str] | None, typer.Option(help="Only fix these rule codes or prefixes.")
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option(help="Do not fix these rule codes or prefixes.")
    ] = None,
    extend_select: ExtendSelectOption = None,
    extend_ignore: ExtendIgnoreOption = None,
    exclude: ExcludeOption = None,
    extend_exclude: ExtendExcludeOption = None,
    diff: Annotated[
        bool,
        typer.Option(
            "--diff", help="Print the fixes as a unified diff; change nothing (the default)."
        ),
    ] = False,
    quiet: QuietOption = False,
    show_fixes: ShowFixesOption = False,
    config: Annotated[Path | None, typer.Option(help="Use this config file.")] = None,
) -> None:
    """Show the available fixes as a unified diff (default), apply them, or write a patch.

    Exit codes: without --write, 1 when there is something to fix and 0 otherwise; with
    --write, 1 when a fix had to be rolled back or a file could not be written.
    """
    if diff and write:
        raise fail("--diff prints the fixes and --write applies them: choose one")
    if paths and any(str(path) == "-" for path in paths):
        raise fail("`agentguard fix` works on files; `agentguard check -` reads standard input")
    targets, cfg = targets_and_config(paths, config)
    exclusions(cfg, exclude, extend_exclude)
    codes, skipped = selection(cfg, select, ignore, extend_select, extend_ignore)
    from agentguard.engine.apply_fixes import run_fixes

    facts = fact_options(cfg, record_runs=False, targets=targets)
    try:
        if write:
            run = apply_fixes(
                targets,
                cfg,
                codes,
                skipped,
                unsafe_fixes,
                facts,
                quiet=quiet,
                show_fixes=show_fixes,
            )
        else:
            run = run_fixes(
                targets, cfg, select=codes, ignore=skipped, unsafe=unsafe_fixes, facts=facts
            )
            report_rollbacks(run)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    patch = run.patch()
    for change in run.changes:
        for finding in change.fixed:
            if finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE:
                # An unsafe fix's description names the follow-ups it leaves to the user.
                err.print(
                    f"{run.paths.location(finding.location)} {finding.code}: "
                    f"{finding.fix.description}",
                    markup=False,
                    highlight=False,
                )
    if emit_patch is not None:
        try:
            emit_patch.write_bytes(patch)
        except OSError as exc:
            raise fail(f"{emit_patch}: {exc.strerror or exc}") from None
    elif not write:
        sys.stdout.flush()
        sys.stdout.buffer.write(patch)
        sys.stdout.buffer.flush()
    if run.unapplied_unsafe and not unsafe_fixes and not quiet:
        n = run.unapplied_unsafe
        err.print(f"{n} more fix{'es' * (n != 1)} available with --unsafe-fixes.")
    if not write and run.changes and quiet:
        raise typer.Exit(EXIT_FINDINGS)
    if not write and run.changes:
        n = run.fixed_count
        err.print(
            f"{n} fix{'es' * (n != 1)} in {len(run.changes)} file{'s' * (len(run.changes) != 1)}"
            + ("" if emit_patch else "; run with --write to apply.")
        )
        raise typer.Exit(EXIT_FINDINGS)
    if write and run.rolled_back:
        raise typer.Exit(EXIT_FINDINGS)
