"""Tools whose server, declaration or effects sit one step away from the tool itself.

A server made by a project factory (``app = create_server()``) registers tools as
``app = FastMCP(...)`` does; hints written once in a module constant (``MUTATION =
ToolAnnotations(...)``, then ``annotations=MUTATION``) declare each tool that names them; and
a call through typed attributes of what a project function returns
(``get_runtime().mutations.send.execute(...)``) runs the method those types name, so what
that method reaches (an interface's ``send``) is never taken for a read.
"""

from __future__ import annotations

from agentguard.report.model import build_report

from .conftest import ScanFiles, tool_verdicts

FACTORY_SERVER = """\
import httpx
from mcp.server.fastmcp import FastMCP


def create_server():
    return FastMCP(name="tables")


def declared_server() -> FastMCP:
    return build_from_settings()


app = create_server()
other = declared_server()


@app.tool()
def put_row(table: str, row: dict) -> str:
    return httpx.post(f"https://tables.example/{table}/rows", json=row).text


@other.tool()
def count_rows(table: str) -> str:
    return httpx.get(f"https://tables.example/{table}/count").text
"""


def test_a_server_a_project_factory_makes_registers_its_tools(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"tables/server.py": FACTORY_SERVER})
    risk, codes = verdicts["put_row"]
    assert risk == "network_write" and {"AG101", "AG201"} <= codes
    risk, codes = verdicts["count_rows"]
    assert risk == "read" and not codes & {"AG101", "AG201"}


CONSTANT_HINTS = """\
import smtplib

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mcp = FastMCP("mail")

_REMOTE_MUTATION = ToolAnnotations(
    readOnlyHint=False,
    destructiveHint=False,
    idempotentHint=False,
    openWorldHint=True,
)


@mcp.tool(description="Send a message", annotations=_REMOTE_MUTATION)
def send_message(to: str, body: str) -> str:
    with smtplib.SMTP("localhost") as smtp:
        smtp.sendmail("me@example.org", [to], body)
    return "sent"
"""


def test_hints_in_a_module_constant_of_the_same_file_declare_the_tool(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"mail/server.py": CONSTANT_HINTS})
    report = build_report(result)
    (row,) = report.tools
    assert row.risk.source.startswith("declared")
    codes = {f.code for f in result.findings if f.tool == "send_message"}
    # declared: no AG101; still a send with no key
    assert "AG101" not in codes and "AG201" in codes


SERVICE_LAYERS = """\
from dataclasses import dataclass
from typing import Protocol

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("mail")


class Provider(Protocol):
    async def send(self, message: str) -> str: ...


@dataclass
class Access:
    provider: Provider


class SendService:
    def __init__(self, opener):
        self._opener = opener

    def _open(self) -> Access:
        return self._opener()

    async def execute(self, message: str) -> str:
        access = self._open()
        return await access.provider.send(message)


@dataclass
class Services:
    send: SendService


@dataclass
class Runtime:
    mutations: Services


def get_runtime() -> Runtime:
    return Runtime(Services(SendService(None)))


@mcp.tool()
async def send_message(message: str) -> str:
    return await get_runtime().mutations.send.execute(message)
"""


def test_a_call_through_typed_attributes_of_a_returned_object_is_followed(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, {"mail/server.py": SERVICE_LAYERS})
    risk, _ = verdicts["send_message"]
    assert risk != "read"


CACHE_SERVER = """\
from mcp.server.fastmcp import FastMCP
from pymemcache.client.base import Client

mcp = FastMCP("cache")
client = Client(("localhost", 11211))


@mcp.tool()
def clear_cache(delay: int = 0) -> str:
    client.flush_all(delay=delay)
    return "flushed"


@mcp.tool()
def read_entry(key: str) -> str:
    value = client.get(key)
    client.flush()
    return str(value)
"""


def test_flushing_every_entry_of_a_cache_is_destructive(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"cache/server.py": CACHE_SERVER})
    risk, codes = verdicts["clear_cache"]
    assert risk == "destructive" and "AG101" in codes
    # ``flush()`` alone only empties a buffer
    risk, codes = verdicts["read_entry"]
    assert risk == "read" and "AG101" not in codes


