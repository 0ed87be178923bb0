"""Client forms seen in LangChain and LlamaIndex tool packages that the analyser judged read
(the worst error for a tool that writes) or judged a write when it only asks. Each case is a
small tool written for this test, calling a client the way its library documents it; the
assertions are what a user sees: the tool's effects and its findings."""

from __future__ import annotations

from agentguard.report.model import build_report

from .conftest import ScanFiles


def tool_of(scan_files: ScanFiles, files: dict[str, str], name: str) -> tuple[list[str], set[str]]:
    result = scan_files(files)
    (tool,) = [t for t in result.project.tools if t.name == name]
    codes = {f.code for f in result.findings if f.tool == name}
    return sorted(e.kind for e in tool.effects), codes


def risk_of(scan_files: ScanFiles, files: dict[str, str], name: str) -> str:
    result = scan_files(files)
    report = build_report(result)
    (row,) = [row for row in report.tools if row.name == name]
    return row.risk.value


GMAIL_SEND = """\
from googleapiclient.discovery import Resource, build
from langchain_core.tools import BaseTool


class MailSender(BaseTool):
    name: str = "send_mail"
    description: str = "Send an email to a recipient."
    service: Resource

    def _run(self, raw: str) -> str:
        service = build("gmail", "v1")
        request = (
            service.users()
            .messages()
            .send(userId="me", body={"raw": raw})
        )
        sent = request.execute()
        return sent["id"]
"""


def test_a_request_built_over_several_lines_then_executed_is_judged(
    scan_files: ScanFiles,
) -> None:
    """A formatter puts a builder chain over several lines in brackets; the request held in
    a local and executed later is the send it names, not nothing."""
    kinds, codes = tool_of(scan_files, {"mail.py": GMAIL_SEND}, "send_mail")
    assert kinds == ["network_write"]
    assert {"AG101", "AG201"} <= codes


def test_a_request_held_then_executed_is_one_write_not_two(scan_files: ScanFiles) -> None:
    """The ``send(...)`` that builds the request and the ``execute()`` that sends it are one
    write: one AG201, at the call that sends, named without the chain's line breaks."""
    result = scan_files({"mail.py": GMAIL_SEND.replace('build("gmail", "v1")', "self.service")})
    found = [f for f in result.findings if f.code == "AG201" and f.tool == "send_mail"]
    assert len(found) == 1
    assert "\n" not in found[0].message


OUTLOOK_DRAFT = """\
from O365 import Account
from langchain_core.tools import BaseTool


class DraftWriter(BaseTool):
    name: str = "write_draft"
    description: str = "Prepare an email for the user to review."
    account: Account

    def _run(self, body: str, subject: str) -> str:
        mailbox = self.account.mailbox()
        message = mailbox.new_message()
        message.body = body
        message.subject = subject
        message.save_draft()
        return "saved"


class AudioWriter(BaseTool):
    name: str = "speak"
    description: str = "Speak a text into a wav file."

    def _run(self, text: str) -> str:
        import speechkit

        stream = speechkit.AudioStream(text)
        stream.save_to_wav_file("/tmp/out.wav")
        return "/tmp/out.wav"
"""


def test_a_save_named_with_what_it_saves_creates_it(scan_files: ScanFiles) -> None:
    """``message.save_draft()`` on a message a client made new stores a draft on the service
    (a retry stores a second one); ``save_to_wav_file(path)`` names where bytes go, no
    service object."""
    kinds, codes = tool_of(scan_files, {"outlook.py": OUTLOOK_DRAFT}, "write_draft")
    assert kinds == ["network_write"]
    assert "AG201" in codes
    _, spoken = tool_of(scan_files, {"outlook.py": OUTLOOK_DRAFT}, "speak")
    assert "AG201" not in spoken


JIRA_UPDATE = '''\
from jira import JIRA
from llama_index.core.tools.tool_spec.base import BaseToolSpec


class IssueSpec(BaseToolSpec):
    spec_functions = ["rename_issue", "merge_labels"]

    def __init__(self, server: str, token: str) -> None:
        self.jira = JIRA(server=server, token_auth=token)

    def rename_issue(self, key: str, summary: str) -> str:
        """Give an issue a new summary."""
        issue = self.jira.issue(key)
        issue.update(summary=summary)
        return "done"

    def merge_labels(self, key: str) -> dict:
        """Show an issue's fields with defaults filled in."""
        fields = self.jira.issue(key).raw["fields"]
        shown = dict(fields)
        shown.update({"labels": fields.get("labels") or []})
        return shown
'''


