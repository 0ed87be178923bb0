"""Finder: low-level MCP servers, whose ``Tool(name=...)`` objects are listed by a
``list_tools`` handler and dispatched by name in a ``call_tool`` handler.

The name may be a literal, a class constant or an ``enum`` member's value
(``Tool(name=Tools.GET_ISSUE.value)``), or ``self.name`` in a handler class (one class a
tool). A server listing one tool whose ``call_tool`` handler never looks at the name has
that handler for its tool. A ``call_tool`` branch that does the work itself is the tool
(``branch_tools``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import enclosing_class, unwrapped_base
from agentguard.project.discovery.branch_tools import (
    DispatchingModules,
    branch_tool,
    inline_branch,
)
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.discovery.declarations import declarations_from_options
from agentguard.project.discovery.dispatch import (
    constant_member,
    dispatch_targets,
    enum_member_name,
)
from agentguard.project.discovery.framework_data import lowlevel_handlers
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

BRANCH_FORM = ToolForm("mcp", "lowlevel-branch")


def _listed_tools(
    facts: ModuleFacts, tool_types: set[str]
) -> Iterator[tuple[Value | None, dict[str, Value], Span, str | None]]:
    """The tools a module lists, as (name, options, where, function): ``Tool(name=...)``
    objects, and in TypeScript the SDK's ``Tool`` written as an object literal
    (``{name: "create_item", description, inputSchema, annotations}``)."""
    for call in facts.calls:
        callee = call.callee
        if (callee.replace("()", "") if "()" in callee else callee) not in tool_types:
            continue
        name_value = call.kwargs.get("name") or (call.args[0] if call.args else None)
        yield name_value, dict(call.kwargs), call.span, call.function
    if facts.language == "python":
        return
    for listed in facts.dicts:
        if "inputSchema" in listed.items and "name" in listed.items:
            yield listed.items["name"], dict(listed.items), listed.span or Span.point(1), None


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    tool_types = set(project.catalog.mcp_tool_types)
    dispatching = DispatchingModules(project)
    for listing in project.modules.values():
        if listing.is_test:
            continue
        for name_value, options, span, function in _listed_tools(listing, tool_types):
            name = _static_name(project, name_value) if name_value else None
            handler = None
            if not name and name_value is not None:
                # ``Tool(name=self.name)`` in a handler class: its name and worker method
                handler = _handler_class_tool(project, name_value, function)
                name = handler[0] if handler else None
            if not name:
                continue
            # the tools listed in one module may be dispatched by name in another
            facts = dispatching.of(name, listing)
            targets = [handler[1]] if handler else dispatch_targets(project, name, facts)
            site = Location(listing.path, span)
            branch = inline_branch(project, name, facts)
            if branch is not None:
                if not found.named_in(name, facts.path):
                    yield branch_tool(project, name, facts, site, options, branch, BRANCH_FORM)
                continue
            target = targets[0] if targets else _sole_tool_handler(project, listing, tool_types)
            if target is None:
                continue
            form = ToolForm("mcp", "lowlevel")
            tool = function_tool(project, target, form, site, name, {}, extra=targets[1:])
            if tool is None:
                continue
            tool.declarations += declarations_from_options(project, "mcp", options, site, listing)
            tool.options.update(options)
            yield tool


def _sole_tool_handler(
    project: ProjectIndex, facts: ModuleFacts, tool_types: set[str]
) -> str | None:
    """The tool handler of a server listing one tool: the handler that is handed the tool's
    name and arguments (``call_tool(name, arguments)``) and never looks at the name does
    that tool's work itself, when its module builds one ``Tool(...)`` and nothing else."""
    built = [
        call
        for call in facts.calls
        if (call.callee.replace("()", "") if "()" in call.callee else call.callee) in tool_types
    ]
    if len(built) != 1:
        return None
    handlers = lowlevel_handlers(project)
    found = [
        fn.qualname
        for fn in facts.functions.values()
        if fn.params
        and any(d.qualname.replace("()", "").rsplit(".", 1)[-1] in handlers for d in fn.decorators)
    ]
    if len(found) != 1 or any(handler == found[0] for handler, _, _ in facts.branches):
        return None
    return found[0]


