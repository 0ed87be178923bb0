"""Small shared helpers for rules: evidence chains and effect descriptions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from agentguard.diagnostics import Confidence, EvidenceStep, Finding, Location, StepKind
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect, KeyEvidence, ToolFacts


def tool_evidence(tool: ToolFacts, effect: Effect) -> tuple[EvidenceStep, ...]:
    head = EvidenceStep(StepKind.TOOL, tool.anchor, subject=tool.name, detail=tool.framework)
    return (head, *effect.chain)


def sink_sharing(project: ProjectModel) -> Counter[tuple[str, int, int]]:
    """How many tools reach each sink call (by path, line, column)."""
    counts: Counter[tuple[str, int, int]] = Counter()
    for tool in project.tools:
        counts.update({_site_key(effect.site) for effect in tool.effects})
    return counts


def _site_key(site: Location) -> tuple[str, int, int]:
    return (site.path, site.span.line, site.span.column)


def finding_site(effect: Effect, shared: Counter[tuple[str, int, int]]) -> Location:
    """Where a tool's finding about ``effect`` belongs: at the sink call when only this tool
    reaches it, else at the tool's own call that leads there (a sink in a helper shared by
    several tools is no one tool's code; the sink stays in the evidence)."""
    first = effect.chain[0].location if effect.chain else None
    if shared[_site_key(effect.site)] > 1 and first is not None:
        return first
    return effect.site


def strongest_confidence(effects: list[Effect]) -> Confidence:
    """The confidence of a judgement resting on several effects: the strongest one's."""
    if not effects:
        return Confidence.LOW
    return max((e.confidence for e in effects), key=lambda c: c.rank)


EFFECT_WORDS = {
    "network_write": "a remote write",
    "payment": "a payment",
    "message": "a message send",
    "write": "a write",
    "destructive": "a destructive call",
    "exec": "a process execution",
    "unknown": "an unresolved call",
}


def effect_words(effect: Effect) -> str:
    return EFFECT_WORDS.get(effect.kind, effect.kind)


def keys_of_origin(
    project: ProjectModel, origin: str
) -> Iterator[tuple[ToolFacts, Effect, KeyEvidence]]:
    """Every idempotency key reaching a tool's sink whose origin is ``origin``
    (param, fresh, args_hash...): what the key rules judge."""
    for tool in project.tools:
        for effect in tool.effects:
            if effect.key is not None and effect.key.origin == origin:
                yield tool, effect, effect.key


def finding_tool(project: ProjectModel, finding: Finding) -> ToolFacts | None:
    """The code-defined tool a finding is about, in the finding's file (what fixes edit)."""
    for tool in project.tools:
        if tool.name == finding.tool and tool.path == finding.path and not tool.schema_only:
            if finding.symbol in (None, tool.symbol):
                return tool
    return None
