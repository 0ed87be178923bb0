"""An ORM's unit of work: rows changed in memory, written by the session's commit.

With SQLAlchemy (and the ORMs built like it) a function changes a row it loaded by setting
its attributes or by appending to one of its relationships, then calls ``session.commit()``::

    memory = db.query(Memory).filter(Memory.id == memory_id).first()
    memory.text = text              # no call: nothing a sink could judge
    db.commit()                     # the UPDATE is sent here

The catalogue judges ``session.add`` and ``session.delete``, and calls a commit no effect
(it only makes durable a write judged where it was made). When the function changed an
object that is not its own (``self``) before committing, the commit is where that change is
written too: a write judged as the session's ``add`` is (the application's database, local),
idempotent when it only sets attributes, not when it changes a relationship. A session is
known by its type: one whose ``add`` the catalogue knows as a write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import Call, Function, ModuleFacts
from agentguard.project.tool_facts import SELF_NAMES, Effect

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def committed_changes(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """The write a session's ``commit()`` sends for rows ``fn`` changed in memory before
    it, or None when ``call`` is no such commit or nothing was changed so."""
    if call.method != "commit" or not callee.endswith(".commit"):
        return None
    session_add = project.catalog.sinks(f"{callee.removesuffix('.commit')}.add")
    if session_add is None or session_add.effect != "write":
        return None
    changed = _attributes_set(project, fn, facts, call)
    appended = _relationships_changed(project, fn, call)
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


def _owned_elsewhere(root: str) -> bool:
    """Whether ``root`` names an object the function was handed or loaded (a parameter or
    a local), not its own instance or class."""
    return bool(root) and root not in SELF_NAMES


def _attributes_set(
    project: ProjectIndex, fn: Function, facts: ModuleFacts, commit: Call
) -> list[str]:
    """``memory.text = text`` and ``setattr(memory, field, value)`` before the commit, on an
    object the function does not own."""
    found = [
        assignment.target
        for assignment in facts.attribute_sets
        if assignment.function == fn.qualname
        and assignment.span.line < commit.span.line
        and _owned_elsewhere(assignment.target.split(".", 1)[0])
    ]
    found += [
        call.text
        for call in project.calls_in(fn.qualname)
        if call.order < commit.order
        and call.callee == "setattr"
        and call.args
        and _owned_elsewhere(call.args[0].text.split(".", 1)[0])
    ]
    return found


def _relationships_changed(project: ProjectIndex, fn: Function, commit: Call) -> list[str]:
    """``user.events.append(event)`` before the commit: a collection an object the function
    does not own holds, changed in place by one of the catalogue's container methods."""
    return [
        call.text
        for call in project.calls_in(fn.qualname)
        if call.order < commit.order
        and call.method in project.catalog.container_methods
        and _held_collection(call)
    ]


def _held_collection(call: Call) -> bool:
    """Whether ``call`` is made on a collection an object holds (``user.teams.append``),
    that object not the function's own: an attribute of a name, as written."""
    written = call.text.split("(", 1)[0].split(".")
    return len(written) >= 3 and _owned_elsewhere(written[0])
