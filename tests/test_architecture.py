"""The analyser's layers import only downward: knowledge -> facts -> project -> rules -> engine
-> outputs. Every import counts, the lazy ones inside functions and the type-only ones too:
an upward edge is a dependency that a later change will trip over, whenever it runs."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agentguard"

# Lower numbers sit lower; a module may import its own layer or any below it.
LAYERS: dict[str, int] = {
    "agentguard": 0,
    "agentguard.diagnostics": 0,
    "agentguard.config": 0,
    "agentguard.knowledge": 1,
    "agentguard.facts": 2,
    "agentguard.project": 3,
    "agentguard.fixes": 4,
    "agentguard.checks": 5,
    "agentguard.engine": 6,
    "agentguard.output": 7,
    "agentguard.report": 7,
    "agentguard.cli": 7,
    "agentguard.cli_common": 7,
    "agentguard.cli_baseline": 7,
    "agentguard.cli_fix": 7,
    "agentguard.ledger_cli": 7,
    "agentguard.__main__": 7,
    # the runtime's adapters to durable engines: runtime-side, beside the CLI
    "agentguard.engines": 7,
}
RUNTIME = "agentguard.runtime"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str | None:
    """The layer key a module belongs to: the longest key that is it or a package above it."""
    if module == "agentguard" or module.startswith("agentguard.__version__"):
        return "agentguard"
    best = None
    for key in LAYERS:
        if key == "agentguard":
            continue  # the package itself, not everything in it
        if (module == key or module.startswith(key + ".")) and (
            best is None or len(key) > len(best)
        ):
            best = key
    return best


def imported_from(node: ast.ImportFrom, path: Path, module: str) -> str:
    """The module a ``from ... import`` in the file of ``module`` names, relative ones too."""
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(path: Path, module: str) -> list[tuple[str, int]]:
    """Every agentguard module imported anywhere in the file, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = imported_from(node, path, module)
            # ``from agentguard.project import tools`` imports the submodule.
            found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name.split(".")[0] == "agentguard"]


def analyser_modules() -> list[tuple[Path, str]]:
    return [
        (path, module_name(path))
        for path in sorted(PACKAGE.rglob("*.py"))
        if not module_name(path).startswith(RUNTIME)
    ]


def upward_edges() -> list[str]:
    problems = []
    for path, module in analyser_modules():
        own = part_of(module)
        if own is None:
            problems.append(f"{module}: in no layer; add its package to LAYERS")
            continue
        for imported, line in imports_of(path, module):
            if imported.startswith(RUNTIME):
                if LAYERS[own] < LAYERS["agentguard.cli"]:
                    problems.append(f"{module}:{line} imports the runtime ({imported})")
                continue
            target = part_of(imported)
            if target is not None and LAYERS[target] > LAYERS[own]:
                problems.append(f"{module}:{line} imports {imported} (layer {target} above {own})")
    return problems


def test_the_analyser_imports_only_downward() -> None:
    assert upward_edges() == []


def test_no_cycle_between_top_level_parts() -> None:
    edges: dict[str, set[str]] = {}
    for path, module in analyser_modules():
        own = part_of(module)
        for imported, _line in imports_of(path, module):
            target = part_of(imported)
            if own and target and target != own and not imported.startswith(RUNTIME):
                edges.setdefault(own, set()).add(target)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = sorted(part for part in edges if reaches(part, part, {part}))
    assert cycles == []


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    """The walk sees a lazy import inside a function, the form most easily slipped in."""
    source = tmp_path / "agentguard" / "facts" / "sample.py"
    source.parent.mkdir(parents=True)
    source.write_text("def f():\n    from agentguard.checks.base import Rule\n")
    ((imported, line),) = imports_of(source, "agentguard.facts.sample")
    assert (imported, line) == ("agentguard.checks.base.Rule", 2)
    assert LAYERS[part_of(imported) or ""] > LAYERS[part_of("agentguard.facts.sample") or ""]


