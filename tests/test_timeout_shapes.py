"""AG401 on timeouts as real code writes them: the handler in the tool, in a helper the tool
calls, in a context manager around the call; a transport-error class that includes a
timeout; a catch-all around a call with a timeout set; a polling deadline; a retry loop that
ends in failure. And what must stay quiet: reads, idempotent writes, a catch-all with no
timeout set, a handler that re-raises or says the outcome is unknown."""

from __future__ import annotations

import pytest

from agentguard.diagnostics import Finding, StepKind
from agentguard.knowledge.catalog import CatalogError

from .conftest import ScanFiles, line_of

HEAD = "from langchain_core.tools import tool\n"


def ag401(scan_files: ScanFiles, source: str, **files: str) -> list[Finding]:
    result = scan_files({"agent.py": source, **files}, select=("AG401",))
    return [f for f in result.findings if f.code == "AG401"]


def one_finding(scan_files: ScanFiles, source: str, tool: str, at: str, **files: str) -> Finding:
    """The one AG401 finding, checked to be ``tool``'s, in ``agent.py`` on the line with
    ``at``."""
    (finding,) = ag401(scan_files, source, **files)
    assert (finding.tool, finding.path) == (tool, "agent.py")
    assert finding.span.line == line_of(source, at)
    return finding


def handler_at(finding: Finding) -> tuple[str, int]:
    """Where the finding's first handler step points: the code that turns the timeout into
    a plain failure."""
    handler = next(s for s in finding.evidence if s.kind is StepKind.HANDLER)
    assert handler.location is not None
    return handler.location.path, handler.location.span.line


TRANSPORT_IN_TOOL = (
    "import httpx\n" + HEAD + "\n"
    "class TicketError(Exception):\n"
    "    pass\n\n"
    "@tool\n"
    "async def add_comment(ticket_id: str, body: str) -> dict:\n"
    '    """Add a comment to a ticket."""\n'
    "    async with httpx.AsyncClient() as client:\n"
    "        try:\n"
    '            response = await client.post(f"https://desk.example/tickets/{ticket_id}/comments",\n'
    '                                         json={"body": body})\n'
    "            return response.json()\n"
    "        except httpx.RequestError as exc:\n"
    '            raise TicketError(f"Network error: {exc}")\n'
)


def test_a_transport_error_class_that_includes_timeouts_is_a_caught_timeout(
    scan_files: ScanFiles,
) -> None:
    finding = one_finding(scan_files, TRANSPORT_IN_TOOL, "add_comment", "except httpx.RequestError")
    assert "httpx.RequestError" in finding.message and "httpx.ReadTimeout" in finding.message


REDIS_PUSH = (
    "from redis import Redis\nfrom redis.exceptions import RedisError\n" + HEAD + "\n"
    'queue = Redis(host="cache.internal")\n\n'
    "@tool\n"
    "def enqueue_job(payload: str) -> str:\n"
    '    """Put a job on the work queue."""\n'
    "    try:\n"
    '        queue.rpush("jobs", payload)\n'
    '        return "queued"\n'
    "    except RedisError as exc:\n"
    '        return f"could not queue: {exc}"\n'
)


def test_a_client_libraries_base_error_that_includes_its_timeout_is_a_caught_timeout(
    scan_files: ScanFiles,
) -> None:
    # redis-py's TimeoutError is a RedisError: catching the base class catches the timeout
    finding = one_finding(scan_files, REDIS_PUSH, "enqueue_job", "except RedisError")
    assert "RedisError" in finding.message


def test_a_handler_that_names_the_timeout_first_decides_not_the_broader_one(
    scan_files: ScanFiles,
) -> None:
    source = TRANSPORT_IN_TOOL.replace(
        "        except httpx.RequestError as exc:\n",
        "        except httpx.TimeoutException:\n"
        '            raise TicketError("The comment may have been added: check the ticket before retrying")\n'
        "        except httpx.RequestError as exc:\n",
    )
    assert ag401(scan_files, source) == []


def test_a_read_that_catches_transport_errors_is_not_blamed(scan_files: ScanFiles) -> None:
    source = TRANSPORT_IN_TOOL.replace("client.post(", "client.get(").replace(
        'json={"body": body}', 'params={"q": body}'
    )
    source = source.replace("add_comment", "list_comments").replace("Add a comment to", "List")
    assert ag401(scan_files, source) == []


