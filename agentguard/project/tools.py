"""Tool discovery: which functions and classes are LLM tools, driven by rules/frameworks.yaml."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Call, ClassDef, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery_loops import loop_rows
from agentguard.project.discovery_lowlevel_mcp import (
    add_inline_branch_tool,
    branch_name,
    enum_member_name,
    handler_class_tool,
    handler_entry,
)
from agentguard.project.discovery_runtime_built import local_function
from agentguard.project.discovery_toolkits import runtime_spec_functions, spec_function_names
from agentguard.project.sink_keys import local_value
from agentguard.project.tool_facts import (
    SELF_NAMES,
    Declaration,
    ToolFacts,
    argument_at,
)

if TYPE_CHECKING:
    from agentguard.project.index import CallSite
    from agentguard.project.tool_index import ToolIndex


def _model_params(project: ToolIndex, fn: Function) -> list[str]:
    injected = project.catalog.injected_params
    return [
        p for p in fn.params if p not in SELF_NAMES and p not in injected and not p.startswith("_")
    ]


def _add_tool(project: ToolIndex, tool: ToolFacts) -> None:
    for existing in project.tools:
        if (
            existing.symbol != tool.symbol
            and {existing.symbol, tool.symbol} <= project.classes.keys()
        ):
            continue  # two tool classes sharing the ``_run`` a common base defines
        if existing.functions == tool.functions and existing.functions:
            # The same function registered twice (decorated and listed): keep one tool,
            # gather every declaration and option.
            existing.declarations += tool.declarations
            for key, value in tool.options.items():
                existing.options.setdefault(key, value)
            return
    project.tools.append(tool)


def _tool_from_function(
    project: ToolIndex,
    qualname: str,
    form: ToolForm,
    site: Location,
    name: str | None,
    options: dict[str, Value],
    extra: list[str] | None = None,
) -> ToolFacts | None:
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
        params=_model_params(project, fn),
        options=options,
        description=(fn.docstring or "").strip().split("\n", 1)[0],
    )
    tool.declarations += _declarations_from_options(project, form.framework, options, site, facts)
    for dec in fn.decorators:
        if project.catalog.declaration_decorators(dec.qualname):
            tool.declarations.append(_guarded_declaration(project, dec.kwargs, dec.span, facts))
    return tool


def _guarded_declaration(
    project: ToolIndex, kwargs: dict[str, Value], span: Span, facts: ModuleFacts
) -> Declaration:
    decl = Declaration(source="guarded", location=Location(facts.path, span))
    for field_name in ("risk", "idempotency", "replay"):
        value = kwargs.get(field_name)
        if value is not None:
            setattr(decl, field_name, value.string() or value.text.split(".")[-1].lower())
            decl.fields[field_name] = Location(facts.path, value.span or span)
    decl.has_key = "key" in kwargs
    decl.key = kwargs.get("key")
    decl.has_reconcile = "reconcile" in kwargs
    decl.retry = kwargs.get("retry")
    return decl


def _declarations_from_options(
    project: ToolIndex,
    framework: str,
    options: dict[str, Value],
    site: Location,
    facts: ModuleFacts,
) -> list[Declaration]:
    result: list[Declaration] = []
    # READ_ONLY = ToolAnnotations(readOnlyHint=True)  ...  @mcp.tool(annotations=READ_ONLY)
    annotations, annotations_path = _written_value(project, options.get("annotations"), site, facts)
    if annotations is not None:
        decl = annotations_declaration(project, annotations, annotations_path)
        if decl is not None:
            result.append(decl)
    metadata_key = project.catalog.metadata_kwargs.get(framework)
    metadata, metadata_path = _written_value(
        project, options.get(metadata_key) if metadata_key else None, site, facts
    )
    if metadata is not None and metadata.kind == "dict":
        decl = annotations_declaration(
            project, metadata, metadata_path, source="langchain-metadata"
        )
        if decl is not None and decl.declares_anything:
            result.append(decl)
    flagged = _option_declaration(project, options, site)
    if flagged is not None:
        result.append(flagged)
    return result


def _option_declaration(
    project: ToolIndex, options: dict[str, Value], site: Location
) -> Declaration | None:
    """Semantics a tool's registration declares in its own keywords (``side_effect=False``,
    ``read_only=True``, ``side_effect="write"``), the catalogue's ``option_hints``."""
    decl = Declaration(source="registry", location=site)
    for attr, keys in project.catalog.option_hints.items():
        for key in keys:
            value = options.get(key)
            if value is None or value.kind != "const":
                continue
            where = Location(site.path, value.span or site.span)
            if attr == "side_effect" and isinstance(value.const, str):
                decl.risk = "read" if value.const.lower() in {"read", "none"} else value.const
                decl.fields["risk"] = where
            elif attr == "side_effect" and isinstance(value.const, bool):
                decl.read_only = not value.const
                decl.fields["read_only"] = where
            elif isinstance(value.const, bool):
                setattr(decl, attr, value.const)
                decl.fields[attr] = where
    return decl if decl.declares_anything else None


