"""Where a TypeScript or JavaScript import leads: the qualified module an import specifier
names, from what the project's tsconfig and package.json files say (``TsModuleMap``, read by
``agentguard.engine.ts_projects``). Pure: nothing here touches the file system, so a file's
facts depend only on its text and the map's fingerprint.

Project files are named by their path from the scan root (``ts_module_name``), npm packages
``npm:<specifier>`` and Node's built-in modules ``node:<name>``."""

from __future__ import annotations

import functools
import hashlib
import posixpath
import re
from bisect import bisect_left
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.knowledge.node_builtins import NODE_BUILTINS, NODE_SCHEME_ONLY_BUILTINS

TS_SUFFIXES: tuple[str, ...] = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
# Written on a package subpath ("@modelcontextprotocol/sdk/server/mcp.js") for Node's ESM
# resolution; the module is the same without it.
_NPM_DROPPED_SUFFIXES = (".js", ".mjs", ".cjs", ".ts")
# Anything a dotted name cannot hold ("a.service", "send-email", Next.js's "[id]").
_NOT_IN_NAME = re.compile(r"\W")
# Where builds put compiled output, and the format folders some nest inside it
# ("dist/esm/index.js"): a package's entry there was compiled from its src/ (or its root).
OUTPUT_FOLDERS = ("dist", "build", "lib", "out")
FORMAT_FOLDERS = ("esm", "cjs", "mjs", "es", "types", "module", "commonjs")
NODE_SCHEME = "node:"
NPM_SCHEME = "npm:"
_NODE_MODULES = "node_modules/"


def _stem(file_name: str) -> str:
    """A file name without its TS/JS extension; a declaration file without ".d" too."""
    for suffix in _DECLARATION_SUFFIXES + TS_SUFFIXES:
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            return file_name[: -len(suffix)]
    return file_name


def ts_module_name(rel_path: str) -> str:
    """The dotted module name of a TS/JS file (or folder) from its "/"-separated path
    relative to the scan root: "src/tools/email.ts" -> "src.tools.email"; an index file is
    its folder ("src/tools/index.ts" -> "src.tools"); a character a dotted name cannot hold
    becomes "_" ("src/a.service.ts" -> "src.a_service", "send-email.ts" -> "send_email");
    "types.d.ts" -> "types". The scan root's own index (or the root itself) is "index"."""
    segments = [s for s in rel_path.split("/") if s and s != "."]
    if segments:
        segments[-1] = _stem(segments[-1])
        if segments[-1] == "index":
            segments.pop()
    if not segments:
        return "index"
    return ".".join(_NOT_IN_NAME.sub("_", s) for s in segments)


def _join(folder: str, path: str) -> str:
    """``folder/path`` normalised, "/"-separated ("" for the scan root)."""
    joined = posixpath.normpath(posixpath.join(folder, path))
    return "" if joined == "." else joined


def _is_relative(specifier: str) -> bool:
    return specifier in (".", "..") or specifier.startswith(("./", "../"))


def npm_package_name(specifier: str) -> str:
    """The package part of a bare specifier: "@scope/name" or "name"."""
    parts = specifier.split("/", 2)
    return "/".join(parts[:2]) if specifier.startswith("@") and len(parts) > 1 else parts[0]


def _npm_module(specifier: str) -> str:
    if len(specifier) > len(npm_package_name(specifier)):
        # A subpath's extension only: "chart.js" and "bn.js" are package names.
        for suffix in _NPM_DROPPED_SUFFIXES:
            if specifier.endswith(suffix):
                specifier = specifier[: -len(suffix)]
                break
    return NPM_SCHEME + specifier


def _project_module(path: str) -> str:
    """A root-relative path's module; one inside node_modules names that npm package."""
    marked = "/" + path
    if "/" + _NODE_MODULES in marked:
        return _npm_module(marked.rsplit("/" + _NODE_MODULES, 1)[1])
    return ts_module_name(path)


