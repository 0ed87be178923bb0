"""Config keys as the command line applies them: `jobs`, `cache-dir` and `extend-select`
set in pyproject.toml change what `agentguard` does, and a command-line flag wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.engine import parallel

from .conftest import write_project

runner = CliRunner()

REFUND_TOOL = (
    "import requests\n"
    "from langchain_core.tools import tool\n\n\n"
    "@tool\n"
    "def create_refund(order_id: str, amount: int) -> dict:\n"
    '    """Refund an order."""\n'
    "    return requests.post(\n"
    '        "https://shop.example/refunds", json={"order": order_id, "amount": amount}\n'
    "    ).json()\n"
)


def project_with(tmp_path: Path, settings: str) -> Path:
    project = tmp_path / "agent"
    write_project(
        project,
        {
            "pyproject.toml": f"[project]\nname = 'agent'\n\n[tool.agentguard]\n{settings}\n",
            "agent.py": REFUND_TOOL,
            "helpers.py": "def total(items):\n    return sum(items)\n",
        },
    )
    return project


def cached_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.pickle")) if folder.is_dir() else []


def codes(output: str) -> set[str]:
    return {finding["code"] for finding in json.loads(output)["findings"]}


def test_cache_dir_from_the_config_is_where_check_keeps_its_cache(tmp_path: Path) -> None:
    # Relative to the project root, and outside the project (a folder inside is refused).
    project = project_with(tmp_path, 'cache-dir = "../build-cache/agentguard"')
    checked = runner.invoke(app, ["check", str(project), "--exit-zero", "--jobs", "1"])
    assert checked.exit_code == 0, checked.output
    assert cached_files(tmp_path / "build-cache" / "agentguard")
    assert not (project / ".agentguard_cache").exists()
    cleaned = runner.invoke(app, ["clean", str(project)])
    assert cleaned.exit_code == 0, cleaned.output
    assert not cached_files(tmp_path / "build-cache" / "agentguard")


def test_the_cache_dir_flag_wins_over_the_config(tmp_path: Path) -> None:
    project = project_with(tmp_path, 'cache-dir = "from-config"')
    flag = tmp_path / "from-flag"
    checked = runner.invoke(
        app, ["check", str(project), "--exit-zero", "--jobs", "1", "--cache-dir", str(flag)]
    )
    assert checked.exit_code == 0, checked.output
    assert cached_files(flag)
    assert not (project / "from-config").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["report", "--format", "json"],
        ["fix"],
        ["baseline", "create", "{tmp}/baseline.json"],
    ],
)
def test_every_scanning_command_uses_the_configured_cache(
    tmp_path: Path, command: list[str]
) -> None:
    project = project_with(tmp_path, 'cache-dir = "../ag-cache"')
    words = [word.replace("{tmp}", str(tmp_path)) for word in command]
    result = runner.invoke(app, [*words, str(project)])
    assert result.exit_code in (0, 1), result.output
    assert cached_files(tmp_path / "ag-cache")


def test_jobs_from_the_config_sets_the_parsing_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A machine with one core: without the config the scan would parse in one process.
    monkeypatch.setattr(parallel, "default_jobs", lambda: 1)
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 1)
    project = project_with(tmp_path, "jobs = 2")
    configured = runner.invoke(app, ["check", str(project), "--no-cache", "--profile"])
    assert "jobs 2" in configured.output, configured.output
    flagged = runner.invoke(app, ["check", str(project), "--no-cache", "--profile", "-j", "1"])
    assert "jobs 1" in flagged.output, flagged.output


def test_extend_select_alone_adds_to_the_default_selection(tmp_path: Path) -> None:
    everything = codes(
        runner.invoke(app, ["check", str(project_with(tmp_path / "a", "")), "-f", "json"]).output
    )
    assert {"AG201", "AG301"} <= everything
    extended = project_with(tmp_path / "b", 'extend-select = ["AG201"]')
    result = runner.invoke(app, ["check", str(extended), "-f", "json", "--no-cache"])
    assert codes(result.output) == everything


def test_extend_select_overrides_a_broader_ignore(tmp_path: Path) -> None:
    project = project_with(tmp_path, 'ignore = ["AG2"]\nextend-select = ["AG201"]')
    found = codes(runner.invoke(app, ["check", str(project), "-f", "json", "--no-cache"]).output)
    assert "AG201" in found and "AG301" in found


def test_extend_select_adds_to_select(tmp_path: Path) -> None:
    project = project_with(tmp_path, 'select = ["AG3"]\nextend-select = ["AG201"]')
    found = codes(runner.invoke(app, ["check", str(project), "-f", "json", "--no-cache"]).output)
    assert found == {"AG201", "AG301"}


def test_an_unknown_key_under_a_framework_is_an_error_naming_it(tmp_path: Path) -> None:
    project = project_with(tmp_path, "[tool.agentguard.frameworks.acme]\nbogus = 1\n")
    result = runner.invoke(app, ["check", str(project)])
    assert result.exit_code == 2
    assert "pyproject.toml" in result.output
    assert "frameworks.acme" in result.output and "bogus" in result.output


def test_the_configured_baseline_is_used_without_an_argument(tmp_path: Path) -> None:
    project = project_with(tmp_path, 'baseline = "agentguard-baseline.json"')
    created = runner.invoke(
        app, ["baseline", "create", str(project / "agentguard-baseline.json"), str(project)]
    )
    assert created.exit_code == 0, created.output
    accepted = runner.invoke(app, ["check", str(project), "--no-cache"])
    assert accepted.exit_code == 0, accepted.output
    assert "0 findings" in accepted.output
    (project / "agentguard-baseline.json").unlink()
    missing = runner.invoke(app, ["check", str(project), "--no-cache"])
    assert missing.exit_code == 2
    assert "agentguard-baseline.json: baseline file not found" in missing.output
