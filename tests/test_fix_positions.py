"""Fix builders find their nodes by line without LibCST's metadata providers, at the
positions those providers would give (checked against them here, off the scan path)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider

from agentguard.cli import app
from agentguard.fixes.cst_tools import ParsedFile

from .conftest import FIXTURES
from .test_fix import TOOL, copy_fixture, make_project, runner

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))
# What holds a statement starts with it (a block at its first statement, the module at
# line 1): a lookup by line stops at the statement.
HOLDERS = (cst.Module, cst.IndentedBlock)
TRICKY = (
    "# leading comment\n"
    '"""Docstring."""\n'
    "import os\n\n\n"
    "class Shop:\n"
    "    @staticmethod\n"
    "    @tool(\n"
    "        name='refund',  # a comment inside the call\n"
    "    )\n"
    "    def refund(order_id: str,\n"
    "               amount: int = 0) -> str:\n"
    "        if order_id:\n"
    "            pass\n"
    "        elif amount:  # elif is not if\n"
    "            return f'''{order_id}\n"
    "spans lines'''\n"
    "        else:\n"
    "            match amount:\n"
    "                case 1:\n"
    "                    return 'one'\n"
    "                case _:\n"
    "                    return os.getcwd()\n"
    "        try:\n"
    "            x = (1 +\n"
    "                 2); y = 3\n"
    "        except (ValueError,\n"
    "                TypeError) as e:\n"
    "            return str(e)\n"
    "        finally:\n"
    "            pass\n"
    "        return 'x'\n"
    "\r\n"
    "def f(a\n"
    "      : int) -> None: return None\n"
    "    # an indented comment after the last statement\n"
)


def _reference(module: cst.Module) -> tuple[dict[cst.CSTNode, CodeRange], dict]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return dict(wrapper.resolve(PositionProvider)), dict(wrapper.resolve(ParentNodeProvider))


def _assert_positions_match(text: str) -> None:
    parsed = ParsedFile(text)
    positions, parents = _reference(parsed.module)
    for line in range(1, len(text.splitlines()) + 2):
        expected = [n for n, where in positions.items() if where.start.line == line]
        expected.sort(
            key=lambda n: (
                positions[n].end.line - positions[n].start.line,
                positions[n].end.column - positions[n].start.column,
            ),
            reverse=True,
        )
        found = parsed.nodes_at(line)
        assert [id(n) for n in found] == [id(n) for n in expected if not isinstance(n, HOLDERS)]
        for node in found:
            assert parsed.position(node) == positions[node]
            ancestor: cst.CSTNode | None = node
            while ancestor is not None:
                assert parsed.parent(ancestor) is parents.get(ancestor)
                ancestor = parsed.parent(ancestor)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_positions_by_line_are_libcsts_on_fixture_files(path: Path) -> None:
    _assert_positions_match(path.read_text(encoding="utf-8"))


def test_positions_by_line_are_libcsts_in_nested_blocks_and_odd_layouts() -> None:
    _assert_positions_match(TRICKY)


def test_function_lookup_and_replacement_rebuild_only_what_changes() -> None:
    parsed = ParsedFile(TRICKY)
    function = parsed.function_at("refund", 11)
    assert function is not None
    assert parsed.function_at("refund", 12) is None
    renamed = function.with_changes(name=cst.Name("give_back"))
    module = parsed.replace(function, renamed)
    assert module.code == TRICKY.replace("def refund(", "def give_back(")
    untouched = parsed.module.body[0]
    assert module.body[0] is untouched  # the docstring statement was not rebuilt


def test_fix_edits_never_resolve_libcst_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a LibCST metadata provider ran")

    monkeypatch.setattr(MetadataWrapper, "resolve", refuse)
    monkeypatch.setattr(MetadataWrapper, "resolve_many", refuse)
    project = copy_fixture(FIXTURES / "shop-agent", tmp_path)
    result = runner.invoke(app, ["check", str(project), "--no-cache", "-f", "json"])
    assert '"edits"' in result.stdout
    other = make_project(tmp_path, {"agent.py": TOOL})
    fixed = runner.invoke(app, ["fix", str(other), "--unsafe-fixes"])
    assert "+@guarded(" in fixed.stdout
