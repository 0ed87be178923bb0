"""Tools built at run time: functions defined inside the function that registers them.

``def list_notes(): ...`` nested in a ``_register`` method and handed to
``app.add_tool(list_notes)``, or a closure made once per entry of a list of specs inside a
loop (``def action(**kw): ...; tools.append(FunctionTool.from_defaults(fn=action))``): the
name handed over is a local of the registering function, not a module-level name, so it is
looked up among the functions nested in that function and in the functions enclosing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Call, Value
from agentguard.project.discovery_subclasses import enclosing_class

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def local_function(project: ProjectIndex, value: Value | None, call: Call) -> str | None:
    """The function nested in ``call``'s function (or in one enclosing it) that the bare
    name ``value`` refers to, or the method a bound ``self.method`` names (a toolkit's
    ``get_tools`` handing ``StructuredTool.from_function(func=self.search)``)."""
    if value is None or call.function is None:
        return None
    if value.kind == "attr" and value.text.startswith("self.") and value.text.count(".") == 1:
        caller = project.function(call.function)
        owner = enclosing_class(project, caller) if caller is not None else None
        return project.find_method(owner, value.text[5:]) if owner else None
    if value.kind != "name":
        return None
    return _named_function(project, value.text, call.function, call.order)


def _named_function(
    project: ProjectIndex, name: str, function: str, before: int, depth: int = 0
) -> str | None:
    """The nested function ``name`` refers to in ``function`` at call order ``before``:
    one of that name, or the one a local was last bound to before, directly (``find_tool =
    find``) or through a wrapper handed it first (``find_tool = partial(find_tool, k=v)``,
    ``wrap_filters(find_tool, ...)``: what a registration is handed is still that function).
    """
    scope: str | None = function
    while scope:
        candidate = f"{scope}.<locals>.{name}"
        if candidate in project.functions:
            return candidate
        head, sep, _ = scope.rpartition(".<locals>.")
        scope = head if sep else None
    facts = project.module_of(function)
    if facts is None or depth > 4:
        return None
    bound = [a for a in project.local_assignments(facts, function, name) if a.order <= before]
    if not bound:
        return None
    value = bound[-1].value
    if value.kind == "call" and value.call_args:
        value = value.call_args[0]
    if value.kind != "name" or not value.text.isidentifier():
        return None
    return _named_function(project, value.text, function, bound[-1].order - 1, depth + 1)
