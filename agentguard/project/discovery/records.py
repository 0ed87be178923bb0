"""Finder: registries of plain tool records: a project's own ``Tool(name=..., description=...,
func=...)`` record class, or dicts ``{"name": ..., "description": ..., "fn": ...}``.

A record that gives a model-facing name, a parameter schema and a project function is a
tool named by its record, run by that function: the shape of a tool handed to a model,
whatever the record's class is called. The schema is asked for so that routes, menu
entries, command tables and other name-to-function tables are not taken for tools. The
field names are ``structural_bases``' in rules/frameworks.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Call, ModuleFacts, Value
from agentguard.project.definitions import local_function
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import model_params
from agentguard.project.discovery.class_tools import describes_a_tool
from agentguard.project.discovery.framework_data import structural_spec
from agentguard.project.tool_facts import ToolFacts

LOCALS = ".<locals>."
# A key that can be a tool's name (``create_label``, ``list-labels``): not a route or a path.
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def _record_tool(
    project: ProjectIndex,
    found: FoundTools,
    fields: dict[str, Value],
    facts: ModuleFacts,
    span: Span,
    call: Call | None,
    keys: tuple[list[str], list[str], list[str]],
    spec_written: bool = False,
    runs: str | None = None,
) -> ToolFacts | None:
    """The tool a record is: its name, a parameter schema (or a class that writes the spec
    from the record, ``spec_written``) and the project function it runs (``runs``, when the
    code that answers it is handed beside the record)."""
    name_keys, description_keys, schema_keys = keys
    described = fields
    if not any(k in fields for k in name_keys):
        # ``{definition: {name, description, inputSchema}, execute: async (input) => ...}``:
        # the spec kept whole in one field beside the code that answers it
        described = next(
            (
                held.items
                for held in fields.values()
                if held.kind == "dict" and any(k in held.items for k in name_keys)
            ),
            fields,
        )
    name_value = next((described[k] for k in name_keys if k in described), None)
    name = name_value.string() if name_value is not None else None
    if not name or not (spec_written or any(k in described for k in schema_keys)):
        return None
    function: str | None = runs
    for key, value in fields.items() if function is None else ():
        if key in name_keys or key in description_keys or value.kind != "name":
            continue
        function = project.project_function(value.qualname, facts)
        if function is None and call is not None:
            function = local_function(project, value, call)
        if function:
            break
    if function is None or found.any_runs(function):
        return None
    fn = project.functions[function][0]
    description = described.get("description")
    return ToolFacts(
        name=name,
        framework="custom",
        form="record",
        path=project.functions[function][1].path,
        anchor=Location(project.functions[function][1].path, fn.name_span),
        functions=[function],
        symbol=function,
        site=Location(facts.path, span),
        params=model_params(project, fn),
        options=dict(fields),
        description=(description.string() if description else "") or "",
    )


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    _, spec = structural_spec(project)
    if spec is None:
        return
    keys = (
        list(spec.get("name_attributes") or []),
        list(spec.get("declaration_attributes") or []),
        list(spec.get("schema_attributes") or []),
    )
    called: set[str] | None = None
    spec_writers: dict[str, bool] = {}
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for site in project.call_sites(facts):
            call = site.call
            built = _built_class(project, site.callee, site.target) if call.kwargs else None
            if built is None:
                continue
            factory = _enclosing_factory(facts, call.span) if facts.language != "python" else None
            if factory is not None:
                if called is None:
                    called = _called_functions(project)
                if factory not in called:
                    continue  # ``Tool.mocked()``: a factory only the tests call
            if built not in spec_writers:
                spec_writers[built] = _writes_a_spec(project, built)
            tool = _record_tool(
                project, found, call.kwargs, facts, call.span, call, keys, spec_writers[built]
            )
            if tool is not None:
                yield tool
        if facts.language != "python":
            yield from _plugin_actions(project, found, facts, keys, spec)
            # a record written anywhere: returned by a factory, handed to the project's own
            # tool builder (``defineTool({name, schema, handler})``), listed or assigned
            for record in facts.dicts:
                span = record.span or Span.point(1)
                factory = _enclosing_factory(facts, span)
                if factory is not None:
                    if called is None:
                        called = _called_functions(project)
                    if factory not in called:
                        continue  # a factory nothing calls: a tool nobody registers
                tool = _record_tool(project, found, record.items, facts, span, None, keys)
                if tool is not None:
                    yield tool
            yield from _keyed_records(project, found, facts, keys)
            yield from _records_beside_handlers(project, found, facts, keys)
            # ``export const shellTool: ToolHandler = {definition: {...}, execute}``: a record
            # a module keeps under a name
            for assignment in facts.assignments:
                if assignment.function is None and assignment.value.kind == "dict":
                    value = assignment.value
                    span = value.span or assignment.span
                    tool = _record_tool(project, found, value.items, facts, span, None, keys)
                    if tool is not None:
                        yield tool
            continue
        for assignment in facts.assignments:
            value = assignment.value
            if value.kind == "list":
                for element in value.elements:
                    if element.kind != "dict":
                        continue
                    span = element.span or assignment.span
                    tool = _record_tool(project, found, element.items, facts, span, None, keys)
                    if tool is not None:
                        yield tool


def _plugin_actions(
    project: ProjectIndex,
    found: FoundTools,
    facts: ModuleFacts,
    keys: tuple[list[str], list[str], list[str]],
    spec: Any,
) -> Iterator[ToolFacts]:
    """``{name: "phettagotchi", actions: [{name, description, handler}, ...]}``: the actions an
    agent-kit plugin lists (the catalogue's ``structural_bases.action_lists``) are tools,
    each named by its record and run by its handler; the plugin interface is their spec."""
    lists = list(spec.get("action_lists") or [])
    name_keys = keys[0]
    # a plugin object written as a constant, returned by a factory, or anywhere else
    written = [*facts.dicts, *(a.value for a in facts.assignments if a.function is None)]
    written += [value for fn in facts.functions.values() for value in fn.returns]
    for plugin in written:
        if plugin.kind != "dict" or not any(k in plugin.items for k in name_keys):
            continue
        for key in lists:
            listed = plugin.items.get(key)
            for record in listed.elements if listed is not None and listed.kind == "list" else ():
                if record.kind != "dict" or "description" not in record.items:
                    continue
                span = record.span or plugin.span or Span.point(1)
                tool = _record_tool(project, found, record.items, facts, span, None, keys, True)
                if tool is not None:
                    yield tool


def _built_class(project: ProjectIndex, callee: str, target: str | None) -> str | None:
    """The project class a call builds: the class itself, or the class a static factory
    returns a new one of (``Tool.create(config)`` returning ``new Tool(config)``)."""
    if callee in project.classes:
        return callee
    factory = project.function(target) if target else None
    if factory is None or factory.class_name is None:
        return None
    for returned in factory.returns:
        if returned.kind == "call" and returned.qualname in project.classes:
            return returned.qualname
    return None


def _writes_a_spec(project: ProjectIndex, cls_qual: str) -> bool:
    """Whether the class writes a tool spec (a name, a description and a parameter schema)
    from what it is built with: its records need no schema of their own."""
    cls, facts = project.classes[cls_qual]
    return any(
        spec.span is not None and cls.span.encloses(spec.span) and describes_a_tool(spec.items)
        for spec in facts.dicts
    )


def _enclosing_factory(facts: ModuleFacts, span: Span) -> str | None:
    """The named function (a module function or a method) whose body writes the record at
    ``span``, if any: a tool factory (``function makeArchivePageTool(root) { return
    defineTool({...}) }``). A callback handed to a call is no factory."""
    inside = [fn for fn in facts.functions.values() if fn.span.encloses(span)]
    if not inside:
        return None
    innermost = max(inside, key=lambda fn: (fn.span.line, fn.span.column))
    qualname = innermost.qualname
    if LOCALS in qualname or "#" in qualname or ":" in qualname:
        return None
    return qualname


def _records_beside_handlers(
    project: ProjectIndex,
    found: FoundTools,
    facts: ModuleFacts,
    keys: tuple[list[str], list[str], list[str]],
) -> Iterator[ToolFacts]:
    """``export default (ctx) => tool(async (args) => {...}, {name, description, schema})``:
    a record handed to the project's own tool builder beside the inline function that
    answers it, in a module's default export (what a loader of the folder takes, by name or
    by a dynamic import). The tool is that export, whose body the inline function is."""
    exported = f"{facts.module}.default"
    schema_keys = keys[2]
    for call, builder in _builder_calls(project, facts):
        for record in call.args:
            if record.kind != "dict":
                continue
            span = record.span or call.span
            # a tool of no arguments gives no schema (``{name, description}``): the
            # builder the others hand their schema to makes a tool of it all the same
            bare = builder in _schema_builders(project, schema_keys)
            tool = _record_tool(
                project, found, record.items, facts, span, call, keys, bare, runs=exported
            )
            if tool is not None:
                yield tool


def _builder_calls(project: ProjectIndex, facts: ModuleFacts) -> Iterator[tuple[Call, str]]:
    """The calls of a project function in a module's default export that hand it an inline
    function beside a record (``tool(async (args) => {...}, {name, ...})``), with it."""
    exported = f"{facts.module}.default"
    for call in facts.calls:
        if call.function != exported or not any(a.kind == "lambda" for a in call.args):
            continue
        builder = project.project_function(call.callee, facts)
        if builder is not None:  # a library's builder: its framework's finder judges it
            yield call, builder


def _schema_builders(project: ProjectIndex, schema_keys: list[str]) -> frozenset[str]:
    """The project's own tool builders some default export hands a record with a parameter
    schema: what they make are tools."""

    def work_out() -> frozenset[str]:
        return frozenset(
            builder
            for facts in project.modules.values()
            if not facts.is_test and facts.language != "python"
            for call, builder in _builder_calls(project, facts)
            if any(
                record.kind == "dict" and any(k in record.items for k in schema_keys)
                for record in call.args
            )
        )

    return project.remembered(("schema builders", tuple(schema_keys)), work_out)


def _called_functions(project: ProjectIndex) -> set[str]:
    """Every project function some call outside the tests resolves to."""
    called: set[str] = set()
    for site in project.source_call_sites():
        called.update(site.targets)
    return called


def _keyed_records(
    project: ProjectIndex,
    found: FoundTools,
    facts: ModuleFacts,
    keys: tuple[list[str], list[str], list[str]],
) -> Iterator[ToolFacts]:
    """``const toolDefinitions = {create_label: {description, inputSchema, handler}}`` at
    module level: records named by their keys, with no name of their own."""
    name_keys, _, schema_keys = keys
    for assignment in facts.assignments:
        if assignment.function is not None or assignment.value.kind != "dict":
            continue
        for key, record in assignment.value.items.items():
            if (
                record.kind != "dict"
                or not _TOOL_NAME.match(key)
                or any(k in record.items for k in name_keys)
                or not any(k in record.items for k in schema_keys)
            ):
                continue
            fields = {"name": Value("const", repr(key), key), **record.items}
            span = record.span or assignment.span
            tool = _record_tool(project, found, fields, facts, span, None, keys)
            if tool is not None:
                yield tool
