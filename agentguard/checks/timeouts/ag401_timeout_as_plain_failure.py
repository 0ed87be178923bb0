from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid, mcp_tool_ts
from agentguard.checks.common import effect_phrase
from agentguard.checks.timeouts.chains import CATCH_ALL, POLL
from agentguard.checks.timeouts.shared import TimeoutVerdicts
from agentguard.diagnostics import Confidence, EvidenceStep, Finding, Location, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class TimeoutAsPlainFailure(Rule):
    """
    ## What it does
    Flags a timeout around a non-idempotent side effect that is turned into an ordinary or
    retryable error: a returned "failed, please retry" text or dict, a raised
    `ToolException`/`ModelRetry`/plain error, or a loop that sends the request again.

    The timeout is followed from the write up its call chain to the tool, meeting the
    handlers in order, innermost first: in the tool, in a helper the tool calls (a client's
    `_post`, a connection's `execute`), in a `@contextmanager` whose `yield` wraps the
    call, or in a decorator whose wrapper calls the tool inside a `try`. A handler catches it when it names a timeout (`requests.Timeout`,
    `httpx.ReadTimeout`, `asyncio.TimeoutError`, builtin `TimeoutError`, `socket.timeout`,
    `openai.APITimeoutError`, botocore `ReadTimeoutError`...), a broader class that includes
    one (`httpx.RequestError`, `requests.RequestException`, `aiohttp.ClientError`, a DB
    driver's `OperationalError`...), or everything when a timeout is set on the way (a
    `timeout=` argument, a client built with one wherever it is built, in the class, a base
    class or the module, `sock.settimeout(...)` on the client or its socket,
    `asyncio.wait_for` or an `asyncio.timeout()` block, or the deadline a library sets by
    default: httpx's 5 s, aiohttp's 5 minutes). A helper that runs the function it is
    handed (`self._safe_call(call_fn)`) handles that function's errors. An error raised in
    its place is followed further out too; a handler that re-raises what it caught passes
    it on. A job polled after the write until a deadline,
    which then reports "failed" or raises, is the same mistake.

    In TypeScript and JavaScript a `catch` catches everything; it handles the timeout when
    it tests for one (`ETIMEDOUT`, axios' `ECONNABORTED`, `AbortError`, `TimeoutError`) or
    when the request has a deadline: `signal: AbortSignal.timeout(ms)`, a controller that
    `setTimeout` aborts, axios' `timeout` option on the call or on `axios.create(...)`.

    A handler that says the outcome is unknown (`SIDE_EFFECT_UNCERTAIN`, "may have been
    placed, do not retry", `retryable: False`), raises an "uncertain" exception or looks the
    outcome up (reconcile) is fine, and so is a read-only or declared idempotent tool.
    Connect timeouts (`httpx.ConnectTimeout`) are raised before the request left and are
    fine too; a catch-all with no timeout set is left alone.
    The finding is in the tool: at the handler when it is the tool's own, else at the
    tool's call into the chain, with the handler as evidence.

    ## Why it matters
    A read timeout is raised after the request was sent: the service may have committed. "The
    order failed, please retry" makes the model place it again.

    ## Example
    ```python
    try:
        order = client.create(cart_id)
    except requests.Timeout:
        return "The order failed, please retry."
    ```

    ## Use instead
    ```python
    except requests.Timeout:
        return {"ok": False, "code": "SIDE_EFFECT_UNCERTAIN", "retryable": False,
                "content": "The order may have been placed. Do not retry; check order status."}
    ```
    or let `@guarded` turn the timeout into `SIDE_EFFECT_UNCERTAIN` and reconcile it.

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG401", "timeout-as-plain-failure", "Q4"
    reads = (TimeoutVerdicts,)
    severity = Severity.ERROR
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def web_search(query: str) -> str:\n"
            '    """Search the web."""\n'
            "    try:\n"
            '        return requests.post("https://search.example/v1/search", json={"q": query}, timeout=10).text\n'
            "    except requests.Timeout:\n"
            '        return "Search timed out. Try again."\n'
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def order_status(order_id: str) -> str:\n"
            '    """Look an order up."""\n'
            "    try:\n"
            '        return requests.get(f"https://shop.example/orders/{order_id}", timeout=5).json()["status"]\n'
            "    except requests.Timeout:\n"
            '        return "The order service is slow, try again in a moment."\n'
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            "    try:\n"
            '        return requests.post("https://shop.example/orders", json={"cart": cart_id}, timeout=30).json()\n'
            "    except requests.Timeout:\n"
            '        return {"ok": False, "code": "SIDE_EFFECT_UNCERTAIN", "retryable": False,\n'
            '                "content": "The order may have been placed. Check order status before anything else."}\n'
        ),
        Valid(
            "import httpx\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            "    try:\n"
            '        return httpx.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            "    except httpx.ConnectTimeout:\n"
            '        return {"ok": False, "code": "TRANSIENT_NETWORK", "retryable": True, "content": "Not sent."}\n'
        ),
        Valid(
            mcp_tool_ts(
                "    try {\n"
                "      const response = await axios.get(`https://shop.example/orders/${orderId}`, {\n"
                "        signal: AbortSignal.timeout(5000),\n"
                "      });\n"
                '      return { content: [{ type: "text", text: response.data.status }] };\n'
                "    } catch {\n"
                '      return { content: [{ type: "text", text: "The order service is slow, try again." }], isError: true };\n'
                "    }\n",
                'axios from "axios"',
                tool="order_status",
                description="Look an order up",
                param="orderId",
            ),
            filename="server.ts",
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> str:\n"
            '    """Create an order."""\n'
            "    try:\n"
            '        requests.post("https://shop.example/orders", json={"cart": cart_id}, timeout=30)\n'
            "    except requests.Timeout:\n"
            '        return "The order failed, please retry."\n'
            '    return "ok"\n',
            span=(9, 5, 10, 49),
            message_contains="please retry",
        ),
        Invalid(
            "import httpx\n"
            "from langchain_core.tools import tool\n\n"
            "class DeskError(Exception):\n"
            "    pass\n\n"
            "def _post(path: str, payload: dict) -> dict:\n"
            "    try:\n"
            '        return httpx.post(f"https://desk.example{path}", json=payload, timeout=20).json()\n'
            "    except httpx.RequestError as exc:\n"
            '        raise DeskError("The desk could not be reached") from exc\n\n'
            "@tool\n"
            "def open_ticket(title: str) -> str:\n"
            '    """Open a support ticket."""\n'
            '    return _post("/tickets", {"title": title})["id"]\n',
            span=(16, 12, 16, 47),
            message_contains="httpx.RequestError",
        ),
        Invalid(
            "import asyncio\n"
            "import httpx\n"
            "from pydantic_ai import ModelRetry\n\n"
            "async def send_invoice(client: httpx.AsyncClient, invoice_id: str) -> None:\n"
            "    try:\n"
            '        await asyncio.wait_for(client.post(f"/invoices/{invoice_id}/send"), timeout=10)\n'
            "    except asyncio.TimeoutError:\n"
            '        raise ModelRetry("Sending timed out, try again")\n',
            span=(8, 5, 9, 57),
        ),
        Invalid(
            "import asyncio\n"
            "import json\n"
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n\n'
            "TOOLS = {create_order.name: create_order}\n\n"
            "async def execute(tool_calls: list, messages: list) -> None:\n"
            "    for tc in tool_calls:\n"
            "        try:\n"
            "            result = await asyncio.wait_for(\n"
            "                TOOLS[tc.function.name].ainvoke(json.loads(tc.function.arguments)), 30\n"
            "            )\n"
            "        except asyncio.TimeoutError:\n"
            '            result = "Tool timed out. Please try again."\n'
            '        messages.append({"role": "tool", "tool_call_id": tc.id, "content": str(result)})\n',
            span=(19, 9, 20, 57),
            message_contains="dispatches",
        ),
        Invalid(
            mcp_tool_ts(
                "    try {\n"
                '      const response = await axios.post("https://shop.example/orders", { cartId }, { timeout: 10000 });\n'
                '      return { content: [{ type: "text", text: `Order ${response.data.id} placed` }] };\n'
                "    } catch (err) {\n"
                '      if (axios.isAxiosError(err) && err.code === "ECONNABORTED") {\n'
                '        return { content: [{ type: "text", text: "The order failed, please retry." }], isError: true };\n'
                "      }\n"
                "      throw err;\n"
                "    }\n",
                'axios from "axios"',
            ),
            filename="server.ts",
            span=(14, 7, 19, 6),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for verdict in TimeoutVerdicts.of(project):
            effect = verdict.effects[0]
            handler_at = verdict.handler_location or Location(
                verdict.facts.path, verdict.handler.span
            )
            location = verdict.location or handler_at
            detail = " ".join(verdict.detail.split())[:80]
            caught = verdict.caught_text or ", ".join(f"`{c}`" for c in verdict.caught)
            where = f"Tool `{verdict.tool.name}`" if verdict.tool else f"`{verdict.function.name}`"
            if verdict.handler.try_id == -1:
                what = "sends it again"
            elif verdict.outcome == "retry":
                what = "retries it"
            else:
                what = f"reports it as a plain error (`{detail}`)"
            around = f"{effect_phrase(effect)}"
            confidence = effect.confidence
            if verdict.how == CATCH_ALL and confidence.rank > Confidence.MEDIUM.rank:
                confidence = Confidence.MEDIUM  # a catch-all: the timeout is one error of many
            if verdict.dispatched:
                names = ", ".join(f"`{t.name}`" for t in verdict.dispatched[:3])
                around = f"the tools it dispatches, which include write tools ({names})"
                confidence = Confidence.MEDIUM
            verb = "retries on" if verdict.handler.try_id == -1 else "catches"
            if verdict.how == POLL:
                head = (
                    f"{where} makes {around}, then polls for its result and, when the deadline "
                    f"passes, reports a plain failure (`{detail}`)"
                )
            elif location != handler_at:
                holder = verdict.function.qualname.rsplit(".", 2)[-2:]
                shown = ".".join(holder) if verdict.function.class_name else verdict.function.name
                head = f"{where} makes {around}; `{shown}` on the way {verb} {caught} and {what}"
            else:
                head = f"{where} {verb} {caught} around {around} and {what}"
            yield self.finding(
                location,
                f"{head}: the request may have committed, so the outcome is unknown "
                "(SIDE_EFFECT_UNCERTAIN), not failed",
                tool=verdict.tool,
                confidence=confidence,
                evidence=(
                    *effect.chain,
                    EvidenceStep(
                        StepKind.HANDLER,
                        handler_at,
                        detail=", ".join(verdict.caught) or "the polling deadline",
                    ),
                ),
                symbol=verdict.function.qualname,
                node_text=f"{verdict.function.qualname}:{detail}",
            )
