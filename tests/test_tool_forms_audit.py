"""Tool forms seen in real agent code: an AutoGen AssistantAgent subclass that hands its
own methods to ``super().__init__(tools=...)``, and agency-swarm BaseTool classes."""

from __future__ import annotations

from tests.conftest import ScanFiles

AUTOGEN_SUBCLASS = """\
from autogen_agentchat.agents import AssistantAgent

from app.mail import MailClient


class MailAgent(AssistantAgent):
    def __init__(self, model_client) -> None:
        self.mail = MailClient()
        super().__init__(name="mail", model_client=model_client, tools=[self.send_note])

    def send_note(self, to: str, text: str) -> str:
        try:
            return self.mail.send_message(to=to, text=text)
        except Exception as e:
            return f"Error: {e}"

    def helper(self) -> str:
        return "not a tool"
"""


def test_methods_an_agent_subclass_lists_are_tools(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AUTOGEN_SUBCLASS}, select=("AG601",))
    assert [(f.tool, f.location.span.line) for f in result.findings] == [("send_note", 15)]


AGENCY_SWARM = """\
import requests
from agency_swarm.tools import BaseTool
from pydantic import Field


class CreateLead(BaseTool):
    \"\"\"Create a lead in the CRM.\"\"\"

    name: str = Field(..., description="Lead name")

    def run(self) -> str:
        response = requests.post("https://crm.example/leads", json={"name": self.name})
        return response.text
"""


def test_agency_swarm_tools(scan_files: ScanFiles) -> None:
    result = scan_files({"tools/create_lead.py": AGENCY_SWARM}, select=("AG101", "AG201"))
    assert sorted((f.code, f.tool) for f in result.findings) == [
        ("AG101", "CreateLead"),
        ("AG201", "CreateLead"),
    ]


PLUGIN = """\
import requests

MANIFEST = {
    "name": "weather_now",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def run(parameters: dict) -> str:
    try:
        data = requests.get("https://wx.example/now", params=parameters, timeout=5).json()
        return f"{data['temp']} degrees"
    except Exception as e:
        return f"Weather failed: {e}"
"""


def test_a_plugin_module_with_a_manifest_and_a_run_function(scan_files: ScanFiles) -> None:
    result = scan_files({"plugins/weather_now.py": PLUGIN}, select=("AG601",))
    assert [(f.tool, f.location.span.line) for f in result.findings] == [("weather_now", 15)]


STRANDS = """\
import requests
from strands import Agent, tool


@tool
def file_ticket(title: str) -> str:
    \"\"\"File a support ticket.\"\"\"
    try:
        return requests.post("https://desk.example/tickets", json={"title": title}, timeout=5).text
    except Exception as e:
        return f"Error: {e}"


agent = Agent(tools=[file_ticket])
"""


def test_strands_tools(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": STRANDS}, select=("AG101", "AG601"))
    assert sorted((f.code, f.tool) for f in result.findings) == [
        ("AG101", "file_ticket"),
        ("AG601", "file_ticket"),
    ]


SCANNER = """\
import requests
from crewai.tools import BaseTool


class ThreatScanner(BaseTool):
    name: str = "Threat Scanner"
    description: str = "Inspect a web page for phishing and return a verdict."

    def _run(self, url: str) -> str:
        try:
            return requests.post("https://scan.example/v1/pages", json={"url": url}, timeout=5).text
        except requests.Timeout:
            return "Error: the scan timed out"
"""


def test_every_rule_reads_a_tool_described_as_reading_alike(scan_files: ScanFiles) -> None:
    # the URL says nothing, the description reads: no rule treats the POST as a write
    result = scan_files({"scanner.py": SCANNER})
    assert [f.code for f in result.findings if f.code in {"AG101", "AG201", "AG401"}] == []


CUSTOM_TOOLS = """\
import subprocess

from .base import Tool, ToolResult


class ShellTool(Tool):
    name = "shell"
    description = "Run a shell command."

    def execute(self, command: str) -> ToolResult:
        try:
            out = subprocess.run(command, shell=True, capture_output=True, text=True)
            return ToolResult(output=out.stdout)
        except Exception as e:
            return ToolResult(error=str(e))


class Tool2(Tool):
    def execute(self, command: str) -> str:
        return subprocess.run(command, shell=True).stdout
"""


def test_an_agents_own_tool_classes(scan_files: ScanFiles) -> None:
    result = scan_files({"agent/tools/shell.py": CUSTOM_TOOLS}, select=("AG101", "AG601"))
    # the class with a name and a description for the model is a tool; the bare one is not
    assert sorted((f.code, f.tool) for f in result.findings) == [
        ("AG101", "shell"),
        ("AG601", "shell"),
    ]


def test_a_plugin_entry_name_from_config_finds_the_tool(scan_files: ScanFiles) -> None:
    """``frameworks.<name>.plugin_entries`` in config: the user's entry-function name makes a
    manifest module's function the tool, like the built-in ``run``. (A module whose only
    public function sits beside its spec needs no name: here a second one makes it
    ambiguous.)"""
    plugin = PLUGIN.replace("def run(", "def main(") + (
        '\n\ndef units() -> str:\n    return "celsius"\n'
    )
    assert scan_files({"plugins/weather_now.py": plugin}, select=("AG601",)).findings == []
    config = '[tool.agentguard.frameworks.custom]\nplugin_entries = ["main"]\n'
    result = scan_files(
        {"pyproject.toml": config, "plugins/weather_now.py": plugin}, select=("AG601",)
    )
    assert [(f.tool, f.location.span.line) for f in result.findings] == [("weather_now", 15)]
