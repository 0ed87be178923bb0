"""Findings about a tool are located in the tool: a write in a client shared by several
tools gives each tool its AG201 finding at the tool's own call into the client, with the
sink as related location; each can be suppressed and baselined on its own."""

from __future__ import annotations

from agentguard.engine.baseline import Baseline, compare
from agentguard.engine.scan_result import ScanResult
from tests.conftest import ScanFiles, line_of, sqlite_mcp_server

CLIENT = """\
import requests


class Helpdesk:
    base = "https://help.example/api"

    def _post(self, path: str, body: dict) -> dict:
        return requests.post(f"{self.base}{path}", json=body, timeout=10).json()

    def open_ticket(self, subject: str) -> dict:
        return self._post("/tickets", {"subject": subject})

    def add_comment(self, ticket_id: str, text: str) -> dict:
        return self._post(f"/tickets/{ticket_id}/comments", {"body": text})
"""

TOOLS = """\
from langchain_core.tools import tool

from desk.client import Helpdesk

desk = Helpdesk()


@tool
def open_ticket(subject: str) -> dict:
    \"\"\"Open a support ticket.\"\"\"
    return desk.open_ticket(subject)


@tool
def comment_ticket(ticket_id: str, text: str) -> dict:
    \"\"\"Comment on a ticket.\"\"\"
    reply = desk.add_comment(ticket_id, text)
    return {"comment": reply}
"""


def _scan(scan_files: ScanFiles, tools: str = TOOLS) -> ScanResult:
    return scan_files(
        {"desk/__init__.py": "", "desk/client.py": CLIENT, "desk/tools.py": tools},
        select=("AG201",),
    )


def test_a_shared_sink_is_reported_in_each_tool(scan_files: ScanFiles) -> None:
    result = _scan(scan_files)
    sink = ("desk/client.py", line_of(CLIENT, "requests.post("))
    found = sorted(
        (f.tool, f.path, f.span.line, [(r.path, r.span.line) for r in f.related])
        for f in result.findings
    )
    assert found == [
        ("comment_ticket", "desk/tools.py", line_of(TOOLS, "desk.add_comment("), [sink]),
        ("open_ticket", "desk/tools.py", line_of(TOOLS, "desk.open_ticket("), [sink]),
    ]
    # the evidence still walks tool -> helper -> sink
    comment = next(f for f in result.findings if f.tool == "comment_ticket")
    assert comment.evidence[-1].location is not None
    assert comment.evidence[-1].location.path == "desk/client.py"


def test_each_tool_suppresses_its_own_finding(scan_files: ScanFiles) -> None:
    quiet = TOOLS.replace(
        "    return desk.open_ticket(subject)\n",
        "    return desk.open_ticket(subject)  # agentguard: ignore[AG201] deduped upstream\n",
    )
    result = _scan(scan_files, quiet)
    assert [f.tool for f in result.findings] == ["comment_ticket"]
    assert [f.tool for f in result.suppressed] == ["open_ticket"]


def test_a_baseline_accepts_each_placed_finding_once(scan_files: ScanFiles) -> None:
    first = _scan(scan_files)
    baseline = Baseline.from_findings(first.findings)
    again = compare(_scan(scan_files).findings, baseline)
    assert (again.new, again.matched, again.stale) == ([], 2, [])
    # a third tool on the same sink is new, the two accepted ones stay accepted
    more = TOOLS + (
        "\n\n@tool\n"
        "def reopen_ticket(ticket_id: str) -> dict:\n"
        '    """Reopen a ticket."""\n'
        '    return desk.add_comment(ticket_id, "reopened")\n'
    )
    later = compare(_scan(scan_files, more).findings, baseline)
    assert [f.tool for f in later.new] == ["reopen_ticket"]
    assert later.matched == 2


BRANCH_SERVER = sqlite_mcp_server(
    "pantry",
    {"add_item": "Add an item", "remove_item": "Remove an item"},
    """
    if name == "add_item":
        _run("INSERT INTO items (name) VALUES (?)", arguments["name"])
        return [TextContent(type="text", text="added")]
    if name == "remove_item":
        _run("DELETE FROM items WHERE name = ?", arguments["name"])
        return [TextContent(type="text", text="removed")]
    raise ValueError(name)
    """,
)


def test_a_helper_every_branch_shares_is_reported_in_each_branch(scan_files: ScanFiles) -> None:
    result = scan_files({"server.py": BRANCH_SERVER}, select=("AG301",))
    sink = line_of(BRANCH_SERVER, "conn.execute(")
    found = sorted(
        (f.tool, f.span.line, [r.span.line for r in f.related], [s.kind.value for s in f.evidence])
        for f in result.findings
    )
    assert found == [
        ("add_item", line_of(BRANCH_SERVER, '_run("INSERT'), [sink], ["tool", "call", "sink"]),
        ("remove_item", line_of(BRANCH_SERVER, '_run("DELETE'), [sink], ["tool", "call", "sink"]),
    ]


RUNNER_TOOLS = """\
import asyncio

import requests
from langchain_core.tools import tool


def _send_refund(order_id: str) -> str:
    try:
        return requests.post(f"https://pay.example/refunds/{order_id}", timeout=10).text
    except requests.RequestException as exc:
        return f"refund failed: {exc}"


@tool
async def refund_order(order_id: str) -> str:
    \"\"\"Refund an order.\"\"\"
    note = f"refunding {order_id}"
    print(note)
    return await asyncio.to_thread(_send_refund, order_id)
"""


def test_a_cause_reached_through_a_runner_is_placed_at_the_runner_call(
    scan_files: ScanFiles,
) -> None:
    # ``asyncio.to_thread(helper, ...)`` runs the helper: the finding goes on that call in
    # the tool, not on the tool's definition.
    result = scan_files({"pay/__init__.py": "", "pay/tools.py": RUNNER_TOOLS}, select=("AG601",))
    found = [(f.tool, f.span.line, [r.span.line for r in f.related]) for f in result.findings]
    assert found == [
        (
            "refund_order",
            line_of(RUNNER_TOOLS, "asyncio.to_thread("),
            [line_of(RUNNER_TOOLS, "refund failed")],
        )
    ]
