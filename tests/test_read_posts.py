"""POSTs that only read (search, embeddings, model calls, GraphQL queries) are not writes;
POSTs that write stay writes, whatever rule asks."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import ScanFiles

HEADER = """\
import os

import httpx
import requests
from langchain_core.tools import tool

BASE = os.environ.get("SERVICE_URL", "https://svc.example")
"""


def _tool(body: str, name: str = "lookup", extra: str = "", doc: str = "Answer a question.") -> str:
    return (
        HEADER
        + textwrap.dedent(extra)
        + f"\n\n@tool\ndef {name}(q: str) -> dict:\n"
        + f'    """{doc}"""\n'
        + textwrap.indent(textwrap.dedent(body), "    ")
    )


def _write_codes(scan_files: ScanFiles, source: str) -> dict[str, str]:
    """Codes of the Q1/Q2/Q3 write findings, with their confidence."""
    result = scan_files({"tools.py": source})
    return {
        f.code: f.confidence.value
        for f in result.findings
        if f.code in {"AG101", "AG201", "AG301", "AG801"}
    }


@pytest.mark.parametrize(
    "body",
    [
        # a search API by its path, through a module constant
        'return requests.post(TAVILY, json={"query": q, "max_results": 5}).json()\n',
        # embeddings and chat completions under an f-string base URL
        'return httpx.post(f"{BASE}/v1/embeddings", json={"input": q}).json()\n',
        'return httpx.post(f"{BASE}/v1/chat/completions", json={"messages": []}).json()\n',
        # Elasticsearch _search with the index as a placeholder
        'return requests.post(f"{BASE}/{q}/_search", json={"size": 3}).json()\n',
        # a vector store query, URL built by concatenation
        'return requests.post(BASE + "/collections/docs/points/query", json={"limit": 3}).json()\n',
        # a GraphQL query document held in a constant
        'return httpx.post(f"{BASE}/graphql", json={"query": PRODUCTS}).json()\n',
        # a model call by its body, URL unknown
        'return requests.post(os.environ["LLM_URL"], json={"model": "m", "prompt": q}).json()\n',
        # a search host, whatever the path
        'return requests.post("https://api.tavily.com/v1", json={"q": q}).json()\n',
    ],
)
def test_a_post_that_reads_is_not_a_write(scan_files: ScanFiles, body: str) -> None:
    extra = """
    TAVILY = "https://api.tavily.com/search"
    PRODUCTS = "query Products($q: String!) { products(q: $q) { id name } }"
    """
    assert _write_codes(scan_files, _tool(body, extra=extra)) == {}


@pytest.mark.parametrize(
    ("body", "name"),
    [
        ('return requests.post(f"{BASE}/orders", json={"cart": q}).json()\n', "create_order"),
        # a write verb in the last path segment wins over the search before it
        ('return requests.post(f"{BASE}/logs/_delete_by_query", json={"q": q}).json()\n', "lookup"),
        (
            'return requests.post("https://slack.com/api/chat.postMessage", json={"text": q}).json()\n',
            "lookup",
        ),
        ('return httpx.post(f"{BASE}/graphql", json={"query": CREATE}).json()\n', "lookup"),
        # a POST the request does not judge, in a tool named for a write
        ('return requests.post(os.environ["CRM_URL"], json={"lead": q}).json()\n', "add_lead"),
    ],
)
def test_a_post_that_writes_stays_a_write(scan_files: ScanFiles, body: str, name: str) -> None:
    extra = 'CREATE = "mutation Create($n: String!) { createProduct(name: $n) { id } }"\n'
    codes = _write_codes(scan_files, _tool(body, name=name, extra=extra))
    assert codes.get("AG101") == "high"
    assert codes.get("AG201") == "high"
    assert "AG301" in codes and "AG801" in codes


def test_an_unjudged_post_in_a_tool_named_to_read_is_not_a_write(scan_files: ScanFiles) -> None:
    body = 'return requests.post(os.environ["CATALOG_API"], json={"term": q}).json()\n'
    assert _write_codes(scan_files, _tool(body, name="search_catalog")) == {}
    assert "AG201" in _write_codes(scan_files, _tool(body, name="catalog", doc="Catalog."))
    # the description speaks when the name does not
    assert _write_codes(scan_files, _tool(body, name="catalog", doc="Search the catalog.")) == {}


def test_mixed_evidence_keeps_the_write_at_low_confidence(scan_files: ScanFiles) -> None:
    # the path searches, the body is a GraphQL mutation
    body = 'return httpx.post(f"{BASE}/search/graphql", json={"query": CREATE}).json()\n'
    extra = 'CREATE = "mutation { reindex { ok } }"\n'
    codes = _write_codes(scan_files, _tool(body, name="refresh", extra=extra))
    assert codes.get("AG101") == "low"
    assert codes.get("AG201") == "low"


def test_a_search_shaped_body_is_weak_evidence(scan_files: ScanFiles) -> None:
    body = 'return requests.post(os.environ["API_URL"], json={"query": q}).json()\n'
    assert (
        _write_codes(scan_files, _tool(body, name="support_desk", doc="Support desk.")).get("AG201")
        == "low"
    )
    assert _write_codes(scan_files, _tool(body, name="ask_docs")) == {}


HELPER = """\
import requests
from langchain_core.tools import tool

