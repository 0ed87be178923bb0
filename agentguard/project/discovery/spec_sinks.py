"""Finder: tool classes whose specs reach a model API call.

A tool is a callable whose name or schema reaches a model. The model API calls that take
tool specs are catalogue data (``tool_functions.spec_sinks``: ``messages.create(tools=...)``,
``chat.completions.create(tools=...)``, ``converse(toolConfig=...)``...). From each, the value
handed over is followed backward through the project's code: locals and ``self.x``
attributes (what is assigned, appended, extended or inserted), list literals,
comprehensions, ``**params`` dicts, and the returns of the project functions and methods
called (``ToolCollection.to_params()`` returning ``[tool.to_params() for tool in
self.tools]``). It ends at the methods that write a spec: a method returning a dict with a
``name`` (or an OpenAI ``function`` / Bedrock ``toolSpec`` holding one), reached by its
resolved call or, on an element whose class is not known, by the method's name.

Each class whose spec method that is, and each project class below it, is a tool when it
has a name of its own (a literal, or ``self.name`` its class or a base sets) and a method the
dispatch runs (the concrete override of the hook its base leaves abstract, else ``__call__``,
else its one public method). A class whose name comes from whoever builds it (a proxy for
remote tools) is none. Nothing here knows what the project calls its base, registry or spec
method. The walk visits each value once: linear in what the sinks reach.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import enclosing_class, returned_local_function
from agentguard.project.discovery.branch_tools import DispatchingModules
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.discovery.class_tools import (
    Family,
    class_tools,
    describes_a_tool,
    entry_method,
    gives,
    has_parameter_schema,
    self_string,
    spec_items,
    spec_returns,
    static_string,
)
from agentguard.project.discovery.framework_data import structural_spec
from agentguard.project.discovery.loaded_modules import (
    kept_runner,
    loads_a_module,
    plugin_modules,
    plugin_tool,
    taken_from,
)
from agentguard.project.discovery.registration_names import project_targets
from agentguard.project.discovery.schema_dicts import named_spec_tool
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts, argument_at

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex
    from agentguard.project.index.call_site import CallSite

FORM = ToolForm("custom", "spec-sink")
_MAX_DEPTH = 14
# What adds to a list held in a local or an attribute.
_ADDERS = {"append": 0, "extend": 0, "insert": 1}
# Python's own containers: what a view or a copy of one hands on is what the container holds.
_VIEWS = frozenset({"values", "items", "copy"})
_COPIES = frozenset({"list", "tuple", "sorted", "set", "reversed", "dict"})
# The arguments of a library call that may hold specs: containers and references, not literals.
_HOLDERS = frozenset({"list", "name", "attr", "call", "dict"})


class _Trace:
    """The walk back from the sinks: what it has visited, and the spec methods it found."""

    def __init__(self, project: ProjectIndex, keys: set[str]) -> None:
        self.project = project
        self.keys = keys  # the keywords (and dict keys) holding tool specs
        # each value visited, with the least depth it was reached at: a value first reached
        # deep (its own values cut at the depth limit) is walked again when reached nearer
        self.seen: dict[tuple[str | int | None, ...], int] = {}
        self.spec_functions: set[str] = set()
        self.spec_names: set[str] = set()
        # the project classes whose instances the values handed over are built from
        self.instances: set[str] = set()
        # the project functions handed over themselves (``tools=[get_weather]``, or a
        # field ``Agent(functions=[...])`` the spec is built from), where each is named
        self.functions: dict[str, Location] = {}
        # the project's call sites by the function they run and by the project class they
        # build (``_site_index``), made when first needed
        self._sites: dict[str, list[CallSite]] | None = None
        self._constructions: dict[str, list[CallSite]] | None = None
        self._fields: set[tuple[str, str]] = set()
        self._writes: dict[str, list[tuple[Value, Function | None, ModuleFacts]]] | None = None
        self._decorations: dict[str, list[tuple[str, Location]]] | None = None
        # the specs written with a literal name (``FunctionDeclaration(name="write_file",
        # ...)``, ``{"name": "write_file", "parameters": ...}``): the dispatch runs a
        # function for that name
        self.named_specs: dict[str, tuple[ModuleFacts, Location, str]] = {}
        # the function a spec record holds beside its spec, by the spec's name
        self.spec_code: dict[str, str] = {}
        # the tools of a plugin folder's modules: the function that runs each, with the
        # tool's name and where the loader takes it
        self.plugins: dict[str, tuple[str, Location]] = {}
        # the project classes built where the walk went since a scan of an object's
        # methods started following that object (``_scrubbed``)
        self._reached: set[str] = set()
        # the project classes handed to a spec builder (``pydantic_function_tool(
        # AddExpense)``): each, with where its spec is made and the name given it, if any
        self.models: dict[str, tuple[ModuleFacts, Location, str | None]] = {}
        # while what a spec builder is handed is followed: where, and the name given
        self._building: tuple[ModuleFacts, Location, str | None] | None = None

    def value(self, value: Value, fn: Function | None, facts: ModuleFacts, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        if self._building is not None and value.kind in {"name", "attr"}:
            model = _project_class(self.project, value, facts)
            if model is not None:
                self.models.setdefault(model, self._building)
                return
        span = value.span
        if span is not None:
            # the whole span: ``a + b`` starts where ``a`` does
            key = (facts.path, fn.qualname if fn else None, *span, self._building is None)
            if self.seen.get(key, _MAX_DEPTH + 1) <= depth:
                return
            self.seen[key] = depth
        if value.op in {"+", "if"}:
            for part in value.parts:
                self.value(part, fn, facts, depth + 1)
        elif value.kind == "list":
            for element in value.elements:
                self.value(element, fn, facts, depth + 1)
        elif value.kind == "dict":
            self._named_spec(value, facts)
            if fn is not None:
                # a spec a decorator writes describes the function it decorates
                self._decorated_by(fn.qualname)
            keyed = [held for name, held in value.items.items() if name in self.keys]
            # a request's parameters (``{"tools": specs, ...}``), else a table of what it
            # holds (``{"book_table": book_table}``)
            for held in keyed or value.items.values():
                self.value(held, fn, facts, depth + 1)
        elif value.kind == "name":
            wrapped = _wrapped(self.project, value, fn)
            if wrapped is not None:
                self.value(wrapped, fn, facts, depth + 1)
            elif not self._referenced(value, fn, facts):
                self._name(value.text, fn, facts, depth)
        elif value.kind == "attr":
            if not self._referenced(value, fn, facts):
                self._attribute(value, fn, facts, depth)
        elif value.kind == "call":
            self._named_spec(value, facts)
            self._calls(value, fn, facts, depth)
        elif value.kind == "other" and (container := _subscripted(value.text)) is not None:
            # ``self._schemas[name]``: what the container holds, not the key
            if container.isidentifier():
                self._name(container, fn, facts, depth + 1)
            else:
                self._attribute(Value(kind="attr", text=container), fn, facts, depth + 1)
        elif value.kind == "other" and span is not None:
            # a comprehension: what it walks, and the calls it makes on each element
            for loop in fn.loops if fn is not None else facts.loops:
                if loop.kind == "comprehension" and loop.iterable and span.encloses(loop.span):
                    self.value(loop.iterable, fn, facts, depth + 1)
            read_from = _subscripted(_element_text(value.text))
            if read_from is not None:
                # ``[self._specs[name] for name in names]``: what the container holds
                self._held(read_from, fn, facts, depth)
            if value.calls:
                self._calls(value, fn, facts, depth)
            else:
                for name in value.names:  # ``tools or []``
                    self._name(name, fn, facts, depth + 1)

    def _named_spec(self, value: Value, facts: ModuleFacts) -> None:
        """Keep a spec written with a literal name, and whose form it is."""
        spec = spec_items(value)
        if spec is None or not has_parameter_schema(spec):
            # ``StructuredTool.from_function(f, name="x")``: a factory's name, not a spec
            return
        named = spec.get("name")
        name = named.string() if named is not None else None
        if not name or value.span is None or name in self.named_specs:
            return
        if value.kind == "call":
            # an SDK's spec type (``google.genai.types.FunctionDeclaration``): its package
            framework = (value.qualname or value.text).partition(".")[0] or "custom"
        else:
            framework = "openai" if "function" in value.items else "custom"
            code = self._held_function(value, facts)
            if code is not None:
                self.spec_code[name] = code
        self.named_specs[name] = (facts, Location(facts.path, value.span), framework)

    def _held_function(self, record: Value, facts: ModuleFacts) -> str | None:
        """The one project function a spec record holds beside its spec (``{type:
        "function", function: {name, ...}, handler: async (args) => ...}``, ``{"name": ...,
        "run": send_invoice}``): the code that answers when the model picks it."""
        held = {
            qualname
            for item in record.items.values()
            if item.kind == "name"
            and (qualname := self.project.project_function(item.qualname or item.text, facts))
        }
        return held.pop() if len(held) == 1 else None

    def _name(self, name: str, fn: Function | None, facts: ModuleFacts, depth: int) -> None:
        scope = fn.qualname if fn else None
        key = (facts.path, scope, -1, name, self._building is None)
        if self.seen.get(key, _MAX_DEPTH + 1) <= depth:
            return
        self.seen[key] = depth
        assigned = self.project.local_assignments(facts, scope, name)
        for assignment in assigned:
            self.value(assignment.value, fn, facts, depth + 1)
        for keyword in sorted(self.keys):
            # ``kwargs["tools"] = tools`` on the request handed over as ``**kwargs``
            stored = f"{name}[{keyword}]"
            for assignment in self.project.local_assignments(facts, scope, stored):
                self.value(assignment.value, fn, facts, depth + 1)
        self._added(name, scope, fn, facts, depth)
        for store in facts.stores:
            if store.function == scope and store.target == name:
                # ``registry[func_name] = mod.tool``: what the function keeps under each key
                self.value(store.value, fn, facts, depth + 1)
        walked = [
            iterable
            for loop in (fn.loops if fn is not None else ())
            if loop.kind == "for" and name in loop.targets and (iterable := loop.iterable)
        ]
        for iterable in walked:
            # ``for entry in self._tools: result.append(entry["schema"])``: an element of
            # what the loop walks
            self.value(iterable, fn, facts, depth + 1)
        if walked:
            return
        if not assigned and fn is not None and name in fn.params:
            self._arguments(fn, name, depth)
            default = fn.defaults.get(name)
            if default is not None:
                # ``def generate(..., toolset=tools.G_TOOLS)``: what it holds when not handed
                self.value(default, None, facts, depth + 1)
        elif not assigned:
            qualname = facts.imports.get(name) or f"{facts.module}.{name}"
            self._module_variable(qualname, facts, depth)

    def _referenced(self, value: Value, fn: Function | None, facts: ModuleFacts) -> bool:
        """A project function or method handed over itself (``get_weather``,
        ``self.send_email``): a callable whose schema reaches the model."""
        if (
            value.kind == "name"
            and fn is not None
            and (
                value.text in fn.params
                or self.project.local_assignments(facts, fn.qualname, value.text)
            )
        ):
            return False
        qualname = self.project.project_function(value.qualname or value.text, facts)
        head, _, attr = value.text.partition(".")
        if qualname is None and head in SELF_NAMES and attr.isidentifier() and fn is not None:
            owner = enclosing_class(self.project, fn)
            qualname = self.project.find_method(owner, attr) if owner else None
        if qualname is None:
            return False
        self.functions.setdefault(qualname, Location(facts.path, value.span or Span.point(1)))
        return True

    def _field(self, cls_qual: str, attr: str, depth: int) -> None:
        """What instances of the project class ``cls_qual`` hold in ``attr``: its class-level
        default, what its methods set on ``self``, and what each construction
        (``Agent(functions=[...])``) gives that keyword."""
        if (cls_qual, attr) in self._fields:
            return
        self._fields.add((cls_qual, attr))
        self._self_attribute(cls_qual, f"self.{attr}", depth)
        for site in self._site_index()[1].get(cls_qual, ()):
            held = site.call.kwargs.get(attr)
            if held is not None:
                self.value(held, site.caller, site.facts, depth + 1)
        # ``concierge.skills.append(f)``, ``concierge.skills = [...]`` on an instance a
        # module variable holds
        for held, fn, facts in self._instance_writes().get(f"{cls_qual}.{attr}", ()):
            self.value(held, fn, facts, depth + 1)

    def _site_index(self) -> tuple[dict[str, list[CallSite]], dict[str, list[CallSite]]]:
        """The project's call sites by the function each runs, and by the project class
        each builds: one pass over them, made when first needed."""
        if self._sites is None or self._constructions is None:
            sites: dict[str, list[CallSite]] = {}
            constructions: dict[str, list[CallSite]] = {}
            for facts in self.project.modules.values():
                if facts.is_test:
                    continue
                for site in self.project.call_sites(facts):
                    for target in site.targets:
                        sites.setdefault(target, []).append(site)
                    if site.callee in self.project.classes:
                        constructions.setdefault(site.callee, []).append(site)
            self._sites, self._constructions = sites, constructions
        return self._sites, self._constructions

    def _instance_writes(self) -> dict[str, list[tuple[Value, Function | None, ModuleFacts]]]:
        """What the project adds to or sets on an attribute of an instance a module variable
        holds, by the attribute's qualified name (``desk.persona.Persona.skills``)."""
        if self._writes is not None:
            return self._writes
        writes: dict[str, list[tuple[Value, Function | None, ModuleFacts]]] = {}
        project = self.project
        for facts in project.modules.values():
            if facts.is_test:
                continue
            for call in facts.calls:
                position = _ADDERS.get(call.method)
                if position is None or len(call.args) <= position or "." not in call.callee:
                    continue
                field_name = self._instance_field(call.callee.rpartition(".")[0])
                if field_name is not None:
                    fn = project.function(call.function) if call.function else None
                    writes.setdefault(field_name, []).append((call.args[position], fn, facts))
            for assignment in facts.attribute_sets:
                field_name = self._instance_field(f"{facts.module}.{assignment.target}")
                if field_name is not None:
                    fn = project.function(assignment.function) if assignment.function else None
                    writes.setdefault(field_name, []).append((assignment.value, fn, facts))
        self._writes = writes
        return writes

    def _instance_field(self, dotted: str) -> str | None:
        """``desk.persona.Persona.skills`` for ``desk.booking.concierge.skills`` when the
        module variable ``concierge`` holds a ``Persona`` (the facts may have resolved it
        already); None for anything else."""
        resolved = self.project.resolve_instance(dotted)
        # the type as the module wrote it may be a re-export (``swarm.Agent``)
        resolved = self.project.resolve_instance(resolved)
        owner = resolved.rpartition(".")[0]
        return resolved if owner in self.project.classes else None

    def _held(self, receiver: str, fn: Function | None, facts: ModuleFacts, depth: int) -> None:
        """What the container written ``receiver`` (``REGISTRY``, ``self.tools``) holds."""
        if receiver.isidentifier():
            self._name(receiver, fn, facts, depth)
        elif receiver.partition(".")[0] in SELF_NAMES:
            self._attribute(Value(kind="attr", text=receiver), fn, facts, depth)
        else:
            # a module variable, as the facts resolved it (``agent.runner.FUNCS``)
            self._module_variable(receiver, facts, depth)

    def _module_variable(self, qualname: str, facts: ModuleFacts, depth: int) -> None:
        """What the module variable ``qualname`` is set to, and what functions store in it."""
        held = self.project.module_variable_in(qualname)
        if held is not None:
            holder = self.project.modules.get(held[1], facts)
            self.value(held[0], None, holder, depth + 1)
            self._stored(qualname.rpartition(".")[2], holder, depth)

    def _scanned(self, module: Value, facts: ModuleFacts) -> None:
        """``inspect.getmembers(actions, inspect.isfunction)`` on a project module: the
        public functions it defines."""
        if module.kind != "name":
            return
        name = facts.imports.get(module.text)
        scanned = self.project.modules_by_name.get(name or "")
        if scanned is None:
            return
        prefix = f"{scanned.module}."
        for qualname, function in scanned.functions.items():
            local = qualname.removeprefix(prefix)
            if "." in local or local.startswith("_") or function.class_name:
                continue
            self.functions.setdefault(qualname, Location(scanned.path, function.name_span))

    def _stored(self, name: str, holder: ModuleFacts, depth: int) -> None:
        """What the functions of ``holder`` store in its module variable ``name``
        (``_SKILLS[fn.__name__] = fn`` in a registrar decorator)."""
        for store in holder.stores:
            if store.target != name or store.function is None:
                continue
            owner = self.project.function(store.function)
            self.value(store.value, owner, holder, depth + 1)

    def _arguments(self, fn: Function, param: str, depth: int) -> None:
        """What the calls of ``fn`` hand its parameter ``param``; for a decorator, the
        functions it decorates."""
        params = [p for p in fn.params if p not in SELF_NAMES]
        if params[:1] == [param]:
            self._decorated_by(fn.qualname)
        position = params.index(param) if param in params else -1
        for site in self._site_index()[0].get(fn.qualname, ()):
            call = site.edge_call
            held = call.kwargs.get(param)
            if held is None and 0 <= position < len(call.args):
                held = call.args[position]
            if held is not None:
                self.value(held, site.caller, site.facts, depth + 1)

    def _decorated_by(self, receiver: str) -> None:
        """The functions the project function ``receiver`` receives as a decorator reach
        the sink."""
        for decorated, where in self._decorated().get(receiver, ()):
            self.functions.setdefault(decorated, where)

    def _decorated(self) -> dict[str, list[tuple[str, Location]]]:
        """The project's decorated functions by the project function that receives them: the
        decorator itself (``@skill``), or the function a decorator factory returns
        (``@registry.command("...")`` returning its local ``keep``)."""
        if self._decorations is not None:
            return self._decorations
        decorations: dict[str, list[tuple[str, Location]]] = {}
        project = self.project
        for facts in project.modules.values():
            if facts.is_test:
                continue
            for function in facts.functions.values():
                for decorator in function.decorators:
                    # ``@skill``, or ``@registry.register(...)`` on an instance of a
                    # project class, however the instance is reached
                    written = decorator.qualname
                    for receiver in project_targets(project, written, function, facts):
                        if decorator.called:
                            receiver = returned_local_function(project, receiver) or ""
                        if receiver:
                            where = Location(facts.path, decorator.span)
                            decorations.setdefault(receiver, []).append((function.qualname, where))
        self._decorations = decorations
        return decorations

    def _added(
        self, target: str, scope: str | None, fn: Function | None, facts: ModuleFacts, depth: int
    ) -> None:
        """What ``target.append(x)`` / ``extend`` / ``insert`` add in ``scope``."""
        calls = self.project.calls_in(scope) if scope else facts.calls_in(None)
        for call in calls:
            position = _ADDERS.get(call.method)
            if position is not None and call.receiver == target and len(call.args) > position:
                self.value(call.args[position], fn, facts, depth + 1)

    def _attribute(self, value: Value, fn: Function | None, facts: ModuleFacts, depth: int) -> None:
        text = value.text
        if value.qualname and value.qualname.partition(".")[0] in SELF_NAMES:
            text = value.qualname  # TypeScript's ``this.x``: the facts name it ``self.x``
        head, _, attr = text.partition(".")
        if fn is None and head in SELF_NAMES:
            return
        if "." in attr:
            # ``self._tool_box.tools``: the field of the project class the attribute holds
            held, _, field_name = attr.partition(".")
            owner = enclosing_class(self.project, fn) if head in SELF_NAMES and fn else None
            typed = self.project.self_type(owner, held) if owner else None
            if typed in self.project.classes and field_name.isidentifier():
                self._field(typed, field_name, depth)
            return
        if fn is not None and head not in SELF_NAMES and head.isidentifier():
            loaded = Value(kind="name", text=head)
            if loads_a_module(self.project, loaded, fn, facts):
                # ``module.tool_export`` on each module a loader loads
                named = Value(kind="const", text=repr(attr), const=attr)
                self._plugins(loaded, named, fn, facts, value.span or Span.point(1))
                return
        if head not in SELF_NAMES:
            if value.qualname and self.project.module_variable_in(value.qualname) is not None:
                # ``tools.G_TOOLS``: a variable of a project module imported whole
                self._module_variable(value.qualname, facts, depth)
                return
            # ``agent.functions`` on a parameter typed ``Agent``, a project class
            owner, _, field_name = (value.qualname or "").rpartition(".")
            if owner in self.project.classes and field_name == attr:
                self._field(owner, attr, depth)
            return
        cls_qual = enclosing_class(self.project, fn) if fn is not None else None
        if cls_qual is None or cls_qual not in self.project.classes:
            return
        self._self_attribute(cls_qual, text, depth)

    def _self_attribute(self, cls_qual: str, text: str, depth: int) -> None:
        """What the methods of ``cls_qual`` and its bases set ``self.attr`` (``text``) to,
        and its class-level default."""
        attr = text.partition(".")[2]
        for current in self.project.lineage(cls_qual):
            entry = self.project.classes.get(current)
            if entry is None:
                continue
            cls, cls_facts = entry
            default = cls.attributes.get(attr)
            if default is not None:
                self.value(default, None, cls_facts, depth + 1)
            for method in cls.methods:
                # the method and the functions it defines (a decorator a registry method
                # returns appends to ``self.tools`` through its closure)
                defined = self.project.function(method)
                for scope in (method, *(defined.nested if defined else ())):
                    owner = self.project.function(scope)
                    for assignment in self.project.local_assignments(cls_facts, scope, text):
                        self.value(assignment.value, owner, cls_facts, depth + 1)
                    self._added(text, scope, owner, cls_facts, depth)
            # ``self._tools[tool.name] = tool`` in a registering method
            for store in cls_facts.stores:
                if store.target == text and store.function in cls.methods:
                    owner = self.project.function(store.function)
                    self.value(store.value, owner, cls_facts, depth + 1)

    def _calls(self, value: Value, fn: Function | None, facts: ModuleFacts, depth: int) -> None:
        """The calls the expression ``value`` makes: a project function's returns are
        followed; a method called on what the project cannot type names a spec method."""
        span = value.span
        calls = [
            c
            for c in (self.project.calls_in(fn.qualname) if fn else facts.calls_in(None))
            if span is not None and span.encloses(c.span)
        ]
        if not calls and value.kind == "call":
            self._unresolved(value, fn, facts, depth)
            return
        forms = self.project.catalog.tool_forms
        for call in calls:
            site = self.project.call_site(call, fn, facts)
            if site.callee in self.project.classes:
                self.instances.add(site.callee)  # ``Kit(OpenTicket(), LookupTicket())``
                self._reached.add(site.callee)
                continue
            target = site.target
            if target is not None and target in self.project.functions:
                self._returns(target, depth)
                self._described(call, target, fn, facts, depth)
                continue
            if call.method in _ADDERS:
                continue
            builder = self.project.catalog.spec_builders.first(site.callee, call.callee)
            if builder is not None:
                self._built(call, builder, fn, facts, depth)
                continue
            factory = forms["factory"].first(site.callee, call.callee)
            if factory is not None and factory.function is not None:
                # ``StructuredTool.from_function(f)``: the function it makes a tool of
                handed = argument_at(call.args, call.kwargs, factory.function)
                if handed is not None:
                    self.value(handed, fn, facts, depth + 1)
                continue
            if site.callee in self.project.catalog.module_scans and call.args:
                self._scanned(call.args[0], facts)
                continue
            taken = _taken_attribute(self.project, call, fn, facts)
            if taken is not None and fn is not None:
                if loads_a_module(self.project, taken.call_args[0], fn, facts):
                    self._plugins(taken.call_args[0], taken.call_args[1], fn, facts, call.span)
                    continue
                if self._scrubbed(taken.call_args[0], taken.call_args[1], fn, facts, depth):
                    continue
            if call.method in _VIEWS and call.receiver and not call.args:
                # ``registry.values()``: what the container holds
                self._held(call.receiver, fn, facts, depth)
                continue
            if call.callee in _COPIES and call.args:
                self.value(call.args[0], fn, facts, depth + 1)
                continue
            if call.receiver and call.method:
                self.spec_names.add(call.method)
            for name, held in call.kwargs.items():
                if name in self.keys:  # GenerateContentConfig(tools=[...])
                    self.value(held, fn, facts, depth + 1)
            if target is None and site.callee not in self.project.functions:
                # a library call wrapping what it is handed (``types.Tool(
                # function_declarations=[...])``): the specs are in its arguments
                for held in (*call.args, *call.kwargs.values()):
                    if held.kind in _HOLDERS:
                        self.value(held, fn, facts, depth + 1)

    def _built(
        self,
        call: Call,
        builder: tuple[tuple[str, ...], int | None],
        fn: Function | None,
        facts: ModuleFacts,
        depth: int,
    ) -> None:
        """``pydantic_function_tool(AddExpense)``, or ``[pydantic_function_tool(c) for c in
        TOOLS]``: the project classes (and functions) the builder makes specs of, each
        named as the call names it or after itself."""
        keywords, position = builder
        handed = next((call.kwargs[k] for k in keywords if k in call.kwargs), None)
        if handed is None and position is not None and position < len(call.args):
            handed = call.args[position]
        if handed is None:
            return
        named = call.kwargs.get("name")
        # a comprehension's element: what the comprehension walks
        walked = [
            loop.iterable
            for loop in (fn.loops if fn is not None else facts.loops)
            if loop.kind == "comprehension"
            and loop.iterable is not None
            and handed.text in loop.targets
            and loop.span.encloses(call.span)
        ]
        outer = self._building
        self._building = (facts, Location(facts.path, call.span), named.string() if named else None)
        try:
            for held in walked or [handed]:
                self.value(held, fn, facts, depth + 1)
        finally:
            self._building = outer

    def _plugins(
        self, module: Value, attribute: Value, loader: Function, facts: ModuleFacts, at: Span
    ) -> None:
        """``getattr(module, name)`` (or ``module.tool_export``) on each module a loader
        loads from a plugin folder (or the function it answers called: ``get_schema(
        config)``, a hook that writes the spec): each module of the folder that defines it
        gives a tool."""
        described = attribute.string()
        taken = taken_from(self.project, module.text, loader, facts)
        runner = kept_runner(taken, loader, facts)
        site = Location(facts.path, at)
        for plugin in plugin_modules(self.project, taken):
            tool = plugin_tool(self.project, plugin, described, runner)
            if tool is not None:
                self.plugins.setdefault(tool[1], (tool[0], site))

    def _described(
        self, call: Call, target: str, fn: Function | None, facts: ModuleFacts, depth: int
    ) -> None:
        """``generate_schema(func)`` with the spec's name read from its parameter
        (``func.__name__``): the function writes the spec of what it is handed."""
        spec = spec_returns(self.project, target)
        named = spec.get("name") if spec is not None else None
        if named is None or named.kind != "attr":
            return
        writer = self.project.function(target)
        param = named.text.partition(".")[0]
        if writer is None or param not in writer.params or param in SELF_NAMES:
            return
        position = [p for p in writer.params if p not in SELF_NAMES].index(param)
        handed = call.kwargs.get(param)
        if handed is None and position < len(call.args):
            handed = call.args[position]
        if handed is not None:
            self.value(handed, fn, facts, depth + 1)

    def _scrubbed(
        self, obj: Value, attribute: Value, fn: Function, facts: ModuleFacts, depth: int
    ) -> bool:
        """``for name in dir(obj): method = getattr(obj, name)`` kept when ``hasattr(method,
        "is_tool")``: the methods of ``obj``'s classes that a project decorator marks so
        (``setattr(func, "is_tool", True)``)."""
        scans = [
            loop
            for loop in fn.loops
            if attribute.kind == "name"
            and attribute.text in loop.targets
            and loop.iterable is not None
            and loop.iterable.kind == "call"
            and loop.iterable.qualname == "dir"
            and [a.text for a in loop.iterable.call_args] == [obj.text]
        ]
        if not scans:
            return False
        marks = {
            mark
            for call in self.project.calls_in(fn.qualname)
            if call.callee in {"hasattr", "getattr"} and len(call.args) >= 2
            if (mark := call.args[1].string())
        }
        if not marks:
            return False
        reached, self._reached = self._reached, set()
        self.value(obj, fn, facts, depth + 1)
        classes, self._reached = self._reached, reached
        for cls_qual in sorted(classes):
            for current in self.project.lineage(cls_qual):
                entry = self.project.classes.get(current)
                for method in entry[0].methods if entry else ():
                    defined = self.project.functions.get(method)
                    if defined is not None and self._marked(defined[0], defined[1], marks):
                        where = Location(defined[1].path, defined[0].name_span)
                        self.functions.setdefault(method, where)
        return True

    def _marked(self, method: Function, facts: ModuleFacts, marks: set[str]) -> bool:
        """Whether a project decorator of ``method`` sets one of ``marks`` on it."""
        for decorator in method.decorators:
            marker = self.project.project_function(decorator.qualname, facts)
            if marker is not None and marks & _marks_set(self.project, marker):
                return True
        return False

    def _unresolved(
        self, value: Value, fn: Function | None, facts: ModuleFacts, depth: int
    ) -> None:
        """A call the facts hold no site for (a module-level value): its spec keywords."""
        for name, held in value.call_kwargs.items():
            if name in self.keys:
                self.value(held, fn, facts, depth + 1)

    def _returns(self, qualname: str, depth: int) -> None:
        if qualname in self.spec_functions:
            return
        callee, callee_facts = self.project.functions[qualname]
        if spec_returns(self.project, qualname) is not None:
            self.spec_functions.add(qualname)
            # ``fn = getattr(commands, name)`` in the function writing the spec: the spec
            # describes a function of that project module, chosen by name
            for call in self.project.calls_in(qualname):
                if call.callee == "getattr" and call.args:
                    self._scanned(call.args[0], callee_facts)
            return
        for returned in callee.returns:
            self.value(returned, callee, callee_facts, depth + 1)


