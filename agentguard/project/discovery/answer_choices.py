"""Finder: tools a model picks by the shape of its answer.

A project may ask for a structured answer instead of tool calls: it hands a model API the
schema the answer must fit (the catalogue's ``tool_functions.answer_schemas``:
``chat.completions.parse(response_format=Reply)``, Ollama's
``chat(format=Reply.model_json_schema())``), and a field of that model is typed as a union
of models, each tagged by a ``Literal`` string::

    class SendMessage(BaseModel):
        tool_type: Literal["send_message"]
        content: str

    class Reply(BaseModel):
        reasoning: str
        tool_args: Union[SendMessage, RollDice]

In TypeScript the schema is a zod value (the AI SDK's ``generateObject({schema})``)::

    const action = z.discriminatedUnion("type", [
      z.object({ type: z.literal("search"), query: z.string() }),
      z.object({ type: z.literal("answer") }),
    ]);

The model chooses a tool by answering with one member; the project then branches on the
tag (``if reply.tool_args.tool_type == "send_message":``, ``switch (action.type)``). Each member is a tool named by
its tag, declared by its class, run by the branch (or the function) the project's dispatch
on that name runs. The schema is found from the call that hands it over, never from the
shape of the classes alone: a tagged union that only parses requests is no tool.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.branch_tools import (
    DispatchingModules,
    branch_tool,
    dispatching_modules,
)
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.dispatch import branches_by_name
from agentguard.project.discovery.schema_dicts import named_spec_tool
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

FRAMEWORK = "structured-output"
BRANCH_FORM = ToolForm(FRAMEWORK, "answer-choice-branch")
# What a pydantic model's schema is handed over as, besides the class itself.
_SCHEMA_METHODS = ("model_json_schema", "schema")
# How deep aliases of unions are followed (``ToolArgs = Union[...]``, ``Optional[ToolArgs]``).
MAX_ALIAS_DEPTH = 3


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    sinks = project.catalog.answer_schemas
    # most projects hand no answer schema: their call sites are never walked
    resolved = project.callees_matching(sinks, resolved=True)
    written = project.callees_matching(sinks, resolved=False)
    if not (resolved or written):
        return
    models: list[str] = []
    zod_members: list[tuple[str, Location]] = []
    asking: set[str] = set()  # the modules that ask for an answer of a known shape
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for sink in project.call_sites(facts):
            if sink.callee not in resolved and sink.call.callee not in written:
                continue
            spec = sinks.first(sink.callee, sink.call.callee)
            if spec is None:
                continue
            keywords, position = spec
            for keyword in keywords:
                handed = sink.call.kwargs.get(keyword)
                if handed is None and position is not None and position < len(sink.call.args):
                    handed = sink.call.args[position]
                if facts.language != "python":
                    zod_found = _zod_members(project, handed, facts)
                    zod_members += zod_found
                    if zod_found:
                        asking.add(facts.module)
                    continue
                model = _model_class(project, handed)
                if model is not None:
                    asking.add(facts.module)
                    if model not in models:
                        models.append(model)
    if not (models or zod_members):
        return
    dispatching = DispatchingModules(project)
    by_tag = dispatching_modules(project)
    if zod_members:
        handling = _dispatching_module(by_tag, [tag for tag, _ in zod_members], asking)
        for tag, site in dict(zod_members).items():
            branch = _branch_on(project, handling, tag)
            if branch is not None and handling is not None:
                if not found.named_in(tag, handling.path):
                    yield branch_tool(project, tag, handling, site, {}, branch, BRANCH_FORM)
    for model in models:
        members = _tagged_members(project, model)
        tags = {member: next(iter(project.classes[member][0].tags.values())) for member in members}
        handling = _dispatching_module(by_tag, list(tags.values()), asking)
        for member in members:
            cls, cls_facts = project.classes[member]
            tag = tags[member]
            site = Location(cls_facts.path, cls.span)
            branch = _branch_on(project, handling, tag)
            if branch is not None and handling is not None:
                if not found.named_in(tag, handling.path):
                    yield branch_tool(project, tag, handling, site, {}, branch, BRANCH_FORM)
                continue
            tool = named_spec_tool(
                project, found, dispatching, tag, cls_facts, site, FRAMEWORK, None
            )
            if tool is not None:
                yield tool


def _branch_on(
    project: ProjectIndex, handling: ModuleFacts | None, tag: str
) -> tuple[str, Span, list[str]] | None:
    """The one branch on ``tag`` in the module handling the answer, with the project
    functions it runs: the tool, since all it does runs for that answer."""
    branches = branches_by_name(project, handling).get(tag, []) if handling else []
    if len(branches) != 1 or handling is None:
        return None
    handler, body = branches[0]
    targets = project.targets_on_lines(handler, body.line, body.end_line, handling)
    return handler, body, list(targets)


def _dispatching_module(
    by_tag: dict[str, list[ModuleFacts]], tags: list[str], asking: set[str]
) -> ModuleFacts | None:
    """The module that branches on most of a union's tags (the project's handler of the
    answer); on a tie, one that asks for the answer or imports from a module that does (a
    page that only draws each kind of answer does neither), then the first by path; None
    when no module branches on any."""
    counts: dict[str, int] = {}
    modules: dict[str, ModuleFacts] = {}
    for tag in tags:
        for facts in by_tag.get(tag, ()):
            counts[facts.path] = counts.get(facts.path, 0) + 1
            modules[facts.path] = facts

    def near_the_question(facts: ModuleFacts) -> bool:
        return facts.module in asking or any(
            imported.rpartition(".")[0] in asking for imported in facts.imports.values()
        )

    if not counts:
        return None
    best = max(sorted(counts), key=lambda path: (counts[path], near_the_question(modules[path])))
    return modules[best]


def _model_class(project: ProjectIndex, value: Value | None) -> str | None:
    """The project class an answer schema is given as: the class itself, or its schema
    (``Reply.model_json_schema()``)."""
    if value is None or value.kind not in {"name", "attr", "call"} or not value.qualname:
        return None
    named = value.qualname.replace("()", "")
    if value.kind == "call":
        owner, _, method = named.rpartition(".")
        if method not in _SCHEMA_METHODS:
            return None
        named = owner
    return named if named in project.classes else None


def _tagged_members(project: ProjectIndex, model: str) -> list[str]:
    """The members of the tagged unions ``model``'s fields are typed as: project classes
    with one ``Literal`` tag, of the same field as the union's other members, two at least."""
    cls, facts = project.classes[model]
    found: list[str] = []
    for names in cls.field_types.values():
        members = [
            member
            for name in names
            for member in _union_names(project, name, facts, 0)
            if member in project.classes and len(project.classes[member][0].tags) == 1
        ]
        fields = {next(iter(project.classes[m][0].tags)) for m in members}
        if len(set(members)) >= 2 and len(fields) == 1:
            found += [m for m in dict.fromkeys(members) if m not in found]
    return found


