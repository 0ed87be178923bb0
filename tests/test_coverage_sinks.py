"""Honest coverage at the sinks: where a project hands tools to a model API or an agent and
no tool was traced from there, AG003 says where and why; a run that finds no tool at all
says so in its summary, as a warning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import ScanFiles, write_project

LOOP = """\
import json

from openai import OpenAI

from helpdesk.specs import load_specs

client = OpenAI()


def answer(question: str) -> str:
    reply = client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": question}],
        tools=load_specs("tools.json"),
    )
    return json.dumps(reply.choices[0].message.tool_calls)
"""

SPECS = """\
import json


def load_specs(path: str) -> list:
    with open(path) as handle:
        return json.load(handle)
"""


def test_a_model_call_handed_tools_nobody_traced_is_named_with_the_reason(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"helpdesk/loop.py": LOOP, "helpdesk/specs.py": SPECS})
    gaps = [f for f in result.findings if f.code == "AG003"]
    assert [(f.path, f.span.line) for f in gaps] == [("helpdesk/loop.py", 11)]
    assert "hands tools to a model API" in gaps[0].message
    assert "no tool was found anywhere in the project" in gaps[0].message


TRACED = """\
from openai import OpenAI

from helpdesk.tools import SPECS, run_tool


def answer(question: str) -> str:
    reply = OpenAI().chat.completions.create(model="gpt-4o", messages=[], tools=SPECS)
    return run_tool(reply)
"""

TOOLS = """\
from langchain_core.tools import tool


@tool
def close_ticket(ticket_id: str) -> str:
    \"\"\"Close a ticket.\"\"\"
    return ticket_id


SPECS = [close_ticket]


def run_tool(reply) -> str:
    return str(reply)
"""

PASSED_ON = """\
from openai import OpenAI


def complete(messages: list, tools: list) -> object:
    return OpenAI().chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
"""


def test_a_sink_fed_from_a_file_with_tools_or_by_its_callers_is_not_named(
    scan_files: ScanFiles,
) -> None:
    result = scan_files(
        {"helpdesk/agent.py": TRACED, "helpdesk/tools.py": TOOLS, "helpdesk/llm.py": PASSED_ON}
    )
    assert [f for f in result.findings if f.code == "AG003"] == []


def test_zero_tools_is_a_warning_in_the_text_summary(tmp_path: Path) -> None:
    project = tmp_path / "helpdesk"
    (project / ".git").mkdir(parents=True)
    write_project(project, {"helpdesk/loop.py": LOOP, "helpdesk/specs.py": SPECS})
    checked = subprocess.run(
        [sys.executable, "-m", "agentguard", "check", str(project), "--no-cache", "--exit-zero"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert "warning: 0 tools found in 2 files" in checked.stdout
    assert "AG003" in checked.stdout
    report = tmp_path / "report.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "agentguard",
            "report",
            str(project),
            "--format",
            "json",
            "-o",
            str(report),
        ],
        capture_output=True,
        check=True,
    )
    meta = next(q for q in json.loads(report.read_text())["questions"] if q["id"] == "meta")
    assert [(f["code"], f["path"], f["line"]) for f in meta["findings"]] == [
        ("AG003", "helpdesk/loop.py", 11)
    ]


PACKAGE_TOOLS = """\
from smolagents import CodeAgent, InferenceClientModel, WebSearchTool

agent = CodeAgent(tools=[WebSearchTool()], model=InferenceClientModel())
"""


def test_an_agent_handed_only_a_packages_tools_is_named_when_nothing_else_is_found(
    scan_files: ScanFiles,
) -> None:
    alone = scan_files({"research/agent.py": PACKAGE_TOOLS})
    assert [(f.code, f.span.line) for f in alone.findings if f.code == "AG003"] == [("AG003", 3)]
    beside = scan_files({"research/agent.py": PACKAGE_TOOLS, "helpdesk/tools.py": TOOLS})
    assert [f for f in beside.findings if f.code == "AG003"] == []