def _taken_attribute(
    project: ProjectIndex, call: Call, fn: Function | None, facts: ModuleFacts
) -> Value | None:
    """The ``getattr(obj, name)`` a call is, or whose answer it calls (``hook =
    getattr(module, "get_schema")``, then ``hook(config)``)."""
    if call.callee == "getattr" and len(call.args) >= 2:
        return Value(kind="call", text=call.text, qualname="getattr", call_args=call.args)
    if fn is None or not call.callee.isidentifier():
        return None
    for assignment in project.local_assignments(facts, fn.qualname, call.callee):
        held = assignment.value
        if held.kind == "call" and held.qualname == "getattr" and len(held.call_args) >= 2:
            return held
    return None


def _project_class(project: ProjectIndex, value: Value, facts: ModuleFacts) -> str | None:
    """The project class a name or a dotted name refers to, if any."""
    for qualname in (value.qualname, facts.imports.get(value.text), f"{facts.module}.{value.text}"):
        if qualname and qualname in project.classes:
            return qualname
    return None


def _subscripted(text: str) -> str | None:
    """The container a subscript reads (``self._schemas`` of ``self._schemas[name]``)."""
    head, bracket, _ = text.partition("[")
    if not bracket or not text.endswith("]"):
        return None
    parts = head.split(".")
    if all(part.isidentifier() for part in parts) and (
        len(parts) == 1 or (len(parts) == 2 and parts[0] in SELF_NAMES)
    ):
        return head
    return None


