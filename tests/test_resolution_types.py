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
