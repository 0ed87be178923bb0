"""What makes a project class a tool once its provenance is known: the family below a base,
the method its dispatch runs, the name it gives itself, and the sub-tools its entry method
picks by an attribute set when it is built.

Shared by the finders that reach tool classes from where they enter a model (a spec handed
to a model API, a class loaded by the name the model answers with); they decide that a
class is a tool, these helpers say what the tool is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import framework_bases
from agentguard.project.discovery.candidates import class_tool, model_params
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

# ``typing.cast(T, value)`` is ``value`` at run time.
_CASTS = frozenset({"typing.cast", "typing_extensions.cast"})


class Family:
    """The project's classes by their project bases, nearest first, worked out once per
    finder (linear in the classes and their chains)."""

    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        self.bases: dict[str, list[str]] = {}
        self.below: dict[str, list[str]] = {}
        for qualname, (_, facts) in project.classes.items():
            if facts.is_test:
                continue
            chain = [b for b in framework_bases(project, qualname) if b in project.classes]
            self.bases[qualname] = chain
            for base in chain:
                self.below.setdefault(base, []).append(qualname)

    def members(self, base: str) -> list[str]:
        """``base`` and every project class below it, in a stable order."""
        return [base, *sorted(set(self.below.get(base, ())))]

    def lineage(self, cls_qual: str) -> list[str]:
        return [cls_qual, *self.bases.get(cls_qual, ())]


def _abstract(project: ProjectIndex, qualname: str | None) -> bool:
    return qualname is None or project.is_interface_method(qualname)


# What makes a method read like an attribute: a tool's ``name`` or ``parameters`` written
# as a property describes the tool; it is not what the dispatch runs.
_PROPERTIES = frozenset({"property", "functools.cached_property", "abc.abstractproperty"})


def is_property(project: ProjectIndex, qualname: str) -> bool:
    """Whether the method ``qualname`` is read as an attribute (``@property``,
    ``@cached_property``)."""
    fn = project.function(qualname)
    return fn is not None and any(d.qualname in _PROPERTIES for d in fn.decorators)


def declared_value(project: ProjectIndex, cls_qual: str, attr: str) -> Value | None:
    """What the class itself gives ``attr``: a class attribute, or what a property so named
    returns (``@property def name(self): return "cron_create"``) when it returns one thing;
    None when it gives none."""
    written = project.classes[cls_qual][0].attributes.get(attr)
    if written is not None:
        return written
    qualname = f"{cls_qual}.{attr}"
    if qualname not in project.classes[cls_qual][0].methods or not is_property(project, qualname):
        return _handed_to_base(project, cls_qual, attr)
    fn = project.function(qualname)
    returned = fn.returns if fn is not None else []
    if len(returned) != 1:
        return None
    value = returned[0]
    held = value.text[5:] if value.kind == "attr" and value.text.startswith("self.") else ""
    if held.isidentifier():
        # ``return self._name`` with ``self._name = "weekday_recurrence"`` in the class's
        # constructor: the string it keeps there
        facts = project.classes[cls_qual][1]
        kept = project.local_assignments(facts, f"{cls_qual}.__init__", value.text)
        if len(kept) == 1 and kept[0].value.string() is not None:
            return kept[0].value
    return value


def _handed_to_base(project: ProjectIndex, cls_qual: str, attr: str) -> Value | None:
    """What the class's own constructor hands its base's for ``attr`` (``super().__init__(
    name="get_time", description=..., parameters={...})``): by keyword, or by the position
    of the base constructor's parameter so named."""
    init = f"{cls_qual}.__init__"
    entry = project.functions.get(init)
    if entry is None:
        return None
    fn, facts = entry
    for call in project.calls_in(init):
        if not call.callee.endswith("__init__"):
            continue
        target = project.call_target(call, fn, facts)
        if target is None or target == init or not target.endswith(".__init__"):
            continue
        if attr in call.kwargs:
            return call.kwargs[attr]
        base = project.function(target)
        params = [p for p in base.params if p not in SELF_NAMES] if base else []
        if attr in params and params.index(attr) < len(call.args):
            return call.args[params.index(attr)]
    return None