def _element_text(comprehension: str) -> str:
    """The element a list comprehension's text builds (``self._specs[name]`` of
    ``[self._specs[name] for name in names]``), or "" when it is no list comprehension."""
    if not comprehension.startswith("[") or " for " not in comprehension:
        return ""
    return comprehension[1:].partition(" for ")[0].strip()


def _wrapped(project: ProjectIndex, value: Value, fn: Function | None) -> Value | None:
    """What a wrapper nested in ``fn`` wraps (``@functools.wraps(tool_function)`` on
    ``async def _tool(...)``): the wrapper passes for it."""
    if fn is None:
        return None
    nested = project.function(f"{fn.qualname}.<locals>.{value.text}")
    for decorator in nested.decorators if nested is not None else ():
        if decorator.qualname == "functools.wraps" and decorator.args:
            return decorator.args[0]
    return None


def _marks_set(project: ProjectIndex, marker: str) -> set[str]:
    """The attributes the project function ``marker`` sets on the function it is handed
    (``setattr(func, "is_tool", True)``, ``func.is_tool = True``)."""
    fn = project.function(marker)
    if fn is None or not fn.params:
        return set()
    param = fn.params[0]
    marks = {
        mark
        for call in project.calls_in(marker)
        if call.callee == "setattr" and len(call.args) >= 2 and call.args[0].text == param
        if (mark := call.args[1].string())
    }
    facts = project.functions[marker][1]
    for assignment in facts.attribute_sets:
        head, _, attr = assignment.target.partition(".")
        if assignment.function == marker and head == param and attr.isidentifier():
            marks.add(attr)
    return marks


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    """The tools traced back from the model API calls that take specs, and from the
    framework registrations handed a computed list (``create_react_agent(model, tools)``
    with ``tools`` built from the project's own registry)."""
    sinks = project.catalog.spec_sinks
    bodies = project.catalog.request_bodies
    body_keys = {keyword for entry in sinks.entries() for keyword in entry}
    registries = project.catalog.tool_forms["registry"]
    trace: _Trace | None = None
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for site in project.call_sites(facts):
            call = site.call
            kwargs = sinks.first(site.callee, call.callee) if sinks else None
            registry = registries.first(site.callee, call.callee) if kwargs is None else None
            body = bodies.first(site.callee, call.callee) if kwargs is None else None
            if body is not None and any(name in call.kwargs for name in body):
                # ``client.post(url, json=body)`` with ``body["tools"] = [...]``: a model's
                # REST request; only its spec keys are followed
                if trace is None:
                    trace = _Trace(project, {"tools"})
                trace.keys.update(body_keys)
                caller = project.function(call.function) if call.function else None
                for name in body:
                    if name in call.kwargs:
                        trace.value(call.kwargs[name], caller, facts, 0)
                continue
            if kwargs is None and (registry is None or registry.tools is None):
                continue
            if trace is None:
                trace = _Trace(project, {"tools"})
            caller = project.function(call.function) if call.function else None
            if registry is not None:
                listed = argument_at(call.args, call.kwargs, registry.tools)
                if listed is not None:
                    trace.value(listed, caller, facts, 0)
                continue
            assert kwargs is not None
            trace.keys.update(kwargs)
            for name in kwargs:
                held = call.kwargs.get(name)
                if held is not None:
                    trace.value(held, caller, facts, 0)
            for star in call.star_kwargs_values:
                trace.value(star, caller, facts, 0)
    trace = _from_spec_writers(project, trace)
    if trace is None:
        return
    yield from _tools(project, found, trace)


