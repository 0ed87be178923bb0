"""Baselines: moved code keeps its entry, a second identical finding is new, stale is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.engine.baseline import Baseline, BaselineError, compare

from .conftest import ScanFiles, write_project

HEADER = """\
import requests
from langchain_core.tools import tool

"""

CREATE_ORDER = """
@tool
def create_order(cart_id: str) -> dict:
    \"\"\"Place an order for the cart.\"\"\"
    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
"""

LOOKUP = """
@tool
def order_status(order_id: str) -> dict:
    \"\"\"Look up an order.\"\"\"
    return requests.get(f"https://shop.example/orders/{order_id}").json()
"""


def test_a_moved_block_keeps_its_baseline_entry(scan_files: ScanFiles) -> None:
    before = scan_files({"agent.py": HEADER + CREATE_ORDER + LOOKUP})
    assert before.findings
    accepted = Baseline.from_findings(before.findings)
    # The tool moves below another function and down the file: every line number changes.
    after = scan_files({"agent.py": HEADER + LOOKUP + "\n\n" + CREATE_ORDER})
    assert {f.span.line for f in after.findings}.isdisjoint(f.span.line for f in before.findings)
    outcome = compare(after.findings, accepted)
    assert outcome.new == []
    assert outcome.matched == len(before.findings)
    assert outcome.stale == []


def test_a_duplicated_finding_is_reported_as_new(scan_files: ScanFiles) -> None:
    one = HEADER + CREATE_ORDER
    before = scan_files({"agent.py": one})
    accepted = Baseline.from_findings(before.findings)
    # The same write pasted twice inside the same tool: same code, file, symbol and text.
    body = (
        '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
    )
    twice = one.replace(body, body.replace("return ", "first = ") + body)
    after = scan_files({"agent.py": twice})
    ag201 = [f for f in after.findings if f.code == "AG201"]
    assert len(ag201) == 2
    outcome = compare(after.findings, accepted)
    assert [f.code for f in outcome.new] == ["AG201"]
    # The earlier copy keeps the entry; the later one is new.
    assert outcome.new[0].span.line == max(f.span.line for f in ag201)


def test_a_fixed_finding_leaves_a_stale_entry(scan_files: ScanFiles) -> None:
    before = scan_files({"agent.py": HEADER + CREATE_ORDER})
    accepted = Baseline.from_findings(before.findings)
    after = scan_files({"agent.py": HEADER + LOOKUP})
    outcome = compare(after.findings, accepted)
    assert outcome.new == []
    assert sorted(e.key.code for e in outcome.stale) == sorted(f.code for f in before.findings)
    assert all("create_order" in e.describe() for e in outcome.stale)


def test_baseline_round_trips_through_its_file(scan_files: ScanFiles, tmp_path: Path) -> None:
    result = scan_files({"agent.py": HEADER + CREATE_ORDER})
    path = tmp_path / "baseline.json"
    Baseline.from_findings(result.findings).write(path)
    loaded = Baseline.load(path)
    assert loaded.counts == Baseline.from_findings(result.findings).counts
    data = json.loads(path.read_text())
    assert all(e["count"] == 1 and e["symbol"] for e in data["entries"])
    assert not any("line" in e for e in data["entries"])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": 9, "entries": []}', "not an agentguard baseline"),
        ('{"version": 1, "entries": [{"code": "AG201"}]}', "entry 1 needs"),
        ('{"version": 1, "entries": {}}', "must be a list"),
    ],
)
def test_a_broken_baseline_names_the_file_and_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text)
    with pytest.raises(BaselineError, match=problem) as caught:
        Baseline.load(path)
    assert str(path) in str(caught.value)


def test_cli_create_check_update_cycle(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write_project(project, {"agent.py": HEADER + CREATE_ORDER})
    baseline = tmp_path / "agentguard-baseline.json"
    runner = CliRunner()

    created = runner.invoke(app, ["baseline", "create", str(baseline), str(project)])
    assert created.exit_code == 0, created.output
    again = runner.invoke(app, ["baseline", "create", str(baseline), str(project)])
    assert again.exit_code == 2 and "already exists" in again.output

    clean = runner.invoke(app, ["check", str(project), "--baseline", str(baseline)])
    assert clean.exit_code == 0, clean.output

    # A second write tool appears: only it is reported.
    second = CREATE_ORDER.replace("create_order", "refund_order").replace("/orders", "/refunds")
    write_project(project, {"agent.py": HEADER + CREATE_ORDER + second})
    new = runner.invoke(
        app, ["check", str(project), "--baseline", str(baseline), "--format", "json"]
    )
    assert new.exit_code == 1
    data = json.loads(new.stdout)
    assert {f["tool"] for f in data["findings"]} == {"refund_order"}
    assert data["summary"]["baseline"]["matched"] >= 1

    # The old tool is fixed away: its entries go stale, on stderr and in the JSON summary.
    write_project(project, {"agent.py": HEADER + second})
    stale = runner.invoke(
        app, ["check", str(project), "--baseline", str(baseline), "--format", "json"]
    )
    summary = json.loads(stale.stdout)["summary"]["baseline"]
    assert summary["stale"] and {e["symbol"] for e in summary["stale"]} == {"agent.create_order"}
    assert "stale baseline entry" in stale.stderr

    updated = runner.invoke(app, ["baseline", "update", str(baseline), str(project)])
    assert updated.exit_code == 0 and "dropped" in updated.output
    after = runner.invoke(app, ["check", str(project), "--baseline", str(baseline)])
    assert after.exit_code == 0
    assert "stale" not in after.stderr


def test_check_with_a_missing_baseline_is_a_usage_error(tmp_path: Path) -> None:
    run = CliRunner().invoke(
        app, ["check", str(tmp_path), "--baseline", str(tmp_path / "nope.json")]
    )
    assert run.exit_code == 2
    assert "baseline file not found" in run.output


def test_stale_entries_reach_sarif_and_annotations(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write_project(project, {"agent.py": HEADER + CREATE_ORDER})
    baseline = tmp_path / "baseline.json"
    runner = CliRunner()
    assert runner.invoke(app, ["baseline", "create", str(baseline), str(project)]).exit_code == 0
    write_project(project, {"agent.py": HEADER + LOOKUP})
    sarif = tmp_path / "out.sarif"
    run = runner.invoke(
        app,
        [
            "check",
            str(project),
            "--baseline",
            str(baseline),
            "--format",
            "github",
            "-o",
            f"sarif:{sarif}",
        ],
    )
    assert run.exit_code == 0
    assert "::notice::stale baseline entry: AG201" in run.stdout
    notes = json.loads(sarif.read_text())["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any(n["descriptor"]["id"] == "stale-baseline-entry" for n in notes)


def test_a_narrower_selection_leaves_other_entries_unjudged(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write_project(project, {"agent.py": HEADER + CREATE_ORDER})
    baseline = tmp_path / "baseline.json"
    runner = CliRunner()
    assert runner.invoke(app, ["baseline", "create", str(baseline), str(project)]).exit_code == 0
    entries = json.loads(baseline.read_text())["entries"]
    assert {e["code"] for e in entries} - {"AG201"}  # entries of other rules exist
    run = runner.invoke(
        app,
        ["check", str(project), "--baseline", str(baseline), "--select", "AG2", "-f", "json"],
    )
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)["summary"]["baseline"]
    assert summary["stale"] == [] and summary["new"] == 0
    assert "stale baseline entry" not in run.stderr


def test_the_baseline_key_is_the_flagged_text_not_only_the_rule(scan_files: ScanFiles) -> None:
    # A baselined AG201 on requests.post must not hide a new one on httpx.post in the same
    # tool: the entry is keyed by the flagged call, not just by rule, file and function.
    one_write = (
        "import httpx\nimport requests\nfrom langchain_core.tools import tool\n\n"
        "@tool\n"
        "def create_order(cart_id: str) -> dict:\n"
        '    """Create an order."""\n'
        '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
    )
    before = scan_files({"agent.py": one_write}, select=("AG201",))
    accepted = Baseline.from_findings(before.findings)
    two_writes = one_write.replace(
        "    return requests",
        '    httpx.post("https://audit.example/log", json={"cart": cart_id})\n    return requests',
    )
    after = scan_files({"agent.py": two_writes}, select=("AG201",))
    outcome = compare(after.findings, accepted)
    assert [f.code for f in outcome.new] == ["AG201"]
    assert "httpx.post" in outcome.new[0].message
    assert outcome.matched == 1 and outcome.stale == []