def entry_method(
    project: ProjectIndex, family: Family, cls_qual: str, skip: set[str]
) -> str | None:
    """The method the project's dispatch runs on an instance of ``cls_qual``: the concrete
    override of a hook its bases leave abstract (``execute``, ``__call__``, ``run``), else
    its ``__call__``, else its one public method; ``skip`` names the methods that describe
    the tool (its spec method) rather than run it."""
    hooks: list[str] = []
    for current in family.lineage(cls_qual):
        for method in project.classes[current][0].methods:
            name = method.rsplit(".", 1)[-1]
            if name in skip or name in hooks:
                continue
            if name.startswith("__") and name != "__call__":
                continue
            if is_property(project, method):
                continue  # ``name``, ``parameters``: what describes the tool
            if project.is_interface_method(method):
                hooks.append(name)
    for hook in hooks:
        found = project.find_method(cls_qual, hook)
        if not _abstract(project, found):
            return found
    if hooks:
        return None  # the hook is left abstract: a base, not a tool
    called = project.find_method(cls_qual, "__call__")
    if not _abstract(project, called):
        return called
    cls = project.classes[cls_qual][0]
    public = [
        m
        for m in cls.methods
        if not m.rsplit(".", 1)[-1].startswith("_")
        and m.rsplit(".", 1)[-1] not in skip
        and m in project.functions
        and not is_property(project, m)
    ]
    return public[0] if len(public) == 1 else None


def static_string(
    project: ProjectIndex, family: Family, cls_qual: str, value: Value | None
) -> str | None:
    """The string ``value`` is for an instance of ``cls_qual``: a literal, or ``self.attr``
    given a string by the class or a base (a class attribute, ``self.attr = "..."`` in a
    constructor, or ``super().__init__(attr="...")`` from a subclass's constructor). None
    when it comes from whoever builds the instance: a proxy for tools named elsewhere."""
    if value is None:
        return None
    if value.string():
        return value.string()
    text = value.text
    if value.kind != "attr" or text.count(".") != 1 or text.split(".", 1)[0] not in SELF_NAMES:
        return None
    return self_string(project, family, cls_qual, text.split(".", 1)[1])


def self_string(project: ProjectIndex, family: Family, cls_qual: str, attr: str) -> str | None:
    """The string the class (nearest first along its chain) gives ``self.<attr>``: a class
    attribute, a property returning a literal, or what its constructor sets."""
    for current in family.lineage(cls_qual):
        facts = project.classes[current][1]
        written = declared_value(project, current, attr)
        if written is not None and written.string():
            return written.string()
        init = f"{current}.__init__"
        for assignment in project.local_assignments(facts, init, f"self.{attr}"):
            if assignment.value.string():
                return assignment.value.string()
        for call in project.calls_in(init):
            if call.method == "__init__" and call.callee.startswith("super"):
                handed = call.kwargs.get(attr)
                if handed is not None and handed.string():
                    return handed.string()
    return None


def gives(project: ProjectIndex, family: Family, cls_qual: str, attr: str) -> bool:
    """Whether the class (or a base) gives ``self.<attr>`` a value of its own: a class
    attribute, an assignment in a constructor, or a keyword to ``super().__init__``."""
    for current in family.lineage(cls_qual):
        facts = project.classes[current][1]
        if declared_value(project, current, attr) is not None:
            return True
        init = f"{current}.__init__"
        if project.local_assignments(facts, init, f"self.{attr}"):
            return True
        if any(
            call.method == "__init__" and call.callee.startswith("super") and attr in call.kwargs
            for call in project.calls_in(init)
        ):
            return True
    return False


def spec_returns(project: ProjectIndex, qualname: str) -> dict[str, Value] | None:
    """The items of the tool spec a function returns: a dict literal with a ``name`` (or an
    OpenAI ``function`` / Bedrock ``toolSpec`` wrapping one), or an SDK's spec type built
    with a ``name`` keyword (Gemini's ``FunctionDeclaration``, Anthropic's ``ToolParam``)."""
    fn = project.function(qualname)
    for value in fn.returns if fn else ():
        spec = spec_items(value)
        if spec is not None:
            return spec
    return None


