"""Types that real code writes: the client a call is made on is known from a field's
annotation with a default, an ``Optional``, a string annotation, a return annotation or a
property that builds it, and ``Any`` says nothing."""

from __future__ import annotations

import textwrap

import pytest

from .conftest import ScanFiles

HEAD = (
    "from __future__ import annotations\n\n"
    "import dataclasses\nimport functools\n"
    "from typing import TYPE_CHECKING, Any, Optional\n\n"
    "from langchain_core.tools import tool\nfrom pydantic import BaseModel, Field\n"
    "from slack_sdk import WebClient\n\n"
    "if TYPE_CHECKING:\n    from httpx import Client as HttpClient\n\n"
)


def sinks(scan_files: ScanFiles, source: str) -> set[str]:
    files = {"bot/__init__.py": "", "bot/agent.py": HEAD + textwrap.dedent(source)}
    project = scan_files(files).project
    (found,) = [t for t in project.tools if t.name == "announce"]
    return {effect.sink for effect in found.effects if effect.writes}


POSTS = "slack_sdk.WebClient.chat_postMessage"
# The tool of the cases below: it posts through an ``Announcer`` each case defines.
ANNOUNCE = """
        @tool
        def announce(text: str) -> str:
            \"\"\"Announce a release.\"\"\"
            return Announcer().post(text)
        """

CASES = {
    "pydantic-field-default": """
        class Deps(BaseModel):
            slack: WebClient = Field(default_factory=lambda: WebClient(token="x"))

        DEPS = Deps()

        @tool
        def announce(text: str) -> str:
            \"\"\"Announce a release.\"\"\"
            return str(DEPS.slack.chat_postMessage(channel="#releases", text=text))
        """,
    "dataclass-field-on-self": """
        @dataclasses.dataclass
        class Announcer:
            slack: Optional[WebClient] = dataclasses.field(default=None)

            def post(self, text: str) -> str:
                return str(self.slack.chat_postMessage(channel="#releases", text=text))
"""
    + ANNOUNCE,
    "string-annotation-or-none": """
        class Announcer:
            slack: "WebClient | None" = None

            def post(self, text: str) -> str:
                return str(self.slack.chat_postMessage(channel="#releases", text=text))
"""
    + ANNOUNCE,
    "return-annotation-awaited": """
        async def get_client(token: str) -> WebClient:
            return make_client(token)

        @tool
        async def announce(text: str) -> str:
            \"\"\"Announce a release.\"\"\"
            client = await get_client("x")
            return str(client.chat_postMessage(channel="#releases", text=text))
        """,
    "return-annotation-chained": """
        def get_client() -> Optional[WebClient]:
            return make_client()

        @tool
        def announce(text: str) -> str:
            \"\"\"Announce a release.\"\"\"
            return str(get_client().chat_postMessage(channel="#releases", text=text))
        """,
    "cached-property-builds": """
        class Announcer:
            @functools.cached_property
            def slack(self):
                return WebClient(token="x")

            def post(self, text: str) -> str:
                return str(self.slack.chat_postMessage(channel="#releases", text=text))
"""
    + ANNOUNCE,
    "property-annotated": """
        class Announcer:
            @property
            def slack(self) -> WebClient:
                return self._make()

            def post(self, text: str) -> str:
                return str(self.slack.chat_postMessage(channel="#releases", text=text))
"""
    + ANNOUNCE,
    "method-returns-a-local-it-built": """
        class Announcer:
            def _client(self):
                client = WebClient(token="x")
                return client

            def post(self, text: str) -> str:
                return str(self._client().chat_postMessage(channel="#releases", text=text))
"""
    + ANNOUNCE,
}


@pytest.mark.parametrize("source", CASES.values(), ids=CASES.keys())
def test_the_client_a_call_is_made_on_is_known(scan_files: ScanFiles, source: str) -> None:
    assert POSTS in sinks(scan_files, source)


def test_a_type_checking_import_types_a_string_annotation(scan_files: ScanFiles) -> None:
    source = """
        class Notifier:
            http: "HttpClient"

            def post(self, text: str) -> str:
                return self.http.post("https://hooks.example.com/x", json={"text": text}).text

        @tool
        def announce(text: str) -> str:
            \"\"\"Announce a release.\"\"\"
            return Notifier().post(text)
        """
    assert "httpx.Client.post" in sinks(scan_files, source)


