"""A resource built lazily on first use (``if self.session is None: ... self.session =
...``) is the object's set-up, made once: a tool that reaches it through a getter does not
make its effects, and a retry does not repeat them."""

from __future__ import annotations

from .conftest import ScanFiles, tool_verdicts
from .test_effects import effects_of

BROWSER = """\
import subprocess

import httpx
from langchain_core.tools import tool


class Browser:
    def __init__(self):
        self.process = None
        self.client = httpx.Client()

    def _launch(self):
        self.process = subprocess.Popen(["chromium", "--headless"])
        return self.process

    def ensure(self):
        if self.process is None:
            return self._launch()
        return self.process

    def page(self, url: str) -> str:
        self.ensure()
        return self.client.get(url).text

    def submit(self, url: str, form: dict) -> str:
        if not self.process:
            self._launch()
        return self.client.post(url, data=form).text


BROWSER_INSTANCE = Browser()


@tool
def read_page(url: str) -> str:
    \"\"\"Read a page.\"\"\"
    return BROWSER_INSTANCE.page(url)


@tool
def submit_form(url: str, form: dict) -> str:
    \"\"\"Submit a form.\"\"\"
    return BROWSER_INSTANCE.submit(url, form)
"""


def test_a_lazily_launched_process_is_not_the_effect_of_a_tool_using_it(
    scan_files: ScanFiles,
) -> None:
    files = {"web/tools.py": BROWSER}
    assert {e.kind for e in effects_of(scan_files, files, "read_page")} <= {"read"}
    assert {e.kind for e in effects_of(scan_files, files, "submit_form")} == {"network_write"}


SEARCH_SERVER = """\
import json
import os
import uuid
from pathlib import Path

from elasticsearch import Elasticsearch
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("search")
_es = None


def _install_id() -> str:
    path = Path.home() / ".search-mcp" / "id"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(uuid.uuid4()))
    return path.read_text()


def client() -> Elasticsearch:
    global _es
    if _es is None:
        _es = Elasticsearch(os.environ["ES_URL"], headers={"x-install": _install_id()})
        if not _es.indices.exists(index="docs"):
            _es.indices.create(index="docs")
    return _es


@mcp.tool()
def search_docs(query: str) -> str:
    \"\"\"Search the documents.\"\"\"
    hits = client().search(index="docs", query={"match": {"text": query}})
    return json.dumps(hits["hits"]["hits"])


@mcp.tool()
def add_doc(text: str) -> str:
    \"\"\"Add a document.\"\"\"
    es = client()
    return es.index(index="docs", document={"text": text})["_id"]
"""


def test_a_global_client_made_on_first_use_with_its_index_is_set_up(
    scan_files: ScanFiles,
) -> None:
    """``global _es; if _es is None: _es = Elasticsearch(...)``, creating the index and an
    install-id file on the way: set-up, not the effect of the search that asks for the
    client. The add's own ``index`` call stores a new document on every call."""
    verdicts = tool_verdicts(scan_files, {"server.py": SEARCH_SERVER})
    assert verdicts["search_docs"] == ("read", set())
    assert verdicts["add_doc"][0] == "write"
    assert "AG201" in verdicts["add_doc"][1]


def test_a_module_flag_another_function_sets_under_global_marks_set_up(
    scan_files: ScanFiles,
) -> None:
    """``if not _ready: init_store()`` where ``init_store`` sets ``global _ready``: the table
    it creates on first use is set-up, not the effect of the read tool asking for it."""
    source = """\
import sqlite3

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("notes")
_ready = False


def init_store() -> None:
    global _ready
    conn = sqlite3.connect("notes.db")
    conn.execute("CREATE TABLE notes (title TEXT)")
    conn.commit()
    _ready = True


@mcp.tool()
def list_notes() -> list:
    \"\"\"List the notes.\"\"\"
    if not _ready:
        init_store()
    return sqlite3.connect("notes.db").execute("SELECT title FROM notes").fetchall()
"""
    verdicts = tool_verdicts(scan_files, {"server.py": source})
    assert verdicts["list_notes"] == ("read", set())


