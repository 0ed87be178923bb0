"""Toolkit classes that name their tool methods: LlamaIndex ``BaseToolSpec``.

``spec_functions`` lists the methods a spec exposes, each as a name or as a
``(sync_name, async_name)`` pair; the async one is the same tool run asynchronously. A
spec may also build its tools at run time: a function defined in a method, attached with
``setattr(self, name, fn)`` and its name appended to ``self.spec_functions``; each such
function is a tool too (its model-facing name is only known at run time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.facts.module_facts import ClassDef, Value

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def spec_function_names(listed: Value | None) -> list[str]:
    """The method names a ``spec_functions`` value lists: a pair's first name (the sync
    method; its async twin is the same tool)."""
    names: list[str] = []
    for element in listed.elements if listed is not None else ():
        if element.kind == "list":
            element = element.elements[0] if element.elements else element
        name = element.string()
        if name:
            names.append(name)
    return names


def runtime_spec_functions(project: ProjectIndex, cls: ClassDef, attribute: str) -> list[str]:
    """Functions nested in ``cls``'s methods that a method attaches to the instance
    (``setattr(self, name, fn)``) while one of them appends to ``self.<attribute>``."""
    appends = False
    attached: list[str] = []
    for method in cls.methods:
        entry = project.functions.get(method)
        if entry is None:
            continue
        fn = entry[0]
        for call in project.calls_in(method):
            if call.callee in {f"self.{attribute}.append", f"self.{attribute}.extend"}:
                appends = True
            if call.callee == "setattr" and len(call.args) == 3 and call.args[0].text == "self":
                held = call.args[2]
                nested = f"{method}.<locals>.{held.text}"
                if held.kind == "name" and nested in fn.nested and nested not in attached:
                    attached.append(nested)
    return attached if appends else []
