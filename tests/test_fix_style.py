"""Fixes write code in the project's style: the file's quotes and the formatter's line length
(ruff's or black's setting), as the README promises."""

from __future__ import annotations

import io
import shutil
import subprocess
import tokenize
from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.apply_fixes import run_fixes
from agentguard.fixes.context import DEFAULT_LINE_LENGTH, formatter_line_length

REPO = Path(__file__).resolve().parent.parent
QUOTES_AGENT = REPO / "fixtures" / "quotes-agent"


def string_quotes(text: str) -> set[str]:
    """The quote that opens each string literal outside an f-string's replacement fields."""
    quotes: set[str] = set()
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        name = tokenize.tok_name[token.type]
        if name == "FSTRING_START":
            if depth == 0:
                quotes.add(token.string.lstrip("fFrRbB")[0])
            depth += 1
        elif name == "FSTRING_END":
            depth -= 1
        elif token.type == tokenize.STRING and depth == 0:
            body = token.string.lstrip("fFrRbBuU")
            if not body.startswith(("'''", '"""')):  # docstrings keep their own style
                quotes.add(body[0])
    return quotes


def fixed_text(project: Path, relative: str) -> tuple[str, str]:
    run = run_fixes([project], load_config([project]), unsafe=True)
    change = next(c for c in run.changes if c.path == relative)
    return change.before, change.after


def test_fixes_keep_single_quotes_and_the_ruff_line_length(tmp_path: Path) -> None:
    project = tmp_path / "quotes-agent"
    shutil.copytree(QUOTES_AGENT, project)
    before, after = fixed_text(project, "desk/tools.py")
    assert string_quotes(before) == {"'"}
    assert "@guarded(" in after and "'ok': False" in after  # AG101's and AG601's fixes
    assert string_quotes(after) == {"'"}
    assert max(len(line) for line in after.splitlines()) <= 79
    compile(after, "tools.py", "exec")


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", 100),
        ("pyproject.toml", "[tool.black]\nline-length = 72\n", 72),
        ("pyproject.toml", "[tool.ruff]\nline-length = 99\n[tool.black]\nline-length = 72\n", 99),
        ("ruff.toml", "line-length = 110\n", 110),
        (".ruff.toml", "line-length = 120\n", 120),
        ("pyproject.toml", "[project]\nname = 'x'\n", DEFAULT_LINE_LENGTH),
        ("pyproject.toml", "not toml [", DEFAULT_LINE_LENGTH),
    ],
)
def test_the_line_length_comes_from_the_formatter_config(
    tmp_path: Path, name: str, content: str, expected: int
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(content)
    sub = tmp_path / "src"
    sub.mkdir()
    assert formatter_line_length(sub) == expected


def test_a_long_fix_is_laid_out_for_a_wider_project(tmp_path: Path) -> None:
    project = tmp_path / "quotes-agent"
    shutil.copytree(QUOTES_AGENT, project)
    (project / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    _, after = fixed_text(project, "desk/tools.py")
    # The key fits on the decorator's line at 120 columns.
    assert "    key=lambda call: f'open_ticket:" in after
    assert max(len(line) for line in after.splitlines()) <= 120


LONG_DECORATOR = (
    "import httpx\n"
    "from fastmcp import FastMCP\n\n"
    'mcp = FastMCP("shop")\n\n\n'
    '@mcp.tool(name="create_customer_order", description="Create an order for the cart")\n'
    "async def create_order(cart_id: str) -> dict:\n"
    "    async with httpx.AsyncClient() as client:\n"
    '        response = await client.post("https://shop.example/orders", json={"c": cart_id})\n'
    "        return response.json()\n"
)


def fix_diff(project: Path) -> str:
    from typer.testing import CliRunner

    from agentguard.cli import app

    done = CliRunner().invoke(app, ["fix", str(project), "--select", "AG101"])
    assert done.exit_code == 1, done.output
    return done.stdout


def test_a_decorator_with_arguments_stays_within_the_line_length(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "server.py").write_text(LONG_DECORATOR, encoding="utf-8")
    added = [line[1:] for line in fix_diff(tmp_path).splitlines() if line.startswith("+")]
    assert "    annotations=ToolAnnotations(" in added
    assert '    name="create_customer_order",' in added
    assert max(len(line) for line in added if not line.startswith("++")) <= DEFAULT_LINE_LENGTH


def test_a_file_in_a_declared_encoding_is_fixed_and_written_in_it(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    source = "# -*- coding: latin-1 -*-\n" + LONG_DECORATOR.replace("Create an", "Créer an")
    (tmp_path / "server.py").write_bytes(source.encode("latin-1"))
    run = run_fixes([tmp_path], load_config([tmp_path]))
    (change,) = run.changes
    written = change.encoded()
    assert "annotations=ToolAnnotations(" in written.decode("latin-1")
    assert "Créer".encode("latin-1") in written


def test_a_fix_on_offer_that_cannot_be_made_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `check` says "fix available": `fix` must not then print nothing and exit 0.
    from typer.testing import CliRunner

    from agentguard.checks.declarations.ag101_undeclared_tool_semantics import (
        UndeclaredToolSemantics,
    )
    from agentguard.cli import app

    (tmp_path / ".git").mkdir()
    (tmp_path / "server.py").write_text(LONG_DECORATOR, encoding="utf-8")
    monkeypatch.setattr(UndeclaredToolSemantics, "fixed_text", lambda self, finding, ctx: None)
    done = CliRunner().invoke(app, ["fix", str(tmp_path), "--select", "AG101"])
    assert "fix not made: server.py:8:11 AG101: no edit could be built" in done.stderr


def test_a_patch_of_a_file_in_a_declared_encoding_applies_with_git(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    from typer.testing import CliRunner

    from agentguard.cli import app

    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    source = "# -*- coding: latin-1 -*-\n" + LONG_DECORATOR.replace("Create an", "Créer an")
    (project / "server.py").write_bytes(source.encode("latin-1"))
    patch = tmp_path / "fixes.patch"
    done = CliRunner().invoke(
        app, ["fix", str(project), "--select", "AG101", "--emit-patch", str(patch)]
    )
    assert done.exit_code == 1, done.output
    assert '+    description="Créer an order for the cart",'.encode("latin-1") in patch.read_bytes()
    subprocess.run(["git", "apply", str(patch)], cwd=project, check=True)
    fixed = (project / "server.py").read_bytes().decode("latin-1")
    assert "annotations=ToolAnnotations(" in fixed
    assert "Créer an order" in fixed
