"""Retries decided by a response status, and retries inside a project's own HTTP client.

A client whose request method sends again on some statuses re-sends every write its
callers pass through it: each tool whose non-idempotent write reaches that loop gets the
finding, in the tool, with the loop as evidence. Retries only on "not processed" answers
(429, 423) and retries of reads or of overwrites are fine.
"""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles

HEAD = """
from langchain_core.tools import tool

from shop.client import ShopClient

client = ShopClient()
"""
TOOLS = (
    HEAD
    + '''

@tool
def create_order(cart_id: str) -> dict:
    """Create an order from a cart."""
    return client.request("/orders", method="POST", data={"cart": cart_id})


@tool
def get_order(order_id: str) -> dict:
    """Look an order up."""
    return client.request(f"/orders/{order_id}")


@tool
def rename_order(order_id: str, name: str) -> dict:
    """Rename an order."""
    return client.request(f"/orders/{order_id}", method="PUT", data={"name": name})
'''
)

CLIENT = """
import time

import requests


class ShopClient:
    base_url = "https://shop.example/api"

    def request(self, path: str, method: str = "GET", data: dict | None = None) -> dict:
        {body}
"""

# The send, then the decision on its status, as each shape writes it.
PREDICATE = """
        for attempt in range(4):
            response = requests.request(method, self.base_url + path, json=data, timeout=10)
            if response.status_code < 400:
                return response.json()
            if not self._retryable(response.status_code) or attempt == 3:
                raise RuntimeError(f"shop error {response.status_code}")
            time.sleep(2**attempt)
        raise RuntimeError("unreachable")

    def _retryable(self, code: int) -> bool:
        return code == 429 or code >= 500
"""
ONLY_429 = """
        while True:
            response = requests.request(method, self.base_url + path, json=data, timeout=10)
            if response.status_code == 429:
                time.sleep(float(response.headers.get("Retry-After", "1")))
                continue
            response.raise_for_status()
            return response.json()
"""
STATUS_SET = """
        for attempt in range(3):
            response = requests.request(method, self.base_url + path, json=data, timeout=10)
            if response.status_code in RETRY_STATUSES:
                time.sleep(attempt + 1)
                continue
            response.raise_for_status()
            return response.json()
        raise RuntimeError("shop unavailable")


RETRY_STATUSES = frozenset({429, 502, 503, 504})
"""
OK_FLAG = """
        for attempt in range(3):
            response = requests.request(method, self.base_url + path, json=data, timeout=10)
            if response.ok:
                return response.json()
            if attempt == 2:
                response.raise_for_status()
            time.sleep(1)
        raise RuntimeError("shop unavailable")
"""
HANDLER_429 = """
        for attempt in range(3):
            try:
                response = requests.request(method, self.base_url + path, json=data, timeout=10)
                response.raise_for_status()
                return response.json()
            except requests.HTTPError as exc:
                if exc.response is not None and exc.response.status_code == 429:
                    time.sleep(2**attempt)
                    continue
                raise
        raise RuntimeError("rate limited")
"""
HANDLER_5XX = HANDLER_429.replace("status_code == 429", "status_code >= 500")


def client_source(body: str, client: str = CLIENT) -> str:
    """``shop/client.py``: the ``ShopClient.request`` method with ``body`` as its body."""
    return textwrap.dedent(client).replace("{body}", body.strip("\n").lstrip())


def shop_project(body: str, tools: str = TOOLS, client: str = CLIENT) -> dict[str, str]:
    """The ``shop`` package: its client (``body`` in ``request``) and the tools using it."""
    return {
        "shop/__init__.py": "",
        "shop/client.py": client_source(body, client),
        "shop/tools.py": tools,
    }


def retry_findings(scan_files: ScanFiles, body: str, tools: str = TOOLS) -> list[tuple]:
    result = scan_files(shop_project(body, tools))
    return sorted(
        (f.code, f.tool, f.path, f.span.line) for f in result.findings if f.code.startswith("AG9")
    )


def test_client_resending_on_5xx_is_reported_in_the_write_tool(scan_files: ScanFiles) -> None:
    # Only the POST: the GET and the PUT through the same client are safe to send again.
    assert retry_findings(scan_files, PREDICATE) == [("AG902", "create_order", "shop/tools.py", 12)]


def test_the_finding_names_the_retry_loop_as_evidence(scan_files: ScanFiles) -> None:
    (finding,) = [f for f in scan_files(shop_project(PREDICATE)).findings if f.code == "AG902"]
    assert "429, 5xx" in finding.message and "ShopClient.request" in finding.message
    retry = [step for step in finding.evidence if step.kind.value == "retry"]
    assert retry and retry[0].location is not None
    assert retry[0].location.path == "shop/client.py" and retry[0].location.span.line == 11


def test_client_resending_on_a_set_of_statuses(scan_files: ScanFiles) -> None:
    assert retry_findings(scan_files, STATUS_SET) == [
        ("AG902", "create_order", "shop/tools.py", 12)
    ]


