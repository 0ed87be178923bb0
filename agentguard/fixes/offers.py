"""Which fix a finding has, and how safe it is, from facts alone (no LibCST).

A fix's applicability and description depend on the finding and the project's facts (an MCP
tool gets safe hints, any other tool the unsafe ``@guarded`` decorator), never on its edits.
Computing edits parses the file with LibCST, which costs far more than the whole ``ast``
scan, so text output asks this module ("fix available (unsafe)") and only the fixer and
the formats that print edits (JSON, SARIF) build them (:func:`agentguard.fixes.attach_fixes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Applicability, Finding

if TYPE_CHECKING:
    from agentguard.model import Effect, ToolFacts
    from agentguard.project import ProjectModel

ADDITIVE_KINDS = {"network_write", "payment", "message"}
KEY_FROM_RUNTIME = "current_call().idempotency_key"


@dataclass(frozen=True)
class FixOffer:
    applicability: Applicability
    description: str


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


def finding_tool(project: ProjectModel, finding: Finding) -> ToolFacts | None:
    """The code-defined tool a finding is about, in the finding's file."""
    for tool in project.tools:
        if tool.name == finding.tool and tool.path == finding.path and not tool.schema_only:
            if finding.symbol in (None, tool.symbol):
                return tool
    return None


Offer = Callable[[Finding, "ProjectModel"], "FixOffer | None"]
OFFERS: dict[str, Offer] = {}


def offer(code: str) -> Callable[[Offer], Offer]:
    def register(function: Offer) -> Offer:
        OFFERS[code] = function
        return function

    return register


def fix_offer(finding: Finding, project: ProjectModel) -> FixOffer | None:
    """The fix this finding would get, without building its edits (None: no fix)."""
    find = OFFERS.get(finding.code)
    return find(finding, project) if find is not None else None


def is_class_based(tool: ToolFacts) -> bool:
    """A tool whose entry point is a method of a class (``BaseTool._run``), not a function."""
    return not tool.functions or tool.symbol != tool.functions[0]


@offer("AG101")
def _declare_semantics(finding: Finding, project: ProjectModel) -> FixOffer | None:
    tool = finding_tool(project, finding)
    if tool is None or is_class_based(tool):
        return None
    semantics = infer_semantics(tool.writes())
    if tool.framework == "mcp":
        return FixOffer(Applicability.SAFE, "Declare the tool's MCP annotations")
    return FixOffer(
        Applicability.UNSAFE,
        f"Wrap the tool in @guarded(risk={semantics.risk!r}, idempotency="
        f"{semantics.idempotency!r}, replay={semantics.replay!r})",
    )


@offer("AG102")
def _correct_hint(finding: Finding, project: ProjectModel) -> FixOffer | None:
    parts = finding.node_text.split(":")
    kind = parts[1] if len(parts) >= 3 else ""
    if kind not in ("read-only", "idempotent") or finding_tool(project, finding) is None:
        return None
    what = "as writing" if kind == "read-only" else "as not idempotent"
    return FixOffer(Applicability.UNSAFE, f"Declare the tool {what}, as the code behaves")


@offer("AG202")
def _key_from_runtime_param(finding: Finding, project: ProjectModel) -> FixOffer | None:
    param = finding.node_text.rsplit(":", 1)[-1]
    if not param.isidentifier() or finding_tool(project, finding) is None:
        return None
    return FixOffer(
        Applicability.UNSAFE,
        f"Drop the `{param}` parameter and take the key from `{KEY_FROM_RUNTIME}`",
    )


@offer("AG203")
def _key_from_runtime_expression(finding: Finding, project: ProjectModel) -> FixOffer | None:
    if finding.node_text.endswith(":guarded-key"):
        return None
    return FixOffer(
        Applicability.UNSAFE,
        f"Take the key from `{KEY_FROM_RUNTIME}` instead of a fresh value per call",
    )


@offer("AG904")
def _idempotent_methods_only(finding: Finding, project: ProjectModel) -> FixOffer | None:
    return FixOffer(
        Applicability.SAFE, "Retry only idempotent methods after the request may have been sent"
    )


@offer("AG002")
def _remove_suppression(finding: Finding, project: ProjectModel) -> FixOffer | None:
    return FixOffer(Applicability.SAFE, "Remove the unused suppression comment")