# The keys a tool spec holds its parameter schema under, in the model APIs' and MCP's forms.
PARAMETER_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")


# What a JSON Schema written as a dict literal holds at its top: a tool call's arguments
# (``{"name": "send_email", "parameters": {"to": address}}``) hold none of these.
_SCHEMA_WORDS = frozenset(
    {"type", "properties", "required", "$schema", "$ref", "anyOf", "oneOf", "allOf"}
)


def schema_shaped(value: Value) -> bool:
    """Whether ``value`` may be a parameter schema: anything but a non-empty dict literal
    without a JSON Schema keyword (that is a tool call's arguments)."""
    return value.kind != "dict" or not value.items or not _SCHEMA_WORDS.isdisjoint(value.items)


def has_parameter_schema(items: dict[str, Value]) -> bool:
    return any(key in items and schema_shaped(items[key]) for key in PARAMETER_SCHEMA_KEYS)


def describes_a_tool(items: dict[str, Value]) -> bool:
    """A spec as a model reads one: a name, a description and a parameter schema."""
    return "name" in items and "description" in items and has_parameter_schema(items)


def spec_items(value: Value) -> dict[str, Value] | None:
    if value.kind == "call" and value.qualname in _CASTS and value.call_args:
        value = value.call_args[-1]  # ``typing.cast(ToolParam, {...})`` is the dict
    if value.kind == "call" and "name" in value.call_kwargs:
        return value.call_kwargs  # a typed spec: ``FunctionDeclaration(name=..., ...)``
    if value.kind != "dict":
        return None
    items = value.items
    for wrapper in ("function", "toolSpec"):
        inner = items.get(wrapper)
        if inner is not None and inner.kind == "dict" and "name" in inner.items:
            return inner.items
    return items if "name" in items else None


def method_branches(project: ProjectIndex, entry: str) -> list[tuple[str, str]]:
    """The sub-tools an entry method picks by an attribute the instance was built with
    (``if self.method == "list_tasks": return await self.list_tasks(**kwargs)``): each
    branch's string and the method of the class it runs. Two branches at least; a branch
    testing a model argument (``command == "view"``) is one tool's option, not a tool."""
    fn = project.function(entry)
    cls_qual = entry.rsplit(".", 1)[0]
    if fn is None or cls_qual not in project.classes:
        return []
    calls = project.calls_in(entry)
    found: list[tuple[str, str]] = []
    for branch in fn.branches:
        test = branch.test
        if test.op != "==" or len(test.parts) != 2:
            continue
        sides = sorted(test.parts, key=lambda part: part.kind != "attr")
        subject, literal = sides
        head = subject.text.split(".", 1)[0]
        if subject.kind != "attr" or head not in SELF_NAMES or not literal.string():
            continue
        start, end = branch.body_order
        ran = [
            c
            for c in calls
            if start <= c.order < end
            and c.receiver in SELF_NAMES
            and project.find_method(cls_qual, c.method) not in {None, entry}
        ]
        if ran:
            method = project.find_method(cls_qual, ran[0].method)
            assert method is not None
            found.append((literal.string() or "", method))
    return found if len({m for _, m in found}) >= 2 else []


def class_tools(
    project: ProjectIndex,
    cls_qual: str,
    name: str,
    entry: str,
    form: ToolForm,
) -> list[ToolFacts]:
    """The tools a tool class is: itself, run by ``entry``, or one tool per method its
    entry picks by an attribute (``scheduler:list_tasks``)."""
    cls, facts = project.classes[cls_qual]
    branches = method_branches(project, entry)
    if not branches:
        return [class_tool(project, cls, facts, name, form, [entry])]
    tools: list[ToolFacts] = []
    for string, method in branches:
        fn, method_facts = project.functions[method]
        tools.append(
            ToolFacts(
                name=f"{name}:{string}",
                framework=form.framework,
                form=form.form,
                path=method_facts.path,
                anchor=Location(method_facts.path, fn.name_span),
                functions=[method],
                symbol=method,
                site=Location(facts.path, cls.name_span),
                params=model_params(project, fn),
                options=dict(cls.attributes),
                description=(fn.docstring or "").strip().split("\n", 1)[0],
            )
        )
    return tools
