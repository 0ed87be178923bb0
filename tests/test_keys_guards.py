"""Idempotency judged from the request (AG201): an overwrite that names what it writes
with a value new on every call makes a new thing each time; a precondition header and a
declared create-or-get keep a create from repeating."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles


def _ag201(scan_files: ScanFiles, source: str) -> set[str]:
    result = scan_files({"agent.py": textwrap.dedent(source)})
    return {f.tool or "" for f in result.findings if f.code == "AG201"}


def _codes(scan_files: ScanFiles, source: str) -> set[str]:
    result = scan_files({"agent.py": textwrap.dedent(source)})
    return {f.code for f in result.findings if f.code.startswith("AG2")}


def test_a_put_to_a_fresh_id_makes_a_new_document_each_call(scan_files: ScanFiles) -> None:
    source = '''
    import uuid
    from datetime import datetime, timezone

    import requests
    from langchain_core.tools import tool

    DOCS = "https://docs.example/api/docs"


    @tool
    def store_document(text: str) -> dict:
        """Store a document."""
        doc_id = str(uuid.uuid4())
        return requests.put(f"{DOCS}/{doc_id}", json={"text": text}).json()


    @tool
    def replace_document(doc_id: str, text: str) -> dict:
        """Replace a document's text."""
        body = {"text": text, "updated_at": datetime.now(timezone.utc).isoformat()}
        return requests.put(f"{DOCS}/{doc_id}", json=body).json()
    '''
    # a fresh timestamp in the body leaves an overwrite an overwrite
    assert _ag201(scan_files, source) == {"store_document"}


def test_a_save_with_a_fresh_id_field_is_a_create(scan_files: ScanFiles) -> None:
    source = '''
    import uuid

    import boto3
    from langchain_core.tools import tool

    table = boto3.resource("dynamodb").Table("notes")


    @tool
    def add_note(text: str) -> str:
        """Add a note."""
        table.put_item(Item={"note_id": str(uuid.uuid4()), "text": text})
        return "ok"


    @tool
    def set_note(note_id: str, text: str) -> str:
        """Set a note's text."""
        table.put_item(Item={"note_id": note_id, "text": text})
        return "ok"
    '''
    assert _ag201(scan_files, source) == {"add_note"}


def test_a_precondition_header_guards_a_create(scan_files: ScanFiles) -> None:
    source = '''
    import requests
    from langchain_core.tools import tool


    @tool
    def create_page(slug: str, body: str) -> dict:
        """Create a wiki page."""
        headers = {"If-None-Match": "*"}
        url = f"https://wiki.example/api/pages/{slug}"
        return requests.post(url, json={"body": body}, headers=headers).json()


    @tool
    def edit_page(slug: str, body: str, etag: str) -> dict:
        """Edit a wiki page as last read."""
        url = f"https://wiki.example/api/pages/{slug}/revisions"
        return requests.post(url, json={"body": body}, headers={"If-Match": etag}).json()


    @tool
    def comment_page(slug: str, text: str) -> dict:
        """Comment on a wiki page."""
        url = f"https://wiki.example/api/pages/{slug}/comments"
        return requests.post(url, json={"text": text}).json()
    '''
    assert _ag201(scan_files, source) == {"comment_page"}
    # a precondition is no idempotency key: no key rule judges where it comes from
    assert _codes(scan_files, source) == {"AG201"}


def test_a_declared_create_or_get_is_a_guard(scan_files: ScanFiles) -> None:
    source = '''
    import requests
    from langchain_core.tools import tool

    API = "https://boards.example/api"


    def get_or_create_label(board: str, name: str) -> dict:
        labels = requests.get(f"{API}/boards/{board}/labels").json()
        for label in labels:
            if label["name"] == name:
                return label
        return requests.post(f"{API}/labels", json={"board": board, "name": name}).json()


    @tool
    def label_for(board: str, name: str) -> dict:
        """The board's label of that name."""
        return get_or_create_label(board, name)


    @tool
    def ensure_list(board: str, name: str) -> dict:
        """A list of that name on the board, made if missing."""
        return requests.post(f"{API}/lists", json={"board": board, "name": name}).json()


    @tool
    def add_list(board: str, name: str) -> dict:
        """Add a list to the board."""
        return requests.post(f"{API}/lists", json={"board": board, "name": name}).json()
    '''
    assert _ag201(scan_files, source) == {"add_list"}


def test_a_read_modify_write_append_repeats_the_append(scan_files: ScanFiles) -> None:
    source = '''
    import requests
    from langchain_core.tools import tool

    LIST = "https://store.example/api/lists"


    @tool
    def add_item(list_id: str, item: str) -> dict:
        """Add an item to a shopping list."""
        items = requests.get(f"{LIST}/{list_id}").json()["items"]
        items.append(item)
        return requests.put(f"{LIST}/{list_id}", json={"items": items}).json()


    @tool
    def set_items(list_id: str, names: list[str]) -> dict:
        """Replace a shopping list's items."""
        items = []
        for name in names:
            items.append(name.strip())
        return requests.put(f"{LIST}/{list_id}", json={"items": items}).json()


    @tool
    def rename_list(list_id: str, title: str) -> dict:
        """Rename a shopping list."""
        doc = requests.get(f"{LIST}/{list_id}").json()
        doc["title"] = title
        return requests.put(f"{LIST}/{list_id}", json=doc).json()
    '''
    assert _ag201(scan_files, source) == {"add_item"}


CHECK_FIRST = '''
import requests
from langchain_core.tools import tool