def _written_value(
    project: ToolIndex, value: Value | None, site: Location, facts: ModuleFacts
) -> tuple[Value | None, str]:
    """An option's value, or the module variable it names, with the file it is written in
    (a variable imported from another module is written there)."""
    if value is not None and value.kind in {"name", "attr"}:
        held = project.module_variable_in(value.qualname)
        if held is None and value.kind == "name":
            # a variable of this module: its qualname is the type of what it holds
            # (``MUTATION = ToolAnnotations(...)`` names ``ToolAnnotations``)
            held = project.module_variable_in(f"{facts.module}.{value.text}")
        if held is not None:
            return held
    if value is not None and value.kind == "call":
        built = _built_by_helper(project, value)
        if built is not None:
            return built, site.path
    return value, site.path


def _built_by_helper(project: ToolIndex, value: Value) -> Value | None:
    """``annotations=writes(destructive=False)``: a project function whose one returned
    value is a call or dict literal (``return ToolAnnotations(destructiveHint=destructive)``)
    stands for that value, each entry naming a parameter bound to the call's argument. It
    is located at the helper's call (the registration), where the tool's hints are chosen."""
    entry = project.functions.get(value.qualname or "")
    if entry is None:
        return None
    fn, _ = entry
    if len(fn.returns) != 1 or fn.returns[0].kind not in {"call", "dict"}:
        return None
    returned = fn.returns[0]
    params = [p for p in fn.params if p not in SELF_NAMES]
    bound: dict[str, Value] = dict(zip(params, value.call_args, strict=False))
    bound.update(value.call_kwargs)

    def substituted(entries: dict[str, Value]) -> dict[str, Value]:
        return {
            key: bound[item.text]
            if item.kind == "name" and item.text in bound
            else replace(item, span=value.span)
            for key, item in entries.items()
        }

    if returned.kind == "call":
        return replace(returned, span=value.span, call_kwargs=substituted(returned.call_kwargs))
    return replace(returned, span=value.span, items=substituted(returned.items))


def annotations_declaration(
    project: ToolIndex, value: Value, path: str, source: str = "mcp-annotations"
) -> Declaration | None:
    """MCP ToolAnnotations (call or dict, camelCase or snake_case)."""
    if value.kind == "call":
        fields = value.call_kwargs
    elif value.kind == "dict":
        fields = value.items
    else:
        return None
    span = value.span or Span.point(1)
    decl = Declaration(source=source, location=Location(path, span))
    for attr, keys in project.catalog.annotation_hints.items():
        for key in keys:
            if key in fields and fields[key].kind == "const":
                const = fields[key].const
                if isinstance(const, bool):
                    setattr(decl, attr, const)
                    decl.fields[attr] = Location(path, fields[key].span or span)
    for key in ("risk", "idempotency", "replay"):
        if key in fields and fields[key].string():
            setattr(decl, key, fields[key].string())
            decl.fields[key] = Location(path, fields[key].span or span)
    if source == "mcp-annotations" and decl.declares_anything:
        # The spec's pessimistic defaults for hints left out.
        if decl.read_only is None:
            decl.read_only = False
        if decl.read_only is False and decl.destructive is None:
            decl.destructive = True
        if decl.read_only is False and decl.idempotent_hint is None:
            decl.idempotent_hint = False
    return decl if decl.declares_anything else None