def test_any_gives_no_type(scan_files: ScanFiles) -> None:
    # ``Any`` says nothing of the object: the call is judged by what it is called, never
    # resolved as a method of ``typing.Any``.
    source = """
        class Notifier:
            slack: Any

            def post(self, text: str) -> str:
                return str(self.slack.chat_postMessage(channel="#releases", text=text))

        @tool
        def announce(text: str) -> str:
            \"\"\"Announce a release.\"\"\"
            return Notifier().post(text)
        """
    files = {"bot/__init__.py": "", "bot/agent.py": HEAD + textwrap.dedent(source)}
    project = scan_files(files).project
    (found,) = [t for t in project.tools if t.name == "announce"]
    called = {effect.sink for effect in found.effects}
    assert called and not any(sink.startswith("typing.") for sink in called)


def test_a_local_keeps_the_type_of_what_a_method_built_for_it(scan_files: ScanFiles) -> None:
    # ``client = self._client()`` and ``msg = account.new_message()``: the later calls are
    # made on what those methods build and return.
    source = """
        class Outbox:
            def new_message(self):
                return WebClient(token="x")

        class Announcer:
            def _client(self):
                return WebClient(token="x")

            def post(self, text: str, outbox: Outbox) -> str:
                client = self._client()
                client.chat_postMessage(channel="#releases", text=text)
                msg = outbox.new_message()
                return str(msg.chat_postEphemeral(channel="#releases", user="u1", text=text))

        @tool
        def announce(text: str) -> str:
            \"\"\"Announce a release.\"\"\"
            return Announcer().post(text, Outbox())
        """
    found = sinks(scan_files, source)
    assert POSTS in found and "slack_sdk.WebClient.chat_postEphemeral" in found


def test_a_local_bound_to_a_call_on_itself_is_no_loop(scan_files: ScanFiles) -> None:
    # ``client = client.refreshed()``: resolving the call the local is bound to asks what
    # the local holds; the lookup ends there and the send is still judged.
    source = (
        """
        def make():
            return object()

        class Announcer:
            def post(self, text: str) -> str:
                client = make()
                client = client.refreshed()
                return str(client.chat_postMessage(channel="#releases", text=text))
        """
        + ANNOUNCE
    )
    files = {"bot/__init__.py": "", "bot/agent.py": HEAD + textwrap.dedent(source)}
    project = scan_files(files).project
    (found,) = [t for t in project.tools if t.name == "announce"]
    assert any(effect.sink.endswith("chat_postMessage") for effect in found.effects)


INTERFACE = """
    import abc

    import requests
    from langchain_core.tools import tool


    class SandboxClient(abc.ABC):
        @abc.abstractmethod
        def create(self, image: str) -> dict:
            ...


    IMPLEMENTATION


    class Runner:
        def __init__(self, client: SandboxClient) -> None:
            self.client = client

        def _client(self) -> SandboxClient:
            return self.client

        def start(self, image: str) -> dict:
            client = self._client()
            return client.create(image)


    @tool
    def start_sandbox(image: str) -> dict:
        "Start a sandbox from an image."
        return Runner(make_client()).start(image)
    """


def test_a_call_on_an_interface_is_judged_as_written(scan_files: ScanFiles) -> None:
    # ``client`` holds a ``SandboxClient``, whose abstract ``create`` has no body: the call
    # is judged as written (a create on a client), never as a project method with no effect.
    source = textwrap.dedent(INTERFACE).replace("IMPLEMENTATION", "")
    project = scan_files({"box/__init__.py": "", "box/agent.py": source}).project
    (found,) = [t for t in project.tools if t.name == "start_sandbox"]
    assert "client.create" in {effect.sink for effect in found.effects}


def test_a_typing_generic_is_no_client(scan_files: ScanFiles) -> None:
    # ``rows: Iterator[Row]`` holds rows: ``rows.execute`` is no method of ``typing.Iterator``.
    source = """
        from typing import Iterator

        class Announcer:
            def post(self, text: str, rows: Iterator[WebClient]) -> str:
                return str(rows.chat_postMessage(channel="#releases", text=text))
        """ + ANNOUNCE.replace("Announcer().post(text)", "Announcer().post(text, iter([]))")
    files = {"bot/__init__.py": "", "bot/agent.py": HEAD + textwrap.dedent(source)}
    project = scan_files(files).project
    (found,) = [t for t in project.tools if t.name == "announce"]
    assert not any(effect.sink.startswith("typing.") for effect in found.effects)


