"""What a tool does, judged on the forms a newcomer's code takes: a method handed to the
project's own helper, values that stay in the process, set-up made once, commands sent over
a channel, and library knowledge that holds only for its library. Each case is a small MCP
server written for the test; the assertions are the verdict a user reads in the report (the
tool's risk) and the findings it gets."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles, tool_verdicts

HEAD = 'from mcp.server.fastmcp import FastMCP\n\nmcp = FastMCP("demo")\n'


def server(source: str) -> dict[str, str]:
    return {"server.py": HEAD + textwrap.dedent(source)}


# -- 1. a call through a parameter is followed to what the caller hands over ---------------

HANDED = server(
    '''
    import asyncio

    import httpx
    from googleapiclient.discovery import build
    from storage_sdk import StorageClient

    client = StorageClient(api_key="k")


    class Notes:
        def __init__(self) -> None:
            self.http = httpx.Client(base_url="https://notes.example.com")

        def delete(self, note_id: str) -> None:
            self.http.delete(f"/notes/{note_id}")

        def fetch(self, note_id: str) -> dict:
            return self.http.get(f"/notes/{note_id}").json()


    notes = Notes()
    HANDLERS = {}


    def _call(fn, *args):
        try:
            return fn(*args)
        except Exception as exc:
            return {"error": str(exc)}


    def _guarded(fn, *args):
        return _call(fn, *args)


    async def _in_thread(fn):
        return await asyncio.to_thread(fn)


    @mcp.tool()
    def remove_object(key: str) -> dict:
        """Remove a stored object."""
        return _call(client.remove, key)


    @mcp.tool()
    def delete_note(note_id: str) -> dict:
        """Delete a note."""
        return _guarded(notes.delete, note_id)


    @mcp.tool()
    def read_note(note_id: str) -> dict:
        """Read a note."""
        return _guarded(notes.fetch, note_id)


    @mcp.tool()
    async def create_sheet(title: str) -> str:
        """Create a spreadsheet."""
        sheets = build("sheets", "v4")
        made = await _in_thread(sheets.spreadsheets().create(body={"title": title}).execute)
        return made["spreadsheetId"]


    @mcp.tool()
    async def create_doc(title: str) -> str:
        """Create a document."""
        docs = build("docs", "v1")
        doc = await asyncio.to_thread(docs.documents().create(body={"title": title}).execute)
        return doc["documentId"]


    @mcp.tool()
    async def upload_file(name: str, folder_id: str) -> str:
        """Upload a file into a folder."""
        drive = build("drive", "v3")
        made = await asyncio.to_thread(
            drive.files().create(
                body={"name": name, "parents": [folder_id], "mimeType": "text/plain"},
                fields="id, name, webViewLink, parents, mimeType, createdTime, size",
            ).execute
        )
        return made["id"]


    @mcp.tool()
    def run_handler(kind: str, key: str) -> dict:
        """Run the handler for a kind of request."""
        return _call(HANDLERS.get(kind), key)
    '''
)


def test_sdk_method_handed_to_a_helper_is_the_tools_effect(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, HANDED)
    assert verdicts["remove_object"][0] == "destructive"
    assert "AG101" in verdicts["remove_object"][1]


def test_project_method_handed_through_two_helpers_is_followed(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, HANDED)
    assert verdicts["delete_note"][0] == "destructive"
    risk, codes = verdicts["read_note"]
    assert risk == "read"
    assert not codes & {"AG101", "AG102", "AG201"}


def test_request_handed_to_a_thread_through_a_helper_is_a_write(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, HANDED)
    for name in ("create_sheet", "create_doc", "upload_file"):
        risk, codes = verdicts[name]
        assert risk == "network_write", name
        assert {"AG101", "AG201"} <= codes, name


def test_a_handed_callable_of_no_known_kind_is_unknown_not_read(scan_files: ScanFiles) -> None:
    risk, codes = tool_verdicts(scan_files, HANDED)["run_handler"]
    assert risk == "unknown"
    assert "AG104" in codes


def test_an_image_saved_to_a_path_is_a_local_write(scan_files: ScanFiles) -> None:
    files = server(
        '''
        import PIL.Image


        @mcp.tool()
        def shrink_image(image_path: str) -> str:
            """Shrink an image to half its size."""
            img = PIL.Image.open(image_path)
            img = img.resize((img.width // 2, img.height // 2))
            img.save(f"small_{image_path}")
            return f"small_{image_path}"
        '''
    )
    risk, codes = tool_verdicts(scan_files, files)["shrink_image"]
    assert risk == "write"
    assert "AG201" not in codes


# -- 2. values keep what they are -----------------------------------------------------------


def test_in_process_objects_are_not_remote_writes(scan_files: ScanFiles) -> None:
    files = server(
        '''
        import io
        import json

        import anyio.lowlevel
        import httpx
        import qrcode
        from fastmcp.dependencies import Progress

        _limit = anyio.lowlevel.RunVar("limit")


        @mcp.tool()
        async def lookup(url: str) -> dict:
            """Look a record up."""
            async with httpx.AsyncClient() as http:
                answer = await http.get(url)
            data = answer.json()
            merged = data.copy()
            merged.update({"source": url})
            return merged


        @mcp.tool()
        def parse(text: str) -> dict:
            """Parse a JSON text."""
            data = json.loads(text)
            data.setdefault("items", []).append("seen")
            return data


        @mcp.tool()
        def flatten(text: str) -> list:
            """Flatten the parts of a parsed message."""
            part_queue = list(json.loads(text).get("parts", []))
            found = []
            while part_queue:
                part = part_queue.pop(0)
                part_queue.extend(part.get("parts", []))
                found.append(part)
            return found


        @mcp.tool()
        def remember_limit(value: int) -> str:
            """Remember the limit for this run."""
            _limit.set(value)
            return "ok"


        @mcp.tool()
        def qr_code(text: str) -> bytes:
            """Make a QR code image of a text."""
            qr = qrcode.QRCode(version=1)
            qr.add_data(text)
            qr.make(fit=True)
            buffer = io.BytesIO()
            qr.make_image().save(buffer)
            return buffer.getvalue()


        @mcp.tool()
        async def count_items(items: list[str], progress: Progress = Progress()) -> int:
            """Count items, reporting progress."""
            await progress.set_total(len(items))
            for _ in items:
                await progress.increment()
            return len(items)
        '''
    )
    verdicts = tool_verdicts(scan_files, files)
    for name in ("lookup", "parse", "flatten", "remember_limit", "qr_code", "count_items"):
        risk, codes = verdicts[name]
        assert risk == "read", (name, risk)
        assert not codes & {"AG101", "AG102", "AG201"}, (name, codes)


# -- 3. set-up is not the tool's effect -------------------------------------------------------

SETUP = server(
    '''
    import functools
    import json
    from pathlib import Path

    import aiosqlite
    import anyio
    import asyncpg
    from search_sdk import SearchClient

    _pool = None


    async def get_pool():
        global _pool
        if _pool is None:
            _pool = await asyncpg.create_pool("postgresql://localhost/app")
        return _pool


    @functools.lru_cache
    def telemetry_id() -> str:
        path = Path.home() / ".demo" / "id.json"
        path.write_text(json.dumps({"id": "anon"}))
        return "anon"


    class Index:
        def __init__(self) -> None:
            self.client = SearchClient("https://search.example.com")
            self._index = None

        def ensure(self):
            if self._index is None:
                self._index = self.client.create_index("docs")
            return self._index

        def find(self, query: str) -> list:
            self.ensure()
            return self.client.search("docs", query)


    index = Index()


    class TokenStore:
        def __init__(self, path: str) -> None:
            self.path = path
            self._initialized = False

        async def initialize(self) -> None:
            async with aiosqlite.connect(self.path) as db:
                await db.execute("CREATE TABLE tokens (user TEXT, token TEXT)")
                await db.commit()
            self._initialized = True

        async def token_for(self, user: str) -> str | None:
            if not self._initialized:
                await self.initialize()
            async with aiosqlite.connect(self.path) as db:
                rows = await db.execute_fetchall("SELECT token FROM tokens WHERE user = ?", (user,))
                return rows[0][0] if rows else None


    store = TokenStore("tokens.db")


    @mcp.tool()
    async def list_orders() -> list:
        """List the orders."""
        pool = await get_pool()
        async with pool.acquire() as conn:
            return await conn.fetch("SELECT id, total FROM orders")


    @mcp.tool()
    def search_docs(query: str) -> list:
        """Search the documents."""
        telemetry_id()
        return index.find(query)


    @mcp.tool()
    async def list_files(user: str) -> list:
        """List the user's files."""
        token = await store.token_for(user)
        async with anyio.create_task_group() as group:
            with anyio.move_on_after(10):
                group.start_soon(anyio.sleep, 0)
        return [token]


    @mcp.tool()
    def open_ticket(title: str) -> dict:
        """Open a ticket unless one with this title exists."""
        found = None
        if found is None:
            found = index.client.create_ticket(title=title)
        return found
    '''
)


def test_first_use_setup_does_not_make_a_read_tool_a_writer(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, SETUP)
    assert verdicts["list_orders"] == ("read", set())
    assert verdicts["search_docs"] == ("read", set())
    assert verdicts["list_files"] == ("read", set())


def test_a_create_guarded_by_a_local_stays_the_tools_write(scan_files: ScanFiles) -> None:
    risk, codes = tool_verdicts(scan_files, SETUP)["open_ticket"]
    assert risk == "network_write"
    assert "AG101" in codes


# -- 4. commands over a channel are judged by their operation --------------------------------

CHANNEL = server(
    '''
    import json
    import socket

    import websockets

    HOST = "localhost"
    PORT = 9876


    def send_command(command: str, params: dict | None = None) -> dict:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.connect((HOST, PORT))
        message = {"type": command, "params": params or {}}
        sock.sendall(json.dumps(message).encode("utf-8"))
        return json.loads(sock.recv(65536).decode("utf-8"))


    @mcp.tool()
    def list_layers() -> dict:
        """List the layers of the open drawing."""
        return send_command("list_layers")


    @mcp.tool()
    def get_layer_info(name: str) -> dict:
        """Describe one layer."""
        return send_command("get_layer_info", {"name": name})


    @mcp.tool()
    def create_layer(name: str) -> dict:
        """Add a layer to the drawing."""
        return send_command("create_layer", {"name": name})


    @mcp.tool()
    def delete_layer(name: str) -> dict:
        """Delete a layer."""
        return send_command("delete_layer", {"name": name})


    @mcp.tool()
    def run_command(command: str, params: dict) -> dict:
        """Run any command of the drawing program."""
        return send_command(command, params)


    @mcp.tool()
    def run_macro(macro: str) -> dict:
        """Run a macro in the drawing program."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.connect((HOST, PORT))
        sock.sendall(json.dumps({"type": "run_macro", "source": macro}).encode("utf-8"))
        return json.loads(sock.recv(65536).decode("utf-8"))


    @mcp.tool()
    async def list_remote_tools() -> str:
        """List the tools another MCP server offers."""
        async with websockets.connect("wss://tools.example.com/mcp") as ws:
            request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            await ws.send(json.dumps(request))
            return await ws.recv()


    @mcp.tool()
    async def create_room(name: str) -> str:
        """Create a chat room on the hosted service."""
        async with websockets.connect("wss://chat.example.com/api") as ws:
            await ws.send(json.dumps({"action": "create_room", "name": name}))
            return await ws.recv()
    '''
)


def test_read_commands_sent_to_a_local_program_are_reads(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, CHANNEL)
    assert verdicts["list_layers"] == ("read", set())
    assert verdicts["get_layer_info"] == ("read", set())


def test_a_json_rpc_method_is_judged_by_the_last_part_of_its_name(scan_files: ScanFiles) -> None:
    """``{"method": "tools/list"}`` sent over a websocket: JSON-RPC names a method in its
    namespace, and ``list`` reads."""
    assert tool_verdicts(scan_files, CHANNEL)["list_remote_tools"] == ("read", set())


def test_write_commands_to_a_local_program_are_local_writes(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, CHANNEL)
    risk, codes = verdicts["create_layer"]
    assert risk == "write"
    assert "AG201" not in codes
    assert verdicts["delete_layer"][0] == "destructive"


def test_a_command_the_model_chooses_is_unknown(scan_files: ScanFiles) -> None:
    risk, codes = tool_verdicts(scan_files, CHANNEL)["run_command"]
    assert risk == "unknown"
    assert "AG104" in codes


def test_a_command_that_runs_what_it_names_is_unknown_never_a_read(scan_files: ScanFiles) -> None:
    """``{"type": "run_macro", "source": ...}`` sent to the program: it runs code it is
    handed; what that does is not in the command's name."""
    risk, codes = tool_verdicts(scan_files, CHANNEL)["run_macro"]
    assert risk == "unknown"
    assert "AG104" in codes


