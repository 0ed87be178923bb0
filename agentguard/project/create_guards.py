"""Check-then-create: a create made only after looking for the same thing (by a natural key
the tool is given) finds it on a repeat instead of making it twice. Recorded as the
effect's key evidence (origin ``check_then_create``), so AG201 asks for no other key.

Two shapes, in the function making the create call (or a call on the way to it):

* the lookup's answer ends the function first: ``existing = client.find_label(name)``,
  ``if existing: return existing``, then ``client.create_label(name)``; or a loop over a
  listing returning the match (``for label in client.list_labels(board): if label["name"] ==
  name: return label``);
* the create sits in the ``if`` that asks: ``if not client.exists(name): client.create(name)``.

The lookup is a call with a read verb on a client (or a project function), and the check
(the test, the values it was built from, the listing a loop walks) reads every parameter
of the function that the create is given: the natural key. A check of anything else (a
dry-run flag, input validation, a count of other things) is no guard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Branch, Call, Function, ModuleFacts, Value
from agentguard.knowledge.words import words
from agentguard.project.sink_keys import local_value
from agentguard.project.tool_facts import SELF_NAMES, KeyEvidence

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

CHECK_THEN_CREATE = "check_then_create"


def check_then_create(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> KeyEvidence | None:
    """The guard a check-then-create puts on ``call`` in ``fn``, if any."""
    if not fn.branches:
        return None
    create_names = _names(project, list(call.args) + list(call.kwargs.values()), fn, facts, call)
    keys = create_names & set(fn.params) - SELF_NAMES
    if not keys:
        return None
    for branch in fn.branches:
        start, end = branch.body_order
        wraps = start <= call.order < end
        ends_first = branch.exits and end <= call.order and branch.span.line < call.span.line
        if not (wraps or ends_first):
            continue
        if ends_first and (not _on_path(fn, branch, call) or _other_case(facts, fn, branch, call)):
            continue  # an earlier arm of a dispatch (``elif name == ...``): another path
        if ends_first and _asks_absence(branch.test):
            # ``if original is None: return ...``: it stops when the lookup found nothing
            # (a prerequisite), so a repeat is not stopped by what the first run made
            continue
        lookup = _lookup(project, branch, fn, facts, keys)
        if lookup is not None:
            return KeyEvidence(
                branch.test,
                CHECK_THEN_CREATE,
                f"made only after looking it up (`{lookup}`)",
                None,
                Location(facts.path, branch.span),
            )
    return None


def _on_path(fn: Function, guard: Branch, call: Call) -> bool:
    """Whether the code reaching ``call`` can pass ``guard``: not when the guard is in the
    body of an ``if`` and the call in that ``if``'s ``else``/``elif`` (another arm of a
    dispatch on the tool's name, say)."""
    first = guard.body_order[0]
    for other in fn.branches:
        start, end = other.body_order
        holds_guard = (
            other.span.line < guard.span.line
            and guard.span.end_line <= other.span.end_line
            and start <= first < end
        )
        call_in_else = end <= call.order and other.span.line < call.span.line <= other.span.end_line
        if holds_guard and call_in_else:
            return False
    return True


def _other_case(facts: ModuleFacts, fn: Function, guard: Branch, call: Call) -> bool:
    """Whether ``guard`` and ``call`` lie in two different arms of a dispatch on a name
    (``case "list_items": ...`` and ``case "create_item": ...``): another tool's path."""

    def arm(line: int) -> Span | None:
        return next(
            (
                body
                for function, _, body in facts.branches
                if function == fn.qualname and body.line <= line <= body.end_line
            ),
            None,
        )

    guarded, called = arm(guard.span.line), arm(call.span.line)
    return guarded is not None and called is not None and guarded != called


def _asks_absence(test: Value) -> bool:
    """Whether an ``if`` test is true when what it looks at is missing: ``not x``, ``x is
    None``, ``x == None``, ``len(x) == 0``."""
    if test.op == "not":
        return True
    if test.op in {"is", "=="}:
        right = test.parts[1]
        return right.kind == "const" and right.const in (None, 0)
    return False


def _names(
    project: ProjectIndex, values: list[Value], fn: Function, facts: ModuleFacts, call: Call
) -> set[str]:
    """The names ``values`` read, with the names the locals among them were built from."""
    found: set[str] = set()
    for value in values:
        found.update(value.names)
        for name in value.names:
            if name in fn.params:
                continue
            bound = local_value(project, name, fn, facts, call.order)
            if bound is not None:
                found.update(bound.names)
    return found


def _lookup(
    project: ProjectIndex, branch: Branch, fn: Function, facts: ModuleFacts, keys: set[str]
) -> str | None:
    """The lookup call the branch's test rests on, when the check involves a natural key."""
    values = [branch.test]
    seen: set[str] = set()
    pending = list(branch.test.names)
    while pending:
        name = pending.pop()
        if name in seen or name in fn.params:
            continue
        seen.add(name)
        bound = local_value(project, name, fn, facts, branch.body_order[0])
        if bound is None:
            bound = _loop_source(fn, branch, name)
        if bound is not None and len(seen) < 8:
            values.append(bound)
            pending.extend(bound.names)
    checked = {n for value in values for n in value.names}
    if not keys <= checked:
        return None  # the check leaves out part of what the create is given
    world = project.catalog.open_world
    for value in values:
        for called in value.calls:
            callee = called.replace("()", "")
            receiver, _, method = callee.rpartition(".")
            if world.verb_class(method) != "read" or method in world.no_effect:
                continue
            if (words(method, identifier=True) or [""])[0] in project.catalog.computing_verbs:
                continue  # ``parseCommaSeparated(to)``: computed, it sees no earlier run
            last = receiver.rsplit(".", 1)[-1]
            if (
                callee in project.functions
                or (last and project.catalog.client_receiver.search(last))
                or (last and world.client_roots.search(last))
            ):
                return callee
    return None


def _loop_source(fn: Function, branch: Branch, name: str) -> Value | None:
    """What a loop around the branch walks, when ``name`` is the loop's variable."""
    for loop in fn.loops:
        if name in loop.targets and loop.iterable is not None and _inside(branch, loop.span):
            return loop.iterable
    return None


def _inside(branch: Branch, span: Span) -> bool:
    return span.line <= branch.span.line <= span.end_line
