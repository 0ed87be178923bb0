"""API-wrapping tools: an HTTP helper whose method is its parameter
(``_request("POST", url)``), reached through a client a factory returns."""

from __future__ import annotations

from tests.conftest import ScanFiles, tool_verdicts

SERVER = """\
import os

import httpx
from fastmcp import FastMCP

API = "https://chat.example/api/v1"


class _ChatClient:
    def __init__(self, token: str) -> None:
        self._token = token

    def _request(self, method: str, url: str, **kwargs) -> dict:
        response = httpx.request(method, url, headers={"Authorization": self._token}, **kwargs)
        return response.json()

    def list_rooms(self) -> dict:
        return self._request("GET", f"{API}/rooms")

    def post_message(self, room: str, text: str) -> dict:
        return self._request("POST", f"{API}/rooms/{room}/messages", json={"text": text})

    def rename_room(self, room: str, name: str) -> dict:
        return self._request("PUT", f"{API}/rooms/{room}", json={"name": name})

    def search(self, text: str) -> dict:
        return self._request("POST", f"{API}/search", json={"q": text})


def register_tools(mcp: FastMCP) -> None:
    def _client() -> _ChatClient:
        return _ChatClient(os.environ["CHAT_TOKEN"])

    @mcp.tool()
    def list_rooms() -> dict:
        client = _client()
        return client.list_rooms()

    @mcp.tool()
    def post_message(room: str, text: str) -> dict:
        client = _client()
        try:
            return client.post_message(room, text)
        except httpx.TimeoutException:
            return {"error": "Request timed out"}

    @mcp.tool()
    def rename_room(room: str, name: str) -> dict:
        client = _client()
        return client.rename_room(room, name)

    @mcp.tool()
    def find_messages(text: str) -> dict:
        client = _client()
        return client.search(text)
"""


def test_the_callers_method_decides_what_the_helper_does(scan_files: ScanFiles) -> None:
    result = scan_files({"server.py": SERVER})
    by_tool: dict[str, set[str]] = {}
    for finding in result.findings:
        by_tool.setdefault(finding.tool or "-", set()).add(finding.code)
    # GET and a POST to /search read; PUT is an idempotent write; POST to messages writes
    assert "list_rooms" not in by_tool
    assert "find_messages" not in by_tool
    assert "AG101" in by_tool["rename_room"] and "AG201" not in by_tool["rename_room"]
    assert {"AG101", "AG201", "AG401"} <= by_tool["post_message"]


def test_a_method_the_model_chooses_makes_a_generic_executor_that_may_write(
    scan_files: ScanFiles,
) -> None:
    """``proxy(method, path)`` hands the model's method on: it may POST or DELETE, so the
    tool writes with an idempotency nobody can know (unknown is not safe)."""
    source = """\
import httpx
from langchain_core.tools import tool


def call_api(method: str, path: str) -> dict:
    return httpx.request(method, f"https://svc.example{path}").json()


@tool
def proxy(method: str, path: str) -> dict:
    \"\"\"Call the service.\"\"\"
    return call_api(method, path)
"""
    result = scan_files({"tools.py": source})
    assert "AG101" in {f.code for f in result.findings if f.tool == "proxy"}


def test_a_helper_whose_method_no_caller_chooses_is_not_a_write(scan_files: ScanFiles) -> None:
    """A helper taking its method as a parameter, called by no tool: nothing chose a
    method, so no tool writes through it."""
    source = """\
import httpx
from langchain_core.tools import tool


def call_api(method: str, path: str) -> dict:
    return httpx.request(method, f"https://svc.example{path}").json()


@tool
def status() -> dict:
    \"\"\"Service status.\"\"\"
    return httpx.get("https://svc.example/status").json()
"""
    result = scan_files({"tools.py": source})
    assert [f.code for f in result.findings if f.code in {"AG101", "AG201"}] == []