API = "https://svc.example"


class Backend:
    def __init__(self) -> None:
        self.session = requests.Session()

    def _post(self, path: str, body: dict) -> dict:
        return self.session.post(f"{API}{path}", json=body, timeout=10).json()


backend = Backend()


@tool
def similar_docs(text: str) -> dict:
    \"\"\"Documents like this text.\"\"\"
    return backend._post("/v1/search", {"text": text})


@tool
def open_ticket(title: str) -> dict:
    \"\"\"Open a support ticket.\"\"\"
    return backend._post("/v1/tickets", {"title": title})
"""


def test_a_helper_post_reads_or_writes_as_its_callers_url_says(scan_files: ScanFiles) -> None:
    result = scan_files({"tools.py": HELPER})
    blamed = {(f.code, f.tool) for f in result.findings if f.code in {"AG101", "AG201"}}
    assert blamed == {("AG101", "open_ticket"), ("AG201", "open_ticket")}


def test_unknown_client_post_to_a_query_endpoint_is_not_a_write(scan_files: ScanFiles) -> None:
    source = """\
from mcp.server.fastmcp import FastMCP

from app.http import api_client

mcp = FastMCP("kb")


@mcp.tool()
async def kb(question: str) -> dict:
    return await api_client.post("/api/v1/query", json={"question": question})


@mcp.tool()
async def kb_note(note: str) -> dict:
    return await api_client.post("/api/v1/notes", json={"note": note})
"""
    result = scan_files({"server.py": source})
    assert {f.tool for f in result.findings if f.code == "AG101"} == {"kb_note"}


def test_graphql_documents_imported_from_another_module(scan_files: ScanFiles) -> None:
    queries = (
        'CREATE_ISSUE_QUERY = """mutation ($t: String!) { issueCreate(input: {title: $t}) { success } }"""\n'
        'ISSUES = """query { issues { nodes { id title } } }"""\n'
    )
    tools = """\
import requests
from langchain_core.tools import tool

from app.queries import CREATE_ISSUE_QUERY, ISSUES

URL = "https://tracker.example/graphql"


@tool
def file_bug(title: str) -> dict:
    \"\"\"File a bug.\"\"\"
    return requests.post(URL, json={"query": CREATE_ISSUE_QUERY, "variables": {"t": title}}).json()


@tool
def open_bugs() -> dict:
    \"\"\"Open bugs.\"\"\"
    return requests.post(URL, json={"query": ISSUES}).json()
"""
    result = scan_files({"app/queries.py": queries, "app/tools.py": tools})
    assert {f.tool for f in result.findings if f.code == "AG201"} == {"file_bug"}


def test_a_url_builder_named_like_a_read_does_not_make_a_helpers_post_read(
    scan_files: ScanFiles,
) -> None:
    """``url = _get_url(self.base, path)`` in a request helper: the builder's name is not
    part of the URL, so the caller's ``"POST", "/orders"`` decides (a write)."""
    extra = """
        def _get_url(base: str, path: str) -> str:
            return base.rstrip("/") + "/" + path.lstrip("/")


        class Api:
            def __init__(self) -> None:
                self.session = requests.Session()

            def call(self, method: str, path: str, payload: dict) -> dict:
                url = _get_url(BASE, path)
                return self.session.request(method, url, json=payload).json()


        api = Api()
    """
    source = _tool('return api.call("POST", "/orders", {"q": q})\n', name="order", extra=extra)
    assert "AG101" in _write_codes(scan_files, source)


def test_a_url_template_filled_by_format_is_read_as_the_url(scan_files: ScanFiles) -> None:
    """``RUN_URL.format(action_id=...)``: the template's path says the POST runs an action,
    so a helper named like a query does not make it a read."""
    extra = """
        RUN_URL = "https://automations.example/api/v1/actions/{action_id}/execute/"


        def natural_language_query(action_id: str, instructions: str) -> str:
            return requests.post(RUN_URL.format(action_id=action_id), data=instructions).text
    """
    source = _tool(
        "return natural_language_query(q, 'archive the thread')\n",
        name="lookup_action",
        extra=extra,
    )
    assert "AG101" in _write_codes(scan_files, source)


