"""Effect inference: which calls in a tool's body change the world, and how surely.

Each case is a small tool written the way real agent projects write them; the assertions
are what a user sees: the tool's inferred effects (kind, idempotency, sink) and the
AG101/AG201 findings they lead to.
"""

from __future__ import annotations

import textwrap

import pytest

from agentguard.diagnostics import Confidence
from agentguard.project.tool_facts import Effect

from .conftest import ScanFiles, only_tool

HEADER = "from langchain_core.tools import tool\n"


def tool_source(imports: str, body: str, params: str = "payload: dict", prelude: str = "") -> str:
    return (
        HEADER
        + textwrap.dedent(imports).strip()
        + "\n\n"
        + textwrap.dedent(prelude).strip()
        + "\n\n@tool\ndef act("
        + params
        + ") -> object:\n"
        + '    """Do the thing."""\n'
        + textwrap.indent(textwrap.dedent(body).strip(), "    ")
        + "\n"
    )


def effects_of(scan_files: ScanFiles, files: dict[str, str], tool: str = "act") -> list[Effect]:
    result = scan_files(files)
    matches = [t for t in result.project.tools if t.name == tool]
    assert matches, f"tool {tool} not found: {[t.name for t in result.project.tools]}"
    return matches[0].effects


def codes(scan_files: ScanFiles, files: dict[str, str]) -> list[str]:
    return sorted(f.code for f in scan_files(files).findings)


# (id, imports, prelude, body, expected kind, expected idempotent, sink substring)
WRITES = [
    # A statement written as an f-string says what it does in its written words; the values
    # put into it are values (a guess at low confidence with no idempotency before).
    (
        "fstring-sql-update",
        "import psycopg2",
        "",
        'conn = psycopg2.connect("dbname=app")\n'
        'conn.cursor().execute(f"UPDATE notes SET done = true WHERE id = {payload}")\n'
        "conn.commit()",
        "write",
        True,
        "execute",
    ),
    (
        "fstring-sql-insert",
        "import psycopg2",
        "",
        'conn = psycopg2.connect("dbname=app")\n'
        "conn.cursor().execute(f\"INSERT INTO notes (body) VALUES ('{payload}')\")\n"
        "conn.commit()",
        "write",
        False,
        "execute",
    ),
    (
        "requests-post",
        "import requests",
        "",
        'return requests.post("https://x", json=payload)',
        "network_write",
        False,
        "requests.post",
    ),
    (
        "requests-request-verb",
        "import requests",
        "",
        'return requests.request("POST", "https://x", json=payload)',
        "network_write",
        False,
        "requests.request",
    ),
    (
        "requests-request-kwarg",
        "import requests",
        "",
        'return requests.request(method="patch", url="https://x", json=payload)',
        "network_write",
        False,
        "requests.request",
    ),
    (
        "requests-session-local",
        "import requests",
        "",
        's = requests.Session()\nreturn s.post("https://x", json=payload)',
        "network_write",
        False,
        "requests.Session.post",
    ),
    (
        "requests-session-with",
        "import requests",
        "",
        'with requests.Session() as s:\n    return s.post("https://x", json=payload)',
        "network_write",
        False,
        "requests.Session.post",
    ),
    (
        "httpx-with-client",
        "import httpx",
        "",
        'with httpx.Client(base_url="https://x") as c:\n    return c.post("/orders", json=payload)',
        "network_write",
        False,
        "httpx.Client.post",
    ),
    (
        "httpx-module-client",
        "import httpx",
        'CLIENT = httpx.Client(base_url="https://x")',
        'return CLIENT.post("/orders", json=payload)',
        "network_write",
        False,
        "httpx.Client.post",
    ),
    (
        "httpx-client-request",
        "import httpx",
        "",
        'client = httpx.Client()\nreturn client.request("POST", "https://x/orders", json=payload)',
        "network_write",
        False,
        "httpx.Client.request",
    ),
    (
        "urllib3-poolmanager",
        "import urllib3",
        "",
        'http = urllib3.PoolManager()\nreturn http.request("POST", "https://x", body=b"{}")',
        "network_write",
        False,
        "urllib3.PoolManager.request",
    ),
    (
        "urllib-request-data",
        "import urllib.request",
        "",
        'req = urllib.request.Request("https://x", data=b"{}", method="POST")\n'
        "return urllib.request.urlopen(req).read()",
        "network_write",
        False,
        "urllib.request.urlopen",
    ),
    (
        "stripe-legacy",
        "import stripe",
        "",
        'return stripe.PaymentIntent.create(amount=100, currency="eur")',
        "payment",
        False,
        "stripe.PaymentIntent.create",
    ),
    (
        "stripe-client",
        "from stripe import StripeClient",
        'client = StripeClient("sk")',
        'return client.payment_intents.create(params={"amount": 100})',
        "payment",
        False,
        "payment_intents.create",
    ),
    (
        "stripe-client-v1",
        "from stripe import StripeClient",
        'client = StripeClient("sk")',
        'return client.v1.payment_intents.create(params={"amount": 100})',
        "payment",
        False,
        "payment_intents.create",
    ),
    (
        "smtplib",
        "import smtplib",
        "",
        'with smtplib.SMTP("localhost") as smtp:\n    smtp.send_message(payload["msg"])',
        "message",
        False,
        "smtplib.SMTP.send_message",
    ),
    (
        "sendgrid",
        "from sendgrid import SendGridAPIClient",
        "",
        'sg = SendGridAPIClient("key")\nreturn sg.send(payload["mail"])',
        "message",
        False,
        "SendGridAPIClient.send",
    ),
    (
        "ses",
        "import boto3",
        'ses = boto3.client("ses")',
        'return ses.send_email(Source="a", Destination={}, Message={})',
        "message",
        False,
        "send_email",
    ),
    (
        "slack",
        "from slack_sdk import WebClient",
        'slack = WebClient(token="t")',
        'return slack.chat_postMessage(channel="#ops", text=payload["text"])',
        "message",
        False,
        "chat_postMessage",
    ),
    (
        "twilio",
        "from twilio.rest import Client",
        'twilio = Client("sid", "token")',
        'return twilio.messages.create(to="+1", from_="+2", body="hi")',
        "message",
        False,
        "messages.create",
    ),
    (
        "boto3-sqs",
        "import boto3",
        "",
        'sqs = boto3.client("sqs")\nreturn sqs.send_message(QueueUrl="q", MessageBody="m")',
        "message",
        False,
        "send_message",
    ),
    (
        "boto3-ec2-run",
        "import boto3",
        "",
        'ec2 = boto3.client("ec2")\nreturn ec2.run_instances(ImageId="ami", MinCount=1, MaxCount=1)',
        "network_write",
        False,
        "run_instances",
    ),
    (
        "github",
        "from github import Github",
        "",
        'gh = Github("t")\nrepo = gh.get_repo("a/b")\nreturn repo.create_issue(title="t")',
        "network_write",
        False,
        "create_issue",
    ),
    (
        "jira",
        "from jira import JIRA",
        'jira = JIRA("https://jira")',
        "return jira.create_issue(fields=payload)",
        "network_write",
        False,
        "create_issue",
    ),
    (
        "celery-delay",
        "from app.tasks import send_welcome",
        "",
        "return send_welcome.delay(payload['user'])",
        "network_write",
        False,
        "delay",
    ),
    (
        "celery-apply-async",
        "from app.tasks import send_welcome",
        "",
        "return send_welcome.apply_async(args=[payload['user']])",
        "network_write",
        False,
        "apply_async",
    ),
    (
        "kafka",
        "from kafka import KafkaProducer",
        "producer = KafkaProducer()",
        'producer.send("orders", b"x")',
        "message",
        False,
        "KafkaProducer.send",
    ),
    (
        "pika",
        "import pika",
        "",
        "conn = pika.BlockingConnection()\nch = conn.channel()\n"
        'ch.basic_publish(exchange="", routing_key="q", body=b"x")',
        "message",
        False,
        "basic_publish",
    ),
    (
        "redis-incr",
        "import redis",
        "r = redis.Redis()",
        'return r.incr("counter")',
        "write",
        False,
        "redis.Redis.incr",
    ),
    (
        "mongo-insert",
        "from pymongo import MongoClient",
        "orders = MongoClient().shop.orders",
        "return orders.insert_one(payload)",
        "write",
        False,
        "insert_one",
    ),
    (
        "sql-insert",
        "import sqlite3",
        "",
        'conn = sqlite3.connect("db")\ncur = conn.cursor()\n'
        'cur.execute("INSERT INTO orders (id) VALUES (?)", (1,))',
        "write",
        False,
        "execute",
    ),
    (
        "sqlalchemy-add",
        "from sqlalchemy.orm import Session",
        "",
        "with Session(engine) as session:\n    session.add(payload['row'])\n    session.commit()",
        "write",
        False,
        "Session.add",
    ),
    (
        "django-create",
        "from shop.models import Order",
        "",
        "return Order.objects.create(**payload)",
        "write",
        False,
        "objects.create",
    ),
    (
        "subprocess",
        "import subprocess",
        "",
        'subprocess.run(["make", "deploy"], check=True)',
        "exec",
        False,
        "subprocess.run",
    ),
    ("os-system", "import os", "", 'os.system("make deploy")', "exec", False, "os.system"),
    # an archive opened like a file writes in a writing mode
    (
        "zipfile-write",
        "import zipfile",
        "",
        'with zipfile.ZipFile("out.zip", "w") as z:\n    z.write(payload["path"])',
        "write",
        True,
        "zipfile.ZipFile",
    ),
    (
        "tarfile-append",
        "import tarfile",
        "",
        'with tarfile.open("out.tar", mode="a") as t:\n    t.add(payload["path"])',
        "write",
        False,
        "tarfile.open",
    ),
    (
        "aiohttp-session",
        "import aiohttp",
        "",
        'async with aiohttp.ClientSession() as s:\n    await s.post("https://x", json=payload)',
        "network_write",
        False,
        "aiohttp.ClientSession.post",
    ),
]