def test_a_patch_that_sets_fields_is_idempotent(scan_files: ScanFiles) -> None:
    source = """\
import httpx
from langchain_core.tools import tool

API = "https://crm.example/v3"


def update_contact_fields(contact_id: str, fields: dict) -> dict:
    return httpx.patch(f"{API}/contacts/{contact_id}", json=fields).json()


def add_contact_note(contact_id: str, note: str) -> dict:
    return httpx.patch(f"{API}/contacts/{contact_id}/notes", json={"append": note}).json()


@tool
def update_contact(contact_id: str, fields: dict) -> dict:
    \"\"\"Update a contact.\"\"\"
    return update_contact_fields(contact_id, fields)


@tool
def note_contact(contact_id: str, note: str) -> dict:
    \"\"\"Note on a contact.\"\"\"
    return add_contact_note(contact_id, note)
"""
    result = scan_files({"tools.py": source})
    assert {f.tool for f in result.findings if f.code == "AG201"} == {"note_contact"}
    assert {f.tool for f in result.findings if f.code == "AG101"} == {
        "update_contact",
        "note_contact",
    }


def test_delete_and_patch_chosen_by_the_caller_settle_the_helpers_effect(
    scan_files: ScanFiles,
) -> None:
    source = """\
import httpx
from fastmcp import FastMCP

API = "https://crm.example/v3"
mcp = FastMCP("crm")


def _request(method: str, url: str, **kwargs) -> dict:
    return httpx.request(method, url, **kwargs).json()


@mcp.tool()
def delete_contact(contact_id: str) -> dict:
    return _request("DELETE", f"{API}/contacts/{contact_id}")


@mcp.tool()
def set_contact_title(contact_id: str, title: str) -> dict:
    return _request("PATCH", f"{API}/contacts/{contact_id}", json={"title": title})


@mcp.tool()
def bump_contact_score(contact_id: str) -> dict:
    return _request("PATCH", f"{API}/contacts/{contact_id}/score", json={"op": "inc"})
"""
    result = scan_files({"server.py": source})
    effects = {
        tool.name: [(e.kind, e.idempotent, e.method) for e in tool.effects]
        for tool in result.project.tools
    }
    assert effects["delete_contact"] == [("destructive", True, "DELETE")]
    assert effects["set_contact_title"] == [("network_write", True, "PATCH")]
    assert effects["bump_contact_score"] == [("network_write", False, "PATCH")]


TASKS_CLIENT = """\
import requests

API = "https://tasks.example/open/v1"


class TasksClient:
    def __init__(self, token: str) -> None:
        self.headers = {"Authorization": f"Bearer {token}"}

    def _make_request(self, method: str, endpoint: str, data=None) -> dict:
        url = f"{API}{endpoint}"
        if method == "GET":
            response = requests.get(url, headers=self.headers)
        elif method.upper() == "POST":
            response = requests.post(url, headers=self.headers, json=data)
        elif method in ("DELETE", "REMOVE"):
            response = requests.delete(url, headers=self.headers)
        else:
            raise ValueError(f"Unsupported HTTP method: {method}")
        response.raise_for_status()
        return response.json() if response.text else {}

    def list_projects(self) -> dict:
        return self._make_request("GET", "/project")

    def create_task(self, title: str, project_id: str) -> dict:
        return self._make_request("POST", "/task", {"title": title, "projectId": project_id})

    def delete_task(self, project_id: str, task_id: str) -> dict:
        return self._make_request("DELETE", f"/project/{project_id}/task/{task_id}")
"""

TASKS_SERVER = """\
import os

from mcp.server.fastmcp import FastMCP

from .client import TasksClient

mcp = FastMCP("tasks")
tasks = None


def initialize_client() -> bool:
    global tasks
    token = os.getenv("TASKS_TOKEN")
    if token is None:
        return False
    tasks = TasksClient(token)
    return True


@mcp.tool()
async def list_projects() -> str:
    \"\"\"List the projects.\"\"\"
    if not tasks and not initialize_client():
        return "No token."
    return str(tasks.list_projects())


@mcp.tool()
async def create_task(title: str, project_id: str) -> str:
    \"\"\"Create a task in a project.\"\"\"
    if not tasks and not initialize_client():
        return "No token."
    return str(tasks.create_task(title, project_id))


@mcp.tool()
async def delete_task(project_id: str, task_id: str) -> str:
    \"\"\"Delete a task.\"\"\"
    if not tasks and not initialize_client():
        return "No token."
    return str(tasks.delete_task(project_id, task_id))
"""


