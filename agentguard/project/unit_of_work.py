"""An ORM's unit of work: rows changed in memory, written by the session's commit.

With SQLAlchemy (and the ORMs built like it) a function changes a row it loaded by setting
its attributes or by appending to one of its relationships, then calls ``session.commit()``::

    memory = db.query(Memory).filter(Memory.id == memory_id).first()
    memory.text = text              # no call: nothing a sink could judge
    db.commit()                     # the UPDATE is sent here

The catalogue judges ``session.add`` and ``session.delete``, and calls a commit no effect
(it only makes durable a write judged where it was made). When the function changed a row
before committing (an object it was handed, or loaded through the session), the commit is
where that change is written too: a write judged as the session's ``add`` is (the
application's database, local), idempotent when it only sets attributes, not when it changes a relationship. A session is
known by its type: one whose ``add`` the catalogue knows as a write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import Call, Chain, Function, ModuleFacts, Value
from agentguard.project.tool_facts import SELF_NAMES, Effect

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def committed_changes(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """The write a session's ``commit()`` sends for rows ``fn`` changed in memory before
    it, or None when ``call`` is no such commit or nothing was changed so."""
    window = _written_window(call, callee, fn)
    if window is None:
        return None
    session_add = project.catalog.sinks(f"{callee.rpartition('.')[0]}.add")
    if session_add is None or session_add.effect != "write":
        return None
    session = call.chain.receiver() if call.chain is not None else None
    if session is None:
        return None
    rows = _rows(project, fn, facts, session)
    changed = _attributes_set(project, fn, facts, window, rows)
    appended = _relationships_changed(project, fn, window, rows)
    if not changed and not appended:
        return None
    shown = (changed or appended)[0]
    return Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind="write",
        idempotent=not appended,
        remote=session_add.remote if session_add.remote is not None else False,
        detail=f"commits the change of a loaded row (`{shown}`)",
        confidence=Confidence.MEDIUM,
    )


@dataclass(frozen=True)
class _Window:
    """The statements whose changes a commit writes: lines and call orders, both ends in."""

    first_line: int
    last_line: int
    first_order: int
    last_order: int

    def holds(self, line: int) -> bool:
        return self.first_line <= line <= self.last_line

    def orders(self, order: int) -> bool:
        return self.first_order <= order <= self.last_order


def _written_window(call: Call, callee: str, fn: Function) -> _Window | None:
    """Where the changes ``call`` commits are made: before ``session.commit()``, or inside
    the block of ``with session.begin():``, which commits when the block ends."""
    if call.method == "commit" and callee.endswith(".commit"):
        return _Window(fn.span.line, call.span.line - 1, 0, call.order - 1)
    if call.method != "begin" or not callee.endswith(".begin"):
        return None
    for block in fn.withs:
        if any(item.encloses(call.span) for item in block.item_spans):
            first, end = block.body_order
            return _Window(call.span.line, block.span.end_line, first, end - 1)
    return None


def _rows(project: ProjectIndex, fn: Function, facts: ModuleFacts, session: Chain) -> set[str]:
    """The names that may hold a row the session tracks: the function's parameters (a row
    handed in) and the locals bound from a call on the session (``db.get(Note, i)``,
    ``db.query(Note).first()``, ``for note in db.query(Note)``), or on such a local
    (``result = await db.execute(q)`` then ``result.scalar_one()``). A session ``self``
    holds (``self.db``) is a repository's: a local bound from a call of its own methods
    (``task = await self.get_by_id(task_id)``) is loaded through it too. Not ``self``, nor
    a module or global the function only uses (``sys.path``)."""
    bound = [
        (assignment.target, assignment.value)
        for assignment in project.local_assignments(facts, fn.qualname)
        if assignment.value.kind == "call"
    ]
    bound += [
        (target, loop.iterable)
        for loop in fn.loops
        if loop.iterable is not None
        for target in loop.targets
    ]
    rows = {param for param in fn.params if param not in SELF_NAMES and param != session.root}
    sources = [session]
    if session.root in SELF_NAMES and len(session.steps) == 1:
        sources.append(Chain(session.root))
    while sources:
        source = sources.pop()
        for target, value in bound:
            if target not in rows and _called_on(value, source):
                rows.add(target)
                sources.append(Chain(target))
    return rows


def _called_on(value: Value, source: Chain) -> bool:
    """Whether ``value`` calls a method of ``source`` (``db.query(Note).all()`` of ``db``)."""
    chain = value.chain
    if chain is not None and not chain.root and chain.start is not None and not source.steps:
        # ``(await session.scalars(q)).one()``: a call on what a call of the session answered
        return any(called.startswith(f"{source.root}.") for called in chain.start.calls)
    return (
        chain is not None
        and chain.root == source.root
        and len(chain.steps) > len(source.steps)
        and chain.steps[: len(source.steps)] == source.steps
        and any(kind == "call" for kind, _ in chain.steps[len(source.steps) :])
    )


def _attributes_set(
    project: ProjectIndex, fn: Function, facts: ModuleFacts, window: _Window, rows: set[str]
) -> list[str]:
    """``memory.text = text`` and ``setattr(memory, field, value)`` before the commit, on a
    row the session tracks."""
    found = [
        assignment.target
        for assignment in facts.attribute_sets
        if assignment.function == fn.qualname
        and window.holds(assignment.span.line)
        and assignment.target.split(".", 1)[0] in rows
    ]
    found += [
        call.text
        for call in project.calls_in(fn.qualname)
        if window.orders(call.order)
        and call.callee == "setattr"
        and call.args
        and call.args[0].chain is not None
        and call.args[0].chain.is_name
        and call.args[0].chain.root in rows
    ]
    return found


def _relationships_changed(
    project: ProjectIndex, fn: Function, window: _Window, rows: set[str]
) -> list[str]:
    """``user.events.append(event)`` before the commit: a collection a row the session
    tracks holds, changed in place by one of the catalogue's container methods."""
    return [
        call.text
        for call in project.calls_in(fn.qualname)
        if window.orders(call.order)
        and call.method in project.catalog.container_methods
        and _held_collection(call, rows)
    ]


def _held_collection(call: Call, rows: set[str]) -> bool:
    """Whether ``call`` is made on a collection a row holds (``user.teams.append``): an
    attribute of one of ``rows``."""
    if call.chain is None or call.chain.root not in rows:
        return False
    receiver = call.chain.receiver()
    return receiver is not None and bool(receiver.steps) and receiver.steps[0][0] == "attr"