def test_a_create_sent_to_a_remote_service_is_a_remote_write(scan_files: ScanFiles) -> None:
    risk, codes = tool_verdicts(scan_files, CHANNEL)["create_room"]
    assert risk == "network_write"
    assert "AG201" in codes


# -- 8. knowledge is scoped to its library ----------------------------------------------------


def test_a_brokers_place_order_stays_a_write(scan_files: ScanFiles) -> None:
    files = server(
        '''
        import googlemaps
        from trading_sdk import TradingClient

        broker = TradingClient("key", "secret")
        maps = googlemaps.Client(key="k")


        @mcp.tool()
        def buy(symbol: str, qty: int) -> str:
            """Buy shares."""
            order = broker.place(symbol=symbol, qty=qty, side="buy")
            return str(order)


        @mcp.tool()
        def place_details(place_id: str) -> dict:
            """Look a place up."""
            return maps.place(place_id=place_id, fields=["name", "rating"])
        '''
    )
    verdicts = tool_verdicts(scan_files, files)
    risk, codes = verdicts["buy"]
    assert risk == "network_write"
    assert {"AG101", "AG201"} <= codes
    assert verdicts["place_details"] == ("read", set())


def test_a_client_chosen_at_run_time_runs_one_of_the_projects_implementations(
    scan_files: ScanFiles,
) -> None:
    files = {
        "search/clients.py": textwrap.dedent(
            """
            import os

            import httpx


            class BaseSearch:
                async def forward(self, query: str) -> str:
                    raise NotImplementedError


            class WebSearch(BaseSearch):
                async def forward(self, query: str) -> str:
                    async with httpx.AsyncClient() as http:
                        answer = await http.get("https://search.example.com", params={"q": query})
                        return answer.text


            class NewsSearch(BaseSearch):
                async def forward(self, query: str) -> str:
                    async with httpx.AsyncClient() as http:
                        answer = await http.get("https://news.example.com", params={"q": query})
                        return answer.text


            class Outbox:
                async def handle(self, to: str, text: str) -> None:
                    raise NotImplementedError


            class MailOutbox(Outbox):
                async def handle(self, to: str, text: str) -> None:
                    async with httpx.AsyncClient() as http:
                        await http.post("https://mail.example.com/send", json={"to": to, "text": text})


            def make_search() -> BaseSearch:
                return NewsSearch() if os.environ.get("NEWS") else WebSearch()


            def make_outbox() -> Outbox:
                return MailOutbox()
            """
        ),
        "search/server.py": HEAD
        + textwrap.dedent(
            '''
            from search.clients import make_outbox, make_search


            class Tools:
                def __init__(self) -> None:
                    self.searcher = make_search()
                    self.outbox = make_outbox()

                async def find(self, query: str) -> str:
                    return await self.searcher.forward(query)

                async def notify(self, to: str, text: str) -> str:
                    await self.outbox.handle(to, text)
                    return "sent"


            tools = Tools()


            @mcp.tool()
            async def web_search(query: str) -> str:
                """Search the web."""
                return await tools.find(query)


            @mcp.tool()
            async def send_note(to: str, text: str) -> str:
                """Send a note by mail."""
                return await tools.notify(to, text)
            '''
        ),
    }
    verdicts = tool_verdicts(scan_files, files)
    assert verdicts["web_search"][0] == "read"
    assert not verdicts["web_search"][1] & {"AG101", "AG201"}
    risk, codes = verdicts["send_note"]
    assert risk == "network_write"
    assert "AG201" in codes


