"""Finder: OpenAI, Anthropic, Bedrock and Strands tool specs written as dicts in code,
linked to the function the dispatch runs for the spec's name, or to the dispatch branch that
does the work itself (``case "write_file":`` in the agent loop). The dispatch may sit in
another module than the specs: the one module that dispatches on the name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.branch_tools import (
    DispatchingModules,
    branch_tool,
    inline_branch,
)
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.discovery.class_tools import schema_shaped
from agentguard.project.discovery.dispatch import branch_name, dispatch_targets, namespace_lookup
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    dispatching = DispatchingModules(project)
    for facts in project.modules.values():
        if facts.is_test:
            continue
        specs = [(schema, spec) for schema in facts.dicts if (spec := _spec(schema.items, facts))]
        for schema, (body, framework) in specs:
            name_value = body.get("name")
            name = name_value.string() if name_value else None
            if not name:
                continue
            site = Location(facts.path, schema.span or Span.point(1))
            alone = schema.span if len(specs) == 1 else None
            tool = named_spec_tool(project, found, dispatching, name, facts, site, framework, alone)
            if tool is not None:
                yield tool


def named_spec_tool(
    project: ProjectIndex,
    found: FoundTools,
    dispatching: DispatchingModules,
    name: str,
    facts: ModuleFacts,
    site: Location,
    framework: str,
    only_spec: Span | None,
) -> ToolFacts | None:
    """The tool a spec named ``name`` written at ``site`` in ``facts`` stands for: the
    dispatch branch that does the work itself, else the function the dispatch runs for the
    name, else the module's one plugin entry (``only_spec``: the module's only spec); None
    when that tool is found already or nothing runs for the name."""
    handling = dispatching.of(name, facts)
    branch = inline_branch(project, name, handling)
    if branch is not None:
        if found.named_in(name, handling.path):
            return None
        form = ToolForm(framework, "schema-dict-branch")
        return branch_tool(project, name, handling, site, {}, branch, form)
    targets = dispatch_targets(project, name, handling) or dispatch_targets(project, name, facts)
    if not targets and (looked_up := namespace_lookup(project, name)) is not None:
        targets = [looked_up]  # ``eval(call.name)(**args)`` where a function of the name is
    target = targets[0] if targets else _plugin_entry(project, facts, only_spec)
    if target is None and facts.language != "python":
        if found.named_in(name, facts.path):
            return None
        return _answering_branch(project, name, facts, framework, site)
    if target is None or found.runs_first(target):
        return None  # a function another entry calls beside its own is still a tool of its own
    form = ToolForm(framework, "schema-dict")
    return function_tool(project, target, form, site, name, {}, extra=targets[1:])


def _answering_branch(
    project: ProjectIndex, name: str, facts: ModuleFacts, framework: str, site: Location
) -> ToolFacts | None:
    """The one branch of the spec's module that answers ``name`` itself, calling no project
    function of its own (``case "lookupPolicy": return samplePolicies;`` in the function the
    model's function calls are handed to): the tool is that branch."""
    mine = [
        (handler, body)
        for handler, string, body in facts.branches
        if handler is not None and branch_name(project, string) == name
    ]
    if len(mine) != 1:
        return None
    handler, body = mine[0]
    assert handler is not None
    form = ToolForm(framework, "schema-dict-branch")
    return branch_tool(project, name, facts, site, {}, (handler, body, []), form)


def _spec(items: dict[str, Value], facts: ModuleFacts) -> tuple[dict[str, Value], str] | None:
    """The body of the tool spec a dict is (the items holding its name) and whose form it
    is; None for any other dict."""
    if "function" in items and items["function"].kind == "dict":
        return items["function"].items, "openai"
    if "input_schema" in items:
        return items, "anthropic"
    if "inputSchema" in items and facts.language != "python":
        return None  # the MCP SDK's ``Tool`` written as an object (lowlevel_mcp.py)
    if "inputSchema" in items:
        # Bedrock's and Strands' camelCase tool spec; a Strands module tool (``TOOL_SPEC``
        # next to a function of the spec's name) runs that function.
        return items, _camel_spec_framework(facts)
    if (
        "parameters" in items
        and schema_shaped(items["parameters"])
        and (items.get("type") is None or items["type"].string() == "function")
    ):
        return items, "openai"
    return None


def _camel_spec_framework(facts: ModuleFacts) -> str:
    """Whose camelCase tool spec a module holds: Strands' when it imports Strands."""
    imported = [*facts.imports.values(), *facts.absolute_imports]
    if any(name == "strands" or name.startswith("strands.") for name in imported):
        return "strands"
    return "bedrock"


def _plugin_entry(project: ProjectIndex, facts: ModuleFacts, only_spec: Span | None) -> str | None:
    """The one module-level entry function of a tool plugin module, if there is one: a
    function of a name the catalogue gives entries, else, in a module whose only spec is
    at ``only_spec`` and holding no function of its own, the one public module-level
    function beside the spec's own (``get_function_schema()`` and
    ``handle_response(arguments)``, or ``tool_export = {...}`` and ``def function``)."""
    found = [
        f"{facts.module}.{name}"
        for name in sorted(project.catalog.plugin_entry_names)
        if f"{facts.module}.{name}" in project.functions
    ]
    if found:
        return found[0] if len(found) == 1 else None
    if only_spec is None or any(
        only_spec.line <= fn.span.line and fn.span.end_line <= only_spec.end_line
        for fn in facts.functions.values()
    ):
        # a spec holding its own function (``{name, parameters, async execute(params)
        # {...}}``) runs that, not a helper beside it
        return None
    beside = [
        fn.qualname
        for fn in facts.functions.values()
        if fn.qualname == f"{facts.module}.{fn.name}"
        and not fn.name.startswith("_")
        and not fn.span.line <= only_spec.line <= fn.span.end_line
    ]
    return beside[0] if len(beside) == 1 else None