def discover_tools(
    project: ToolIndex,
) -> None:
    forms = project.catalog.tool_forms
    sources = [facts for facts in project.modules.values() if not facts.is_test]
    # Calls that may hand a list of tools to an agent, kept from the first pass for the
    # second one (their callees are resolved once).
    listings: list[tuple[Call, ModuleFacts, str]] = []
    # The few resolved callees that make or list tools: every other call is passed over.
    declaring = project.callees_matching(
        forms["factory"], resolved=True
    ) | project.callees_matching(forms["decorator"], resolved=True)
    registries = project.callees_matching(forms["registry"], resolved=True)
    # Declarations first (decorators, factories, classes), then the lists handed to agents:
    # a function both decorated and listed keeps its decorator's name and framework.
    for facts in sources:
        for fn in facts.functions.values():
            matched = [
                (dec, form)
                for dec in fn.decorators
                if (
                    form := forms["decorator"](dec.qualname)
                    or forms["decorator"](project.resolve_instance(dec.qualname))
                )
                is not None
            ]
            # ``@guarded`` alone makes a tool; next to a framework decorator it only declares.
            framework_matches = [m for m in matched if m[1].framework != "agentguard"]
            for dec, form in (framework_matches or matched)[:1]:
                name = dec.kwargs.get("name") or dec.kwargs.get("name_override")
                name_text = name.string() if name else None
                if name_text is None and dec.args and dec.args[0].string():
                    name_text = dec.args[0].string()
                tool = _tool_from_function(
                    project,
                    fn.qualname,
                    form,
                    Location(facts.path, dec.span),
                    name_text,
                    dict(dec.kwargs),
                )
                if tool:
                    _add_tool(project, tool)
        for cls in facts.classes.values():
            _discover_class_tool(project, cls, facts)
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
                _discover_from_call(project, call, facts, callee)
            elif call.callee.endswith(")") and call.args:
                inner = decorating.get((call.span.line, call.span.column))
                if inner is not None and inner.call is not call:
                    _discover_decorator_applied(project, call, inner, facts)
            if callee in registries or (call.function and call.callee.startswith("super")):
                listings.append((call, facts, callee))
    from agentguard.project.discovery_subclasses import discover_subclass_registrations
    from agentguard.project.discovery_wrappers import discover_wrapped_decorators

    for tool in discover_wrapped_decorators(project):
        _add_tool(project, tool)
    discover_subclass_registrations(project)
    for call, facts, callee in listings:
        _discover_from_registry(project, call, facts, callee)
    _discover_lowlevel_mcp(project)
    _discover_raw_schemas(project)
    from agentguard.project.discovery_records import discover_record_tools
    from agentguard.project.discovery_structural import discover_structural_tools

    discover_structural_tools(project)
    discover_record_tools(project)
    project.tools.sort(key=lambda t: (t.path, t.anchor.span.line, t.name))


def _is_shared_base(project: ToolIndex, cls: ClassDef) -> bool:
    """A project class that other tool classes extend and that names no tool itself is
    their shared base (``class BookingTool(BaseTool)`` under ``HotelTool``), not a tool."""
    name = cls.attributes.get("name")
    if name is not None and name.string():
        return False
    if "." in cls.name:
        return any(
            cls.qualname in other.bases or any(b.endswith("." + cls.name) for b in other.bases)
            for other, _ in project.classes.values()
            if other is not cls
        )
    by_base, by_last = project.subclass_index
    return any(
        other is not cls for other in (*by_base.get(cls.qualname, ()), *by_last.get(cls.name, ()))
    )