def test_named_fields_set_on_an_object_a_client_handed_out_are_a_write(
    scan_files: ScanFiles,
) -> None:
    """``issue = jira.issue(key); issue.update(summary=...)`` sets fields on the service;
    a dict's ``update`` with a mapping changes only the process's copy."""
    assert risk_of(scan_files, {"spec.py": JIRA_UPDATE}, "rename_issue") == "write"
    assert risk_of(scan_files, {"spec.py": JIRA_UPDATE}, "merge_labels") == "read"


WALLET_BASE = """\
from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.tools import BaseTool

if TYPE_CHECKING:
    from chainsdk.client import Chain


class ChainTool(BaseTool):
    interface: Chain
"""

WALLET_TOOL = """\
from wallet.base import ChainTool


class Transfer(ChainTool):
    name: str = "transfer_tokens"
    description: str = "Move tokens to an address."

    async def _arun(self, address: str, amount: int) -> str:
        return str(await self.interface.wallet.transfer(address, amount))

    def _run(self, address: str, amount: int) -> str:
        raise NotImplementedError
"""


def test_an_attribute_typed_in_a_base_class_elsewhere_leaves_the_project(
    scan_files: ScanFiles,
) -> None:
    """The base class imports the client's type (only for type checking); the subclass's
    module imports nothing of it, but its call still goes to that package."""
    files = {
        "wallet/__init__.py": "",
        "wallet/base.py": WALLET_BASE,
        "wallet/transfer.py": WALLET_TOOL,
    }
    kinds, codes = tool_of(scan_files, files, "transfer_tokens")
    assert kinds == ["network_write"]
    assert {"AG101", "AG201"} <= codes


GRAPHQL_TOOLS = '''\
import requests
from llama_index.core.tools.tool_spec.base import BaseToolSpec

COUNTRIES = "query Countries { countries { code name } }"


class GraphSpec(BaseToolSpec):
    spec_functions = ["graphql_request", "list_countries"]

    def __init__(self, url: str) -> None:
        self.url = url

    def graphql_request(self, query: str, variables: dict) -> str:
        """Use this tool to make a GraphQL query against the server."""
        response = requests.post(
            self.url, json={"query": query, "variables": variables, "operationName": None}
        )
        return response.text

    def list_countries(self) -> str:
        """List the countries the server knows."""
        response = requests.post(self.url, json={"query": COUNTRIES, "variables": {}})
        return response.text
'''


def test_a_graphql_document_the_model_writes_is_never_read(scan_files: ScanFiles) -> None:
    """A GraphQL-over-HTTP body (``query`` beside ``variables``) carries whatever document
    the model wrote, mutations included: a write whose idempotency nobody knows, however the
    parameter is named; a literal query still reads."""
    assert risk_of(scan_files, {"graph.py": GRAPHQL_TOOLS}, "graphql_request") != "read"
    kinds, _ = tool_of(scan_files, {"graph.py": GRAPHQL_TOOLS}, "graphql_request")
    assert kinds == ["network_write"]
    assert risk_of(scan_files, {"graph.py": GRAPHQL_TOOLS}, "list_countries") == "read"


GQL_WRAPPER = """\
from typing import Any, Dict

from langchain_core.tools import BaseTool
from pydantic import BaseModel, model_validator


class GraphWrapper(BaseModel):
    endpoint: str
    gql_client: Any = None

    @model_validator(mode="before")
    @classmethod
    def build_client(cls, values: Dict) -> Any:
        from gql import Client
        from gql.transport.requests import RequestsHTTPTransport

        client = Client(transport=RequestsHTTPTransport(url=values["endpoint"]))
        values["gql_client"] = client
        return values

    def run(self, document: Any) -> str:
        return str(self.gql_client.execute(document))


class GraphTool(BaseTool):
    name: str = "graph_query"
    description: str = "Run a GraphQL document against the server."
    wrapper: GraphWrapper

    def _run(self, document: str) -> str:
        return self.wrapper.run(document)
"""