def test_commands_run_by_langchains_bash_process_are_an_execution(scan_files: ScanFiles) -> None:
    files = server(
        '''
        from langchain_experimental.llm_bash.bash import BashProcess

        bash = BashProcess(return_err_output=True)


        @mcp.tool()
        def terminal(commands: str) -> str:
            """Run shell commands on this machine."""
            return bash.run(commands)
        '''
    )
    risk, codes = tool_verdicts(scan_files, files)["terminal"]
    assert risk == "exec"
    assert "AG101" in codes


def test_a_record_of_a_store_the_module_keeps_changed_is_a_local_write(
    scan_files: ScanFiles,
) -> None:
    files = server(
        '''
        ACCOUNTS: dict[str, dict] = {"acc-1": {"balance": 100, "transactions": []}}


        @mcp.tool()
        def pay(account: str, amount: int) -> dict:
            """Pay an amount from an account."""
            record = {"amount": amount}
            ACCOUNTS[account]["transactions"].append(record)
            return record


        @mcp.tool()
        def transactions(account: str) -> list:
            """List an account's transactions."""
            found = []
            found.extend(ACCOUNTS[account]["transactions"])
            return found
        '''
    )
    verdicts = tool_verdicts(scan_files, files)
    risk, codes = verdicts["pay"]
    assert risk == "write"
    assert "AG101" in codes
    assert "AG201" not in codes  # in the process's memory, not a remote service
    assert verdicts["transactions"] == ("read", set())


