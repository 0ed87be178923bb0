"""Which effects count as a write for the checklist rules (Q3-Q8), judged once for all of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.project.read_posts import read_by_name

if TYPE_CHECKING:
    from agentguard.knowledge.catalog import Catalog
    from agentguard.project.tool_facts import Effect, ToolFacts


def counts_as_write(
    effect: Effect, tool_name: str, catalog: Catalog, description: str = ""
) -> bool:
    """A non-idempotent side effect worth a checklist finding: not an unresolved call, not a
    low-confidence guess. Whether a POST reads is the effect layer's judgement (read_posts.py);
    a POST it leaves to names is judged by ``tool_name`` against the project's ``catalog``
    (built-in plus the user's words), which every caller passes."""
    if not effect.non_idempotent or effect.kind == "unknown":
        return False
    if read_by_name(catalog, effect, tool_name, description):
        return False
    if effect.kind != "network_write":
        return effect.confidence.rank >= 1 or not effect.heuristic
    return not (effect.heuristic and effect.confidence.rank < 1)


def counted_writes(tool: ToolFacts, catalog: Catalog) -> list[Effect]:
    """The tool's effects that count as writes, judged by its own name; where the tool
    declares its idempotency in so many words, the declaration beats a verb's guess (a
    write judged only by its verb counts as the declaration says)."""
    decl = tool.declaration
    counted = []
    for effect in tool.effects:
        guessed = effect.heuristic and effect.writes
        if guessed and decl is not None and decl.says_idempotent:
            continue
        if guessed and decl is not None and decl.says_additive_non_idempotent:
            if effect.idempotent is True and effect.kind not in {"unknown", "destructive"}:
                counted.append(effect)
                continue
        if counts_as_write(effect, tool.name, catalog):
            counted.append(effect)
    return counted