def test_client_resending_on_any_failure_status(scan_files: ScanFiles) -> None:
    assert retry_findings(scan_files, OK_FLAG) == [("AG902", "create_order", "shop/tools.py", 12)]


def test_client_resending_only_on_429_is_fine(scan_files: ScanFiles) -> None:
    # A 429 says the request was not processed: sending it again duplicates nothing.
    assert retry_findings(scan_files, ONLY_429) == []


def test_handler_retrying_429_and_raising_otherwise_is_fine(scan_files: ScanFiles) -> None:
    assert retry_findings(scan_files, HANDLER_429) == []


def test_handler_retrying_5xx_and_raising_otherwise(scan_files: ScanFiles) -> None:
    assert retry_findings(scan_files, HANDLER_5XX) == [
        ("AG902", "create_order", "shop/tools.py", 12)
    ]


def test_only_reads_through_the_retrying_client_is_fine(scan_files: ScanFiles) -> None:
    reads = (
        TOOLS.split("@tool\ndef create_order")[0]
        + "@tool\ndef get_order"
        + (TOOLS.split("@tool\ndef get_order")[1].split("@tool")[0])
    )
    assert retry_findings(scan_files, PREDICATE, tools=reads) == []


def test_write_with_a_stable_key_through_the_retrying_client_is_fine(
    scan_files: ScanFiles,
) -> None:
    tools = (
        HEAD
        + '''

@tool
def create_order(cart_id: str, run_id: str) -> dict:
    """Create an order from a cart."""
    return client.request(
        "/orders", method="POST", data={"cart": cart_id}, key=f"order:{run_id}:{cart_id}"
    )
'''
    )
    body = PREDICATE.replace(
        "json=data, timeout=10", 'json=data, headers={"Idempotency-Key": key}, timeout=10'
    )
    client = CLIENT.replace("data: dict | None = None)", "data: dict | None = None, key: str = '')")
    result = scan_files(shop_project(body, tools, client))
    assert [f for f in result.findings if f.code.startswith("AG9")] == []


def test_status_retry_loop_inside_the_tool(scan_files: ScanFiles) -> None:
    source = '''
import time

import httpx
from langchain_core.tools import tool


@tool
def send_invoice(invoice_id: str) -> dict:
    """Send an invoice to its customer."""
    for attempt in range(3):
        response = httpx.post(f"https://billing.example/invoices/{invoice_id}/send", timeout=10)
        if response.is_success:
            return response.json()
        if response.is_server_error:
            time.sleep(2**attempt)
            continue
        response.raise_for_status()
    raise RuntimeError("billing unavailable")
'''
    result = scan_files({"agent.py": source})
    found = sorted((f.code, f.tool, f.span.line) for f in result.findings if f.code[:3] == "AG9")
    assert found == [("AG902", "send_invoice", 11)]


def test_pager_and_batch_loops_are_not_retries(scan_files: ScanFiles) -> None:
    source = '''
import httpx
from langchain_core.tools import tool


@tool
def post_all(messages: list[str]) -> int:
    """Post every message to the channel."""
    for index in range(len(messages)):
        response = httpx.post("https://chat.example/messages", json={"text": messages[index]})
        if response.status_code >= 500:
            continue
        response.raise_for_status()
    return len(messages)


@tool
def export_rows(url: str) -> list:
    """Export every row of a report."""
    rows: list = []
    while url:
        response = httpx.post(url, json={"format": "rows"})
        if response.status_code != 200:
            raise RuntimeError("export failed")
        rows += response.json()["rows"]
        url = response.json().get("next")
    return rows
'''
    result = scan_files({"agent.py": source})
    assert [f for f in result.findings if f.code.startswith("AG9")] == []


def test_adding_an_id_to_a_set_through_the_retrying_client_is_fine(
    scan_files: ScanFiles,
) -> None:
    # POST .../idLabels adds an existing label to the card's set of labels: a re-send
    # finds it there already. Still a write (declared or not), never a create.
    tools = (
        HEAD
        + '''

@tool
def tag_order(order_id: str, tag_id: str) -> dict:
    """Tag an order."""
    return client.request(f"/orders/{order_id}/idTags", method="POST", data={"value": tag_id})


@tool
def add_watchers(order_id: str, user_id: str) -> dict:
    """Add a watcher to an order."""
    return client.request(f"/orders/{order_id}/watcher_ids", method="POST", data={"id": user_id})
'''
    )
    found = sorted(
        (f.code, f.tool) for f in scan_files(shop_project(PREDICATE, tools)).findings if f.tool
    )
    assert ("AG101", "tag_order") in found and ("AG101", "add_watchers") in found
    assert [c for c in found if c[0] in {"AG201", "AG902"}] == []