def test_an_entry_a_store_the_module_keeps_drops_is_a_local_write(scan_files: ScanFiles) -> None:
    """``_SESSIONS.pop(session_id)`` and ``_SESSIONS.clear()`` change what every later call
    sees; a module list that only gathers results, and a lookup, change nothing."""
    files = server(
        '''
        _SESSIONS: dict[str, dict] = {}
        gathered: list = []


        @mcp.tool()
        def end_session(session_id: str) -> str:
            """Forget one session."""
            _SESSIONS.pop(session_id, None)
            return "ended"


        @mcp.tool()
        def end_all_sessions() -> str:
            """Forget every session."""
            _SESSIONS.clear()
            return "cleared"


        @mcp.tool()
        def session(session_id: str) -> dict:
            """Read one session."""
            found = _SESSIONS.get(session_id, {})
            gathered.append(session_id)
            return found
        '''
    )
    verdicts = tool_verdicts(scan_files, files)
    for name in ("end_session", "end_all_sessions"):
        risk, codes = verdicts[name]
        assert risk == "write", name
        assert "AG201" not in codes  # in the process's memory, not a remote service
    assert verdicts["session"] == ("read", set())


def test_a_callable_an_object_was_handed_at_construction_is_unknown_never_read(
    scan_files: ScanFiles,
) -> None:
    """``self._deliver = retrying(deliver)`` in the constructor, then ``self._deliver(...)``
    in the tool: whoever built the object chose what runs, so the tool's effect is
    unknown, never read-only; a tool calling one of the class's own methods that only
    formats text stays a read."""
    files = server(
        '''
        def retrying(fn):
            return fn


        class Courier:
            def __init__(self, deliver) -> None:
                self._deliver = retrying(deliver)

            def _format(self, text: str) -> str:
                return text.strip()

            def send(self, channel: str, text: str) -> str:
                return self._deliver(channel, self._format(text))

            def preview(self, text: str) -> str:
                return self._format(text)


        courier = Courier(print)


        @mcp.tool()
        def post_update(channel: str, text: str) -> str:
            """Post an update to a channel."""
            return courier.send(channel, text)


        @mcp.tool()
        def preview_update(text: str) -> str:
            """Show how an update will look."""
            return courier.preview(text)
        '''
    )
    verdicts = tool_verdicts(scan_files, files)
    assert verdicts["post_update"][0] == "unknown"
    assert verdicts["preview_update"] == ("read", set())


