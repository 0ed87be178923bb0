"""Finder: tools handed, with a model, to an agent builder no catalogue names.

An agent framework's builder takes the model and the tools in one call, and that is what
puts the tools before a model, whatever the framework is called::

    const { executeAgent } = createAgent({
      model: 'gpt-5.2',
      systemPrompt,
      tools: { createTodo, getTodoList },
    })

    // tools/createTodo.ts
    export default createTool({
      async execute({ title }) { await db.task.create({ data: { title } }) },
      schema: { input: z.object({ title: z.string() }) },
    })

Each entry of the ``tools`` handed beside a ``model`` (or an ``llm``) to a call of a package
is a tool: a project function handed as it is, or the function a package's factory was
given to run (its ``execute``, ``handler``, ``run``, ``func``... field), named by the
entry's key or the factory's ``name``/``id``. A model API's own tool specs are data, not
functions, and name no tool here; a builder of the project's own is followed by the other
finders.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

FORM = ToolForm("custom", "agent-builder")
# Options that hand a builder its model.
_MODEL_KEYS = frozenset({"model", "llm"})
# Fields of a tool factory's options holding the function the tool runs.
_FUNCTION_FIELDS = ("execute", "handler", "run", "func", "fn", "invoke", "callback", "call")
# Fields of a tool factory's options naming the tool.
_NAME_FIELDS = ("name", "id")
# How many names a tools value is followed through (``tools: TOOLS``, ``TOOLS = [...]``).
_MAX_DEPTH = 3


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for call in facts.calls:
            options = _options(call, facts)
            if options is None or "tools" not in options or not _MODEL_KEYS & options.keys():
                continue
            caller = project.function(call.function) if call.function else None
            if project.call_target(call, caller, facts) is not None:
                continue  # the project's own builder
            if call.callee.split(".", 1)[0] in project.module_heads:
                continue
            site = Location(facts.path, call.span)
            for name, entry, held_in in _entries(project, options["tools"], call, facts, 0):
                made = _entry_function(project, entry, held_in)
                if made is None or found.any_runs(made[0]):
                    continue
                qualname, named = made
                tool = function_tool(project, qualname, FORM, site, name or named, {})
                if tool is not None:
                    yield tool


def _options(call: Call, facts: ModuleFacts) -> dict[str, Value] | None:
    """A builder's options: Python's keyword arguments, JavaScript's object argument."""
    if facts.language == "python":
        return call.kwargs or None
    first = call.args[0] if call.args else None
    return first.items if first is not None and first.kind == "dict" else None


def _entries(
    project: ProjectIndex, value: Value, call: Call, facts: ModuleFacts, depth: int
) -> Iterator[tuple[str | None, Value, ModuleFacts]]:
    """Each entry of a tools value, with its key (None in a list) and its module."""
    if value.kind == "dict":
        for key, entry in value.items.items():
            yield key, entry, facts
    elif value.kind == "list":
        for element in value.elements:
            yield None, element, facts
    elif value.kind in {"name", "attr"} and depth < _MAX_DEPTH:
        held = _held(project, value, call, facts)
        if held is not None:
            yield from _entries(project, held[0], call, held[1], depth + 1)


def _held(
    project: ProjectIndex, value: Value, call: Call, facts: ModuleFacts
) -> tuple[Value, ModuleFacts] | None:
    """What a name holds where ``call`` uses it, with the module it is written in."""
    caller = project.function(call.function) if call.function else None
    if caller is not None and project.local_assignments(facts, caller.qualname, value.text):
        local = project.held_value(value.text, caller, facts)
        return (local, facts) if local is not None else None
    return project.module_binding(
        value.qualname or facts.imports.get(value.text) or f"{facts.module}.{value.text}"
    )


def _entry_function(
    project: ProjectIndex, entry: Value, facts: ModuleFacts
) -> tuple[str, str | None] | None:
    """The project function an entry runs, with the name its factory gives it: the
    function itself, or the one a package's tool factory was handed (``createTool({
    execute })``), followed through the constant or default export the entry names."""
    if entry.kind in {"name", "attr"}:
        qualname = project.project_function(entry.qualname, facts)
        if qualname is not None:
            return qualname, None
        held = project.module_binding(entry.qualname)
        if held is None:
            return None
        entry, facts = held
    if entry.kind != "call" or project.project_function(entry.qualname, facts):
        return None
    spec = entry.call_args[0] if entry.call_args else None
    if spec is None or spec.kind != "dict":
        return None
    for field in _FUNCTION_FIELDS:
        handed = spec.items.get(field)
        qualname = project.project_function(handed.qualname, facts) if handed else None
        if qualname is not None:
            named = next(
                (n for n in (spec.items.get(f) for f in _NAME_FIELDS) if n and n.string()), None
            )
            return qualname, named.string() if named is not None else None
    return None
