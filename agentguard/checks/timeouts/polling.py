"""A polling deadline reported as a failure: after a write starts a job (an export, a
payment, a deployment), the code polls its status with a wait between polls, and when the
deadline passes it raises or answers "failed" or "timed out". The write went through, only
its result is late; the model told it failed starts it again.

A poll is a loop after the write (in the function making it or one called after it) that
calls a catalogue ``sleep_calls`` function. Its answer is a raise or return inside the loop
that speaks of the deadline (``deadline_pattern``), or the first one after the loop that
speaks of failure (``failure_pattern``), neither saying the outcome is unknown. A raise is
followed out like the error a timeout handler raises (an outer handler may still say
"outcome unknown"); a return counts only in the tool's own function, where it is the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentguard.checks.timeouts.chains import Frame, cleared
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.knowledge.checklist import Knowledge
from agentguard.project.project_model import ProjectModel


@dataclass
class Poll:
    depth: int  # the frame whose call made the write
    fn: Function  # the function that polls
    facts: ModuleFacts
    answer: Value  # what it raises or returns when the deadline passes
    raised: bool


def polling_deadline(project: ProjectModel, know: Knowledge, frames: list[Frame]) -> Poll | None:
    """The poll after the write of ``frames`` that reports its deadline as a failure."""
    for depth, frame in enumerate(frames):
        after = frame.call.order
        places: list[tuple[str, Call | None]] = [(frame.qualname, None)]
        places += [
            (target, call)
            for call, target in project.call_edges(frame.qualname)
            if call.order > after and target != frame.qualname
        ]
        for qualname, via in places:
            entry = project.functions.get(qualname)
            if entry is None:
                continue
            fn, facts = entry
            found = _poll_answer(project, know, qualname, fn, after if via is None else -1)
            if found is None:
                continue
            answer, raised = found
            if not raised and (depth or via is not None):
                continue  # a helper's return goes to its caller, not to the model
            if raised:
                outer = frames[:depth] if via is None else [*frames[:depth], _at(frame, via)]
                name = answer.qualname or answer.text.split("(", 1)[0]
                if outer and cleared(project, know, outer, len(outer) - 1, 0, name):
                    continue
            return Poll(depth, fn, facts, answer, raised)
    return None


def _at(frame: Frame, call: Call) -> Frame:
    return Frame(frame.qualname, frame.fn, frame.facts, call)


def _poll_answer(
    project: ProjectModel, know: Knowledge, qualname: str, fn: Function, after: int
) -> tuple[Value, bool] | None:
    calls = project.calls_in(qualname)
    for loop in fn.loops:
        inside = [c for c in calls if loop.loop_id in c.loop_ids]
        if not inside or any(c.order <= after for c in inside):
            continue  # the write is repeated by the loop, or comes after it
        if not any(c.callee in know.sleep_calls for c in inside):
            continue
        span = loop.span
        answers = [(v, True) for v in fn.raises] + [(v, False) for v in fn.returns]
        within = [
            (v, r)
            for v, r in answers
            if v.span is not None and span.line <= v.span.line <= span.end_line
        ]
        for value, raised in within:
            if know.deadline_words.search(value.text) and not _uncertain(know, value):
                return value, raised
        later = sorted(
            ((v, r) for v, r in answers if v.span is not None and v.span.line > span.end_line),
            key=lambda pair: (pair[0].span.line, pair[0].span.column) if pair[0].span else (0, 0),
        )
        if later:
            value, raised = later[0]
            if (raised or know.failure_words.search(value.text)) and not _uncertain(know, value):
                return value, raised
    return None


def _uncertain(know: Knowledge, value: Value) -> bool:
    return bool(
        know.uncertain_words.search(value.text)
        or know.uncertain_exception.search(value.qualname or value.text.split("(", 1)[0])
    )
