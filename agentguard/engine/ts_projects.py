"""Reads a project's tsconfig and package.json files into the ``TsModuleMap`` its TypeScript
and JavaScript imports are resolved with (``agentguard.facts.typescript.modules``).

A tsconfig.json (or jsconfig.json) applies to the files of its folder and below, the nearest
one winning, as editors and tsc pick it; ``extends`` is followed (relative paths, and
packages found in a node_modules folder of the scan), ``baseUrl`` and ``paths`` are resolved
against the file that sets them, and a Vite-style tsconfig.json that only references
tsconfig.app.json beside it takes that one's aliases. Every package.json with a name is a
workspace package. A file that cannot be read or parsed is a ScanProblem; the scan goes on."""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

from agentguard.diagnostics import ScanProblem
from agentguard.facts.typescript.modules import (
    TsConfigScope,
    TsModuleMap,
    TsPathAlias,
    TsWorkspacePackage,
    package_entry_module,
    ts_module_name,
)

PACKAGE_JSON = "package.json"
# Per folder, the file that applies to its files: tsconfig.json before jsconfig.json.
SCOPE_FILES = ("tsconfig.json", "jsconfig.json")
_MAX_EXTENDS_DEPTH = 16
# How many of the scan root's own folder names an app-root alias may name (``@/utils/x``
# scanned from inside ``apps/web/utils``).
ROOT_NAMES_KEPT = 3
CONFIG_DIR = "${configDir}"
_JSON5_ERROR = re.compile(r"^<string>:(\d+) (.*) at column (\d+)$")
_JSON5_CHARACTER = re.compile(r'"(.)"')
# The "exports" conditions whose file is worth mapping back to source, best first; any other
# condition is taken after these, in the order written.
_CONDITIONS = ("source", "types", "import", "module", "default", "require", "node")


@dataclass
class _Options:
    """The compiler options that decide resolution, each path already relative to the scan
    root (resolved against the file that set it)."""

    # baseUrl as written, with the folder of the file that set it.
    base_url: tuple[str, str] | None = None
    paths: dict[str, list[str]] | None = None
    paths_folder: str = ""  # where relative paths targets start when there is no baseUrl
    # outDir and rootDir as written, each with the folder of the file that set it.
    out_dir: tuple[str, str] | None = None
    root_dir: tuple[str, str] | None = None
    references: list[str] = field(default_factory=list)  # root-relative config paths


def _describe_json_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    text = str(exc)
    matched = _JSON5_ERROR.match(text)
    if matched:
        line, problem, column = matched.groups()
        # json5 quotes the character it stopped at in double quotes: '"' reads better.
        problem = _JSON5_CHARACTER.sub(lambda m: repr(m.group(1)), problem)
        return f"line {line} column {column}: {problem[:1].lower()}{problem[1:]}"
    return text or type(exc).__name__


class _Reader:
    """Reads and caches the JSON files, naming each one that fails once."""

    def __init__(self, root: Path, problems: list[ScanProblem]) -> None:
        self.root = root
        self.root_text = os.path.abspath(root)
        self.problems = problems
        self.cache: dict[str, dict[str, Any] | None] = {}

    def rel(self, absolute: str) -> str:
        return Path(os.path.relpath(absolute, self.root_text)).as_posix()

    def read(self, absolute: str, rel: str, with_comments: bool) -> dict[str, Any] | None:
        key = os.path.abspath(absolute)
        if key not in self.cache:
            self.cache[key] = self._parse(key, rel, with_comments)
        return self.cache[key]

    def _parse(self, absolute: str, rel: str, with_comments: bool) -> dict[str, Any] | None:
        try:
            text = Path(absolute).read_bytes().decode("utf-8-sig")
        except OSError as exc:
            self.problems.append(ScanProblem(rel, f"cannot read: {exc.strerror or exc}"))
            return None
        except UnicodeDecodeError as exc:
            self.problems.append(ScanProblem(rel, f"not valid UTF-8: {exc.reason}"))
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as strict_error:
            if not with_comments:
                self.problems.append(
                    ScanProblem(rel, f"invalid JSON: {_describe_json_error(strict_error)}")
                )
                return None
            # tsconfig is JSON with comments and trailing commas: the strict parser first,
            # the slower lenient one for the files that need it.
            try:
                value = json5.loads(text)
            except (ValueError, RecursionError) as exc:
                self.problems.append(ScanProblem(rel, f"invalid JSON: {_describe_json_error(exc)}"))
                return None
        except RecursionError:
            self.problems.append(ScanProblem(rel, "too deeply nested to parse"))
            return None
        if not isinstance(value, dict):
            self.problems.append(ScanProblem(rel, "not a JSON object"))
            return None
        return value


