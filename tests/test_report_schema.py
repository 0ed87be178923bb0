"""`agentguard report --format json` matches its published schema, agentguard/data/report.schema.json."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.report.model import VERDICTS

from .conftest import FIXTURES, ROOT

PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
REPORT_SCHEMA = ROOT / "agentguard" / "data" / "report.schema.json"

AGENT = """\
import requests
from langchain_core.tools import tool


@tool
def create_order(cart_id: str) -> dict:
    \"\"\"Place an order.\"\"\"
    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
"""


def report_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def report_json(project: Path, *options: str) -> dict:
    run = CliRunner().invoke(app, ["report", str(project), "--format", "json", *options])
    assert run.exit_code == 0, run.output
    data: dict = json.loads(run.stdout)
    return data


def errors(data: dict) -> list[str]:
    return [e.message for e in report_validator().iter_errors(data)]


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_every_fixtures_report_matches_the_schema(project: Path) -> None:
    assert errors(report_json(project)) == []


def test_schema_lists_the_verdicts_the_report_gives() -> None:
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    assert schema["$defs"]["question"]["properties"]["verdict"]["enum"] == list(VERDICTS)


def test_files_not_analysed_and_link_base_match_the_schema(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "agent.py").write_text(AGENT, encoding="utf-8")
    (project / "broken.py").write_text("def broken(:\n", encoding="utf-8")
    (project / "blob.py").write_bytes(b"\0\xff")
    data = report_json(project, "--link-base", "https://example.org/blob/abc")
    assert data["problems"] and data["link_base"] == "https://example.org/blob/abc"
    assert errors(data) == []


def test_schema_rejects_drift() -> None:
    data = report_json(FIXTURES / "shop-agent")
    data["questions"][0]["verdict"] = "maybe"
    del data["tools"][0]["worst"]
    data["tools"][0]["key"]["status"] = "great"
    data["tools"][0]["findings"][0]["line"] = 0
    data["surprise"] = True
    messages = errors(data)
    assert any("'maybe'" in m for m in messages)
    assert any("'worst'" in m for m in messages)
    assert any("'great'" in m for m in messages)
    assert any("surprise" in m for m in messages)
    assert len(messages) == 5, messages