def test_a_field_a_before_validator_stores_is_typed(scan_files: ScanFiles) -> None:
    """pydantic's ``@model_validator(mode="before")`` gets the input data: what it stores
    under a field's name is that field, so ``self.gql_client.execute`` is the GraphQL
    client's, running the model's document."""
    assert risk_of(scan_files, {"graph.py": GQL_WRAPPER}, "graph_query") != "read"
    kinds, _ = tool_of(scan_files, {"graph.py": GQL_WRAPPER}, "graph_query")
    assert kinds == ["network_write"]


ASYNC_TWINS = """\
from slack_sdk import WebClient
from langchain_core.tools import BaseTool


class Poster(BaseTool):
    name: str = "post_update"
    description: str = "Tell the channel what changed."
    client: WebClient

    def _run(self, text: str) -> str:
        raise NotImplementedError

    async def _arun(self, text: str) -> str:
        return str(await self.client.asend_update(text))
"""


def test_an_async_twin_is_judged_by_the_verb_after_its_a(scan_files: ScanFiles) -> None:
    """LangChain names a method's async twin with an ``a`` before it (``apredict``,
    ``asend``): the verb after it says what the call does."""
    kinds, codes = tool_of(scan_files, {"poster.py": ASYNC_TWINS}, "post_update")
    assert kinds == ["network_write"]
    assert "AG201" in codes


GENERATED_SDK = """\
from langchain_core.tools import BaseTool
from sqlgen import SqlGen


class Question(BaseTool):
    name: str = "ask_database"
    description: str = "Turn a question into SQL."
    client: SqlGen

    def _run(self, prompt: str) -> str:
        return self.client.sql_generations.create(prompt=prompt).sql


class Ticket(BaseTool):
    name: str = "file_ticket"
    description: str = "File a ticket."
    client: SqlGen

    def _run(self, title: str) -> str:
        return self.client.tickets.create(title=title).id
"""


def test_a_create_on_a_collection_named_as_a_question_is_a_read(scan_files: ScanFiles) -> None:
    """A generated SDK's ``create`` on ``sql_generations`` is the POST to
    ``/sql-generations``: an answer, as the same path's POST is judged; on ``tickets`` it
    creates one."""
    assert risk_of(scan_files, {"sdk.py": GENERATED_SDK}, "ask_database") == "read"
    kinds, codes = tool_of(scan_files, {"sdk.py": GENERATED_SDK}, "file_ticket")
    assert kinds == ["network_write"]
    assert "AG201" in codes


GENERATED_OPERATIONS = '''\
from llama_index.core.tools.tool_spec.base import BaseToolSpec
from mailsdk import AuthenticatedClient
from mailsdk.api.messages import messages_list, messages_send
from mailsdk.models import MessagesSendBody


class MailSpec(BaseToolSpec):
    spec_functions = ["send_mail", "list_mail"]

    def __init__(self, token: str) -> None:
        self.client = AuthenticatedClient(base_url="https://mail.example", token=token)

    def send_mail(self, to: str, text: str) -> dict:
        """Send an email."""
        body = MessagesSendBody(to=to, text=text)
        return messages_send.sync(client=self.client, body=body).to_dict()

    def list_mail(self) -> dict:
        """List the inbox."""
        return messages_list.sync(client=self.client).to_dict()
'''


def test_a_generated_operation_module_runs_the_operation_it_is_named_after(
    scan_files: ScanFiles,
) -> None:
    """openapi-python-client makes one module per operation with ``sync``/``asyncio``
    functions: ``messages_send.sync(...)`` sends, ``messages_list.sync(...)`` reads."""
    kinds, codes = tool_of(scan_files, {"mail.py": GENERATED_OPERATIONS}, "send_mail")
    assert kinds == ["network_write"]
    assert "AG201" in codes
    assert risk_of(scan_files, {"mail.py": GENERATED_OPERATIONS}, "list_mail") == "read"


FACTORY_FIELD = """\
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import Field


def _default_runner() -> Any:
    from shellkit.runner import ShellRunner

    return ShellRunner(capture=True)


class Terminal(BaseTool):
    name: str = "terminal"
    description: str = "Run shell commands on this machine."
    runner: Any = Field(default_factory=_default_runner)

    def _run(self, commands: str) -> str:
        return self.runner.run(commands)
"""