SOCIAL_SERVER = """\
import json
import os
from pathlib import Path

import twikit
from google.oauth2.credentials import Credentials
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("social")
COOKIES = Path.home() / ".social-mcp" / "cookies.json"


async def social_client() -> twikit.Client:
    client = twikit.Client("en-US")
    if COOKIES.exists():
        client.load_cookies(COOKIES)
    else:
        await client.login(auth_info_1=os.environ["SOCIAL_USER"], password=os.environ["SOCIAL_PASSWORD"])
        COOKIES.parent.mkdir(parents=True, exist_ok=True)
        client.save_cookies(COOKIES)
    return client


def calendar_credentials() -> Credentials:
    creds = None
    if os.path.exists("token.json"):
        creds = Credentials.from_authorized_user_file("token.json")
    if not creds or not creds.valid:
        creds = Credentials(os.environ["CALENDAR_TOKEN"])
        with open("token.json", "w") as token:
            token.write(creds.to_json())
    return creds


@mcp.tool()
async def search_posts(query: str) -> str:
    \"\"\"Search posts.\"\"\"
    client = await social_client()
    return json.dumps([p.text for p in await client.search_tweet(query, "Latest")])


@mcp.tool()
def calendar_owner() -> str:
    \"\"\"Who owns the calendar.\"\"\"
    return calendar_credentials().client_id


@mcp.tool()
def save_draft(path: str, text: str) -> str:
    \"\"\"Save a draft to a file the user names, unless one is there.\"\"\"
    if os.path.exists(path):
        return "exists"
    with open(path, "w") as handle:
        handle.write(text)
    return "saved"
"""


def test_a_login_or_token_file_written_when_missing_is_set_up(scan_files: ScanFiles) -> None:
    """Cookies saved after a login when the cookie file is missing, and the OAuth
    quickstart's ``token.json`` written when the token is missing or stale: a file kept
    across calls at a path fixed in the code, set-up of the client the read tools ask for.
    A file at a path the caller names, written when it is missing, is the call's own
    write."""
    verdicts = tool_verdicts(scan_files, {"server.py": SOCIAL_SERVER})
    assert verdicts["search_posts"] == ("read", set())
    assert verdicts["calendar_owner"] == ("read", set())
    assert verdicts["save_draft"][0] == "write"


NOTES_TOOL = """\
import os

from llama_index.core.tools import FunctionTool

NOTES = os.path.join("data", "notes.txt")


def save_note(note: str) -> str:
    if not os.path.exists(NOTES):
        open(NOTES, "w").close()
    with open(NOTES, "a") as handle:
        handle.write(note + "\\n")
    return "note saved"


def load_notes() -> str:
    if not os.path.exists(NOTES):
        return ""
    with open(NOTES) as handle:
        return handle.read()


note_saver = FunctionTool.from_defaults(fn=save_note, name="note_saver")
note_reader = FunctionTool.from_defaults(fn=load_notes, name="note_reader")
"""


def test_a_file_created_when_missing_then_appended_to_on_every_call_is_the_tools_write(
    scan_files: ScanFiles,
) -> None:
    """Creating the notes file when it is missing is set-up, but the append after it runs on
    every call: the tool writes, and a retry adds the note twice. Reading the same file,
    tested for first, stays a read."""
    verdicts = tool_verdicts(scan_files, {"notes.py": NOTES_TOOL})
    assert verdicts["note_saver"][0] == "write"
    assert verdicts["note_reader"] == ("read", set())


JOURNAL_SERVER = """\
import sqlite3
from pathlib import Path

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("journal")
ROOT = Path.home() / ".journal"


def workspace(name: str) -> Path:
    folder = ROOT / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def connect() -> sqlite3.Connection:
    conn = sqlite3.connect(ROOT / "journal.db")
    conn.execute("CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("CREATE INDEX IF NOT EXISTS entries_text ON entries(text)")
    return conn


@mcp.tool()
def search_entries(query: str) -> list:
    \"\"\"Search the journal.\"\"\"
    rows = connect().execute("SELECT text FROM entries WHERE text LIKE ?", (f"%{query}%",))
    return [row[0] for row in rows]


@mcp.tool()
def list_notes(project: str) -> list:
    \"\"\"List a project's notes.\"\"\"
    return sorted(p.name for p in workspace(project).iterdir())


@mcp.tool()
def add_entry(text: str) -> str:
    \"\"\"Add a journal entry.\"\"\"
    with connect() as conn:
        conn.execute("INSERT INTO entries (text) VALUES (?)", (text,))
    return "added"


@mcp.tool()
def make_folder(path: str) -> str:
    \"\"\"Create a folder.\"\"\"
    Path(path).mkdir(parents=True, exist_ok=True)
    return path
"""


def test_a_fixed_schema_and_a_working_folder_made_when_missing_are_set_up(
    scan_files: ScanFiles,
) -> None:
    """``CREATE TABLE IF NOT EXISTS`` in the connection helper, and the folder a getter makes
    when it is missing and returns: set-up, not what the read tools do. An insert is the
    add's own write; a folder made and not handed back is the tool's own effect."""
    verdicts = tool_verdicts(scan_files, {"journal.py": JOURNAL_SERVER})
    assert verdicts["search_entries"] == ("read", set())
    assert verdicts["list_notes"] == ("read", set())
    assert verdicts["add_entry"][0] == "write"
    assert verdicts["make_folder"][0] == "write"