@pytest.mark.parametrize(
    ("imports", "prelude", "body", "kind", "idempotent", "sink"),
    [pytest.param(*case[1:], id=case[0]) for case in WRITES],
)
def test_write_sinks_are_recognised(
    scan_files: ScanFiles,
    imports: str,
    prelude: str,
    body: str,
    kind: str,
    idempotent: bool,
    sink: str,
) -> None:
    source = tool_source(imports, body, prelude=prelude)
    if "async with" in body or "await " in body:
        source = source.replace("def act(", "async def act(")
    effects = effects_of(scan_files, {"agent.py": source})
    assert [(e.kind, e.idempotent) for e in effects] == [(kind, idempotent)], [
        (e.kind, e.sink) for e in effects
    ]
    assert sink in effects[0].sink


READS = [
    ("requests-get", "import requests", "", 'return requests.get("https://x").json()'),
    ("requests-request-get", "import requests", "", 'return requests.request("GET", "https://x")'),
    (
        "httpx-client-get",
        "import httpx",
        "",
        'with httpx.Client() as c:\n    return c.get("https://x").json()',
    ),
    (
        "urlopen-get",
        "import urllib.request",
        "",
        'return urllib.request.urlopen("https://x").read()',
    ),
    (
        "sql-select",
        "import sqlite3",
        "",
        'conn = sqlite3.connect("db")\ncur = conn.cursor()\n'
        'cur.execute("SELECT * FROM orders WHERE id = ?", (1,))\nreturn cur.fetchall()',
    ),
    ("open-read", "", "", 'with open("notes.txt") as fh:\n    return fh.read()'),
    (
        "zipfile-read",
        "import zipfile",
        "",
        'with zipfile.ZipFile(payload["path"]) as z:\n    return z.namelist()',
    ),
    ("redis-get", "import redis", "r = redis.Redis()", 'return r.get("k")'),
    (
        "django-filter",
        "from shop.models import Order",
        "",
        "return list(Order.objects.filter(status='open'))",
    ),
    ("list-append", "", "", "items = []\nitems.append(payload)\nreturn items"),
    ("set-add", "", "", "seen = set()\nseen.add(payload['id'])\nreturn seen"),
    ("list-insert", "", "", "parts = ['a']\nparts.insert(0, 'b')\nreturn parts"),
    ("dict-update", "", "", "out = {}\nout.update(payload)\nreturn out"),
    (
        "logger-send",
        "import logging",
        "logger = logging.getLogger(__name__)",
        'logger.info("sending")\nlogger.send = None\nreturn payload',
    ),
    ("str-replace", "", "", "return payload['name'].replace('a', 'b')"),
    ("queue-put-local", "import queue", "", "q = queue.Queue()\nq.put(payload)\nreturn q.get()"),
    (
        "pydantic-create",
        "from app.schemas import OrderIn",
        "",
        "return OrderIn.model_validate(payload)",
    ),
    ("json-dumps", "import json", "", "return json.dumps(payload)"),
    ("string-format-submit", "", "", 'text = "submit {}".format(payload)\nreturn text'),
]


@pytest.mark.parametrize(
    ("imports", "prelude", "body"), [pytest.param(*case[1:], id=case[0]) for case in READS]
)
def test_read_only_tools_have_no_write_effects_and_no_findings(
    scan_files: ScanFiles, imports: str, prelude: str, body: str
) -> None:
    files = {"agent.py": tool_source(imports, body, prelude=prelude)}
    result = scan_files(files)
    tool = next(t for t in result.project.tools if t.name == "act")
    assert tool.writes() == [], [(e.kind, e.sink) for e in tool.writes()]
    assert [f.code for f in result.findings] == []


def test_heuristic_never_fires_on_containers_and_loggers(scan_files: ScanFiles) -> None:
    body = """
        items = []
        items.append(payload)
        seen = set()
        seen.add(1)
        parts = ["a"]
        parts.insert(0, "b")
        logger.send("x")
        log.post("y")
        cache = {}
        cache.update(payload)
        name = payload["name"].replace("a", "b")
        results.extend(items)
        self_notes.remove("x")
        return name
    """
    prelude = """
        import logging
        logger = logging.getLogger(__name__)
        log = logging.getLogger("x")
        results: list = []
        self_notes: list = []
    """
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert effects == []


def test_a_string_method_chain_is_no_write_though_its_arguments_name_a_client_word(
    scan_files: ScanFiles,
) -> None:
    """``url.replace("https://", "wss://").replace(...)`` replaces text: the receiver of the
    last ``replace`` is what the first returns, not a client because ``https`` in its
    arguments contains ``http``."""
    body = """
        url = payload["base"].rstrip("/")
        url = url.replace("https://", "wss://").replace("http://", "ws://")
        label = payload["name"].replace("session", "-").replace("conn", "-")
        return url + label
    """
    effects = effects_of(scan_files, {"agent.py": tool_source("", body)})
    assert effects == []


def test_a_write_verb_on_what_a_client_factory_returns_is_still_a_write(
    scan_files: ScanFiles,
) -> None:
    prelude = "from vendor_sdk import connect"
    body = 'return get_billing_client(payload["region"]).charge_card(payload)'
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert [(e.kind, e.heuristic) for e in effects] == [("network_write", True)]


@pytest.mark.parametrize(
    "body",
    [
        "(ROOT / name).write_text(payload['text'])",
        "target = ROOT / 'notes' / name\ntarget.write_text(payload['text'])",
        "target = Path(payload['folder']) / name\ntarget.write_bytes(b'x')",
        "ROOT.joinpath(name).with_suffix('.md').write_text(payload['text'])",
        "target = ROOT.joinpath(name)\ntarget.write_text(payload['text'])",
        "(Path.home() / '.notes' / name).write_text(payload['text'])",
        "out = Path(__file__).parent / 'notes'\nout.joinpath(name).write_text(payload['text'])",
    ],
    ids=[
        "joined",
        "joined-twice-then-named",
        "class-joined",
        "derived",
        "derived-then-named",
        "home",
        "module-folder",
    ],
)
def test_a_file_written_through_a_joined_or_derived_path_is_a_local_write(
    scan_files: ScanFiles, body: str
) -> None:
    prelude = 'ROOT = Path("/srv/notes")'
    source = tool_source(
        "from pathlib import Path", body, params="name: str, payload: dict", prelude=prelude
    )
    effects = effects_of(scan_files, {"agent.py": source})
    assert [(e.kind, e.remote, e.sink) for e in effects] == [
        ("write", False, "pathlib.Path." + body.rsplit(".", 1)[1].split("(")[0])
    ]


def test_reading_through_a_joined_path_is_no_write(scan_files: ScanFiles) -> None:
    body = (
        "text = (ROOT / name).read_text()\nreturn str(ROOT / name) + text.replace('http', 'https')"
    )
    prelude = 'ROOT = Path("/srv/notes")'
    source = tool_source("from pathlib import Path", body, params="name: str", prelude=prelude)
    assert effects_of(scan_files, {"agent.py": source}) == []


def test_a_client_reached_through_a_typed_field_of_a_project_class_is_resolved(
    scan_files: ScanFiles,
) -> None:
    """``deps.http.post(...)`` on a parameter typed ``Deps`` whose field says
    ``http: httpx.Client`` posts with httpx, one field deep or two."""
    prelude = """
        from dataclasses import dataclass

        import httpx


        class Billing:
            client: httpx.Client

            def __init__(self) -> None:
                self.client = httpx.Client()


        @dataclass
        class Deps:
            http: httpx.Client
            billing: Billing
            region: str


        DEPS = Deps(http=httpx.Client(), billing=Billing(), region="eu")


        def _notify(deps: Deps, payload: dict) -> None:
            deps.http.post("https://hooks.example.com/orders", json=payload)


        def _invoice(deps: Deps, payload: dict) -> str:
            return deps.billing.client.post("https://billing.example.com/v1/invoices", json=payload).text
    """
    body = "_notify(DEPS, payload)\nreturn _invoice(DEPS, payload)"
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert [(e.kind, e.sink, e.heuristic) for e in effects] == [
        ("network_write", "httpx.Client.post", False),
        ("network_write", "httpx.Client.post", False),
    ]