def _folder(rel: str) -> str:
    folder = posixpath.dirname(rel)
    return "" if folder == "." else folder


def _join(folder: str, path: str) -> str:
    joined = posixpath.normpath(posixpath.join(folder, path.replace("\\", "/")))
    return "" if joined == "." else joined


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class _ConfigLoader:
    """Effective compiler options of tsconfig files, ``extends`` followed."""

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        self.options: dict[str, _Options | None] = {}

    def options_of(self, absolute: str, rel: str, chain: tuple[str, ...] = ()) -> _Options | None:
        key = os.path.abspath(absolute)
        if key in self.options:
            return self.options[key]
        if key in chain or len(chain) > _MAX_EXTENDS_DEPTH:
            return _Options()  # a cycle: what the files before it said stands
        raw = self.reader.read(key, rel, with_comments=True)
        if raw is None:
            self.options[key] = None
            return None
        options = _Options()
        for base in self._extended(raw.get("extends"), key, rel):
            inherited = self.options_of(base, self.reader.rel(base), (*chain, key))
            if inherited is not None:
                options = _merged(options, inherited)
        options = _merged(options, _own_options(raw, _folder(rel)))
        self.options[key] = options
        return options

    def _extended(self, value: Any, absolute: str, rel: str) -> Iterator[str]:
        """The files ``extends`` names (a string or, since TypeScript 5.0, a list)."""
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        folder = os.path.dirname(absolute)
        for name in names:
            if not isinstance(name, str) or not name:
                continue
            if name.startswith(("./", "../", "/")) or name in (".", ".."):
                found = _config_file(os.path.join(folder, name))
                if found is None:
                    self.reader.problems.append(
                        ScanProblem(rel, f"extends {name!r}, which is not found")
                    )
                    continue
                yield found
            else:
                # A package's config: only from a node_modules folder in the scan; quietly
                # left out otherwise (its aliases could not lead into this project anyway).
                found = self._in_node_modules(folder, name)
                if found is not None:
                    yield found

    def _in_node_modules(self, folder: str, name: str) -> str | None:
        root = self.reader.root_text
        while True:
            modules = os.path.join(folder, "node_modules")
            if os.path.isdir(modules):
                found = _config_file(os.path.join(modules, name))
                if found is None:
                    found = _config_file(os.path.join(modules, name, "tsconfig.json"))
                if found is not None:
                    return found
            parent = os.path.dirname(folder)
            if folder == root or parent == folder or not parent.startswith(root):
                return None
            folder = parent


def _config_file(path: str) -> str | None:
    """``path`` as tsc reads an extends target: as written, else with ".json" added."""
    for candidate in (path, path + ".json"):
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
    return None


def _own_options(raw: dict[str, Any], folder: str) -> _Options:
    options = _Options(paths_folder=folder)
    compiler = raw.get("compilerOptions")
    if isinstance(compiler, dict):
        base_url = _text(compiler.get("baseUrl"))
        options.base_url = (base_url, folder) if base_url else None
        paths = compiler.get("paths")
        if isinstance(paths, dict):
            options.paths = {
                pattern: [t for t in targets if isinstance(t, str) and t]
                for pattern, targets in paths.items()
                if isinstance(pattern, str) and isinstance(targets, list)
            }
        for name in ("outDir", "rootDir"):
            value = _text(compiler.get(name))
            if value:
                setattr(options, "out_dir" if name == "outDir" else "root_dir", (value, folder))
    references = raw.get("references")
    if isinstance(references, list):
        for reference in references:
            path = _text(reference.get("path")) if isinstance(reference, dict) else None
            if path:
                options.references.append(_join(folder, path))
    return options


