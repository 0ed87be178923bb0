"""What a CI pipeline relies on: a typo in a rule selection, a file that cannot be read, a
file in newer syntax, or a rule's SARIF tags must never turn a run green in silence."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app

from .conftest import FIXTURES, write_project

runner = CliRunner()
SHOP = str(FIXTURES / "shop-agent")


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--select", "AG999"], "AG999"),
        (["--select", "XYZ"], "XYZ"),
        (["--select", "AG2,XYZ"], "XYZ"),
        (["--ignore", "AG2O1"], "AG2O1"),
    ],
)
def test_an_unknown_rule_code_in_an_option_is_a_usage_error(options: list[str], named: str) -> None:
    result = runner.invoke(app, ["check", SHOP, *options])
    assert result.exit_code == 2, result.output
    assert f"unknown rule code or prefix `{named}`" in result.output
    assert "findings" not in result.output


def test_the_error_suggests_the_nearest_valid_codes() -> None:
    result = runner.invoke(app, ["check", SHOP, "--select", "AG2011"])
    assert result.exit_code == 2
    assert "did you mean AG201" in result.output


def test_an_unknown_rule_code_in_the_config_names_the_file_and_key(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "pyproject.toml": '[tool.agentguard]\nselect = ["AG2", "AG999"]\n',
            "agent.py": "x = 1\n",
        },
    )
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "pyproject.toml" in result.output and "`select`" in result.output
    assert "`AG999`" in result.output


def test_per_file_ignores_codes_are_checked_too(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "pyproject.toml": '[tool.agentguard]\nper-file-ignores = { "scripts/*" = ["AG999"] }\n',
            "agent.py": "x = 1\n",
        },
    )
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "per-file-ignores" in result.output and "`AG999`" in result.output


@pytest.mark.parametrize("selection", ["ALL", "AG", "AG2", "AG20", "AG201", "ag201"])
def test_valid_codes_and_prefixes_are_accepted(selection: str) -> None:
    result = runner.invoke(app, ["check", SHOP, "--select", selection, "--exit-zero"])
    assert result.exit_code == 0, result.output


def test_fix_and_report_refuse_an_unknown_code_too() -> None:
    fixed = runner.invoke(app, ["fix", SHOP, "--select", "AG999"])
    assert fixed.exit_code == 2 and "`AG999`" in fixed.output


TOOL_HEADER = "from langchain_core.tools import tool\n\n"


def test_a_binary_python_file_is_an_error_that_fails_the_run(tmp_path: Path) -> None:
    write_project(tmp_path, {"agent.py": "x = 1\n"})
    (tmp_path / "blob.py").write_bytes(b"\x00\x01binary\x00")
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "blob.py:1:1: AG000 Could not read this file: binary file" in result.output
    assert runner.invoke(app, ["check", str(tmp_path), "--exit-zero"]).exit_code == 0


def test_a_file_in_an_undeclared_encoding_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(TOOL_HEADER.encode() + b"NAME = '\xe9t\xe9'\n")
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "AG000" in result.output and "not valid UTF-8" in result.output


def test_a_syntax_error_fails_the_run_by_default(tmp_path: Path) -> None:
    write_project(tmp_path, {"agent.py": TOOL_HEADER + "@tool\ndef create_order(cart_id: str)\n"})
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "AG000 Could not parse this file" in result.output


@pytest.mark.parametrize(
    ("line", "needs"),
    [
        ("type Orders = list[dict[str, str]]\n", "3.12"),
        ("def first[T](items: list[T]) -> T:\n    return items[0]\n", "3.12"),
    ],
)
def test_newer_syntax_names_the_python_it_needs(tmp_path: Path, line: str, needs: str) -> None:
    import sys

    if sys.version_info >= tuple(int(p) for p in needs.split(".")):
        pytest.skip(f"this interpreter parses Python {needs} syntax")
    write_project(tmp_path, {"agent.py": TOOL_HEADER + line})
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 1, result.output
    running = ".".join(map(str, sys.version_info[:3]))
    assert f"needs Python {needs} or newer; agentguard runs on Python {running}" in result.output


def test_a_plain_syntax_error_claims_no_newer_python(tmp_path: Path) -> None:
    write_project(tmp_path, {"agent.py": TOOL_HEADER + "def create_order(:\n    pass\n"})
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert "AG000" in result.output and "needs Python" not in result.output


def test_help_lists_every_format_and_flags_have_no_negated_twin() -> None:
    from agentguard.output import FORMAT_MODULES

    result = runner.invoke(app, ["check", "--help"], terminal_width=80)
    assert result.exit_code == 0
    flat = " ".join(result.output.replace("│", " ").split())
    for name in FORMAT_MODULES:
        assert name in flat
    assert "--no-no-source" not in result.output and "--no-exit-zero" not in result.output


def test_dash_capital_v_prints_the_version() -> None:
    from agentguard import __version__

    result = runner.invoke(app, ["-V"])
    assert result.exit_code == 0 and result.output.strip() == f"agentguard {__version__}"


def test_rules_is_a_compact_table_with_json_and_markdown_forms() -> None:
    import json

    from agentguard.checks.base import all_rules

    text = runner.invoke(app, ["rules"], terminal_width=80)
    lines = [line for line in text.output.splitlines() if line.strip()]
    assert len(lines) == len(all_rules()) + 1  # a header, then one line a rule
    assert all(len(line) <= 80 for line in lines)
    listed = json.loads(runner.invoke(app, ["rules", "--format", "json"]).output)
    assert [r["code"] for r in listed] == [r.code for r in all_rules()]
    markdown = runner.invoke(app, ["rules", "--format", "markdown"]).output
    assert markdown.startswith("| Code | Name | Severity | Fix |")
    assert markdown.count("\n| AG") == len(all_rules())


def test_rule_docs_piped_keep_every_code_line_whole() -> None:
    from agentguard.checks.base import rule_by_code

    result = runner.invoke(app, ["rule", "AG201"], terminal_width=60)
    found = rule_by_code("AG201")
    assert found is not None
    longest = max(found.docs().splitlines(), key=len)
    assert len(longest) > 60 and longest in result.output


REMOTE_MCP = """\
from agents import Agent
from agents.mcp import MCPServerStreamableHttp