TASK_STORE = """\
import os
import sqlite3

from langchain_core.tools import tool


def database_path() -> str:
    data = os.path.join(os.path.dirname(__file__), "data")
    os.makedirs(data, exist_ok=True)
    return os.path.join(data, "tasks.db")


class TaskStore:
    def __init__(self) -> None:
        self.conn = sqlite3.connect(database_path())
        self.conn.execute("CREATE TABLE IF NOT EXISTS tasks (id INTEGER PRIMARY KEY, text TEXT)")
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(tasks)")}
        if "due" not in columns:
            self.conn.execute("ALTER TABLE tasks ADD COLUMN due TEXT")
        self.conn.execute("ALTER TABLE tasks ADD COLUMN IF NOT EXISTS owner TEXT")

    def pending(self) -> list:
        return [row[0] for row in self.conn.execute("SELECT text FROM tasks")]

    def add(self, text: str) -> None:
        self.conn.execute("INSERT INTO tasks (text) VALUES (?)", (text,))
        self.conn.commit()


@tool
def list_tasks() -> list:
    \"\"\"List the pending tasks.\"\"\"
    return TaskStore().pending()


@tool
def add_task(text: str) -> str:
    \"\"\"Add a task.\"\"\"
    TaskStore().add(text)
    return "added"
"""


def test_a_schema_migrated_on_first_use_and_the_folder_of_its_file_are_set_up(
    scan_files: ScanFiles,
) -> None:
    """A store whose constructor makes the folder of its database file when missing (the
    getter returns a path in it), creates its table if missing and adds a column the table
    lacks (SQLite's migration idiom, or ``ADD COLUMN IF NOT EXISTS``): set-up, so listing
    the tasks stays a read; adding one writes."""
    verdicts = tool_verdicts(scan_files, {"tasks.py": TASK_STORE})
    assert verdicts["list_tasks"] == ("read", set())
    assert verdicts["add_task"][0] == "write"


DRAFTS_SERVER = """\
import os

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("drafts")
DRAFTS = os.path.join(os.path.expanduser("~"), "drafts")


def drafts_folder() -> None:
    os.makedirs(DRAFTS, exist_ok=True)


@mcp.tool()
def list_drafts() -> list:
    \"\"\"List the drafts kept on this machine.\"\"\"
    drafts_folder()
    return sorted(os.listdir(DRAFTS))


@mcp.tool()
def save_draft(name: str, text: str) -> str:
    \"\"\"Save a draft.\"\"\"
    drafts_folder()
    with open(os.path.join(DRAFTS, name), "w") as handle:
        handle.write(text)
    return "saved"


@mcp.tool()
def new_album(name: str) -> str:
    \"\"\"Make a folder for a new album.\"\"\"
    os.makedirs(os.path.join(DRAFTS, name), exist_ok=True)
    return "made"
"""


def test_a_fixed_folder_made_when_missing_is_set_up_and_what_is_done_in_it_the_tools(
    scan_files: ScanFiles,
) -> None:
    """``os.makedirs(DRAFTS, exist_ok=True)`` on a folder fixed in the code, before the tool
    lists it, is set-up: the tool reads. Writing a file there is still the tool's write,
    and a folder the caller names is the tool's own effect."""
    verdicts = tool_verdicts(scan_files, {"server.py": DRAFTS_SERVER})
    assert verdicts["list_drafts"] == ("read", set())
    assert verdicts["save_draft"][0] == "write"
    assert verdicts["new_album"][0] == "write"


PANTRY = '''\
import json
import os
import tempfile

from langchain_core.tools import tool

PANTRY_FILE = "pantry.json"
STAPLES = "staples"


def _write(data: dict) -> None:
    fd, tmp = tempfile.mkstemp(dir=".", prefix=".pantry.")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(data, out)
        os.replace(tmp, PANTRY_FILE)
    except OSError:
        os.remove(tmp)
        raise


def _load() -> dict:
    with open(PANTRY_FILE) as kept:
        data = json.load(kept)
    if STAPLES not in data:
        data[STAPLES] = []
        _write(data)
    return data


@tool
def pantry_list(name: str = STAPLES) -> str:
    """The items on a pantry list."""
    return ", ".join(_load().get(name, []))


@tool
def forget_list(name: str) -> str:
    """Drop a pantry list."""
    data = _load()
    data.pop(name, None)
    _write(data)
    return "dropped"
'''


def test_a_default_seeded_when_missing_and_a_temporary_file_cleaned_up_are_no_effect(
    scan_files: ScanFiles,
) -> None:
    """``if STAPLES not in data: data[STAPLES] = []; _write(data)`` gives a fixed key a
    default once, on first use: a tool that only reads the list stays a read. Removing the
    temporary file the writer made itself (``os.remove(tmp)`` after ``tempfile.mkstemp``)
    is its clean-up, not a deletion: the tool that drops a list writes, it does not
    destroy a file of the user's."""
    files = {"pantry.py": PANTRY}
    assert effects_of(scan_files, files, "pantry_list") == []
    assert sorted({e.kind for e in effects_of(scan_files, files, "forget_list")}) == ["write"]


