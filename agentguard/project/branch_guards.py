"""Effects a helper makes only on the branch its caller chooses with a literal.

``def _request(self, method, url)`` that runs ``requests.get`` under ``if method == "GET":``
and ``requests.delete`` under ``elif method == "DELETE":`` deletes only for the callers that
pass ``"DELETE"``: ``get_projects()`` calling ``_request("GET", ...)`` reads. Each effect
made inside such a branch carries its guard (the parameter and the literals the branch
accepts); a call passing a literal keeps the effect only when the literal is one of them,
a call passing its own parameter hands the choice to its callers, and any other argument
(a value nobody can read) keeps the effect, as the branch may run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Call, Function, Value
from agentguard.project.sink_keys import substitute
from agentguard.project.tool_facts import SELF_NAMES, Effect, Guard

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

# ``method.upper() == "POST"``: a parameter compared after a change of case
_CASE_FOLDS = frozenset({"upper", "lower", "casefold"})


def guard_at(fn: Function, order: int) -> Guard | None:
    """The guard of the innermost branch of ``fn`` holding the call at ``order`` whose test
    compares a parameter with string literals (``method == "POST"``, ``op in ("a", "b")``)."""
    found: Guard | None = None
    width = 0
    for branch in fn.branches:
        start, end = branch.body_order
        if not start <= order < end or (found is not None and end - start >= width):
            continue
        guard = _literal_test(branch.test, fn)
        if guard is not None:
            found, width = guard, end - start
    return found


def _literal_test(test: Value, fn: Function) -> Guard | None:
    if test.op not in {"==", "in"} or len(test.parts) != 2:
        return None
    left, right = test.parts
    param = _parameter(left, fn)
    if param is None and test.op == "==":
        left, right = right, left
        param = _parameter(left, fn)
    if param is None:
        return None
    if right.kind == "list":
        literals = [element.string() for element in right.elements]
    else:
        literals = [right.string()]
    if not literals or any(literal is None for literal in literals):
        return None
    return param, frozenset(literal.upper() for literal in literals if literal is not None)


def _parameter(value: Value, fn: Function) -> str | None:
    """The parameter of ``fn`` a test side is: ``method``, or ``method.upper()``."""
    name: str | None = None
    if value.kind == "name":
        name = value.text
    elif value.kind == "call" and value.chain is not None:
        steps = value.chain.steps
        if len(steps) == 2 and steps[0][0] == "attr" and steps[0][1] in _CASE_FOLDS:
            name = value.chain.root
    if name is None or name not in fn.params or name in SELF_NAMES:
        return None
    return name


def map_guard_through_call(
    project: ProjectIndex, effect: Effect, callee_fn: Function, call: Call, caller: Function
) -> Effect | None:
    """The helper's effect as this call sees it: None when the call passes a literal the
    guarding branch refuses."""
    if effect.guard is None:
        return effect
    param, literals = effect.guard
    substitution = substitute(project, param, callee_fn, call, caller, self_passed_on=True)
    if substitution.passed_on is not None:
        return replace(effect, guard=(substitution.passed_on, literals))
    argument = substitution.argument
    written = argument.string() if argument is not None else None
    if written is not None and written.upper() not in literals:
        return None  # this caller takes another branch
    return replace(effect, guard=None)


def guarded(effect: Effect, fn: Function, order: int) -> Effect:
    """``effect``, reached by the call at ``order`` in ``fn``, with the guard of the branch
    that call sits in when it has none of its own yet."""
    if effect.guard is not None:
        return effect
    guard = guard_at(fn, order)
    return effect if guard is None else replace(effect, guard=guard)


def dispatched_elsewhere(project: ProjectIndex, effect: Effect, handler: str, name: str) -> bool:
    """Whether ``effect``, reached from a dispatch ``handler`` branch for the tool ``name``,
    is made only on a branch for another name: its guard is the handler parameter the
    dispatch compares with tool names (``if name == "s3_create":`` in ``call_tool``), and
    ``name`` is not among the literals it accepts."""
    if effect.guard is None:
        return False
    param, literals = effect.guard
    fn = project.functions.get(handler)
    if fn is None or param not in fn[0].params or name.upper() in literals:
        return False
    return any(
        (guard := _literal_test(branch.test, fn[0])) is not None
        and guard[0] == param
        and name.upper() in guard[1]
        for branch in fn[0].branches
    )