def _wildcard_match(pattern: str, specifier: str) -> str | None:
    """What the one "*" of ``pattern`` stands for in ``specifier``; "" for an exact match;
    None when it does not match."""
    star = pattern.find("*")
    if star < 0:
        return "" if specifier == pattern else None
    prefix, suffix = pattern[:star], pattern[star + 1 :]
    if (
        len(specifier) >= len(prefix) + len(suffix)
        and specifier.startswith(prefix)
        and specifier.endswith(suffix)
    ):
        return specifier[len(prefix) : len(specifier) - len(suffix)]
    return None


def _best_pattern(patterns: Sequence[str], specifier: str) -> tuple[int, str] | None:
    """The index of the pattern a specifier takes and what its "*" stands for, as TypeScript
    and Node choose: an exact key first, else the wildcard with the longest prefix."""
    best: tuple[int, str] | None = None
    best_prefix = -1
    for index, pattern in enumerate(patterns):
        captured = _wildcard_match(pattern, specifier)
        if captured is None:
            continue
        if "*" not in pattern:
            return index, captured
        prefix = pattern.index("*")
        if prefix > best_prefix:
            best, best_prefix = (index, captured), prefix
    return best


def _substitute(target: str, captured: str) -> str:
    return target.replace("*", captured) if "*" in target else target


@dataclass(frozen=True, slots=True)
class TsPathAlias:
    """One tsconfig ``paths`` entry: a pattern with at most one "*" and the paths it stands
    for, relative to the scan root ("*" kept), tried in order."""

    pattern: str
    targets: tuple[str, ...]


# Alias prefixes no npm package name can take (a scope needs a name): imports written so
# lead into the project even where no tsconfig says where.
UNSCOPED_ALIASES = ("@/", "~/")


@functools.lru_cache(maxsize=4096)
def _ending_in(modules: frozenset[str], tail: str) -> str | None:
    """The one module whose dotted name ends in ``tail``; None for none or several."""
    found = [m for m in modules if m == tail or m.endswith("." + tail)]
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True, slots=True)
class TsConfigScope:
    """What one tsconfig.json (or jsconfig.json), with what it extends, says about the
    imports of the files in its folder and below (the nearest one applies)."""

    folder: str  # relative to the scan root; "" for the root
    base_url: str | None  # relative to the scan root, when set
    aliases: tuple[TsPathAlias, ...] = ()


@dataclass(frozen=True, slots=True)
class TsWorkspacePackage:
    """A package.json with a name under the scan: imports of that name lead into it."""

    name: str
    folder: str  # relative to the scan root
    entry: str  # the module its bare name imports (``package_entry_module``)
    # Its "exports" subpaths without "./" ("utils", "features/*"), each with the
    # package-relative path it exports (None: explicitly not exported).
    exports: tuple[tuple[str, str | None], ...] = ()
    # (outDir, rootDir) of its tsconfig, package-relative: where its output came from.
    output_roots: tuple[tuple[str, str], ...] = ()


def source_candidates(target: str, output_roots: Sequence[tuple[str, str]] = ()) -> list[str]:
    """Package-relative paths (without extension) a package-relative ``target`` may have been
    compiled from, in the order to try: itself, then from its tsconfig's outDir to rootDir,
    then a build folder (dist/, build/, lib/, out/, with a format folder like esm/ in it)
    to src/ or to the package root."""
    stem = posixpath.normpath(target)
    head, _, name = stem.rpartition("/")
    stem = f"{head}/{_stem(name)}" if head else _stem(name)
    found = [stem]
    for out_dir, root_dir in output_roots:
        if out_dir and out_dir != "." and stem.startswith(out_dir + "/"):
            found.append(_join(root_dir, stem[len(out_dir) + 1 :]))
    first, _, rest = stem.partition("/")
    if first in OUTPUT_FOLDERS and rest:
        tails = [rest]
        format_folder, _, inner = rest.partition("/")
        if format_folder in FORMAT_FOLDERS and inner:
            tails.append(inner)
        for tail in tails:
            found += [f"src/{tail}", tail]
    return found


