from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import finding_tool
from agentguard.diagnostics import (
    Applicability,
    EvidenceStep,
    Finding,
    FixOffer,
    Severity,
    StepKind,
)
from agentguard.knowledge.checklist import knowledge
from agentguard.project.observations import raw_observations
from agentguard.project.project_model import ProjectModel

if TYPE_CHECKING:
    import libcst as cst

    from agentguard.fixes.context import FixContext


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
                knowledge().counts_as_write(e, tool.name, project.catalog) for e in tool.effects
            )
            owner = f"Tool `{tool.name}`" if tool else f"`{site.function.name}` ({site.role})"
            yield self.finding(
                raw.location,
                f"{owner} sends raw exception text ({raw.use.how}) to the model through "
                f"{raw.reaches}: it says neither what happened nor whether a retry is safe",
                tool=tool,
                confidence=raw.confidence,
                severity=None if writes else Severity.WARNING,
                evidence=(
                    EvidenceStep(
                        StepKind.OBSERVATION,
                        raw.location,
                        subject=site.function.name,
                        detail=site.role,
                    ),
                ),
                symbol=site.function.qualname,
                node_text=f"{site.function.qualname}:{raw.use.text[:80]}",
            )

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        error = structured_error(finding, project)
        if error is None:
            return None
        retry = "retryable" if error.retryable else "not retryable"
        return FixOffer(
            Applicability.UNSAFE,
            f"Return a structured error ({error.code}, {retry}) instead of the exception text",
        )

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        import libcst as cst

        from agentguard.fixes.cst_tools import (
            add_plain_import,
            name_is_used,
            names_in,
            plain_import_name,
            remove_unused_import,
            string_quote,
        )

        error = structured_error(finding, ctx.project)
        if error is None:
            return None
        span = finding.span
        node = ctx.node_at(span.line, span.column, (cst.Return,))
        if not isinstance(node, cst.Return) or node.value is None:
            return None
        handler: cst.CSTNode | None = node
        while handler is not None and not isinstance(handler, cst.ExceptHandler):
            handler = ctx.parsed.parent(handler)
        function: cst.CSTNode | None = handler
        while function is not None and not isinstance(function, cst.FunctionDef):
            function = ctx.parsed.parent(function)
        if not isinstance(handler, cst.ExceptHandler) or not isinstance(function, cst.FunctionDef):
            return None
        module = ctx.parsed.module
        as_text = _annotated_str(function)
        line = ctx.parsed.lines[ctx.parsed.position(node).start.line - 1]
        indent = line[: len(line) - len(line.lstrip())]
        source = _structured_error_source(
            error,
            len(indent),
            ctx.line_length,
            string_quote(module, node),
            (plain_import_name(module, "json") or "json") if as_text else None,
        )
        new_return = node.with_changes(value=cst.parse_expression(source))
        new_handler = handler.deep_replace(node, new_return)
        assert isinstance(new_handler, cst.ExceptHandler)
        new_function = function.deep_replace(handler, new_handler)
        for name in ("traceback", "sys"):
            if name in names_in(node.value) and not name_is_used(new_function, name):
                # ``import traceback`` inside the handler, only for the text just replaced.
                new_handler = _without_local_import(new_handler, name)
        module = ctx.parsed.replace(handler, new_handler)
        for name in ("traceback", "sys"):
            if name in names_in(node.value):
                module = remove_unused_import(module, name)
        if as_text:
            module = add_plain_import(module, "json")
        return module.code


# --------------------------------------------------------------------------- fix
# The edit builder's helpers import LibCST inside their bodies (see Rule.fixed_text).


EXCEPTION_TYPE = "{type(NAME).__name__}"
# The service answered with an error status (4xx: refused; 5xx: may have acted).
HTTP_STATUS_ERRORS = frozenset(
    {"HTTPStatusError", "HTTPError", "ClientResponseError", "APIStatusError"}
)


@dataclass(frozen=True)
class StructuredError:
    """The structured error that replaces raw exception text in a tool's return value.

    ``content`` is plain words for the model: what happened, whether it may call again, what
    to do next. Where the handler names the exception, ``content`` holds the placeholder
    ``{type(<name>).__name__}`` (the type is fine to show; the message is what leaks).
    """

    code: str
    retryable: bool
    content: str
    exception_name: str | None


