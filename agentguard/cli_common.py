"""What every command of the command line shares: the error console, exit codes, the
options several commands take, and how a command finds its paths, config and cache."""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from agentguard.config import Config, ConfigError, load_config
from agentguard.engine.fact_cache import cache_unusable, default_cache_dir, inside_scanned_tree

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult
    from agentguard.engine.speed import FactOptions


err = Console(stderr=True, highlight=False, soft_wrap=True)


EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


ExcludeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        help="Files or folders not to scan (gitignore-style patterns); replaces the config's "
        "`exclude` and its defaults.",
    ),
]


ExtendExcludeOption = Annotated[
    list[str] | None,
    typer.Option("--extend-exclude", help="More files or folders not to scan, added to `exclude`."),
]


ExtendSelectOption = Annotated[
    list[str] | None,
    typer.Option(
        "--extend-select",
        help="Rule codes or prefixes added to the selection (--select's or the config's).",
    ),
]


ExtendIgnoreOption = Annotated[
    list[str] | None,
    typer.Option("--extend-ignore", help="Rule codes or prefixes to skip, added to --ignore."),
]


QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print the findings (or the diff) and nothing else.")
]


ShowFixesOption = Annotated[
    bool, typer.Option("--show-fixes", help="With fixes applied, list what each file had fixed.")
]


def split_codes(values: list[str] | None) -> list[str]:
    codes: list[str] = []
    for value in values or []:
        codes += [c.strip().upper() for c in value.split(",") if c.strip()]
    return codes


def selection(
    cfg: Config,
    select: list[str] | None,
    ignore: list[str] | None,
    extend_select: list[str] | None,
    extend_ignore: list[str] | None,
) -> tuple[list[str], list[str]]:
    """The command line's selection, as ruff reads it: ``--extend-select`` adds to
    ``--select`` (else to the config's ``select``, else to every rule); ``--ignore`` and
    ``--extend-ignore`` add to the config's ``ignore``."""
    chosen = split_codes(select)
    extra = split_codes(extend_select)
    if extra:
        chosen = (chosen or cfg.select or ["ALL"]) + extra
    return chosen, split_codes(ignore) + split_codes(extend_ignore)


def exclusions(cfg: Config, exclude: list[str] | None, extend_exclude: list[str] | None) -> None:
    """``--exclude`` replaces the configured exclusions, ``--extend-exclude`` adds to them;
    each takes patterns separated by commas, or the option again."""

    def patterns(values: list[str] | None) -> list[str]:
        return [p.strip() for value in values or [] for p in value.split(",") if p.strip()]

    if exclude:
        cfg.exclude = patterns(exclude)
    cfg.exclude = cfg.exclude + patterns(extend_exclude)


def fail(message: str) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
    return typer.Exit(EXIT_ERROR)


def warn(message: str) -> None:
    err.print("[bold yellow]warning:[/] " + escape(message))


def targets_and_config(paths: list[Path] | None, config: Path | None) -> tuple[list[Path], Config]:
    """The paths a command works on (default: this folder) and their config, or a clear
    error for a path that does not exist or a config that cannot be used."""
    targets = paths or [Path(".")]
    for target in targets:
        try:
            target.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise fail(f"{target}: symlink loop") from None
            if target.is_symlink():
                raise fail(f"{target}: broken symlink (its target does not exist)") from None
            if isinstance(exc, FileNotFoundError):
                raise fail(f"{target}: no such file or folder") from None
            raise fail(f"{target}: {exc.strerror or exc}") from None
    try:
        cfg = load_config(targets, config)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if "prefilter" in cfg.raw:
        where = f"{cfg.source}: " if cfg.source is not None else ""
        warn(f"{where}`prefilter` is deprecated and has no effect: every file is parsed")
    return targets, cfg


def cache_folder(cfg: Config, cache_dir: Path | None) -> Path:
    """``--cache-dir``, else the config's ``cache-dir`` (relative to the project root), else
    the project's folder of the user's cache (``agentguard.engine.fact_cache.default_cache_dir``)."""
    if cache_dir is not None:
        return cache_dir
    if cfg.cache_dir:
        return cfg.root / Path(cfg.cache_dir).expanduser()
    return default_cache_dir(cfg.root)


def fact_options(
    cfg: Config,
    *,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    no_cache: bool = False,
    record_runs: bool = True,
    targets: Sequence[Path] = (),
) -> FactOptions:
    """How a command's scans are sped up: ``--jobs`` and ``--cache-dir`` where the command
    has them, else the config's ``jobs`` and ``cache-dir``, else every core and the default
    cache folder. ``record_runs``: answer an unchanged tree from a recorded run. A cache
    folder inside the project root or a scanned folder (``targets``) is refused: the
    checkout could supply its entries and records, and so decide what is reported."""
    from agentguard.engine.parallel import default_jobs
    from agentguard.engine.speed import FactOptions

    folder: Path | None = None if no_cache else cache_folder(cfg, cache_dir)
    if folder is not None:
        inside = inside_scanned_tree(folder, [cfg.root, *targets])
        if inside is not None:
            warn(
                f"the cache folder {folder} is inside the scanned tree ({inside}), where a "
                "checkout could supply its entries; checking without a cache (the default "
                "cache is kept outside the project)"
            )
            folder = None
    if folder is not None:
        unusable = cache_unusable(folder)
        if unusable:
            warn(f"the cache folder {folder} cannot be used ({unusable}); checking without a cache")
            folder = None
    return FactOptions(
        jobs=jobs or cfg.jobs or default_jobs(),
        cache_dir=folder,
        record_runs=record_runs and folder is not None,
    )


def scan_paths(
    paths: list[Path] | None,
    config: Path | None,
    exclude: list[str] | None = None,
    extend_exclude: list[str] | None = None,
) -> ScanResult:
    targets, cfg = targets_and_config(paths, config)
    exclusions(cfg, exclude, extend_exclude)
    from agentguard.engine.pipeline import scan

    try:
        # The model is wanted whole: a recorded run's answer would only link it again.
        return scan(targets, cfg, facts=fact_options(cfg, record_runs=False, targets=targets))
    except ConfigError as exc:
        raise fail(str(exc)) from None