def test_an_idempotent_put_that_catches_transport_errors_is_not_blamed(
    scan_files: ScanFiles,
) -> None:
    source = TRANSPORT_IN_TOOL.replace("client.post(", "client.put(").replace(
        "/comments", "/assignee"
    )
    source = source.replace("add_comment", "set_assignee").replace(
        "Add a comment to a ticket", "Set a ticket's assignee"
    )
    assert ag401(scan_files, source) == []


HELPER = (
    "import requests\n\n"
    "class ApiError(Exception):\n"
    "    pass\n\n"
    "class DeskClient:\n"
    "    def __init__(self, base: str) -> None:\n"
    "        self.base = base\n"
    "        self.session = requests.Session()\n\n"
    "    def _post(self, path: str, payload: dict) -> dict:\n"
    "        try:\n"
    "            response = self.session.post(self.base + path, json=payload, timeout=20)\n"
    "        except requests.Timeout:\n"
    '            raise ApiError(f"Request timed out after 20 seconds")\n'
    "        return response.json()\n\n"
    "    def create_ticket(self, title: str) -> dict:\n"
    '        return self._post("/tickets", {"title": title})\n'
)

TOOL_OVER_HELPER = (
    HEAD + "from desk import ApiError, DeskClient\n\n"
    'desk = DeskClient("https://desk.example")\n\n'
    "@tool\n"
    "def open_ticket(title: str) -> str:\n"
    '    """Open a support ticket."""\n'
    "    try:\n"
    "        ticket = desk.create_ticket(title)\n"
    "    except ApiError as exc:\n"
    '        return f"Could not open the ticket ({exc}). Please try again."\n'
    '    return ticket["id"]\n'
)


def test_a_timeout_mapped_to_a_plain_error_in_a_helper_is_reported_in_the_tool(
    scan_files: ScanFiles,
) -> None:
    finding = one_finding(
        scan_files,
        TOOL_OVER_HELPER,
        "open_ticket",
        "desk.create_ticket(title)",
        **{"desk.py": HELPER},
    )
    assert handler_at(finding) == ("desk.py", line_of(HELPER, "except requests.Timeout"))
    assert "DeskClient._post" in finding.message


def test_a_tool_that_says_the_helpers_error_leaves_the_outcome_unknown_is_fine(
    scan_files: ScanFiles,
) -> None:
    source = TOOL_OVER_HELPER.replace(
        "Could not open the ticket ({exc}). Please try again.",
        "The ticket may have been opened: search for it before retrying.",
    )
    assert ag401(scan_files, source, **{"desk.py": HELPER}) == []


def test_a_helper_that_re_raises_the_timeout_leaves_it_to_the_tool(scan_files: ScanFiles) -> None:
    helper = HELPER.replace(
        '            raise ApiError(f"Request timed out after 20 seconds")\n',
        '            print("slow desk")\n            raise\n',
    )
    # The tool catches only ApiError: the timeout goes to the framework untouched.
    assert ag401(scan_files, TOOL_OVER_HELPER, **{"desk.py": helper}) == []


CONTEXT_MANAGER = (
    "from contextlib import contextmanager\n\n"
    "import httpx\n" + HEAD + "from langchain_core.tools import ToolException\n\n"
    "@contextmanager\n"
    "def desk_errors(action: str):\n"
    "    try:\n"
    "        yield\n"
    "    except httpx.TimeoutException:\n"
    '        raise ToolException(f"{action} failed: the desk timed out, try again")\n\n'
    "@tool\n"
    "def close_ticket_with_note(ticket_id: str, note: str) -> str:\n"
    '    """Add a closing note to a ticket."""\n'
    '    with desk_errors("Adding the note"):\n'
    '        httpx.post(f"https://desk.example/tickets/{ticket_id}/notes", json={"note": note})\n'
    '    return "done"\n'
)


def test_a_context_manager_that_maps_timeouts_to_plain_errors_is_followed(
    scan_files: ScanFiles,
) -> None:
    finding = one_finding(scan_files, CONTEXT_MANAGER, "close_ticket_with_note", "httpx.post(")
    assert "desk_errors" in finding.message