def _union_names(project: ProjectIndex, name: str, facts: ModuleFacts, depth: int) -> list[str]:
    """``name`` itself, or what the alias it names is made of (``ToolArgs = Union[A, B]``)."""
    if name in project.classes or depth > MAX_ALIAS_DEPTH:
        return [name]
    held = project.module_variable(name)
    if held is None or held.kind != "other":
        return [name]
    module = name.rpartition(".")[0]
    owner = project.modules_by_name.get(module, facts)
    found: list[str] = []
    for bare in held.names:
        resolved = owner.imports.get(bare) or f"{owner.module}.{bare}"
        found += _union_names(project, resolved, owner, depth + 1)
    return found


def _zod_members(
    project: ProjectIndex, value: Value | None, facts: ModuleFacts
) -> list[tuple[str, Location]]:
    """The tags of a zod union of tagged objects and where each member is written:
    ``z.discriminatedUnion("type", [z.object({type: z.literal("search"), ...}), ...])``, or
    ``z.union([...])`` whose objects all tag the same field; the value may be a module
    variable of this module or another."""
    value, facts = _zod_value(project, value, facts)
    if value is None or value.kind != "call" or not value.qualname:
        return []
    kind = value.qualname.rpartition(".")[2]
    if kind == "discriminatedUnion" and len(value.call_args) >= 2:
        field_name = value.call_args[0].string()
        listed = value.call_args[1]
    elif kind == "union" and value.call_args:
        field_name, listed = None, value.call_args[0]
    else:
        return []
    if listed.kind != "list":
        return []
    tagged: list[tuple[str, str, Location]] = []
    for element in listed.elements:
        member, member_facts = _zod_value(project, element, facts)
        if member is None or member.kind != "call" or not member.call_args:
            continue
        if (member.qualname or "").rpartition(".")[2] != "object" or member.span is None:
            continue
        shape = member.call_args[0]
        for name, held in shape.items.items() if shape.kind == "dict" else ():
            literal = held.call_args[0].string() if held.kind == "call" and held.call_args else None
            if (
                (held.qualname or "").endswith(".literal")
                and literal
                and field_name in (None, name)
            ):
                tagged.append((name, literal, Location(member_facts.path, member.span)))
                break
    if len(tagged) < 2 or len({name for name, _, _ in tagged}) != 1:
        return []
    return [(tag, site) for _, tag, site in tagged]


def _zod_value(
    project: ProjectIndex, value: Value | None, facts: ModuleFacts
) -> tuple[Value | None, ModuleFacts]:
    """A zod value as written, through the module variable a name holds (``schema:
    actionSchema``, imported or not), with the module it is written in: the names inside it
    are that module's."""
    if value is None or value.kind != "name":
        return value, facts
    # an imported name, else one of this module's (a TypeScript name's own qualname is the
    # type of what it holds: ``npm:zod.z.object()``)
    qualname = facts.imports.get(value.text) or f"{facts.module}.{value.text}"
    held = project.module_variable_in(qualname) or project.module_variable_in(value.qualname)
    if held is None:
        return None, facts
    return held[0], project.modules.get(held[1], facts)