def package_source_module(
    folder: str,
    target: str,
    output_roots: Sequence[tuple[str, str]],
    project_modules: Collection[str],
) -> str | None:
    """The project module a package's ``target`` (package-relative) comes from, when one of
    ``source_candidates`` is among ``project_modules``."""
    for candidate in source_candidates(target, output_roots):
        module = ts_module_name(_join(folder, candidate))
        if module in project_modules:
            return module
    return None


def package_entry_module(
    folder: str,
    entry_targets: Sequence[str],
    output_roots: Sequence[tuple[str, str]],
    source_modules: Collection[str],
) -> str:
    """The module a workspace package's bare name imports: the source of its first entry
    target ("exports"["."], "types", "main", "module") among ``source_modules`` (those of
    the files scanned), else its src/index, else its folder."""
    for target in entry_targets:
        module = package_source_module(folder, target, output_roots, source_modules)
        if module is not None:
            return module
    source_index = ts_module_name(_join(folder, "src/index.ts"))
    return source_index if source_index in source_modules else ts_module_name(folder)


def _builtins_digest() -> str:
    listed = [*sorted(NODE_BUILTINS), "|", *sorted(NODE_SCHEME_ONLY_BUILTINS)]
    return hashlib.sha256("\n".join(listed).encode()).hexdigest()


_BUILTINS_DIGEST = _builtins_digest()


