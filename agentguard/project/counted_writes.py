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


def counted_writes(
    tool: ToolFacts,
    catalog: Catalog,
    *,
    reads_description: bool = False,
    declaration_beats_name: bool = True,
) -> list[Effect]:
    """The tool's effects that count as writes, judged by its own name; where the tool
    declares its idempotency in so many words, the declaration beats a verb's guess (a
    write judged only by its verb counts as the declaration says).

    The two policies of the read-by-name judgement (``read_by_name``), explicit:
    ``reads_description`` adds the first sentence of the tool's description to the names
    read. Effect inference read the description the tool had when it ran; a schema or
    manifest may give the tool its description after that, so a rule that wants it read
    asks here. ``declaration_beats_name``: whether a write counted because the tool
    declares an additive write stands even where a name reads."""
    decl = tool.declaration
    description = tool.description if reads_description else ""
    counted = []
    for effect in tool.effects:
        guessed = effect.heuristic and effect.writes
        if guessed and decl is not None and decl.says_idempotent:
            continue
        if guessed and decl is not None and decl.says_additive_non_idempotent:
            if effect.idempotent is True and effect.kind not in {"unknown", "destructive"}:
                if declaration_beats_name or not read_by_name(
                    catalog, effect, tool.name, description
                ):
                    counted.append(effect)
                continue
        if counts_as_write(effect, tool.name, catalog, description):
            counted.append(effect)
    return counted
