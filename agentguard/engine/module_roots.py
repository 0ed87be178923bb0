"""Module names from package roots, not from the scan root.

A file's module name is what the project's own absolute imports call it: ``src/shop/cart.py``
in a src-layout project is ``shop.cart``, and ``libs/mail/mail/send.py`` in a monorepo is
``mail.send``. Two sources decide the root a file is named from:

1. Declared roots (before parsing): each folder holding a packaging file (``pyproject.toml``,
   ``setup.cfg``, ``setup.py``) is a project root, and the package folders these files declare
   are roots too: setuptools ``package-dir``/``packages.find.where`` (and their ``setup.cfg``
   and ``setup.py`` forms), Poetry ``packages[].from``, Hatch wheel ``packages``/``sources``,
   PDM ``package-dir``, maturin ``python-source``, and the ``src`` folder every one of these
   tools finds by itself. A file is named from the deepest root above it. A folder holding an
   ``__init__.py`` is a package, never a root.
2. Import evidence (after parsing): a file whose name no absolute import uses, while one uses
   a shorter name of it (``from app.tools import send`` for ``services/api/app/tools.py``),
   is named from the folder that makes that name, with every file below that folder, unless
   that folder is a package (and no module puts it on ``sys.path`` by its own location,
   ``sys.path.append(os.path.dirname(os.path.abspath(__file__)))``) or a file below it is
   imported by its present name. A package folder scanned by itself is named by the package
   name its own imports put before its modules (``from shop.core import x``). A declared
   root whose files the project imports by their scan-root names (``src.shop.cart``, with
   no ``src/__init__.py``) is not used.
"""

from __future__ import annotations

import configparser
import posixpath
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentguard.facts.import_text import imports_in_text
from agentguard.facts.module_facts import ModuleFacts
from agentguard.facts.syntax_walk import module_name_for

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

# setup.py forms, read as text (never run): ``package_dir={"": "src"}`` and
# ``find_packages("src")`` / ``find_packages(where="src")`` (and find_namespace_packages).
_SETUP_PACKAGE_DIR = re.compile(r"""package_dir\s*=\s*\{\s*(['"])\1\s*:\s*['"]([^'"]+)['"]""")
_SETUP_FIND = re.compile(r"""find_(?:namespace_)?packages\(\s*(?:where\s*=\s*)?['"]([^'"]+)['"]""")