def _from_spec_writers(project: ProjectIndex, trace: _Trace | None) -> _Trace | None:
    """Follow back, as from a sink, what the project's spec writers walk: a function that
    returns a tool spec written for each element of a collection (``[{"name": t.name,
    "description": t.description, "parameters": t.schema()} for t in TOOLS]``, or ``[t.
    to_schema() for t in self.tools.values()]`` with a method writing that spec from
    ``self``) describes those elements to whatever reads the specs (a model's prompt, a
    protocol's listing), wherever the specs go next."""
    spec_methods = _spec_methods(project)
    for facts in project.modules.values():
        if facts.is_test:
            continue
        spans = [d.span for d in facts.dicts if d.span is not None and _per_element_spec(d.items)]
        for fn in facts.functions.values():
            for returned in fn.returns:
                span = returned.span
                if returned.kind != "other" or span is None:
                    continue
                writes = any(span.encloses(inner) for inner in spans) or any(
                    "." in call and call.rpartition(".")[2] in spec_methods
                    for call in returned.calls
                )
                if writes and any(
                    loop.kind == "comprehension" and span.encloses(loop.span) for loop in fn.loops
                ):
                    if trace is None:
                        trace = _Trace(project, {"tools"})
                    trace.value(returned, fn, facts, 0)
    return trace