def test_a_type_variable_returned_is_no_class(scan_files: ScanFiles) -> None:
    # ``def instance(self, kind: type[T]) -> T``: ``T`` names no class, so the client the
    # call gives is judged by what it is called, not as a method of ``T``.
    source = (
        """
        from typing import TypeVar

        T = TypeVar("T")

        class Registry:
            def instance(self, kind: type[T]) -> T:
                return kind()

        class Announcer:
            def post(self, text: str) -> str:
                client = Registry().instance(WebClient)
                return str(client.chat_postMessage(channel="#releases", text=text))
        """
        + ANNOUNCE
    )
    files = {"bot/__init__.py": "", "bot/agent.py": HEAD + textwrap.dedent(source)}
    project = scan_files(files).project
    facts = project.modules["bot/agent.py"]
    post = project.function("bot.agent.Announcer.post")
    called = {project.resolve_callee(c, post, facts) for c in project.calls_in(post.qualname)}
    assert "client.chat_postMessage" in called and "bot.agent.T.chat_postMessage" not in called


CHANNELS = """\
from abc import ABC, abstractmethod

import httpx
from mcp.server.fastmcp import FastMCP


class ChannelAdapter(ABC):
    @abstractmethod
    def send_text(self, user: str, text: str) -> str: ...


class TelegramAdapter(ChannelAdapter):
    def __init__(self, token: str) -> None:
        self.client = httpx.Client(base_url=f"https://api.telegram.org/bot{token}", timeout=10)

    def send_text(self, user: str, text: str) -> str:
        return self.client.post("/sendMessage", json={"chat_id": user, "text": text}).json()


class Gateway:
    def __init__(self) -> None:
        self.adapters: dict[str, ChannelAdapter] = {}

    def add(self, name: str, adapter: ChannelAdapter) -> None:
        self.adapters[name] = adapter

    def send(self, channel: str, user: str, text: str) -> str:
        adapter = self.adapters.get(channel)
        if adapter is None:
            raise KeyError(channel)
        return adapter.send_text(user, text)


NOTIFIERS: dict[str, ChannelAdapter] = {}
mcp = FastMCP("messenger")
gateway = Gateway()


@mcp.tool()
def send_message(channel: str, user: str, text: str) -> str:
    \"\"\"Send a message to a user on a channel.\"\"\"
    return gateway.send(channel, user, text)


@mcp.tool()
def notify(kind: str, user: str, text: str) -> str:
    \"\"\"Notify a user.\"\"\"
    return NOTIFIERS[kind].send_text(user, text)
"""

CHANNELS_TS = """\
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

export abstract class ChannelAdapter {
  abstract sendText(user: string, text: string): Promise<string>;
}

export class TelegramAdapter extends ChannelAdapter {
  constructor(private token: string) { super(); }

  async sendText(user: string, text: string): Promise<string> {
    const res = await fetch(`https://api.telegram.org/bot${this.token}/sendMessage`, {
      method: 'POST',
      body: JSON.stringify({ chat_id: user, text }),
    });
    return res.text();
  }
}

class Gateway {
  private adapters: Map<string, ChannelAdapter> = new Map();

  add(name: string, adapter: ChannelAdapter): void {
    this.adapters.set(name, adapter);
  }

  async send(channel: string, user: string, text: string): Promise<string> {
    const adapter = this.adapters.get(channel);
    if (!adapter) throw new Error(`no channel ${channel}`);
    return adapter.sendText(user, text);
  }
}

const notifiers: Record<string, ChannelAdapter> = {};
const gateway = new Gateway();
const server = new McpServer({ name: 'messenger', version: '1.0.0' });

server.tool('send_message', { channel: z.string(), user: z.string(), text: z.string() }, async ({ channel, user, text }) => {
  return { content: [{ type: 'text', text: await gateway.send(channel, user, text) }] };
});

server.tool('notify', { kind: z.string(), user: z.string(), text: z.string() }, async ({ kind, user, text }) => {
  return { content: [{ type: 'text', text: await notifiers[kind].sendText(user, text) }] };
});
"""