DEPS_MODULE = """
from dataclasses import dataclass

import httpx


@dataclass
class Deps:
    http: httpx.AsyncClient
    user_id: str
"""


HANDED_DEPS_TOOL = """
{imports}

from deps import Deps
{prelude}

{decorator}
async def act({parameter}, amount: float) -> str:
    \"\"\"Create an invoice.\"\"\"
    r = await {carried}.http.post("https://billing.example.com/v1/invoices", json={{"a": amount}})
    return r.text
"""


@pytest.mark.parametrize(
    ("imports", "prelude", "decorator", "parameter", "carried"),
    [
        (
            "from pydantic_ai import Agent, RunContext",
            'agent = Agent("openai:gpt-4o", deps_type=Deps)',
            "@agent.tool",
            "ctx: RunContext[Deps]",
            "ctx.deps",
        ),
        (
            "from agents import RunContextWrapper, function_tool",
            "",
            "@function_tool",
            "wrapper: RunContextWrapper[Deps]",
            "wrapper.context",
        ),
        (
            "from langchain.tools import ToolRuntime, tool",
            "",
            "@tool",
            "runtime: ToolRuntime[Deps, dict]",
            "runtime.context",
        ),
    ],
    ids=["pydantic-ai-run-context", "openai-agents-wrapper", "langchain-tool-runtime"],
)
def test_a_client_in_the_dependencies_a_framework_hands_the_tool_is_resolved(
    scan_files: ScanFiles, imports: str, prelude: str, decorator: str, parameter: str, carried: str
) -> None:
    source = HANDED_DEPS_TOOL.format(
        imports=imports, prelude=prelude, decorator=decorator, parameter=parameter, carried=carried
    )
    effects = effects_of(scan_files, {"deps.py": DEPS_MODULE, "agent.py": source})
    assert [(e.kind, e.sink, e.heuristic) for e in effects] == [
        ("network_write", "httpx.AsyncClient.post", False)
    ]


SERVICE_MODULE = """
from functools import lru_cache

import httpx


@lru_cache
def get_http() -> httpx.Client:
    return httpx.Client(base_url="https://crm.example.com", timeout=15)


def make_tickets() -> "Tickets":
    return Tickets()


class Tickets:
    def __init__(self, http: httpx.Client | None = None) -> None:
        self.http = http or get_http()

    def open(self, title: str) -> dict:
        return self.http.post("/tickets", json={"title": title}).json()


class Injected:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def open(self, title: str) -> dict:
        return self.http.post("/tickets", json={"title": title}).json()


class Chosen:
    def __init__(self, http: httpx.Client | None = None) -> None:
        chosen = http if http is not None else httpx.Client()
        self.http = chosen

    def open(self, title: str) -> dict:
        return self.http.post("/tickets", json={"title": title}).json()
"""


@pytest.mark.parametrize(
    "body",
    [
        "return get_http().post('/escalations', json=payload).text",
        "return Tickets().open(payload['title'])",
        "return make_tickets().open(payload['title'])",
        "return Injected(get_http()).open(payload['title'])",
        "return Chosen().open(payload['title'])",
    ],
    ids=[
        "client-factory",
        "client-field-set-from-a-typed-parameter",
        "service-factory",
        "client-injected",
        "client-chosen-by-a-conditional",
    ],
)
def test_a_client_a_service_layer_builds_or_is_given_is_resolved(
    scan_files: ScanFiles, body: str
) -> None:
    """A cached client factory (``get_http().post``), a service whose field holds the client
    it is given or builds (``self.http = http or get_http()``, ``http: httpx.Client | None``),
    and a factory of that service: each posts with httpx."""
    source = tool_source(
        "from service import Chosen, Injected, Tickets, get_http, make_tickets", body
    )
    effects = effects_of(scan_files, {"service.py": SERVICE_MODULE, "agent.py": source})
    assert [(e.kind, e.sink, e.heuristic) for e in effects] == [
        ("network_write", "httpx.Client.post", False)
    ]


def test_state_kept_in_the_process_is_no_side_effect(scan_files: ScanFiles) -> None:
    """A Streamlit session, a LangChain conversation buffer, an in-memory chat history:
    nothing leaves the process, so a retry duplicates nothing."""
    imports = """
        import streamlit as st
        from langchain.memory import ConversationBufferMemory
        from langchain_core.chat_history import InMemoryChatMessageHistory
    """
    prelude = "memory = ConversationBufferMemory()\nhistory = InMemoryChatMessageHistory()"
    body = """
        st.session_state.update({"choice": payload["choice"]})
        memory.save_context({"input": "q"}, {"output": "a"})
        history.add_user_message("q")
        return "noted"
    """
    effects = effects_of(scan_files, {"agent.py": tool_source(imports, body, prelude=prelude)})
    assert effects == []


def test_an_in_process_queue_and_a_clients_cookie_jar_are_no_side_effects(
    scan_files: ScanFiles,
) -> None:
    prelude = (
        "import httpx\nfrom events import make_bus\n\nbus = make_bus()\nclient = httpx.Client()"
    )
    body = """
        bus.queue.put_nowait(payload)
        bus.event_queue.put(payload)
        client.cookies.set_cookie_header(payload["request"])
        return "queued"
    """
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert effects == []


def test_a_receiver_is_trusted_as_a_client_only_when_its_name_ends_in_a_client_word(
    scan_files: ScanFiles,
) -> None:
    """``session_ready`` is no session and ``api_key`` no API; ``clients["eu"]`` and
    ``billing_api2`` are clients. What a vendor's ``make_future()`` returned is of a kind no
    name tells: its ``cancel()`` is unknown, not a client's write and not a read."""
    prelude = "from vendor import connect_all, make_future"
    body = """
        session_ready = make_future()
        session_ready.cancel()
        api_key = payload["key"]
        api_key.update_time = 0
        clients = connect_all()
        clients["eu"].create_invoice(payload)
        billing_api2 = clients["us"]
        billing_api2.charge(payload)
        return "ok"
    """
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert [(e.sink, e.kind) for e in effects] == [
        ("session_ready.cancel", "unknown"),
        ('clients["eu"].create_invoice', "network_write"),
        ("billing_api2.charge", "network_write"),
    ]
    assert all(e.heuristic for e in effects)


def test_a_dict_an_object_keeps_is_no_side_effect_though_named_like_a_service(
    scan_files: ScanFiles,
) -> None:
    """``self.orders = {}``: a demo's in-memory order book, not an orders service."""
    prelude = """
        from vendor import OrdersApi


        class Desk:
            def __init__(self) -> None:
                self.orders = {}
                self.remote_orders = OrdersApi()

            def place(self, order: dict) -> None:
                self.orders.update({order["id"]: order})
                self.remote_orders.create_order(order)


        desk = Desk()
    """
    body = "desk.place(payload)\nreturn 'ok'"
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert [e.sink for e in effects] == ["self.remote_orders.create_order"]


def test_unresolved_write_verb_on_service_client_is_low_confidence(scan_files: ScanFiles) -> None:
    prelude = "from vendor_sdk import make_client\n\nbilling_client = make_client()"
    effects = effects_of(
        scan_files,
        {
            "agent.py": tool_source(
                "", "return billing_client.charge_card(payload)", prelude=prelude
            )
        },
    )
    assert len(effects) == 1
    assert effects[0].heuristic
    assert effects[0].confidence in {Confidence.LOW, Confidence.MEDIUM}
    assert effects[0].kind == "network_write"


def test_sql_statement_built_at_runtime_is_a_low_confidence_write(scan_files: ScanFiles) -> None:
    body = "cur = conn.cursor()\nsql = build_statement(payload)\ncur.execute(sql)"
    prelude = 'import psycopg\nconn = psycopg.connect("dbname=x")'
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert [(e.kind, e.confidence) for e in effects] == [("write", Confidence.LOW)]


def test_sql_statement_in_a_variable_is_read(scan_files: ScanFiles) -> None:
    body = (
        'query = "SELECT id FROM orders WHERE user_id = %s"\n'
        "with conn.cursor() as cur:\n    cur.execute(query, (payload['user'],))\n"
        "    return cur.fetchall()"
    )
    prelude = 'import psycopg\nconn = psycopg.connect("dbname=x")'
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert effects == []


