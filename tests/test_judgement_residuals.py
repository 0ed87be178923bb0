"""Residual judgement errors on code nobody tuned to: a tool that changes the run context
its framework hands it, and calls on objects whose origin is unknown. Each case is a small
agent project written for the test; the assertions are the verdict a user reads in the
report (the tool's risk) and the findings it gets."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles, tool_verdicts

# -- a tool named for a change that makes it in the run context is a local write ----------

AIRLINE = {
    "tools.py": textwrap.dedent(
        '''
        from agents import RunContextWrapper, function_tool


        class Booking:
            seat: str | None = None
            status: str | None = None


        @function_tool
        async def update_seat(context: RunContextWrapper[Booking], seat: str) -> str:
            """Move the passenger to another seat."""
            context.context.seat = seat
            return f"seat {seat}"


        @function_tool
        async def cancel_booking(context: RunContextWrapper[Booking]) -> str:
            """Cancel the booking."""
            booking = context.context
            booking.status = "cancelled"
            return "cancelled"


        @function_tool
        async def get_booking_status(context: RunContextWrapper[Booking], code: str) -> str:
            """Look up the booking status."""
            context.context.status = context.context.status or "confirmed"
            return context.context.status
        '''
    )
}


def test_tool_named_for_a_change_to_its_run_context_is_not_read(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, AIRLINE)
    for name in ("update_seat", "cancel_booking"):
        risk, codes = verdicts[name]
        assert risk == "write", name
        # the state lives in the process: no remote write, no key to ask for
        assert "AG201" not in codes, name


def test_lookup_that_notes_what_it_found_in_the_context_stays_read(scan_files: ScanFiles) -> None:
    risk, codes = tool_verdicts(scan_files, AIRLINE)["get_booking_status"]
    assert risk == "read"
    assert not codes & {"AG101", "AG102", "AG201"}


# -- a call into a service's SDK that no entry knows goes to the service: unknown, not read --

BILLING = {
    "server.py": textwrap.dedent(
        '''
        import stripe
        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("billing")


        @mcp.tool()
        def finalize_invoice(invoice: str) -> dict:
            """Finalize a draft invoice so it can be paid."""
            params: dict = {"invoice": invoice}
            finalized = stripe.Invoice.finalize_invoice(**params)
            return {"id": finalized.id, "status": finalized.status}


        @mcp.tool()
        def list_invoices(customer: str) -> list:
            """List a customer's invoices."""
            return [i.id for i in stripe.Invoice.list(customer=customer)]
        '''
    )
}


def test_uncatalogued_method_of_a_payment_sdk_is_unknown_not_read(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, BILLING)
    assert verdicts["finalize_invoice"][0] == "unknown"
    assert verdicts["list_invoices"][0] == "read"


# -- a write verb on a client of unknown origin keeps the tool from being read -------------

HANDED_CLIENT = {
    "server.py": textwrap.dedent(
        '''
        from mcp.server.fastmcp import FastMCP

        from .wiring import make_backend

        mcp = FastMCP("crm")
        backend = make_backend()


        @mcp.tool()
        def archive_contact(contact_id: str) -> str:
            """Archive a contact."""
            backend.delete_contact(contact_id)
            return "archived"


        @mcp.tool()
        def tally(words: list[str]) -> int:
            """Count words."""
            seen: dict[str, int] = {}
            for word in words:
                seen.update({word: seen.get(word, 0) + 1})
            return len(seen)
        '''
    ),
    "wiring.py": textwrap.dedent(
        """
        import importlib
        import os


        def make_backend():
            module = importlib.import_module(os.environ["CRM_BACKEND"])
            return module.Backend()
        """
    ),
}


def test_write_verb_on_an_object_of_unknown_origin_is_not_read(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, HANDED_CLIENT)
    assert verdicts["archive_contact"][0] != "read"
    # a dict built in the tool stays in the process: its update changes nothing outside
    assert verdicts["tally"][0] == "read"


# -- what a class's attribute holds is traced to where it was bound ------------------------

BOOKINGS = {
    "store.py": textwrap.dedent(
        """
        import boto3


        class TableClient:
            def __init__(self) -> None:
                self.resource = boto3.resource("dynamodb", region_name="eu-west-1")
                self.table = self.resource.Table("bookings")

            def put(self, item: dict) -> None:
                self.table.put_item(Item=item)

            def scan(self) -> list:
                return self.table.scan().get("Items", [])


        table_client = TableClient()
        """
    ),
    "repository.py": textwrap.dedent(
        """
        from vendored_queue import connect

        from store import table_client


        class Bookings:
            def __init__(self) -> None:
                self.client = table_client
                self.link = connect("amqp://broker")
                self.channel = self.link.channel()

            def add(self, name: str) -> None:
                self.client.put({"name": name})

            def all(self) -> list:
                return self.client.scan()

            def announce(self, name: str) -> None:
                self.channel.publish_message(name)


        bookings = Bookings()
        """
    ),
    "tools.py": textwrap.dedent(
        '''
        from strands import tool

        from repository import bookings


        @tool
        def book_table(name: str) -> str:
            """Book a table."""
            bookings.add(name)
            return "booked"


        @tool
        def list_bookings() -> list:
            """List the bookings."""
            return bookings.all()


        @tool
        def announce_booking(name: str) -> str:
            """Tell the staff about a booking."""
            bookings.announce(name)
            return "announced"
        '''
    ),
}


def test_an_attribute_bound_to_a_module_instance_or_built_from_another_is_followed(
    scan_files: ScanFiles,
) -> None:
    """``self.client = table_client`` (another module's ``TableClient()``) runs that class's
    methods, and ``self.table = self.resource.Table(name)`` with ``self.resource =
    boto3.resource("dynamodb")`` is a DynamoDB table: its ``put_item`` writes, its ``scan``
    reads. A write verb on what a package's call handed the class (``self.channel``, from
    ``connect(url).channel()``) is unknown, never a read."""
    verdicts = tool_verdicts(scan_files, BOOKINGS)
    assert verdicts["book_table"][0] == "write"
    assert verdicts["list_bookings"] == ("read", set())
    assert verdicts["announce_booking"][0] == "unknown"


# -- Google ADK's session state, set through the tool context, is a local write -----------

SHOP_STATE = {
    "agent.py": textwrap.dedent(
        '''
        from google.adk.agents import Agent
        from google.adk.tools import ToolContext


        def save_cart(item: str, quantity: int, tool_context: ToolContext) -> dict:
            """Save the cart in the session."""
            tool_context.state["item"] = item
            tool_context.state["quantity"] = quantity
            return {"status": "saved"}


        def forget_address(tool_context: ToolContext) -> dict:
            """Forget the shipping address."""
            tool_context.state.pop("address", None)
            return {"status": "forgotten"}


        def show_cart(tool_context: ToolContext) -> dict:
            """Show the cart."""
            return {"item": tool_context.state.get("item")}


        root_agent = Agent(
            name="shop", model="gemini-2.5-flash", tools=[save_cart, forget_address, show_cart]
        )
        '''
    )
}


def test_a_tool_that_sets_adk_session_state_writes_and_one_that_reads_it_reads(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, SHOP_STATE)
    for name in ("save_cart", "forget_address"):
        risk, codes = verdicts[name]
        assert risk == "write", name
        assert "AG201" not in codes, name  # the state lives in the session: no remote write
    assert verdicts["show_cart"] == ("read", set())


# -- a model class of an ODM or ORM: the methods it inherits write the app's database ------

ACTIVE_RECORDS = {
    "models.py": textwrap.dedent(
        """
        from beanie import Document
        from django.db import models


        class Task(Document):
            title: str
            status: str = "open"


        class Note(models.Model):
            text = models.TextField()
            done = models.BooleanField(default=False)
        """
    ),
    "tools.py": textwrap.dedent(
        '''
        from langchain_core.tools import tool

        from models import Note, Task


        @tool
        async def add_task(title: str) -> str:
            """Add a task."""
            task = Task(title=title)
            await task.insert()
            return "added"


        @tool
        async def close_task(task_id: str) -> str:
            """Close a task."""
            task = await Task.get(task_id)
            task.status = "done"
            await task.save()
            return "closed"


        @tool
        async def open_tasks() -> list:
            """List the open tasks."""
            return await Task.find(Task.status == "open").to_list()


        @tool
        def add_note(text: str) -> str:
            """Add a note."""
            Note.objects.create(text=text)
            return "added"


        @tool
        def purge_notes() -> str:
            """Remove the finished notes."""
            Note.objects.filter(done=True).delete()
            return "purged"


        @tool
        def list_notes() -> list:
            """List the notes to do."""
            return [note.text for note in Note.objects.filter(done=False)]
        '''
    ),
}


def test_methods_a_model_class_inherits_from_an_odm_or_orm_are_judged_as_the_packages(
    scan_files: ScanFiles,
) -> None:
    """``task.insert()`` on a ``Task(beanie.Document)`` and ``Note.objects.create(...)`` on
    a Django model are the package's writes; their lookups read. A write verb on what the
    package's lookup returned (``task = await Task.get(id)``, then ``task.save()``) is
    unknown, never a read."""
    verdicts = tool_verdicts(scan_files, ACTIVE_RECORDS)
    assert verdicts["add_task"][0] == "write"
    assert verdicts["add_note"][0] == "write"
    assert verdicts["purge_notes"][0] == "destructive"
    assert verdicts["close_task"][0] == "unknown"
    for name in ("open_tasks", "list_notes"):
        assert verdicts[name] == ("read", set()), name


# -- an index kept across calls and filled on the first use of its key is set-up -----------

NOTES_INDEX = {
    "tools.py": textwrap.dedent(
        '''
        import os

        import requests
        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("notes")


        class NoteIndex:
            loaded: dict[str, "NoteIndex"] = {}

            def __init__(self, folder: str) -> None:
                self.folder = folder

            @staticmethod
            def get(folder: str) -> "NoteIndex":
                if NoteIndex.loaded.get(folder) is None:
                    os.makedirs(folder, exist_ok=True)
                    with open(os.path.join(folder, "index.json"), "w") as out:
                        out.write("{}")
                    NoteIndex.loaded[folder] = NoteIndex(folder)
                return NoteIndex.loaded[folder]

            def search(self, text: str) -> list[str]:
                return [name for name in os.listdir(self.folder) if text in name]


        @mcp.tool()
        def search_notes(text: str) -> list[str]:
            """Search the notes."""
            return NoteIndex.get("notes").search(text)


        @mcp.tool()
        def share_note(name: str) -> str:
            """Share a note with the team."""
            cache: dict[str, str] = {}
            if name not in cache:
                requests.post("https://share.example.com/notes", json={"name": name})
                cache[name] = "shared"
            return cache[name]
        '''
    )
}


def test_index_built_on_first_use_of_its_key_is_set_up_not_the_tools_effect(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, NOTES_INDEX)
    risk, codes = verdicts["search_notes"]
    assert risk == "read"
    assert not codes & {"AG101", "AG102", "AG201"}
    # a mapping made in the call is no index kept across calls: its write is the tool's
    assert verdicts["share_note"][0] == "network_write"


# -- a vector index kept on this machine is a local store: its writes are not remote -------

MEMORY = {
    "memory.py": textwrap.dedent(
        '''
        from langchain_community.vectorstores import FAISS
        from langchain_core.documents import Document


        class NotesIndex(FAISS):
            """The agent's memory: a FAISS index saved next to the project."""


        class Memory:
            def __init__(self, db: NotesIndex) -> None:
                self.db = db

            async def remember(self, text: str) -> list[str]:
                return await self.db.aadd_documents([Document(page_content=text)])
        '''
    ),
    "tools.py": textwrap.dedent(
        '''
        from mcp.server.fastmcp import FastMCP

        from .memory import Memory, NotesIndex
        from .vendor import crm_client

        mcp = FastMCP("memory")
        memory = Memory(NotesIndex.load_local("memory", None))


        @mcp.tool()
        async def save_memory(text: str) -> str:
            """Save a memory for later."""
            ids = await memory.remember(text)
            return ids[0]


        @mcp.tool()
        async def add_lead(name: str) -> str:
            """Add a sales lead."""
            crm_client.add_lead(name=name)
            return "added"
        '''
    ),
}


def test_write_to_a_local_vector_index_is_a_local_write(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, MEMORY)
    risk, codes = verdicts["save_memory"]
    assert risk == "write"
    assert "AG201" not in codes  # no remote write: no idempotency key to ask for
    # a client of a service is no local store: its add still goes out
    assert verdicts["add_lead"][0] == "network_write"


# -- a helper that runs a handed function here or ships it by name to run elsewhere --------

REMOTE_RUN = {
    "runner.py": textwrap.dedent(
        '''
        import inspect
        import os

        import httpx


        async def _remote_call(url: str, function_name: str, args: list) -> object:
            async with httpx.AsyncClient() as http:
                answer = await http.post(url, json={"function": function_name, "args": args})
                return answer.json()["result"]


        async def run_here_or_there(func, *args):
            """In development the code runs in a sandbox; the function is called there."""
            if os.environ.get("SANDBOX_URL"):
                return await _remote_call(
                    os.environ["SANDBOX_URL"], function_name=func.__name__, args=list(args)
                )
            if inspect.iscoroutinefunction(func):
                return await func(*args)
            return func(*args)
        '''
    ),
    "files.py": textwrap.dedent(
        """
        import os


        def exists(path: str) -> bool:
            return os.path.exists(path)


        def remove(path: str) -> None:
            os.remove(path)
        """
    ),
    "tools.py": textwrap.dedent(
        '''
        from mcp.server.fastmcp import FastMCP

        from . import files
        from .runner import run_here_or_there

        mcp = FastMCP("files")


        @mcp.tool()
        async def image_for_model(path: str) -> bool:
            """An image handed to the model by its path."""
            return await run_here_or_there(files.exists, path)


        @mcp.tool()
        async def delete_file(path: str) -> str:
            """Delete a file."""
            await run_here_or_there(files.remove, path)
            return "deleted"
        '''
    ),
}


def test_function_shipped_by_name_to_run_elsewhere_has_its_own_effect(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, REMOTE_RUN)
    risk, codes = verdicts["image_for_model"]
    assert risk == "read"  # the POST only carries `exists` to where it runs
    assert not codes & {"AG101", "AG201"}
    assert verdicts["delete_file"][0] == "destructive"


# -- a write behind an operator's setting that is off by default is not the tool's effect --

SEARCH = {
    "search_tool.py": textwrap.dedent(
        """
        import json
        from typing import Any

        import requests
        from crewai.tools import BaseTool
        from pydantic import BaseModel


        class SearchInput(BaseModel):
            query: str


        def _keep_copy(text: str) -> None:
            with open("last_search.json", "w") as out:
                out.write(text)


        class WebSearchTool(BaseTool):
            name: str = "web_search"
            description: str = "Search the web."
            args_schema: type[BaseModel] = SearchInput
            keep_copy: bool = False

            def _run(self, **kwargs: Any) -> Any:
                answer = requests.get("https://search.example.com", params={"q": kwargs["query"]})
                results = answer.json()
                keep_copy = kwargs.get("keep_copy", self.keep_copy)
                if keep_copy:
                    _keep_copy(json.dumps(results))
                return results


        class ReportTool(BaseTool):
            name: str = "report_writer"
            description: str = "Write the report."
            args_schema: type[BaseModel] = SearchInput
            to_disk: bool = True

            def _run(self, **kwargs: Any) -> Any:
                if self.to_disk:
                    _keep_copy(kwargs["query"])
                return "done"
        """
    )
}


def test_write_behind_a_setting_off_by_default_is_not_the_tools_effect(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, SEARCH)
    risk, codes = verdicts["web_search"]
    assert risk == "read"
    assert "AG101" not in codes
    # on by default: the write is what the tool does
    assert verdicts["report_writer"][0] == "write"


# -- a guess says it is one; what is not judged is reported unknown ------------------------

GUESSED = {
    "server.py": textwrap.dedent(
        '''
        from mcp.server.fastmcp import FastMCP

        from vendor_sdk import make_client

        mcp = FastMCP("crm")
        crm_client = make_client()


        @mcp.tool()
        def add_lead(name: str) -> str:
            """Add a sales lead."""
            crm_client.add_lead(name=name)
            return "added"


        @mcp.tool()
        def lead_score(name: str) -> int:
            """Score of a lead."""
            return crm_client.score(name)
        '''
    )
}


def test_effect_judged_by_a_guess_says_so_in_the_message_and_confidence(
    scan_files: ScanFiles,
) -> None:
    result = scan_files(GUESSED)
    undeclared = [f for f in result.findings if f.code == "AG101" and f.tool == "add_lead"]
    assert undeclared
    assert undeclared[0].confidence.value in {"low", "medium"}
    assert "a guess at" in undeclared[0].message


def test_call_not_judged_is_reported_unknown_never_safe(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, GUESSED)
    risk, codes = verdicts["lead_score"]
    assert risk == "unknown"
    assert "AG104" in codes


# -- a handler that continues only on the loop's last pass runs nothing again -------------

SHELL = {
    "tools.py": textwrap.dedent(
        '''
        import subprocess

        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("shell")
        sessions: dict[int, subprocess.Popen] = {}


        def _reconnect() -> None:
            sessions.clear()


        @mcp.tool()
        def run_command(command: str) -> str:
            """Run a shell command."""
            for attempt in range(2):
                try:
                    done = subprocess.run(command, shell=True, capture_output=True, text=True)
                    return done.stdout
                except OSError:
                    if attempt == 1:
                        _reconnect()
                        continue
                    else:
                        raise
            return ""


        @mcp.tool()
        def run_again(command: str) -> str:
            """Run a shell command, again on failure."""
            for attempt in range(3):
                try:
                    done = subprocess.run(command, shell=True, capture_output=True, text=True)
                    return done.stdout
                except OSError:
                    if attempt == 0:
                        continue
                    raise
            return ""
        '''
    )
}


def test_continue_on_the_last_pass_only_is_no_retry(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, SHELL)
    assert not verdicts["run_command"][1] & {"AG901", "AG902", "AG903", "AG904"}
    # a continue on an earlier pass sends the command again
    assert verdicts["run_again"][1] & {"AG902", "AG903"}


# -- a callable a project function returns, called, runs code no reader can name -----------

INTERPRETER = {
    "tools.py": textwrap.dedent(
        """
        import ast

        from smolagents import Tool


        def _evaluate(node, state):
            if isinstance(node, ast.Call):
                func = _evaluate(node.func, state)
                return func(*[_evaluate(arg, state) for arg in node.args])
            if isinstance(node, ast.Name):
                return state[node.id]
            if isinstance(node, ast.Constant):
                return node.value
            raise ValueError("unsupported expression")


        def evaluate_code(code: str, state: dict) -> object:
            result = None
            for statement in ast.parse(code).body:
                result = _evaluate(statement.value, state)
            return result


        class CalculatorTool(Tool):
            name = "calculator"
            description = "Evaluates a Python expression."
            inputs = {"code": {"type": "string", "description": "the expression"}}
            output_type = "string"

            def forward(self, code: str) -> str:
                return str(evaluate_code(code, {"print": print, "open": open}))
        """
    )
}


def test_callable_returned_by_a_project_function_is_unknown_not_read(
    scan_files: ScanFiles,
) -> None:
    assert tool_verdicts(scan_files, INTERPRETER)["calculator"][0] == "unknown"


# -- a module variable bound to a package's client factory is that package's client -------

NOTES_DB = {
    "db.py": textwrap.dedent(
        """
        import os

        from supabase import create_client

        supabase = create_client(os.environ["SUPABASE_URL"], os.environ["SUPABASE_KEY"])
        """
    ),
    "agent.py": textwrap.dedent(
        '''
        from langchain_core.tools import tool

        from db import supabase


        @tool
        def add_note(text: str) -> str:
            """Save a note."""
            supabase.table("notes").insert({"text": text}).execute()
            return "saved"


        @tool
        def list_notes() -> list:
            """List the notes."""
            return supabase.table("notes").select("*").execute().data
        '''
    ),
}


def test_a_module_variable_bound_to_a_client_factory_is_the_packages_client(
    scan_files: ScanFiles,
) -> None:
    """``supabase = create_client(...)`` in another module: ``supabase.table("notes").insert``
    is Supabase's insert into the application's own database (a local write, no AG201 for a
    remote create), and the ``select`` beside it reads."""
    verdicts = tool_verdicts(scan_files, NOTES_DB)
    risk, codes = verdicts["add_note"]
    assert risk == "write"
    assert "AG201" not in codes
    assert verdicts["list_notes"] == ("read", set())


# -- a chain started on what a project helper returns: the client the helper builds -------

CALENDAR = {
    "gcal/__init__.py": "",
    "gcal/client.py": textwrap.dedent(
        '''
        from googleapiclient.discovery import build

        from gcal.auth import load_credentials


        def _service():
            """The calendar service."""
            return build("calendar", "v3", credentials=load_credentials())


        def calendar():
            return _service()


        def remove_event(event_id: str) -> None:
            _service().events().delete(calendarId="primary", eventId=event_id).execute()


        def upcoming() -> list:
            return _service().events().list(calendarId="primary").execute().get("items", [])
        '''
    ),
    "gcal/auth.py": textwrap.dedent(
        """
        import json


        def load_credentials() -> dict:
            with open("token.json") as handle:
                return json.load(handle)
        """
    ),
    "agent.py": textwrap.dedent(
        '''
        from langchain_core.tools import tool

        from gcal.client import calendar, remove_event, upcoming


        @tool
        def delete_calendar_event(event_id: str) -> str:
            """Delete an event from the calendar."""
            remove_event(event_id)
            return "deleted"


        @tool
        def move_calendar_event(event_id: str, start: str) -> str:
            """Move an event to another start time."""
            events = calendar().events()
            events.patch(calendarId="primary", eventId=event_id, body={"start": start}).execute()
            return "moved"


        @tool
        def list_calendar_events() -> list:
            """List the coming events."""
            return upcoming()
        '''
    ),
}


def test_a_request_built_on_the_client_a_project_helper_returns_is_judged_by_its_verb(
    scan_files: ScanFiles,
) -> None:
    """``_service().events().delete(...).execute()``, where the project's ``_service()``
    returns ``build("calendar", "v3")``, deletes; so does a patch on what another helper
    hands on from it. Before, the chain's start (a project call) hid the client and the
    destructive tool was reported read."""
    verdicts = tool_verdicts(scan_files, CALENDAR)
    assert verdicts["delete_calendar_event"][0] == "destructive"
    assert verdicts["move_calendar_event"][0] == "write"
    assert verdicts["list_calendar_events"] == ("read", set())


DRIVE = {
    "drive.py": textwrap.dedent(
        '''
        import io

        from googleapiclient.discovery import build
        from googleapiclient.http import MediaIoBaseDownload
        from langchain_core.tools import tool


        @tool
        def read_drive_file(file_id: str) -> str:
            """Read a file from Google Drive."""
            service = build("drive", "v3")
            buffer = io.BytesIO()
            downloader = MediaIoBaseDownload(buffer, service.files().get_media(fileId=file_id))
            done = False
            while not done:
                _, done = downloader.next_chunk()
            return buffer.getvalue().decode()
        '''
    )
}


def test_a_drive_media_download_reads(scan_files: ScanFiles) -> None:
    """googleapiclient's documented download loop (``downloader.next_chunk()`` until done)
    fetches the file: a read, not an unknown call."""
    assert tool_verdicts(scan_files, DRIVE)["read_drive_file"] == ("read", set())


# -- A value taken out of the tool's keyword arguments is untyped like a parameter ---------

PROFILE = {
    "assistant/llm/user_profile.py": textwrap.dedent(
        """
        import json
        from pathlib import Path


        class UserProfile:
            def __init__(self, path: Path):
                self.path = path
                self.data = {"preferences": {}}

            def _save(self) -> None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "w") as f:
                    json.dump(self.data, f)

            def set_preference(self, key: str, value: str) -> None:
                self.data["preferences"][key] = value
                self._save()

            def get_preference(self, key: str) -> str:
                return self.data["preferences"].get(key, "")
        """
    ),
    "assistant/tools/base.py": textwrap.dedent(
        """
        from abc import ABC, abstractmethod


        class Tool(ABC):
            @property
            @abstractmethod
            def name(self) -> str: ...

            @property
            @abstractmethod
            def description(self) -> str: ...

            @property
            @abstractmethod
            def parameters(self) -> list[dict]: ...

            @abstractmethod
            def execute(self, **kwargs) -> dict: ...
        """
    ),
    "assistant/tools/builtin/profile_tools.py": textwrap.dedent(
        '''
        from ..base import Tool


        class RememberPreference(Tool):
            @property
            def name(self) -> str:
                return "remember_preference"

            @property
            def description(self) -> str:
                return "Remember something the user prefers."

            @property
            def parameters(self) -> list[dict]:
                return [{"name": "key"}, {"name": "value"}]

            def execute(self, key: str, value: str, **kwargs) -> dict:
                """Remember something the user prefers."""
                profile = kwargs.get("_profile")
                if not profile:
                    return {"ok": False}
                profile.set_preference(key, value)
                return {"ok": True}


        class RecallPreference(Tool):
            @property
            def name(self) -> str:
                return "recall_preference"

            @property
            def description(self) -> str:
                return "Recall something the user prefers."

            @property
            def parameters(self) -> list[dict]:
                return [{"name": "key"}]

            def execute(self, key: str, **kwargs) -> dict:
                """Recall something the user prefers."""
                profile = kwargs["_profile"]
                return {"value": profile.get_preference(key)}
        '''
    ),
    "assistant/tools/registry.py": textwrap.dedent(
        """
        from openai import OpenAI

        from .builtin.profile_tools import RecallPreference, RememberPreference

        TOOLS = {tool.name: tool for tool in (RememberPreference(), RecallPreference())}


        def ask(messages: list) -> object:
            specs = [
                {"type": "function", "function": {"name": t.name, "parameters": {"type": "object"}}}
                for t in TOOLS.values()
            ]
            return OpenAI().chat.completions.create(model="m", messages=messages, tools=specs)
        """
    ),
}


def test_a_method_on_what_the_tools_keyword_arguments_carry_is_the_projects_one_method(
    scan_files: ScanFiles,
) -> None:
    """``profile = kwargs.get("_profile")``, injected by the project's runner: of no type
    the code says, as a parameter is, so ``profile.save_preference(...)`` runs the
    project's one method so named (it writes a file), not nothing."""
    verdicts = tool_verdicts(scan_files, PROFILE)
    assert verdicts["remember_preference"][0] == "write"
    assert verdicts["recall_preference"][0] == "read"