def _spec_methods(project: ProjectIndex) -> frozenset[str]:
    """The names of the project's methods that write a tool spec from their object
    (``{"name": self.name, "description": ..., "parameters": ...}``)."""
    found: set[str] = set()
    for cls, facts in project.classes.values():
        if facts.is_test:
            continue
        for method in cls.methods:
            spec = spec_returns(project, method)
            if spec is not None and describes_a_tool(spec) and spec["name"].kind == "attr":
                found.add(method.rpartition(".")[2])
    return frozenset(found)


def _per_element_spec(items: dict[str, Value]) -> bool:
    """A tool spec written from an element: its name read from it (not a literal), beside
    a description and a parameter schema."""
    return describes_a_tool(items) and items["name"].kind in {"attr", "call"}


def _spec_classes(project: ProjectIndex, trace: _Trace) -> dict[str, set[str]]:
    """The classes whose method writes a spec reaching a sink, with that method's names."""
    classes: dict[str, set[str]] = {}
    for qualname in trace.spec_functions:
        owner, _, method = qualname.rpartition(".")
        if owner in project.classes:
            classes.setdefault(owner, set()).add(method)
    for method in sorted(trace.spec_names):
        for qualname in project.by_name.get(method, ()):
            owner = qualname.rpartition(".")[0]
            if owner not in project.classes or project.classes[owner][1].is_test:
                continue
            if project.is_interface_method(qualname) or spec_returns(project, qualname):
                classes.setdefault(owner, set()).add(method)
    return classes