def test_a_client_set_under_global_on_first_use_is_followed(scan_files: ScanFiles) -> None:
    """``tasks = None`` at module level, set by ``global tasks`` in an initialiser: the
    tools' calls on it are the client's methods, not unknown names taken for reads."""
    verdicts = tool_verdicts(
        scan_files,
        {"tasks/__init__.py": "", "tasks/client.py": TASKS_CLIENT, "tasks/server.py": TASKS_SERVER},
    )
    assert verdicts["create_task"][0] != "read"
    assert verdicts["delete_task"][0] != "read"


def test_each_caller_takes_the_branch_its_literal_chooses(scan_files: ScanFiles) -> None:
    """``_make_request`` deletes under ``elif method in ("DELETE", ...)`` only: the caller
    passing "GET" reads, the one passing "POST" creates, the one passing "DELETE" deletes."""
    verdicts = tool_verdicts(
        scan_files,
        {"tasks/__init__.py": "", "tasks/client.py": TASKS_CLIENT, "tasks/server.py": TASKS_SERVER},
    )
    assert verdicts["list_projects"][0] == "read"
    assert verdicts["create_task"][0] == "network_write"
    assert "AG201" in verdicts["create_task"][1]
    assert verdicts["delete_task"][0] == "destructive"
    assert "AG201" not in verdicts["delete_task"][1]


def test_a_post_to_a_resource_by_a_function_named_to_update_it_is_idempotent(
    scan_files: ScanFiles,
) -> None:
    """``update_task`` POSTs the task's fields to the task's own URL: setting them again
    changes nothing (the name is the evidence); ``add_comment`` POSTing adds one each time."""
    client = """\
import requests

API = "https://tasks.example/v1"


class Tasks:
    def _post(self, endpoint: str, data: dict) -> dict:
        return requests.post(f"{API}{endpoint}", json=data, timeout=10).json()

    def update_task(self, task_id: str, title: str) -> dict:
        return self._post(f"/task/{task_id}", {"id": task_id, "title": title})

    def add_comment(self, task_id: str, text: str) -> dict:
        return self._post(f"/task/{task_id}/comments", {"text": text})
"""
    server = """\
from mcp.server.fastmcp import FastMCP

from tasks.client import Tasks

mcp = FastMCP("tasks")
api = Tasks()


@mcp.tool()
def rename_task(task_id: str, title: str) -> dict:
    \"\"\"Rename a task.\"\"\"
    return api.update_task(task_id, title)


@mcp.tool()
def comment_on_task(task_id: str, text: str) -> dict:
    \"\"\"Comment on a task.\"\"\"
    return api.add_comment(task_id, text)
"""
    verdicts = tool_verdicts(
        scan_files, {"tasks/__init__.py": "", "tasks/client.py": client, "tasks/server.py": server}
    )
    assert verdicts["rename_task"][0] == "network_write"
    assert "AG201" not in verdicts["rename_task"][1]
    assert "AG201" in verdicts["comment_on_task"][1]


MAPS_SERVER = """\
import json
import socket

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("maps")


class MapsConnection:
    def __init__(self, host: str = "localhost", port: int = 9876) -> None:
        self.host = host
        self.port = port
        self.socket = None

    def connect(self) -> bool:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.connect((self.host, self.port))
        return True

    def send_command(self, command_type: str, params: dict | None = None) -> dict:
        command = {"type": command_type, "params": params or {}}
        self.socket.sendall(json.dumps(command).encode("utf-8"))
        return json.loads(self.socket.recv(65536).decode("utf-8"))


_connection = None


def get_connection():
    global _connection
    if _connection is not None:
        try:
            _connection.socket.sendall(b"")
            return _connection
        except OSError:
            _connection = None
    if _connection is None:
        _connection = MapsConnection()
        if not _connection.connect():
            _connection = None
            raise RuntimeError("Could not connect")
    return _connection


@mcp.tool()
def list_layers() -> str:
    \"\"\"List the layers.\"\"\"
    maps = get_connection()
    return json.dumps(maps.send_command("list_layers"))


@mcp.tool()
def remove_layer(layer_id: str) -> str:
    \"\"\"Remove a layer.\"\"\"
    maps = get_connection()
    return json.dumps(maps.send_command("remove_layer", {"id": layer_id}))
"""


