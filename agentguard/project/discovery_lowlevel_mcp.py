"""Low-level MCP servers whose tools are named through an enum and dispatched inline.

``Tool(name=Tools.GET_ISSUE.value)`` names the tool by an ``enum`` member's value, written
in any project module. A ``call_tool`` handler's ``if name == ...`` / ``case ...:`` branch
that does the work itself (or only through helpers every branch shares) is the tool: it
has no function of its own, so the tool is anchored at the branch and reaches what the
branch calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import ModuleFacts, Value
from agentguard.facts.static_strings import ENUM_MEMBER, is_enum_class
from agentguard.project.discovery_subclasses import enclosing_class, unwrapped_base
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.tool_index import ToolIndex


def enum_member_name(project: ToolIndex, value: Value) -> str | None:
    """``pkg.tools.Tools.GET_ISSUE.value``: the string the project's enum class assigns to
    the member."""
    qualname = value.qualname or ""
    if value.kind != "attr" or not qualname.endswith(".value"):
        return None
    return _member_string(project, qualname[: -len(".value")])


def branch_name(project: ToolIndex, string: str) -> str:
    """A dispatch branch's tool name: as written, or the value of the enum member of
    another module it compares against."""
    if string.startswith(ENUM_MEMBER):
        return _member_string(project, string[len(ENUM_MEMBER) :]) or string
    return string


def _member_string(project: ToolIndex, member_qualname: str) -> str | None:
    owner, _, member = project.resolve_instance(member_qualname).rpartition(".")
    entry = project.classes.get(owner)
    if entry is None or not is_enum_class(entry[0]):
        return None
    constant = entry[0].attributes.get(member)
    return constant.string() if constant is not None else None


def _branch_targets(project: ToolIndex, facts: ModuleFacts, handler: str, body: Span) -> list[str]:
    """The project functions a dispatch branch's own statements call, in source order."""
    caller = project.function(handler)
    targets: list[str] = []
    for call in sorted(project.calls_in(handler), key=lambda c: c.order):
        if not body.line <= call.span.line <= body.end_line:
            continue
        target = project.call_target(call, caller, facts)
        if target and target != handler and target not in targets:
            targets.append(target)
    return targets


def add_inline_branch_tool(
    project: ToolIndex, name: str, facts: ModuleFacts, site: Location, options: dict[str, Value]
) -> bool:
    """A ``Tool(name=...)`` listed by a low-level server whose ``call_tool`` branch for that
    name does the work inline: the branch calls no project function of its own, only
    private helpers (``_execute_query``) or helpers other branches call too. Such a branch
    is the tool (anchored at the branch, reaching what it calls); a branch that hands over
    to a function of its own is left to the dispatch-target pass."""
    branches = [
        (handler, branch_name(project, string), body)
        for handler, string, body in facts.branches
        if handler is not None
    ]
    mine = [(handler, body) for handler, string, body in branches if string == name]
    if len(mine) != 1:
        return False
    handler, body = mine[0]
    assert handler is not None
    if not any(body.line <= c.span.line <= body.end_line for c in project.calls_in(handler)):
        return False  # a branch that calls nothing does no work of its own
    targets = _branch_targets(project, facts, handler, body)
    shared: set[str] = set()
    for other_handler, string, other_body in branches:
        if other_handler == handler and string != name:
            shared.update(_branch_targets(project, facts, handler, other_body))
    own = [t for t in targets if t not in shared and not t.rsplit(".", 1)[-1].startswith("_")]
    if own:
        return False
    if any(t.name == name and t.path == facts.path for t in project.tools):
        return True
    from agentguard.project import tools as discovery

    tool = ToolFacts(
        name=name,
        framework="mcp",
        form="lowlevel-branch",
        path=facts.path,
        anchor=Location(facts.path, body),
        functions=targets,
        symbol=f"{handler}:{name}",
        site=site,
        options=dict(options),
        inline=(handler, Location(facts.path, body)),
    )
    tool.declarations += discovery._declarations_from_options(project, "mcp", options, site, facts)
    project.tools.append(tool)
    return True


def handler_entry(
    project: ToolIndex, value: Value, facts: ModuleFacts, function: str | None
) -> str | None:
    """The function a name-to-handler dict entry runs when it is not a plain function: a
    bound method (``self.create_issue``) of the class the dict is built in, or a handler
    object (``CreateIssueHandler()``) of a project class, whose method the dispatch calls
    on the looked-up entry (``handlers[name].run_tool(arguments)``) or, failing that, its
    one public method."""
    written = value.text
    if value.kind == "attr" and written.startswith("self.") and written.count(".") == 1:
        owner = project.function(function) if function else None
        cls_qual = enclosing_class(project, owner) if owner else None
        return project.find_method(cls_qual, written[5:]) if cls_qual else None
    if value.kind != "call" or value.qualname not in project.classes:
        return None
    cls_qual = value.qualname
    assert cls_qual is not None
    for call in facts.calls:
        receiver = call.receiver or ""
        if ("[" in receiver or ".get(" in receiver) and call.method:
            method = project.find_method(cls_qual, call.method)
            if method:
                return method
    cls = project.classes[cls_qual][0]
    public = [m for m in cls.methods if not m.rsplit(".", 1)[-1].startswith("_")]
    return public[0] if len(public) == 1 and public[0] in project.functions else None


def handler_class_tool(
    project: ToolIndex, value: Value, function: str | None
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
    project: ToolIndex, cls_qual: str, attr: str, depth: int = 0
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
        held = _string(project, assignment.value)
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
    project: ToolIndex,
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
        return _string(project, given) if given is not None else None
    return None


def _string(project: ToolIndex, value: Value) -> str | None:
    """A literal string, or a module constant holding one (``TOOL_NAME``)."""
    if value.string():
        return value.string()
    if value.kind in {"name", "attr"}:
        held = project.module_variable(value.qualname)
        return held.string() if held is not None else None
    return None