def test_an_executor_chosen_at_run_time_from_a_table_is_followed(scan_files: ScanFiles) -> None:
    files = server(
        '''
        import requests


        class Executor:
            def run(self, payload: dict) -> dict:
                raise NotImplementedError


        class RefundExecutor(Executor):
            def run(self, payload: dict) -> dict:
                return requests.post("https://pay.example.com/refunds", json=payload).json()


        class StatusExecutor(Executor):
            def run(self, payload: dict) -> dict:
                return requests.get("https://pay.example.com/status", params=payload).json()


        EXECUTORS = {"refund": RefundExecutor(), "status": StatusExecutor()}


        @mcp.tool()
        def execute(kind: str, payload: dict) -> dict:
            """Run the executor for a kind of request."""
            executor = EXECUTORS[kind]
            return executor.run(payload)
        '''
    )
    risk, codes = tool_verdicts(scan_files, files)["execute"]
    assert risk == "network_write"
    assert "AG201" in codes


def test_a_list_a_long_lived_project_object_keeps_is_state_the_tool_changes(
    scan_files: ScanFiles,
) -> None:
    files = server(
        '''
        class Board:
            def __init__(self) -> None:
                self.insights: list[str] = []
                self.title = "board"

            def render(self) -> str:
                return "\\n".join(self.insights)


        def serve() -> None:
            board = Board()

            @mcp.tool()
            def add_insight(text: str) -> str:
                """Add an insight to the board."""
                board.insights.append(text)
                return board.render()

            @mcp.tool()
            def show_board() -> str:
                """Show the board."""
                shown = [board.title]
                shown.extend(board.insights)
                return "\\n".join(shown)

            mcp.run()
        '''
    )
    verdicts = tool_verdicts(scan_files, files)
    risk, codes = verdicts["add_insight"]
    assert risk == "write"
    assert "AG201" not in codes
    assert verdicts["show_board"] == ("read", set())


def test_a_kind_of_message_sent_over_a_channel_is_no_operation(scan_files: ScanFiles) -> None:
    files = server(
        '''
        import asyncio
        import json

        import websockets

        events: asyncio.Queue = asyncio.Queue()


        @mcp.tool()
        async def weather(city: str) -> str:
            """Look the weather up, streaming progress to the dashboard."""
            await events.put({"type": "progress", "text": f"looking up {city}"})
            return "sunny"


        @mcp.tool()
        async def forecast(city: str) -> str:
            """Look the forecast up, telling the dashboard."""
            async with websockets.connect("wss://dash.example.com/feed") as ws:
                await ws.send(json.dumps({"type": "update", "city": city}))
            return "rain"
        '''
    )
    verdicts = tool_verdicts(scan_files, files)
    assert verdicts["weather"] == ("read", set())
    # a message of kind "update" is not an update: the send stays unjudged, never a write
    risk, codes = verdicts["forecast"]
    assert risk == "unknown"
    assert not codes & {"AG101", "AG201"}


TELEMETRY = """\
import functools
import threading

import httpx


class Telemetry:
    def record(self, event: str, props: dict) -> None:
        payload = {"event": event, "props": props}
        threading.Thread(target=self._send, args=(payload,), daemon=True).start()

    def _send(self, payload: dict) -> None:
        httpx.post("https://usage.example/v1/events", json=payload, timeout=2)


usage = Telemetry()


def tracked(name: str):
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            finally:
                usage.record("tool_call", {"tool": name})
        return wrapper
    return decorator
"""

NOTES = """\
import sqlite3

from mcp.server.fastmcp import FastMCP

from notes.telemetry import tracked

mcp = FastMCP("notes")


@mcp.tool()
@tracked("add_note")
def add_note(title: str) -> str:
    \"\"\"Add a note.\"\"\"
    conn = sqlite3.connect("notes.db")
    conn.execute("INSERT INTO notes (title) VALUES (?)", (title,))
    conn.commit()
    return "ok"
"""


def test_a_telemetry_decorators_report_is_not_the_tools_effect(scan_files: ScanFiles) -> None:
    """Every tool wrapped by ``@tracked`` reports its call to a usage service through a
    ``Telemetry`` class of a ``telemetry`` module: telemetry of the call, not a remote write
    of the tool (no AG201); the tool's own insert stays a local write."""
    verdicts = tool_verdicts(
        scan_files,
        {"notes/__init__.py": "", "notes/telemetry.py": TELEMETRY, "notes/server.py": NOTES},
    )
    assert verdicts["add_note"][0] == "write"
    assert "AG201" not in verdicts["add_note"][1]


TRACE_LOGGER = """\
import json
from pathlib import Path


class RunLogger:
    def __init__(self, folder: str = "runs") -> None:
        self.folder = Path(folder)

    def tool_started(self, name: str, args: dict) -> None:
        self._event({"type": "tool_started", "tool": name, "args": args})

    def _event(self, event: dict) -> None:
        for old in self.folder.glob("*.old"):
            old.unlink()
        trace = self.folder / "trace.json"
        events = json.loads(trace.read_text()) if trace.exists() else []
        events.append(event)
        trace.write_text(json.dumps(events))


run_log = RunLogger()
"""

