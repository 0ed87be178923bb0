"""Finder: registration calls (``mcp.add_tool(fn)``, ``Tool.from_function(fn)``,
``create_order = tool(_create_order)``), and a decorator call applied to a function as a
call (``mcp.tool(name=n)(fn)``), as ``@mcp.tool(name=n)`` above its ``def`` would be."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call, ModuleFacts
from agentguard.project.definitions import local_function
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import (
    function_tool,
    registered_name,
    wraps_a_parameter,
)
from agentguard.project.discovery.loop_rows import loop_rows
from agentguard.project.discovery.registration_calls import tools_from_call
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import CallSite, ProjectIndex


def find_in(project: ProjectIndex, found: FoundTools, facts: ModuleFacts) -> Iterator[ToolFacts]:
    forms = project.catalog.tool_forms
    # The few resolved callees that make tools: every other call is passed over.
    declaring = project.callees_matching(
        forms["factory"], resolved=True
    ) | project.callees_matching(forms["decorator"], resolved=True)
    sites = project.call_sites(facts)
    # ``mcp.tool(name=n)(fn)``: the decorator call, by where it starts (the call it makes
    # on ``fn`` starts there too)
    decorating = {
        (site.call.span.line, site.call.span.column): site
        for site in sites
        if site.callee in declaring
    }
    for site in sites:
        call, callee = site.call, site.callee
        if callee in declaring or (call.function and call.callee == "super().__init__"):
            yield from tools_from_call(project, call, facts, callee)
        elif call.callee.endswith(")") and call.args:
            inner = decorating.get((call.span.line, call.span.column))
            if inner is not None and inner.call is not call:
                yield from _decorator_applied(project, call, inner, facts)


def _decorator_applied(
    project: ProjectIndex, call: Call, decorator: CallSite, facts: ModuleFacts
) -> Iterator[ToolFacts]:
    """``mcp.tool(name=tool_name)(lambda_function)``: the tool the decorator call's options
    make of the function the call is applied to (of each function a loop hands it, in
    ``for fn in TOOLS: server.tool()(fn)``)."""
    form = project.catalog.tool_forms["decorator"](decorator.callee)
    if form is None:
        return
    target = call.args[0]
    qual = (
        project.project_function(target.qualname, facts)
        if target.kind in {"name", "attr"}
        else None
    )
    qual = qual or local_function(project, target, call)
    if qual is not None and wraps_a_parameter(project, qual):
        return  # a decorator's wrapper: the functions it decorates are the tools (wrappers.py)
    options = decorator.call.kwargs
    site = Location(facts.path, call.span)
    if qual is not None:
        name = registered_name(options, decorator.call.args)
        tool = function_tool(project, qual, form, site, name, dict(options))
        if tool:
            yield tool
        return
    name_value = options.get("name")
    for row in loop_rows(project, target, call, facts):
        tool = function_tool(
            project, row.function, form, site, row.string_at(name_value), row.options(dict(options))
        )
        if tool:
            yield tool