def test_sql_upsert_on_conflict_is_idempotent(scan_files: ScanFiles) -> None:
    body = (
        "cur = conn.cursor()\n"
        'cur.execute("INSERT INTO orders (id) VALUES (%s) ON CONFLICT (id) DO NOTHING", (1,))'
    )
    prelude = 'import psycopg\nconn = psycopg.connect("dbname=x")'
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert [(e.kind, e.idempotent) for e in effects] == [("write", True)]


def test_sqlalchemy_insert_statement(scan_files: ScanFiles) -> None:
    body = "with engine.begin() as conn:\n    conn.execute(insert(orders).values(**payload))"
    prelude = "from sqlalchemy import create_engine, insert\nengine = create_engine('sqlite://')"
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert [(e.kind, e.idempotent) for e in effects] == [("write", False)]


def test_django_instance_save_and_delete(scan_files: ScanFiles) -> None:
    body = "order = Order.objects.get(pk=payload['id'])\norder.status = 'x'\norder.save()"
    effects = effects_of(
        scan_files,
        {"agent.py": tool_source("from shop.models import Order", body)},
    )
    assert [e.kind for e in effects] == ["write"]


def test_redis_set_is_idempotent_write(scan_files: ScanFiles) -> None:
    effects = effects_of(
        scan_files,
        {"agent.py": tool_source("import redis", 'r.set("k", 1)', prelude="r = redis.Redis()")},
    )
    assert [(e.kind, e.idempotent) for e in effects] == [("write", True)]


def test_http_put_and_delete_are_idempotent(scan_files: ScanFiles) -> None:
    body = 'requests.put("https://x/1", json=payload)\nrequests.delete("https://x/2")'
    files = {"agent.py": tool_source("import requests", body)}
    effects = effects_of(scan_files, files)
    assert sorted((e.method, e.idempotent) for e in effects) == [("DELETE", True), ("PUT", True)]
    assert codes(scan_files, files) == ["AG101"]  # declared nothing, but no key needed


def test_self_client_set_in_init(scan_files: ScanFiles) -> None:
    source = HEADER + textwrap.dedent(
        '''
        import httpx

        class Orders:
            def __init__(self) -> None:
                self.client = httpx.Client(base_url="https://x")

            def place(self, order: dict) -> dict:
                return self.client.post("/orders", json=order).json()

        orders = Orders()

        @tool
        def act(payload: dict) -> object:
            """Place."""
            return orders.place(payload)
        '''
    )
    effects = effects_of(scan_files, {"agent.py": source})
    assert [e.sink for e in effects] == ["httpx.Client.post"]
    assert effects[0].chain[0].label == "act calls Orders.place"


def test_local_file_write_is_ag101_only(scan_files: ScanFiles) -> None:
    body = 'with open("notes.txt", "w") as fh:\n    fh.write(str(payload))\nos.remove("old.txt")'
    files = {"agent.py": tool_source("import os", body)}
    effects = effects_of(scan_files, files)
    assert {e.remote for e in effects} == {False}
    assert codes(scan_files, files) == ["AG101"]


def test_git_push_is_local_write_not_ag201(scan_files: ScanFiles) -> None:
    body = 'repo = git.Repo(".")\nrepo.index.commit("msg")\nrepo.remote().push()'
    files = {"agent.py": tool_source("import git", body)}
    effects = effects_of(scan_files, files)
    assert effects and all(e.kind == "write" for e in effects)
    assert "AG201" not in codes(scan_files, files)


# ---------------------------------------------------------------- interprocedural
CLIENT_MODULE = """
import requests


class OrdersClient:
    def __init__(self, base: str) -> None:
        self.session = requests.Session()
        self.base = base

    def place(self, cart_id: str) -> dict:
        return self._post("/orders", {"cart": cart_id})

    def _post(self, path: str, body: dict) -> dict:
        return self.session.post(self.base + path, json=body).json()


orders_client = OrdersClient("https://shop.example")
"""


def test_helper_method_in_another_module_through_module_instance(scan_files: ScanFiles) -> None:
    tools = HEADER + textwrap.dedent(
        '''
        from shop.client import orders_client

        @tool
        def create_order(cart_id: str) -> dict:
            """Create an order."""
            return orders_client.place(cart_id)
        '''
    )
    files = {"shop/__init__.py": "", "shop/client.py": CLIENT_MODULE, "shop/tools.py": tools}
    result = scan_files(files)
    tool = next(t for t in result.project.tools if t.name == "create_order")
    assert [e.sink for e in tool.effects] == ["requests.Session.post"]
    labels = [s.label for s in tool.effects[0].chain]
    assert labels == [
        "create_order calls OrdersClient.place",
        "OrdersClient.place calls _post",
        "calls requests.Session.post",
    ]
    ag201 = [f for f in result.findings if f.code == "AG201"]
    assert len(ag201) == 1
    assert (
        "requests.Session.post" in ag201[0].message and "`OrdersClient.place`" in ag201[0].message
    )


def test_self_attribute_typed_in_init_with_a_project_class(scan_files: ScanFiles) -> None:
    agent = HEADER + textwrap.dedent(
        '''
        from shop.client import OrdersClient

        class ShopTools:
            def __init__(self) -> None:
                self._client = OrdersClient("https://shop.example")

            def create_order(self, cart_id: str) -> dict:
                return self._client.place(cart_id)

        shop = ShopTools()

        @tool
        def create_order(cart_id: str) -> dict:
            """Create an order."""
            return shop.create_order(cart_id)
        '''
    )
    files = {"shop/__init__.py": "", "shop/client.py": CLIENT_MODULE, "agent.py": agent}
    effects = effects_of(scan_files, files, tool="create_order")
    assert [e.sink for e in effects] == ["requests.Session.post"]


def test_imported_helper_function_across_modules(scan_files: ScanFiles) -> None:
    helpers = "import httpx\n\n\ndef notify(text: str) -> None:\n    httpx.post('https://hooks.example', json={'text': text})\n"
    agent = (
        HEADER
        + 'from app.helpers import notify\n\n\n@tool\ndef ping(text: str) -> str:\n    """Ping."""\n    notify(text)\n    return \'ok\'\n'
    )
    files = {"app/__init__.py": "", "app/helpers.py": helpers, "app/agent.py": agent}
    effects = effects_of(scan_files, files, tool="ping")
    assert [(e.sink, [s.label for s in e.chain]) for e in effects] == [
        ("httpx.post", ["ping calls notify", "calls httpx.post"])
    ]


def test_module_import_then_attribute_call(scan_files: ScanFiles) -> None:
    helpers = "import httpx\n\n\ndef notify(text: str) -> None:\n    httpx.post('https://hooks.example', json={'text': text})\n"
    agent = (
        HEADER
        + 'from app import helpers\n\n\n@tool\ndef ping(text: str) -> str:\n    """Ping."""\n    helpers.notify(text)\n    return \'ok\'\n'
    )
    files = {"app/__init__.py": "", "app/helpers.py": helpers, "app/agent.py": agent}
    assert [e.sink for e in effects_of(scan_files, files, tool="ping")] == ["httpx.post"]


def test_inherited_method_and_super_call(scan_files: ScanFiles) -> None:
    source = HEADER + textwrap.dedent(
        '''
        import requests

        class BaseClient:
            def send(self, body: dict) -> dict:
                return requests.post("https://api.example/send", json=body).json()

        class AuditedClient(BaseClient):
            def send(self, body: dict) -> dict:
                body["audited"] = True
                return super().send(body)

        class Mailer(AuditedClient):
            pass

        mailer = Mailer()

        @tool
        def send_note(text: str) -> dict:
            """Send."""
            return mailer.send({"text": text})
        '''
    )
    effects = effects_of(scan_files, {"agent.py": source}, tool="send_note")
    assert [e.sink for e in effects] == ["requests.post"]
    assert [s.label for s in effects[0].chain] == [
        "send_note calls AuditedClient.send",
        "AuditedClient.send calls BaseClient.send",
        "calls requests.post",
    ]


def test_recursive_pair_reaches_fixpoint(scan_files: ScanFiles) -> None:
    source = HEADER + textwrap.dedent(
        '''
        import requests

        def ping(n: int) -> None:
            if n > 0:
                pong(n - 1)

        def pong(n: int) -> None:
            requests.post("https://api.example/pong", json={"n": n})
            ping(n)

        @tool
        def bounce(n: int) -> str:
            """Bounce."""
            ping(n)
            return "ok"
        '''
    )
    effects = effects_of(scan_files, {"agent.py": source}, tool="bounce")
    assert [e.sink for e in effects] == ["requests.post"]
    # the shortest chain is kept: bounce -> ping -> pong -> sink
    assert [s.label for s in effects[0].chain] == [
        "bounce calls ping",
        "ping calls pong",
        "calls requests.post",
    ]


