"""Which files to scan: paths given, minus .gitignore'd and excluded ones."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from agentguard.config import Config
from agentguard.diagnostics import ScanProblem

PYTHON_SUFFIXES = (".py", ".pyi")
SCHEMA_SUFFIXES = (".json", ".yaml", ".yml")


@dataclass
class FileSet:
    python: list[tuple[Path, str]] = field(default_factory=list)  # (absolute, relative)
    schemas: list[tuple[Path, str]] = field(default_factory=list)
    problems: list[ScanProblem] = field(default_factory=list)


def _absolute(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: keep the path as written
        return Path(os.path.abspath(path))


def relative(path: Path, root: Path) -> str:
    try:
        return _absolute(path).relative_to(_absolute(root)).as_posix()
    except ValueError:
        return path.as_posix()


class _Ignores:
    """Nested .gitignore files, each applying to its own folder, plus config excludes."""

    def __init__(self, config: Config) -> None:
        self.root = config.root.resolve()
        self.exclude = pathspec.GitIgnoreSpec.from_lines(config.exclude)
        self.include = pathspec.GitIgnoreSpec.from_lines(config.include) if config.include else None
        self.respect_gitignore = config.respect_gitignore
        self.gitignores: dict[Path, pathspec.GitIgnoreSpec] = {}

    def load_gitignore(self, folder: Path) -> None:
        if not self.respect_gitignore:
            return
        candidate = folder / ".gitignore"
        if candidate.is_file():
            try:
                lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                return
            self.gitignores[folder] = pathspec.GitIgnoreSpec.from_lines(lines)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        rel = relative(path, self.root)
        probe = rel + "/" if is_dir else rel
        if self.exclude.match_file(probe) or self.exclude.match_file(
            path.name + ("/" if is_dir else "")
        ):
            return True
        for folder, spec in self.gitignores.items():
            try:
                inner = path.relative_to(folder).as_posix()
            except ValueError:
                continue
            if spec.match_file(inner + "/" if is_dir else inner):
                return True
        return bool(not is_dir and self.include is not None and not self.include.match_file(rel))


def discover(paths: list[Path], config: Config) -> FileSet:
    result = FileSet()
    ignores = _Ignores(config)
    ignores.load_gitignore(config.root.resolve())
    seen: set[Path] = set()

    def add_file(path: Path, explicit: bool) -> None:
        real = _absolute(path)
        if real in seen:
            return
        seen.add(real)
        rel = relative(path, config.root)
        if path.suffix in PYTHON_SUFFIXES:
            result.python.append((path, rel))
        elif path.suffix in SCHEMA_SUFFIXES:
            result.schemas.append((path, rel))
        elif explicit:
            result.problems.append(ScanProblem(rel, "not a Python or tool-schema file"))

    for given in paths:
        try:
            given.stat()
        except OSError as exc:
            reason = "symlink loop" if exc.errno == 40 else (exc.strerror or str(exc))
            result.problems.append(ScanProblem(relative(given, config.root), reason))
            continue
        if given.is_file():
            add_file(given, explicit=True)
            continue
        for folder, dirs, files in os.walk(given.resolve(), followlinks=False):
            base = Path(folder)
            ignores.load_gitignore(base)
            kept = []
            for name in sorted(dirs):
                sub = base / name
                if sub.is_symlink() or ignores.ignored(sub, True):
                    continue
                kept.append(name)
            dirs[:] = kept
            for name in sorted(files):
                path = base / name
                if not name.endswith(PYTHON_SUFFIXES + SCHEMA_SUFFIXES):
                    continue
                if path.is_symlink():
                    try:
                        path.resolve(strict=True)
                    except (OSError, RuntimeError):
                        result.problems.append(
                            ScanProblem(
                                relative(path, config.root), "broken symlink or symlink loop"
                            )
                        )
                        continue
                if ignores.ignored(path, False):
                    continue
                add_file(path, explicit=False)
    result.python.sort(key=lambda p: p[1])
    result.schemas.sort(key=lambda p: p[1])
    return result