def _tools(project: ProjectIndex, found: FoundTools, trace: _Trace) -> Iterator[ToolFacts]:
    spec_classes = _spec_classes(project, trace)
    if not (
        spec_classes
        or trace.instances
        or trace.functions
        or trace.named_specs
        or trace.plugins
        or trace.models
    ):
        return
    family = Family(project)
    taken = found.symbols()
    for base, methods in sorted(spec_classes.items()):
        for cls_qual in family.members(base):
            if cls_qual in taken or cls_qual not in family.bases:
                continue
            spec: dict[str, Value] | None = None
            for method in sorted(methods):
                written = project.find_method(cls_qual, method)
                spec = spec_returns(project, written) if written else None
                if spec is not None:
                    break
            if spec is None:
                continue
            name = static_string(project, family, cls_qual, spec.get("name"))
            entry = entry_method(project, family, cls_qual, methods)
            if not name or entry is None:
                continue
            taken.add(cls_qual)
            yield from class_tools(project, cls_qual, name, entry, FORM)
    yield from _instance_tools(project, family, taken, trace.instances)
    dispatching = DispatchingModules(project)
    for cls_qual, (facts, site, named) in sorted(trace.models.items()):
        if cls_qual in taken:
            continue
        name = named or cls_qual.rsplit(".", 1)[-1]
        entry = entry_method(project, family, cls_qual, set())
        if entry is not None:
            taken.add(cls_qual)
            yield from class_tools(project, cls_qual, name, entry, FORM)
            continue
        # a model of the call's arguments only: the dispatch runs a function for its name
        trace.named_specs.setdefault(name, (facts, site, "openai"))
    for name, (facts, site, framework) in sorted(trace.named_specs.items()):
        code = trace.spec_code.get(name)
        if code is not None and code not in taken and not found.any_runs(code):
            tool = function_tool(project, code, ToolForm(framework, "schema-dict"), site, name, {})
        else:
            tool = named_spec_tool(project, found, dispatching, name, facts, site, framework, None)
        if tool is not None and tool.symbol not in taken:
            taken.add(tool.symbol)
            yield tool
    # the plugins' runners, named by their plugin; then the functions handed over, by their own
    handed: list[tuple[str, Location, str | None]] = [
        (runs, site, name) for runs, (name, site) in sorted(trace.plugins.items())
    ]
    handed += [(qualname, site, None) for qualname, site in sorted(trace.functions.items())]
    for qualname, site, named in handed:
        if qualname in taken or found.any_runs(qualname):
            continue
        tool = function_tool(project, qualname, FORM, site, named, {})
        if tool is not None:
            taken.add(qualname)
            yield tool


