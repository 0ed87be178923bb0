"""What the declaration rules' fixes share: the semantics a tool's effects say it should declare."""

from __future__ import annotations

from dataclasses import dataclass

from agentguard.checks.common import effect_phrase
from agentguard.diagnostics import Confidence
from agentguard.project.tool_facts import Effect, ToolFacts

ADDITIVE_KINDS = {"network_write", "payment", "message"}


@dataclass(frozen=True)
class Semantics:
    """What a tool's inferred effects say it should declare."""

    risk: str
    idempotency: str
    replay: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


def infer_semantics(effects: list[Effect]) -> Semantics:
    kinds = {e.kind for e in effects}
    idempotent = bool(effects) and all(e.idempotent is True for e in effects)
    destructive_risk = bool(kinds & {"destructive", "exec"})
    # MCP: destructiveHint=false means "only additive updates" (a POST create, a send).
    additive = all(e.kind in ADDITIVE_KINDS and e.idempotent is not True for e in effects)
    return Semantics(
        risk="destructive" if destructive_risk else "write",
        idempotency="idempotent" if idempotent else "non_idempotent",
        replay="auto" if idempotent and not destructive_risk else "never",
        read_only=not effects,
        destructive=not additive,
        idempotent=idempotent,
        open_world=any(
            e.remote or e.kind in ADDITIVE_KINDS or e.kind == "unknown" for e in effects
        ),
    )


def known_for_certain(tool: ToolFacts) -> bool:
    """Whether a declaration inferred from the tool's effects rests on certain evidence:
    every write known at high confidence from a catalogue entry (no verb's guess), and no
    call left unjudged that could do more."""
    writes = tool.writes()
    return (
        bool(writes)
        and all(e.confidence is Confidence.HIGH and not e.heuristic for e in writes)
        and not tool.unjudged()
    )


def inferred_from(tool: ToolFacts, limit: int = 3) -> str:
    """What a declaration fix inferred, from which calls: ``a remote write (`POST
    requests.post`)``, ``a remote write (`code.add_data`, a guess at medium confidence)``."""
    shown = []
    for effect in tool.writes()[:limit]:
        shown.append(effect_phrase(effect))
    more = len(tool.writes()) - limit
    text = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    unjudged = len(tool.unjudged())
    if unjudged:
        text += f"; {unjudged} call{'s' if unjudged > 1 else ''} it could not judge"
    return text
