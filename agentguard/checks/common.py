"""Small shared helpers for rules: evidence chains and effect descriptions."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from agentguard.checks.judgement import Judgement
from agentguard.diagnostics import Confidence, EvidenceStep, Finding, StepKind
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect, KeyEvidence, ToolFacts


def tool_evidence(tool: ToolFacts, effect: Effect) -> tuple[EvidenceStep, ...]:
    head = EvidenceStep(StepKind.TOOL, tool.anchor, subject=tool.name, detail=tool.framework)
    return (head, *effect.chain)


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


def guess_words(effect: Effect) -> str:
    """``, a guess at medium confidence`` for an effect judged by a guess (a write verb, a
    name) or short of certain evidence; nothing for one a catalogue entry or the request
    itself shows."""
    if effect.heuristic or effect.confidence is not Confidence.HIGH:
        return f", a guess at {effect.confidence.value} confidence"
    return ""


def effect_phrase(effect: Effect) -> str:
    """``a remote write (`crm.add_lead` via `sync`, a guess at low confidence)``: what
    an effect is, where it is reached, and how sure the judgement is."""
    return f"{effect_words(effect)} ({effect.route()}{guess_words(effect)})"


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
    """The code-defined tool a finding is about, in the finding's file (what fixes edit).
    A rule that asks reads ``CodeTools``."""
    for tool in CodeTools.of(project).get((finding.tool, finding.path), ()):
        if finding.symbol in (None, tool.symbol):
            return tool
    return None


class CodeTools(Judgement[Mapping[tuple[str | None, str], tuple[ToolFacts, ...]]]):
    produces = "the code-defined tools by name and file, for the tool a finding is about"

    @classmethod
    def judge(cls, project: ProjectModel) -> Mapping[tuple[str | None, str], tuple[ToolFacts, ...]]:
        # Looked up once per finding (every fix offer asks), not searched for.
        found: dict[tuple[str | None, str], list[ToolFacts]] = {}
        for tool in project.tools:
            if not tool.schema_only:
                found.setdefault((tool.name, tool.path), []).append(tool)
        return {key: tuple(tools) for key, tools in found.items()}