def _merged(base: _Options, child: _Options) -> _Options:
    """``child``'s options over ``base``'s (tsc's extends: each option as a whole);
    references are never inherited."""
    return _Options(
        base_url=child.base_url if child.base_url is not None else base.base_url,
        paths=child.paths if child.paths is not None else base.paths,
        paths_folder=child.paths_folder if child.paths is not None else base.paths_folder,
        out_dir=child.out_dir if child.out_dir is not None else base.out_dir,
        root_dir=child.root_dir if child.root_dir is not None else base.root_dir,
        references=child.references,
    )


def _placed(path: str, folder: str, config_folder: str) -> str:
    """A path of a config relative to the scan root: "${configDir}" (TypeScript 5.5) is the
    folder of the config that applies, which shared configs in packages use; any other
    path starts at ``folder``, that of the file that wrote it."""
    if path.startswith(CONFIG_DIR):
        return _join(config_folder, "./" + path[len(CONFIG_DIR) :].lstrip("/"))
    return _join(folder, path)


def _base_url(options: _Options, config_folder: str) -> str | None:
    if options.base_url is None:
        return None
    return _placed(*options.base_url, config_folder)


def _aliases(options: _Options, config_folder: str) -> tuple[TsPathAlias, ...]:
    base_url = _base_url(options, config_folder)
    start = base_url if base_url is not None else options.paths_folder
    return tuple(
        TsPathAlias(pattern, tuple(_placed(target, start, config_folder) for target in targets))
        for pattern, targets in (options.paths or {}).items()
        if pattern.count("*") <= 1 and targets
    )


def _export_target(value: Any) -> str | None:
    """The file an "exports" value leads to: a path, the first usable of a list, or the
    best condition of a conditions object."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for item in value:
            target = _export_target(item)
            if target is not None:
                return target
        return None
    if isinstance(value, dict):
        keys = [k for k in _CONDITIONS if k in value] + [k for k in value if k not in _CONDITIONS]
        for key in keys:
            target = _export_target(value[key])
            if target is not None:
                return target
    return None


def _exports(raw: Any) -> tuple[str | None, list[tuple[str, str | None]]]:
    """A package's "exports": its "." target and its other subpaths ("./x" -> "x")."""
    if not isinstance(raw, dict) or not any(isinstance(k, str) and k.startswith(".") for k in raw):
        return _export_target(raw), []  # one entry, maybe behind conditions
    main = _export_target(raw.get(".")) if "." in raw else None
    subpaths = [
        (key[2:], _export_target(value))
        for key, value in raw.items()
        if isinstance(key, str) and key.startswith("./") and len(key) > 2
    ]
    return main, subpaths


@dataclass
class _PackageSeen:
    name: str
    folder: str
    entry_targets: list[str]
    exports: list[tuple[str, str | None]]


def _package(raw: dict[str, Any], folder: str) -> _PackageSeen | None:
    name = _text(raw.get("name"))
    if name is None:
        return None
    main, exports = _exports(raw.get("exports"))
    targets = [main, *(raw.get(key) for key in ("types", "typings", "main", "module"))]
    return _PackageSeen(name, folder, [t for t in targets if isinstance(t, str) and t], exports)


def _under(path: str, folders: Collection[str]) -> bool:
    return any(not f or path == f or path.startswith(f + "/") for f in folders)


def _project_modules(source_rels: Collection[str], consulted: Collection[str]) -> frozenset[str]:
    """Module names of the scanned files under the consulted folders, and of their folders."""
    if not consulted:
        return frozenset()
    modules: set[str] = set()
    for rel in source_rels:
        if not _under(rel, consulted):
            continue
        modules.add(ts_module_name(rel))
        folder = _folder(rel)
        while folder and ts_module_name(folder) not in modules:
            modules.add(ts_module_name(folder))
            folder = _folder(folder)
    return frozenset(modules)


def _output_roots(folder: str, by_folder: dict[str, _Options]) -> tuple[tuple[str, str], ...]:
    """(outDir, rootDir) of the tsconfig nearest a package's folder, relative to that
    folder: where its compiled entry came from."""
    config_folder = folder
    while config_folder not in by_folder:
        if not config_folder:
            return ()
        config_folder = _folder(config_folder)
    options = by_folder[config_folder]
    if options.out_dir is None:
        return ()
    out_dir = _placed(*options.out_dir, config_folder)
    root_dir = _placed(*options.root_dir, config_folder) if options.root_dir else folder
    return ((_relative_to(out_dir, folder), _relative_to(root_dir, folder)),)


