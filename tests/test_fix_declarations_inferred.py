"""A fix never changes a declaration the author wrote on the strength of inferred effects, and a
fix that adds one is safe only when every effect it rests on is known for certain; it says what
it inferred, from which calls."""

from __future__ import annotations

import textwrap
from pathlib import Path

from typer.testing import CliRunner

from agentguard.cli import app

from .conftest import write_project

# A read tool declared read-only whose helper's POST agentguard takes for a write (the URL
# says "remove"): the declaration is the author's word, the write only agentguard's reading.
DECLARED_READ = textwrap.dedent(
    '''
    import requests
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    mcp = FastMCP("tracker")


    class Tracker:
        def watchers(self, key: str) -> dict:
            return requests.post(
                f"https://tracker.example/issue/{key}/watchers/remove", json={"dry_run": True}
            ).json()


    TRACKER = Tracker()


    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def issue_watchers(key: str) -> dict:
        """Which users watch the issue."""
        return TRACKER.watchers(key)


    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))
    def reopen_issue(key: str) -> dict:
        """Reopen an issue."""
        return requests.post(f"https://tracker.example/issue/{key}/comments", json={}).json()
    '''
)

# A contact added through a vendor's client no catalogue entry knows, a write only a verb's
# guess finds; and an order placed through a catalogued HTTP client, known for certain.
UNDECLARED = textwrap.dedent(
    '''
    import requests
    from crm_vendor import CrmClient
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("shop")


    @mcp.tool()
    def add_contact(email: str) -> str:
        """Add a contact to the CRM."""
        crm = CrmClient(token="t")
        crm.add_contact(email=email)
        return "ok"


    @mcp.tool()
    def create_order(cart_id: str) -> dict:
        """Create an order."""
        return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
    '''
)


def _project(tmp_path: Path, source: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    write_project(project, {"server.py": source})
    return project


def test_unsafe_fixes_never_rewrite_an_existing_declaration(tmp_path: Path) -> None:
    project = _project(tmp_path, DECLARED_READ)
    checked = CliRunner().invoke(app, ["check", str(project), "--select", "AG102"])
    assert "AG102" in checked.stdout  # the disagreement is still reported
    CliRunner().invoke(app, ["fix", str(project), "--write", "--unsafe-fixes"])
    text = (project / "server.py").read_text(encoding="utf-8")
    assert "ToolAnnotations(readOnlyHint=True)" in text
    assert "ToolAnnotations(readOnlyHint=False, idempotentHint=True)" in text
    assert text == DECLARED_READ


def test_declaration_from_a_guess_is_an_unsafe_fix_that_says_what_it_inferred(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, UNDECLARED)
    safe = CliRunner().invoke(app, ["fix", str(project), "--select", "AG101"])
    # only the tool known for certain gets its annotations from the safe fixes
    assert safe.stdout.count("annotations=ToolAnnotations(") == 1
    assert "def create_order" in safe.stdout.split("annotations=ToolAnnotations(")[1]
    unsafe = CliRunner().invoke(app, ["fix", str(project), "--select", "AG101", "--unsafe-fixes"])
    offered = unsafe.stdout + unsafe.stderr
    assert "inferred from a remote write (`crm.add_contact`, a guess at medium confidence)" in (
        offered
    )
    assert "short of certain evidence" in offered


def test_safe_declaration_fix_names_its_evidence(tmp_path: Path) -> None:
    project = _project(tmp_path, UNDECLARED)
    result = CliRunner().invoke(
        app, ["check", str(project), "--select", "AG101", "--show-fixes", "--fix"]
    )
    assert result.exit_code in {0, 1}
    text = (project / "server.py").read_text(encoding="utf-8")
    assert text.count("ToolAnnotations(") == 1
    create = text.split("def create_order")[0].rsplit("@mcp.tool(", 1)[1]
    assert "idempotentHint=False" in create


def test_guarded_fix_says_what_it_inferred(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        textwrap.dedent(
            '''
            import requests
            from langchain_core.tools import tool


            @tool
            def create_order(cart_id: str) -> dict:
                """Create an order."""
                return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
            '''
        ),
    )
    result = CliRunner().invoke(app, ["fix", str(project), "--select", "AG101", "--unsafe-fixes"])
    assert (
        "replay='never') (inferred from a remote write (`POST requests.post`))"
        in result.stdout + result.stderr
    )
