"""Candidate tools as the finders make them: a function registered as a tool, or a class
whose entry methods run it, with what its registration declares."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import ClassDef, Decorator, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.declarations import (
    declarations_from_options,
    guarded_declaration,
)
from agentguard.project.tool_facts import SELF_NAMES, Declaration, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def model_params(project: ProjectIndex, fn: Function) -> list[str]:
    """The parameters a model fills: not ``self``, not injected by the framework, not
    private."""
    injected = project.catalog.injected_params
    return [
        p for p in fn.params if p not in SELF_NAMES and p not in injected and not p.startswith("_")
    ]


def registered_name(kwargs: dict[str, Value], args: list[Value]) -> str | None:
    """The tool name a registration gives: ``name=`` (or ``name_override=``) as a string,
    else its first argument when that is a string (``@tool("search")``)."""
    name = kwargs.get("name") or kwargs.get("name_override")
    if name is not None and name.string():
        return name.string()
    if args and args[0].string():
        return args[0].string()
    return None


def function_tool(
    project: ProjectIndex,
    qualname: str,
    form: ToolForm,
    site: Location,
    name: str | None,
    options: dict[str, Value],
    extra: list[str] | None = None,
) -> ToolFacts | None:
    """The tool a registration at ``site`` makes of the project function ``qualname``
    (None when it is no project function), with the declarations of its options and of
    its ``@guarded`` decorator."""
    entry = project.functions.get(qualname)
    if entry is None:
        return None
    fn, facts = entry
    functions = [qualname, *(extra or [])]
    tool = ToolFacts(
        name=name or fn.name,
        framework=form.framework,
        form=form.form,
        path=facts.path,
        anchor=Location(facts.path, fn.name_span),
        functions=functions,
        symbol=qualname,
        site=site,
        params=model_params(project, fn),
        options=options,
        description=(fn.docstring or "").strip().split("\n", 1)[0],
    )
    tool.declarations += declarations_from_options(project, form.framework, options, site, facts)
    tool.declarations += guarded_declarations(project, fn, facts)
    return tool


def decorated_tool(
    project: ProjectIndex, fn: Function, dec: Decorator, form: ToolForm, facts: ModuleFacts
) -> ToolFacts | None:
    """The tool a framework decorator makes of the function it decorates."""
    site = Location(facts.path, dec.span)
    name = registered_name(dec.kwargs, dec.args)
    return function_tool(project, fn.qualname, form, site, name, dict(dec.kwargs))


def guarded_declarations(
    project: ProjectIndex, fn: Function, facts: ModuleFacts
) -> list[Declaration]:
    """What the ``@guarded`` decorators of ``fn`` declare, located in ``facts``' file."""
    return [
        guarded_declaration(dec.kwargs, dec.span, facts)
        for dec in fn.decorators
        if project.catalog.declaration_decorators(dec.qualname)
    ]


def class_tool(
    project: ProjectIndex,
    cls: ClassDef,
    facts: ModuleFacts,
    name: str,
    form: ToolForm,
    methods: list[str],
) -> ToolFacts:
    """The tool a class is, run by its entry ``methods``: its attributes are its options."""
    description = cls.attributes.get("description")
    return ToolFacts(
        name=name,
        framework=form.framework,
        form=form.form,
        path=facts.path,
        anchor=Location(facts.path, cls.name_span),
        functions=methods,
        symbol=cls.qualname,
        site=Location(facts.path, cls.name_span),
        params=model_params(project, project.functions[methods[0]][0]),
        options=dict(cls.attributes),
        description=(description.string() if description else "") or "",
    )


def wraps_a_parameter(project: ProjectIndex, inner: str) -> bool:
    """Whether ``inner`` is a function written inside another that calls one of the outer
    function's parameters (``@functools.wraps(func) async def guarded(...): return await
    func(...)`` inside a decorator): registering it registers the function the outer one is
    handed, wrapped, not a tool of its own."""
    outer, sep, _ = inner.rpartition(".<locals>.")
    if not sep or inner not in project.functions or outer not in project.functions:
        return False
    params = set(project.functions[outer][0].params)
    return any(call.callee in params for call in project.calls_in(inner))
