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
    from agentguard.project.project_model import ProjectModel


def local_function(project: ProjectModel, value: Value | None, call: Call) -> str | None:
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
    scope: str | None = call.function
    while scope:
        candidate = f"{scope}.<locals>.{value.text}"
        if candidate in project.functions:
            return candidate
        head, sep, _ = scope.rpartition(".<locals>.")
        scope = head if sep else None
    return None
