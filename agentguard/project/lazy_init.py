"""Lazy initialisation: a call made only while an attribute of the object is unset, to set
it (``if self.session is None: return await self._initialize_session()``, where
``_initialize_session`` assigns ``self.session``), builds the object's resource once.

What that call reaches (launching a browser, opening a connection, loading cookies) is the
object's set-up, made by whichever call comes first: a retry of a tool finds the attribute
set and does not repeat it. Its effects are not the effects of the functions that reach the
getter, so effect inference does not follow such a call (``effects.EffectSummaries``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def _unset_attribute(test: Value) -> str | None:
    """``self.x`` when ``test`` is ``self.x is None`` or ``not self.x``."""
    if test.op == "is" and len(test.parts) == 2:
        left, right = test.parts
        if right.kind == "const" and right.const is None:
            subject = left
        else:
            return None
    elif test.op == "not" and test.parts:
        subject = test.parts[0]
    else:
        return None
    text = subject.text
    if subject.kind == "attr" and text.startswith("self.") and text.count(".") == 1:
        return text
    return None


def is_lazy_init(
    project: ProjectIndex, call: Call, target: str, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether ``call`` in ``fn`` (running the project function ``target``) sits in a
    branch taken only while ``self.x`` is unset, and that branch or ``target`` sets it."""
    for branch in fn.branches:
        start, end = branch.body_order
        if not start <= call.order < end:
            continue
        attribute = _unset_attribute(branch.test)
        if attribute is None:
            continue
        if any(
            start <= a.order < end for a in project.local_assignments(facts, fn.qualname, attribute)
        ):
            return True
        located = project.functions.get(target)
        if located is not None and project.local_assignments(located[1], target, attribute):
            return True
    return False