def _discover_class_tool(project: ToolIndex, cls: ClassDef, facts: ModuleFacts) -> None:
    if _is_shared_base(project, cls):
        return
    for base in project.class_bases(cls):
        form = project.catalog.tool_forms["base_class"](base)
        if form is None:
            continue
        if not all(attr in cls.attributes for attr in form.requires_attributes):
            continue  # a class merely named like a tool base
        methods: list[str] = []
        if form.methods_from_attribute:
            attr = cls.attributes.get(form.methods_from_attribute)
            names = spec_function_names(attr)
            methods = [f"{cls.qualname}.{n}" for n in names if n]
            methods += runtime_spec_functions(project, cls, form.methods_from_attribute)
        else:
            methods = [m for m in (project.find_method(cls.qualname, n) for n in form.methods) if m]
        methods = [m for m in methods if m in project.functions]
        if not methods:
            continue  # another matching base may name the entry methods
        if form.methods_from_attribute:
            for method in methods:
                fn = project.functions[method][0]
                _add_tool(
                    project,
                    ToolFacts(
                        name=fn.name,
                        framework=form.framework,
                        form=form.form,
                        path=facts.path,
                        anchor=Location(facts.path, fn.name_span),
                        functions=[method],
                        symbol=method,
                        site=Location(facts.path, cls.name_span),
                        params=_model_params(project, fn),
                    ),
                )
            return
        name_value = cls.attributes.get("name")
        name = (name_value.string() if name_value else None) or cls.name
        description = cls.attributes.get("description")
        options = dict(cls.attributes)
        tool = ToolFacts(
            name=name,
            framework=form.framework,
            form=form.form,
            path=facts.path,
            anchor=Location(facts.path, cls.name_span),
            functions=methods,
            symbol=cls.qualname,
            site=Location(facts.path, cls.name_span),
            params=_model_params(project, project.functions[methods[0]][0]),
            options=options,
            description=(description.string() if description else "") or "",
        )
        tool.declarations += _declarations_from_options(
            project, form.framework, options, tool.site, facts
        )
        for method in methods:
            for dec in project.functions[method][0].decorators:
                if project.catalog.declaration_decorators(dec.qualname):
                    tool.declarations.append(
                        _guarded_declaration(project, dec.kwargs, dec.span, facts)
                    )
        _add_tool(project, tool)
        return


def _discover_from_call(project: ToolIndex, call: Call, facts: ModuleFacts, callee: str) -> None:
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
        return
    site = Location(facts.path, call.span)
    if factory is not None:
        target = argument_at(call.args, call.kwargs, factory.function)
        also = argument_at(call.args, call.kwargs, factory.also) if factory.also else None
        name_value = argument_at(call.args, call.kwargs, factory.name) if factory.name else None
        qual = project.project_function(
            target.qualname if target else None, facts
        ) or local_function(project, target, call)
        also_qual = project.project_function(
            also.qualname if also else None, facts
        ) or local_function(project, also, call)
        if qual is None and also_qual is not None:
            qual, also_qual = also_qual, None
        if qual is None and factory.methods:
            # ``ComponentTool(component=Fetcher(...))``: the method the object handed runs
            qual = _method_of_built(project, target, call, facts, factory.methods)
        if qual is None:
            # for func, name, *_ in SPECS: mcp.add_tool(Tool.from_function(func, name=name))
            for row in loop_rows(project, target, call):
                tool = _tool_from_function(
                    project,
                    row.function,
                    factory,
                    site,
                    row.string_at(name_value),
                    row.options(dict(call.kwargs)),
                )
                if tool:
                    _add_tool(project, tool)
            return
        if qual:
            tool = _tool_from_function(
                project,
                qual,
                factory,
                site,
                name_value.string() if name_value else None,
                dict(call.kwargs),
                [also_qual] if also_qual else None,
            )
            if tool:
                _add_tool(project, tool)
        return
    if decorator_as_function is not None and call.args:
        # create_order = tool(_create_order)  /  tool("name", fn)
        for arg in call.args[:2]:
            qual = project.project_function(arg.qualname, facts) if arg.kind == "name" else None
            qual = qual or local_function(project, arg, call)
            if qual:
                name = call.args[0].string() if call.args[0].kind == "const" else None
                named = call.kwargs.get("name") or call.kwargs.get("name_override")
                if name is None and named is not None:
                    name = named.string()  # ``mcp.tool(find, name="notes-find")``
                tool = _tool_from_function(
                    project, qual, decorator_as_function, site, name, dict(call.kwargs)
                )
                if tool:
                    _add_tool(project, tool)
                return


