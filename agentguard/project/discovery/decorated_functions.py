"""Finder: functions under a framework's tool decorator (``@mcp.tool()``, ``@tool``,
``@function_tool(name_override=...)``), or under agentguard's own ``@guarded`` alone; and
classes under a framework's tool decorator (LangChain's ``@tool`` on a pydantic model: the
model may call it, and calling it builds the model, so what runs is the class's own
``__init__`` if it has one)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import ClassDef, Decorator, Function, ModuleFacts
from agentguard.knowledge.catalog_entries import ToolForm
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import decorated_tool, registered_name
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def find_in(project: ProjectIndex, found: FoundTools, facts: ModuleFacts) -> Iterator[ToolFacts]:
    decorator = project.catalog.tool_forms["decorator"]
    for fn in facts.functions.values():
        matched = [
            (dec, form)
            for dec in fn.decorators
            if (
                form := decorator(dec.qualname)
                or decorator(project.resolve_instance(dec.qualname))
                or decorator(_handed_decorator(project, fn, dec.qualname))
            )
            is not None
        ]
        # ``@guarded`` alone makes a tool; next to a framework decorator it only declares.
        framework_matches = [m for m in matched if m[1].framework != "agentguard"]
        for dec, form in (framework_matches or matched)[:1]:
            tool = decorated_tool(project, fn, dec, form, facts)
            if tool:
                yield tool
    for cls in facts.classes.values():
        for dec in cls.decorators:
            form = decorator(dec.qualname)
            if form is not None and form.framework != "agentguard":
                yield _decorated_class(cls, dec, form, facts)
                break


def _handed_decorator(project: ProjectIndex, fn: Function, written: str) -> str:
    """``@server.tool()`` in ``def register(server)``, called as ``register(mcp)``: the
    decorator of what every caller hands the enclosing function."""
    head, dot, rest = written.partition(".")
    outer = fn.qualname.rpartition(".<locals>.")[0]
    enclosing = project.function(outer) if dot and outer else None
    handed = project.handed_type(enclosing, head) if enclosing is not None else None
    return f"{handed}.{rest}" if handed else ""


def _decorated_class(
    cls: ClassDef, dec: Decorator, form: ToolForm, facts: ModuleFacts
) -> ToolFacts:
    init = f"{cls.qualname}.__init__"
    description = cls.attributes.get("description")
    return ToolFacts(
        name=registered_name(dec.kwargs, dec.args) or cls.name,
        framework=form.framework,
        form=form.form,
        path=facts.path,
        anchor=Location(facts.path, cls.name_span),
        functions=[init] if init in cls.methods else [],
        symbol=cls.qualname,
        site=Location(facts.path, dec.span),
        options=dict(dec.kwargs),
        description=(description.string() if description else "") or "",
    )