def _folder(rel: str) -> str:
    """The folder of a relative path ("" for the scan root)."""
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _join(folder: str, sub: str) -> str | None:
    """``folder/sub`` normalised, or None when ``sub`` leaves ``folder`` or is absolute."""
    sub = sub.strip().strip("/")
    if not sub or sub == ".":
        return folder
    if sub.startswith("/") or ".." in sub.split("/"):
        return None
    return posixpath.normpath(f"{folder}/{sub}" if folder else sub)


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _pyproject_dirs(text: str) -> list[str]:
    """The package folders a pyproject.toml declares, relative to its folder."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    found: list[str] = []
    package_dir = _get(tool, "setuptools", "package-dir")
    if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
        found.append(package_dir[""])
    found += _strings(_get(tool, "setuptools", "packages", "find", "where"))
    for package in _get(tool, "poetry", "packages") or []:
        if isinstance(package, dict) and isinstance(package.get("from"), str):
            found.append(package["from"])
    for package in _strings(_get(tool, "hatch", "build", "targets", "wheel", "packages")):
        if "/" in package.strip("/"):
            found.append(package.strip("/").rsplit("/", 1)[0])
    sources = _get(tool, "hatch", "build", "targets", "wheel", "sources")
    if isinstance(sources, dict):
        found += [key for key, value in sources.items() if value == "" and isinstance(key, str)]
    else:
        found += _strings(sources)
    found += _strings(_get(tool, "pdm", "build", "package-dir"))
    found += _strings(_get(tool, "maturin", "python-source"))
    return found


def _setup_cfg_dirs(text: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    found: list[str] = []
    # ``package_dir =\n    =src`` maps the root package ("") to a folder.
    for line in parser.get("options", "package_dir", fallback="").splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.strip() and value.strip():
            found.append(value.strip())
    where = parser.get("options.packages.find", "where", fallback="").strip()
    if where:
        found.append(where)
    return found


def _setup_py_dirs(text: str) -> list[str]:
    found = [match.group(2) for match in _SETUP_PACKAGE_DIR.finditer(text)]
    found += [match.group(1) for match in _SETUP_FIND.finditer(text)]
    return found


_READERS = {"pyproject.toml": _pyproject_dirs, "setup.cfg": _setup_cfg_dirs}


def declared_roots(root: Path, configs: Iterable[str], python: Sequence[str]) -> set[str]:
    """The package roots (folders relative to ``root``, "" for itself) that the packaging
    files ``configs`` (relative paths) declare, with the conventional ``src`` folder of each;
    never a folder that is itself a package (holds an ``__init__.py``)."""
    files = set(python)
    # The folders that hold Python files, at any depth: a root holds some.
    known: set[str] = set()
    for rel in python:
        folder = _folder(rel)
        while folder and folder not in known:
            known.add(folder)
            folder = _folder(folder)
    configs = set(configs)
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        if (root / name).is_file():
            configs.add(name)
    roots: set[str] = set()
    for config in sorted(configs):
        folder = _folder(config)
        name = config.rsplit("/", 1)[-1]
        try:
            text = (root / config).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        reader = _READERS.get(name, _setup_py_dirs)
        candidates = [folder, *(_join(folder, sub) for sub in [*reader(text), "src"])]
        for candidate in candidates:
            if candidate is None or (candidate not in known and candidate != ""):
                continue
            init = f"{candidate}/__init__.py" if candidate else "__init__.py"
            if init not in files:
                roots.add(candidate)
    return roots


def _name_from(rel: str, root: str) -> str:
    return module_name_for(rel[len(root) + 1 :] if root else rel)


def module_names(root: Path, configs: Iterable[str], python: Sequence[str]) -> dict[str, str]:
    """Each Python file (relative path) named from the deepest declared root above it, when
    that is not the scan root: the files named otherwise than ``module_name_for`` says."""
    roots = declared_roots(root, configs, python)
    roots.discard("")
    if not roots:
        return {}
    by_root: dict[str, dict[str, str]] = {}
    for rel in python:
        if rel.startswith(("/", "../")):
            continue
        folder = _folder(rel)
        best = ""
        for candidate in roots:
            if (folder == candidate or folder.startswith(candidate + "/")) and len(candidate) > len(
                best
            ):
                best = candidate
        if best:
            by_root.setdefault(best, {})[rel] = _name_from(rel, best)
    # Two projects of a monorepo may each hold a ``utils/mail.py``: a name is one module's,
    # so the first root by path keeps its names and a root naming a module already named
    # keeps its files' scan-root names (their own imports still find them: import_heads).
    rooted = {rel for given in by_root.values() for rel in given}
    taken = {module_name_for(rel) for rel in python if rel not in rooted}
    names: dict[str, str] = {}
    for folder in sorted(by_root):
        given = by_root[folder]
        if taken.isdisjoint(given.values()):
            taken.update(given.values())
            names.update(given)
    return names


@dataclass(frozen=True)
class ImportEvidence:
    """What naming modules by import evidence reads of one file: its path, its module name
    as named before that evidence, its absolute imports, the top-level names it defines
    (what ``from module import name`` can take) and the last argument of each of its
    ``sys.path.append``/``insert`` calls. Made from its facts, or guessed from its text."""

    path: str
    module: str
    absolute_imports: Sequence[str]
    defined: frozenset[str]
    sys_path_args: Sequence[str]

    @classmethod
    def of_facts(cls, facts: ModuleFacts, module: str) -> ImportEvidence:
        """``facts`` (extracted under any module name) read as if named ``module``: none of
        what is read here depends on the name (only absolute imports are kept)."""
        prefix = facts.module + "."
        names = {
            q[len(prefix) :] for q in [*facts.functions, *facts.classes] if q.startswith(prefix)
        }
        names.update(a.target for a in facts.assignments if a.function is None)
        args = [
            call.args[-1].text
            for call in facts.calls
            if call.callee in {"sys.path.append", "sys.path.insert"} and call.args
        ]
        return cls(
            facts.path,
            module,
            facts.absolute_imports,
            frozenset(name for name in names if "." not in name),
            args,
        )

    @classmethod
    def of_text(cls, rel: str, module: str, data: bytes) -> ImportEvidence:
        """A guess of ``of_facts`` from the file's bytes, before it is parsed."""
        shown = imports_in_text(data)
        defined = frozenset(name for name in shown.defined if "." not in name)
        return cls(rel, module, shown.absolute_imports, defined, shown.sys_path_args)