WEATHER_TOOLS = """\
import contextlib
import os

import httpx
from pathlib import Path

from mcp.server.fastmcp import FastMCP

from desk.logger import run_log

mcp = FastMCP("desk")


@mcp.tool()
def forecast(city: str) -> str:
    \"\"\"Read the forecast of a city.\"\"\"
    run_log.tool_started("forecast", {"city": city})
    return httpx.get(f"https://weather.example/{city}", timeout=5).text


@mcp.tool()
def quiet_forecast(city: str) -> str:
    \"\"\"Read the forecast of a city, the client's chatter silenced.\"\"\"
    with open(os.devnull, "w") as sink, contextlib.redirect_stderr(sink):
        return httpx.get(f"https://weather.example/{city}", timeout=5).text


@mcp.tool()
def save_note(text: str) -> str:
    \"\"\"Save a note.\"\"\"
    run_log.tool_started("save_note", {"text": text})
    Path("notes.txt").write_text(text)
    return "saved"
"""


def test_a_trace_file_a_logger_module_writes_for_every_call_is_not_the_tools_effect(
    scan_files: ScanFiles,
) -> None:
    """Every tool tells the project's ``logger`` module it started, which rewrites a trace
    file and removes old ones: bookkeeping of the call, so a read tool stays a read with no
    finding; a tool's own write stays a write."""
    verdicts = tool_verdicts(
        scan_files,
        {"desk/__init__.py": "", "desk/logger.py": TRACE_LOGGER, "desk/tools.py": WEATHER_TOOLS},
    )
    assert verdicts["forecast"] == ("read", set()), verdicts["forecast"]
    # the null device keeps nothing written to it
    assert verdicts["quiet_forecast"] == ("read", set()), verdicts["quiet_forecast"]
    assert verdicts["save_note"][0] == "write"


DEVICE_BRIDGE = '''\
import json
import uuid

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("device")


class Bridge:
    """Sends commands to the desktop client over the socket.io room it joined."""

    def __init__(self, socketio, redis_client, room: str) -> None:
        self.socketio = socketio
        self.redis = redis_client
        self.room = room

    def run(self, command: dict) -> str:
        request_id = str(uuid.uuid4())
        command["request_id"] = request_id
        replies = self.redis.pubsub()
        replies.subscribe(f"device-reply:{request_id}")
        self.socketio.emit("device-command", command, room=self.room)
        for message in replies.listen():
            if message["type"] == "message":
                return json.loads(message["data"])["text"]
        return "no answer"


bridge = Bridge(None, None, "desk-1")


@mcp.tool()
def delete_file(path: str) -> str:
    """Delete a file on the user's computer."""
    return bridge.run({"action": "delete_file", "path": path})


@mcp.tool()
def list_files(folder: str) -> str:
    """List a folder on the user's computer."""
    return bridge.run({"action": "list_files", "folder": folder})


@mcp.tool()
def show_toast(text: str) -> str:
    """Show a short notice on the user's screen."""
    return bridge.run({"text": text})
'''


def test_a_message_a_helper_sends_whole_is_judged_by_the_operation_its_caller_names(
    scan_files: ScanFiles,
) -> None:
    """``bridge.run({"action": "delete_file", ...})`` where ``run`` emits the message it is
    handed (``socketio.emit("device-command", command)``, the event's name first): the
    operation each caller writes decides, so deleting a file is destructive, never read;
    listing reads; a message naming no operation is no command."""
    verdicts = tool_verdicts(scan_files, {"device/server.py": DEVICE_BRIDGE})
    assert verdicts["delete_file"][0] == "destructive"
    assert verdicts["list_files"] == ("read", set())
    assert verdicts["show_toast"][0] == "read"


def test_a_message_handed_after_the_event_it_is_sent_as_is_the_callers_to_name(
    scan_files: ScanFiles,
) -> None:
    """``run(event, command)`` emitting ``socketio.emit(event, command)``: of the two
    parameters handed on, the message is the one used as a mapping (``command[...] =``), not
    the event's name before it, so deleting a file is still destructive."""
    source = (
        DEVICE_BRIDGE.replace(
            "def run(self, command: dict)", "def run(self, event: str, command: dict)"
        )
        .replace('emit("device-command", command', "emit(event, command")
        .replace("bridge.run({", 'bridge.run("device-command", {')
    )
    verdicts = tool_verdicts(scan_files, {"device/server.py": source})
    assert verdicts["delete_file"][0] == "destructive"
    assert verdicts["list_files"] == ("read", set())


