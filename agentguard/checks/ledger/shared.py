"""Q3/Q7 judgement, shared by AG301, AG302 and AG701: whether a write tool's first counted
write has a record written before it, and which record writes trace tool calls. The facts
it reads (record writes, recording functions, executors) come from the ledger pass,
``project.ledger_index()``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agentguard.checks.judgement import Judgement
from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call
from agentguard.project.counted_writes import counts_as_write
from agentguard.project.ledger_writes import Executor, LedgerIndex, LedgerWrite, project_target
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import ToolFacts


def first_call_order(project: ProjectModel, qualname: str, location: Location) -> int | None:
    for call in project.calls_in(qualname):
        if call.span == location.span:
            return call.order
    return None


def is_ledger_site(index: LedgerIndex, location: Location) -> bool:
    return any(w.location == location for w in index.writes)


def tool_records_via_decorator(project: ProjectModel, tool: ToolFacts) -> bool:
    """A tool decorated with a ledger function (``@audit.recorded``) records every call."""
    index = project.ledger_index()
    for qualname in tool.functions:
        fn = project.function(qualname)
        facts = project.module_of(qualname)
        if fn is None or facts is None:
            continue
        for dec in fn.decorators:
            if project.catalog.ledger_functions(
                dec.qualname
            ) or project.catalog.checklist.ledger_functions(dec.qualname):
                return True
            target = project.project_function(dec.qualname, facts)
            decorator = project.function(target) if target else None
            if decorator is not None and any(
                q in index.recording for q in (decorator.qualname, *decorator.nested)
            ):
                return True
    return False


@dataclass
class ToolLedgerVerdict:
    """Whether a write tool's first risky side effect has a record written before it."""

    tool: ToolFacts
    effect_index: int
    call_site: Location  # the call in the tool body that leads to the side effect
    status: str  # before | after | none
    records_after: list[tuple[Call, str]] = field(default_factory=list)


def _recorded_by_executor(project: ProjectModel) -> Executor | None:
    index = project.ledger_index()
    for executor in index.executors:
        before = [
            c
            for c, _ in index.record_calls(project, executor.function)
            if c.order < executor.dispatch_order
        ]
        if before:
            return executor
    return None


def _tool_ledger_verdicts(project: ProjectModel) -> Iterable[ToolLedgerVerdict]:
    index = project.ledger_index()
    covering_executor = RecordingExecutor.of(project)
    verdicts: list[ToolLedgerVerdict] = []
    for tool in project.tools:
        if tool.guarded is not None or tool.schema_only:
            continue
        if covering_executor is not None or tool_records_via_decorator(project, tool):
            continue
        for position, effect in enumerate(tool.effects):
            if not counts_as_write(effect, tool.name, project.catalog):
                continue
            if is_ledger_site(index, effect.site):
                continue
            first = effect.chain[0].location if effect.chain else None
            if first is None:
                continue
            owner = next(
                (q for q in tool.functions if first_call_order(project, q, first) is not None),
                None,
            )
            if owner is None:
                continue
            order = first_call_order(project, owner, first) or 0
            records = index.record_calls(project, owner)
            # A helper that both records and writes (``client.create`` journals, then POSTs)
            # is taken to record first.
            before = [r for r in records if r[0].order <= order]
            after = [r for r in records if r[0].order > order]
            status = "before" if before else "after" if after else "none"
            verdicts.append(ToolLedgerVerdict(tool, position, first, status, after))
            break
    return verdicts


def _tool_call_records(project: ProjectModel) -> Iterable[LedgerWrite]:
    index = project.ledger_index()
    roots = [q for t in project.tools for q in t.functions]
    roots += [e.function for e in index.executors]
    seen: set[str] = set()
    queue = list(roots)
    while queue:
        qualname = queue.pop()
        if qualname in seen:
            continue
        seen.add(qualname)
        entry = project.functions.get(qualname)
        if entry is None:
            continue
        fn, facts = entry
        for call in project.calls_in(qualname):
            target = project_target(project, call, fn, facts)
            if target and target in index.recording:
                queue.append(target)
    return [w for w in index.writes if w.function in seen and not w.inner]


class RecordingExecutor(Judgement[Executor | None]):
    produces = "an executor that writes a record before it dispatches (it covers every tool)"

    @classmethod
    def judge(cls, project: ProjectModel) -> Executor | None:
        return _recorded_by_executor(project)


class ToolLedgerVerdicts(Judgement[tuple[ToolLedgerVerdict, ...]]):
    needs = (*Judgement.needs, RecordingExecutor)
    produces = "for each write tool, whether a record is written before, after or not at all"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[ToolLedgerVerdict, ...]:
        return tuple(_tool_ledger_verdicts(project))


class ToolCallRecords(Judgement[tuple[LedgerWrite, ...]]):
    produces = "the record writes that tools and executors reach"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[LedgerWrite, ...]:
        return tuple(_tool_call_records(project))