from app.boards import BoardClient

boards = BoardClient()


@tool
def add_label(board: str, name: str) -> dict:
    """Add a label to a board."""
    existing = boards.find_label(board, name)
    if existing:
        return existing
    return boards.create_label(board, name)


@tool
def add_list(board: str, name: str) -> dict:
    """Add a list to a board, unless one has that name."""
    for board_list in boards.list_lists(board):
        if board_list["name"] == name:
            return board_list
    return boards.create_list(board, name)


@tool
def add_tag(board: str, name: str) -> dict:
    """Add a tag to a board."""
    if not boards.tag_exists(board, name):
        return boards.create_tag(board, name)
    return {"exists": True}


@tool
def add_card(board: str, name: str, dry_run: bool = False) -> dict:
    """Add a card to a board."""
    if dry_run:
        return {"would_create": name}
    if not name.strip():
        raise ValueError("name is required")
    return boards.create_card(board, name)


@tool
def add_note(board: str, text: str) -> dict:
    """Add a note to a board."""
    recent = boards.list_notes(board)
    if len(recent) > 100:
        return {"error": "too many notes"}
    return boards.create_note(board, text)
'''

BOARD_CLIENT = """
import requests

API = "https://boards.example/api"


class BoardClient:
    def find_label(self, board: str, name: str) -> dict | None:
        return requests.get(f"{API}/boards/{board}/labels", params={"name": name}).json()

    def list_lists(self, board: str) -> list:
        return requests.get(f"{API}/boards/{board}/lists").json()

    def tag_exists(self, board: str, name: str) -> bool:
        return requests.get(f"{API}/boards/{board}/tags/{name}").ok

    def list_notes(self, board: str) -> list:
        return requests.get(f"{API}/boards/{board}/notes").json()

    def _post(self, path: str, body: dict) -> dict:
        return requests.post(f"{API}{path}", json=body).json()

    def create_label(self, board: str, name: str) -> dict:
        return self._post("/labels", {"board": board, "name": name})

    def create_list(self, board: str, name: str) -> dict:
        return self._post("/lists", {"board": board, "name": name})

    def create_tag(self, board: str, name: str) -> dict:
        return self._post("/tags", {"board": board, "name": name})

    def create_card(self, board: str, name: str) -> dict:
        return self._post("/cards", {"board": board, "name": name})

    def create_note(self, board: str, text: str) -> dict:
        return self._post("/notes", {"board": board, "text": text})
"""


def test_a_check_then_create_on_a_natural_key_is_a_guard(scan_files: ScanFiles) -> None:
    result = scan_files(
        {
            "app/boards.py": textwrap.dedent(BOARD_CLIENT),
            "app/tools.py": textwrap.dedent(CHECK_FIRST),
        }
    )
    flagged = {f.tool for f in result.findings if f.code == "AG201"}
    # a dry-run flag, input validation or a count of other things is no lookup of the key
    assert flagged == {"add_card", "add_note"}
    assert "AG202" not in {f.code for f in result.findings}


def test_a_check_on_what_a_parser_computed_from_the_arguments_is_no_guard(
    scan_files: ScanFiles,
) -> None:
    """``recipients = parse_recipients(to)`` then ``if bad: return``: the check looks at what
    was computed from the arguments, not at anything an earlier run sent, so a retry sends
    the message again (AG201); a lookup in the outbox is a guard."""
    source = '''
    import httpx
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("mail")
    API = "https://mail.example/api"


    def parse_recipients(to: str) -> list[str]:
        return [part.strip() for part in to.split(",") if part.strip()]


    def find_sent(to: str, subject: str) -> list:
        return httpx.get(f"{API}/outbox", params={"to": to, "subject": subject}).json()


    @mcp.tool()
    def send_mail(to: str) -> str:
        """Send a greeting."""
        recipients = parse_recipients(to)
        if len(recipients) > 10:
            return "too many recipients"
        return httpx.post(f"{API}/messages", json={"to": recipients}).text


    @mcp.tool()
    def send_once(to: str, subject: str) -> str:
        """Send a message unless it was sent."""
        sent = find_sent(to, subject)
        if sent:
            return "already sent"
        return httpx.post(f"{API}/messages", json={"to": to, "subject": subject}).text
    '''
    assert _ag201(scan_files, source) == {"send_mail"}
