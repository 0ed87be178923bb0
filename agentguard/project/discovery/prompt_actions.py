"""Finder: actions a prompt lists for the model to answer with, run by the project's branches.

A project may describe its tools in the prompt itself instead of handing a model API a
tools list: the prompt names the actions the model may answer with, the project parses
the answer (``json.loads`` of the model's text) and branches on the action's name::

    def build_prompt(instruction):
        return f'''Answer with JSON actions. ALLOWED ACTIONS:
    - create_channel: {{"type": "create_channel", "name": "string"}}
    - delete_channel: {{"type": "delete_channel", "name_or_id": "string"}}
    INSTRUCTION: {instruction}'''

    async def execute_action(guild, action):
        if action["type"] == "create_channel": ...
        elif action["type"] == "delete_channel": ...

Each name a function branches on and a prompt lists is a tool, run by the branch (or the
function the branch hands it to). A hand-written ReAct loop does the same with a table of
the project's functions: the prompt lists the names (or the project builds it by reading
the table whole, ``TOOLS.items()``), the model answers ``Action: cancel_order``, and the
loop looks the name up and calls what it finds (``TOOLS[name](arg)``); each function of
the table is a tool. The prompt must reach a model: it is written in a
function that calls a model (a model API, or an HTTP POST to a model's host), directly or
through the project's functions, or in one that a function reaching a model calls. And the
branching function must be run by such a function too. A help text listing a command
line's sub-commands reaches no model, and names no tool; a tool's own branches on one of
its arguments, listed in its description (``command: "view" | "create_file"``), are the
commands of that one tool.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Function, ModuleFacts, Step, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.branch_tools import branch_tool, inline_branch
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.discovery.dispatch import branch_name, dispatch_targets, entry_function
from agentguard.project.discovery.loop_rows import module_value
from agentguard.project.discovery.model_reach import ModelReach
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

FORM = ToolForm("custom", "prompt-actions")
# An action name as a prompt lists it: an identifier of two words at least for one of them
# (``create_channel``, ``sendEmail``), so that a yes/no answer is no list of actions.
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_SEVERAL_WORDS = re.compile(r"_|[a-z][A-Z]")
# A whole word of a prompt: a name written inside ``create-channel`` is no mention of it.
_WORD = re.compile(r"[\w-]+")
# The shortest text that can list two actions of several words (``a_b, c_d``).
_SHORTEST = 7


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    tables = list(_tables(project))
    dispatches = [*_dispatches(project), *((t.facts, t.lookup, t.names) for t in tables)]
    if not dispatches:
        return
    branched = {name for _, _, names in dispatches for name in names}
    # each text that mentions two branch names or more, as whole words, by name; a table
    # the project describes to the model (its names joined into a prompt) lists them all
    prompts: list[tuple[frozenset[str], str | None, Location]] = [
        (frozenset(t.names), holder, site) for t in tables for holder, site in t.described
    ]
    for text, text_holder, text_site in _prompt_texts(project):
        words = branched.intersection(_WORD.findall(text))
        if len(words) >= 2:
            prompts.append((frozenset(words), text_holder, text_site))
    by_name: dict[str, list[int]] = {}
    for index, (mentioned, _, _) in enumerate(prompts):
        for name in mentioned:
            by_name.setdefault(name, []).append(index)
    if not prompts:
        return
    reach: ModelReach | None = None
    for facts, handler, names in dispatches:
        if found.any_runs(handler):
            continue  # a tool's own branches on an argument: the commands of one tool
        candidates = sorted({index for name in names for index in by_name.get(name, ())})
        for words_in, holder, site in (prompts[index] for index in candidates):
            listed = [name for name in names if name in words_in]
            if len(listed) < 2 or not any(_SEVERAL_WORDS.search(n) for n in listed):
                continue
            if reach is None:
                reach = ModelReach(project)
            if not reach.near(holder) or not reach.near(handler):
                continue
            for name in listed:
                tool = _action_tool(project, found, facts, name, site)
                if tool is not None:
                    yield tool
            break


def _dispatches(project: ProjectIndex) -> Iterator[tuple[ModuleFacts, str, list[str]]]:
    """Each function that branches on two names at least, with those names."""
    for facts in project.modules.values():
        if facts.is_test or not facts.branches:
            continue
        by_handler: dict[str, list[str]] = {}
        for handler, string, _ in facts.branches:
            name = branch_name(project, string)
            if handler is not None and _IDENTIFIER.match(name):
                names = by_handler.setdefault(handler, [])
                if name not in names:
                    names.append(name)
        for handler, names in by_handler.items():
            if len(names) >= 2:
                yield facts, handler, names


class _Table(NamedTuple):
    """A dict of the project's functions by name that a function looks a name up in and
    calls what it finds (``TOOLS[name](arg)``, ``fn = self.tools.get(name)``, then
    ``fn(arg)``): the table's module, the looking-up function, the names, and where a
    function reads the whole table to describe it (``TOOLS.items()``, ``list(TOOLS)``)."""

    facts: ModuleFacts
    lookup: str
    names: list[str]
    described: list[tuple[str, Location]]


def _tables(project: ProjectIndex) -> Iterator[_Table]:
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for fn in facts.functions.values():
            for written in _looked_up_tables(project, fn, facts):
                table = _table_value(project, written, fn, facts)
                if table is None:
                    continue
                held, held_in = table
                names = [
                    name
                    for name, entry in held.items.items()
                    if _IDENTIFIER.match(name) and entry_function(project, entry, held_in, None)
                ]
                if len(names) >= 2:
                    described = list(_table_reads(project, written, fn.class_name, held_in, facts))
                    yield _Table(held_in, fn.qualname, names, described)


def _looked_up_tables(project: ProjectIndex, fn: Function, facts: ModuleFacts) -> set[str]:
    """The tables ``fn`` looks a name up in and calls what it finds, as written (``TOOLS``,
    ``self.tools``): on the spot, or through the local it binds the entry to."""
    bound: dict[str, str] = {}
    for assignment in project.local_assignments(facts, fn.qualname):
        chain = assignment.value.chain
        if chain is not None and chain.steps and chain.steps[-1] == ("call", None):
            written = _table_of(chain.root, chain.steps[:-1], lookup_by_get=True)
        else:
            written = _table_of(chain.root, chain.steps, lookup_by_get=False) if chain else None
        if written:
            bound[assignment.target] = written
    found: set[str] = set()
    for call in project.calls_in(fn.qualname):
        chain = call.chain
        if chain is None:
            continue
        if chain.is_name and chain.root in bound:
            found.add(bound[chain.root])
        written = _table_of(chain.root, chain.steps, lookup_by_get=False)
        if written:
            found.add(written)
    return found


def _table_of(root: str, steps: tuple[Step, ...], *, lookup_by_get: bool) -> str | None:
    """``TOOLS`` for ``TOOLS[name]`` (``TOOLS.get`` when ``lookup_by_get``), ``self.tools``
    for ``self.tools[name]``: a lookup by a key that is no literal, on a name or on an
    attribute of ``self``."""
    if not root:
        return None
    lookup: tuple[Step, ...] = (("attr", "get"),) if lookup_by_get else (("item", None),)
    if steps == lookup:
        return root
    if root in SELF_NAMES and len(steps) == 2 and steps[0][0] == "attr" and steps[1:] == lookup:
        return f"{root}.{steps[0][1]}"
    return None


def _table_value(
    project: ProjectIndex, written: str, fn: Function, facts: ModuleFacts
) -> tuple[Value, ModuleFacts] | None:
    """The dict literal the table ``written`` holds where ``fn`` looks it up, with the
    module it is written in."""
    if "." in written:
        held = project.held_value(written, fn, facts)
        return (held, facts) if held is not None and held.kind == "dict" else None
    if project.local_assignments(facts, fn.qualname, written):
        return None  # a table the function builds for itself names what it was handed
    variable = module_value(project, written, facts)
    return variable if variable is not None and variable[0].kind == "dict" else None


# A whole table read to describe it: its entries, its names, its functions.
_TABLE_READS = frozenset({"items", "keys", "values"})


def _table_reads(
    project: ProjectIndex, written: str, owner: str | None, held_in: ModuleFacts, facts: ModuleFacts
) -> Iterator[tuple[str, Location]]:
    """Where a function reads the whole table ``written``: ``TOOLS.items()``, or the table
    handed to a call (``", ".join(TOOLS)``, ``list(self.tools)``), with that function."""
    root, _, attribute = written.partition(".")
    prefix: tuple[Step, ...] = (("attr", attribute),) if attribute else ()
    reads = {(*prefix, ("attr", method)) for method in _TABLE_READS}
    modules = {id(m): m for m in (held_in, facts)}.values()
    for module in modules:
        for call in module.calls:
            fn = project.function(call.function) if call.function else None
            if fn is None or (attribute and fn.class_name != owner):
                continue
            chain = call.chain
            on_table = chain is not None and chain.root == root and chain.steps in reads
            if on_table or any(arg.text == written for arg in call.args):
                yield fn.qualname, Location(module.path, call.span)


def _prompt_texts(project: ProjectIndex) -> Iterator[tuple[str, str | None, Location]]:
    """The string literals and f-strings a function returns, binds or hands a call (a
    module's constants too), with the function they are written in and where."""
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for fn in facts.functions.values():
            for value in fn.returns:
                yield from _texts(value, fn.qualname, facts)
        for assignment in facts.assignments:
            yield from _texts(assignment.value, assignment.function, facts)
        for call in facts.calls:
            for value in (*call.args, *call.kwargs.values()):
                yield from _texts(value, call.function, facts)


def _texts(
    value: Value, holder: str | None, facts: ModuleFacts, depth: int = 0
) -> Iterator[tuple[str, str | None, Location]]:
    if depth > 4 or len(value.text) < _SHORTEST:
        return  # too short to list two actions, and so is all it holds
    text: str | None = None
    if value.kind == "const" and isinstance(value.const, str):
        text = value.const
    elif value.kind == "fstring":
        text = "".join(p.const for p in value.parts if isinstance(p.const, str))
    if text is not None and value.span is not None:
        yield text, holder, Location(facts.path, value.span)
        return
    for inner in (*value.items.values(), *value.elements, *value.call_args, *value.parts):
        yield from _texts(inner, holder, facts, depth + 1)


def _action_tool(
    project: ProjectIndex, found: FoundTools, facts: ModuleFacts, name: str, site: Location
) -> ToolFacts | None:
    """The tool the action ``name`` is: the branch that does the work itself, else the
    function the branch runs."""
    branch = inline_branch(project, name, facts)
    if branch is not None:
        if found.named_in(name, facts.path):
            return None
        return branch_tool(project, name, facts, site, {}, branch, FORM)
    targets = dispatch_targets(project, name, facts)
    if not targets or found.any_runs(targets[0]):
        return None
    return function_tool(project, targets[0], FORM, site, name, {}, extra=targets[1:])
