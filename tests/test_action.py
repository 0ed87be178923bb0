"""The composite GitHub Action: well formed, and the commands it runs exist and work."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from agentguard.cli import app

from .conftest import FIXTURES, ROOT

ACTION = ROOT / "action.yml"


def action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


def step(step_id: str) -> dict[str, Any]:
    return next(s for s in action()["runs"]["steps"] if s.get("id") == step_id)


def command_options(name: str) -> set[str]:
    command = typer.main.get_command(app)
    sub = command.commands[name]  # type: ignore[attr-defined]
    return {opt for param in sub.params for opt in getattr(param, "opts", [])}


def invocations() -> list[tuple[str, set[str]]]:
    """Every `agentguard COMMAND ...` the action runs, with the options it passes."""
    found = []
    for item in action()["runs"]["steps"]:
        script = item.get("run", "")
        lines = script.splitlines()
        for index, line in enumerate(lines):
            match = re.match(r"\s*agentguard ([a-z]+)\b", line)
            if not match or line.lstrip().startswith("#"):
                continue
            words: list[str] = []
            for continued in lines[index:]:
                words += shlex.split(continued.replace("\\", "").split(">>")[0], posix=True)
                if not continued.rstrip().endswith("\\"):
                    break
            found.append((match[1], {w for w in words if w.startswith("--")}))
    return found


def test_action_is_a_composite_with_named_steps_and_shells() -> None:
    data = action()
    assert data["runs"]["using"] == "composite"
    for item in data["runs"]["steps"]:
        assert item.get("name"), item
        if "run" in item:
            assert item.get("shell") == "bash", item["name"]
        else:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+", item["uses"]), item["uses"]
    uses = {s["uses"].split("@")[0] for s in data["runs"]["steps"] if "uses" in s}
    assert "github/codeql-action/upload-sarif" in uses


def test_every_referenced_input_and_output_exists() -> None:
    data = action()
    text = ACTION.read_text(encoding="utf-8")
    referenced = set(re.findall(r"inputs\.([\w-]+)", text))
    assert referenced <= set(data["inputs"]), referenced - set(data["inputs"])
    step_ids = {s.get("id") for s in data["runs"]["steps"]}
    check_script = step("check")["run"]
    for name, output in data["outputs"].items():
        match = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}", output["value"])
        if match is None:
            assert "inputs." in output["value"], name
            continue
        assert match[1] in step_ids
        assert (
            f"{match[2]}=" in check_script
            or f'"{match[2]}"' in check_script
            or (match[2] in {"errors", "warnings", "infos"})
        ), name
    assert {"findings", "errors", "warnings", "exit-code"} <= set(data["outputs"])


def test_the_action_runs_only_commands_and_options_agentguard_has() -> None:
    runs = invocations()
    assert {name for name, _ in runs} >= {"check", "report"}
    for name, used in runs:
        assert used <= command_options(name), (name, used - command_options(name))
    check = next(used for name, used in runs if name == "check")
    assert {"--format", "--output", "--fail-on"} <= check


@pytest.fixture
def agentguard_on_path(tmp_path: Path) -> dict[str, str]:
    """An `agentguard` executable running this checkout, as `pip install` would provide."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "agentguard"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentguard "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_check_step(
    tmp_path: Path, env: dict[str, str], paths: str, baseline: str = ""
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    outputs = tmp_path / "github-output"
    outputs.write_text("")
    script_env = {
        **env,
        "AG_PATHS": paths,
        "AG_FAIL_ON": "error",
        "AG_BASELINE": baseline,
        # The fixtures stay as committed: no fact cache written into them.
        "AG_ARGS": "--no-cache",
        "AG_SARIF": str(tmp_path / "agentguard.sarif"),
        "AG_MARKDOWN": str(tmp_path / "agentguard.md"),
        "AG_JSON": str(tmp_path / "agentguard.json"),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_WORKSPACE": str(ROOT),
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step("check")["run"]],
        env=script_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return done, values


def test_the_check_step_writes_reports_and_counts(
    tmp_path: Path, agentguard_on_path: dict[str, str]
) -> None:
    done, outputs = run_check_step(tmp_path, agentguard_on_path, str(FIXTURES / "shop-agent"))
    assert done.returncode == 0, done.stderr  # the step records; the last step fails
    assert outputs["exit-code"] == "1"
    # shop-agent: AG101, AG201, AG401, AG901 (errors); AG301, AG602, AG801 (warnings)
    assert outputs["findings"] == "7" and outputs["errors"] == "4"
    assert outputs["warnings"] == "3" and outputs["stale"] == "0"
    assert "::error file=fixtures/shop-agent/" in done.stdout
    assert (tmp_path / "agentguard.sarif").read_text().lstrip().startswith("{")
    assert (tmp_path / "agentguard.md").read_text().startswith("## agentguard")


def test_the_check_step_reports_usage_errors_as_exit_2(
    tmp_path: Path, agentguard_on_path: dict[str, str]
) -> None:
    done, outputs = run_check_step(tmp_path, agentguard_on_path, str(tmp_path / "missing"))
    assert done.returncode == 0
    assert outputs["exit-code"] == "2"
    assert "findings" not in outputs


def test_readme_documents_the_action_with_a_workflow() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = readme[readme.index("## CI") :]
    workflow = ci[ci.index("```yaml") + len("```yaml") : ci.index("```", ci.index("```yaml") + 7)]
    data = yaml.safe_load(workflow)
    steps = next(iter(data["jobs"].values()))["steps"]
    assert any("agentguard" in str(s.get("uses", "")) for s in steps)
    assert data["jobs"][next(iter(data["jobs"]))]["permissions"]["security-events"] == "write"


def test_the_report_step_appends_the_checklist_to_the_step_summary(
    tmp_path: Path, agentguard_on_path: dict[str, str], shop_agent: Path
) -> None:
    report_step = next(
        s for s in action()["runs"]["steps"] if "agentguard report" in s.get("run", "")
    )
    summary = tmp_path / "step-summary.md"
    env = {
        **agentguard_on_path,
        # A repository of its own: links are relative to its root.
        "AG_PATHS": str(shop_agent),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "acme/shop",
        "GITHUB_SHA": "0123abc",
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", report_step["run"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    text = summary.read_text()
    assert text.startswith("# agentguard checklist: shop-agent")
    assert "https://github.com/acme/shop/blob/0123abc/shop_agent/tools.py#L16" in text


def test_the_cache_the_action_saves_is_the_one_every_agentguard_step_uses() -> None:
    # The fact cache is kept outside the checkout (which must not supply it), in a folder
    # the action restores and saves with actions/cache, so a re-run after a fresh clone hits.
    from agentguard.engine.fact_cache import CACHE_ROOT_ENV

    steps = action()["runs"]["steps"]
    (restore,) = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
    folder = restore["with"]["path"]
    assert "github.workspace" not in folder and "runner.temp" in folder
    assert "github.sha" in restore["with"]["key"] and restore["with"]["restore-keys"].strip()
    runs_agentguard = [s for s in steps if re.search(r"^\s*agentguard ", s.get("run", ""), re.M)]
    assert len(runs_agentguard) >= 2
    for item in runs_agentguard:
        value = item["env"][CACHE_ROOT_ENV]
        assert "agentguard-cache" in value and "runner.temp" in value
        assert "inputs.cache == 'true'" in value
    assert steps.index(restore) < min(steps.index(s) for s in runs_agentguard)
