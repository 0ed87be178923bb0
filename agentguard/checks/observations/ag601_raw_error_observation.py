from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.checks.base import ORDER_OUTCOME_UNKNOWN_TS, Invalid, Rule, Valid, mcp_tool_ts
from agentguard.checks.common import CodeTools, finding_tool
from agentguard.checks.observations.error_taxonomy import HELPER_NAME, helper_source, with_helper
from agentguard.checks.observations.shared import (
    ObservationSite,
    RawObservation,
    RawObservations,
    within_lines,
)
from agentguard.checks.timeouts.shared import try_block
from agentguard.diagnostics import (
    Applicability,
    EvidenceStep,
    Finding,
    FixOffer,
    Severity,
    StepKind,
)
from agentguard.project.counted_writes import counts_as_write
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    import libcst as cst

    from agentguard.facts.module_facts import Handler
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

    In TypeScript and JavaScript: `String(err)`, `` `${err}` ``, `err.message`, `err.stack`
    or `JSON.stringify(err)` from a `catch` in what the tool returns (an MCP `{content:
    [{type: "text", text}], isError: true}`, `{error: err.message}`), and a rejected Zod
    `safeParse` result's `error` formatted into the answer. A message only re-thrown inside
    a new `Error` is the framework's to forward (AG603), not this rule's.

    The text is followed through the project: a helper whose result the tool returns
    (through other helpers too, `self._request(...)` included), an error helper the tool
    hands the exception to (`return self._failure(e)`, itself formatting it or handing it
    on), a local the text is put into (`results.append({"error": error})`) that the tool
    returns, and the `except` of a low-level MCP `call_tool` around inline dispatch
    branches. Text sent from code several tools share gives each tool its finding, at the
    tool's own call into that code, with the shared `except` as related location.

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
    `tool_error("<tool>", e, writes=...)` instead (inside `json.dumps(...)` when the tool is
    annotated `-> str`), naming the exception in the handler if it was not named. It adds
    `tool_error` once per file, after the imports, with `import re`: a function of about
    fifty lines holding agentguard's error taxonomy (the table of `agentguard.runtime.errors`,
    copied so that the module needs no agentguard import). When the error happens it gives
    `{"ok": False, "code": ..., "content": ..., "retryable": ...}`: the code of the
    exception raised (its class, or the HTTP status it carries: `RATE_LIMIT`, `TIMEOUT`,
    `TRANSIENT_NETWORK`, `SERVER_ERROR` are retryable; `INVALID_ARGUMENTS`, `NOT_FOUND`,
    `PERMISSION_DENIED`, `TOOL_CRASH` are not), `SIDE_EFFECT_UNCERTAIN` (not retryable) in a
    tool that writes when the request may have taken effect, and `content` in plain words
    with the exception's type and at most 200 characters of its message, URLs and
    credentials removed. Callers that parsed the old error text see a different value, so
    review the change. Raised `ToolException`/`ModelRetry` messages, tool messages and
    error helpers are left for you to change.
    """

    code, name, question = "AG601", "raw-error-observation", "Q6"
    reads = (RawObservations, CodeTools)
    # Exception text can carry secrets and internal details to the model, and a downstream's
    # error body is attacker-controlled text in the model's context (CWE-209).
    category = "security"
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
        Valid(
            ORDER_OUTCOME_UNKNOWN_TS,
            filename="server.ts",
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
            span=(13, 16, 13, 35),
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
            span=(10, 9, 10, 29),
            fixed=(
                "import json\n"
                "import re\n"
                "\n"
                "import requests\n"
                "from langchain_core.tools import tool\n" + with_helper() + "@tool\n"
                "def create_order(cart_id: str) -> str:\n"
                '    """Create an order."""\n'
                "    try:\n"
                '        requests.post("https://shop.example/orders", json={"cart": cart_id})\n'
                "    except Exception as e:\n"
                '        return json.dumps(tool_error("create_order", e, writes=True))\n'
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
            span=(16, 13, 16, 39),
            fixed=(
                "import re\n"
                "\n"
                "import httpx\n"
                "from mcp.server.fastmcp import FastMCP\n"
                + with_helper()
                + 'mcp = FastMCP("billing")\n'
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
                '            return tool_error("refund_payment", exc, writes=True)\n'
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
            span=(15, 9, 15, 34),
            also=((17, 9, 17, 49),),
            fixed=(
                "import re\n"
                "\n"
                "import requests\n"
                "from langchain_core.tools import tool\n" + with_helper() + "@tool\n"
                "def find_flights(origin: str, destination: str) -> dict:\n"
                '    """Search flights between two airports."""\n'
                "    try:\n"
                "        return requests.get(\n"
                '            "https://flights.example/search", params={"from": origin, "to": destination}\n'
                "        ).json()\n"
                "    except requests.ReadTimeout as e:\n"
                '        return tool_error("find_flights", e, writes=False)\n'
                "    except Exception as error:\n"
                '        return tool_error("find_flights", error, writes=False)\n'
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
            span=(11, 9, 11, 95),
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
            span=(10, 29, 10, 97),
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
            span=(9, 9, 9, 85),
        ),
        Invalid(
            mcp_tool_ts(
                "    try {\n"
                '      const response = await axios.post("https://shop.example/orders", { cartId });\n'
                '      return { content: [{ type: "text", text: `Order ${response.data.id} placed` }] };\n'
                "    } catch (err) {\n"
                '      return { content: [{ type: "text", text: `Error: ${err}` }], isError: true };\n'
                "    }\n",
                'axios from "axios"',
            ),
            filename="server.ts",
            span=(15, 7, 15, 84),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        shared: dict[tuple[str, str], list[RawObservation]] = {}
        tools_of: dict[str, ToolFacts] = {}
        for raw in RawObservations.of(project):
            site = raw.site
            tools = site.tools if site.role == "helper" else []
            if site.role == "executor":
                tools = _wrapped_tools(project, site, raw)
            for tool in tools:
                # The cause is shared code (a helper, the dispatcher around inline
                # branches): each tool it reaches gets one finding, in the tool.
                tools_of[tool.symbol] = tool
                shared.setdefault((site.function.qualname, tool.symbol), []).append(raw)
            if tools:
                continue
            own = site.tool
            owner = f"Tool `{own.name}`" if own else f"`{site.function.name}` ({site.role})"
            yield self.finding(
                raw.location,
                f"{owner} sends raw exception text ({raw.use.how}) to the model through "
                f"{raw.reaches}: it says neither what happened nor whether a retry is safe",
                tool=own,
                confidence=raw.confidence,
                severity=None if _writes(project, own) else Severity.WARNING,
                evidence=(_cause(raw),),
                symbol=site.function.qualname,
                node_text=f"{site.function.qualname}:{raw.use.text[:80]}",
            )
        for (function, symbol), raws in shared.items():
            tool, first, site = tools_of[symbol], raws[0], raws[0].site
            reaches = (
                "the tool's return value"
                if site.role == "executor"
                else f"`{site.function.name}`'s result, which the tool returns"
            )
            where = ", ".join(str(r.location) for r in raws)
            yield self.tool_finding(
                project,
                tool,
                first.location,
                f"Tool `{tool.name}` sends raw exception text ({first.use.how}) to the model "
                f"through {reaches} (`except` in `{site.function.name}`, {where}): it says "
                "neither what happened nor whether a retry is safe",
                function=function,
                confidence=first.confidence,
                severity=None if _writes(project, tool) else Severity.WARNING,
                evidence=[_cause(r) for r in raws],
                related=[r.location for r in raws[1:]],
                node_text=f"{tool.name}:{function}:{first.use.text[:80]}",
            )

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        if raw_return(finding, project) is None:
            return None
        return FixOffer(
            Applicability.UNSAFE,
            f"Return a structured error instead of the exception text: `{HELPER_NAME}(...)`"
            " (added once per file) gives the exception's code in agentguard's error"
            " taxonomy, whether calling again can help, and its type with a short message"
            " (URLs and secrets removed)",
        )

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        import libcst as cst

        from agentguard.fixes.cst_tools import (
            add_plain_import,
            insert_after_imports,
            name_is_used,
            names_in,
            parse_module_once,
            plain_import_name,
            remove_unused_import,
            string_quote,
        )

        found = raw_return(finding, ctx.project)
        if found is None:
            return None
        tool, handler_facts = found
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
        ours = _defines_helper(module)
        if ours is None:
            return None  # the file has a `tool_error` of its own
        quote = string_quote(module, node)
        error_name = handler_facts.name
        new_handler = handler
        if error_name is None:
            # ``except Exception:``: the helper needs the exception, so the handler names it.
            error_name = next(
                n
                for n in ("error", "caught_error", "tool_exception")
                if not name_is_used(function, n)
            )
            new_handler = handler.with_changes(
                name=cst.AsName(
                    cst.Name(error_name),
                    whitespace_before_as=cst.SimpleWhitespace(" "),
                    whitespace_after_as=cst.SimpleWhitespace(" "),
                )
            )
        writes = any(counts_as_write(e, tool.name, ctx.project.catalog) for e in tool.effects)
        call = f"{HELPER_NAME}({quote}{tool.name}{quote}, {error_name}, writes={writes})"
        if _annotated_str(function):
            json_name = plain_import_name(module, "json") or "json"
            call = f"{json_name}.dumps({call})"
        new_return = node.with_changes(value=cst.parse_expression(call))
        replaced = new_handler.deep_replace(node, new_return)
        assert isinstance(replaced, cst.ExceptHandler)
        new_handler = replaced
        # Modules the replaced text used (``traceback.format_exc()``), whose imports may go.
        used = [name for name in ("traceback", "sys") if name in names_in(node.value)]
        if used:
            new_function = function.deep_replace(handler, new_handler)
            for name in used:
                if not name_is_used(new_function, name):
                    # ``import traceback`` inside the handler, only for the text just replaced.
                    new_handler = _without_local_import(new_handler, name)
        module = ctx.parsed.replace(handler, new_handler)
        for name in used:
            module = remove_unused_import(module, name)
        if _annotated_str(function):
            module = add_plain_import(module, "json")
        module = add_plain_import(module, "re")
        if not ours:
            helper = parse_module_once(helper_source(quote), module.config_for_parsing)
            # The comment above the tables parses as the helper's header: it leads them.
            first = helper.body[0].with_changes(
                leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *helper.header]
            )
            helper = helper.with_changes(body=[first, *helper.body[1:]])
            before = len(module.body)
            module = insert_after_imports(module, list(helper.body))
            index = next(
                i for i, statement in enumerate(module.body) if statement is helper.body[-1]
            )
            if index + 1 < len(module.body) and len(module.body) > before:
                # Two blank lines after a function, as formatters put them.
                following = module.body[index + 1]
                blank = [cst.EmptyLine()] * 2
                lines = list(following.leading_lines)
                while lines and lines[0].comment is None:
                    lines.pop(0)
                body = list(module.body)
                body[index + 1] = following.with_changes(leading_lines=blank + lines)
                module = module.with_changes(body=body)
        return ctx.parsed.code(module)


def _cause(raw: RawObservation) -> EvidenceStep:
    site = raw.site
    return EvidenceStep(
        StepKind.OBSERVATION, raw.location, subject=site.function.name, detail=site.role
    )


def _writes(project: ProjectModel, tool: ToolFacts | None) -> bool:
    return tool is None or any(counts_as_write(e, tool.name, project.catalog) for e in tool.effects)


def _wrapped_tools(
    project: ProjectModel, site: ObservationSite, raw: RawObservation
) -> list[ToolFacts]:
    """The tools that run inside the ``try`` whose handler sends the raw text: the inline
    dispatch branches written in it, and the tools whose function it calls."""
    fn = site.function
    handler = next((h for h in fn.handlers if within_lines(h.span, raw.location.span)), None)
    block = try_block(fn, handler) if handler is not None else None
    if block is None or handler is None:
        return []
    start, end = block.body_order
    called = {
        target for call, target in project.call_edges(fn.qualname) if start <= call.order < end
    }
    found = [
        t
        for t in site.tools
        # the branches the ``try`` wraps, or the branch whose own ``try`` it is
        if (within_lines(block.span, t.anchor.span) or within_lines(t.anchor.span, block.span))
        and not within_lines(handler.span, t.anchor.span)
    ]
    for tool in project.tools:
        if tool not in found and tool.inline is None:
            if any(q in called for q in tool.functions):
                found.append(tool)
    return found


# --------------------------------------------------------------------------- fix
# The edit builder's helpers import LibCST inside their bodies (see Rule.fixed_text).


def raw_return(finding: Finding, project: ProjectModel) -> tuple[ToolFacts, Handler] | None:
    """The tool and handler of an AG601 finding on ``return <raw text>`` directly inside a
    tool's ``except``: the place the fix rewrites."""
    tool = finding_tool(project, finding)
    entry = project.functions.get(finding.symbol or "")
    if tool is None or entry is None or entry[0].qualname not in tool.functions:
        return None
    handler = next(
        (
            h
            for h in sorted(entry[0].handlers, key=lambda h: h.span, reverse=True)
            if any(u.dest == "return" and u.span == finding.span for u in h.raw_error_uses)
        ),
        None,
    )
    return (tool, handler) if handler is not None else None


def _defines_helper(module: cst.Module) -> bool | None:
    """True when the file already has the fix's helper, False when it has no ``tool_error``,
    None when its ``tool_error`` is another function."""
    import libcst as cst

    names = set()
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    names.update(
                        t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                    )
    if HELPER_NAME not in names:
        return False
    return True if "TOOL_ERROR_CODES" in names else None


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