def test_a_field_built_by_a_default_factory_holds_what_it_builds(scan_files: ScanFiles) -> None:
    """``Field(default_factory=_default_runner)``, where the project's function builds an
    external ``ShellRunner``: ``self.runner.run(...)`` leaves the project, and what it does
    is unknown, never read."""
    assert risk_of(scan_files, {"term.py": FACTORY_FIELD}, "terminal") != "read"


LIBRARY_SETTING = '''\
from llama_index.core.tools.tool_spec.base import BaseToolSpec


class EncyclopediaSpec(BaseToolSpec):
    spec_functions = ["read_article", "rename_article"]

    def read_article(self, title: str, lang: str = "en") -> str:
        """Read an encyclopedia article."""
        import encyclopedia

        encyclopedia.set_lang(lang)
        return encyclopedia.search(title)[0]

    def rename_article(self, title: str, new_title: str) -> str:
        """Rename an article."""
        import encyclopedia

        site = encyclopedia.Site("https://wiki.example")
        site.set_title(title, new_title)
        return "renamed"
'''


def test_a_setting_called_on_an_imported_module_configures_the_process(
    scan_files: ScanFiles,
) -> None:
    """``encyclopedia.set_lang(lang)`` on the module itself sets the library's language for
    this process: the tool reads. The same verb on a client the module made writes."""
    assert risk_of(scan_files, {"wiki.py": LIBRARY_SETTING}, "read_article") == "read"
    assert risk_of(scan_files, {"wiki.py": LIBRARY_SETTING}, "rename_article") == "write"


SQL_HELPER = '''\
import psycopg
from llama_index.core.tools.tool_spec.base import BaseToolSpec


class Notes:
    def __init__(self, dsn: str) -> None:
        self._conn = psycopg.connect(dsn)

    def _checked(self, statement: str) -> str:
        return statement.strip().rstrip(";")

    def run(self, statement: str) -> list:
        clean = self._checked(statement)
        return list(self._conn.execute(clean))

    def tables(self, schema: str) -> list:
        return self.run(f"SELECT table_name FROM information_schema.tables WHERE s = '{schema}'")


class NotesSpec(BaseToolSpec):
    spec_functions = ["list_tables", "add_note", "run_sql"]

    def __init__(self, dsn: str) -> None:
        self.db = Notes(dsn)

    def list_tables(self, schema: str) -> list:
        """The tables of a schema."""
        return self.db.tables(schema)

    def add_note(self, text: str) -> list:
        """Keep a note."""
        return self.db.run(f"INSERT INTO notes (body) VALUES ('{text}')")

    def run_sql(self, statement: str) -> list:
        """Run a statement."""
        return self.db.run(statement)
'''


def test_a_sql_helper_statement_is_judged_where_each_caller_writes_it(
    scan_files: ScanFiles,
) -> None:
    """A helper runs the statement it is handed (after a clean-up call): a caller's literal
    ``SELECT`` reads, a literal ``INSERT`` adds a row, and the model's statement stays a
    write nobody can judge."""
    files = {"notes.py": SQL_HELPER}
    assert risk_of(scan_files, files, "list_tables") == "read"
    kinds, codes = tool_of(scan_files, files, "add_note")
    assert kinds == ["write"]
    assert "AG101" in codes
    assert risk_of(scan_files, files, "run_sql") != "read"


CLIENT_PARTS = """\
from typing import Any

from langchain_core.tools import BaseTool


class Painter(BaseTool):
    name: str = "paint"
    description: str = "Draw a picture from a prompt."
    client: Any = None
    legacy: Any = None

    def setup(self, modern: bool) -> None:
        import openai

        if modern:
            self.client = openai.OpenAI().images
        else:
            self.legacy = openai.Image

    def _run(self, prompt: str) -> str:
        if self.legacy is not None:
            return self.legacy.create(prompt=prompt)["data"][0]["url"]
        return self.client.create(prompt=prompt).data[0].url
"""


