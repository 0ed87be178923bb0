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
    "agentguard.ledger_cli": 7,
    "agentguard.__main__": 7,
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


def imports_of(path: Path, module: str) -> list[tuple[str, int]]:
    """Every agentguard module imported anywhere in the file, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
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
    for path in sorted((PACKAGE / "runtime").rglob("*.py")):
        module = module_name(path)
        for imported, line in imports_of(path, module):
            assert imported.startswith(RUNTIME) or imported == "agentguard.__version__", (
                f"{module}:{line} imports {imported}"
            )


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