@pytest.mark.parametrize(
    "files", [{"messenger.py": CHANNELS}, {"src/messenger.ts": CHANNELS_TS}], ids=["python", "ts"]
)
def test_an_entry_of_a_container_typed_by_its_annotation_runs_its_classes_methods(
    scan_files: ScanFiles, files: dict[str, str]
) -> None:
    """``self.adapters: dict[str, ChannelAdapter]`` (``Map<string, ChannelAdapter>``,
    ``Record<string, ChannelAdapter>``), filled at run time: an entry looked up in it
    (``.get(channel)``, ``[kind]``) is a ``ChannelAdapter``, and its abstract method runs
    the project's implementations of it, which post to a chat service."""
    tools = {t.name: t for t in scan_files(files).project.tools}
    for name in ("send_message", "notify"):
        assert {e.kind for e in tools[name].effects if e.writes} == {"network_write"}, name


def test_a_write_verb_on_an_entry_of_a_container_filled_at_run_time_is_unknown(
    scan_files: ScanFiles,
) -> None:
    """The same gateway with no declaration of what its containers hold, filled at run time
    (``self.adapters[name] = adapter``, ``NOTIFIERS[kind] = adapter``): whatever was put
    there runs, so ``send_text`` on an entry is an unknown effect, never a read."""
    source = CHANNELS.replace(
        "self.adapters: dict[str, ChannelAdapter] = {}", "self.adapters = {}"
    ).replace(
        "NOTIFIERS: dict[str, ChannelAdapter] = {}",
        "NOTIFIERS = {}\n\n\ndef register(kind, adapter):\n    NOTIFIERS[kind] = adapter\n",
    )
    tools = {t.name: t for t in scan_files({"messenger.py": source}).project.tools}
    for name in ("send_message", "notify"):
        assert [e.kind for e in tools[name].effects] == ["unknown"], name


def test_a_module_variable_naming_another_holds_its_object(scan_files: ScanFiles) -> None:
    """``const sqlite = new Database(...)`` then ``export const rawDb = sqlite``: the
    exported name is the same SQLite connection, so an insert through it is a write."""
    files = {
        "src/db.ts": (
            "import Database from 'better-sqlite3';\n\n"
            "const sqlite = new Database('tasks.db');\n"
            "export const rawDb = sqlite;\n"
        ),
        "src/server.ts": (
            "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\n"
            "import { z } from 'zod';\n"
            "import { rawDb } from './db';\n\n"
            "const server = new McpServer({ name: 'tasks', version: '1.0.0' });\n\n"
            "server.tool('add_task', { title: z.string() }, async ({ title }) => {\n"
            "  const done = rawDb.prepare('INSERT INTO tasks (title) VALUES (?)').run(title);\n"
            "  return { content: [{ type: 'text', text: String(done.lastInsertRowid) }] };\n"
            "});\n"
        ),
    }
    (tool,) = scan_files(files).project.tools
    assert [e.kind for e in tool.effects] == ["write"]


def test_a_variable_holding_fetch_by_name_or_by_its_type_fetches(scan_files: ScanFiles) -> None:
    """``const plainFetch = fetch`` and ``let paidFetch: typeof fetch | null``, set on first
    use to a wrapped fetch: calling either is an HTTP request, a POST here."""
    source = (
        "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\n"
        "import { z } from 'zod';\n"
        "import { wrapFetchWithPayment } from '@x402/fetch';\n\n"
        "let paidFetch: typeof fetch | null = null;\n"
        "const plainFetch = fetch;\n\n"
        "function initOnce() {\n"
        "  if (paidFetch) return;\n"
        "  paidFetch = wrapFetchWithPayment(fetch, {});\n"
        "}\n\n"
        "const server = new McpServer({ name: 'pay', version: '1.0.0' });\n\n"
        "server.tool('paid_post', { url: z.string(), body: z.string() }, async ({ url, body }) => {\n"
        "  initOnce();\n"
        "  const res = await paidFetch!(url, { method: 'POST', body });\n"
        "  return { content: [{ type: 'text', text: await res.text() }] };\n"
        "});\n\n"
        "server.tool('plain_post', { url: z.string(), body: z.string() }, async ({ url, body }) => {\n"
        "  const res = await plainFetch(url, { method: 'POST', body });\n"
        "  return { content: [{ type: 'text', text: await res.text() }] };\n"
        "});\n"
    )
    tools = {t.name: t for t in scan_files({"src/server.ts": source}).project.tools}
    for name in ("paid_post", "plain_post"):
        assert [e.kind for e in tools[name].effects] == ["network_write"], name