docs = MCPServerStreamableHttp(
    name="docs-search",
    params={"url": "https://docs.example.com/mcp"},
    max_retry_attempts=3,
)
agent = Agent(name="helper", mcp_servers=[docs])
"""


def test_a_remote_mcp_server_declared_read_only_is_not_flagged_for_its_retries(
    tmp_path: Path,
) -> None:
    write_project(tmp_path, {"agent.py": REMOTE_MCP})
    (tmp_path / ".git").mkdir()
    flagged = runner.invoke(app, ["check", str(tmp_path), "--select", "AG402"])
    assert flagged.exit_code == 1 and "max_retry_attempts" in flagged.output
    for declared in ("docs-search", "https://docs.example.com/mcp"):
        config = f'[tool.agentguard]\nread-only-mcp-servers = ["{declared}"]\n'
        (tmp_path / "pyproject.toml").write_text(config)
        quiet = runner.invoke(app, ["check", str(tmp_path), "--select", "AG402"])
        assert quiet.exit_code == 0 and "0 findings" in quiet.output, quiet.output
    (tmp_path / "pyproject.toml").write_text(
        '[tool.agentguard]\nread-only-mcp-servers = ["another-server"]\n'
    )
    assert runner.invoke(app, ["check", str(tmp_path), "--select", "AG402"]).exit_code == 1


def test_the_action_sets_up_the_newest_python_by_default() -> None:
    import yaml

    from .conftest import ROOT

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["inputs"]["python-version"]["default"] == "3.x"


def test_a_newer_f_string_is_read_around_and_named(tmp_path: Path) -> None:
    """An f-string nesting its own quotes (PEP 701) under an older Python: the file's tools
    are still found and checked, and the run names the line and the Python it needs."""
    import sys

    if sys.version_info >= (3, 12):
        pytest.skip("this interpreter parses Python 3.12 f-strings")
    source = (
        TOOL_HEADER
        + "import requests\n\n\n@tool\ndef create_order(cart_id: str) -> str:\n"
        + '    """Create an order."""\n'
        + '    resp = requests.post("https://shop.example/orders", json={"cart": cart_id})\n'
        + '    return f"Order {resp.json()["id"]} created"\n'
    )
    write_project(tmp_path, {"agent.py": source})
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert "AG000" not in result.output
    assert "AG101" in result.output and "create_order" in result.output
    assert "PEP 701) needs Python 3.12" in result.output