def _instance_tools(
    project: ProjectIndex, family: Family, taken: set[str], instances: set[str]
) -> Iterator[ToolFacts]:
    """The classes whose instances the specs are written from in place (``[{"name": t.name,
    "description": t.description, ...} for t in self.tools]``): each that gives itself a
    name and a description or schema, and has a method the dispatch runs."""
    _, spec = structural_spec(project)
    if spec is None:
        return
    names = list(spec.get("name_attributes") or [])
    declares = list(spec.get("declaration_attributes") or [])
    for cls_qual in sorted(instances):
        if cls_qual in taken:
            continue
        records = _record_tools(project, cls_qual, names)
        if records:
            taken.add(cls_qual)
            yield from records
            continue
        if cls_qual not in family.bases:
            continue
        name = next((n for a in names if (n := self_string(project, family, cls_qual, a))), None)
        if not name or not any(gives(project, family, cls_qual, a) for a in declares):
            continue
        entry = entry_method(project, family, cls_qual, set())
        if entry is None:
            continue
        taken.add(cls_qual)
        yield from class_tools(project, cls_qual, name, entry, FORM)


def _record_tools(project: ProjectIndex, cls_qual: str, names: list[str]) -> list[ToolFacts]:
    """A record class of no code of its own (a dataclass, a model) whose constructions each
    name a tool with a literal string and hand it the project function that runs it
    (``ToolSpec(name="restart_service", description=..., handler=restart_service)``): each
    construction is a tool, run by that function. The field holding it is the one the
    project calls (``spec.handler(args)``, ``pool.submit(spec.handler, args)``)."""
    cls = project.classes.get(cls_qual)
    if cls is None or any(not m.endswith(".__post_init__") for m in cls[0].methods):
        return []
    called = _called_fields(project, cls_qual)
    form = ToolForm("custom", "record")
    tools: list[ToolFacts] = []
    for call, facts in project.calls_to(cls_qual):
        if facts.is_test:
            continue
        named = next((call.kwargs[a] for a in names if a in call.kwargs), None)
        if named is None and call.args:
            named = call.args[0]
        name = project.constant_string(named) if named is not None else None
        runs = [
            target
            for field_name, handed in call.kwargs.items()
            if field_name in called
            and (target := project.project_function(handed.qualname or handed.text, facts))
        ]
        if name and len(runs) == 1:
            site = Location(facts.path, call.span)
            tool = function_tool(project, runs[0], form, site, name, {})
            if tool is not None:
                tools.append(tool)
    return tools


def _called_fields(project: ProjectIndex, cls_qual: str) -> set[str]:
    """The fields of the record class ``cls_qual`` that the project calls: declared on the
    class, and called as a method of something (``spec.handler(args)``) or handed to a
    callable runner (``pool.submit(spec.handler, args)``) anywhere in the project."""
    cls = project.classes[cls_qual][0]
    fields = set(cls.field_types) | set(cls.attributes)
    if not fields:
        return set()

    def work_out() -> set[str]:
        found: set[str] = set()
        runners = project.catalog.callable_runners
        for facts in project.modules.values():
            for call in facts.calls:
                if call.method in fields and call.receiver:
                    found.add(call.method)
                elif runners(call.callee) is not None:
                    for value in call.args[:1]:
                        attribute = value.text.rpartition(".")[2]
                        if value.kind == "attr" and attribute in fields:
                            found.add(attribute)
        return found

    return project.remembered(("called fields", cls_qual), work_out)
