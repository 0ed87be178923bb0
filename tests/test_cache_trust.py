"""A checkout cannot change what is reported about it: the cache lives outside the scanned
tree, and a cache folder inside it (committed to the repository, say) is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine import fact_cache
from agentguard.engine.pipeline import scan
from agentguard.engine.speed import FactOptions

# A billing MCP server whose tool POSTs a charge with no idempotency key and hands the
# exception text to the model.
CHARGE = '''\
import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def charge_card(customer_id: str, amount_cents: int) -> str:
    """Charge the customer's card."""
    try:
        response = httpx.post(
            "https://payments.example.com/v1/charges",
            json={"customer": customer_id, "amount": amount_cents},
        )
        response.raise_for_status()
        return response.json()["id"]
    except Exception as e:
        return str(e)
'''

# The same file's harmless twin: one read tool, with a timeout.
INVOICE = '''\
import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("billing")


@mcp.tool()
def get_invoice(invoice_id: str) -> str:
    """Read one invoice."""
    response = httpx.get(f"https://payments.example.com/v1/invoices/{invoice_id}", timeout=10)
    response.raise_for_status()
    return response.text
'''

PLANTED = ".agentguard_cache"


def git(project: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=project,
        check=True,
        capture_output=True,
    )


def poisoned_checkout(tmp_path: Path, config: str = "") -> Path:
    """A repository that commits a crafted cache: the facts of the harmless twin, stored
    under the cache key of the charging tool's file, with no run record."""
    project = tmp_path / "billing"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "billing"\n\n[tool.agentguard]\n{config}', encoding="utf-8"
    )
    planted = project / PLANTED
    cfg = load_config([project])
    (project / "tools.py").write_text(INVOICE, encoding="utf-8")
    scan([project], cfg, facts=FactOptions(jobs=1, cache_dir=planted))
    harmless = fact_cache.content_key("tools.py", INVOICE.encode())
    (project / "tools.py").write_text(CHARGE, encoding="utf-8")
    bad = fact_cache.content_key("tools.py", CHARGE.encode())
    (entry,) = planted.rglob(f"{harmless[2:]}.pickle")
    target = entry.parent.parent / bad[:2] / f"{bad[2:]}.pickle"
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(entry, target)
    shutil.rmtree(entry.parent.parent / "runs", ignore_errors=True)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "add", "-f", PLANTED)  # past the cache's own .gitignore
    git(project, "commit", "-q", "-m", "billing tools")
    return project


def check_json(project: Path, *args: str) -> tuple[dict[str, object], str, int]:
    result = CliRunner().invoke(
        app, ["check", str(project), "--format", "json", "--jobs", "1", *args]
    )
    return json.loads(result.stdout), result.stderr, result.exit_code


def codes(report: dict[str, object]) -> list[str]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return sorted(finding["code"] for finding in findings)


@pytest.fixture
def fresh_findings(tmp_path: Path) -> list[str]:
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "tools.py").write_text(CHARGE, encoding="utf-8")
    report, _, _ = check_json(clean, "--no-cache")
    return codes(report)


def test_the_crafted_entry_would_hide_the_charging_tool_if_it_were_read(tmp_path: Path) -> None:
    # What the planted folder does when a scan is pointed at it: the tool is the
    # harmless twin, with no finding. The command line never reads it (below).
    project = poisoned_checkout(tmp_path)
    options = FactOptions(jobs=1, cache_dir=project / PLANTED)
    result = scan([project], load_config([project]), facts=options)
    assert result.findings == []
    assert [tool.name for tool in result.found_tools] == ["get_invoice"]


def test_a_cache_committed_in_the_default_place_is_not_read(
    tmp_path: Path, fresh_findings: list[str]
) -> None:
    project = poisoned_checkout(tmp_path)
    report, _, exit_code = check_json(project)
    assert exit_code == 1
    assert "AG601" in fresh_findings
    assert codes(report) == fresh_findings
    assert not fact_cache.inside_scanned_tree(fact_cache.default_cache_dir(project), [project])


def test_a_cache_folder_the_config_puts_in_the_tree_is_refused_with_a_warning(
    tmp_path: Path, fresh_findings: list[str]
) -> None:
    project = poisoned_checkout(tmp_path, config=f'cache-dir = "{PLANTED}"\n')
    report, stderr, exit_code = check_json(project)
    assert exit_code == 1
    assert codes(report) == fresh_findings
    assert "warning:" in stderr and "inside the scanned tree" in stderr


def test_a_cache_dir_option_inside_the_tree_is_refused_too(
    tmp_path: Path, fresh_findings: list[str]
) -> None:
    project = poisoned_checkout(tmp_path)
    report, stderr, _ = check_json(project, "--cache-dir", str(project / PLANTED))
    assert codes(report) == fresh_findings
    assert "inside the scanned tree" in stderr


def test_a_fresh_clone_hits_the_restored_cache(tmp_path: Path) -> None:
    # CI: the job clones into the same workspace path each time and restores the cache.
    project = tmp_path / "work" / "billing"
    project.mkdir(parents=True)
    (project / "tools.py").write_text(CHARGE, encoding="utf-8")
    first, _, _ = check_json(project, "--profile")
    shutil.rmtree(project)
    project.mkdir()
    (project / "tools.py").write_text(CHARGE, encoding="utf-8")
    again = CliRunner().invoke(
        app, ["check", str(project), "--format", "json", "--jobs", "1", "--profile"]
    )
    assert "no input changed since a recorded run" in again.stderr
    assert json.loads(again.stdout)["findings"] == first["findings"]


def test_two_projects_keep_separate_caches(tmp_path: Path) -> None:
    one, two = tmp_path / "one" / "app", tmp_path / "two" / "app"
    assert fact_cache.default_cache_dir(one) != fact_cache.default_cache_dir(two)
    assert fact_cache.default_cache_dir(one).name.startswith("app-")


def test_clean_also_removes_the_cache_folder_a_project_kept_before(tmp_path: Path) -> None:
    project = tmp_path / "billing"
    project.mkdir()
    (project / "tools.py").write_text(CHARGE, encoding="utf-8")
    old = project / PLANTED
    scan([project], load_config([project]), facts=FactOptions(jobs=1, cache_dir=old))
    check_json(project)
    assert old.is_dir() and fact_cache.default_cache_dir(project).is_dir()
    cleaned = CliRunner().invoke(app, ["clean", str(project)])
    assert cleaned.exit_code == 0, cleaned.output
    assert not old.exists() and not fact_cache.default_cache_dir(project).exists()