def test_shortest_chain_wins_when_two_paths_reach_a_sink(scan_files: ScanFiles) -> None:
    source = HEADER + textwrap.dedent(
        '''
        import requests

        def post(body: dict) -> None:
            requests.post("https://api.example", json=body)

        def wrap(body: dict) -> None:
            post(body)

        def wrap_more(body: dict) -> None:
            wrap(body)

        @tool
        def act(body: dict) -> str:
            """Act."""
            wrap_more(body)
            post(body)
            return "ok"
        '''
    )
    effects = effects_of(scan_files, {"agent.py": source})
    assert [s.label for s in effects[0].chain] == ["act calls post", "calls requests.post"]


def test_read_only_tool_calling_read_helpers_gets_nothing(scan_files: ScanFiles) -> None:
    source = HEADER + textwrap.dedent(
        '''
        import requests
        from tenacity import retry, stop_after_attempt

        class Catalog:
            def __init__(self) -> None:
                self.session = requests.Session()

            @retry(stop=stop_after_attempt(3))
            def find(self, query: str) -> list:
                return self.session.get("https://shop.example/search", params={"q": query}).json()

        catalog = Catalog()

        @tool
        def search_products(query: str) -> list:
            """Search the catalogue."""
            results = []
            for item in catalog.find(query):
                results.append(item)
            return results
        '''
    )
    result = scan_files({"agent.py": source})
    assert [f.code for f in result.findings] == []


def test_llm_calls_inside_a_tool_are_not_writes(scan_files: ScanFiles) -> None:
    body = """
        completion = client.chat.completions.create(model="gpt-5", messages=[])
        summary = claude.messages.create(model="claude", max_tokens=10, messages=[])
        vectors = client.embeddings.create(model="e", input=["x"])
        return completion, summary, vectors
    """
    prelude = "from openai import OpenAI\nfrom anthropic import Anthropic\n\nclient = OpenAI()\nclaude = Anthropic()"
    files = {"agent.py": tool_source("", body, prelude=prelude)}
    assert effects_of(scan_files, files) == []


def test_twilio_messages_create_is_still_a_message(scan_files: ScanFiles) -> None:
    prelude = 'from twilio.rest import Client\n\nclient = Client("sid", "token")'
    body = 'return client.messages.create(to="+1", from_="+2", body="hi")'
    effects = effects_of(scan_files, {"agent.py": tool_source("", body, prelude=prelude)})
    assert [e.kind for e in effects] == ["message"]


def test_boto3_client_defined_in_another_module(scan_files: ScanFiles) -> None:
    aws = 'import boto3\n\nsqs = boto3.client("sqs")\n'
    agent = tool_source(
        "from app.aws import sqs", 'sqs.send_message(QueueUrl="q", MessageBody="m")'
    )
    files = {"app/__init__.py": "", "app/aws.py": aws, "app/agent.py": agent}
    effects = effects_of(scan_files, files)
    assert [(e.kind, e.heuristic) for e in effects] == [("message", False)]


def test_service_client_attribute_write_verb_is_a_guess(scan_files: ScanFiles) -> None:
    source = HEADER + textwrap.dedent(
        '''
        class Tools:
            def __init__(self, orders_client) -> None:
                self.orders_client = orders_client

            def submit(self, cart_id: str) -> dict:
                return self.orders_client.submit_order(cart_id)

        tools_impl = Tools(None)

        @tool
        def submit_order(cart_id: str) -> dict:
            """Submit."""
            return tools_impl.submit(cart_id)
        '''
    )
    result = scan_files({"agent.py": source})
    effects = next(t for t in result.project.tools if t.name == "submit_order").effects
    assert [(e.kind, e.heuristic, e.confidence) for e in effects] == [
        ("network_write", True, Confidence.LOW)
    ]
    ag201 = [f for f in result.findings if f.code == "AG201"]
    assert ag201 and ag201[0].confidence == Confidence.LOW
    assert "not resolved" in " ".join(s.label for s in ag201[0].evidence)


def test_a_sink_reached_through_self_is_named_as_written(scan_files: ScanFiles) -> None:
    code = (
        "import psycopg\n"
        "from langchain_core.tools import tool\n\n"
        "class Notes:\n"
        "    def __init__(self, dsn: str) -> None:\n"
        "        self.dsn = dsn\n\n"
        "    def _cursor(self):\n"
        "        return psycopg.connect(self.dsn).cursor()\n\n"
        "    def add(self, text: str) -> None:\n"
        '        self._cursor().execute("INSERT INTO notes (body) VALUES (%s)", (text,))\n\n'
        'notes = Notes("postgresql://db/notes")\n\n'
        "@tool\n"
        "def save_note(text: str) -> str:\n"
        '    """Save a note."""\n'
        "    notes.add(text)\n"
        '    return "saved"\n'
    )
    result = scan_files({"notes.py": code}, select=("AG101",))
    (finding,) = result.findings
    assert "`INSERT self._cursor().execute` via `Notes.add`" in finding.message


def test_an_inherited_method_of_a_re_exported_class_held_by_self_is_followed(
    scan_files: ScanFiles,
) -> None:
    result = scan_files(
        {
            "payments/__init__.py": "from .gateway import Gateway\n",
            "payments/base.py": (
                "import httpx\n\n\nclass BaseGateway:\n"
                "    def refund(self, order_id: str) -> dict:\n"
                '        return httpx.post(f"https://pay.example/{order_id}/refunds").json()\n'
            ),
            "payments/gateway.py": (
                "from .base import BaseGateway\n\n\nclass Gateway(BaseGateway):\n    pass\n"
            ),
            "agent.py": (
                "from langchain_core.tools import BaseTool\n\nfrom payments import Gateway\n\n\n"
                "class RefundTool(BaseTool):\n"
                '    name: str = "refund"\n'
                '    description: str = "Refund an order."\n\n'
                "    def __init__(self) -> None:\n"
                "        super().__init__()\n"
                "        self._gateway = Gateway()\n\n"
                "    def _run(self, order_id: str) -> dict:\n"
                "        return self._gateway.refund(order_id)\n"
            ),
        }
    )
    keys = [f for f in result.findings if f.code == "AG201"]
    # reported in the tool, at its call into the gateway; the inherited sink is the cause
    assert [
        (f.path, f.span.line, f.tool, [(r.path, r.span.line) for r in f.related]) for f in keys
    ] == [("agent.py", 15, "refund", [("payments/base.py", 6)])]


def test_the_applications_own_mongodb_takes_no_idempotency_key(scan_files: ScanFiles) -> None:
    """MongoDB is the application's own database, as its SQL database is: an insert is a
    write to declare (AG101), deduplicated by a unique index or an upsert, not by a key."""
    source = """\
from langchain_core.tools import tool
from pymongo import MongoClient

orders = MongoClient().shop.orders


@tool
def save_order(customer: str, total: float) -> str:
    \"\"\"Save an order.\"\"\"
    return str(orders.insert_one({"customer": customer, "total": total}).inserted_id)
"""
    codes = {f.code for f in scan_files({"tools.py": source}).findings if f.tool == "save_order"}
    assert "AG101" in codes and "AG201" not in codes


def test_a_session_setting_through_sqlalchemy_text_is_no_write(scan_files: ScanFiles) -> None:
    """``conn.execute(text(f"SET @app_version = '{VERSION}'"))`` on each new connection sets
    a session variable: the read tool around it writes nothing."""
    source = """\
from langchain_core.tools import tool
from sqlalchemy import create_engine, inspect, text

VERSION = "1.0"
ENGINE = create_engine("mysql://db/app")


def get_connection():
    connection = ENGINE.connect()
    connection.execute(text(f"SET @app_version = '{VERSION}'"))
    return connection


@tool
def table_names() -> str:
    \"\"\"All table names.\"\"\"
    with get_connection() as conn:
        return ", ".join(inspect(conn).get_table_names())
"""
    result = scan_files({"tools.py": source})
    assert not [f.code for f in result.findings if f.code in {"AG101", "AG104"}]


TEAM_TOOLS = '''\
from sqlalchemy.orm import Session
from langchain_core.tools import tool

from teams.models import Project, Team, User, get_session


def _rename(db: Session, project_id: int, title: str) -> bool:
    project = db.query(Project).filter(Project.id == project_id).first()
    if project is None:
        return False
    project.title = title
    db.commit()
    return True


@tool
def rename_project(project_id: int, title: str) -> str:
    """Give a project a new title."""
    return "renamed" if _rename(get_session(), project_id, title) else "no such project"


@tool
def archive_project(project_id: int) -> str:
    """Archive a project."""
    db: Session = get_session()
    project = db.get(Project, project_id)
    setattr(project, "archived", True)
    db.commit()
    return "archived"


@tool
def join_team(user_id: int, team_id: int) -> str:
    """Add a user to a team."""
    db: Session = get_session()
    user = db.get(User, user_id)
    team = db.get(Team, team_id)
    user.teams.append(team)
    db.commit()
    return "joined"


@tool
def create_team(name: str) -> str:
    """Create a team."""
    db: Session = get_session()
    db.add(Team(name=name))
    db.commit()
    return "created"


@tool
def team_size(team_id: int) -> str:
    """How many members a team has."""
    db: Session = get_session()
    team = db.get(Team, team_id)
    size = len(team.members)
    db.commit()
    return str(size)
'''