def test_the_runtime_imports_nothing_of_the_analyser() -> None:
    paths = [*(PACKAGE / "runtime").rglob("*.py"), *(PACKAGE / "engines").rglob("*.py")]
    for path in sorted(paths):
        module = module_name(path)
        for imported, line in imports_of(path, module):
            allowed = imported.startswith((RUNTIME, "agentguard.engines"))
            assert allowed or imported == "agentguard.__version__", (
                f"{module}:{line} imports {imported}"
            )


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_module(name: str, root: Path = PACKAGE.parent) -> bool:
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` as written, or None for anything but names and attributes."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def private_uses(path: Path, module: str, root: Path = PACKAGE.parent) -> list[tuple[str, int]]:
    """The private names (``_x``) of other agentguard modules the file uses, with their line:
    imported by name, or read as an attribute of an imported agentguard module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: dict[str, str] = {}  # a local name -> the agentguard module it is bound to
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = imported_from(node, path, module)
            if target.split(".")[0] != "agentguard" or target == module:
                continue
            for alias in node.names:
                if is_private(alias.name):
                    found.append((f"{target}.{alias.name}", node.lineno))
                if is_module(f"{target}.{alias.name}", root):
                    bound[alias.asname or alias.name] = f"{target}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "agentguard":
                    local = alias.asname or alias.name.split(".")[0]
                    bound[local] = alias.name if alias.asname else local
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not is_private(node.attr):
            continue
        written = dotted(node.value)
        head = written.split(".")[0] if written else ""
        if written is None or head not in bound:
            continue
        owner = bound[head] + written[len(head) :]
        if owner != module and is_module(owner, root):
            found.append((f"{owner}.{node.attr}", node.lineno))
    return found


# Uses of another module's private names that predate this test (none in the project
# layer), each to be made public or moved where it is used. The list may only shrink: a new
# use fails, and so does an entry no longer needed, until it is struck off.
PRIVATE_USES_ALLOWED: set[tuple[str, str]] = {
    ("agentguard.engine.display_paths", "agentguard.engine.discovery._absolute"),
    ("agentguard.runtime.core", "agentguard.runtime.kinds._DEFAULTS_BY_RISK"),
    ("agentguard.runtime.core", "agentguard.runtime.kinds._EFFECTS_BY_RISK"),
    ("agentguard.runtime.core", "agentguard.runtime.planning._simple_parameters"),
    ("agentguard.runtime.drivers", "agentguard.runtime.context._current_call"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._Body"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._Callback"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._Drive"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._FINISHED"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._LedgerOp"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._Outcome"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._Sleep"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._call_callback_async"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._call_callback_sync"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._ledger_op_through_cancellation"),
    ("agentguard.runtime.drivers", "agentguard.runtime.effects._limit_output"),
    ("agentguard.runtime.drivers", "agentguard.runtime.planning._CLAIM_STARTED"),
    ("agentguard.runtime.planning", "agentguard.runtime.effects._Body"),
    ("agentguard.runtime.planning", "agentguard.runtime.effects._Callback"),
    ("agentguard.runtime.planning", "agentguard.runtime.effects._Claim"),
    ("agentguard.runtime.planning", "agentguard.runtime.effects._LedgerOp"),
    ("agentguard.runtime.planning", "agentguard.runtime.effects._Outcome"),
    ("agentguard.runtime.planning", "agentguard.runtime.effects._Sleep"),
    ("agentguard.runtime.recovery", "agentguard.runtime.effects._loop_running"),
    ("agentguard.runtime.recovery", "agentguard.runtime.effects._run_awaitable"),
    ("agentguard.runtime.recovery", "agentguard.runtime.planning._expire_lease"),
}


def test_no_module_uses_another_modules_private_names() -> None:
    found = {
        (module_name(path), name)
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, _line in private_uses(path, module_name(path))
    }
    assert sorted(found - PRIVATE_USES_ALLOWED) == []
    # An entry fixed since is struck off, so the list cannot grow back.
    assert sorted(PRIVATE_USES_ALLOWED - found) == []


def test_a_private_use_is_caught(tmp_path: Path) -> None:
    """Both forms: a private name imported, and one read off an imported module."""
    source = tmp_path / "sample.py"
    source.write_text(
        "from agentguard.project.discovery.declarations import _written_value\n"
        "from agentguard.project.discovery import declarations as decl\n"
        "def f(project, value):\n"
        "    return decl._built_by_helper(project, value)\n"
    )
    assert private_uses(source, "agentguard.facts.sample") == [
        ("agentguard.project.discovery.declarations._written_value", 1),
        ("agentguard.project.discovery.declarations._built_by_helper", 4),
    ]


def import_graph(folder: Path, package: str) -> dict[str, set[str]]:
    """The modules of ``package`` (the files under ``folder``) and those of them each one
    imports, lazily, for types only or at the top alike."""
    modules = {
        ".".join([package, *path.relative_to(folder).with_suffix("").parts]).removesuffix(
            ".__init__"
        ): path
        for path in sorted(folder.rglob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        graph[module] = set()
        for imported, _line in imports_of(path, module):
            # ``from pkg.mod import name``: the longest prefix that is one of the modules
            parts = imported.split(".")
            for end in range(len(parts), 0, -1):
                target = ".".join(parts[:end])
                if target in modules:
                    if target != module:
                        graph[module].add(target)
                    break
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One path per import cycle found (a module back to itself)."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(module, ())):
            if nxt in path:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in done:
                walk(nxt, [*path, nxt])
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            walk(module, [module])
    return found


def test_no_import_cycle_inside_any_package() -> None:
    """Module by module, in every package (the runtime's too): a lazy or type-only import
    that closes a cycle is still a web a later change trips over."""
    graph = import_graph(PACKAGE, "agentguard")
    assert len(graph) > 150  # every module was read
    assert "agentguard.project.discovery.discover" in graph
    assert cycles(graph) == []


def test_an_import_cycle_is_caught(tmp_path: Path) -> None:
    """A lazy import one way and a type-only one back make a cycle."""
    folder = tmp_path / "agentguard" / "project" / "discovery"
    folder.mkdir(parents=True)
    (folder / "finder.py").write_text(
        "def find():\n    from agentguard.project.discovery.helper import helps\n"
    )
    (folder / "helper.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from agentguard.project.discovery import finder\n"
    )
    graph = import_graph(folder, "agentguard.project.discovery")
    assert cycles(graph) == [
        [
            "agentguard.project.discovery.finder",
            "agentguard.project.discovery.helper",
            "agentguard.project.discovery.finder",
        ]
    ]


# Reading source text: only the facts layer does it (``agentguard.facts``), once per file; every
# layer above reads the structure the facts carry. (LibCST edits made by fixes are writing.)
PARSING_CALLS = frozenset(
    {"ast.parse", "ast.literal_eval", "compile", "builtins.compile", "eval", "exec"}
)


def parsing_calls(path: Path) -> list[tuple[str, int]]:
    """Every call in the file that parses Python text, with its line: ``ast.parse``,
    ``ast.literal_eval`` (however ``ast`` or the function is imported), ``compile``,
    ``eval`` and ``exec``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, str] = {}  # local name -> what it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update({alias.asname or alias.name: alias.name for alias in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module in {"ast", "builtins"}:
            names.update(
                {alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names}
            )
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            called = names.get(func.id, func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            called = f"{names.get(func.value.id, func.value.id)}.{func.attr}"
        else:
            continue
        if called in PARSING_CALLS:
            found.append((called, node.lineno))
    return found


def test_only_the_facts_parse_source() -> None:
    problems = [
        f"{module}:{line} calls {called}"
        for path, module in analyser_modules()
        if part_of(module) != "agentguard.facts"
        for called, line in parsing_calls(path)
    ]
    assert problems == []


def test_a_parse_outside_the_facts_is_caught(tmp_path: Path) -> None:
    """A project pass that reads a value's text again, under any import form, is found."""
    source = tmp_path / "agentguard" / "project" / "sample.py"
    source.parent.mkdir(parents=True)
    source.write_text(
        "import ast as syntax\n"
        "from ast import literal_eval\n"
        "def f(value):\n"
        "    node = syntax.parse(value.text, mode='eval')\n"
        "    return literal_eval(value.text), compile(value.text, 'x', 'eval'), node\n"
    )
    assert parsing_calls(source) == [
        ("ast.parse", 4),
        ("ast.literal_eval", 5),
        ("compile", 5),
    ]