def test_an_operation_that_runs_what_it_names_is_unknown_never_read(scan_files: ScanFiles) -> None:
    """A notebook bridge sends ``{"type": request_type, ...}`` over its websocket;
    ``run_all_cells`` runs whatever code the cells hold: unknown, never a read (``run`` is a
    read verb for a report or a query), while ``get_cells`` reads."""
    files = server(
        '''
        import json

        import websockets


        class NotebookBridge:
            def __init__(self, url: str) -> None:
                self.url = url

            async def send_request(self, request_type: str, **fields) -> dict:
                async with websockets.connect(self.url) as socket:
                    await socket.send(json.dumps({"type": request_type, **fields}))
                    return json.loads(await socket.recv())


        bridge = NotebookBridge("ws://localhost:8765")


        @mcp.tool()
        async def run_all_cells() -> str:
            """Run every cell of the open notebook."""
            return json.dumps(await bridge.send_request("run_all_cells"))


        @mcp.tool()
        async def get_cells() -> str:
            """The cells of the open notebook."""
            return json.dumps(await bridge.send_request("get_cells"))
        '''
    )
    verdicts = tool_verdicts(scan_files, files)
    assert verdicts["run_all_cells"][0] == "unknown"
    assert verdicts["get_cells"] == ("read", set())


GOOGLE_SERVICE = """\
from googleapiclient.discovery import build


class Workspace:
    def __init__(self, creds) -> None:
        self._todo_api = None
        self._creds = creds

    def connect(self) -> None:
        self._todo_api = build("tasks", "v1", credentials=self._creds)

    @property
    def todo(self):
        return self._todo_api
"""

TODO_TOOLS = """\
from mcp.server.fastmcp import FastMCP

from office.workspace import Workspace


class TodoTools:
    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def add(self, title: str) -> dict:
        return self._workspace.todo.tasks().insert(tasklist="@default", body={"title": title}).execute()

    def lists(self) -> dict:
        return self._workspace.todo.tasklists().list().execute()


workspace = Workspace(creds=None)
todo = TodoTools(workspace)
mcp = FastMCP("office")


@mcp.tool()
def add_todo(title: str) -> dict:
    \"\"\"Add a to-do.\"\"\"
    return todo.add(title)


@mcp.tool()
def todo_lists() -> dict:
    \"\"\"List the to-do lists.\"\"\"
    return todo.lists()
"""


def test_a_request_sent_through_a_client_a_held_objects_property_returns_is_judged(
    scan_files: ScanFiles,
) -> None:
    """``self._workspace.todo.tasks().insert(...).execute()``: ``_workspace`` holds a project
    ``Workspace`` whose ``todo`` property returns the client ``build(...)`` made. The insert
    it executes is a remote write, whatever the attribute is called; the list reads. Before,
    no name said it was a service and the write was judged no effect at all."""
    verdicts = tool_verdicts(
        scan_files,
        {
            "office/__init__.py": "",
            "office/workspace.py": GOOGLE_SERVICE,
            "office/tools.py": TODO_TOOLS,
        },
    )
    assert "AG201" in verdicts["add_todo"][1], verdicts["add_todo"]
    assert verdicts["todo_lists"] == ("read", set()), verdicts["todo_lists"]


STORED_CREDENTIALS = """\
import redis

store = redis.Redis()


def clear_credentials(user: str) -> None:
    store.delete(f"google-creds:{user}")


def delete_saved_secret(name: str) -> None:
    store.delete(f"secret:{name}")
"""

MAIL_TOOLS = """\
import httpx
from mcp.server.fastmcp import FastMCP

from inbox.creds import clear_credentials, delete_saved_secret

mcp = FastMCP("inbox")


@mcp.tool()
def search_mail(user: str, query: str) -> str:
    \"\"\"Search a user's mail.\"\"\"
    response = httpx.get("https://mail.example/search", params={"q": query}, timeout=10)
    if response.status_code == 401:
        clear_credentials(user)
        return "Please sign in again."
    return response.text


@mcp.tool()
def forget_secret(name: str) -> str:
    \"\"\"Delete a saved secret.\"\"\"
    delete_saved_secret(name)
    return "deleted"
"""


def test_stored_credentials_cleared_after_an_auth_error_are_not_the_tools_deletion(
    scan_files: ScanFiles,
) -> None:
    """``clear_credentials(user)`` dropping a stored token after a 401 makes the user sign in
    again: plumbing, so the search stays a read; a helper that says it deletes a secret
    still deletes."""
    verdicts = tool_verdicts(
        scan_files,
        {
            "inbox/__init__.py": "",
            "inbox/creds.py": STORED_CREDENTIALS,
            "inbox/tools.py": MAIL_TOOLS,
        },
    )
    assert verdicts["search_mail"] == ("read", set()), verdicts["search_mail"]
    assert verdicts["forget_secret"][0] == "destructive", verdicts["forget_secret"]


