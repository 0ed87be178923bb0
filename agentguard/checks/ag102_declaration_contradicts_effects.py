from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import effect_words, tool_evidence, via
from agentguard.diagnostics import Applicability, Finding, Severity
from agentguard.project import ProjectModel


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
            line=7,
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
            line=7,
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
                if decl.says_read_only and writes:
                    effect = writes[0]
                    yield self.finding(
                        where,
                        f"Tool `{tool.name}` is declared read-only ({decl.source}) but makes "
                        f"{effect_words(effect)} ({via(effect)})",
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
                        f"{effect_words(effect)} that repeats on every call ({via(effect)}, no "
                        "idempotency key)",
                        tool=tool,
                        confidence=effect.confidence,
                        evidence=tool_evidence(tool, effect),
                        related=(effect.site,),
                        node_text=f"{tool.name}:idempotent:{decl.source}",
                    )
            yield from self._disagreements(tool)

    def _disagreements(self, tool: object) -> Iterator[Finding]:
        from agentguard.project import ToolFacts

        assert isinstance(tool, ToolFacts)
        declared = [d for d in tool.declarations if d.declares_anything]
        for first_index, first in enumerate(declared):
            for second in declared[first_index + 1 :]:
                if first.location.path == second.location.path:
                    continue
                if first.says_read_only != second.says_read_only or (
                    first.says_idempotent != second.says_idempotent
                ):
                    yield self.finding(
                        second.location,
                        f"Tool `{tool.name}` is declared differently in {first.location} "
                        f"({first.source}) and here ({second.source})",
                        tool=tool,
                        related=(first.location,),
                        node_text=f"{tool.name}:disagree",
                    )
