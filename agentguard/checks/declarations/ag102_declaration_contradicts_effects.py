from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import CodeTools, effect_words, finding_tool, tool_evidence
from agentguard.checks.declarations.shared import infer_semantics
from agentguard.diagnostics import Applicability, Finding, FixOffer, Location, Severity
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Declaration

if TYPE_CHECKING:
    from agentguard.fixes.context import FixContext


class DeclarationContradictsEffects(Rule):
    """
    ## What it does
    Flags a tool declared read-only (`risk="read"`, `readOnlyHint=True`) or idempotent
    (`idempotency="idempotent"`, `idempotentHint=True`) whose code writes, or writes
    without an idempotency key; and declarations of one tool that disagree with each other
    (code and manifest).

    ## Why it matters
    Clients and runtimes trust the declaration: an "idempotent" tool is retried on timeout
    without a second thought. If it really POSTs a new order, every retry is a new order.

    ## Example
    ```python
    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def cancel_order(order_id: str) -> str:
        return requests.delete(f"{API}/orders/{order_id}").text
    ```

    ## Use instead
    Declare what the code does (`readOnlyHint=False, destructiveHint=True, idempotentHint=True`).

    ## Fix safety
    Unsafe: the corrected hint changes how clients treat the tool.
    """

    code, name, question = "AG102", "declaration-contradicts-effects", "Q1"
    reads = (CodeTools,)
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    VALID = (
        Valid(
            "import requests\n"
            "from mcp.server.fastmcp import FastMCP\n"
            "from mcp.types import ToolAnnotations\n\n"
            'mcp = FastMCP("shop")\n\n'
            "@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))\n"
            "def get_order(order_id: str) -> dict:\n"
            '    return requests.get(f"https://shop.example/orders/{order_id}").json()\n'
        ),
        Valid(
            "import requests\n"
            "from mcp.server.fastmcp import FastMCP\n\n"
            'mcp = FastMCP("shop")\n\n'
            '@mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True})\n'
            "def cancel_order(order_id: str) -> str:\n"
            '    return requests.delete(f"https://shop.example/orders/{order_id}").text\n'
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from mcp.server.fastmcp import FastMCP\n"
            "from mcp.types import ToolAnnotations\n\n"
            'mcp = FastMCP("shop")\n\n'
            "@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))\n"
            "def cancel_order(order_id: str) -> str:\n"
            '    return requests.delete(f"https://shop.example/orders/{order_id}").text\n',
            span=(7, 52, 7, 56),
            fixed=(
                "import requests\n"
                "from mcp.server.fastmcp import FastMCP\n"
                "from mcp.types import ToolAnnotations\n"
                "\n"
                'mcp = FastMCP("shop")\n'
                "\n"
                "@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False))\n"
                "def cancel_order(order_id: str) -> str:\n"
                '    return requests.delete(f"https://shop.example/orders/{order_id}").text\n'
            ),
            message_contains="read-only",
        ),
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from agentguard.runtime import guarded\n"
            "from app.runtime import runtime\n\n"
            "@tool\n"
            '@guarded(runtime, risk="write", idempotency="idempotent", replay="auto")\n'
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n',
            span=(7, 45, 7, 57),
            fixed=(
                "import requests\n"
                "from langchain_core.tools import tool\n"
                "from agentguard.runtime import guarded\n"
                "from app.runtime import runtime\n"
                "\n"
                "@tool\n"
                '@guarded(runtime, risk="write", idempotency="non_idempotent", replay="never")\n'
                "def create_order(cart_id: str) -> dict:\n"
                '    """Create an order."""\n'
                '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            ),
            message_contains="idempotent",
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool in project.tools:
            writes = tool.writes()
            for decl in tool.declarations:
                if not decl.declares_anything:
                    continue
                where = decl.fields.get("read_only") or decl.fields.get("risk") or decl.location
                contradiction = _self_contradiction(decl)
                if contradiction is not None:
                    location, text = contradiction
                    yield self.finding(
                        location,
                        f"Tool `{tool.name}` declares {text} ({decl.source}): clients cannot "
                        "tell whether a retry is safe",
                        tool=tool,
                        related=(decl.location,),
                        node_text=f"{tool.name}:self-contradiction:{decl.source}",
                    )
                    continue
                if decl.says_read_only and writes:
                    effect = writes[0]
                    makes = (
                        f"its schema says it makes {effect_words(effect)} ({effect.sink})"
                        if tool.schema_only
                        else f"makes {effect_words(effect)} ({effect.route()})"
                    )
                    yield self.finding(
                        where,
                        f"Tool `{tool.name}` is declared read-only ({decl.source}) but {makes}",
                        tool=tool,
                        confidence=effect.confidence,
                        evidence=tool_evidence(tool, effect),
                        related=(effect.site,),
                        node_text=f"{tool.name}:read-only:{decl.source}",
                    )
                    continue
                unkeyed = [
                    e
                    for e in tool.non_idempotent_writes()
                    if e.key is None or e.key.origin != "runtime"
                ]
                unkeyed = [
                    e for e in unkeyed if e.key is None or e.key.origin in {"fresh", "param"}
                ]
                if decl.says_idempotent and unkeyed and not decl.has_key:
                    effect = unkeyed[0]
                    where = (
                        decl.fields.get("idempotency")
                        or decl.fields.get("idempotent_hint")
                        or decl.location
                    )
                    yield self.finding(
                        where,
                        f"Tool `{tool.name}` is declared idempotent ({decl.source}) but makes "
                        f"{effect_words(effect)} that repeats on every call ({effect.route()}, no "
                        "idempotency key)",
                        tool=tool,
                        confidence=effect.confidence,
                        evidence=tool_evidence(tool, effect),
                        related=(effect.site,),
                        node_text=f"{tool.name}:idempotent:{decl.source}",
                    )
            yield from self._disagreements(tool)

    def _disagreements(self, tool: object) -> Iterator[Finding]:
        from agentguard.project.tool_facts import ToolFacts

        assert isinstance(tool, ToolFacts)
        declared = [d for d in tool.declarations if d.declares_anything]
        for first_index, first in enumerate(declared):
            for second in declared[first_index + 1 :]:
                if first.location.path == second.location.path:
                    continue
                # Only what both of them state explicitly can disagree: a manifest that says
                # only `replay: never` does not contradict `idempotentHint: true`.
                differing = [
                    index
                    for index, (a, b) in enumerate(
                        zip(_claims(first), _claims(second), strict=True)
                    )
                    if a is not None and b is not None and a != b
                ]
                if differing:
                    # Point at the field that says otherwise (risk/idempotency line).
                    names = (("risk", "read_only"), ("idempotency", "idempotent_hint"))[
                        differing[0]
                    ]
                    where = next(
                        (second.fields[n] for n in names if n in second.fields), second.location
                    )
                    yield self.finding(
                        where,
                        f"Tool `{tool.name}` is declared differently in {first.location} "
                        f"({first.source}) and here ({second.source})",
                        tool=tool,
                        related=(first.location,),
                        node_text=f"{tool.name}:disagree",
                    )

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        parts = finding.node_text.split(":")
        kind = parts[1] if len(parts) >= 3 else ""
        if kind not in ("read-only", "idempotent") or finding_tool(project, finding) is None:
            return None
        what = "as writing" if kind == "read-only" else "as not idempotent"
        return FixOffer(Applicability.UNSAFE, f"Declare the tool {what}, as the code behaves")

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        import libcst as cst

        from agentguard.fixes.cst_tools import string_quote

        kind = finding.node_text.split(":")[1] if finding.node_text.count(":") >= 2 else ""
        if kind not in ("read-only", "idempotent"):
            return None
        tool = finding_tool(ctx.project, finding)
        if tool is None:
            return None
        span = finding.span
        value = ctx.node_at(span.line, span.column, (cst.BaseExpression,))
        if value is None:
            return None
        parent = ctx.parsed.parent(value)
        key = None
        if isinstance(parent, cst.Arg) and parent.keyword is not None:
            key = parent.keyword.value
        elif isinstance(parent, cst.DictElement) and isinstance(parent.key, cst.SimpleString):
            key = str(parent.key.evaluated_value)
        if key is None:
            return None
        semantics = infer_semantics(tool.writes())
        quote = string_quote(ctx.parsed.module, parent)
        replacement: cst.BaseExpression
        if key in ("readOnlyHint", "read_only_hint", "idempotentHint", "idempotent_hint"):
            replacement = cst.Name("False")
        elif key == "risk":
            replacement = cst.SimpleString(f"{quote}{semantics.risk}{quote}")
        elif key == "idempotency":
            replacement = cst.SimpleString(f"{quote}non_idempotent{quote}")
        else:
            return None
        module = ctx.parsed.replace(value, replacement)
        call = ctx.parsed.parent(parent) if parent is not None else None
        if key == "idempotency" and isinstance(call, cst.Call):
            # replay="auto" was only sound for an idempotent tool.
            args = []
            for arg in call.args:
                if arg is parent:
                    arg = arg.with_changes(value=replacement)
                elif (
                    arg.keyword
                    and arg.keyword.value == "replay"
                    and isinstance(arg.value, cst.SimpleString)
                    and arg.value.evaluated_value == "auto"
                ):
                    arg = arg.with_changes(value=cst.SimpleString(f"{quote}never{quote}"))
                args.append(arg)
            module = ctx.parsed.replace(call, call.with_changes(args=args))
        return ctx.parsed.code(module)


def _claims(decl: Declaration) -> tuple[bool | None, bool | None]:
    """(read-only?, idempotent?) as the declaration states them explicitly; None: silent."""
    read_only: bool | None = None
    if "risk" in decl.fields:
        read_only = decl.risk == "read"
    elif "read_only" in decl.fields:
        read_only = decl.read_only
    idempotent: bool | None = None
    if "idempotency" in decl.fields and decl.idempotency != "conditional":
        idempotent = decl.idempotency == "idempotent"
    elif "idempotent_hint" in decl.fields and decl.read_only is not True:
        idempotent = decl.idempotent_hint
    elif read_only is True:
        idempotent = True  # reading twice changes nothing
    return read_only, idempotent


def _self_contradiction(decl: Declaration) -> tuple[Location, str] | None:
    """Fields of one declaration that cannot both hold, and where the second is written."""
    if decl.says_read_only and decl.destructive is True and "destructive" in decl.fields:
        return decl.fields["destructive"], "itself read-only and destructive at once"
    if decl.says_read_only and decl.idempotency == "non_idempotent":
        where = decl.fields.get("idempotency", decl.location)
        return where, "itself read-only and non-idempotent at once"
    if decl.risk == "destructive" and decl.read_only is True and "read_only" in decl.fields:
        return decl.fields["read_only"], "itself destructive and read-only at once"
    return None