def _imported(name: str, imports: set[str], prefixes: set[str], defined: frozenset[str]) -> bool:
    """Whether some absolute import names module ``name``: as written (a dotted name), or
    as the module a name it defines is taken from (``from utils import slugify``)."""
    if "." in name:
        return name in imports or name in prefixes
    return any(f"{name}.{member}" in imports for member in defined)


# ``os.path.dirname(os.path.abspath(__file__))`` and ``Path(__file__).resolve().parent``
# (each further ``dirname`` or ``.parent`` one folder up), as a ``sys.path`` entry.
_OS_PATH_DIR = re.compile(
    r"^(?P<up>(?:os\.path\.dirname\()+)(?:os\.path\.(?:abspath|realpath)\()?__file__\)+$"
)
_PATHLIB_DIR = re.compile(
    r"^(?:str\()?(?:pathlib\.)?Path\(__file__\)(?:\.resolve\(\)|\.absolute\(\))?"
    r"(?P<up>(?:\.parent)+)\)?$"
)


def _sys_path_roots(modules: Sequence[ImportEvidence]) -> set[str]:
    """Folders a module puts on ``sys.path`` by its own location
    (``sys.path.append(os.path.dirname(os.path.abspath(__file__)))``,
    ``sys.path.insert(0, str(Path(__file__).resolve().parent))``): the script imports what
    is below that folder by names taken from there, package or not."""
    roots: set[str] = set()
    for facts in modules:
        for arg in facts.sys_path_args:
            text = re.sub(r"\s+", "", arg)
            found = _OS_PATH_DIR.match(text) or _PATHLIB_DIR.match(text)
            if found is None:
                continue
            ups = found.group("up").count("dirname") + found.group("up").count(".parent")
            folders = _folder(facts.path).split("/") if _folder(facts.path) else []
            if ups - 1 <= len(folders):
                roots.add("/".join(folders[: len(folders) - (ups - 1)]))
    return roots


def evidence_names(modules: Sequence[ImportEvidence], python: Sequence[str]) -> dict[str, str]:
    """Files to name again, by what the project's absolute imports call them (see the
    module docstring): from a deeper root, or from the scan root when the project imports
    a declared root's files through it (``src.shop.cart``). Relative path -> new name."""
    imports: set[str] = set()
    for facts in modules:
        imports.update(facts.absolute_imports)
    if not imports:
        return {}
    prefixes = {name.rsplit(".", i)[0] for name in imports for i in range(1, name.count(".") + 1)}
    sibling_imports = {
        (_folder(facts.path), name.split(".", 1)[0])
        for facts in modules
        for name in facts.absolute_imports
    }
    files = set(python)
    by_rel = {facts.path: facts for facts in modules}
    path_roots = _sys_path_roots(modules)
    # The root each file is named from now, and whether its present name is imported.
    current: dict[str, str] = {}
    confirmed: set[str] = set()
    votes: set[str] = set()
    reverts: set[str] = set()
    for facts in modules:
        rel = facts.path
        if rel.startswith(("/", "../")) or facts.module == "__main__":
            continue
        parts = facts.module.split(".")
        folders = _folder(rel).split("/") if _folder(rel) else []
        depth = len(parts) - (0 if rel.endswith("/__init__.py") or rel == "__init__.py" else 1)
        if depth > len(folders):
            continue
        root = "/".join(folders[: len(folders) - depth])
        current[rel] = root
        defined = facts.defined
        if _imported(facts.module, imports, prefixes, defined):
            confirmed.add(rel)
            continue
        if root and _imported(module_name_for(rel), imports, prefixes, defined):
            # ``from src.shop.cart import ...``: the declared root is not the one used
            reverts.add(root)
            continue
        for cut in range(1, len(parts)):
            shorter = ".".join(parts[cut:])
            if _imported(shorter, imports, prefixes, defined) or (
                # ``import database`` in a script beside ``database.py``: the script's own
                # folder is on ``sys.path`` (only there: elsewhere the name may be a package
                # the project installs)
                "." not in shorter and (_folder(rel), shorter) in sibling_imports
            ):
                new_root = "/".join([root, *folders[len(folders) - depth :][:cut]]).strip("/")
                if f"{new_root}/__init__.py" not in files or new_root in path_roots:
                    votes.add(new_root)
                break
    renamed: dict[str, str] = {}
    taken = {facts.module for facts in modules}
    for old_root in sorted(reverts):
        below = [rel for rel in current if current[rel] == old_root]
        if not any(rel in confirmed for rel in below):
            renamed.update({rel: module_name_for(rel) for rel in below})
    # deepest first; among folders of one depth the first by path, so that which of two script
    # folders keeps a shared module name never depends on set order (the hash seed)
    for new_root in sorted(votes, key=lambda folder: (-folder.count("/"), folder)):
        below = [
            rel
            for rel in current
            if rel.startswith(new_root + "/")
            and rel not in renamed
            and (not current[rel] or new_root.startswith(current[rel] + "/"))
        ]
        if any(rel in confirmed for rel in below):
            continue
        names = {rel: _name_from(rel, new_root) for rel in below}
        old = {by_rel[rel].module for rel in below}
        if any(name in taken - old for name in names.values()):
            continue
        # two script folders may each hold an ``agents.py``: the first by path keeps the
        # name, the other keeps its path's
        taken = (taken - old) | set(names.values())
        renamed.update(names)
    renamed.update(_scan_root_package(modules, imports, files, current, confirmed, renamed))
    return renamed