@dataclass(frozen=True, slots=True)
class TsModuleMap:
    """What a project's tsconfig files and package.json files say about where imports lead.
    Picklable, immutable and hashable; built by ``agentguard.engine.ts_projects``."""

    scopes: tuple[TsConfigScope, ...] = ()
    packages: tuple[TsWorkspacePackage, ...] = ()
    # The module names of the scanned files (and of their folders) that an alias, a baseUrl
    # or a workspace package may lead to: only these decide between candidates.
    project_modules: frozenset[str] = frozenset()
    # The names of the scan root's own folder and those above it, innermost last
    # (``("apps", "web", "utils")``): an alias written from an app's root (``@/utils/x``)
    # names them when the scan starts inside that app.
    root_names: tuple[str, ...] = ()
    _scope_folders: tuple[str, ...] = field(init=False, repr=False, compare=False, default=())
    _package_names: tuple[str, ...] = field(init=False, repr=False, compare=False, default=())
    _fingerprint: str = field(init=False, repr=False, compare=False, default="")

    def __post_init__(self) -> None:
        # One scope per folder (the first given) and one package per name (the shallowest),
        # sorted for bisect.
        scopes: dict[str, TsConfigScope] = {}
        for scope in self.scopes:
            scopes.setdefault(scope.folder, scope)
        packages: dict[str, TsWorkspacePackage] = {}
        for package in sorted(self.packages, key=lambda p: (p.folder.count("/"), p.folder)):
            packages.setdefault(package.name, package)
        ordered_scopes = tuple(scopes[folder] for folder in sorted(scopes))
        ordered_packages = tuple(packages[name] for name in sorted(packages))
        object.__setattr__(self, "scopes", ordered_scopes)
        object.__setattr__(self, "packages", ordered_packages)
        object.__setattr__(self, "_scope_folders", tuple(s.folder for s in ordered_scopes))
        object.__setattr__(self, "_package_names", tuple(p.name for p in ordered_packages))
        described = repr(
            (ordered_scopes, ordered_packages, sorted(self.project_modules), self.root_names)
        )
        digest = hashlib.sha256(f"{described}\n{_BUILTINS_DIGEST}".encode()).hexdigest()
        object.__setattr__(self, "_fingerprint", digest[:16])

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt through __init__, so the derived fields are too (on every Python version).
        return (type(self), (self.scopes, self.packages, self.project_modules, self.root_names))

    def fingerprint(self) -> str:
        """A short stable hash of everything that changes ``resolve``'s answers."""
        return self._fingerprint

    def resolve(self, importer: str, specifier: str) -> str:
        """The qualified module ``specifier`` names in the file at ``importer`` (relative to
        the scan root): a project module name (``ts_module_name``) for a relative import,
        a tsconfig ``paths`` alias or ``baseUrl`` path to a project file or folder, or a
        workspace package; "node:<name>" for a Node built-in; else "npm:<specifier>"."""
        if _is_relative(specifier):
            return ts_module_name(_join(posixpath.dirname(importer), specifier))
        if specifier.startswith(NODE_SCHEME):
            return specifier
        scope = self._scope_for(importer)
        if scope is not None:
            found = self._through_scope(scope, specifier)
            if found is not None:
                return found
        elif specifier.startswith(UNSCOPED_ALIASES):
            # ``@/utils/posthog`` in a folder scanned without the tsconfig that maps it
            # (a subfolder of an app): no npm package is named so, so it is the project's,
            # the one file whose path ends so
            tail = ts_module_name(specifier[2:])
            found = _ending_in(self.project_modules, tail) or self._below_root(tail)
            if found is not None:
                return found
        if specifier in NODE_BUILTINS:
            return NODE_SCHEME + specifier
        package = self._package_for(specifier)
        if package is not None:
            return self._into_package(package, specifier[len(package.name) + 1 :])
        return _npm_module(specifier)

    def _below_root(self, tail: str) -> str | None:
        """The project module ``tail`` names when its first parts are the scan root's own
        folders (``utils.email.provider`` scanned from inside ``utils``)."""
        parts = tail.split(".")
        for count in range(1, min(len(self.root_names), len(parts) - 1) + 1):
            if tuple(parts[:count]) == self.root_names[-count:]:
                module = ".".join(parts[count:])
                if module in self.project_modules:
                    return module
        return None

    def _scope_for(self, importer: str) -> TsConfigScope | None:
        """The tsconfig scope of the nearest folder at or above the importer's."""
        if not self._scope_folders:
            return None
        folder = posixpath.dirname(importer)
        while True:
            index = bisect_left(self._scope_folders, folder)
            if index < len(self._scope_folders) and self._scope_folders[index] == folder:
                return self.scopes[index]
            if not folder:
                return None
            folder = posixpath.dirname(folder)

    def _through_scope(self, scope: TsConfigScope, specifier: str) -> str | None:
        best = _best_pattern([a.pattern for a in scope.aliases], specifier)
        if best is not None:
            alias = scope.aliases[best[0]]
            targets = [_substitute(t, best[1]) for t in alias.targets]
            for target in targets:
                module = _project_module(target)
                if module in self.project_modules:
                    return module
            # An alias with a prefix ("@/*", "~lib/*") leads into the project even to a
            # file not scanned; the catch-all "*" falls through to packages, as in tsc.
            if targets and alias.pattern != "*":
                return _project_module(targets[0])
        if scope.base_url is not None:
            module = ts_module_name(_join(scope.base_url, specifier))
            if module in self.project_modules:
                return module
        return None

    def _package_for(self, specifier: str) -> TsWorkspacePackage | None:
        name = npm_package_name(specifier)
        index = bisect_left(self._package_names, name)
        if index < len(self._package_names) and self._package_names[index] == name:
            return self.packages[index]
        return None

    def _into_package(self, package: TsWorkspacePackage, subpath: str) -> str:
        if not subpath:
            return package.entry
        candidates = [subpath, f"src/{subpath}"]
        best = _best_pattern([key for key, _ in package.exports], subpath)
        if best is not None:
            target = package.exports[best[0]][1]
            if target is not None:
                candidates = [_substitute(target, best[1])]
        for candidate in candidates:
            module = package_source_module(
                package.folder, candidate, package.output_roots, self.project_modules
            )
            if module is not None:
                return module
        return ts_module_name(_join(package.folder, candidates[0]))


EMPTY_TS_MODULE_MAP = TsModuleMap()
