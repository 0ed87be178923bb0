"""Finder: tools declared in a schema file and run through a table of the project's code.

A project may keep its tool specs in a JSON or YAML file it sends to a model as they are
(``tools.json`` loaded and handed as ``tools``), and run each call the model makes through a
table of handlers keyed by the same names::

    TOOL_HANDLERS = {"summarize": summarize, "write_file": write_file}
    ...
    handler = TOOL_HANDLERS.get(call["name"])
    result = handler(**call["input"])

A name the schema file declares and such a table keys is one tool: the file declares it,
the function the table holds runs it. Without the file's name, a table of functions proves
nothing (routes, commands and callbacks are kept so too).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.discovery.dispatch import handler_entries, namespace_lookup
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

FORM = ToolForm("custom", "schema-file-dispatch")


def find(project: ProjectIndex, found: FoundTools, declared: frozenset[str]) -> Iterator[ToolFacts]:
    if not declared:
        return
    taken = found.functions()
    named = {tool.name for tool in found.tools()}
    for entry in handler_entries(project):
        if entry.name not in declared or entry.name in named or entry.function in taken:
            continue
        site = Location(entry.facts.path, entry.span)
        tool = function_tool(project, entry.function, FORM, site, entry.name, {})
        if tool is not None:
            taken.add(entry.function)
            named.add(entry.name)
            yield tool
    for name in sorted(declared - named):
        # a table of a module's own namespace (``TOOL_FUNCS = {n: f for n, f in
        # vars(module).items() if inspect.isfunction(f)}``): the function of that name there
        function = namespace_lookup(project, name)
        if function is None or function in taken:
            continue
        runs, facts = project.functions[function]
        tool = function_tool(
            project, function, FORM, Location(facts.path, runs.name_span), name, {}
        )
        if tool is not None:
            taken.add(function)
            yield tool