LIFESPAN_SERVER = """\
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mcp.server.fastmcp import Context, FastMCP
from todoist_api_python.api import TodoistAPI


@dataclass
class AppContext:
    todoist: TodoistAPI


@asynccontextmanager
async def lifespan(server: FastMCP) -> AsyncIterator[AppContext]:
    yield AppContext(todoist=TodoistAPI("token"))


mcp = FastMCP("todo", lifespan=lifespan)


@mcp.tool()
def complete_task(ctx: Context, task_id: str) -> str:
    \"\"\"Complete a task.\"\"\"
    client = ctx.request_context.lifespan_context.todoist
    client.complete_task(task_id=task_id)
    return "done"


@mcp.tool()
def reopen_task(ctx: Context, task_id: str) -> str:
    \"\"\"Reopen a task.\"\"\"
    ctx.request_context.lifespan_context.todoist.uncomplete_task(task_id=task_id)
    return "reopened"


@mcp.tool()
def find_tasks(ctx: Context, query: str) -> str:
    \"\"\"Find tasks matching a filter.\"\"\"
    return str(ctx.request_context.lifespan_context.todoist.filter_tasks(query=query))
"""


def test_the_object_an_mcp_servers_lifespan_yields_types_its_tools_context(
    scan_files: ScanFiles,
) -> None:
    """``FastMCP(..., lifespan=lifespan)`` whose lifespan yields an ``AppContext``: every
    tool's ``ctx.request_context.lifespan_context`` is that object, so its ``todoist``
    field is the Todoist client, and completing or reopening a task is its write; its
    ``filter_tasks`` asks (a filter reads)."""
    tools = {t.name: t for t in scan_files({"server.py": LIFESPAN_SERVER}).project.tools}
    for name in ("complete_task", "reopen_task"):
        assert {e.kind for e in tools[name].effects} == {"network_write"}, name
    assert tools["find_tasks"].effects == []


TWO_HOPS = """\
import httpx
from langchain_core.tools import tool


class Speaker:
    def __init__(self) -> None:
        self.http = httpx.Client(base_url="https://speaker.example.com", timeout=5)

    def skip(self) -> None:
        self.http.post("/skip")


class Music:
    def __init__(self, speaker: Speaker) -> None:
        self.speaker = speaker


class SongTools:
    def __init__(self, music: Music) -> None:
        self.music = music

    def skip_song(self) -> str:
        self.music.speaker.skip()
        return "skipped"


songs = SongTools(Music(Speaker()))


@tool
def skip_song() -> str:
    \"\"\"Skip the song playing.\"\"\"
    return songs.skip_song()
"""


def test_a_chain_of_typed_attributes_of_self_is_followed(scan_files: ScanFiles) -> None:
    """``self.music.speaker.skip()``: ``music`` is a ``Music``, whose ``speaker`` its
    constructor types ``Speaker``; the speaker's ``skip`` posts."""
    (tool,) = [
        t for t in scan_files({"player.py": TWO_HOPS}).project.tools if t.name == "skip_song"
    ]
    assert {e.kind for e in tool.effects} == {"network_write"}


def test_an_entry_declared_as_a_base_class_may_be_any_subclass(scan_files: ScanFiles) -> None:
    """``notifiers: dict[str, Notifier]`` whose base ``send`` only logs: an entry may be a
    ``WebhookNotifier`` whose ``send`` posts, so the send through the container writes."""
    source = (
        "import logging\n\nimport httpx\nfrom mcp.server.fastmcp import FastMCP\n\n\n"
        "class Notifier:\n"
        "    def send(self, text: str) -> None:\n"
        "        logging.info(text)\n\n\n"
        "class WebhookNotifier(Notifier):\n"
        "    def send(self, text: str) -> None:\n"
        '        httpx.post("https://hooks.example.com/notify", json={"text": text}, timeout=5)\n\n\n'
        "NOTIFIERS: dict[str, Notifier] = {}\n"
        'mcp = FastMCP("notify")\n\n\n'
        "@mcp.tool()\n"
        "def notify(kind: str, text: str) -> str:\n"
        '    """Notify through a channel."""\n'
        "    NOTIFIERS[kind].send(text)\n"
        '    return "sent"\n'
    )
    (tool,) = scan_files({"notify.py": source}).project.tools
    assert "network_write" in {e.kind for e in tool.effects}
