"""Q5 judgement, shared by AG501 and AG502: code that re-runs unfinished calls, and side effects
that a framework's resume re-executes (LangGraph nodes restart from the top after ``interrupt()``).
The status words and the resume-name pattern are in ``rules/checklist.yaml`` (``resume``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.checks.judgement import Judgement
from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call, Function, ModuleFacts, StatusCheck
from agentguard.knowledge.checklist import Knowledge
from agentguard.project.counted_writes import counts_as_write
from agentguard.project.ledger_writes import dispatch_call, project_target

if TYPE_CHECKING:
    from agentguard.project.project_model import ProjectModel
    from agentguard.project.tool_facts import Effect


@dataclass
class ResumeReplay:
    function: Function
    facts: ModuleFacts
    check: StatusCheck
    rerun: Call
    why: str


_SQL_STATUS = re.compile(
    r"(?is)\b(?P<subject>\w*(status|state))\s*(?P<op>!=|<>|=|not\s+in|in)\s*"
    r"(?P<values>\((\s*'[^']*'\s*,?)+\)|'[^']*')"
)
_SQL_OPS = {"!=": "ne", "<>": "ne", "=": "eq", "in": "in", "not in": "not_in"}


_SELECT = re.compile(r"(?i)\bselect\b")


def _sql_status_checks(facts: ModuleFacts) -> list[StatusCheck]:
    """``SELECT ... WHERE status != 'succeeded'`` in a query string."""
    checks: list[StatusCheck] = []
    for call in facts.calls:
        sql = call.args[0].string() if call.args else None
        if not sql or not _SELECT.search(sql):
            continue
        for match in _SQL_STATUS.finditer(sql):
            op = _SQL_OPS[" ".join(match.group("op").lower().split())]
            values = [v.lower() for v in re.findall(r"'([^']*)'", match.group("values"))]
            checks.append(StatusCheck(call.function, match.group("subject"), op, values, call.span))
    return checks


def _replays_unfinished(know: Knowledge, check: StatusCheck) -> str | None:
    values = set(check.values)
    if check.op in {"ne", "not_in"} and values & know.done_statuses:
        return f"re-runs every call whose status is not {sorted(values & know.done_statuses)[0]!r}"
    if check.op in {"eq", "in"} and values & know.in_flight_statuses:
        return f"re-runs calls in status {sorted(values & know.in_flight_statuses)[0]!r}"
    return None


def _resume_replays(project: ProjectModel) -> Iterable[ResumeReplay]:
    know = project.catalog.checklist
    index = project.ledger_index()
    executors = {e.function for e in index.executors}
    tool_functions = {q for t in project.tools for q in t.functions}
    result: list[ResumeReplay] = []
    for facts in project.modules.values():
        if facts.is_test:
            continue
        by_function: dict[str, list[StatusCheck]] = {}
        for check in [*facts.status_checks, *_sql_status_checks(facts)]:
            if check.function:
                by_function.setdefault(check.function, []).append(check)
        for qualname, checks in sorted(by_function.items()):
            fn = project.function(qualname)
            if fn is None:
                continue
            if any(set(c.values) & know.uncertain_statuses for c in checks):
                continue
            module_name = facts.module.rsplit(".", 1)[-1]
            if not (know.resume_name.search(fn.name) or know.resume_name.search(module_name)):
                continue
            replaying = [(c, why) for c in checks if (why := _replays_unfinished(know, c))]
            if not replaying:
                continue
            check, why = replaying[0]
            rerun = _rerun_call(project, fn, facts, executors, tool_functions, check)
            if rerun is None:
                continue
            result.append(ResumeReplay(fn, facts, check, rerun, why))
    return result


def _rerun_call(
    project: ProjectModel,
    fn: Function,
    facts: ModuleFacts,
    executors: set[str],
    tool_functions: set[str],
    check: StatusCheck,
) -> Call | None:
    for call in project.calls_in(fn.qualname):
        if call.span.line < check.span.line:
            continue
        target = project_target(project, call, fn, facts)
        if target and (target in executors or target in tool_functions):
            return call
        if dispatch_call(project, call, fn, facts):
            return call
        target_name = target.rsplit(".", 1)[-1] if target else ""
        if target and any(
            counts_as_write(e, target_name, project.catalog) for e in project.effects_of(target)
        ):
            return call
    return None


@dataclass
class InterruptReplay:
    function: Function
    facts: ModuleFacts
    interrupt: Call
    effect: Effect
    site: Location


def _interrupt_replays(project: ProjectModel) -> Iterable[InterruptReplay]:
    know = project.catalog.checklist
    interrupts = project.callees_matching(know.interrupt, resolved=False)
    result: list[InterruptReplay] = []
    for qualname, (fn, facts) in project.sorted_functions():
        if facts.is_test:
            continue
        calls = project.calls_in(qualname)
        interrupt = next((c for c in calls if c.callee in interrupts), None)
        if interrupt is None:
            continue
        for effect in project.effects_in_orders(qualname, (0, interrupt.order)):
            if not counts_as_write(effect, fn.name, project.catalog):
                continue
            first = effect.chain[0].location if effect.chain else None
            if first is None:
                continue
            call = next((c for c in calls if c.span == first.span), None)
            if call is not None and _is_task(project, call, fn, facts):
                continue  # a @task result is read back from the checkpoint on resume
            result.append(InterruptReplay(fn, facts, interrupt, effect, first))
            break
    return result


def _is_task(project: ProjectModel, call: Call, fn: Function, facts: ModuleFacts) -> bool:
    target = project_target(project, call, fn, facts)
    task = project.function(target) if target else None
    return task is not None and any(
        project.catalog.checklist.task_decorators(d.qualname) for d in task.decorators
    )


class ResumeReplays(Judgement[tuple[ResumeReplay, ...]]):
    produces = "resume paths that run a tool's writes again"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[ResumeReplay, ...]:
        return tuple(_resume_replays(project))


class InterruptReplays(Judgement[tuple[InterruptReplay, ...]]):
    produces = "side effects made before an interrupt that a resume replays"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[InterruptReplay, ...]:
        return tuple(_interrupt_replays(project))