def _relative_to(path: str, folder: str) -> str:
    return posixpath.relpath(path, folder or ".") if path != folder else "."


def load_ts_module_map(
    root: Path, files: Sequence[tuple[str, str]], source_rels: Collection[str]
) -> tuple[TsModuleMap, list[ScanProblem]]:
    """The module map of a scan: ``files`` are (absolute path, relative path) of every
    tsconfig*.json, jsconfig.json and package.json the scan found; ``source_rels`` the
    relative paths of the TS/JS files scanned (to find sources behind dist/ and aliases)."""
    problems: list[ScanProblem] = []
    reader = _Reader(root, problems)
    configs = _ConfigLoader(reader)
    scope_files: dict[str, tuple[int, str, str]] = {}
    package_files: list[tuple[str, str]] = []
    for absolute, rel in sorted(files, key=lambda f: f[1]):
        if "node_modules" in rel.split("/"):
            continue  # installed packages, not the project's
        name = posixpath.basename(rel)
        if name == PACKAGE_JSON:
            package_files.append((absolute, rel))
            continue
        # Every config is read, so a broken one is named even when nothing extends it.
        configs.options_of(absolute, rel)
        if name in SCOPE_FILES:
            rank = SCOPE_FILES.index(name)
            folder = _folder(rel)
            if folder not in scope_files or rank < scope_files[folder][0]:
                scope_files[folder] = (rank, absolute, rel)

    by_folder: dict[str, _Options] = {}
    for folder, (_, absolute, rel) in scope_files.items():
        options = configs.options_of(absolute, rel)
        if options is None:
            continue
        if not options.paths and options.base_url is None:
            # tsconfig.json that only lists its projects (Vite's tsconfig.app.json): the
            # first one beside it with aliases speaks for the folder's files.
            for reference in options.references:
                for candidate in (reference, f"{reference}/tsconfig.json"):
                    config = os.path.join(reader.root_text, candidate)
                    if _folder(candidate) != folder or not os.path.isfile(config):
                        continue
                    referenced = configs.options_of(config, candidate)
                    if referenced is not None and (referenced.paths or referenced.base_url):
                        options = _merged(options, referenced)
                        break
                else:
                    continue
                break
        by_folder[folder] = options

    # One with neither baseUrl nor paths counts too: the nearest tsconfig is the one that
    # applies, so its files get none of a config further up.
    scopes = [
        TsConfigScope(folder, _base_url(options, folder), _aliases(options, folder))
        for folder, options in by_folder.items()
    ]
    packages: list[_PackageSeen] = []
    for absolute, rel in package_files:
        raw = reader.read(absolute, rel, with_comments=False)
        seen = _package(raw, _folder(rel)) if raw is not None else None
        if seen is not None:
            packages.append(seen)

    consulted = {s.base_url for s in scopes if s.base_url is not None}
    for scope in scopes:
        for alias in scope.aliases:
            consulted.update(_folder(t.split("*", 1)[0] + "x") for t in alias.targets)
    consulted.update(p.folder for p in packages)
    folders = {scope.folder for scope in scopes}
    if any(not _under(rel, folders) for rel in source_rels):
        # a file no tsconfig covers may still import through an alias its app's tsconfig,
        # outside the scan, defines (``@/lib/x``): every module is a candidate
        consulted.add("")
    project_modules = _project_modules(source_rels, consulted)

    # An entry is a file: a folder of the same name does not make one.
    file_modules = (
        frozenset(ts_module_name(rel) for rel in source_rels) if packages else frozenset()
    )
    workspace = []
    for seen in packages:
        output_roots = _output_roots(seen.folder, by_folder)
        entry = package_entry_module(seen.folder, seen.entry_targets, output_roots, file_modules)
        workspace.append(
            TsWorkspacePackage(seen.name, seen.folder, entry, tuple(seen.exports), output_roots)
        )
    root_names = tuple(part for part in Path(reader.root_text).parts[1:][-ROOT_NAMES_KEPT:])
    return TsModuleMap(tuple(scopes), tuple(workspace), project_modules, root_names), problems