def _discover_decorator_applied(
    project: ToolIndex, call: Call, decorator: CallSite, facts: ModuleFacts
) -> None:
    """``mcp.tool(name=tool_name)(lambda_function)``: a decorator with its options applied
    to a function as a call, as ``@mcp.tool(name=...)`` above its ``def`` would be."""
    form = project.catalog.tool_forms["decorator"](decorator.callee)
    if form is None:
        return
    target = call.args[0]
    qual = project.project_function(target.qualname, facts) if target.kind == "name" else None
    qual = qual or local_function(project, target, call)
    if qual is None:
        return
    options = decorator.call.kwargs
    named = options.get("name") or options.get("name_override")
    name = named.string() if named is not None else None
    if name is None and decorator.call.args and decorator.call.args[0].kind == "const":
        name = decorator.call.args[0].string()
    site = Location(facts.path, call.span)
    tool = _tool_from_function(project, qual, form, site, name, dict(options))
    if tool:
        _add_tool(project, tool)


def _method_of_built(
    project: ToolIndex,
    target: Value | None,
    call: Call,
    facts: ModuleFacts,
    methods: tuple[str, ...],
) -> str | None:
    """The first of ``methods`` of the project class whose object ``target`` is: built
    right there (``Fetcher(...)``) or by a local assignment before the call."""
    if target is None:
        return None
    built: Value | None = target
    if target.kind == "name":
        caller = project.function(call.function) if call.function else None
        if caller is not None:
            built = local_value(project, target.text, caller, facts, call.order)
        else:
            bound = project.local_assignments(facts, None, target.text)
            built = bound[-1].value if bound else None
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


def _discover_from_registry(
    project: ToolIndex, call: Call, facts: ModuleFacts, callee: str
) -> None:
    registry = project.catalog.tool_forms["registry"](callee)
    caller = project.function(call.function) if call.function else None
    if registry is None and caller is not None and call.callee.startswith("super"):
        # class SendEmailAgent(AssistantAgent): super().__init__(..., tools=[self.send_email])
        owner = project.classes.get(caller.class_name or "")
        for base in project.class_bases(owner[0]) if owner else []:
            registry = project.catalog.tool_forms["registry"](base)
            if registry is not None:
                break
    if registry is not None and registry.tools is not None:
        listed = argument_at(call.args, call.kwargs, registry.tools)
        for element in listed_elements(project, listed, call, facts):
            qual = project.project_function(element.qualname, facts)
            if qual is None and caller is not None and caller.class_name:
                head, _, attr = element.text.partition(".")
                if head == "self" and attr.isidentifier():
                    qual = project.find_method(caller.class_name, attr)
            if qual and not any(qual in t.functions for t in project.tools):
                tool = _tool_from_function(
                    project,
                    qual,
                    registry,
                    Location(facts.path, _site_span(element, listed, call.span)),
                    None,
                    {},
                )
                if tool:
                    _add_tool(project, tool)


def _site_span(element: Value, listed: Value | None, call_span: Span) -> Span:
    """The element's span when the call's own list holds it, else the call's: the list came
    from a variable, possibly in another module, whose positions are not in this file."""
    written = listed.elements if listed is not None and listed.kind == "list" else ()
    if element.span is not None and any(item is element for item in written):
        return element.span
    return call_span