def test_rows_changed_in_memory_are_written_by_the_sessions_commit(scan_files: ScanFiles) -> None:
    """An ORM's unit of work: attributes set on a loaded row (or a relationship appended
    to) are sent by ``session.commit()``. The tool is a local write of the application's
    database (no idempotency-key finding); a commit with nothing changed before it is no
    write."""
    result = scan_files({"teams/tools.py": TEAM_TOOLS})
    judged = {
        tool.name: sorted((e.kind, e.idempotent, e.remote) for e in tool.effects)
        for tool in result.project.tools
    }
    assert judged == {
        "rename_project": [("write", True, False)],
        "archive_project": [("write", True, False)],
        "join_team": [("write", False, False)],
        "create_team": [("write", False, False)],
        "team_size": [],
    }
    assert not [f for f in result.findings if f.code in {"AG201", "AG202"}]


LEDGER_SERVICE = """\
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from books.models import Entry


class Store:
    def __init__(self, engine: AsyncEngine):
        self.session_maker = async_sessionmaker(bind=engine, class_=AsyncSession)


class EntryStore(Store):
    async def all(self):
        async with self.session_maker() as session:
            return (await session.scalars(select(Entry))).all()

    async def add(self, memo: str):
        async with self.session_maker() as session, session.begin():
            session.add(Entry(memo=memo))

    async def rename(self, entry_id: int, memo: str):
        async with self.session_maker() as session, session.begin():
            entry = (await session.scalars(select(Entry).where(Entry.id == entry_id))).one()
            entry.memo = memo
            return entry
"""

LEDGER_TOOLS = '''\
from langchain_core.tools import tool
from sqlalchemy.ext.asyncio import create_async_engine

from books.service import EntryStore

entries = EntryStore(create_async_engine("sqlite+aiosqlite:///books.db"))


@tool
async def list_entries() -> str:
    """List the entries."""
    return str(await entries.all())


@tool
async def add_entry(memo: str) -> str:
    """Add an entry."""
    await entries.add(memo)
    return "added"


@tool
async def rename_entry(entry_id: int, memo: str) -> str:
    """Rename an entry."""
    await entries.rename(entry_id, memo)
    return "renamed"
'''


def test_a_session_made_by_a_kept_session_maker_commits_its_begin_block(
    scan_files: ScanFiles,
) -> None:
    """``self.session_maker = async_sessionmaker(...)`` kept by a base class: a session it
    makes is SQLAlchemy's, so ``session.add`` writes and ``session.scalars`` reads; a
    ``session.begin()`` block commits when it ends, writing the attributes set inside it on
    a row the session loaded. Calling the kept factory is no callable of unknown effect."""
    result = scan_files({"books/service.py": LEDGER_SERVICE, "books/tools.py": LEDGER_TOOLS})
    judged = {
        tool.name: sorted((e.kind, e.idempotent, e.remote) for e in tool.effects)
        for tool in result.project.tools
    }
    assert judged == {
        "list_entries": [],
        "add_entry": [("write", False, False)],
        "rename_entry": [("write", True, False)],
    }
    assert not [f for f in result.findings if f.code == "AG104"]


MAIL_SERVER = '''\
import requests
from fastmcp import FastMCP
from langchain_core.tools import tool

mcp = FastMCP("mail")


@mcp.tool(name="Delete Draft")
def delete_draft_tool(draft_id: str) -> str:
    """Delete a draft."""
    requests.delete(f"https://mail.example.com/drafts/{draft_id}", timeout=10)
    return "deleted"


@tool
def archive_thread(thread_id: str) -> str:
    """Archive a thread."""
    requests.post(f"https://mail.example.com/threads/{thread_id}/archive", timeout=10)
    return "archived"
'''

MAIL_AGENT = '''\
from google.adk.agents import Agent
from google.adk.tools.function_tool import FunctionTool

import mail_server


def delete_draft(draft_id: str) -> str:
    """Delete a draft."""
    return mail_server.delete_draft_tool.fn(draft_id=draft_id)


def archive(thread_id: str) -> str:
    """Archive a thread."""
    return mail_server.archive_thread.invoke({"thread_id": thread_id})


agent = Agent(
    name="mail",
    model="gemini-2.0-flash",
    tools=[FunctionTool(func=delete_draft), FunctionTool(func=archive)],
)
'''


def test_a_tool_object_a_decorator_made_runs_its_function_when_called(
    scan_files: ScanFiles,
) -> None:
    """``mail_server.delete_draft_tool.fn(...)`` (FastMCP's tool object keeps the function
    as ``fn``) and ``archive_thread.invoke({...})`` (LangChain's ``@tool`` makes a
    ``StructuredTool``): a wrapper handed to another framework does what the decorated
    function does, never nothing."""
    result = scan_files({"mail_server.py": MAIL_SERVER, "mail_agent.py": MAIL_AGENT})
    kinds = {tool.name: sorted(e.kind for e in tool.effects) for tool in result.project.tools}
    assert kinds["delete_draft"] == ["destructive"]
    assert kinds["archive"] == ["network_write"]


KENNEL_TOOLS = """\
import requests
from langchain_core.tools import BaseTool


class BookingLedger:
    def cancel_booking(self, booking_id: str) -> None:
        requests.delete(f"https://kennel.example.com/bookings/{booking_id}", timeout=10)


class CancelStay(BaseTool):
    name: str = "cancel_stay"
    description: str = "Cancel a dog's stay"

    def __init__(self, ledger):
        super().__init__()
        self.ledger = ledger

    def _run(self, booking_id: str) -> str:
        self.ledger.cancel_booking(booking_id)
        return "cancelled"
"""


def test_a_method_called_on_what_the_constructor_was_handed_is_the_projects_one(
    scan_files: ScanFiles,
) -> None:
    """``self.ledger.cancel_booking(...)`` where the constructor keeps what it was handed
    (``self.ledger = ledger``, no type named): the one project method so named runs, so the
    tool deletes; it is not read for want of a type."""
    assert [e.kind for e in effects_of(scan_files, {"kennel.py": KENNEL_TOOLS}, "cancel_stay")] == [
        "destructive"
    ]


KITCHEN_BOARD = '''\
from langchain_core.tools import tool


class Board:
    def __init__(self):
        self.cards = {}
        self.pinned = None
        self.lookup_cache = {}

    def put_card(self, title: str, text: str) -> None:
        self.cards[title] = text

    def pin(self, title: str) -> None:
        self.pinned = title

    def card(self, title: str) -> str:
        text = self.cards.get(title, "")
        self.lookup_cache[title] = text
        return text

    def open_feed(self) -> list:
        self._feed = iter(list(self.cards))
        return list(self._feed)


class Kitchen:
    def __init__(self, board: Board):
        self.board = board

    def post(self, title: str, text: str) -> str:
        self.board.put_card(title, text)
        return "posted"


board = Board()
kitchen = Kitchen(board)


@tool
def post_recipe(title: str, text: str) -> str:
    """Post a recipe card on the kitchen board."""
    return kitchen.post(title, text)


@tool
def set_featured_recipe(title: str) -> str:
    """Feature a recipe at the top of the board."""
    board.pin(title)
    return "featured"


@tool
def recipe_text(title: str) -> str:
    """The text of a recipe card."""
    return board.card(title)


@tool
def post_titles() -> str:
    """The titles of the recipe cards posted."""
    return ", ".join(board.open_feed())
'''


def test_state_kept_by_an_object_that_outlives_the_call_is_written_by_a_tool(
    scan_files: ScanFiles,
) -> None:
    """``kitchen.post`` on a module's object, then ``self.board.put_card`` inside it,
    sets an item the board keeps: every later call sees the card, a local write. A tool
    named for a change setting an attribute of the object (``self.pinned``) writes too; a
    lookup filling the object's cache, or opening its private feed, stays a read."""
    files = {"kitchen.py": KITCHEN_BOARD}
    assert [e.kind for e in effects_of(scan_files, files, "post_recipe")] == ["write"]
    assert [e.kind for e in effects_of(scan_files, files, "set_featured_recipe")] == ["write"]
    assert effects_of(scan_files, files, "recipe_text") == []
    # named with a noun first (``post``), setting only the object's private machinery
    assert effects_of(scan_files, files, "post_titles") == []


SERVICE_MANAGER = """\
import requests


class Categories:
    def add(self, name: str) -> dict:
        return requests.post("https://ledger.example.com/categories", json={"name": name}, timeout=10).json()


class Services:
    def __init__(self):
        self.categories = Categories()


services = Services()
"""

SERVICE_TOOLS = '''\
from langchain_core.tools import tool

from ledger.services import services


@tool
def add_category(name: str) -> str:
    """Add a spending category."""
    return str(services.categories.add(name))
'''