def _static_name(project: ProjectIndex, value: Value) -> str | None:
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
        if constant is None and entry is None:
            return constant_member(project, owner, attr)
        return constant.string() if constant is not None else None
    return None


def _handler_class_tool(
    project: ProjectIndex, value: Value, function: str | None
) -> tuple[str, str] | None:
    """``Tool(name=self.name, ...)`` built in a method of a handler class (one class a tool,
    registered in a name-to-handler table the ``call_tool`` handler looks up): the name the
    class gives ``self.name`` (a class attribute, ``self.name = "..."`` in its constructor,
    or what the constructor hands its base's, ``super().__init__(TOOL_NAME)``), and the
    method that does the work, the class's one other public method (``run_tool``)."""
    if value.kind != "attr" or not value.text.startswith("self.") or value.text.count(".") != 1:
        return None
    owner = project.function(function) if function else None
    cls_qual = enclosing_class(project, owner) if owner else None
    if cls_qual is None or owner is None or cls_qual not in project.classes:
        return None
    name = _self_attribute_string(project, cls_qual, value.text[5:])
    if name is None:
        return None
    cls = project.classes[cls_qual][0]
    workers = [
        method
        for method in cls.methods
        if method != owner.qualname
        and not method.rsplit(".", 1)[-1].startswith("_")
        and method in project.functions
    ]
    if len(workers) > 1:
        # helpers beside the worker: the one method called from outside the class (the
        # dispatch's ``handler.run_tool(arguments)``)
        called = {
            call.method
            for facts in project.modules.values()
            if not facts.is_test
            for call in facts.calls
            if not (call.function or "").startswith(cls_qual + ".")
        }
        workers = [m for m in workers if m.rsplit(".", 1)[-1] in called]
    return (name, workers[0]) if len(workers) == 1 else None


def _self_attribute_string(
    project: ProjectIndex, cls_qual: str, attr: str, depth: int = 0
) -> str | None:
    """The string a class (or its project bases) gives ``self.<attr>``."""
    entry = project.classes.get(cls_qual)
    if entry is None or depth > 4:
        return None
    cls, facts = entry
    written = cls.attributes.get(attr)
    if written is not None and written.string():
        return written.string()
    init = f"{cls_qual}.__init__"
    for assignment in project.local_assignments(facts, init, f"self.{attr}"):
        held = project.constant_string(assignment.value)
        if held is not None:
            return held
    for call in project.calls_in(init):
        if not call.callee.startswith("super") or call.method != "__init__":
            continue
        for base in cls.bases:
            base_qual = project.resolve_instance(unwrapped_base(base, facts))
            if base_qual not in project.classes:
                base_qual = f"{facts.module}.{base}"
            handed = _handed_to_base(project, base_qual, attr, call.args, call.kwargs)
            if handed is not None:
                return handed
    return None


def _handed_to_base(
    project: ProjectIndex,
    base_qual: str,
    attr: str,
    args: list[Value],
    kwargs: dict[str, Value],
) -> str | None:
    """The string ``super().__init__(...)`` hands the base for ``self.<attr>``: the argument
    in the place of the parameter the base's ``__init__`` stores there."""
    init = f"{base_qual}.__init__"
    base_init = project.function(init)
    base = project.classes.get(base_qual)
    if base_init is None or base is None:
        return None
    params = [p for p in base_init.params if p not in SELF_NAMES]
    for assignment in project.local_assignments(base[1], init, f"self.{attr}"):
        param = assignment.value.text
        if assignment.value.kind != "name" or param not in params:
            continue
        index = params.index(param)
        given = kwargs.get(param) or (args[index] if index < len(args) else None)
        return project.constant_string(given) if given is not None else None
    return None
