from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.diagnostics import Applicability, EvidenceStep, Finding, Severity
from agentguard.project.observations import raw_observations
from agentguard.project.project_model import ProjectModel


class RawErrorObservation(Rule):
    """
    ## What it does
    Flags raw exception text (`str(e)`, `repr(e)`, `f"...{e}"`, `e.args`,
    `traceback.format_exc()`) that reaches the model: a tool's return value, a raised
    `ToolException`/`ModelRetry`/`ToolError` message, a `ToolMessage`, an MCP
    `CallToolResult(isError=True, content=[TextContent(text=str(e))])`, or a tool message an
    executor appends to the conversation.

    Naming the exception type (`type(e).__name__`) or a status code is fine.

    ## Why it matters
    "ReadTimeout: HTTPSConnectionPool(...): Read timed out" tells the model nothing about
    whether the order exists; models read it as "failed" and call the tool again. Raw text
    also leaks hosts, SQL and stack traces into the conversation.

    ## Example
    ```python
    except Exception as e:
        return f"Error: {e}"
    ```

    ## Use instead
    ```python
    except Exception as e:
        log.exception("create_order failed")
        return {"ok": False, "code": "TOOL_CRASH", "retryable": False,
                "content": f"create_order failed ({type(e).__name__}); do not retry."}
    ```

    ## Fix safety
    Unsafe: for `return <raw text>` directly in a tool's `except` handler (`str(e)`,
    `repr(e)`, f-strings, `traceback.format_exc()`), the fix returns
    `{"ok": False, "code": ..., "content": ..., "retryable": ...}` instead (inside
    `json.dumps(...)` when the tool is annotated `-> str`). The code comes from the caught
    exception: a timeout in a tool that writes is `SIDE_EFFECT_UNCERTAIN` (not retryable: the
    request may have taken effect), in a read-only tool `TIMEOUT` (retryable); a connection
    that never opened is `TRANSIENT_NETWORK` (retryable); anything else `TOOL_CRASH` (not
    retryable). `content` tells the model in plain words what happened, whether to call
    again and what to do next, naming only the exception's type. Callers that parsed the old
    error text see a different value, so review the change. Raised `ToolException`/
    `ModelRetry` messages, tool messages and error helpers are left for you to change.
    """

    code, name, question = "AG601", "raw-error-observation", "Q6"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    VALID = (
        Valid(
            "import requests\n\n"
            "def on_paid(event: dict) -> None:\n"
            '    requests.post("https://erp.example/invoices", json=event)\n\n'
            'HANDLERS = {"invoice.paid": on_paid}\n\n'
            "def handle_webhook(event: dict) -> dict:\n"
            '    handler = HANDLERS.get(event["type"])\n'
            "    try:\n"
            "        handler(event)\n"
            "    except Exception as e:\n"
            '        return {"error": str(e)}  # an HTTP answer to the payment provider\n'
            '    return {"ok": True}\n',
            filename="webhooks.py",
        ),
        Valid(
            "import logging\n"
            "from typing import Any\n\n"
            "log = logging.getLogger(__name__)\n\n"
            "def run_tools(tools: dict[str, Any], tool_calls: list, messages: list) -> None:\n"
            "    for tc in tool_calls:\n"
            "        try:\n"
            "            content = str(tools[tc.name](**tc.arguments))\n"
            "        except Exception as exc:\n"
            '            log.exception("tool %s failed: %s", tc.name, exc)\n'
            '            content = f"{tc.name} failed ({type(exc).__name__}); outcome unknown, do not retry."\n'
            '        messages.append({"role": "tool", "tool_call_id": tc.id, "content": content})\n'
        ),
        Valid(
            "import logging\n"
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "log = logging.getLogger(__name__)\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            "    try:\n"
            '        return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            "    except Exception as e:\n"
            '        log.error("create_order failed: %s", e)\n'
            '        return {"ok": False, "code": "TOOL_CRASH", "retryable": False,\n'
            '                "content": f"create_order failed ({type(e).__name__}); do not retry."}\n'
        ),
    )
    INVALID = (
        Invalid(
            "import stripe\n"
            "from crewai.tools import tool\n\n"
            "def error_response(error: Exception) -> dict:\n"
            '    return {"status": "error", "message": f"Stripe call failed: {error}"}\n\n'
            '@tool("Charge customer")\n'
            "def charge_customer(customer_id: str, cents: int) -> dict:\n"
            '    """Charge a customer."""\n'
            "    try:\n"
            '        return stripe.PaymentIntent.create(customer=customer_id, amount=cents, currency="eur")\n'
            "    except stripe.error.StripeError as exc:\n"
            "        return error_response(exc)\n",
            line=13,
        ),
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> str:\n"
            '    """Create an order."""\n'
            "    try:\n"
            '        requests.post("https://shop.example/orders", json={"cart": cart_id})\n'
            "    except Exception as e:\n"
            '        return f"Error: {e}"\n'
            '    return "ok"\n',
            line=10,
            fixed=(
                "import json\n"
                "\n"
                "import requests\n"
                "from langchain_core.tools import tool\n"
                "\n"
                "@tool\n"
                "def create_order(cart_id: str) -> str:\n"
                '    """Create an order."""\n'
                "    try:\n"
                '        requests.post("https://shop.example/orders", json={"cart": cart_id})\n'
                "    except Exception as e:\n"
                "        return json.dumps(\n"
                "            {\n"
                '                "ok": False,\n'
                '                "code": "TOOL_CRASH",\n'
                '                "content": (\n'
                '                    f"create_order failed unexpectedly ({type(e).__name__}) and may "\n'
                '                    "already have acted. Do not call create_order again for this "\n'
                '                    "request; tell the user what failed."\n'
                "                ),\n"
                '                "retryable": False,\n'
                "            }\n"
                "        )\n"
                '    return "ok"\n'
            ),
        ),
        Invalid(
            "import httpx\n"
            "from mcp.server.fastmcp import FastMCP\n"
            "\n"
            'mcp = FastMCP("billing")\n'
            "\n"
            "\n"
            "@mcp.tool()\n"
            "async def refund_payment(payment_id: str, cents: int) -> dict:\n"
            '    """Refund part of a payment."""\n'
            "    async with httpx.AsyncClient(timeout=10) as client:\n"
            "        try:\n"
            "            response = await client.post(\n"
            '                f"https://billing.example/payments/{payment_id}/refunds", json={"amount": cents}\n'
            "            )\n"
            "        except httpx.TimeoutException as exc:\n"
            '            return {"error": str(exc)}\n'
            "    return response.json()\n",
            filename="server.py",
            line=16,
            fixed=(
                "import httpx\n"
                "from mcp.server.fastmcp import FastMCP\n"
                "\n"
                'mcp = FastMCP("billing")\n'
                "\n"
                "\n"
                "@mcp.tool()\n"
                "async def refund_payment(payment_id: str, cents: int) -> dict:\n"
                '    """Refund part of a payment."""\n'
                "    async with httpx.AsyncClient(timeout=10) as client:\n"
                "        try:\n"
                "            response = await client.post(\n"
                '                f"https://billing.example/payments/{payment_id}/refunds", json={"amount": cents}\n'
                "            )\n"
                "        except httpx.TimeoutException as exc:\n"
                "            return {\n"
                '                "ok": False,\n'
                '                "code": "SIDE_EFFECT_UNCERTAIN",\n'
                '                "content": (\n'
                '                    f"refund_payment timed out ({type(exc).__name__}) after its "\n'
                '                    "request may have reached the service, so it may or may not have "\n'
                '                    "taken effect. Do not call refund_payment again for this request: "\n'
                '                    "that could do it twice. Tell the user it is not known yet "\n'
                '                    "whether it happened."\n'
                "                ),\n"
                '                "retryable": False,\n'
                "            }\n"
                "    return response.json()\n"
            ),
        ),
        Invalid(
            "import traceback\n"
            "\n"
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "\n"
            "\n"
            "@tool\n"
            "def find_flights(origin: str, destination: str) -> dict:\n"
            '    """Search flights between two airports."""\n'
            "    try:\n"
            "        return requests.get(\n"
            '            "https://flights.example/search", params={"from": origin, "to": destination}\n'
            "        ).json()\n"
            "    except requests.ReadTimeout as e:\n"
            '        return {"error": repr(e)}\n'
            "    except Exception:\n"
            '        return {"error": traceback.format_exc()}\n',
            line=15,
            fixed=(
                "import requests\n"
                "from langchain_core.tools import tool\n"
                "\n"
                "\n"
                "@tool\n"
                "def find_flights(origin: str, destination: str) -> dict:\n"
                '    """Search flights between two airports."""\n'
                "    try:\n"
                "        return requests.get(\n"
                '            "https://flights.example/search", params={"from": origin, "to": destination}\n'
                "        ).json()\n"
                "    except requests.ReadTimeout as e:\n"
                "        return {\n"
                '            "ok": False,\n'
                '            "code": "TIMEOUT",\n'
                '            "content": (\n'
                '                f"find_flights timed out ({type(e).__name__}). It changes nothing, so "\n'
                '                "it is safe to call find_flights again in a moment."\n'
                "            ),\n"
                '            "retryable": True,\n'
                "        }\n"
                "    except Exception:\n"
                "        return {\n"
                '            "ok": False,\n'
                '            "code": "TOOL_CRASH",\n'
                '            "content": (\n'
                '                "find_flights failed. Calling it again is unlikely to help; tell the "\n'
                '                "user what failed."\n'
                "            ),\n"
                '            "retryable": False,\n'
                "        }\n"
            ),
        ),
        Invalid(
            "from mcp.server.lowlevel import Server\n"
            "from mcp.types import CallToolResult, TextContent\n\n"
            "server = Server('billing')\n\n"
            "@server.call_tool()\n"
            "async def call_tool(name: str, arguments: dict) -> CallToolResult:\n"
            "    try:\n"
            "        return await HANDLERS[name](**arguments)\n"
            "    except Exception as exc:\n"
            "        return CallToolResult(isError=True, content=[TextContent(type='text', text=str(exc))])\n",
            line=11,
        ),
        Invalid(
            "from langchain_core.messages import ToolMessage\n\n"
            "def run_tools(tools_by_name: dict, tool_calls: list) -> list:\n"
            "    messages = []\n"
            "    for call in tool_calls:\n"
            "        try:\n"
            '            output = tools_by_name[call["name"]].invoke(call["args"])\n'
            "        except Exception:\n"
            "            import traceback\n"
            '            messages.append(ToolMessage(content=traceback.format_exc(), tool_call_id=call["id"]))\n'
            "            continue\n"
            '        messages.append(ToolMessage(content=str(output), tool_call_id=call["id"]))\n'
            "    return messages\n",
            line=10,
        ),
        Invalid(
            "from typing import Any\n\n"
            "def run_tools(tools: dict[str, Any], tool_calls: list, messages: list) -> None:\n"
            "    for tc in tool_calls:\n"
            "        try:\n"
            "            content = str(tools[tc.name](**tc.arguments))\n"
            "        except Exception as exc:\n"
            '            content = f"Error executing {tc.name}: {exc}"\n'
            '        messages.append({"role": "tool", "tool_call_id": tc.id, "content": content})\n',
            line=9,
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for raw in raw_observations(project):
            site = raw.site
            tool = site.tool
            writes = tool is None or any(
                project.catalog.checklist.counts_as_write(e, tool.name, project.catalog)
                for e in tool.effects
            )
            owner = f"Tool `{tool.name}`" if tool else f"`{site.function.name}` ({site.role})"
            yield self.finding(
                raw.location,
                f"{owner} sends raw exception text ({raw.use.how}) to the model through "
                f"{raw.reaches}: it says neither what happened nor whether a retry is safe",
                tool=tool,
                confidence=raw.confidence,
                severity=None if writes else Severity.WARNING,
                evidence=(EvidenceStep(f"{site.role} `{site.function.name}`", raw.location),),
                symbol=site.function.qualname,
                node_text=f"{site.function.qualname}:{raw.use.text[:80]}",
            )