def test_an_attribute_holding_part_of_a_client_is_typed_by_it(scan_files: ScanFiles) -> None:
    """``self.client = openai.OpenAI().images`` holds the client's images resource, and
    ``self.legacy = openai.Image`` the package's class: their calls are the model API's,
    which creates nothing a retry duplicates, not a guess from the name ``client``."""
    assert risk_of(scan_files, {"paint.py": CLIENT_PARTS}, "paint") == "read"


HANDED_IN_VALIDATOR = """\
from typing import Any, Dict

from langchain_core.tools import BaseTool
from pydantic import BaseModel, model_validator


class Forge(BaseModel):
    url: str
    project: str
    repo: Any = None

    @model_validator(mode="before")
    @classmethod
    def connect(cls, values: Dict) -> Any:
        import forgeclient

        forge = forgeclient.Forge(url=values["url"])
        values["repo"] = forge.projects.get(values["project"])
        return values

    def open_issue(self, title: str) -> str:
        return str(self.repo.issues.create({"title": title}).iid)

    def list_issues(self) -> str:
        return str(self.repo.issues.list(state="opened"))


class OpenIssue(BaseTool):
    name: str = "open_issue"
    description: str = "Open an issue."
    forge: Forge

    def _run(self, title: str) -> str:
        return self.forge.open_issue(title)
"""


def test_an_object_a_client_hands_a_before_validator_is_typed_by_the_client(
    scan_files: ScanFiles,
) -> None:
    """``values["repo"] = forge.projects.get(name)`` with ``forge = forgeclient.Forge(...)``
    stores what the client handed out: ``self.repo.issues.create(...)`` goes to that
    package and creates an issue, not a call nobody can place."""
    kinds, codes = tool_of(scan_files, {"forge.py": HANDED_IN_VALIDATOR}, "open_issue")
    assert kinds == ["network_write"]
    assert "AG201" in codes


SUBCLASS_ENDPOINTS = """\
import requests
from langchain_core.tools import BaseTool

BASE = "https://api.vision.example/v2"


class VisionTool(BaseTool):
    feature: str
    subfeature: str

    def _call_api(self, payload: dict) -> dict:
        url = f"{BASE}/{self.feature}/{self.subfeature}"
        return requests.post(url, json=payload, timeout=30).json()


class ObjectDetection(VisionTool):
    name: str = "vision_objects"
    description: str = "Objects in a picture."
    feature: str = "image"
    subfeature: str = "object_detection"

    def _run(self, image_url: str) -> dict:
        return self._call_api({"file_url": image_url})


class Campaign(VisionTool):
    name: str = "vision_campaign"
    description: str = "Mail the picture to the list."
    feature: str = "mail"
    subfeature: str = "send"

    def _run(self, image_url: str) -> dict:
        return self._call_api({"file_url": image_url})
"""


def test_a_base_helper_url_naming_self_attributes_is_judged_per_subclass(
    scan_files: ScanFiles,
) -> None:
    """The base class posts to ``f"{BASE}/{self.feature}/{self.subfeature}"``; each tool
    subclass sets them: ``/image/object_detection`` asks a question, ``/mail/send`` sends."""
    files = {"vision.py": SUBCLASS_ENDPOINTS}
    assert risk_of(scan_files, files, "vision_objects") == "read"
    kinds, codes = tool_of(scan_files, files, "vision_campaign")
    assert kinds == ["network_write"]
    assert "AG201" in codes


STORE_HELPER = """\
import requests
from langchain_core.tools import BaseTool


class KnowledgeSource(BaseTool):
    name: str = "knowledge_source_url"
    description: str = "Hand the service a page to keep in the knowledge base."
    endpoint: str = "https://kb.example/api/v1/source/url"

    def _run(self, url: str) -> dict:
        return self.store_data(url)

    def store_data(self, url: str) -> dict:
        return requests.post(self.endpoint, data={"url": url}, timeout=30).json()
"""


def test_a_helper_named_to_store_says_the_post_writes(scan_files: ScanFiles) -> None:
    """A POST the request does not judge is judged by the closest name: ``store_data``
    stores, whatever the tool's name says about knowledge."""
    assert risk_of(scan_files, {"kb.py": STORE_HELPER}, "knowledge_source_url") != "read"