LOGGED_SERVER = """\
import functools
import json
import os

import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("tables")
LOG_DIR = os.path.expanduser("~/.tables")


def logged(func):
    @functools.wraps(func)
    async def wrapper(*args, **kwargs):
        os.makedirs(LOG_DIR, exist_ok=True)
        log_file = os.path.join(LOG_DIR, "server.log")
        with open(log_file, "a") as f:
            f.write(json.dumps({"tool": func.__name__, "kwargs": kwargs}) + "\\n")
        return await func(*args, **kwargs)

    return wrapper


@mcp.tool()
@logged
async def list_tables(namespace: str) -> str:
    return httpx.get(f"https://tables.example/{namespace}").text


@mcp.tool()
async def append_note(notes_file: str, text: str) -> str:
    os.makedirs(os.path.dirname(notes_file), exist_ok=True)
    with open(notes_file, "a") as f:
        f.write(text)
    return "ok"


@mcp.tool()
async def rotate_log(text: str) -> str:
    with open("server.log", "w") as f:
        f.write(text)
    return "ok"
"""


def test_appending_to_the_servers_own_log_is_no_side_effect(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"tables/server.py": LOGGED_SERVER})
    risk, codes = verdicts["list_tables"]
    assert risk == "read" and not codes & {"AG101", "AG201"}
    # a file the model names, appended to, is the tool's write
    risk, codes = verdicts["append_note"]
    assert risk == "write" and "AG101" in codes
    # overwriting a log is no append: still a write
    risk, codes = verdicts["rotate_log"]
    assert risk == "write" and "AG101" in codes


WAREHOUSE_SERVER = """\
from mcp.server.fastmcp import FastMCP
from snowflake.snowpark import Session

mcp = FastMCP("warehouse")


class WarehouseDB:
    def __init__(self, config: dict):
        self.config = config
        self.session = None

    def _connect(self):
        self.session = Session.builder.configs(self.config).create()

    def execute_query(self, query: str) -> list[dict]:
        if self.session is None:
            self._connect()
        return self.session.sql(query).to_pandas().to_dict(orient="records")


async def handle_list_tables(arguments, db):
    return db.execute_query("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES")


async def handle_drop_table(arguments, db):
    return db.execute_query(f"DROP TABLE {arguments['name']}")


DB = WarehouseDB({})


@mcp.tool()
async def list_tables() -> str:
    return str(await handle_list_tables({}, DB))


@mcp.tool()
async def drop_table(name: str) -> str:
    return str(await handle_drop_table({"name": name}, DB))
"""


def test_a_query_helper_on_an_untyped_parameter_is_judged_at_each_caller(
    scan_files: ScanFiles,
) -> None:
    """``db`` has no annotation, and one project class defines ``execute_query``: the call
    runs that method, so each handler's statement is judged (a SELECT reads, a DROP
    deletes); the session its builder opens and the SQL a session runs are no writes of
    their own."""
    verdicts = tool_verdicts(scan_files, {"warehouse/server.py": WAREHOUSE_SERVER})
    risk, codes = verdicts["list_tables"]
    assert risk == "read" and not codes & {"AG101", "AG201"}
    risk, codes = verdicts["drop_table"]
    assert risk in {"write", "destructive"} and "AG101" in codes


APPLIED_DECORATOR = """\
import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("functions")


def register_function(function_name: str, description: str):
    async def call_function(parameters: dict) -> str:
        return httpx.post(f"https://fn.example/{function_name}", json=parameters).text

    call_function.__doc__ = description
    return mcp.tool(name=f"run_{function_name}")(call_function)


def list_functions() -> str:
    return httpx.get("https://fn.example/").text


mcp.tool("list-functions")(list_functions)
"""


def test_a_decorator_applied_as_a_call_registers_the_function(scan_files: ScanFiles) -> None:
    """``mcp.tool(name=...)(fn)`` registers ``fn`` as ``@mcp.tool(name=...)`` would: the
    closure made per function at run time, and a module function named by the call."""
    verdicts = tool_verdicts(scan_files, {"functions/server.py": APPLIED_DECORATOR})
    assert verdicts["list-functions"][0] == "read"
    (built,) = (name for name in verdicts if name != "list-functions")
    risk, codes = verdicts[built]
    assert risk == "network_write" and "AG101" in codes