def listed_elements(
    project: ToolIndex, value: Value | None, call: Call, facts: ModuleFacts, depth: int = 0
) -> list[Value]:
    """The items of a tool list: a literal, or a simple variable holding one (module level,
    possibly imported, or local to the calling function), concatenations and ``*`` spreads
    included. Anything computed is left alone."""
    if value is None or depth > 4:
        return []
    if value.kind == "list":
        result: list[Value] = []
        for element in value.elements:
            if element.kind == "other" and element.text.startswith("*"):
                result += _variable_elements(project, element.names[:1], call, facts, depth)
            else:
                result.append(element)
        return result
    if value.kind in {"name", "attr"}:
        held = _variable_value(project, value, call, facts)
        listed = listed_elements(project, held, call, facts, depth + 1)
        if held is not None and held.kind == "list":
            listed += _appended_elements(project, value, call, facts, depth)
        return listed
    if value.kind == "other" and "+" in value.text and not value.calls:
        # READ_TOOLS + WRITE_TOOLS  /  [a] + EXTRA
        names = [n for n in value.names if n not in project.functions]
        return _variable_elements(project, names, call, facts, depth)
    return []


def _appended_elements(
    project: ToolIndex, value: Value, call: Call, facts: ModuleFacts, depth: int
) -> list[Value]:
    """What the calling function adds to a local list before handing it over: ``tools =
    []``, then ``tools.append(self.send)`` (often under an ``if`` an option guards) or
    ``tools.extend([...])``; each may be a tool."""
    if value.kind != "name" or call.function is None:
        return []
    added: list[Value] = []
    for other in project.calls_in(call.function):
        if other.order >= call.order or other.receiver != value.text or len(other.args) != 1:
            continue
        if other.method == "append":
            added.append(other.args[0])
        elif other.method == "extend":
            added += listed_elements(project, other.args[0], call, facts, depth + 1)
    return added


def _variable_elements(
    project: ToolIndex, names: list[str], call: Call, facts: ModuleFacts, depth: int
) -> list[Value]:
    result: list[Value] = []
    for name in names:
        qualname = facts.imports.get(name) or f"{facts.module}.{name}"
        held = _variable_value(
            project, Value(kind="name", text=name, qualname=qualname), call, facts
        )
        result += listed_elements(project, held, call, facts, depth + 1)
    return result


def _variable_value(
    project: ToolIndex, value: Value, call: Call, facts: ModuleFacts
) -> Value | None:
    if value.kind == "name" and call.function is not None:
        local: Value | None = None
        for assignment in project.local_assignments(facts, call.function, value.text):
            if assignment.span.line < call.span.line:
                local = assignment.value
        if local is not None:
            return local
    return project.module_variable(value.qualname)


def _discover_lowlevel_mcp(
    project: ToolIndex,
) -> None:
    """Low-level MCP servers: Tool(name=...) objects listed, dispatched by name."""
    tool_types = set(project.catalog.mcp_tool_types)
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for call in facts.calls:
            callee = call.callee
            if (callee.replace("()", "") if "()" in callee else callee) not in tool_types:
                continue
            name_value = call.kwargs.get("name") or (call.args[0] if call.args else None)
            name = _static_name(project, name_value) if name_value else None
            handler = None
            if not name and name_value is not None:
                # ``Tool(name=self.name)`` in a handler class: its name and worker method
                handler = handler_class_tool(project, name_value, call.function)
                name = handler[0] if handler else None
            if not name:
                continue
            target = handler[1] if handler else _dispatch_target(project, name, facts)
            options = dict(call.kwargs)
            site = Location(facts.path, call.span)
            if add_inline_branch_tool(project, name, facts, site, options):
                continue
            if target is None:
                continue
            tool = _tool_from_function(project, target, ToolForm("mcp", "lowlevel"), site, name, {})
            if tool is None:
                continue
            tool.declarations += _declarations_from_options(project, "mcp", options, site, facts)
            tool.options.update(options)
            _add_tool(project, tool)


