"""What the declaration rules' fixes share: the semantics a tool's effects say it should declare."""

from __future__ import annotations

from dataclasses import dataclass

from agentguard.project.tool_facts import Effect

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
