"""The pre-commit hooks install and run through `pre-commit try-repo` on a real git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentguard.cli import app

from .conftest import ROOT, write_project

HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"
# What `pip install` of the hook repository needs.
PACKAGE_FILES = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "agentguard", "rules")

BAD_AGENT = """\
import requests
from langchain_core.tools import tool


@tool
def create_order(cart_id: str) -> dict:
    \"\"\"Place an order for the cart.\"\"\"
    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
"""

CLEAN_AGENT = """\
from langchain_core.tools import tool


@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b
"""


def git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def pre_commit_command() -> list[str]:
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("pre-commit is not installed; it is part of the dev extra")
        pytest.skip("pre-commit is not installed (pip install '.[dev]')")
    return [sys.executable, "-m", "pre_commit"]


def test_hooks_file_declares_check_and_fix() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS_FILE.read_text())}
    assert set(hooks) == {"agentguard-check", "agentguard-fix"}
    assert hooks["agentguard-check"]["entry"].split()[:2] == ["agentguard", "check"]
    assert hooks["agentguard-fix"]["entry"].split() == ["agentguard", "fix", "--write"]
    for hook in hooks.values():
        assert hook["language"] == "python"
        # Whole-project analysis: effects are followed across files.
        assert hook["pass_filenames"] is False


@pytest.mark.timeout(900)
def test_agentguard_check_hook_runs_through_try_repo(tmp_path: Path) -> None:
    command = pre_commit_command()
    hook_repo = tmp_path / "hook-repo"
    hook_repo.mkdir()
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, hook_repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, hook_repo / name)
    git(hook_repo, "init", "-q")
    git(hook_repo, "add", "-A")
    git(hook_repo, "commit", "-q", "-m", "hooks")

    project = tmp_path / "project"
    project.mkdir()
    write_project(project, {"agent.py": BAD_AGENT})
    git(project, "init", "-q")
    git(project, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}

    def try_repo(hook: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, "try-repo", str(hook_repo), hook, "--all-files"],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
            timeout=800,
        )

    failing = try_repo("agentguard-check")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "AG201" in failing.stdout and "create_order" in failing.stdout
    assert "Failed" in failing.stdout

    (project / "agent.py").write_text(CLEAN_AGENT)
    git(project, "add", "-A")
    passing = try_repo("agentguard-check")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout

    if any(
        (c.name or getattr(c.callback, "__name__", "")) == "fix" for c in app.registered_commands
    ):
        fixed = try_repo("agentguard-fix")
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