def _static_name(project: ToolIndex, value: Value) -> str | None:
    """A tool name given as a literal or as a class constant (``GitTools.COMMIT`` of a
    ``class GitTools(str, Enum)``), as low-level MCP servers often name their tools."""
    if value.string():
        return value.string()
    if enum_member_name(project, value):
        return enum_member_name(project, value)
    if value.kind == "attr" and value.qualname and "." in value.qualname:
        owner, attr = value.qualname.rsplit(".", 1)
        entry = project.classes.get(owner)
        constant = entry[0].attributes.get(attr) if entry else None
        return constant.string() if constant is not None else None
    return None


def _dispatch_target(project: ToolIndex, name: str, facts: ModuleFacts) -> str | None:
    """The project function that a name-to-function dispatch runs for ``name``."""
    # 1. a dict literal {"name": fn}
    for assignment in facts.assignments:
        value = assignment.value
        if value.kind == "dict" and name in value.items:
            target = value.items[name]
            qual = project.project_function(target.qualname, facts) or handler_entry(
                project, target, facts, assignment.function
            )
            if qual:
                return qual
    # 2. if name == "create_order": / case "create_order": the first project function
    #    the branch calls
    for function, string, body in facts.branches:
        if branch_name(project, string) != name or function is None:
            continue
        caller = project.function(function)
        for call in sorted(project.calls_in(function), key=lambda c: c.order):
            if not body.line <= call.span.line <= body.end_line:
                continue
            resolved = project.resolve_callee(call, caller, facts)
            qual = project.project_function(resolved, facts)
            if qual and qual != function:
                return qual
    # 3. a function of the same name
    qual = project.project_function(name, facts)
    if qual:
        return qual
    candidates = project.by_name.get(name, [])
    return candidates[0] if len(candidates) == 1 else None


def _discover_raw_schemas(
    project: ToolIndex,
) -> None:
    """OpenAI/Anthropic tool dicts in code, linked to the function the dispatch calls."""
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for schema in facts.dicts:
            items = schema.items
            if "function" in items and items["function"].kind == "dict":
                body = items["function"].items
                framework = "openai"
            elif "input_schema" in items:
                body, framework = items, "anthropic"
            elif "inputSchema" in items:
                # Bedrock's and Strands' camelCase tool spec; a Strands module tool
                # (``TOOL_SPEC`` next to a function of the spec's name) runs that function.
                body, framework = items, _camel_spec_framework(facts)
            elif "parameters" in items and (
                items.get("type") is None or items["type"].string() == "function"
            ):
                body, framework = items, "openai"
            else:
                continue
            name_value = body.get("name")
            name = name_value.string() if name_value else None
            if not name:
                continue
            target = _dispatch_target(project, name, facts) or _plugin_entry(project, facts)
            if target is None or any(target in t.functions for t in project.tools):
                continue
            site = Location(facts.path, schema.span or Span.point(1))
            tool = _tool_from_function(
                project, target, ToolForm(framework, "schema-dict"), site, name, {}
            )
            if tool:
                _add_tool(project, tool)


def _camel_spec_framework(facts: ModuleFacts) -> str:
    """Whose camelCase tool spec a module holds: Strands' when it imports Strands."""
    imported = [*facts.imports.values(), *facts.absolute_imports]
    if any(name == "strands" or name.startswith("strands.") for name in imported):
        return "strands"
    return "bedrock"


def _plugin_entry(project: ToolIndex, facts: ModuleFacts) -> str | None:
    """The one module-level entry function of a tool plugin module, if there is one."""
    found = [
        f"{facts.module}.{name}"
        for name in sorted(project.catalog.plugin_entry_names)
        if f"{facts.module}.{name}" in project.functions
    ]
    return found[0] if len(found) == 1 else None
