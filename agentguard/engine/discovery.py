"""Which files to scan: paths given, minus .gitignore'd and excluded ones."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from agentguard.config import Config, ConfigError
from agentguard.diagnostics import ScanProblem
from agentguard.facts.extract import is_test_path as is_python_test_path
from agentguard.facts.typescript.extract import is_test_path as is_ts_test_path
from agentguard.facts.typescript.modules import TS_SUFFIXES

PYTHON_SUFFIXES = (".py", ".pyi")
# Every file the front ends read: Python, TypeScript and JavaScript.
SOURCE_SUFFIXES = PYTHON_SUFFIXES + TS_SUFFIXES
SCHEMA_SUFFIXES = (".json", ".yaml", ".yml")
# Files that say where a project's packages live (``agentguard.engine.module_roots``).
PACKAGE_CONFIGS = frozenset({"pyproject.toml", "setup.cfg", "setup.py"})
# Files that say where a TypeScript or JavaScript import leads (agentguard.engine.ts_projects).
TS_CONFIG_NAMES = frozenset({"package.json", "jsconfig.json"})
# Reading a named pipe blocks until something writes to it: such files are named, not read.
NOT_A_REGULAR_FILE = "not a regular file (a named pipe, socket or device), not read"


class NothingToCheck(ConfigError):
    """A path given to scan holds no file to check (empty, or every file excluded): a wrong
    path in CI must not pass as a clean scan. The CLI prints it and exits 2."""


@dataclass
class FileSet:
    # (absolute path, relative path): a string, not a Path, because constructing thousands
    # of Path objects was a twentieth of a check that its recorded run answers.
    sources: list[tuple[str, str]] = field(default_factory=list)
    schemas: list[tuple[Path, str]] = field(default_factory=list)
    problems: list[ScanProblem] = field(default_factory=list)
    # Relative paths of the packaging files (pyproject.toml, setup.cfg, setup.py) found.
    package_configs: list[str] = field(default_factory=list)
    # (absolute path, relative path) of the tsconfig, jsconfig and package.json files found.
    ts_configs: list[tuple[str, str]] = field(default_factory=list)
    # The paths given that yielded no file to check and no problem: nothing was checked there.
    empty_paths: list[str] = field(default_factory=list)


def _absolute(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: keep the path as written
        return Path(os.path.abspath(path))


def relative(path: Path, root: Path) -> str:
    return _relative_to(str(_absolute(path)), str(_absolute(root)), path.as_posix())


def _relative_to(absolute: str, root: str, written: str | None = None) -> str:
    """``absolute`` (a resolved path) relative to the resolved ``root``, "/"-separated; the
    path as written (default: ``absolute``) when it lies outside the root. String slicing, not ``Path.resolve``:
    discovery calls this for every file, and resolving costs a system call per component."""
    if absolute == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    if absolute.startswith(prefix):
        return absolute[len(prefix) :].replace(os.sep, "/")
    return written if written is not None else absolute.replace(os.sep, "/")


_GLOB_CHARS = frozenset("*?[]!\\/#")


def _literal_names(patterns: list[str]) -> tuple[frozenset[str], frozenset[str], list[str]]:
    """Split exclude patterns into plain names (``.venv``; ``build/`` for folders only) and
    the rest. A plain gitignore name matches any path component equal to it, so a set
    lookup decides it; matching every file against each pattern's regular expression was
    most of discovery's time. With a negation (``!keep``) order matters: all stay patterns.
    """
    if any(p.strip().startswith("!") for p in patterns):
        return frozenset(), frozenset(), list(patterns)
    names: set[str] = set()
    dir_names: set[str] = set()
    rest: list[str] = []
    for raw in patterns:
        pattern = raw.strip()
        if not pattern:
            continue
        folder_only = pattern.endswith("/")
        bare = pattern[:-1] if folder_only else pattern
        if bare and not _GLOB_CHARS.intersection(bare) and bare not in {".", ".."}:
            (dir_names if folder_only else names).add(bare)
        else:
            rest.append(raw)
    return frozenset(names), frozenset(dir_names), rest


class _Ignores:
    """Nested .gitignore files, each applying to its own folder, plus config excludes."""

    def __init__(self, config: Config) -> None:
        self.root = str(_absolute(config.root))
        self.exclude_names, self.exclude_dir_names, rest = _literal_names(config.exclude)
        self.exclude = pathspec.GitIgnoreSpec.from_lines(rest) if rest else None
        self.include = pathspec.GitIgnoreSpec.from_lines(config.include) if config.include else None
        self.respect_gitignore = config.respect_gitignore
        # Resolved folder (with a trailing separator) -> its .gitignore.
        self.gitignores: dict[str, pathspec.GitIgnoreSpec] = {}

    def load_gitignore(self, folder: str) -> None:
        if not self.respect_gitignore:
            return
        candidate = os.path.join(folder, ".gitignore")
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8", errors="replace") as handle:
                    lines = handle.read().splitlines()
            except OSError:
                return
            key = folder if folder.endswith(os.sep) else folder + os.sep
            self.gitignores[key] = pathspec.GitIgnoreSpec.from_lines(lines)

    def ignored(self, absolute: str, rel: str, name: str, is_dir: bool) -> bool:
        """``absolute`` is the resolved path, ``rel`` the same relative to the root."""
        suffix = "/" if is_dir else ""
        parts = rel.split("/")
        if not self.exclude_names.isdisjoint(parts):
            return True
        if not self.exclude_dir_names.isdisjoint(parts if is_dir else parts[:-1]):
            return True
        if self.exclude is not None:
            if self.exclude.match_file(rel + suffix):
                return True
            # Outside the root there is no relative path to anchor on: judge the name.
            if rel.startswith("/") and self.exclude.match_file(name + suffix):
                return True
        for folder, spec in self.gitignores.items():
            if absolute.startswith(folder):
                inner = absolute[len(folder) :].replace(os.sep, "/")
                if spec.match_file(inner + suffix):
                    return True
        return bool(not is_dir and self.include is not None and not self.include.match_file(rel))


def discover(paths: list[Path], config: Config) -> FileSet:
    result = FileSet()
    ignores = _Ignores(config)
    root = ignores.root
    ignores.load_gitignore(root)
    seen: set[str] = set()

    found = 0  # files met, each time one is met (a file named twice is found twice)

    def add_file(absolute: str, real: str, rel: str, explicit: bool) -> None:
        """``real``: the resolved path; ``rel``: the same relative to the root."""
        nonlocal found
        found += 1
        if real in seen:
            return
        seen.add(real)
        if not rel.isascii() and not _utf8(rel):
            # Every output and cache key spells paths in UTF-8: such a name cannot be shown.
            shown = os.fsencode(rel).decode("utf-8", "backslashreplace")
            result.problems.append(ScanProblem(shown, "file name is not valid UTF-8, not read"))
            return
        suffix = os.path.splitext(absolute)[1]
        if suffix in SOURCE_SUFFIXES and not absolute.endswith(".d.ts"):
            # Told when the file is read (``parallel.read_source`` stats it anyway).
            result.sources.append((absolute, rel))
        elif suffix in SCHEMA_SUFFIXES:
            if _regular(real):
                result.schemas.append((Path(absolute), rel))
            else:
                result.problems.append(ScanProblem(rel, NOT_A_REGULAR_FILE))
        elif explicit:
            result.problems.append(
                ScanProblem(rel, "not a Python, TypeScript, JavaScript or tool-schema file")
            )

    for given in paths:
        try:
            given.stat()
        except OSError as exc:
            reason = "symlink loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
            result.problems.append(ScanProblem(relative(given, config.root), reason))
            continue
        if given.is_file():
            real = str(_absolute(given))
            add_file(str(given), real, _relative_to(real, root, given.as_posix()), explicit=True)
            continue
        if not given.is_dir():
            result.problems.append(ScanProblem(relative(given, config.root), NOT_A_REGULAR_FILE))
            continue
        before = (found, len(result.problems))
        # Walking from a resolved folder and never into symlinked folders, every path
        # below is already resolved: only symlinked files need resolving.
        for folder, dirs, files in _walk(str(_absolute(given)), result.problems, root):
            if any(entry.name == ".gitignore" for entry in files):
                ignores.load_gitignore(folder)
            kept = []
            for entry in dirs:
                rel = _relative_to(entry.path, root)
                if ignores.ignored(entry.path, rel, entry.name, True):
                    continue
                if not entry.is_symlink():
                    kept.append(entry)
                elif _loops(entry.path):
                    # Not followed, as every symlinked folder; a loop is named, since the
                    # files it seems to hold are never checked.
                    result.problems.append(ScanProblem(rel, "symlink loop, not followed"))
            dirs[:] = kept
            for entry in files:
                name = entry.name
                if name in PACKAGE_CONFIGS:
                    rel = _relative_to(entry.path, root)
                    if not ignores.ignored(entry.path, rel, name, False):
                        result.package_configs.append(rel)
                if name in TS_CONFIG_NAMES or (
                    name.startswith("tsconfig") and name.endswith(".json")
                ):
                    rel = _relative_to(entry.path, root)
                    if not ignores.ignored(entry.path, rel, name, False):
                        result.ts_configs.append((entry.path, rel))
                if not name.endswith(SOURCE_SUFFIXES + SCHEMA_SUFFIXES):
                    continue
                absolute = entry.path
                rel = _relative_to(absolute, root)
                real = absolute
                if entry.is_symlink():
                    try:
                        real = str(Path(absolute).resolve(strict=True))
                    except (OSError, RuntimeError):
                        result.problems.append(ScanProblem(rel, "broken symlink or symlink loop"))
                        continue
                if ignores.ignored(absolute, rel, name, False):
                    continue
                if real != absolute:
                    # Named by where the link points, when that is inside the root.
                    rel = _relative_to(real, root, absolute.replace(os.sep, "/"))
                add_file(absolute, real, rel, explicit=False)
        if before == (found, len(result.problems)):
            result.empty_paths.append(given.as_posix())
    if result.empty_paths:
        raise NothingToCheck(
            f"{', '.join(result.empty_paths)}: no Python, TypeScript, JavaScript or tool-schema file to check "
            "(the folder is empty, or every file in it is excluded)"
        )
    result.sources.sort(key=lambda p: p[1])
    result.ts_configs.sort(key=lambda p: p[1])
    result.schemas.sort(key=lambda p: p[1])
    result.package_configs.sort()
    return result


def _loops(link: str) -> bool:
    """Whether a symlinked folder cannot be resolved, or points at a folder holding it."""
    try:
        target = os.path.realpath(link, strict=True)
    except (OSError, RuntimeError):
        return True
    folder = os.path.realpath(os.path.dirname(link) or ".")
    return folder == target or folder.startswith(target.rstrip(os.sep) + os.sep)


def _walk(
    top: str, problems: list[ScanProblem], root: str
) -> Iterator[tuple[str, list[os.DirEntry[str]], list[os.DirEntry[str]]]]:
    """``os.walk(top)`` top-down, folders and files each sorted by name, as directory
    entries: their types come with the listing, so no file costs an ``lstat`` of its own.
    The caller prunes the folders it is given, in place, as with ``os.walk``. A folder
    that cannot be listed is a problem (reported as AG000): nobody checked its files."""
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            reason = "permission denied" if isinstance(exc, PermissionError) else exc.strerror
            problems.append(
                ScanProblem(
                    _relative_to(folder, root),
                    f"folder cannot be listed: {reason or exc}",
                    "unreadable",
                )
            )
            continue
        dirs: list[os.DirEntry[str]] = []
        files: list[os.DirEntry[str]] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry)
        dirs.sort(key=_entry_name)
        files.sort(key=_entry_name)
        yield folder, dirs, files
        stack.extend(entry.path for entry in reversed(dirs))


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes of the name, kept as surrogates
        return False
    return True


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # gone or unreadable: reading it says why


def is_test_path(rel: str) -> bool:
    """Whether a file is a test by its name, in its language's conventions (``test_*.py``,
    ``*.test.ts``, ``__tests__/``...)."""
    if rel.endswith(TS_SUFFIXES):
        return is_ts_test_path(rel)
    return is_python_test_path(rel)


def test_files(config: Config) -> Callable[[str], bool]:
    """Whether a relative path is a test: by its name (``test_*.py``, ``tests/``...) or by
    the config's ``test-paths`` (gitignore-style patterns)."""
    if not config.test_paths:
        return is_test_path
    extra = pathspec.GitIgnoreSpec.from_lines(config.test_paths)

    def is_test(rel: str) -> bool:
        return is_test_path(rel) or extra.match_file(rel)

    return is_test
