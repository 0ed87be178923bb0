"""Finder: the operations a generic tool dispatches by name.

A toolkit may make one tool class and build an instance per operation, each carrying the
operation's name in an attribute (``GitAction(mode="create_branch", ...)``); the tool's
entry method hands that name to a function of the project that picks the operation::

    class RepoAction(BaseTool):
        mode: str
        def _run(self, query):
            return self.api.run(self.mode, query)

    class RepoApi:
        def run(self, mode, query):
            if mode == "create_branch":
                return self.create_branch(query)
            ...

or looks it up in a dict of functions (``self._ops = {"create_branch": create_branch}``,
then ``self._ops[mode](...)``). Each operation the dispatch reaches is then a tool of its
own, named by the string that selects it and run by the function it calls, beside the
generic tool: what one of them does is not what the others do. The generic tool's own
attribute (``self.mode``) must be what is handed over, so a dispatch on anything else (an
HTTP method, a file mode) is not followed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Function, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import enclosing_class
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    seen: set[str] = set()
    for tool in found.tools():
        for entry in tool.functions:
            located = project.functions.get(entry)
            if located is None:
                continue
            for name, target, site in _operations(project, *located):
                if target in seen or found.any_runs(target):
                    continue
                seen.add(target)
                form = ToolForm(tool.framework, "dispatch")
                made = function_tool(project, target, form, site, name, {})
                if made is not None:
                    yield made


def _operations(
    project: ProjectIndex, fn: Function, facts: ModuleFacts
) -> Iterator[tuple[str, str, Location]]:
    """(name, function, where) of each operation the entry method ``fn`` dispatches by
    handing one of its own attributes to a project function. A method handed over
    (``asyncio.to_thread(self._run, action)``) is code to run, no attribute."""
    owner = enclosing_class(project, fn)
    for call in project.calls_in(fn.qualname):
        handed = [
            index
            for index, arg in enumerate(call.args)
            if arg.kind == "attr"
            and arg.text.count(".") == 1
            and arg.text[:5] == "self."
            and not (owner and project.find_method(owner, arg.text[5:]))
        ]
        if not handed:
            continue
        target = project.call_target(call, fn, facts)
        located = project.functions.get(target) if target else None
        if located is None:
            continue
        dispatcher, dispatcher_facts = located
        params = [p for p in dispatcher.params if p not in SELF_NAMES]
        for index in handed:
            if index < len(params):
                yield from _dispatched(project, dispatcher, dispatcher_facts, params[index])


def _dispatched(
    project: ProjectIndex, fn: Function, facts: ModuleFacts, key: str
) -> Iterator[tuple[str, str, Location]]:
    """The operations ``fn`` picks by its parameter ``key``: ``if key == "name":`` branches
    calling a project function, or a lookup ``table[key]`` in a dict of functions."""
    calls = sorted(project.calls_in(fn.qualname), key=lambda c: c.order)
    for branch in fn.branches:
        test = branch.test
        if test.op != "==" or len(test.parts) != 2 or test.parts[0].text != key:
            continue
        name = test.parts[1].string()
        start, end = branch.body_order
        for call in calls:
            if start <= call.order < end:
                target = project.call_target(call, fn, facts)
                if target and target != fn.qualname and target in project.functions:
                    if name:
                        yield name, target, Location(facts.path, branch.span)
                    break
    for table in _tables(project, fn, facts, key):
        for name, value, span in _table_entries(project, fn, facts, table):
            target = project.project_function(value.qualname, facts)
            if target is None and value.text.startswith("self.") and value.text.count(".") == 1:
                owner = enclosing_class(project, fn)
                target = project.find_method(owner, value.text[5:]) if owner else None
            if target:
                yield name, target, Location(facts.path, span)


def _tables(project: ProjectIndex, fn: Function, facts: ModuleFacts, key: str) -> list[str]:
    """The containers ``fn`` looks ``key`` up in: ``self._ops[key]``, ``OPS[key](...)``."""
    chains = [
        a.value.chain
        for a in facts.assignments
        if a.function == fn.qualname and key in a.value.names
    ]
    chains += [c.chain for c in project.calls_in(fn.qualname) if f"[{key}]" in c.text]
    tables: list[str] = []
    for chain in chains:
        if chain is None:
            continue
        for index, (kind, _) in enumerate(chain.steps):
            if kind == "item":
                attrs = [str(n) for k, n in chain.steps[:index] if k == "attr"]
                if len(attrs) == index:
                    tables.append(".".join([chain.root, *attrs]))
                break
    return tables


def _table_entries(
    project: ProjectIndex, fn: Function, facts: ModuleFacts, table: str
) -> list[tuple[str, Value, Span]]:
    """The string-keyed entries of the dict literal ``table`` holds: assigned in a method
    of ``fn``'s class (``self._ops = {...}``) or at module level."""
    held: list[Value] = []
    if table.split(".", 1)[0] in SELF_NAMES:
        owner = enclosing_class(project, fn)
        entry = project.classes.get(owner) if owner else None
        if entry is None:
            return []
        cls, cls_facts = entry
        target = "self." + table.split(".", 1)[1] if "." in table else ""
        held = [
            a.value
            for method in cls.methods
            for a in project.local_assignments(cls_facts, method, target)
        ]
        facts = cls_facts
    else:
        held = [a.value for a in project.local_assignments(facts, None, table)]
    entries: list[tuple[str, Value, Span]] = []
    for value in held:
        if value.kind == "dict":
            for name, item in value.items.items():
                if item.kind in {"name", "attr"}:
                    entries.append((name, item, item.span or value.span or fn.span))
    return entries
