"""Declarations are evidence: a tool that declares a create (MCP ``idempotentHint=False``
with ``destructiveHint=False``) is judged a write by AG201 and the report even where no
write is found in its code; a declared idempotent tool is not flagged on a verb's guess."""

from __future__ import annotations

import textwrap

from agentguard.report.model import NOT_CHECKED, build_report

from .conftest import ScanFiles

SERVER = """
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

from crm_sdk import Crm

mcp = FastMCP("crm")
crm = Crm()


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False))
def add_contact(name: str) -> dict:
    \"\"\"Add a contact.\"\"\"
    return crm.contacts.make(name)


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False))
def forget_contact(contact_id: str) -> dict:
    \"\"\"Forget a contact.\"\"\"
    return crm.contacts.forget(contact_id)


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True))
def tag_contact(contact_id: str, tag: str) -> dict:
    \"\"\"Tag a contact.\"\"\"
    return crm.contacts.create_tag(contact_id, tag)


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True))
def touch_contact(contact_id: str) -> dict:
    \"\"\"Mark a contact as seen.\"\"\"
    return crm.contacts.seen(contact_id)


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def show_contact(contact_id: str) -> dict:
    \"\"\"Show a contact.\"\"\"
    return crm.contacts.show(contact_id)
"""


def _scan(scan_files: ScanFiles, source: str = SERVER):  # type: ignore[no-untyped-def]
    return scan_files({"server.py": textwrap.dedent(source)})


def test_a_declared_create_with_no_write_found_is_flagged(scan_files: ScanFiles) -> None:
    result = _scan(scan_files)
    flagged = {f.tool: f for f in result.findings if f.code == "AG201"}
    assert set(flagged) == {"add_contact"}
    finding = flagged["add_contact"]
    assert finding.confidence.value == "medium"
    # reported where the tool says it: the idempotentHint=False of its annotations
    line = textwrap.dedent(SERVER).splitlines()[finding.location.span.line - 1]
    assert "idempotentHint=False" in line


def test_a_declared_idempotent_tool_beats_the_verb_table(scan_files: ScanFiles) -> None:
    """``create_tag`` reads as a create to the verb table; the tool says it is idempotent:
    no missing key, and the disagreement is AG102's."""
    result = _scan(scan_files)
    codes = {f.code for f in result.findings if f.tool == "tag_contact"}
    assert "AG201" not in codes
    assert "AG102" in codes


def test_a_declared_create_with_a_local_write_only_is_not_a_missing_key(
    scan_files: ScanFiles,
) -> None:
    source = '''
    import sqlite3

    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    mcp = FastMCP("notes")


    @mcp.tool(annotations=ToolAnnotations(destructiveHint=False, idempotentHint=False))
    def add_note(text: str) -> str:
        """Add a note."""
        with sqlite3.connect("notes.db") as conn:
            conn.execute("INSERT INTO notes(text) VALUES (?)", (text,))
        return "ok"
    '''
    assert not [f for f in _scan(scan_files, source).findings if f.code == "AG201"]


def test_the_report_never_calls_a_declared_write_read_only(scan_files: ScanFiles) -> None:
    report = build_report(_scan(scan_files))
    rows = {row.name: row for row in report.tools}
    forget = rows["forget_contact"]
    assert "read-only" not in forget.key.value
    assert forget.replay.value.startswith("unknown")
    assert rows["add_contact"].key.status == "bad"
    assert rows["touch_contact"].replay.value == "safe: declared idempotent"
    assert rows["show_contact"].key.value == "n/a (read-only)"
    q2 = next(q for q in report.questions if q.id == "Q2")
    assert q2.counts["tools_flagged"] <= q2.counts["relevant"]
    q5 = next(q for q in report.questions if q.id == "Q5")
    # checked on the tool whose write was found; the ones only declaring a write are said apart
    assert q5.summary.endswith("more declare a write not found in their code")