def test_a_context_manager_that_says_outcome_unknown_is_fine(scan_files: ScanFiles) -> None:
    source = CONTEXT_MANAGER.replace(
        "failed: the desk timed out, try again", "outcome unknown: check the ticket first"
    )
    assert ag401(scan_files, source) == []


CATCH_ALL = (
    "import requests\n" + HEAD + "\n"
    "@tool\n"
    "def send_invoice(invoice_id: str) -> str:\n"
    '    """Send an invoice to the customer."""\n'
    "    try:\n"
    '        requests.post(f"https://billing.example/invoices/{invoice_id}/send", timeout=15)\n'
    "    except Exception:\n"
    '        return "Sending the invoice failed."\n'
    '    return "sent"\n'
)


def test_a_catch_all_around_a_call_with_a_timeout_catches_that_timeout(
    scan_files: ScanFiles,
) -> None:
    (finding,) = ag401(scan_files, CATCH_ALL)
    assert finding.span.line == line_of(CATCH_ALL, "except Exception")
    assert "timeout=15" in finding.message
    assert finding.confidence.value == "medium"


def test_a_catch_all_with_no_timeout_set_is_not_judged(scan_files: ScanFiles) -> None:
    assert ag401(scan_files, CATCH_ALL.replace(", timeout=15", "")) == []


def test_a_client_built_with_a_timeout_sets_it_for_its_calls(scan_files: ScanFiles) -> None:
    source = (
        "import httpx\n" + HEAD + "\n"
        "@tool\n"
        "async def send_invoice(invoice_id: str) -> str:\n"
        '    """Send an invoice to the customer."""\n'
        "    async with httpx.AsyncClient(timeout=30.0) as client:\n"
        "        try:\n"
        '            await client.post(f"https://billing.example/invoices/{invoice_id}/send")\n'
        "        except Exception as exc:\n"
        '            return "Sending the invoice failed, please retry."\n'
        '    return "sent"\n'
    )
    (finding,) = ag401(scan_files, source)
    assert "timeout=30.0" in finding.message


def test_a_timeout_caught_inside_a_retry_loop_that_ends_in_failure(scan_files: ScanFiles) -> None:
    source = (
        "import time\n\nimport requests\n" + HEAD + "\n"
        "@tool\n"
        "def place_order(cart_id: str) -> str:\n"
        '    """Place an order for a cart."""\n'
        "    for attempt in range(3):\n"
        "        try:\n"
        '            return requests.post("https://shop.example/orders", json={"cart": cart_id}, timeout=10).text\n'
        "        except requests.Timeout:\n"
        "            time.sleep(2**attempt)\n"
        '    return "Placing the order failed after 3 attempts."\n'
    )
    (finding,) = ag401(scan_files, source)
    assert "retries it" in finding.message


def test_a_tool_declared_idempotent_is_not_blamed(scan_files: ScanFiles) -> None:
    source = (
        "import httpx\n"
        "from mcp.server.fastmcp import FastMCP\n"
        "from mcp.types import ToolAnnotations\n\n"
        'mcp = FastMCP("desk")\n\n'
        "@mcp.tool(annotations=ToolAnnotations(idempotentHint=True, readOnlyHint=False))\n"
        "async def record_payment(invoice_id: str, amount: int) -> str:\n"
        '    """Record a payment of an invoice (the ledger keeps one per invoice)."""\n'
        "    async with httpx.AsyncClient() as client:\n"
        "        try:\n"
        '            await client.post(f"https://ledger.example/invoices/{invoice_id}/payments", json={"amount": amount})\n'
        "        except httpx.RequestError as exc:\n"
        '            return f"Network error: {exc}"\n'
        '    return "ok"\n'
    )
    assert ag401(scan_files, source) == []
    undeclared = source.replace(
        "annotations=ToolAnnotations(idempotentHint=True, readOnlyHint=False)", ""
    )
    assert [f.tool for f in ag401(scan_files, undeclared)] == ["record_payment"]


POLLING = (
    "import time\n\nimport requests\n" + HEAD + "\n"
    "@tool\n"
    "def start_export(report: str) -> str:\n"
    '    """Export a report to the shared drive."""\n'
    '    job = requests.post("https://reports.example/exports", json={"report": report}, timeout=10).json()\n'
    "    deadline = time.monotonic() + 60\n"
    "    while time.monotonic() < deadline:\n"
    "        state = requests.get(f\"https://reports.example/exports/{job['id']}\", timeout=10).json()\n"
    '        if state["status"] == "done":\n'
    '            return state["url"]\n'
    "        time.sleep(2)\n"
    '    return "Export failed: it did not finish in time."\n'
)


