"""AG201 judged from the request: where a write is reported when a shared client makes it,
and POSTs that repeat safely (a state set on an existing resource, a link of existing
things) need no idempotency key."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles

# A project's own REST client, shared by every tool: the method and the body come from the
# caller, as in many hand-written API wrappers.
CLIENT = """
import requests


class BoardClient:
    base_url = "https://boards.example/api/1"

    def request(self, endpoint: str, method: str = "GET", data: dict | None = None) -> dict:
        response = requests.request(method, f"{self.base_url}{endpoint}", json=data, timeout=10)
        response.raise_for_status()
        return response.json()
"""

TOOLS = '''
from mcp.server.fastmcp import FastMCP

from app.client import BoardClient

mcp = FastMCP("boards")
board = BoardClient()


@mcp.tool()
def comment_on_card(card_id: str, text: str) -> dict:
    """Add a comment to a card."""
    return board.request(f"/cards/{card_id}/comments", method="POST", data={"text": text})


@mcp.tool()
def create_list(board_id: str, name: str) -> dict:
    """Create a list on a board."""
    return board.request("/lists", method="POST", data={"name": name, "idBoard": board_id})


@mcp.tool()
def add_member(card_id: str, member_id: str) -> dict:
    """Put a member on a card."""
    return board.request(f"/cards/{card_id}/idMembers", method="POST", data={"value": member_id})


@mcp.tool()
def move_issue(issue_key: str, transition_id: str) -> dict:
    """Move an issue through its workflow."""
    body = {"transition": {"id": transition_id}}
    return board.request(f"/issue/{issue_key}/transitions", method="POST", data=body)


@mcp.tool()
def archive_list_cards(list_id: str) -> dict:
    """Archive every card of a list."""
    return board.request(f"/lists/{list_id}/archiveAllCards", method="POST")


@mcp.tool()
def stop_build(job: str, number: int) -> dict:
    """Stop a running build."""
    return board.request(f"/job/{job}/{number}/stop", method="POST")


@mcp.tool()
def decline_request(request_id: int) -> dict:
    """Decline (close) a merge request."""
    return board.request(f"/requests/{request_id}/decline", method="POST")


@mcp.tool()
def reject_expense(expense_id: str) -> dict:
    """Reject an expense claim."""
    return board.request(f"/expenses/{expense_id}/reject", method="POST")


@mcp.tool()
def rename_card(card_id: str, name: str) -> dict:
    """Rename a card."""
    return board.request(f"/cards/{card_id}", method="PUT", data={"name": name})


@mcp.tool()
def get_card(card_id: str) -> dict:
    """Read a card."""
    return board.request(f"/cards/{card_id}")
'''


def _findings(scan_files: ScanFiles, files: dict[str, str], code: str) -> dict[str, int]:
    result = scan_files({path: textwrap.dedent(text) for path, text in files.items()})
    return {f.tool or "": f.location.span.line for f in result.findings if f.code == code}


def test_a_write_through_a_shared_client_is_reported_in_each_tool(scan_files: ScanFiles) -> None:
    flagged = _findings(scan_files, {"app/client.py": CLIENT, "app/tools.py": TOOLS}, "AG201")
    assert set(flagged) == {"comment_on_card", "create_list"}
    source = textwrap.dedent(TOOLS).splitlines()
    # the finding sits on the tool's own call of the shared client, not inside the client
    assert "comments" in source[flagged["comment_on_card"] - 1]
    assert '"/lists"' in source[flagged["create_list"] - 1]


def test_repeat_safe_posts_are_still_writes_needing_a_declaration(scan_files: ScanFiles) -> None:
    undeclared = _findings(scan_files, {"app/client.py": CLIENT, "app/tools.py": TOOLS}, "AG101")
    assert {
        "add_member",
        "move_issue",
        "archive_list_cards",
        "rename_card",
        "stop_build",
        "decline_request",
        "reject_expense",
    } <= set(undeclared)
    assert "get_card" not in undeclared


def test_a_sink_in_a_helper_is_reported_at_the_tools_own_call(scan_files: ScanFiles) -> None:
    files = {
        "agent.py": '''
        import requests
        from langchain_core.tools import tool


        def _send(text: str) -> dict:
            return requests.post("https://chat.example/api/messages", json={"text": text}).json()


        @tool
        def post_message(text: str) -> dict:
            """Post a message to the team channel."""
            return _send(text)
        '''
    }
    flagged = _findings(scan_files, files, "AG201")
    # in the tool, at its call of the helper (the `requests.post` line is the related cause)
    assert flagged == {"post_message": 13}


def test_linking_needs_a_body_of_references(scan_files: ScanFiles) -> None:
    """A POST to a relation collection that carries content (a new label's name and colour)
    creates something: still a missing key."""
    files = {
        "agent.py": '''
        import requests
        from langchain_core.tools import tool


        @tool
        def new_card_label(card_id: str, name: str, color: str) -> dict:
            """Create a label on a card."""
            url = f"https://boards.example/api/1/cards/{card_id}/labels"
            return requests.post(url, json={"name": name, "color": color}).json()


        @tool
        def label_card(card_id: str, label_id: str) -> dict:
            """Put an existing label on a card."""
            url = f"https://boards.example/api/1/cards/{card_id}/labels"
            return requests.post(url, json={"value": label_id}).json()
        '''
    }
    assert set(_findings(scan_files, files, "AG201")) == {"new_card_label"}


def test_a_top_level_action_word_is_a_create(scan_files: ScanFiles) -> None:
    """``POST /status`` (a status update posted to a feed) is not nested under a resource:
    it is judged as any POST."""
    files = {
        "agent.py": '''
        import requests
        from langchain_core.tools import tool


        @tool
        def post_status(text: str) -> dict:
            """Post a status update."""
            return requests.post("https://social.example/status", json={"text": text}).json()
        '''
    }
    assert set(_findings(scan_files, files, "AG201")) == {"post_status"}


# An RPC client in the style of a generic XML-RPC external API: one dispatch call names the
# remote operation in a string argument; the project's helpers pass it as a parameter.
RPC_CLIENT = """
import xmlrpc.client


class ErpConnection:
    def __init__(self, url: str) -> None:
        self.models = xmlrpc.client.ServerProxy(f"{url}/xmlrpc/2/object")

    def execute_kw(self, model: str, method: str, args: list, kwargs: dict) -> object:
        return self.models.execute_kw("db", 1, "secret", model, method, args, kwargs)

    def create(self, model: str, values: dict) -> int:
        return self.execute_kw(model, "create", [values], {})

    def write(self, model: str, ids: list, values: dict) -> bool:
        return self.execute_kw(model, "write", [ids, values], {})

    def search_read(self, model: str, domain: list) -> list:
        return self.execute_kw(model, "search_read", [domain], {})
"""

RPC_TOOLS = '''
import asyncio

from mcp.server.fastmcp import FastMCP

from erp.connection import ErpConnection

mcp = FastMCP("erp")
erp = ErpConnection("https://erp.example")


@mcp.tool()
async def create_partner(name: str) -> int:
    """Create a partner."""
    return await asyncio.to_thread(erp.create, "res.partner", {"name": name})


@mcp.tool()
def rename_partner(partner_id: int, name: str) -> bool:
    """Rename a partner."""
    return erp.write("res.partner", [partner_id], {"name": name})


@mcp.tool()
def find_partners(name: str) -> list:
    """Find partners by name."""
    return erp.search_read("res.partner", [["name", "ilike", name]])


@mcp.tool()
def post_note(partner_id: int, body: str) -> object:
    """Post a note on a partner."""
    return erp.execute_kw("res.partner", "message_post", [partner_id], {"body": body})


@mcp.tool()
def follow_partner(partner_id: int, user_ids: list) -> object:
    """Subscribe users to a partner's updates."""
    return erp.execute_kw("res.partner", "add_followers", [partner_id], {"ids": user_ids})


@mcp.tool()
def call_method(model: str, method: str, args: list) -> object:
    """Call any public model method."""
    return erp.execute_kw(model, method, args, {})
'''


def test_an_rpc_dispatch_is_judged_by_the_operation_it_names(scan_files: ScanFiles) -> None:
    files = {"erp/connection.py": RPC_CLIENT, "erp/tools.py": RPC_TOOLS}
    assert set(_findings(scan_files, files, "AG201")) == {"create_partner", "post_note"}
    undeclared = _findings(scan_files, files, "AG101")
    # a write that sets fields is still a write; a search reads
    assert "rename_partner" in undeclared
    assert "find_partners" not in undeclared
    # an operation that links existing things (``add_followers``) is judged as an RPC
    # envelope's is: a write that repeats safely, so declared but keyless is fine
    assert "follow_partner" in undeclared


def test_an_operation_the_model_chooses_is_unknown_not_read(scan_files: ScanFiles) -> None:
    files = {"erp/connection.py": RPC_CLIENT, "erp/tools.py": RPC_TOOLS}
    result = scan_files({path: textwrap.dedent(text) for path, text in files.items()})
    tool = next(t for t in result.project.tools if t.name == "call_method")
    assert [e.kind for e in tool.effects] == ["unknown"]
    assert not any(f.tool == "call_method" and f.code == "AG201" for f in result.findings)


def test_a_function_handed_to_a_thread_is_followed(scan_files: ScanFiles) -> None:
    files = {
        "agent.py": '''
        import asyncio
        from concurrent.futures import ThreadPoolExecutor

        import requests
        from langchain_core.tools import tool

        pool = ThreadPoolExecutor(2)


        def _send(channel: str, text: str) -> dict:
            url = f"https://chat.example/api/channels/{channel}/messages"
            return requests.post(url, json={"text": text}).json()


        @tool
        async def post_message(channel: str, text: str) -> dict:
            """Post a message to a channel."""
            return await asyncio.to_thread(_send, channel, text)


        @tool
        def post_later(channel: str, text: str) -> dict:
            """Post a message to a channel from a worker thread."""
            return pool.submit(_send, channel, text).result()
        '''
    }
    assert set(_findings(scan_files, files, "AG201")) == {"post_message", "post_later"}


def test_linking_things_named_in_the_body_is_a_set(scan_files: ScanFiles) -> None:
    files = {
        "agent.py": '''
        import requests
        from langchain_core.tools import tool

        API = "https://code.example/api/repos/acme/app"


        @tool
        def label_issue(number: int, labels: list[str]) -> dict:
            """Put labels on an issue."""
            return requests.post(f"{API}/issues/{number}/labels", json={"labels": labels}).json()


        @tool
        def new_label(name: str, color: str) -> dict:
            """Create a label in the repository."""
            return requests.post(f"{API}/labels", json={"name": name, "color": color}).json()
        '''
    }
    assert set(_findings(scan_files, files, "AG201")) == {"new_label"}


def test_a_post_naming_an_idempotent_write_is_no_create(scan_files: ScanFiles) -> None:
    files = {
        "agent.py": '''
        import requests
        from langchain_core.tools import tool

        VECTORS = "https://vectors.example/v1/indexes/docs/vectors"
        CHAT = "https://chat.example/api"


        @tool
        def store_vectors(vectors: list[dict]) -> dict:
            """Store embeddings by id, replacing any with the same id."""
            return requests.post(f"{VECTORS}/upsert", json={"vectors": vectors}).json()


        @tool
        def edit_message(channel: str, ts: str, text: str) -> dict:
            """Edit a message already posted."""
            body = {"channel": channel, "ts": ts, "text": text}
            return requests.post(f"{CHAT}/chat.update", json=body).json()


        @tool
        def post_message(channel: str, text: str) -> dict:
            """Post a message."""
            body = {"channel": channel, "text": text}
            return requests.post(f"{CHAT}/chat.postMessage", json=body).json()
        '''
    }
    assert set(_findings(scan_files, files, "AG201")) == {"post_message"}