def test_a_method_reached_through_a_module_objects_typed_attribute_is_followed(
    scan_files: ScanFiles,
) -> None:
    """``services.categories.add(...)`` on another module's ``Services()``, whose
    constructor keeps a ``Categories()`` as ``self.categories``: the call runs
    ``Categories.add``, which POSTs; it is not an unresolved call of no effect."""
    files = {
        "ledger/__init__.py": "",
        "ledger/services.py": SERVICE_MANAGER,
        "ledger/tools.py": SERVICE_TOOLS,
    }
    assert [e.kind for e in effects_of(scan_files, files, "add_category")] == ["network_write"]


TODO_STORE = """\
TASKS: dict[str, str] = {}
LOOKUP_CACHE: dict[str, str] = {}
"""

TODO_TOOLS = '''\
from langchain_core.tools import tool

from todo.store import LOOKUP_CACHE, TASKS


@tool
def add_task(task_id: str, text: str) -> str:
    """Add a task."""
    TASKS[task_id] = text
    return "added"


@tool
def delete_task(task_id: str) -> str:
    """Delete a task."""
    del TASKS[task_id]
    return "deleted"


@tool
def task_text(task_id: str) -> str:
    """The text of a task."""
    text = TASKS.get(task_id, "")
    LOOKUP_CACHE[task_id] = text
    return text
'''


def test_setting_or_deleting_an_entry_of_a_modules_container_is_a_write(
    scan_files: ScanFiles,
) -> None:
    """``TASKS[task_id] = text`` and ``del TASKS[task_id]`` on a dict another module keeps:
    every later call sees the change, a local write, though no call is made. A lookup
    filling a cache kept so stays a read."""
    files = {"todo/__init__.py": "", "todo/store.py": TODO_STORE, "todo/tools.py": TODO_TOOLS}
    assert [e.kind for e in effects_of(scan_files, files, "add_task")] == ["write"]
    assert [e.kind for e in effects_of(scan_files, files, "delete_task")] == ["write"]
    assert effects_of(scan_files, files, "task_text") == []


NOTES_SERVICE = """\
import time

notes = [{"title": "groceries", "text": "milk"}]
_cooling_down: dict[str, float] = {}
_quotas: dict[str, dict] = {}


def quota(name: str) -> dict:
    _quotas[name] = kept = _quotas.get(name, {"calls": 0})
    return kept


_sessions: dict[str, dict] = {}


def session(name: str) -> dict:
    if name not in _sessions:
        _sessions[name] = {"opened": time.time()}
    return _sessions[name]


def list_notes(word: str) -> list:
    quota("list_notes")
    session("notes")
    found = [note for note in notes if word in note["text"]]
    return found


def add_note(title: str, text: str) -> dict:
    note = {"title": title, "text": text}
    notes.append(note)
    return note


def rename_note(title: str, new_title: str) -> bool:
    for note in notes:
        if note["title"] == title:
            note["title"] = new_title
            return True
    return False


def summarise(text: str) -> str:
    if "summariser" in _cooling_down:
        return text[:80]
    _cooling_down["summariser"] = time.time()
    return text[:200]
"""

NOTES_LOOP = """\
import json

from openai import OpenAI

from notes.service import add_note, list_notes, rename_note, summarise

client = OpenAI()
NO_ARGS = {"type": "object", "properties": {}}
SPECS = [
    {"type": "function", "function": {"name": "list_notes", "parameters": NO_ARGS}},
    {"type": "function", "function": {"name": "add_note", "parameters": NO_ARGS}},
    {"type": "function", "function": {"name": "rename_note", "parameters": NO_ARGS}},
    {"type": "function", "function": {"name": "summarise", "parameters": NO_ARGS}},
]
HANDLERS = {"list_notes": list_notes, "add_note": add_note, "rename_note": rename_note, "summarise": summarise}


def turn(messages: list) -> None:
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SPECS)
    for call in reply.choices[0].message.tool_calls or []:
        name = call.function.name
        messages.append(str(HANDLERS[name](**json.loads(call.function.arguments))))
"""


def test_a_list_the_module_keeps_and_hands_back_is_the_tools_data(scan_files: ScanFiles) -> None:
    """``notes.append(note)`` and ``note["title"] = new_title`` on an entry of ``for note in
    notes``, where another function hands ``notes`` back: what later calls see changes, a
    local write. A dict only tested against (``if "summariser" in _cooling_down``) is
    bookkeeping, and one given back what it holds or a default made once (``_quotas[name] =
    _quotas.get(name, {...})``, ``if name not in _sessions: _sessions[name] = ...``) a memo:
    setting them is no write."""
    files = {
        "notes/__init__.py": "",
        "notes/service.py": NOTES_SERVICE,
        "notes/loop.py": NOTES_LOOP,
    }
    assert [e.kind for e in effects_of(scan_files, files, "add_note")] == ["write"]
    assert [e.kind for e in effects_of(scan_files, files, "rename_note")] == ["write"]
    assert effects_of(scan_files, files, "list_notes") == []
    assert effects_of(scan_files, files, "summarise") == []


def test_a_commit_writes_only_rows_the_session_loaded(scan_files: ScanFiles) -> None:
    """Changing an object the function neither was handed nor loaded through the session
    (``sys.path.append(folder)``, a module's setting) before ``db.commit()`` is no row the
    commit writes: a tool that only reads its notes stays a read. A row loaded by walking a
    query still is written by the commit."""
    source = """\
import sys

from langchain_core.tools import tool
from sqlalchemy.orm import Session

from notes.models import Note, SETTINGS, get_session


@tool
def list_notes(folder: str) -> str:
    \"\"\"List the notes, with plugins from a folder.\"\"\"
    sys.path.append(folder)
    SETTINGS.last_folder = folder
    db: Session = get_session()
    notes = db.query(Note).all()
    db.commit()
    return ", ".join(note.title for note in notes)


@tool
def archive_all() -> str:
    \"\"\"Archive every note.\"\"\"
    db: Session = get_session()
    for note in db.query(Note).all():
        note.archived = True
    db.commit()
    return "archived"
"""
    result = scan_files({"notes/tools.py": source})
    judged = {
        tool.name: sorted((e.kind, e.idempotent) for e in tool.effects)
        for tool in result.project.tools
    }
    assert judged == {"list_notes": [], "archive_all": [("write", True)]}
    assert not [
        f
        for f in result.findings
        if f.code in {"AG101", "AG301", "AG801"} and f.symbol == "notes.tools.list_notes"
    ]


def test_a_function_taken_by_a_star_import_brings_its_effect(scan_files: ScanFiles) -> None:
    """``from core.pods import *`` then ``delete_pod(name)``: the call runs the function the
    star-imported module defines, so the tool deletes; it is never read."""
    files = {
        "core/__init__.py": "",
        "core/pods.py": (
            "import subprocess\n\n\n"
            "def delete_pod(name: str) -> str:\n"
            '    done = subprocess.run(["kubectl", "delete", "pod", name], capture_output=True)\n'
            "    return done.stdout.decode()\n"
        ),
        "server.py": (
            "from mcp.server.fastmcp import FastMCP\n\n"
            "from core.pods import *\n\n"
            'mcp = FastMCP("pods")\n\n\n'
            "@mcp.tool()\n"
            "def remove_pod(name: str) -> str:\n"
            '    """Delete a pod."""\n'
            "    return delete_pod(name)\n"
        ),
    }
    tool, result = only_tool(scan_files, files)
    assert [e.kind for e in tool.effects] == ["exec"]
    assert "AG101" in {f.code for f in result.findings}


def test_a_repository_commit_writes_the_row_its_own_method_loaded(scan_files: ScanFiles) -> None:
    """A repository holding its session (``self.db``) loads a row with its own method
    (``task = await self.get_by_id(task_id)``), sets its fields and commits: the commit
    writes that row, so the tool updating through it is no read."""
    files = {
        "tasks/repository.py": """\
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tasks.models import Task


class TaskRepository:
    def __init__(self, db: AsyncSession):
        self.db = db

    async def get_by_id(self, task_id):
        result = await self.db.execute(select(Task).where(Task.id == task_id))
        return result.scalar_one_or_none()

    async def rename(self, task_id, title):
        task = await self.get_by_id(task_id)
        if task is None:
            return None
        setattr(task, "title", title)
        await self.db.commit()
        return task
""",
        "tasks/tools.py": """\
from langchain_core.tools import tool

from tasks.db import session
from tasks.repository import TaskRepository


@tool
async def rename_task(task_id: str, title: str) -> str:
    \"\"\"Rename a task.\"\"\"
    task = await TaskRepository(session()).rename(task_id, title)
    return "renamed" if task else "no such task"
""",
    }
    (tool,) = scan_files(files).project.tools
    assert ("write", True) in [(e.kind, e.idempotent) for e in tool.effects]