BUILT_NOT_SENT = """\
from typing import Optional

import requests
from langchain_core.language_models import BaseLanguageModel
from langchain_core.tools import BaseTool
from promptkit import Template


class Airport(BaseTool):
    name: str = "closest_airport"
    description: str = "The airport closest to a place."
    llm: Optional[BaseLanguageModel] = None

    def _run(self, place: str) -> str:
        prompt = Template.from_text("Closest airport to {place}?")
        return str(self.llm.invoke(prompt.render(place=place)))


class Search(BaseTool):
    name: str = "site_search"
    description: str = "Search a site."

    def _run(self, query: str) -> str:
        req = requests.PreparedRequest()
        req.prepare_url("https://search.example/api", {"q": query})
        return requests.get(req.url, timeout=10).text
"""


def test_building_a_request_a_prompt_or_a_completion_is_no_effect(scan_files: ScanFiles) -> None:
    """``Template.from_text(...)`` is a class's alternate constructor, a LangChain model's
    ``invoke`` a completion, ``PreparedRequest.prepare_url`` a URL built: none leaves an
    effect, so the tools read instead of being unknown."""
    files = {"tools.py": BUILT_NOT_SENT}
    assert risk_of(scan_files, files, "closest_airport") == "read"
    assert risk_of(scan_files, files, "site_search") == "read"


WALLET_CHECK = """\
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Keypair } from '@stellar/stellar-sdk';
import { z } from 'zod';

const server = new McpServer({ name: 'wallet', version: '1.0.0' });

server.tool('check_address', { address: z.string() }, async ({ address }) => {
  let valid = true;
  try {
    Keypair.fromPublicKey(address);
  } catch {
    valid = false;
  }
  return { content: [{ type: 'text', text: valid ? 'valid' : 'not a Stellar address' }] };
});
"""


def test_a_camel_case_from_constructor_builds_and_sends_nothing(scan_files: ScanFiles) -> None:
    """``Keypair.fromPublicKey(address)``: JavaScript's spelling of an alternate constructor
    (``fromJSON``, ``fromSecret``) builds an object, so the check reads."""
    assert risk_of(scan_files, {"src/wallet.ts": WALLET_CHECK}, "check_address") == "read"


INTERFACE_CALL = """\
from typing import Any, Protocol, Sequence

from langchain_core.tools import BaseTool


class Trainable(Protocol):
    def train_unsupervised(self, inputs: Sequence[str]) -> dict: ...

    def create_job(self, inputs: Sequence[str]) -> dict: ...


class Memorize(BaseTool):
    name: str = "memorize"
    description: str = "Fine-tune yourself on what you observed."
    llm: Trainable

    def _run(self, text: str) -> str:
        return str(self.llm.train_unsupervised((text,)))


class Enqueue(BaseTool):
    name: str = "enqueue_training"
    description: str = "Queue a training job."
    trainer: Trainable

    def _run(self, text: str) -> str:
        return str(self.trainer.create_job((text,)))
"""


def test_a_call_of_an_interface_method_runs_code_out_of_sight(scan_files: ScanFiles) -> None:
    """A ``Protocol``'s method has no body: what runs is whatever implements it, which the
    project does not show. It is judged as an external client's method is: by its verb, and
    unknown (never read) when no verb names it."""
    files = {"train.py": INTERFACE_CALL}
    assert risk_of(scan_files, files, "memorize") != "read"
    kinds, codes = tool_of(scan_files, files, "enqueue_training")
    assert kinds == ["network_write"]
    assert "AG101" in codes


FACTORY_EITHER_WAY = """\
from typing import Any, Optional

from langchain_core.tools import BaseTool


def _make_client(api_key: Optional[str]) -> Any:
    from phonesdk import Phone

    return Phone(api_key=api_key) if api_key else Phone()


class SendText(BaseTool):
    name: str = "send_text"
    description: str = "Text a phone number."
    api_key: Optional[str] = None

    def _run(self, to_number: str, body: str) -> str:
        client = _make_client(self.api_key)
        return str(client.messages.send(to_number=to_number, body=body))


class BuyNumber(BaseTool):
    name: str = "buy_number"
    description: str = "Get a new phone number."
    api_key: Optional[str] = None

    def _run(self, area_code: str) -> str:
        client = _make_client(self.api_key)
        return str(client.numbers.buy(area_code=area_code))
"""


