"""Q8 judgement, shared by AG801 and the report: which tests count as a replay-safety eval,
and whether a tool needs one and has one.

Test modules are scanned as facts (``ModuleFacts.is_test``); a test covers a tool when one test
function (with its nested helpers) names the tool, injects a timeout (agentguard's
``runtime.testing`` helpers, ``side_effect=requests.Timeout``, a fake raising a timeout,
``respx``/``responses`` timeouts) and asserts a call count or the ledger state.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentguard.checks.judgement import Judgement
from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.project.counted_writes import counted_writes

if TYPE_CHECKING:
    from agentguard.project.project_model import ProjectModel
    from agentguard.project.tool_facts import Effect, ToolFacts


_ONCE = re.compile(r"(==|<=|<)\s*[012]\b")


@dataclass
class ReplayTest:
    function: Function
    location: Location
    names: set[str] = field(default_factory=set)  # identifiers and strings the test mentions
    injects_timeout: bool = False
    asserts_once: bool = False
    uses_runtime_testing: bool = False

    @property
    def is_replay_safety_test(self) -> bool:
        return self.uses_runtime_testing or (self.injects_timeout and self.asserts_once)


def _values(values: Iterable[Value]) -> Iterable[Value]:
    stack = list(values)
    while stack:
        value = stack.pop()
        yield value
        stack += value.elements + value.call_args + list(value.call_kwargs.values())
        stack += list(value.items.values())


def _raises_timeout(project: ProjectModel, fn: Function) -> bool:
    know = project.catalog.checklist
    return any(know.is_timeout(v.qualname or v.text.split("(")[0]) for v in fn.raises)


def _test_functions(facts: ModuleFacts) -> list[Function]:
    return [fn for fn in facts.functions.values() if fn.is_test or fn.name.startswith("test")]


def _replay_tests(project: ProjectModel) -> Iterable[ReplayTest]:
    """The project's replay-safety tests, in module and definition order."""
    know = project.catalog.checklist
    result: list[ReplayTest] = []
    for facts in project.modules.values():
        if not facts.is_test:
            continue
        runtime_imports = {
            local for local, qual in facts.imports.items() if know.fault_injection(qual)
        }
        for fn in _test_functions(facts):
            test = ReplayTest(fn, Location(facts.path, fn.name_span))
            scope = [fn.qualname, *fn.nested]
            calls: list[Call] = [c for q in scope for c in project.calls_in(q)]
            if set(fn.params) & know.fault_fixtures:
                test.uses_runtime_testing = True
            for call in calls:
                callee = call.callee.replace("()", "")
                if (
                    know.fault_injection(callee)
                    or callee.split(".")[0] in runtime_imports
                    or call.method in know.fault_methods
                ):
                    test.uses_runtime_testing = True
                if know.count_calls(callee):
                    test.asserts_once = True
            if not test.asserts_once:
                test.asserts_once = any(_asserts_once(project, value) for value in fn.asserts)
            # The values of every call are walked only for a test the timeout can decide.
            if test.asserts_once or test.uses_runtime_testing:
                test.injects_timeout = _injects_timeout(project, calls, scope)
            if not test.is_replay_safety_test:
                continue  # only a replay-safety test covers a tool: what others name is never read
            _collect_names(test, calls)
            result.append(test)
    return result


def _asserts_once(project: ProjectModel, value: Value) -> bool:
    know = project.catalog.checklist
    if set(value.attrs) & know.count_attrs or know.ledger_words.search(value.text):
        return True
    if any(know.count_calls(c) for c in value.calls):
        return True
    return "len" in value.calls and bool(_ONCE.search(value.text))  # assert len(sent) == 1


def _injects_timeout(project: ProjectModel, calls: Sequence[Call], scope: Sequence[str]) -> bool:
    know = project.catalog.checklist
    for call in calls:
        for value in _values([*call.args, *call.kwargs.values()]):
            qual = (value.qualname or "").replace("()", "")
            if qual and know.is_timeout(qual):
                return True
            if any(know.is_timeout(c) for c in value.calls):
                return True
            helper = project.function(qual) if qual else None
            if helper is not None and _raises_timeout(project, helper):
                return True
    for qualname in scope:
        inner = project.function(qualname)
        if inner is not None and _raises_timeout(project, inner):
            return True
    return False


def _collect_names(test: ReplayTest, calls: Sequence[Call]) -> None:
    for call in calls:
        # Interned: the parts recur in every test, and the tests are kept for the run.
        test.names.update(map(sys.intern, call.callee.replace("()", "").split(".")))
        for value in _values([*call.args, *call.kwargs.values()]):
            if value.string():
                test.names.add(value.string() or "")
            test.names.update(value.names)
    for value in test.function.asserts:
        test.names.update(value.names)


def covering_test(tests: Sequence[ReplayTest], tool: ToolFacts) -> ReplayTest | None:
    names = {tool.name, *(q.rsplit(".", 1)[-1] for q in tool.functions)}
    if tool.form == "base_class":
        names.add(tool.symbol.rsplit(".", 1)[-1])
    for test in tests:
        if test.is_replay_safety_test and names & test.names:
            return test
    return None


@dataclass(frozen=True)
class EvalVerdict:
    """AG801's answer for one tool. ``exempt`` says why no eval is asked for ("" when one
    is); ``writes`` are the counted writes that ask for it; ``test`` is the covering test."""

    exempt: str
    writes: tuple[Effect, ...] = ()
    test: ReplayTest | None = None

    @property
    def missing(self) -> bool:
        return not self.exempt and self.test is None


def eval_verdict(
    project: ProjectModel, tool: ToolFacts, tests: Sequence[ReplayTest]
) -> EvalVerdict:
    if tool.schema_only:
        return EvalVerdict("schema only")
    if tool.guarded is not None:
        return EvalVerdict("runtime")  # the runtime's own fault-injection suite covers it
    declared = tool.declaration
    if declared is not None and declared.says_idempotent:
        return EvalVerdict("declared idempotent")
    writes = tuple(counted_writes(tool, project.catalog))
    if not writes:
        return EvalVerdict("no counted write")
    return EvalVerdict("", writes, covering_test(tests, tool))


class ReplayTests(Judgement[tuple[ReplayTest, ...]]):
    produces = "the project's replay-safety tests with what they name"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[ReplayTest, ...]:
        return tuple(_replay_tests(project))