WEATHER_DESK = """\
import httpx
from openai import OpenAI

client = OpenAI()
_forecasts: dict[str, dict] = {}
_rates: dict[str, float] = {}
bookings: dict[str, dict] = {}


def forecast(city: str) -> dict:
    if city in _forecasts:
        return _forecasts[city]
    data = httpx.get("https://weather.example.com/v1", params={"q": city}, timeout=10).json()
    _forecasts[city] = data
    return data


def rate(pair: str) -> float:
    known = _rates.get(pair)
    if known is not None:
        return known
    value = httpx.get(f"https://fx.example.com/{pair}", timeout=10).json()["rate"]
    _rates[pair] = value
    return value


def hold_table(slot: str, name: str) -> dict:
    if slot in bookings:
        return bookings[slot]
    bookings[slot] = {"slot": slot, "name": name}
    return bookings[slot]


def rebook(booking_id: str, day: str) -> dict:
    if booking_id not in bookings:
        return {"error": "no such booking"}
    bookings[booking_id] = {**bookings[booking_id], "day": day}
    return bookings[booking_id]


ANY = {"type": "object"}
TOOLS = [
    {"type": "function", "function": {"name": "forecast", "parameters": ANY}},
    {"type": "function", "function": {"name": "rate", "parameters": ANY}},
    {"type": "function", "function": {"name": "rebook", "parameters": ANY}},
    {"type": "function", "function": {"name": "hold_table", "parameters": ANY}},
]
RUN = {"forecast": forecast, "rate": rate, "rebook": rebook, "hold_table": hold_table}


def answer(messages: list) -> None:
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
    for call in reply.choices[0].message.tool_calls or []:
        messages.append(str(RUN[call.function.name](city=call.function.arguments)))
"""


def test_an_entry_kept_for_the_next_call_that_asks_the_same_is_a_memo_not_a_write(
    scan_files: ScanFiles,
) -> None:
    """A lookup that first answers from a module dict when it holds the key (``if city in
    _forecasts: return _forecasts[city]``, or ``.get`` and return what it found) and stores
    what it fetched under that key keeps a copy for the next call: the tool stays a read,
    whatever the dict is named. A tool whose test of the dict ends in an error, and then
    changes the entry, writes; so does one that answers an entry there and otherwise
    writes a new record from its arguments (a get-or-create)."""
    files = {"desk/__init__.py": "", "desk/agent.py": WEATHER_DESK}
    assert effects_of(scan_files, files, "forecast") == []
    assert effects_of(scan_files, files, "rate") == []
    assert [e.kind for e in effects_of(scan_files, files, "rebook")] == ["write"]
    assert [e.kind for e in effects_of(scan_files, files, "hold_table")] == ["write"]


TASK_LIST = """\
import time

from langchain_core.tools import tool

tasks = []
_client = None


def all_tasks() -> list:
    return tasks


@tool
def delete_task(title: str) -> str:
    \"\"\"Delete the tasks with a title.\"\"\"
    global tasks
    tasks = [task for task in tasks if task["title"] != title]
    return "deleted"


@tool
def count_tasks() -> int:
    \"\"\"How many tasks there are.\"\"\"
    global _client
    if _client is None:
        _client = object()
    return len(tasks)


calls = []
hits = {}


def recent_calls() -> list:
    return calls


def hits_of(user: str) -> list:
    return hits.get(user, [])


@tool
def search_tasks(word: str, user: str) -> list:
    \"\"\"Tasks holding a word.\"\"\"
    global calls
    calls = [t for t in calls if time.time() - t < 60]
    hits[user] = [t for t in hits.get(user, []) if time.time() - t < 60]
    return [task for task in tasks if word in task["title"]]
"""


def test_rebinding_a_kept_list_to_what_is_left_of_it_is_a_write(scan_files: ScanFiles) -> None:
    """``global tasks; tasks = [t for t in tasks if ...]`` where another function hands
    ``tasks`` back: what every later call sees changes, a local write. A variable first
    bound on first use (``_client = object()``) is set-up, and a list pruned by the clock
    (what is left of the last minute's calls) bookkeeping."""
    files = {"todo/__init__.py": "", "todo/tools.py": TASK_LIST}
    assert [e.kind for e in effects_of(scan_files, files, "delete_task")] == ["write"]
    assert effects_of(scan_files, files, "count_tasks") == []
    # a window pruned by the clock, whole or per user: bookkeeping, the search reads
    assert effects_of(scan_files, files, "search_tasks") == []


CRM_DATABASE = """\
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

engine = create_async_engine("sqlite+aiosqlite:///crm.db")
async_session_factory = async_sessionmaker(engine, expire_on_commit=False)
"""

CRM_TOOLS = """\
from langchain_core.tools import tool
from sqlalchemy import select

from crm.database import async_session_factory
from crm.models import Contact


@tool
async def rename_contact(contact_id: int, name: str) -> str:
    \"\"\"Rename a contact.\"\"\"
    async with async_session_factory() as session:
        contact = (await session.execute(select(Contact).where(Contact.id == contact_id))).scalar_one()
        setattr(contact, "name", name)
        await session.commit()
    return "renamed"


@tool
async def find_contact(contact_id: int) -> str:
    \"\"\"Find a contact.\"\"\"
    async with async_session_factory() as session:
        contact = (await session.execute(select(Contact).where(Contact.id == contact_id))).scalar_one()
        return contact.name
"""


def test_a_session_made_by_a_factory_another_module_keeps_is_a_session(
    scan_files: ScanFiles,
) -> None:
    """``async with async_session_factory() as session`` with the factory an
    ``async_sessionmaker`` of another module: the session is an ``AsyncSession``, so the
    commit after changing a loaded row writes it; the lookup reads."""
    files = {
        "crm/__init__.py": "",
        "crm/database.py": CRM_DATABASE,
        "crm/models.py": "class Contact:\n    id: int\n    name: str\n",
        "crm/tools.py": CRM_TOOLS,
    }
    assert [e.kind for e in effects_of(scan_files, files, "rename_contact")] == ["write"]
    assert effects_of(scan_files, files, "find_contact") == []


GRAPH_TOOLS = """\
from langchain_core.tools import tool


class Node:
    def __init__(self, title: str) -> None:
        self.title = title


class Graph:
    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}

    def node_title(self, node_id: str) -> str:
        node = self.nodes[node_id]
        return node.title

    def update_node(self, node_id: str, title: str) -> None:
        node = self.nodes[node_id]
        node.title = title


graph = Graph()


@tool
def update_node(node_id: str, title: str) -> str:
    \"\"\"Rename a node of the graph.\"\"\"
    graph.update_node(node_id, title)
    return "updated"


@tool
def node_title(node_id: str) -> str:
    \"\"\"The title of a node.\"\"\"
    return graph.node_title(node_id)
"""


def test_an_attribute_set_on_an_entry_an_object_keeps_changes_its_state(
    scan_files: ScanFiles,
) -> None:
    """``node = self.nodes[node_id]; node.title = title`` in a method of an object the
    module keeps, run by a tool named for a change: the entry's change is the object's
    state changed, a local write. Reading the title changes nothing."""
    files = {"kg/__init__.py": "", "kg/tools.py": GRAPH_TOOLS}
    assert [e.kind for e in effects_of(scan_files, files, "update_node")] == ["write"]
    assert effects_of(scan_files, files, "node_title") == []


TODO_MANAGER_TS = """\
export class TodoManager {
  private todos: { id: string; content: string }[] = [];

  addTodo(todo: { id: string; content: string }) {
    this.todos.push(todo);
  }

  getTodos() {
    return this.todos;
  }
}
"""

TODO_TOOLS_TS = """\
import { tool } from 'ai';
import { z } from 'zod';
import { TodoManager } from './todos';

type ToolContext = { todoManager: TodoManager };

export const addTodoTool = tool({
  description: 'Add a todo item',
  inputSchema: z.object({ id: z.string(), content: z.string() }),
  execute: (input, { experimental_context }) => {
    const context = experimental_context as ToolContext;
    const { todoManager } = context;
    todoManager.addTodo({ id: input.id, content: input.content });
    return { message: 'added' };
  },
});

export const listTodosTool = tool({
  description: 'List the todo items',
  inputSchema: z.object({}),
  execute: (input, { experimental_context }) => {
    const context = experimental_context as ToolContext;
    return { todos: context.todoManager.getTodos() };
  },
});
"""


def test_a_change_to_an_object_the_run_context_holds_is_a_write(scan_files: ScanFiles) -> None:
    """The Vercel AI SDK hands a tool ``experimental_context``: an object it holds (a todo
    manager) outlives the call, so ``addTodo`` pushing onto its list is a local write;
    listing the todos reads."""
    files = {"src/todos.ts": TODO_MANAGER_TS, "src/tools.ts": TODO_TOOLS_TS}
    assert [e.kind for e in effects_of(scan_files, files, "addTodoTool")] == ["write"]
    assert effects_of(scan_files, files, "listTodosTool") == []