def structured_error(finding: Finding, project: ProjectModel) -> StructuredError | None:
    """For an AG601 finding on ``return <raw text>`` directly inside a tool's ``except``."""
    tool = finding_tool(project, finding)
    entry = project.functions.get(finding.symbol or "")
    if tool is None or entry is None or entry[0].qualname not in tool.functions:
        return None
    function = entry[0]
    handler = next(
        (
            h
            for h in sorted(function.handlers, key=lambda h: h.span, reverse=True)
            if any(u.dest == "return" and u.span == finding.span for u in h.raw_error_uses)
        ),
        None,
    )
    if handler is None:
        return None
    know = knowledge()
    writes = any(know.counts_as_write(e, tool.name) for e in tool.effects)
    caught = [c.replace("()", "") for c in handler.caught]
    before_send = [
        c for c in caught if c in know.before_send or c.rsplit(".", 1)[-1] in know.before_send
    ]
    timeouts = [c for c in caught if know.is_timeout(c)]
    name = tool.name
    typed = f" ({EXCEPTION_TYPE.replace('NAME', handler.name)})" if handler.name else ""
    if caught and len(before_send) == len(caught):
        return StructuredError(
            "TRANSIENT_NETWORK",
            True,
            f"{name} could not reach the service{typed}; nothing was sent. It is safe to call "
            f"{name} again in a moment.",
            handler.name,
        )
    if timeouts and writes:
        return StructuredError(
            "SIDE_EFFECT_UNCERTAIN",
            False,
            f"{name} timed out{typed} after its request may have reached the service, so it "
            f"may or may not have taken effect. Do not call {name} again for this request: "
            "that could do it twice. Tell the user it is not known yet whether it happened.",
            handler.name,
        )
    if caught and len(timeouts) + len(before_send) == len(caught):
        return StructuredError(
            "TIMEOUT",
            True,
            f"{name} timed out{typed}. It changes nothing, so it is safe to call {name} again "
            "in a moment.",
            handler.name,
        )
    answered = caught and all(c.rsplit(".", 1)[-1] in HTTP_STATUS_ERRORS for c in caught)
    if answered and writes:
        content = (
            f"{name} got an error response from the service{typed}; it may or may not have "
            f"acted. Do not call {name} again for this request; tell the user what failed."
        )
    elif answered:
        content = (
            f"{name} got an error response from the service{typed}. Check the arguments "
            "before calling it again, or tell the user what failed."
        )
    elif writes:
        content = (
            f"{name} failed unexpectedly{typed} and may already have acted. Do not call "
            f"{name} again for this request; tell the user what failed."
        )
    else:
        content = (
            f"{name} failed{typed}. Calling it again is unlikely to help; tell the user what "
            "failed."
        )
    return StructuredError("TOOL_CRASH", False, content, handler.name)


def _without_local_import(handler: cst.ExceptHandler, name: str) -> cst.ExceptHandler:
    import libcst as cst

    body = handler.body
    if not isinstance(body, cst.IndentedBlock):
        return handler

    def binds_only(statement: cst.BaseStatement) -> bool:
        return (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Import)
            and [cst.Module(body=[]).code_for_node(a) for a in statement.body[0].names] == [name]
        )

    kept = [s for s in body.body if not binds_only(s)]
    if not kept or len(kept) == len(body.body):
        return handler
    return handler.with_changes(body=body.with_changes(body=kept))


def _annotated_str(function: cst.FunctionDef) -> bool:
    """``-> str``: the framework expects text, so the structure goes out as JSON text."""
    import libcst as cst

    annotation = function.returns.annotation if function.returns else None
    return isinstance(annotation, cst.Name) and annotation.value == "str"


def _structured_error_source(
    error: StructuredError, indent: int, line_length: int, quote: str, json_name: str | None
) -> str:
    """``{"ok": False, "code": ..., "content": ..., "retryable": ...}`` laid out one item per
    line (a formatter's layout), inside ``json.dumps(...)`` when the tool returns text.

    Lines are indented relative to the statement: LibCST adds the block's indentation.
    """
    inner = "        " if json_name else "    "

    def literal(text: str) -> str:
        return f"{quote}{text}{quote}"

    width = line_length - indent - len(inner)
    pieces = _content_pieces(error, quote, width - 4)
    if len(pieces) == 1 and len(f"'content': {pieces[0]},") <= width:
        content = pieces[0]
    else:
        lines = "".join(f"\n{inner}    {piece}" for piece in pieces)
        content = f"({lines}\n{inner})"
    items = [
        f"{literal('ok')}: False",
        f"{literal('code')}: {literal(error.code)}",
        f"{literal('content')}: {content}",
        f"{literal('retryable')}: {error.retryable}",
    ]
    closing = inner[:-4]
    body = "{" + "".join(f"\n{inner}{item}," for item in items) + f"\n{closing}}}"
    if json_name is None:
        return body
    return f"{json_name}.dumps(\n{closing}{body}\n)"


def _content_pieces(error: StructuredError, quote: str, width: int) -> list[str]:
    """The content as adjacent string literals of at most ``width`` characters each; only
    those holding the exception type placeholder are f-strings."""
    placeholder = (
        EXCEPTION_TYPE.replace("NAME", error.exception_name) if error.exception_name else None
    )

    def escape(text: str, formatted: bool) -> str:
        text = text.replace("\\", "\\\\").replace(quote, f"\\{quote}")
        if formatted:
            parts = text.split(placeholder) if placeholder else [text]
            doubled = [p.replace("{", "{{").replace("}", "}}") for p in parts]
            return (placeholder or "").join(doubled)
        return text

    words = error.content.split(" ")
    chunks: list[str] = []
    current = ""
    for word in words:
        candidate = f"{current} {word}" if current else word
        if current and len(candidate) + 4 > max(width, 30):
            chunks.append(current + " ")
            current = word
        else:
            current = candidate
    chunks.append(current)
    pieces = []
    for chunk in chunks:
        formatted = placeholder is not None and placeholder in chunk
        pieces.append(("f" if formatted else "") + quote + escape(chunk, formatted) + quote)
    return pieces