def test_a_connection_getter_returning_the_module_variable_it_sets_types_the_local(
    scan_files: ScanFiles,
) -> None:
    """``maps = get_connection()`` where the getter returns the module's ``_connection`` it
    sets under ``global`` on first use: ``maps.send_command("remove_layer", ...)`` is the
    connection class's method, whose command decides (a removal), not an unknown call."""
    verdicts = tool_verdicts(scan_files, {"server.py": MAPS_SERVER})
    assert verdicts["list_layers"][0] == "read"
    assert verdicts["remove_layer"][0] == "destructive"


def test_commands_to_a_connection_built_for_localhost_are_local(scan_files: ScanFiles) -> None:
    """The class's own ``connect`` opens ``(self.host, self.port)``, and the server builds it
    with ``host="localhost"``: its commands reach this machine, a local write (no AG201)."""
    server = MAPS_SERVER.replace(
        "_connection = MapsConnection()",
        '_connection = MapsConnection(host="localhost", port=9876)',
    ).replace('"remove_layer", {"id": layer_id}', '"add_layer", {"id": layer_id}')
    verdicts = tool_verdicts(scan_files, {"server.py": server})
    assert verdicts["remove_layer"][0] == "write"
    assert "AG201" not in verdicts["remove_layer"][1]


def test_a_patch_named_for_an_edit_a_move_or_a_rename_is_an_idempotent_write(
    scan_files: ScanFiles,
) -> None:
    """``edit``, ``move`` and ``rename`` set fields again, as ``update`` does: a PATCH made
    by a function so named repeats safely (no key asked for); one named ``add`` does not."""
    source = """\
import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("board")
API = "https://board.example/api"


class BoardClient:
    def __init__(self) -> None:
        self._http = httpx.Client(base_url=API, timeout=10)

    def edit_card(self, card_id: str, title: str) -> dict:
        return self._http.patch(f"/cards/{card_id}", json={"title": title}).json()

    def add_card_label(self, card_id: str, label: str) -> dict:
        return self._http.patch(f"/cards/{card_id}/labels", json={"add": label}).json()


board = BoardClient()


@mcp.tool()
def edit_card(card_id: str, title: str) -> dict:
    return board.edit_card(card_id, title)


@mcp.tool()
def move_card(card_id: str, column: str) -> dict:
    return httpx.patch(f"{API}/cards/{card_id}", json={"column": column}, timeout=10).json()


@mcp.tool()
def add_card_label(card_id: str, label: str) -> dict:
    return board.add_card_label(card_id, label)
"""
    result = scan_files({"server.py": source})
    by_tool: dict[str, set[str]] = {}
    for finding in result.findings:
        by_tool.setdefault(finding.tool or "-", set()).add(finding.code)
    for name in ("edit_card", "move_card"):
        assert "AG101" in by_tool[name] and "AG201" not in by_tool[name], by_tool[name]
    assert "AG201" in by_tool["add_card_label"]


CHOSEN_METHODS = """\
from enum import Enum

import httpx
from fastmcp import FastMCP

mcp = FastMCP("music")


class Verb(str, Enum):
    GET = "GET"
    DELETE = "DELETE"


def _send(method: str, path: str) -> dict:
    return httpx.request(method, f"https://music.example/v1/{path}").json()


@mcp.tool()
def follow_playlist(playlist: str, follow: bool = True) -> dict:
    method = "PUT" if follow else "DELETE"
    return _send(method, f"playlists/{playlist}/followers")


@mcp.tool()
def drop_playlist(playlist: str) -> dict:
    return _send(Verb.DELETE, f"playlists/{playlist}")


@mcp.tool()
def replay(request: dict) -> dict:
    return _send(request["verb"], request["path"])


@mcp.tool()
def playlist(playlist: str) -> dict:
    method = "get"
    return _send(method.upper(), f"playlists/{playlist}")
"""


def test_a_method_chosen_in_the_caller_is_judged_by_the_worst_it_may_be(
    scan_files: ScanFiles,
) -> None:
    """``method = "PUT" if follow else "DELETE"``: the tool may delete; ``Verb.DELETE`` names
    its method; a method read from a request the scan cannot follow is unknown, never a
    read; a local bound to "get", spelled upper-case, reads."""
    verdicts = tool_verdicts(scan_files, {"server.py": CHOSEN_METHODS})
    assert verdicts["follow_playlist"][0] == "destructive"
    assert verdicts["drop_playlist"][0] == "destructive"
    assert verdicts["replay"][0] not in {"read", "none"}
    assert verdicts["playlist"][0] == "read"