GUARDED_STORE = """\
import os
import sqlite3

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("notes")
_db = None


def db() -> sqlite3.Connection:
    global _db
    if _db is not None:
        return _db
    path = os.environ.get("NOTES_DB", "data/notes.db")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    _db = sqlite3.connect(path)
    _db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT)")
    return _db


@mcp.tool()
def find_notes(word: str) -> list:
    \"\"\"Find notes holding a word.\"\"\"
    return db().execute("SELECT text FROM notes WHERE text LIKE ?", (f"%{word}%",)).fetchall()


@mcp.tool()
def add_note(text: str) -> int:
    \"\"\"Add a note.\"\"\"
    cursor = db().execute("INSERT INTO notes (text) VALUES (?)", (text,))
    return cursor.lastrowid
"""

GUARDED_STORE_TS = """\
import Database from 'better-sqlite3';
import fs from 'fs';
import path from 'path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

let db: Database.Database | null = null;

function getDb(): Database.Database {
  if (db) return db;
  const file = process.env.NOTES_DB ?? 'data/notes.db';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  db = new Database(file);
  db.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT)');
  return db;
}

const server = new McpServer({ name: 'notes', version: '1.0.0' });

server.tool('find_notes', { word: z.string() }, async ({ word }) => {
  const rows = getDb().prepare('SELECT text FROM notes WHERE text LIKE ?').all(`%${word}%`);
  return { content: [{ type: 'text', text: JSON.stringify(rows) }] };
});

server.tool('add_note', { text: z.string() }, async ({ text }) => {
  const done = getDb().prepare('INSERT INTO notes (text) VALUES (?)').run(text);
  return { content: [{ type: 'text', text: String(done.lastInsertRowid) }] };
});
"""


def test_a_store_opened_after_a_guard_that_returns_it_when_open_is_set_up(
    scan_files: ScanFiles,
) -> None:
    """``if _db is not None: return _db`` (``if (db) return db;``) and then the folder, the
    connection and the table made below it: what the getter does once, on first use, not
    what the search that asks for the store does. The insert stays the add's write."""
    for files in ({"server.py": GUARDED_STORE}, {"src/server.ts": GUARDED_STORE_TS}):
        verdicts = tool_verdicts(scan_files, files)
        assert verdicts["find_notes"] == ("read", set()), files
        assert verdicts["add_note"][0] == "write", files


SCRATCH_TOOLS = """\
import os

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("scratch")


@mcp.tool()
def list_scratch() -> list:
    \"\"\"The files of the scratch pad.\"\"\"
    folder = os.getenv("SCRATCH_PAD_DIR", "./scratchpad")
    os.makedirs(folder, exist_ok=True)
    return os.listdir(folder)


@mcp.tool()
def save_scratch(name: str, text: str) -> str:
    \"\"\"Save a file to the scratch pad.\"\"\"
    folder = os.environ.get("SCRATCH_PAD_DIR", "./scratchpad")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as out:
        out.write(text)
    return "saved"
"""


def test_a_folder_named_by_a_setting_made_when_missing_is_set_up(scan_files: ScanFiles) -> None:
    """``folder = os.getenv("SCRATCH_PAD_DIR", "./scratchpad")`` then ``os.makedirs(folder,
    exist_ok=True)``: the operator's folder, the same on every call, made once; listing it
    reads, and the file written in it is the save's write."""
    verdicts = tool_verdicts(scan_files, {"server.py": SCRATCH_TOOLS})
    assert verdicts["list_scratch"] == ("read", set())
    assert verdicts["save_scratch"][0] == "write"


SENT_ONCE = """\
import requests
from langchain_core.tools import tool


class Digest:
    def __init__(self) -> None:
        self.sent = None

    def send(self, text: str) -> dict:
        if self.sent is not None:
            return self.sent
        answer = requests.post("https://mail.example.com/digest", json={"text": text}, timeout=10)
        self.sent = answer.json()
        return self.sent


digest = Digest()


@tool
def send_digest(text: str) -> dict:
    \"\"\"Send today's digest.\"\"\"
    return digest.send(text)
"""


def test_a_write_whose_answer_is_kept_after_a_guard_is_no_set_up(scan_files: ScanFiles) -> None:
    """``if self.sent is not None: return self.sent`` and then ``self.sent = requests.post(
    ...).json()``: what is kept is the answer of a send, not a client made once; the send
    is the tool's write on its first call."""
    kinds = {e.kind for e in effects_of(scan_files, {"digest.py": SENT_ONCE}, "send_digest")}
    assert "network_write" in kinds
