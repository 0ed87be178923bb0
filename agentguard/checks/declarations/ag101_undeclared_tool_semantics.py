from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import effect_words, tool_evidence, via, weakest
from agentguard.diagnostics import Applicability, Finding, Severity
from agentguard.project.project_model import ProjectModel


class UndeclaredToolSemantics(Rule):
    """
    ## What it does
    Flags a tool whose code writes, sends, pays, deletes or executes, and that declares no
    idempotency, risk or replay policy: no `@guarded(...)`, no MCP `ToolAnnotations`, no
    LangChain `metadata` hints, no entry in an `agentguard.yaml` manifest.

    ## Why it matters
    When the call times out, the runtime and the model must decide whether to call again.
    With nothing declared, the only safe reading is the MCP spec's pessimistic default
    (destructive, not idempotent), but most runtimes retry anyway: the order is placed twice.

    ## Example
    ```python
    @tool
    def create_order(cart_id: str) -> dict:
        return requests.post(ORDERS_URL, json={"cart": cart_id}).json()
    ```

    ## Use instead
    ```python
    @tool
    @guarded(runtime, risk="write", idempotency="non_idempotent", replay="never",
             key=lambda call: f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}")
    def create_order(cart_id: str) -> dict:
        ...
    ```
    For MCP tools, declare `annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=False, ...)`.

    ## Fix safety
    Safe for MCP tools: the fix adds `annotations=ToolAnnotations(readOnlyHint=...,
    destructiveHint=..., idempotentHint=..., openWorldHint=...)` (or the dict form where the
    file already uses dicts), inferred from the effects; hints change no behaviour.

    Unsafe elsewhere: the fix adds `@guarded(runtime, risk=..., idempotency=..., replay=...)`
    directly under the framework decorator, which journals and deduplicates every call.
    For a class-based tool (`BaseTool` and the like) it goes on the methods the framework
    calls (`_run`, `_arun`, `forward`) defined on the tool's own class, with `name=` set to
    the tool's name; a method inherited from a shared base class is left for you.
    Where the tool is not idempotent it adds a placeholder
    `key=lambda call: f"tool:{call.user_id}:{call.args['<id>']}:{call.run_id}:{call.approved_at}"`
    naming user, resource, run and approval: check that it identifies the business operation.
    The `runtime` it passes is, in order: a `Runtime(...)` this module already binds; one
    bound at module level elsewhere in the project (imported from there); otherwise a new
    `runtime = Runtime(ledger=SQLiteLedger("agentguard-ledger.db"))` after the imports, which
    you should move to one shared module so the process has a single Runtime.
    """

    code, name, question = "AG101", "undeclared-tool-semantics", "Q1"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    fix_applicability_detail = "safe (MCP) / unsafe"
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def get_order(order_id: str) -> dict:\n"
            '    """Look an order up."""\n'
            '    return requests.get(f"https://shop.example/orders/{order_id}").json()\n'
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from agentguard.runtime import guarded, current_call\n"
            "from app.runtime import runtime\n\n"
            "@tool\n"
            '@guarded(runtime, risk="write", idempotency="conditional", replay="never",\n'
            "         key=lambda call: f\"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}\")\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    headers = {"Idempotency-Key": current_call().idempotency_key}\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers=headers).json()\n'
        ),
        Valid(
            "from mcp.server.fastmcp import FastMCP\n"
            "from mcp.types import ToolAnnotations\n"
            "import subprocess\n\n"
            'mcp = FastMCP("ops")\n\n'
            "@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False))\n"
            "def restart_service(name: str) -> str:\n"
            '    return subprocess.run(["systemctl", "restart", name], check=True).stdout\n'
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain_core.tools import BaseTool\n"
            "\n"
            "\n"
            "class CreateInvoice(BaseTool):\n"
            '    name: str = "create_invoice"\n'
            '    description: str = "Create an invoice for a customer"\n'
            "\n"
            "    def _run(self, customer_id: str, cents: int) -> dict:\n"
            "        return requests.post(\n"
            '            "https://billing.example/invoices", json={"customer": customer_id, "cents": cents}\n'
            "        ).json()\n",
            span=(5, 7, 5, 20),
            fixed=(
                "import requests\n"
                "from agentguard.runtime import Runtime, SQLiteLedger, guarded\n"
                "from langchain_core.tools import BaseTool\n"
                "\n"
                "# The ledger that makes guarded tools replay-safe: share one Runtime per process.\n"
                'runtime = Runtime(ledger=SQLiteLedger("agentguard-ledger.db"))\n'
                "\n"
                "\n"
                "class CreateInvoice(BaseTool):\n"
                '    name: str = "create_invoice"\n'
                '    description: str = "Create an invoice for a customer"\n'
                "\n"
                "    @guarded(\n"
                "        runtime,\n"
                '        risk="write",\n'
                '        idempotency="non_idempotent",\n'
                '        replay="never",\n'
                "        key=lambda call: f\"create_invoice:{call.user_id}:{call.args['customer_id']}:{call.run_id}:{call.approved_at}\",\n"
                '        name="create_invoice",\n'
                "    )\n"
                "    def _run(self, customer_id: str, cents: int) -> dict:\n"
                "        return requests.post(\n"
                '            "https://billing.example/invoices", json={"customer": customer_id, "cents": cents}\n'
                "        ).json()\n"
            ),
        ),
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n',
            span=(5, 5, 5, 17),
            fixed=(
                "import requests\n"
                "from agentguard.runtime import Runtime, SQLiteLedger, guarded\n"
                "from langchain_core.tools import tool\n"
                "\n"
                "# The ledger that makes guarded tools replay-safe: share one Runtime per process.\n"
                'runtime = Runtime(ledger=SQLiteLedger("agentguard-ledger.db"))\n'
                "\n"
                "@tool\n"
                "@guarded(\n"
                "    runtime,\n"
                '    risk="write",\n'
                '    idempotency="non_idempotent",\n'
                '    replay="never",\n'
                "    key=lambda call: f\"create_order:{call.user_id}:{call.args['cart_id']}:{call.run_id}:{call.approved_at}\",\n"
                ")\n"
                "def create_order(cart_id: str) -> dict:\n"
                '    """Create an order."""\n'
                '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            ),
            message_contains="requests.post",
        ),
        Invalid(
            "from mcp.server.fastmcp import FastMCP\n"
            "import smtplib\n\n"
            'mcp = FastMCP("mail")\n\n'
            "@mcp.tool()\n"
            "def send_invoice(to: str, body: str) -> str:\n"
            '    with smtplib.SMTP("localhost") as smtp:\n'
            '        smtp.sendmail("billing@shop.example", [to], body)\n'
            '    return "sent"\n',
            span=(7, 5, 7, 17),
            fixed=(
                "from mcp.server.fastmcp import FastMCP\n"
                "from mcp.types import ToolAnnotations\n"
                "import smtplib\n"
                "\n"
                'mcp = FastMCP("mail")\n'
                "\n"
                "@mcp.tool(\n"
                "    annotations=ToolAnnotations(\n"
                "        readOnlyHint=False,\n"
                "        destructiveHint=False,\n"
                "        idempotentHint=False,\n"
                "        openWorldHint=True,\n"
                "    ),\n"
                ")\n"
                "def send_invoice(to: str, body: str) -> str:\n"
                '    with smtplib.SMTP("localhost") as smtp:\n'
                '        smtp.sendmail("billing@shop.example", [to], body)\n'
                '    return "sent"\n'
            ),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool in project.tools:
            if tool.declaration is not None:
                continue
            writes = tool.writes()
            if not writes:
                continue
            worst = sorted(
                writes,
                key=lambda e: (e.idempotent is True, -e.confidence.rank, e.site.path, e.site.span),
            )[0]
            severity = Severity.ERROR if any(e.non_idempotent for e in writes) else Severity.WARNING
            if tool.schema_only:
                # Known only from a tool schema: the effect is a guess from its name.
                yield self.finding(
                    tool.anchor,
                    f"Tool `{tool.name}` looks like it makes {effect_words(worst)}, judging "
                    f"from its schema ({worst.sink}), but declares no idempotency, risk or "
                    "replay policy (no MCP annotations, no agentguard.yaml entry)",
                    tool=tool,
                    confidence=weakest(writes),
                    evidence=tool_evidence(tool, worst),
                    severity=severity,
                    node_text=f"{tool.name}:{tool.framework}",
                )
                continue
            more = f" (and {len(writes) - 1} more side effects)" if len(writes) > 1 else ""
            yield self.finding(
                tool.anchor,
                f"Tool `{tool.name}` makes {effect_words(worst)} ({via(worst)}){more} but "
                "declares no idempotency, risk or replay policy",
                tool=tool,
                confidence=weakest(writes),
                evidence=tool_evidence(tool, worst),
                severity=severity,
                node_text=f"{tool.name}:{tool.framework}",
            )
