"""Columns count characters in every human and machine output, as editors do."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentguard.cli import app

from .conftest import write_project

SOURCE = (
    "import requests\n"
    "from langchain_core.tools import tool\n\n"
    "@tool\n"
    "def create_order(cart_id: str) -> dict:\n"
    '    """Place an order."""\n'
    '    note = "café"; return requests.post("https://shop.example/o", json={"c": cart_id}).json()\n'
)


def test_non_ascii_before_the_finding_does_not_shift_its_column(tmp_path: Path) -> None:
    write_project(tmp_path, {"agent.py": SOURCE})
    expected = SOURCE.splitlines()[6].index("requests.post") + 1
    runner = CliRunner()
    text = runner.invoke(app, ["check", str(tmp_path), "--select", "AG201"]).output
    assert f"agent.py:7:{expected}:" in text
    caret_line = next(line for line in text.splitlines() if "^" in line)
    source_line = next(line for line in text.splitlines() if "café" in line)
    assert caret_line.index("^") == source_line.index("requests.post")
    document = json.loads(
        runner.invoke(app, ["check", str(tmp_path), "--select", "AG201", "-f", "json"]).output
    )
    assert document["findings"][0]["column"] == expected
