from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import effect_phrase, effect_words, tool_evidence
from agentguard.diagnostics import Finding, Location, Severity
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Declaration


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
    No automatic fix: a declaration is its author's word about the tool, and what the code
    does is inferred. agentguard never rewrites a declaration on inferred effects (the
    inference may be the mistake); the finding names the calls it inferred the write from,
    for you to judge and correct either side by hand.
    """

    code, name, question = "AG102", "declaration-contradicts-effects", "Q1"
    severity = Severity.ERROR
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
                        else f"makes {effect_phrase(effect)}"
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