def test_a_client_a_helper_builds_on_either_arm_types_its_calls(scan_files: ScanFiles) -> None:
    """``Phone(api_key=key) if key else Phone()`` builds a ``Phone`` either way: the
    local holding it is that client, so ``client.messages.send(...)`` sends (a generator's
    ``send`` is no client's) and ``client.numbers.buy(...)`` buys."""
    files = {"phone.py": FACTORY_EITHER_WAY}
    for name in ("send_text", "buy_number"):
        kinds, codes = tool_of(scan_files, files, name)
        assert kinds == ["network_write"], name
        assert "AG201" in codes, name


TOOLKIT_COMPREHENSION = '''\
from typing import List

import httpx
from langchain_core.tools import BaseTool, StructuredTool


class InboxToolkit:
    def __init__(self, token: str) -> None:
        self.http = httpx.Client(base_url="https://mail.example/v1", headers={"token": token})

    def get_tools(self) -> List[BaseTool]:
        http = self.http

        def send_email(to: str, subject: str, text: str) -> dict:
            """Send an email."""
            return http.post("/messages", json={"to": to, "subject": subject}).json()

        def list_messages(inbox_id: str) -> list:
            """List the messages of an inbox."""
            return http.get(f"/inboxes/{inbox_id}/messages").json()

        return [StructuredTool.from_function(fn) for fn in (send_email, list_messages)]


class LabelToolkit:
    def __init__(self, token: str) -> None:
        self.http = httpx.Client(base_url="https://mail.example/v1", headers={"token": token})

    def get_tools(self) -> List[BaseTool]:
        http = self.http

        def delete_label(label_id: str) -> dict:
            """Delete a label."""
            return http.delete(f"/labels/{label_id}").json()

        tools = []
        for fn in (delete_label,):
            tools.append(StructuredTool.from_function(fn))
        return tools
'''


def test_functions_registered_by_a_comprehension_or_loop_over_them_are_tools(
    scan_files: ScanFiles,
) -> None:
    """A toolkit hands its nested functions to ``StructuredTool.from_function`` in a list
    comprehension or a ``for`` loop over them: each one is a tool."""
    result = scan_files({"inbox.py": TOOLKIT_COMPREHENSION})
    assert sorted(t.name for t in result.project.tools) == [
        "delete_label",
        "list_messages",
        "send_email",
    ]
    kinds, codes = tool_of(scan_files, {"inbox.py": TOOLKIT_COMPREHENSION}, "send_email")
    assert kinds == ["network_write"]
    assert "AG201" in codes


GENERIC_REQUEST = """\
from langchain_core.tools import BaseTool
from billing_sdk import BillingClient


class StartBilling(BaseTool):
    name: str = "start_billing"
    description: str = "Bill a customer every month."
    client: BillingClient

    def _run(self, customer_id: str) -> str:
        body = {"customer_id": customer_id, "frequency": "30d"}
        return str(self.client._request("POST", "/api/v1/recurring-billing", json=body))


class BillingStatus(BaseTool):
    name: str = "billing_status"
    description: str = "The billing of a customer."
    client: BillingClient

    def _run(self, customer_id: str) -> str:
        return str(self.client._request("GET", f"/api/v1/customers/{customer_id}/billing"))


class ApproveInvoice(BaseTool):
    name: str = "approve_invoice"
    description: str = "Approve and pay a pending invoice."
    client: BillingClient

    def _run(self, invoice_id: str) -> str:
        return str(self.client.approve_invoice(invoice_id))
"""


def test_a_client_request_with_a_literal_method_is_judged_by_it(scan_files: ScanFiles) -> None:
    """An SDK's generic ``_request("POST", path, json=...)`` is the HTTP request it names:
    a POST to a path that says nothing writes as the tool's name says (a create), a GET
    reads; ``approve_invoice`` sets the invoice's state, a write."""
    files = {"billing.py": GENERIC_REQUEST}
    kinds, codes = tool_of(scan_files, files, "start_billing")
    assert kinds == ["network_write"]
    assert "AG201" in codes
    assert risk_of(scan_files, files, "billing_status") == "read"
    assert risk_of(scan_files, files, "approve_invoice") == "write"
