"""Finder: tool classes a project defines for itself, found by their shape rather than their names.

Two shapes, each a documented way of handing tools to a model without a framework:

- A project base class with an abstract execution hook (``@abstractmethod``, a body that
  raises ``NotImplementedError`` or does nothing) whose concrete subclasses each declare a
  model-facing ``name`` string and a description or parameter schema, and override the
  hook: every such subclass is a tool named by its declared name. Several subclasses are
  asked for, so that one class with a ``name`` is not taken for a tool family, and a sign
  that the family is shown to a model (a parameter schema, or a base method describing an
  instance by its name and description), so that command and plugin tables are not.
- A class that describes itself to a model API: a method returning an OpenAI or Anthropic
  tool spec (a dict with ``input_schema``, or ``parameters`` with a ``name``, or a nested
  ``function`` dict) next to one execution method (``__call__`` or its one other public
  method).

What the attributes are called comes from ``structural_bases`` in rules/frameworks.yaml.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import ClassDef, Function, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import framework_bases
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import class_tool, function_tool
from agentguard.project.discovery.class_tools import (
    declared_value,
    describes_a_tool,
    is_property,
    spec_items,
)
from agentguard.project.discovery.framework_data import structural_spec
from agentguard.project.tool_facts import SELF_NAMES, ArgSpec, ToolFacts, argument_at

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def _is_abstract_hook(project: ProjectIndex, fn: Function) -> bool:
    if fn.name.startswith("__") and fn.name != "__call__":
        return False
    if is_property(project, fn.qualname):
        return False  # an abstract ``name`` property each tool fills in: a declaration
    if _abstract(fn):
        return True
    if any((r.qualname or r.text).split("(")[0].endswith("NotImplementedError") for r in fn.raises):
        return True
    # ``...`` or ``pass`` (a docstring allowed): nothing called, nothing returned
    return not fn.returns and not fn.raises and not project.calls_in(fn.qualname)


def _abstract(fn: Function) -> bool:
    """Whether ``fn`` is declared abstract (``@abstractmethod``)."""
    return any(d.qualname.rsplit(".", 1)[-1] == "abstractmethod" for d in fn.decorators)


def _own_method(project: ProjectIndex, cls: ClassDef, name: str) -> str | None:
    qualname = f"{cls.qualname}.{name}"
    return qualname if qualname in project.functions else None


def _declared_name(project: ProjectIndex, cls: ClassDef, attributes: list[str]) -> str | None:
    for attribute in attributes:
        value = declared_value(project, cls.qualname, attribute)
        if value is not None and value.string():
            return value.string()
    returned = _returned_spec(project, cls)
    return returned["name"].string() if returned is not None else None


def _declares(project: ProjectIndex, cls: ClassDef, attributes: list[str]) -> bool:
    """Whether the class gives one of ``attributes`` a value: a class attribute or a
    property returning it, or the spec one of its methods returns."""
    return any(declared_value(project, cls.qualname, a) is not None for a in attributes) or (
        _returned_spec(project, cls) is not None
    )


def _returned_spec(project: ProjectIndex, cls: ClassDef) -> dict[str, Value] | None:
    """The tool spec a method of the class itself returns, naming it with a literal
    (``def _get_schema(self): return ToolSchema(name="run_shell", description=...,
    parameters=[...])``): a name, a description and a parameter schema."""
    for method in cls.methods:
        entry = project.functions.get(method)
        for value in entry[0].returns if entry else ():
            items = spec_items(value)
            if items is not None and describes_a_tool(items) and items["name"].string():
                return items
    return None


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    framework, spec = structural_spec(project)
    if spec is None:
        return
    form = ToolForm(framework, "structural")
    names = list(spec.get("name_attributes") or [])
    declares = list(spec.get("declaration_attributes") or [])
    schemas = list(spec.get("schema_attributes") or [])
    least = int(spec.get("min_subclasses") or 2)
    known_bases = project.catalog.tool_forms["base_class"]
    taken = found.symbols()
    chains = {
        qualname: list(framework_bases(project, qualname))
        for qualname, (_, facts) in project.classes.items()
        if not facts.is_test
    }
    candidates = [
        (cls, facts)
        for cls, facts in project.classes.values()
        if not facts.is_test
        and not any(
            # a project's own ``BaseTool`` is no framework's, whatever its name: what it
            # extends, further up the chain, says whether it is
            known_bases(b) and b not in project.classes
            for b in chains[cls.qualname]
        )
    ]
    by_base: dict[str, list[ClassDef]] = {}
    for cls, _ in candidates:
        for base in chains[cls.qualname]:
            if base in project.classes:
                by_base.setdefault(base, []).append(cls)
    for base, subclasses in sorted(by_base.items()):
        base_cls = project.classes[base][0]
        hooks = [
            project.functions[m][0].name
            for m in base_cls.methods
            if m in project.functions and _is_abstract_hook(project, project.functions[m][0])
        ]
        if not hooks:
            continue
        tools: list[tuple[ClassDef, str, list[str]]] = []
        for cls in subclasses:
            name = _declared_name(project, cls, names)
            methods = [m for m in (_own_method(project, cls, h) for h in hooks) if m]
            if name and methods and _declares(project, cls, declares):
                tools.append((cls, name, methods))
        if len(tools) < least or not _model_facing(project, base_cls, tools, schemas, declares):
            continue
        for cls, name, methods in tools:
            if cls.qualname in taken:
                continue
            taken.add(cls.qualname)
            yield class_tool(project, cls, project.classes[cls.qualname][1], name, form, methods)
    for cls, facts in candidates:
        if cls.qualname not in taken:
            described = _self_described(project, cls, names)
            if described is None:
                continue
            taken.add(cls.qualname)
            if isinstance(described, list):
                # a class whose instances are named where they are built: each is a tool
                yield from described
                continue
            yield class_tool(project, cls, facts, described[0], form, [described[1]])


def _model_facing(
    project: ProjectIndex,
    base: ClassDef,
    tools: list[tuple[ClassDef, str, list[str]]],
    schemas: list[str],
    declares: list[str],
) -> bool:
    """Whether a family of named subclasses is handed to a model, not a plugin or command
    table: a parameter schema declared in the base or a subclass, or a method of the base
    describing an instance as a dict with its name and description or schema."""
    classes = [base, *(cls for cls, _, _ in tools)]
    if any(
        _declares(project, cls, schemas) or set(schemas) & set(cls.self_types) for cls in classes
    ):
        return True
    if all(_returned_spec(project, cls) is not None for cls, _, _ in tools):
        return True  # each returns a spec with its parameter schema
    for method in base.methods:
        entry = project.functions.get(method)
        for value in entry[0].returns if entry else ():
            # ``{"name": self.name, ...}``, or an OpenAI spec wrapping one
            keys = _tool_spec(value) or (value.items if value.kind == "dict" else {})
            if "name" in keys and any(k in keys for k in declares):
                return True
    return False


def _tool_spec(value: Value) -> dict[str, Value] | None:
    """The items of an OpenAI or Anthropic tool spec written as a dict, if ``value`` is one."""
    if value.kind != "dict":
        return None
    items = value.items
    if "function" in items and items["function"].kind == "dict":
        return items["function"].items
    if "input_schema" in items or ("parameters" in items and "name" in items):
        return items
    return None


def _self_described(
    project: ProjectIndex, cls: ClassDef, names: list[str]
) -> tuple[str, str] | list[ToolFacts] | None:
    """The name and the execution method of a class describing itself to a model API; or,
    when the name it gives is one its constructor is handed, the tools its constructions
    make (``_constructed``)."""
    if any(_abstract(project.functions[m][0]) for m in cls.methods if m in project.functions):
        return None  # an abstract class: its subclasses are the tools, never itself
    describing: Function | None = None
    spec: dict[str, Value] | None = None
    for method in cls.methods:
        fn = project.functions[method][0] if method in project.functions else None
        for value in fn.returns if fn else ():
            spec = _tool_spec(value)
            if spec is not None:
                describing = fn
                break
        if describing is not None:
            break
    if describing is None or spec is None:
        return None
    public = [
        m
        for m in cls.methods
        if m in project.functions
        and m != describing.qualname
        and not project.functions[m][0].name.startswith("_")
    ]
    entry = _own_method(project, cls, "__call__") or (public[0] if len(public) == 1 else None)
    if entry is None or project.is_interface_method(entry):
        return None  # no execution method, or one left to subclasses: a base, not a tool
    written = spec.get("name")
    constructed = _constructed(project, cls, written, entry) if written is not None else None
    if constructed is not None:
        return constructed
    name = (
        (written.string() if written else None) or _declared_name(project, cls, names) or cls.name
    )
    return name, entry


def _constructed(
    project: ProjectIndex, cls: ClassDef, written: Value, entry: str
) -> list[ToolFacts] | None:
    """``Tool(send_invoice, "send_invoice", ...)``: a class whose spec names it
    ``self.name``, set by its constructor from a parameter, and whose execution method calls
    the function another parameter hands it (``self.func(**args)``). The class is no tool
    itself; each construction naming a tool with a literal string and handing a project
    function is one, run by that function. None when the class names itself."""
    head, _, attr = written.text.partition(".")
    if head not in SELF_NAMES or not attr.isidentifier():
        return None
    init = project.find_method(cls.qualname, "__init__")
    init_fn = project.function(init) if init else None
    if init_fn is None:
        return None
    name_param = _param_kept_as(project, cls, init_fn, attr)
    if name_param is None:
        return None
    func_param = next(
        (
            param
            for call in project.calls_in(entry)
            if (call.callee.partition(".")[0] in SELF_NAMES and call.callee.count(".") == 1)
            and (param := _param_kept_as(project, cls, init_fn, call.callee.partition(".")[2]))
        ),
        None,
    )
    if func_param is None:
        return None  # its own code runs each instance: the class is the tool
    params = [p for p in init_fn.params if p not in SELF_NAMES]
    form = ToolForm("custom", "constructed")
    tools: list[ToolFacts] = []
    for call, facts in project.calls_to(cls.qualname):
        if facts.is_test:
            continue
        named = argument_at(call.args, call.kwargs, ArgSpec(params.index(name_param), name_param))
        handed = argument_at(call.args, call.kwargs, ArgSpec(params.index(func_param), func_param))
        name = project.constant_string(named) if named is not None else None
        runs = project.project_function(handed.qualname or handed.text, facts) if handed else None
        if name and runs:
            tool = function_tool(project, runs, form, Location(facts.path, call.span), name, {})
            if tool is not None:
                tools.append(tool)
    return tools


def _param_kept_as(project: ProjectIndex, cls: ClassDef, init: Function, attr: str) -> str | None:
    """The constructor parameter ``self.<attr>`` is set to, as handed."""
    for value in project.self_bindings(cls.qualname, attr):
        if value.kind == "name" and value.text in init.params:
            return value.text
    return None
