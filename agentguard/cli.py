"""The command line: thin; parses options, calls the library, renders."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown

from agentguard import __version__
from agentguard.cache import clean as remove_cache
from agentguard.cache import default_cache_dir
from agentguard.checks.base import QUESTIONS, all_rules, rule_by_code
from agentguard.config import ConfigError, load_config
from agentguard.diagnostics import Severity
from agentguard.output import FORMAT_MODULES, RenderOptions, renderer

if TYPE_CHECKING:
    from agentguard.engine import FactOptions

app = typer.Typer(
    name="agentguard",
    help="Make LLM-agent tool calls replay-safe: lint tools, fix declarations, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


def _split_codes(values: list[str] | None) -> list[str]:
    codes: list[str] = []
    for value in values or []:
        codes += [c.strip().upper() for c in value.split(",") if c.strip()]
    return codes


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentguard {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """agentguard: replay-safety for LLM tool calls."""


def _fail(message: str) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
    return typer.Exit(EXIT_ERROR)


@app.command()
def check(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders to scan.")] = None,
    output_format: Annotated[
        str, typer.Option("--format", "-f", help=f"Output format: {'|'.join(FORMAT_MODULES)}.")
    ] = "text",
    select: Annotated[
        list[str] | None, typer.Option(help="Rule codes or prefixes to enable (AG2, AG201).")
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option(help="Rule codes or prefixes to skip.")
    ] = None,
    fail_on: Annotated[
        FailOn | None, typer.Option(help="Lowest severity that fails the run.")
    ] = None,
    exit_zero: Annotated[bool, typer.Option(help="Exit 0 even with findings.")] = False,
    statistics: Annotated[bool, typer.Option(help="Show counts per rule.")] = False,
    config: Annotated[Path | None, typer.Option(help="Use this config file.")] = None,
    no_source: Annotated[bool, typer.Option(help="Do not print the offending lines.")] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", min=1, help="Processes that parse files (default: the cores)."
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Parse every file; neither read nor write the cache.")
    ] = False,
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="Where per-file facts are cached (default: .agentguard_cache/)."),
    ] = None,
    profile: Annotated[
        bool, typer.Option("--profile", help="Print the time of each phase and rule to stderr.")
    ] = False,
) -> None:
    """Scan agent code and tool schemas for replay-safety problems."""
    if output_format not in FORMAT_MODULES:
        raise _fail(f"unknown format {output_format!r}; choose one of {', '.join(FORMAT_MODULES)}")
    targets = paths or [Path(".")]
    for target in targets:
        if not target.exists() and not target.is_symlink():
            raise _fail(f"{target}: no such file or folder")
    try:
        cfg = load_config(targets, config)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    from agentguard.engine import FactOptions, scan
    from agentguard.parallel import default_jobs

    fact_options = FactOptions(
        jobs=jobs or default_jobs(),
        cache_dir=None if no_cache else (cache_dir or default_cache_dir(cfg.root)),
    )
    try:
        with _progress_bar(enabled=sys.stderr.isatty() and sys.stdout.isatty()) as progress:
            fact_options.progress = progress
            result = scan(
                targets,
                cfg,
                select=_split_codes(select),
                ignore=_split_codes(ignore),
                facts=fact_options,
            )
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    options = RenderOptions(
        color=sys.stdout.isatty() and output_format == "text",
        statistics=statistics,
        show_source=not no_source,
    )
    renderer(output_format)(result, sys.stdout, options)
    if profile:
        _print_profile(result.timings, fact_options)
    threshold = Severity((fail_on.value if fail_on else None) or cfg.fail_on).rank
    failing = [f for f in result.findings if f.severity.rank >= threshold]
    if failing and not exit_zero:
        raise typer.Exit(EXIT_FINDINGS)


# Scans with fewer files than this finish before a progress bar would be worth drawing.
PROGRESS_MIN_FILES = 500


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr for long scans in a terminal; nothing otherwise."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = bar.add_task("parsing", total=None, visible=False)
    counted = 0
    started = False

    def advance(count: int, total: int) -> None:
        nonlocal counted, started
        counted += count
        if not started and total >= PROGRESS_MIN_FILES:
            started = True
            bar.start()
            bar.update(task, visible=True)
        bar.update(task, completed=counted, total=total)

    try:
        yield advance
    finally:
        if started:
            bar.stop()


def _print_profile(timings: dict[str, float], options: FactOptions) -> None:
    from rich.table import Table

    table = Table(title="agentguard --profile", show_edge=False)
    table.add_column("phase / rule")
    table.add_column("seconds", justify="right")
    for name, seconds in timings.items():
        if name != "total":
            table.add_row(name, f"{seconds:.3f}")
    table.add_row("[bold]total[/]", f"[bold]{timings.get('total', 0.0):.3f}[/]")
    err.print(table)
    stats = options.stats
    if stats is not None:
        err.print(
            f"files {stats.files}: parsed {stats.parsed}, from cache {stats.cache_hits}, "
            f"jobs {stats.jobs}"
        )


@app.command()
def clean(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Project folders (default: this one).")
    ] = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Remove this cache folder.")] = None,
) -> None:
    """Remove the cached per-file facts."""
    targets = paths or [Path(".")]
    try:
        cfg = load_config(targets, None)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    folder = cache_dir or default_cache_dir(cfg.root)
    try:
        removed = remove_cache(folder)
    except (OSError, ValueError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"removed {folder}" if removed else f"no cache at {folder}")


@app.command()
def rule(code: Annotated[str, typer.Argument(help="A rule code (AG201) or name.")]) -> None:
    """Show a rule's documentation."""
    found = rule_by_code(code)
    if found is None:
        raise _fail(f"no rule {code!r}; `agentguard rules` lists them")
    console = Console()
    console.print(f"[bold]{found.code} {found.name}[/] ({found.severity.value}, {found.question})")
    console.print(f"[dim]{QUESTIONS.get(found.question, '')}[/]")
    fix = found.fix_applicability.value if found.fix_applicability else "none"
    console.print(f"[dim]fix: {fix}[/]\n")
    console.print(Markdown(found.docs()))


@app.command()
def rules(
    output_format: Annotated[str, typer.Option("--format", "-f", help="text|json")] = "text",
) -> None:
    """List every rule."""
    if output_format == "json":
        import json

        typer.echo(
            json.dumps(
                [
                    {
                        "code": r.code,
                        "name": r.name,
                        "question": r.question,
                        "severity": r.severity.value,
                        "fix": r.fix_applicability.value if r.fix_applicability else None,
                        "summary": r.short_description(),
                    }
                    for r in all_rules()
                ],
                indent=2,
            )
        )
        return
    from rich.table import Table

    table = Table(show_edge=False)
    for column in ("code", "name", "question", "severity", "fix", "what it flags"):
        table.add_column(column)
    for r in all_rules():
        fix = r.fix_applicability.value if r.fix_applicability else ""
        table.add_row(r.code, r.name, r.question, r.severity.value, fix, r.short_description())
    Console().print(table)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