def test_a_polling_deadline_reported_as_a_failure(scan_files: ScanFiles) -> None:
    finding = one_finding(scan_files, POLLING, "start_export", "Export failed")
    assert "polls" in finding.message


def test_a_polling_deadline_that_hands_back_the_job_is_fine(scan_files: ScanFiles) -> None:
    source = POLLING.replace(
        '"Export failed: it did not finish in time."',
        "f\"The export is still running (job {job['id']}): check its status later.\"",
    )
    assert ag401(scan_files, source) == []


def test_a_poller_in_a_helper_that_raises_a_timeout_error(scan_files: ScanFiles) -> None:
    source = (
        "import asyncio\n\nimport httpx\n" + HEAD + "\n"
        "async def wait_until_live(client: httpx.AsyncClient, deploy_id: str) -> None:\n"
        "    for _ in range(30):\n"
        '        state = (await client.get(f"/deploys/{deploy_id}")).json()["state"]\n'
        '        if state == "live":\n'
        "            return\n"
        "        await asyncio.sleep(5)\n"
        '    raise TimeoutError(f"Deploy {deploy_id} timed out")\n\n'
        "@tool\n"
        "async def deploy(service: str) -> str:\n"
        '    """Deploy the latest build of a service."""\n'
        '    async with httpx.AsyncClient(base_url="https://ci.example") as client:\n'
        '        deploy_id = (await client.post("/deploys", json={"service": service})).json()["id"]\n'
        "        await wait_until_live(client, deploy_id)\n"
        '    return "live"\n'
    )
    (finding,) = ag401(scan_files, source)
    assert finding.tool == "deploy"
    assert handler_at(finding) == ("agent.py", line_of(source, "raise TimeoutError"))
    # without the poll the timeout goes to the framework untouched
    retried = source.replace("        await wait_until_live(client, deploy_id)\n", "")
    assert ag401(scan_files, retried) == []


DECLARED = (
    "import socket\n\n"
    "from mcp.server.fastmcp import FastMCP\n"
    "from mcp.types import ToolAnnotations\n\n"
    "from erp import Erp\n\n"
    'mcp = FastMCP("erp")\n'
    'erp = Erp("https://erp.example/rpc")\n\n'
    "@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False))\n"
    "def run_action(model: str, action: str, record_id: int) -> str:\n"
    '    """Run a business action (confirm, post, cancel...) on a record."""\n'
    "    return str(erp.invoke(model, action, record_id))\n"
)

ERP = (
    "import socket\n\n"
    "import zeep\n\n"
    "class ErpError(Exception):\n"
    "    pass\n\n"
    "class Erp:\n"
    "    def __init__(self, url: str) -> None:\n"
    "        self.service = zeep.Client(url).service\n\n"
    "    def invoke(self, model: str, action: str, record_id: int) -> object:\n"
    "        try:\n"
    "            return self.service.dispatch(model, action, record_id)\n"
    "        except socket.timeout:\n"
    '            raise ErpError("The ERP did not answer in time")\n'
)


def test_a_declared_non_idempotent_tool_whose_calls_cannot_be_judged(
    scan_files: ScanFiles,
) -> None:
    finding = one_finding(scan_files, DECLARED, "run_action", "erp.invoke(", **{"erp.py": ERP})
    assert finding.confidence.value == "medium"
    declared_idempotent = DECLARED.replace("idempotentHint=False", "idempotentHint=True")
    assert ag401(scan_files, declared_idempotent, **{"erp.py": ERP}) == []


