"""What one registration call makes: a factory handed a function (``Tool.from_function(
search, name="search")``, ``StructuredTool(func=self.search)``, a method of an object built
for it (``Tool(Search(client).__call__)``), or each function of the rows a loop walks), or
a framework decorator called as a function (``create_order = tool(_create_order)``)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Call, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import local_function, returned_local_function
from agentguard.project.discovery.candidates import function_tool, wraps_a_parameter
from agentguard.project.discovery.declarations import declarations_from_options
from agentguard.project.discovery.loop_rows import loop_rows, record_rows
from agentguard.project.sink_keys import local_value
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts, argument_at

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def tools_from_call(
    project: ProjectIndex, call: Call, facts: ModuleFacts, callee: str
) -> list[ToolFacts]:
    """The tools a call of ``callee`` (a factory, or a decorator called as a function)
    makes of the functions it is handed."""
    forms = project.catalog.tool_forms
    factory = forms["factory"](callee)
    if factory is None and call.callee == "super().__init__" and call.function:
        # class CommenterTool(ComponentTool): super().__init__(component=..., name=name)
        caller = project.function(call.function)
        owner = project.classes.get(caller.class_name or "") if caller else None
        for base in project.class_bases(owner[0]) if owner else []:
            factory = forms["factory"](base)
            if factory is not None:
                break
    decorator_as_function = forms["decorator"](callee)
    if factory is None and decorator_as_function is None:
        return []
    tools: list[ToolFacts] = []
    site = Location(facts.path, call.span)
    if factory is not None:
        target = argument_at(call.args, call.kwargs, factory.function)
        also = argument_at(call.args, call.kwargs, factory.also) if factory.also else None
        name_value = argument_at(call.args, call.kwargs, factory.name) if factory.name else None
        options = registration_options(call, factory)
        wrapped = _wrapped_function(project, target, call, facts)
        qual = (
            wrapped[0]
            if wrapped
            else project.project_function(target.qualname if target else None, facts)
            or local_function(project, target, call)
        )
        also_qual = (
            wrapped[1]
            if wrapped and also is None
            else project.project_function(also.qualname if also else None, facts)
            or local_function(project, also, call)
        )
        if qual is None and also_qual is not None:
            qual, also_qual = also_qual, None
        if qual is None:
            # Tool(Search(client=c).__call__): the method of an object built right there
            qual = _method_of_built_object(project, _held(project, target, call, facts), facts)
        if qual is None and factory.methods:
            # ``ComponentTool(component=Fetcher(...))``: the method the object handed runs
            qual = _method_of_built(project, target, call, facts, factory.methods)
        if target is None and _runs_elsewhere(call, factory):
            name = (name_value.string() if name_value else None) or _assigned_name(
                project, call, facts
            )
            tools.append(tool_without_code(project, call, facts, factory, site, name, options))
            return tools
        if qual is None:
            # for (const t of TOOLS) out.push(tool(async (a) => t.func(a), {name: t.name}))
            records = _record_tools(project, call, facts, factory, site, name_value, None, options)
            if records:
                return records
            # for func, name, *_ in SPECS: mcp.add_tool(Tool.from_function(func, name=name))
            tools.extend(_loop_tools(project, target, call, facts, factory, site, name_value))
            return tools
        if qual:
            records = _record_tools(project, call, facts, factory, site, name_value, qual, options)
            if records:
                return records
            tool = function_tool(
                project,
                qual,
                factory,
                site,
                (name_value.string() if name_value else None)
                or _assigned_name(project, call, facts),
                options,
                [also_qual] if also_qual else None,
            )
            if tool:
                tools.append(tool)
        return tools
    if decorator_as_function is not None and call.args:
        # create_order = tool(_create_order)  /  tool("name", fn)
        for arg in call.args[:2]:
            qual = project.project_function(arg.qualname, facts) if arg.kind == "name" else None
            qual = qual or local_function(project, arg, call)
            if qual and wraps_a_parameter(project, qual):
                return tools  # a decorator's wrapper: the functions it decorates are the tools
            if qual:
                name = call.args[0].string() if call.args[0].kind == "const" else None
                named = call.kwargs.get("name") or call.kwargs.get("name_override")
                if name is None and named is not None:
                    name = named.string()  # ``mcp.tool(find, name="notes-find")``
                tool = function_tool(
                    project, qual, decorator_as_function, site, name, dict(call.kwargs)
                )
                if tool:
                    tools.append(tool)
                return tools
        # for fn in TOOLS: agent.tool_plain(fn)
        name_value = call.kwargs.get("name") or call.kwargs.get("name_override")
        tools.extend(
            _loop_tools(project, call.args[0], call, facts, decorator_as_function, site, name_value)
        )
    return tools


def _wrapped_function(
    project: ProjectIndex, target: Value | None, call: Call, facts: ModuleFacts
) -> tuple[str, str] | None:
    """``registerTool("deploy", {...}, guard(async (a) => api.deploy(a)))``,
    ``add_tool(with_errors(create_order))``: the function handed to a project wrapper, one
    that calls what it is handed (itself, ``ProjectIndex.called_params``, or in the closure
    it returns), and what runs it (that closure, or the wrapper). The wrapper is shared; the
    tool is what it wraps."""
    if target is None or target.kind != "call":
        return None
    wrapper = project.project_function(target.qualname, facts)
    if wrapper is None:
        return None
    params = [p for p in project.functions[wrapper][0].params if p not in SELF_NAMES]
    closure = returned_local_function(project, wrapper)
    if closure is not None:
        called = {c.callee for c in project.calls_in(closure)} & set(params)
    else:
        called = set(project.called_params(wrapper))
    for index, param in enumerate(params):
        handed = target.call_kwargs.get(param) or (
            target.call_args[index] if index < len(target.call_args) else None
        )
        if param not in called or handed is None:
            continue
        qual = project.project_function(handed.qualname, facts) or local_function(
            project, handed, call
        )
        if qual and qual != wrapper:
            return qual, closure or wrapper
    return None


def _runs_elsewhere(call: Call, form: ToolForm) -> bool:
    """A registration whose options object has no field for the function at all: a tool
    the model may call that runs elsewhere (the Vercel AI SDK's ``tool({description,
    inputSchema})`` with no ``execute`` is answered by the client)."""
    ref = form.function
    if ref is None or not ref.field:
        return False
    written = argument_at(call.args, call.kwargs, replace(ref, field=None))
    return written is not None and written.kind == "dict" and ref.field not in written.items


def tool_without_code(
    project: ProjectIndex,
    call: Call,
    facts: ModuleFacts,
    form: ToolForm,
    site: Location,
    name: str | None,
    options: dict[str, Value],
) -> ToolFacts:
    """The tool a registration makes of no function: anchored at the registration, doing
    nothing here, with the declarations of its options."""
    label = name or call.method
    tool = ToolFacts(
        name=label,
        framework=form.framework,
        form=form.form,
        path=facts.path,
        anchor=site,
        functions=[],
        symbol=f"{call.function or facts.module}:{label}",
        site=site,
        options=options,
    )
    tool.declarations += declarations_from_options(project, form.framework, options, site, facts)
    return tool


def _assigned_name(project: ProjectIndex, call: Call, facts: ModuleFacts) -> str | None:
    """The name a registration's result is assigned to, when the registration names its
    tool nowhere else: ``export const lookupOrder = tool({description, execute})``, or the
    factory that returns it (``export const searchTool = (deps) => tool({...})``)."""
    if facts.language == "python":
        return None
    for assignment in facts.assignments:
        if assignment.value.kind == "call" and assignment.value.span == call.span:
            return assignment.target if assignment.target.isidentifier() else None
    factory = project.function(call.function) if call.function else None
    if factory is not None and any(value.span == call.span for value in factory.returns):
        return factory.name if factory.name.isidentifier() else None
    return _keyed_name(facts, call)


def _keyed_name(facts: ModuleFacts, call: Call) -> str | None:
    """The key a registration is written under in an object literal of its function:
    ``streamText({tools: {addTodo: tool({...})}})``, ``const tools = {addTodo: tool(...)}``,
    ``return {addTodo: tool(...)}``."""
    holders: list[Value] = [a.value for a in facts.assignments if a.function == call.function]
    owner = facts.functions.get(call.function) if call.function else None
    if owner is not None:
        # ``return {addContact: tool({...}), ...}`` from a factory of tools
        holders += owner.returns
    for other in facts.calls:
        if other.function == call.function and other is not call:
            holders += other.args
            holders += other.kwargs.values()
    for holder in holders:
        found = _key_holding(holder, call.span, depth=3)
        if found is not None:
            return found
    return None


def _key_holding(value: Value, span: Span, depth: int) -> str | None:
    if value.kind != "dict" or depth == 0:
        return None
    for key, item in value.items.items():
        if item.span == span:
            return key if key.isidentifier() else None
        found = _key_holding(item, span, depth - 1)
        if found is not None:
            return found
    return None


def registration_options(call: Call, form: ToolForm) -> dict[str, Value]:
    """A registration's keywords, with the fields of its options object and its MCP
    annotations argument where the form names them (a TypeScript registration has no
    keywords: ``registerTool(name, {annotations, description}, cb)``)."""
    options = dict(call.kwargs)
    if form.options is not None:
        written = argument_at(call.args, call.kwargs, form.options)
        if written is not None and written.kind == "dict":
            for key, value in written.items.items():
                options.setdefault(key, value)
    if form.annotations is not None:
        written = argument_at(call.args, call.kwargs, form.annotations)
        if written is not None and written.kind in {"dict", "name", "attr", "call"}:
            options.setdefault("annotations", written)
    return options


def _method_of_built(
    project: ProjectIndex,
    target: Value | None,
    call: Call,
    facts: ModuleFacts,
    methods: tuple[str, ...],
) -> str | None:
    """The first of ``methods`` of the project class whose object ``target`` is: built
    right there (``Fetcher(...)``) or by a local assignment before the call."""
    built = _held(project, target, call, facts)
    if built is None or built.kind != "call" or not built.qualname:
        return None
    cls = next(
        (q for q in (built.qualname, f"{facts.module}.{built.qualname}") if q in project.classes),
        None,
    )
    if cls is None:
        return None
    for method in methods:
        found = project.find_method(cls, method)
        if found is not None:
            return found
    return None


def _held(
    project: ProjectIndex, target: Value | None, call: Call, facts: ModuleFacts
) -> Value | None:
    """What ``target`` is: itself, or the value a local name holds before the call."""
    if target is None or target.kind != "name":
        return target
    caller = project.function(call.function) if call.function else None
    if caller is not None:
        return local_value(project, target.text, caller, facts, call.order)
    bound = project.local_assignments(facts, None, target.text)
    return bound[-1].value if bound else None


def _method_of_built_object(
    project: ProjectIndex, target: Value | None, facts: ModuleFacts
) -> str | None:
    """``Search(client=c).__call__`` handed over: the project's ``Search.__call__``, the
    method a bound method of an object built in the argument runs."""
    chain = target.chain if target is not None and target.kind == "attr" else None
    if chain is None or len(chain.steps) != 2:
        return None
    (first, _), (second, method) = chain.steps
    if first != "call" or second != "attr" or not isinstance(method, str):
        return None
    root = facts.imports.get(chain.root) or chain.root
    cls = next((q for q in (root, f"{facts.module}.{root}") if q in project.classes), None)
    return project.find_method(cls, method) if cls is not None else None


def _row_field(row: Value, target: str | None, value: Value, renamed: dict[str, str]) -> Value:
    """What an option written from the loop's record (``t.description``, or a field bound
    by an object pattern, ``description`` or ``{ description: summary }``) is in ``row``;
    any other option as written."""
    if target is not None and value.kind == "attr" and value.text.startswith(f"{target}."):
        return row.items.get(value.text.partition(".")[2], value)
    if target is None and value.kind == "name":
        return row.items.get(renamed.get(value.text, value.text), value)
    return value


def _record_tools(
    project: ProjectIndex,
    call: Call,
    facts: ModuleFacts,
    form: ToolForm,
    site: Location,
    name_value: Value | None,
    qual: str | None,
    options: dict[str, Value],
) -> list[ToolFacts]:
    """One tool per record of a table the registration loops over, named by the record's
    field (``for (const t of tools) server.tool(t.name, t.description, t.shape, cb)``):
    anchored at the record, running the registered callback (when it is a function of its
    own) and the functions the record holds (``fn: async (args) => ...``, which the callback
    calls as ``t.fn(args)``)."""
    found = record_rows(project, name_value, call, facts if call.function is None else None)
    if found is None or not found[1]:
        return []
    field, rows, renamed = found
    assert name_value is not None
    # the record as the loop binds it: ``t`` of ``t.name``, or its fields themselves
    # (``{ name, handler }``)
    target = name_value.chain.root if name_value.chain is not None else None
    tools: list[ToolFacts] = []
    for row, row_facts in rows:
        name = row.items[field].string()
        if not name:
            continue
        held = [
            v.qualname
            for v in row.items.values()
            if v.kind == "name" and v.qualname and v.qualname in project.functions
        ]
        row_options = {
            key: _row_field(row, target, value, renamed) for key, value in options.items()
        }
        functions = [qual, *held] if qual else held
        if not functions:
            continue
        tool = function_tool(project, functions[0], form, site, name, row_options, functions[1:])
        if tool is None:
            continue
        if row.span is not None:
            tool.path = row_facts.path
            tool.anchor = Location(row_facts.path, row.span)
            tool.symbol = f"{functions[0]}:{name}"
        tools.append(tool)
    return tools


def _loop_tools(
    project: ProjectIndex,
    handed: Value | None,
    call: Call,
    facts: ModuleFacts,
    form: ToolForm,
    site: Location,
    name_value: Value | None,
) -> list[ToolFacts]:
    """One tool a row of the loop ``handed`` walks (``for fn in TOOLS: mcp.add_tool(fn)``),
    named by the row's item where the registration's name is the loop's."""
    found = (
        function_tool(
            project,
            row.function,
            form,
            site,
            row.string_at(name_value),
            row.options(dict(call.kwargs)),
        )
        for row in loop_rows(project, handed, call, facts)
    )
    return [tool for tool in found if tool]