# ---------------------------------------------------------------- client retry settings
BOTO = '''
import boto3
from botocore.config import Config
from langchain_core.tools import tool

RETRYING = Config(retries={retries})
sqs = boto3.client("sqs", region_name="eu-west-1", config=RETRYING)


@tool
def enqueue_job(payload: str) -> str:
    """Queue a job."""
    return sqs.send_message(QueueUrl="https://sqs.example/jobs", MessageBody=payload)["MessageId"]


@tool
def queue_depth() -> int:
    """How many jobs wait."""
    attrs = sqs.get_queue_attributes(QueueUrl="https://sqs.example/jobs")
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])
'''


def client_findings(scan_files: ScanFiles, source: str) -> list[tuple]:
    result = scan_files({"agent.py": source})
    return sorted((f.code, f.tool, f.span.line) for f in result.findings if f.code[:3] == "AG9")


def test_botocore_retry_config_on_a_client_that_sends(scan_files: ScanFiles) -> None:
    source = BOTO.replace("{retries}", '{"max_attempts": 5, "mode": "standard"}')
    assert client_findings(scan_files, source) == [("AG902", "enqueue_job", 13)]
    (finding,) = [f for f in scan_files({"agent.py": source}).findings if f.code == "AG902"]
    assert "max_attempts" in finding.message and "enqueue_job" in finding.message


def test_botocore_config_that_sends_once_is_fine(scan_files: ScanFiles) -> None:
    source = BOTO.replace("{retries}", '{"total_max_attempts": 1}')
    assert client_findings(scan_files, source) == []


SESSION = '''
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry
from langchain_core.tools import tool


class Chat:
    def __init__(self) -> None:
        self.session = requests.Session()
        self.session.mount("https://", HTTPAdapter(max_retries={retry}))

    def post_message(self, channel: str, text: str) -> dict:
        return self.session.post(
            "https://chat.example/api/messages", json={"channel": channel, "text": text}
        ).json()


chat = Chat()


@tool
def send_message(channel: str, text: str) -> dict:
    """Post a message to a channel."""
    return chat.post_message(channel, text)
'''


def test_session_adapter_retrying_posts(scan_files: ScanFiles) -> None:
    source = SESSION.replace(
        "{retry}", "Retry(total=3, status_forcelist=[502, 503], allowed_methods=None)"
    )
    found = client_findings(scan_files, source)
    # AG904 flags the setting itself; AG902 the tool whose POST it re-sends.
    assert ("AG902", "send_message", 25) in found and [c for c, *_ in found] == ["AG902", "AG904"]


def test_session_adapter_with_default_methods_is_fine(scan_files: ScanFiles) -> None:
    # urllib3 re-sends only idempotent methods by default: the POST is sent once.
    source = SESSION.replace("{retry}", "Retry(total=3, status_forcelist=[502, 503])")
    assert client_findings(scan_files, source) == []


def test_httpx_transport_retries_only_connect_errors(scan_files: ScanFiles) -> None:
    # httpx's transport retries= re-tries a failed connection only: nothing was sent.
    source = '''
import httpx
from langchain_core.tools import tool

client = httpx.Client(transport=httpx.HTTPTransport(retries=3))


@tool
def create_ticket(title: str) -> dict:
    """Open a support ticket."""
    return client.post("https://support.example/tickets", json={"title": title}).json()
'''
    assert client_findings(scan_files, source) == []


def test_client_resending_after_refreshing_a_credential_is_fine(scan_files: ScanFiles) -> None:
    # A 401 says the request was refused: nothing was applied, sending it again is safe.
    body = """
        for attempt in range(2):
            response = requests.request(method, self.base_url + path, json=data, timeout=10)
            if self._expired(response):
                self.token = None
                continue
            response.raise_for_status()
            return response.json()
        raise RuntimeError("unauthorised")

    def _expired(self, response: requests.Response) -> bool:
        return response.status_code == 401
"""
    assert retry_findings(scan_files, body) == []
    assert retry_findings(scan_files, body.replace("== 401", ">= 500")) == [
        ("AG902", "create_order", "shop/tools.py", 12)
    ]


def test_status_facts_read_back_from_the_cache_unchanged() -> None:
    # A handler no status decides (None) and one that goes on for no status (()) differ.
    from agentguard.engine import fact_cache
    from agentguard.facts.extract import extract
    from agentguard.knowledge.catalog import Catalog, builtin_data

    carriers = Catalog(builtin_data()).context_carriers
    for body in (PREDICATE, HANDLER_429, HANDLER_5XX, ONLY_429):
        facts = extract(client_source(body).encode(), "shop/client.py", carriers)
        assert fact_cache.decode(fact_cache.encode(facts)) == facts
    source = client_source(HANDLER_5XX)
    (request,) = [f for f in extract(source.encode(), "c.py", carriers).functions.values()]
    assert [h.retried_statuses for h in request.handlers] == [(500, 502, 503, 504)]