def text_evidence(
    texts: Iterable[tuple[str, bytes]], named: Mapping[str, str]
) -> list[ImportEvidence]:
    """The import evidence the files' texts (relative path, bytes) show before any is
    parsed, each named as ``named`` says (else from its path): ``evidence_names`` and
    ``import_heads`` guessed from it need no second parse when the guess is right."""
    return [
        ImportEvidence.of_text(rel, named.get(rel) or module_name_for(rel), data)
        for rel, data in texts
    ]


def import_heads(
    modules: Sequence[ImportEvidence], names: Mapping[str, str], python: Sequence[str]
) -> dict[str, dict[str, str]]:
    """What each file's absolute imports name first in its own program: relative path ->
    {first name of an import -> the name the project gives that module's folder}, for the
    files whose imports name modules otherwise named.

    A script runs with its own folder first on ``sys.path``, so ``from utils.mail import
    send`` in ``billing_agent/main.py`` (or in any module below ``billing_agent`` that the
    script imports) takes ``billing_agent/utils/mail.py``, whatever another project of the
    same repository holds under ``utils``. The folder that decides is the nearest one above
    the file that is no package, holds a module of its own, and holds the module imported
    (as ``utils/mail.py``, ``utils/mail/__init__.py`` or ``utils.py``); a folder further up,
    the scan root included, decides where it holds more of the dotted name. Only a folder
    whose modules are named otherwise (two projects cannot both be ``utils``) gives a head.

    An import spelled nowhere in the project as written that names a folder of it in other
    letter case (``from jarvis.tools import x`` beside ``Jarvis/tools.py``, as a checkout
    made on a case-insensitive disk keeps a folder renamed there) names that folder."""
    files = set(python)
    packages = {_folder(rel) for rel in python if rel.rsplit("/", 1)[-1] == "__init__.py"}
    scripts = {_folder(rel) for rel in python if not rel.endswith("__init__.py")} - packages
    scripts.discard("")  # a module at the scan root is named from it: its name is as written
    folded: dict[str, str] = {}
    for rel in sorted(files):
        folded.setdefault(rel.lower(), rel)
    # the names of the project's files and folders, as written and lower-cased: an import
    # whose first name is spelled as none of them, and in other case as one, is looked for
    spelled = {part for rel in python for part in rel.removesuffix(".py").split("/")}
    lowered = {part.lower() for part in spelled}
    # what one folder holds of one import is the same for every file asking: most imports
    # are written alike across a project (``from shop.db import session``)
    held_in: dict[tuple[str, str], tuple[int, str] | None] = {}
    found: dict[str, dict[str, str]] = {}
    for facts in modules:
        chain = [folder for folder in _folders_up(_folder(facts.path)) if folder in scripts]
        heads: dict[str, str] = {}
        decided: set[str] = set()
        for imported in facts.absolute_imports:
            parts = imported.split(".")
            if parts[0] in decided:
                continue
            # the folder holding the most of the dotted name, the nearer of two alike:
            # ``core.logger`` in ``core/agent.py`` is ``core/logger.py`` from the scan root,
            # not a name below the ``core/core.py`` beside it
            held: list[tuple[int, str]] = []
            for folder in [*chain, ""]:
                key = (folder, imported)
                if key not in held_in:
                    held_in[key] = _program_head(folder, parts, files, names)
                match = held_in[key]
                if match is not None:
                    held.append(match)
            best = max(held, key=lambda match: match[0], default=None)
            if best is not None:
                taken: str | None = best[1]
            elif parts[0] not in spelled and parts[0].lower() in lowered:
                taken = _spelled_otherwise(parts, [*chain, ""], files, folded, names)
            else:
                taken = None
            if taken is not None:
                decided.add(parts[0])
                if taken != parts[0]:
                    heads[parts[0]] = taken
        if heads:
            found[facts.path] = heads
    return found


