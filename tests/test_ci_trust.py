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