def test_a_json_rpc_post_does_what_its_method_names(scan_files: ScanFiles) -> None:
    source = '''
import requests
from langchain_core.tools import tool

NODE = "https://node.example/rpc"


@tool
def wallet_balance(address: str) -> dict:
    """The balance of a wallet."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance", "params": [address, "latest"]}
    return requests.post(NODE, json=body).json()


@tool
def send_payment(signed: str) -> dict:
    """Broadcast a signed transaction."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_sendRawTransaction", "params": [signed]}
    return requests.post(NODE, json=body).json()
'''
    result = scan_files({"agent.py": source})
    flagged = {f.tool for f in result.findings if f.code in {"AG101", "AG201"}}
    assert flagged == {"send_payment"}


def test_an_rpc_helper_posting_its_operation_parameter_is_judged_by_each_callers_operation(
    scan_files: ScanFiles,
) -> None:
    # A local desktop app's action API: one helper posts {"action": ..., "params": ...};
    # each tool's effect is the operation it passes.
    source = '''
import httpx
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("flashcards")
API = "http://127.0.0.1:8765"


async def call_app(action: str, params: dict | None = None) -> object:
    async with httpx.AsyncClient() as client:
        reply = await client.post(API, json={"action": action, "version": 6, "params": params or {}})
        return reply.json()["result"]


@mcp.tool()
async def find_cards(query: str) -> object:
    """Cards matching a query."""
    return await call_app("findCards", {"query": query})


@mcp.tool()
async def rename_deck(deck: str, name: str) -> object:
    """Give a deck a new name."""
    return await call_app("updateDeckName", {"deck": deck, "name": name})


@mcp.tool()
async def drop_cards(card_ids: list[int]) -> object:
    """Remove cards."""
    return await call_app("deleteCards", {"cards": card_ids})


@mcp.tool()
async def new_card(front: str, back: str) -> object:
    """Make a card."""
    return await call_app("addCard", {"front": front, "back": back})
'''
    result = scan_files({"server.py": source})
    by_rule: dict[str, set[str | None]] = {}
    for f in result.findings:
        by_rule.setdefault(f.code, set()).add(f.tool)
    # Reads get no write finding; every write is undeclared; only the create lacks a key.
    assert by_rule.get("AG101") == {"rename_deck", "drop_cards", "new_card"}
    assert by_rule.get("AG201") == {"new_card"}
    kinds = {t.name: {e.kind for e in t.effects} for t in result.project.tools}
    assert kinds["drop_cards"] == {"destructive"}


def test_rpc_operations_that_set_a_state_or_add_links_or_no_verb_names_are_no_creates(
    scan_files: ScanFiles,
) -> None:
    source = '''
import requests
from langchain_core.tools import tool

RPC = "http://127.0.0.1:8080/api"


def rpc(action: str, **params: object) -> object:
    return requests.post(RPC, json={"action": action, "params": params}, timeout=10).json()


@tool
def pause_job(job_id: int) -> object:
    """Pause a job."""
    return rpc("suspend", jobs=[job_id])


@tool
def label_jobs(job_ids: list[int], label: str) -> object:
    """Label jobs."""
    return rpc("addTags", jobs=job_ids, tags=label)


@tool
def nudge_job(job_id: int) -> object:
    """Nudge a job."""
    return rpc("kickJob", job=job_id)
'''
    result = scan_files({"jobs.py": source})
    assert not [f for f in result.findings if f.code == "AG201"]
    kinds = {t.name: {e.kind for e in t.effects} for t in result.project.tools}
    # An operation no verb names is unknown, never read.
    assert kinds["nudge_job"] == {"unknown"}
    assert {f.tool for f in result.findings if f.code == "AG101"} == {"pause_job", "label_jobs"}


def test_a_read_word_naming_the_collection_before_an_id_says_nothing_of_the_post(
    scan_files: ScanFiles,
) -> None:
    """``/search/{search_id}/feedback``: ``search`` names the collection an id follows, so
    the POST that records feedback on one search is no read; ``/documents/{id}/search``
    still asks."""
    writes = _tool(
        'return requests.post(f"{BASE}/v2/search/{q}/feedback", json={"rating": "good"}).json()\n',
        name="grade_hit",
        doc="Grade a hit.",
    )
    assert "AG101" in _write_codes(scan_files, writes)
    reads = _tool(
        'return requests.post(f"{BASE}/v2/documents/{q}/search", json={"q": "x"}).json()\n',
        name="search_document",
        doc="Search in a document.",
    )
    assert _write_codes(scan_files, reads) == {}