def _spelled_otherwise(
    parts: Sequence[str],
    folders: Sequence[str],
    files: set[str],
    folded: Mapping[str, str],
    names: Mapping[str, str],
) -> str | None:
    """The name the project gives the module an import names in other letter case (its
    first name spelled so nowhere in the project), in the first of ``folders`` holding one."""
    head = parts[0]
    if head in sys.stdlib_module_names:
        return None  # ``import logging`` beside a ``Logging/`` folder is the standard library's
    for folder in folders:
        base = f"{folder}/" if folder else ""
        for suffix in ("/__init__.py", ".py"):
            real = folded.get(f"{base}{head}{suffix}".lower())
            if real is not None:
                spelled = real[len(base) :].split("/", 1)[0].removesuffix(".py")
                found = _program_head(folder, [spelled, *parts[1:]], files, names)
                return found[1] if found else None
    return None


def _folders_up(folder: str) -> Iterator[str]:
    """``folder`` and each folder above it, the scan root ("") excluded."""
    while folder:
        yield folder
        folder = _folder(folder)


def _program_head(
    folder: str, parts: Sequence[str], files: set[str], names: Mapping[str, str]
) -> tuple[int, str] | None:
    """How many of ``parts`` (an absolute import) name a module below ``folder`` (its
    longest prefix that does), and the name the project gives the first of them there.
    Python imports the whole dotted module or fails, so the prefix leaves at most the name
    imported from it: ``from mcp.server.fastmcp import FastMCP`` beside a folder holding
    ``mcp/server.py`` is the installed ``mcp`` package, not that module."""
    for size in range(len(parts), max(len(parts) - 2, 0), -1):
        path = "/".join([folder, *parts[:size]] if folder else parts[:size])
        for rel in (f"{path}.py", f"{path}/__init__.py"):
            if rel not in files:
                continue
            name = (names.get(rel) or module_name_for(rel)).split(".")
            below = list(parts[1:size])
            if len(name) < size or (below and name[len(name) - len(below) :] != below):
                return None
            return size, ".".join(name[: len(name) - len(below)])
    return None


def evidence_of(modules: Iterable[ModuleFacts], named: Mapping[str, str]) -> list[ImportEvidence]:
    """The import evidence of ``modules``' facts, whatever names they were extracted under,
    each read as named by ``named`` (else from its path): what ``evidence_names`` would read
    had every file been parsed under ``named``."""
    return [
        ImportEvidence.of_facts(facts, named.get(facts.path) or module_name_for(facts.path))
        for facts in modules
    ]


def _scan_root_package(
    modules: Sequence[ImportEvidence],
    imports: set[str],
    files: set[str],
    current: dict[str, str],
    confirmed: set[str],
    renamed: dict[str, str],
) -> dict[str, str]:
    """A package folder scanned by itself (the scan root holds ``__init__.py``) is named by
    what its own absolute imports call it: ``from shop.core.server import mcp`` in a file of
    the folder, for its ``core/server.py`` that defines ``mcp``, says the folder is package
    ``shop``. Each import that names one of the folder's modules and a name it defines (or a
    dotted module as written) gives the package name it puts before it; one name, given by
    every such import and naming no module of the project, renames every file named from
    the scan root. Relative path -> new name."""
    if "__init__.py" not in files:
        return {}
    below = [
        facts for facts in modules if current.get(facts.path) == "" and facts.path not in renamed
    ]
    if not below or any(facts.path in confirmed for facts in below):
        return {}
    heads: set[str] = set()
    for facts in below:
        defined = facts.defined
        suffix = "." + facts.module
        for name in imports:
            head, found, member = name.partition(suffix + ".")
            if found and "." not in head and head and member in defined:
                heads.add(head)
            elif "." in facts.module and name.endswith(suffix):
                head = name[: -len(suffix)]
                if head and "." not in head:
                    heads.add(head)
    if len(heads) != 1:
        return {}
    head = heads.pop()
    if not head.isidentifier() or any(
        facts.module == head or facts.module.startswith(head + ".") for facts in modules
    ):
        return {}
    names = {facts.path: f"{head}.{facts.module}" for facts in below}
    names["__init__.py"] = head
    return names