def test_bun_sqlite_statements_are_judged_by_their_sql(scan_files: ScanFiles) -> None:
    """Bun's built-in ``bun:sqlite``: ``db.prepare("INSERT ...").run(...)`` and ``db.run(
    "DELETE ...")`` write the local database, ``db.query("SELECT ...").all()`` reads it."""
    source = (
        "import { Database } from 'bun:sqlite';\n"
        "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\n"
        "import { z } from 'zod';\n\n"
        "const db = new Database('tasks.db');\n"
        "const server = new McpServer({ name: 'tasks', version: '1.0.0' });\n\n"
        "server.tool('add_task', { title: z.string() }, async ({ title }) => {\n"
        "  db.prepare('INSERT INTO tasks (title) VALUES (?)').run(title);\n"
        "  return { content: [{ type: 'text', text: 'added' }] };\n"
        "});\n\n"
        "server.tool('drop_done', {}, async () => {\n"
        "  db.run('DELETE FROM tasks WHERE done = 1');\n"
        "  return { content: [{ type: 'text', text: 'dropped' }] };\n"
        "});\n\n"
        "server.tool('list_tasks', {}, async () => {\n"
        "  const rows = db.query('SELECT title FROM tasks').all();\n"
        "  return { content: [{ type: 'text', text: JSON.stringify(rows) }] };\n"
        "});\n"
    )
    tools = {t.name: t for t in scan_files({"src/server.ts": source}).project.tools}
    assert {e.kind for e in tools["add_task"].effects} == {"write"}
    assert {e.kind for e in tools["drop_done"].effects} == {"write"}
    assert tools["list_tasks"].effects == []


def test_a_command_run_by_zx_is_an_execution(scan_files: ScanFiles) -> None:
    """zx's ``$``: as a tagged template (``$`git push origin ${branch}``) or called with
    the command's words (``$([command])``), it runs a process on this machine."""
    source = (
        "import { $ } from 'zx';\n"
        "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\n"
        "import { z } from 'zod';\n\n"
        "const server = new McpServer({ name: 'shell', version: '1.0.0' });\n\n"
        "server.tool('push_branch', { branch: z.string() }, async ({ branch }) => {\n"
        "  const out = await $`git push origin ${branch}`;\n"
        "  return { content: [{ type: 'text', text: out.stdout }] };\n"
        "});\n\n"
        "server.tool('run', { command: z.string() }, async ({ command }) => {\n"
        "  const out = await $([command]);\n"
        "  return { content: [{ type: 'text', text: out.stdout }] };\n"
        "});\n"
    )
    tools = {t.name: t for t in scan_files({"src/server.ts": source}).project.tools}
    assert {e.kind for e in tools["push_branch"].effects} == {"exec"}
    assert {e.kind for e in tools["run"].effects} == {"exec"}


CLOSURE_SEND = """\
from langchain_core.tools import tool


def make_tools(channel, guild):
    @tool
    def announce(text: str) -> str:
        \"\"\"Announce something in the channel.\"\"\"
        channel.send(text)
        return "sent"

    @tool
    def post_to(channel_id: str, text: str) -> str:
        \"\"\"Post in another channel.\"\"\"
        target = guild.get_channel(int(channel_id))
        target.send(text)
        return "posted"

    return [announce, post_to]
"""


def test_a_send_on_what_an_enclosing_function_is_handed_is_unknown(
    scan_files: ScanFiles,
) -> None:
    """``channel.send(text)`` in a tool built inside ``make_tools(channel, guild)``, or on a
    channel got from ``guild``: whatever the caller hands decides, so the send is an unknown
    effect, never a read (a generator's ``send`` is a container method too)."""
    verdicts = tool_verdicts(scan_files, {"bot/tools.py": CLOSURE_SEND})
    assert verdicts["announce"][0] == "unknown"
    assert verdicts["post_to"][0] == "unknown"


def test_a_query_handed_an_options_object_with_no_statement_is_no_sql(
    scan_files: ScanFiles,
) -> None:
    """``calendar.freebusy.query({requestBody: {...}})`` is an API's query method, not a
    SQL driver's: its options hold no statement, so its name decides (it reads). A
    node-postgres query handed ``{text, values}`` is judged by its statement still."""
    source = (
        "import { google, calendar_v3 } from 'googleapis';\n"
        "import { Pool } from 'pg';\n"
        "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\n"
        "import { z } from 'zod';\n\n"
        "function calendarClient(): calendar_v3.Calendar {\n"
        "  return google.calendar({ version: 'v3' });\n"
        "}\n\n"
        "const pool = new Pool();\n"
        "const server = new McpServer({ name: 'cal', version: '1.0.0' });\n\n"
        "server.tool('free_busy', { from: z.string(), to: z.string() }, async ({ from, to }) => {\n"
        "  const calendar = calendarClient();\n"
        "  const res = await calendar.freebusy.query({ requestBody: { timeMin: from, timeMax: to } });\n"
        "  return { content: [{ type: 'text', text: JSON.stringify(res.data) }] };\n"
        "});\n\n"
        "server.tool('log_slot', { from: z.string() }, async ({ from }) => {\n"
        "  await pool.query({ text: 'INSERT INTO slots (start) VALUES ($1)', values: [from] });\n"
        "  return { content: [{ type: 'text', text: 'logged' }] };\n"
        "});\n"
    )
    verdicts = tool_verdicts(scan_files, {"src/server.ts": source})
    assert verdicts["free_busy"] == ("read", set())
    assert verdicts["log_slot"][0] == "write"