def test_a_question_is_not_passed_on_declarations_alone(scan_files: ScanFiles) -> None:
    source = """
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    from crm_sdk import Crm

    mcp = FastMCP("crm")
    crm = Crm()


    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
    def forget_contact(contact_id: str) -> dict:
        \"\"\"Forget a contact.\"\"\"
        return crm.contacts.forget(contact_id)
    """
    report = build_report(_scan(scan_files, source))
    assert [t.name for t in report.tools] == ["forget_contact"]
    q3 = next(q for q in report.questions if q.id == "Q3")
    # no write found in any code: the question was not checked, it did not pass
    assert q3.verdict == NOT_CHECKED
    assert "declare a write" in q3.summary


def test_the_declaration_beats_the_verb_for_every_rule_counting_writes(
    scan_files: ScanFiles,
) -> None:
    """AG801 (no replay-safety eval) asks only about non-idempotent writes: a verb guessed
    as a create in a tool declared idempotent is none, and a verb guessed as an update in a
    tool declared a create is one."""
    source = """
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    from crm_sdk import Crm

    mcp = FastMCP("crm")
    crm = Crm()


    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True))
    def tag_contact(contact_id: str, tag: str) -> dict:
        \"\"\"Tag a contact.\"\"\"
        return crm.contacts.create_tag(contact_id, tag)


    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False))
    def log_visit(contact_id: str) -> dict:
        \"\"\"Log a visit to a contact.\"\"\"
        return crm.visits.update_log(contact_id)
    """
    result = _scan(scan_files, source)
    assert not [f for f in result.findings if f.code == "AG000"]
    asked = {f.tool for f in result.findings if f.code == "AG801"}
    assert asked == {"log_visit"}


def test_a_closed_world_declaration_is_no_remote_create(scan_files: ScanFiles) -> None:
    """``openWorldHint=False``: the tool touches only its own, local world; nothing
    downstream could honour a key."""
    source = '''
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    mcp = FastMCP("scratch")
    NOTES: list[str] = []


    @mcp.tool(
        annotations=ToolAnnotations(
            destructiveHint=False, idempotentHint=False, openWorldHint=False
        )
    )
    def remember(text: str) -> int:
        """Remember a note for this session."""
        NOTES.append(text)
        return len(NOTES)


    @mcp.tool(annotations=ToolAnnotations(destructiveHint=False, idempotentHint=False))
    def remember_remotely(text: str) -> int:
        """Remember a note in the team's store."""
        return len(text)
    '''
    result = _scan(scan_files, source)
    assert {f.tool for f in result.findings if f.code == "AG201"} == {"remember_remotely"}


def test_a_registry_side_effect_flag_is_a_declaration(scan_files: ScanFiles) -> None:
    """A project's own tool registry (taught in config) that takes ``side_effect=``: the
    flag declares the tool, as MCP annotations do."""
    pyproject = """
    [tool.agentguard.frameworks.acme]
    decorators = ["acme.registry.register"]
    """
    source = '''
    import requests

    from acme.registry import register

    API = "https://tickets.example/api"


    @register(name="open_ticket", side_effect=True)
    def open_ticket(title: str) -> dict:
        """Open a ticket."""
        return requests.post(f"{API}/tickets", json={"title": title}).json()


    @register(name="ticket_count", side_effect=False)
    def ticket_count() -> dict:
        """How many tickets are open."""
        return requests.get(f"{API}/tickets/count").json()


    @register(name="close_ticket")
    def close_ticket(ticket_id: str) -> dict:
        """Close a ticket."""
        return requests.delete(f"{API}/tickets/{ticket_id}").json()
    '''
    result = scan_files(
        {"pyproject.toml": textwrap.dedent(pyproject), "tools.py": textwrap.dedent(source)}
    )
    tools = {t.name: t for t in result.project.tools}
    assert set(tools) == {"open_ticket", "ticket_count", "close_ticket"}
    assert tools["open_ticket"].declared_write is not None
    assert tools["ticket_count"].declaration is not None
    assert tools["ticket_count"].declaration.says_read_only
    undeclared = {f.tool for f in result.findings if f.code == "AG101"}
    assert undeclared == {"close_ticket"}
    # declared, but a POST with no key is still a missing key
    assert {f.tool for f in result.findings if f.code == "AG201"} == {"open_ticket"}
