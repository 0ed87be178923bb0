"""Honest coverage: a file that uses a framework's tool API where no tool was found is
named (AG003, ``--profile``, the report's meta section), never left as a silent zero."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import ScanFiles, write_project

UNREAD = """\
from langchain_core.tools import StructuredTool

import crm_api

TOOLS = [
    StructuredTool.from_function(func=getattr(crm_api, name), name=name, description=name)
    for name in ("create_lead", "delete_lead")
]
"""

UNDERSTOOD = """\
from langchain_core.tools import tool


@tool
def find_lead(email: str) -> str:
    \"\"\"Find a lead by e-mail.\"\"\"
    return email
"""

AGENT = """\
from langchain.agents import create_agent

from crm.tools import find_lead

agent = create_agent("openai:gpt-4o", tools=[find_lead])
"""


def test_only_the_file_whose_registration_is_not_understood_is_named(
    scan_files: ScanFiles,
) -> None:
    result = scan_files(
        {"crm/dynamic.py": UNREAD, "crm/tools.py": UNDERSTOOD, "crm/agent.py": AGENT}
    )
    gaps = [(f.path, f.span.line, f.severity.value) for f in result.findings if f.code == "AG003"]
    assert gaps == [("crm/dynamic.py", 6, "info")]
    (finding,) = [f for f in result.findings if f.code == "AG003"]
    assert "uses langchain; no tool found" in finding.message
    assert "StructuredTool.from_function" in finding.message


def test_profile_and_report_show_the_gap(tmp_path: Path) -> None:
    project = tmp_path / "crm"
    (project / ".git").mkdir(parents=True)
    write_project(project, {"crm/dynamic.py": UNREAD, "crm/tools.py": UNDERSTOOD})
    command = [sys.executable, "-m", "agentguard"]
    checked = subprocess.run(
        [*command, "check", str(project), "--no-cache", "--exit-zero", "--profile"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert "coverage: 1 tools found; 1 files use a tool API with no tool found" in checked.stderr
    assert "crm/dynamic.py:6 uses langchain" in checked.stderr
    report = tmp_path / "report.json"
    subprocess.run(
        [*command, "report", str(project), "--format", "json", "-o", str(report)],
        capture_output=True,
        check=True,
    )
    meta = next(q for q in json.loads(report.read_text())["questions"] if q["id"] == "meta")
    assert [(f["code"], f["path"], f["line"]) for f in meta["findings"]] == [
        ("AG003", "crm/dynamic.py", 6)
    ]