def test_a_projects_own_sdk_errors_extend_the_catalogue_from_config(scan_files: ScanFiles) -> None:
    source = (
        "from acme_sdk import post_json\n"
        "from acme_sdk.errors import NetworkError\n" + HEAD + "\n"
        "@tool\n"
        "def create_shipment(order_id: str) -> str:\n"
        '    """Create a shipment for an order."""\n'
        "    try:\n"
        '        return post_json("/shipments", {"order_id": order_id})["id"]\n'
        "    except NetworkError:\n"
        '        return "Creating the shipment failed, please try again."\n'
    )
    assert ag401(scan_files, source) == []
    sink = (
        "[[tool.agentguard.effects.sinks]]\n"
        'match = ["acme_sdk.post_json"]\n'
        'effect = "network_write"\n'
        "idempotent = false\n"
    )
    assert ag401(scan_files, source, **{"pyproject.toml": sink}) == []
    config = sink + (
        "[tool.agentguard.checklist.timeouts]\n"
        'transport_errors = { "acme_sdk.errors.NetworkError" = "acme_sdk.errors.DeadlineError" }\n'
    )
    (finding,) = ag401(scan_files, source, **{"pyproject.toml": config})
    assert "acme_sdk.errors.DeadlineError" in finding.message


def test_a_wrong_checklist_extension_is_a_clear_configuration_error(
    scan_files: ScanFiles,
) -> None:
    config = '[tool.agentguard.checklist.timeouts]\ntransport_errors = ["x"]\n'
    with pytest.raises(CatalogError, match=r"checklist\.timeouts\.transport_errors"):
        ag401(scan_files, "", **{"pyproject.toml": config})


def test_a_client_attribute_built_with_a_timeout_in_init(scan_files: ScanFiles) -> None:
    source = (
        "import httpx\n"
        "from llama_index.core.tools.tool_spec.base import BaseToolSpec\n\n"
        "class MailSpec(BaseToolSpec):\n"
        '    spec_functions = ["send_mail"]\n\n'
        "    def __init__(self) -> None:\n"
        '        self._http = httpx.Client(base_url="https://mail.example", timeout=20)\n\n'
        "    def send_mail(self, to: str, body: str) -> str:\n"
        '        """Send an email."""\n'
        "        try:\n"
        '            self._http.post("/messages", json={"to": to, "body": body})\n'
        "        except Exception:\n"
        '            return "Sending failed."\n'
        '        return "sent"\n'
    )
    (finding,) = ag401(scan_files, source)
    assert finding.tool == "send_mail" and "timeout=20" in finding.message


def test_a_deadline_call_around_the_write_is_a_timeout_set(scan_files: ScanFiles) -> None:
    source = (
        "import asyncio\n\nimport httpx\n" + HEAD + "\n"
        "@tool\n"
        "async def publish_post(text: str) -> str:\n"
        '    """Publish a post to the company blog."""\n'
        "    async with httpx.AsyncClient() as client:\n"
        "        try:\n"
        '            await asyncio.wait_for(client.post("https://blog.example/posts", json={"text": text}), 10)\n'
        "        except Exception:\n"
        '            return "Publishing failed."\n'
        '    return "published"\n'
    )
    (finding,) = ag401(scan_files, source)
    assert "asyncio.wait_for" in finding.message


def test_connect_errors_are_raised_before_the_request_left(scan_files: ScanFiles) -> None:
    source = TRANSPORT_IN_TOOL.replace(
        "except httpx.RequestError as exc:",
        "except (httpx.ConnectError, httpx.ConnectTimeout) as exc:",
    )
    assert ag401(scan_files, source) == []


DECORATED = (
    "import functools\n\nimport requests\n"
    "from mcp.server.fastmcp import FastMCP\n\n"
    'mcp = FastMCP("crm")\n\n'
    "def api_errors(func):\n"
    "    @functools.wraps(func)\n"
    "    def wrapper(*args, **kwargs):\n"
    "        try:\n"
    "            return func(*args, **kwargs)\n"
    "        except requests.RequestException as exc:\n"
    '            return {"success": False, "error": "The CRM request failed, please retry."}\n'
    "    return wrapper\n\n"
    "@mcp.tool()\n"
    "@api_errors\n"
    "def create_lead(name: str, email: str) -> dict:\n"
    '    """Create a sales lead."""\n'
    '    return requests.post("https://crm.example/leads", json={"name": name, "email": email}, timeout=30).json()\n'
)


def test_a_decorator_that_maps_the_tools_errors_is_followed(scan_files: ScanFiles) -> None:
    finding = one_finding(scan_files, DECORATED, "create_lead", "return requests.post(")
    assert handler_at(finding) == (
        "agent.py",
        line_of(DECORATED, "except requests.RequestException"),
    )
    uncertain = DECORATED.replace(
        "The CRM request failed, please retry.", "Outcome unknown: look the lead up first."
    )
    assert ag401(scan_files, uncertain) == []
