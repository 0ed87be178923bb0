from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import (
    CodeTools,
    effect_phrase,
    effect_words,
    finding_tool,
    strongest_confidence,
    tool_evidence,
)
from agentguard.checks.declarations.declaration_edits import (
    HINTS,
    ModuleRuntimes,
    Subclasses,
    guarded_decorator,
    guarded_description,
    guarded_methods,
    hidden_timeouts,
    is_class_based,
    mcp_annotations,
)
from agentguard.checks.declarations.shared import (
    infer_semantics,
    inferred_from,
    known_for_certain,
)
from agentguard.checks.timeouts.shared import TimeoutVerdicts
from agentguard.diagnostics import Applicability, Finding, FixOffer, Severity
from agentguard.project.project_model import ProjectModel

if TYPE_CHECKING:
    from agentguard.fixes.context import FixContext


# What the fix adds after the imports when the project has no Runtime (the examples' text).
NEW_RUNTIME = (
    "# The ledger that makes guarded tools replay-safe: share one Runtime per process.\n"
    "# Its file is created on the first call; a call outside `with runtime.run(...)` runs in\n"
    "# a run of its own.\n"
    "runtime = Runtime(\n"
    '    ledger=SQLiteLedger("agentguard-ledger.db", lazy=True),\n'
    "    implicit_runs=True,\n"
    ")\n"
)


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
    Safe for MCP tools whose effects are known for certain: the fix adds
    `annotations=ToolAnnotations(readOnlyHint=..., destructiveHint=..., idempotentHint=...,
    openWorldHint=...)` (or the dict form where the file already uses dicts), inferred from
    the effects; hints change no behaviour. Where any effect is a guess (judged by a verb,
    below high confidence) or a call could not be judged, the same fix is unsafe: the
    declaration would only repeat the guess, and clients trust it. The fix says what it
    inferred, from which calls.

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
    `runtime = Runtime(ledger=SQLiteLedger("agentguard-ledger.db", lazy=True),
    implicit_runs=True)` after the imports: nothing is written at import time (the ledger
    file is created by the first call, relative to the working directory), and a call made
    outside `with runtime.run(...)` runs in a run of its own rather than raising. Move it to
    one shared module so the process has a single Runtime.

    `@guarded` must see the tool's timeout to record the call as uncertain, so the fix also
    removes the tool's own handler that answers a timeout with a plain error (AG401), or the
    timeout from its tuple of exceptions; when such a handler sits in a function the tool
    calls, no fix is offered. The tool then returns agentguard's observation (`ok`, `code`,
    `content`, `result`) rather than its value. The fix's message lists what is left to you:
    the key, the observation, the shared Runtime and its ledger path, `with runtime.run(...)`
    around each agent turn, and sending `current_call().idempotency_key` downstream with a
    `reconcile=` lookup.
    """

    code, name, question = "AG101", "undeclared-tool-semantics", "Q1"
    reads = (TimeoutVerdicts, CodeTools, ModuleRuntimes, Subclasses)
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    fix_applicability_detail = "safe (MCP, certain effects) / unsafe"
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
                "\n" + NEW_RUNTIME + "\n"
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
                "        key=lambda call: (\n"
                "            f\"create_invoice:{call.user_id}:{call.args['customer_id']}:{call.run_id}:\"\n"
                '            f"{call.approved_at}"\n'
                "        ),\n"
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
                "\n" + NEW_RUNTIME + "\n"
                "@tool\n"
                "@guarded(\n"
                "    runtime,\n"
                '    risk="write",\n'
                '    idempotency="non_idempotent",\n'
                '    replay="never",\n'
                "    key=lambda call: (\n"
                "        f\"create_order:{call.user_id}:{call.args['cart_id']}:{call.run_id}:\"\n"
                '        f"{call.approved_at}"\n'
                "    ),\n"
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
                    confidence=strongest_confidence(writes),
                    evidence=tool_evidence(tool, worst),
                    severity=severity,
                    node_text=f"{tool.name}:{tool.framework}",
                )
                continue
            more = f" (and {len(writes) - 1} more side effects)" if len(writes) > 1 else ""
            yield self.finding(
                tool.anchor,
                f"Tool `{tool.name}` makes {effect_phrase(worst)}{more} but "
                "declares no idempotency, risk or replay policy",
                tool=tool,
                confidence=strongest_confidence(writes),
                evidence=tool_evidence(tool, worst),
                severity=severity,
                node_text=f"{tool.name}:{tool.framework}",
            )

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        tool = finding_tool(project, finding)
        if tool is None or not tool.functions:
            return None
        if is_class_based(tool) and not guarded_methods(project, tool):
            return None
        semantics = infer_semantics(tool.writes())
        inferred = inferred_from(tool)
        if tool.framework == "mcp":
            if tool.site.path != tool.path:
                return None  # registered in another file (a loop over rows): no one edit
            hints = ", ".join(f"{camel}={getattr(semantics, attr)}" for camel, attr in HINTS)
            text = f"Declare the tool's MCP annotations ({hints}), inferred from {inferred}"
            if known_for_certain(tool):
                return FixOffer(Applicability.SAFE, text)
            return FixOffer(
                Applicability.UNSAFE,
                f"{text}: a guess short of certain evidence, check it says what the tool does",
            )
        hidden = hidden_timeouts(project, tool)
        if hidden is None:
            # A handler the fix cannot rewrite would still hide the timeout from @guarded.
            return None
        return FixOffer(
            Applicability.UNSAFE, guarded_description(project, tool, semantics, hidden, inferred)
        )

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        tool = finding_tool(ctx.project, finding)
        if tool is None:
            return None
        function = ctx.tool_function(tool)
        if function is None:
            return None
        semantics = infer_semantics(tool.writes())
        if tool.framework == "mcp":
            return mcp_annotations(ctx, tool, function, semantics)
        return guarded_decorator(ctx, tool, function, semantics)
