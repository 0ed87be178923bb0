"""Name-to-function dispatch: the project function a handler runs for a tool name.

Low-level MCP servers and hand-written tool loops name their tools by strings (literals,
``enum`` members, class constants) and dispatch on them: through a dict of handlers
(``{"create_order": create_order}``), an ``if name == ...`` / ``case ...:`` branch, or a
function of the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from agentguard.diagnostics import Span
from agentguard.facts.module_facts import CALL_STEP, Call, Function, ModuleFacts, Value
from agentguard.facts.static_strings import ENUM_MEMBER, is_enum_class
from agentguard.project.definitions import enclosing_class
from agentguard.project.tool_facts import SELF_NAMES

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def enum_member_name(project: ProjectIndex, value: Value) -> str | None:
    """``pkg.tools.Tools.GET_ISSUE.value``: the string the project's enum class assigns to
    the member."""
    qualname = value.qualname or ""
    if value.kind != "attr" or not qualname.endswith(".value"):
        return None
    return _member_string(project, qualname[: -len(".value")])


def branch_name(project: ProjectIndex, string: str) -> str:
    """A dispatch branch's tool name: as written, or the value of the enum member of
    another module it compares against."""
    if string.startswith(ENUM_MEMBER):
        return _member_string(project, string[len(ENUM_MEMBER) :]) or string
    return string


def branches_by_name(
    project: ProjectIndex, facts: ModuleFacts
) -> dict[str, list[tuple[str, Span]]]:
    """The dispatch branches written in the functions of ``facts``, by tool name: each
    branch's function and span, in source order. Worked out once per module, as every
    tool name of the module asks."""

    def work_out() -> dict[str, list[tuple[str, Span]]]:
        found: dict[str, list[tuple[str, Span]]] = {}
        for function, string, body in facts.branches:
            if function is not None:
                found.setdefault(branch_name(project, string), []).append((function, body))
        return found

    return project.remembered(("dispatch branches by name", facts.path), work_out)


def branch_names(project: ProjectIndex, facts: ModuleFacts) -> frozenset[str]:
    """The tool names every dispatch branch of ``facts`` compares against."""
    return project.remembered(
        ("dispatch branch names", facts.path),
        lambda: frozenset(branch_name(project, string) for _, string, _ in facts.branches),
    )


def _member_string(project: ProjectIndex, member_qualname: str) -> str | None:
    owner, _, member = project.resolve_instance(member_qualname).rpartition(".")
    entry = project.classes.get(owner)
    if entry is None:
        return constant_member(project, owner, member)
    if not is_enum_class(entry[0]):
        return None
    constant = entry[0].attributes.get(member)
    return constant.string() if constant is not None else None


def is_guard_call(fn: Function | None, call: Call) -> bool:
    """Whether ``call`` is the test of an ``if`` that leaves early (``if (!isPostNoticeArgs(args))
    throw ...``): a check of the arguments before the work, never the tool's handler."""
    if fn is None:
        return False
    return any(
        branch.exits and branch.test.span is not None and branch.test.span.encloses(call.span)
        for branch in fn.branches
    )


def constant_member(project: ProjectIndex, owner: str, member: str) -> str | None:
    """``ToolNames.CREATE_EVENT`` of a TypeScript module's constant object (``export const
    ToolNames = {CREATE_EVENT: "create_event"} as const``): the string it holds."""
    module = owner.rpartition(".")[0]
    facts = project.modules_by_name.get(module)
    if facts is None or facts.language == "python":
        return None
    held = project.module_variable(owner)
    if held is not None and held.kind == "call" and held.qualname == "Object.freeze":
        held = held.call_args[0] if held.call_args else None  # ``Object.freeze({...})``
    item = held.items.get(member) if held is not None and held.kind == "dict" else None
    return item.string() if item is not None else None


# Builtins that look a name up in a module's own namespace: ``eval(name)``, ``globals()[name]``.
_NAMESPACE_LOOKUPS = frozenset({"eval", "globals", "locals", "vars"})


def namespace_lookup(project: ProjectIndex, name: str) -> str | None:
    """The project function named ``name`` in the namespace of a module that calls what it
    looks up there by a name known only at run time (``eval(tool_name)(**args)``,
    ``globals()[call.name](**args)``): its own, or one it imports (``from .tools import *``)."""
    for facts in _namespace_dispatchers(project):
        found = project.project_function(name, facts)
        if found is not None:
            return found
    return None


def _namespace_dispatchers(project: ProjectIndex) -> tuple[ModuleFacts, ...]:
    def work_out() -> tuple[ModuleFacts, ...]:
        found: list[ModuleFacts] = []
        for facts in project.modules.values():
            if facts.is_test or facts.language != "python":
                continue
            for call in facts.calls:
                chain = call.chain
                # ``eval(name)(...)``: the lookup called, then what it gave; ``globals()[
                # name](...)``: the namespace called, indexed, then what it held
                if (
                    chain is not None
                    and chain.root in _NAMESPACE_LOOKUPS
                    and chain.steps[:1] == (CALL_STEP,)
                    and (
                        (chain.root == "eval" and len(chain.steps) == 1)
                        or (len(chain.steps) == 2 and chain.steps[1][0] == "item")
                    )
                ):
                    found.append(facts)
                    break
            else:
                if _namespace_table(facts):
                    found.append(facts)
        return tuple(found)

    return project.remembered("namespace_dispatchers", work_out)


# What reads a module's own namespace: ``vars(module)``, ``module.__dict__``, ``globals()``,
# ``inspect.getmembers(module)``.
_NAMESPACE_READS = ("__dict__", "vars(", "globals()", "getmembers(")


def _namespace_table(facts: ModuleFacts) -> bool:
    """Whether the module keeps a table of the functions of its own namespace, its own and
    those it star-imports (``TOOL_FUNCS = {n: f for n, f in sys.modules[__name__].__dict__.
    items() if inspect.isfunction(f)}``): a name looked up there runs its function."""
    own = {
        assignment.target
        for assignment in facts.assignments
        if assignment.function is None and "sys.modules[__name__]" in assignment.value.text
    }
    return any(
        assignment.function is None
        and " for " in (written := assignment.value.text)
        and any(read in written for read in _NAMESPACE_READS)
        and (
            "__name__" in written
            or "globals()" in written
            or bool(own.intersection(assignment.value.names))
        )
        for assignment in facts.assignments
    )


def dispatch_targets(project: ProjectIndex, name: str, facts: ModuleFacts) -> list[str]:
    """The project functions a name-to-function dispatch runs for ``name``: the one it
    runs, first, then the others a lambda entry calls beside it."""
    # 1. a dict literal {"name": fn}
    for assignment in facts.assignments:
        value = assignment.value
        if value.kind != "dict":
            continue
        target = value.items.get(name)
        if target is None and facts.language != "python":
            # ``{[createInvoiceTool.name]: handler}``: keyed by the string a constant holds
            target = next(
                (
                    held
                    for key, held in value.items.items()
                    if key.startswith(ENUM_MEMBER) and branch_name(project, key) == name
                ),
                None,
            )
        if target is not None and target.kind == "lambda":
            called = _lambda_entries(project, target, facts, assignment.function)
            if called:
                return called
        elif target is not None:
            qual = entry_function(project, target, facts, assignment.function)
            if qual:
                return [qual]
    # 1b. a list of [spec, handler] pairs (``[[createPostDefinition, createPostHandler], ...]``)
    for handler, held_in, function in paired_handlers(project).get(name, []):
        qual = entry_function(project, handler, held_in, function)
        if qual:
            return [qual]
    # 2. if name == "create_order": / case "create_order": the first project function
    #    the branch calls
    for function, body in branches_by_name(project, facts).get(name, []):
        caller = project.function(function)
        on_lines = project.calls_on_lines(function, body.line, body.end_line)
        for call in sorted(on_lines, key=lambda c: c.order):
            if is_guard_call(caller, call):
                continue
            resolved = project.resolve_callee(call, caller, facts)
            qual = project.project_function(resolved, facts)
            if qual and qual != function:
                return [qual]
    # 3. ``func = getattr(self.toolbox, name); func(**args)``: the method so named of the
    #    project object the name is looked up on
    looked_up = looked_up_method(project, name, facts)
    if looked_up:
        return [looked_up]
    # 4. a function of the same name: in the module, else the project's one function so
    #    named; a method so named elsewhere needs an object nothing here hands it (a spec
    #    named ``close`` is not an HTTP client's ``close``)
    qual = project.project_function(name, facts)
    if qual:
        return [qual]
    candidates = project.by_name.get(name, [])
    if len(candidates) != 1 or project.functions[candidates[0]][0].class_name:
        return []
    return candidates[:1]


# Keys a tool spec carries beside its name (MCP's ``inputSchema``, a model API's
# ``parameters`` or ``input_schema``, a description).
_SPEC_KEYS = frozenset({"inputSchema", "input_schema", "parameters", "description"})


def paired_handlers(
    project: ProjectIndex,
) -> dict[str, list[tuple[Value, ModuleFacts, str | None]]]:
    """The handlers a project pairs with tool specs in a list of pairs (``const tools =
    [[createPostDefinition, createPostHandler], ...]``, ``TOOLS = [(SEARCH_SPEC, search)]``),
    by the spec's name: each handler as written, the module it is written in and the
    function it is written in. Worked out once per index."""

    def work_out() -> dict[str, list[tuple[Value, ModuleFacts, str | None]]]:
        found: dict[str, list[tuple[Value, ModuleFacts, str | None]]] = {}
        for facts in project.modules.values():
            if facts.is_test:
                continue
            for assignment in facts.assignments:
                if assignment.value.kind != "list":
                    continue
                for pair in assignment.value.elements:
                    if pair.kind != "list" or len(pair.elements) != 2:
                        continue
                    spec, handler = pair.elements
                    if spec.kind in {"name", "attr"}:
                        spec = project.module_variable(spec.qualname) or spec
                    named = spec.items.get("name") if spec.kind == "dict" else None
                    name = named.string() if named is not None else None
                    if name and _SPEC_KEYS & spec.items.keys():
                        found.setdefault(name, []).append((handler, facts, assignment.function))
        return found

    return project.remembered("tool specs paired with handlers", work_out)


def looked_up_method(project: ProjectIndex, name: str, facts: ModuleFacts) -> str | None:
    """The method ``name`` of a project object a function of ``facts`` looks a name it is
    handed up on and calls (``getattr(self.toolbox, tool_name)(**args)``, or the local it
    binds that to, called): the first so found in source order."""
    for owner in _lookup_owners(project, facts):
        method = project.find_method(owner, name)
        if method is not None and method in project.functions:
            return method
    return None


def _lookup_owners(project: ProjectIndex, facts: ModuleFacts) -> list[str]:
    """The project classes whose objects the functions of ``facts`` look a name up on and
    call what they find, in source order: worked out once per module, as every tool name
    asks."""

    def work_out() -> list[str]:
        owners: list[str] = []
        for call in facts.calls:
            if call.callee != "getattr" or len(call.args) < 2 or call.args[1].kind != "name":
                continue
            caller = project.function(call.function) if call.function else None
            if caller is None or not _answer_called(project, call, caller, facts):
                continue
            owner = _held_class(project, call.args[0], caller, facts)
            if owner is not None and owner not in owners:
                owners.append(owner)
        return owners

    return project.remembered(("getattr lookup owners", facts.path), work_out)


def _answer_called(project: ProjectIndex, call: Call, caller: Function, facts: ModuleFacts) -> bool:
    """Whether what ``call`` answers is called: on the spot (``getattr(o, n)(...)``) or
    through the local it is bound to (``func = getattr(o, n)``, then ``func(...)``)."""
    bound = {
        a.target
        for a in project.local_assignments(facts, caller.qualname)
        if a.value.span == call.span
    }
    return any(
        other.callee in bound
        or (other is not call and other.span[:2] == call.span[:2] and "(" in other.callee)
        for other in project.calls_in(caller.qualname)
    )


def _held_class(
    project: ProjectIndex, value: Value, caller: Function, facts: ModuleFacts
) -> str | None:
    """The project class of the object ``value`` names in ``caller``: ``self``, an
    attribute the class binds to one (``self.toolbox = Toolbox(token)``) or a local bound
    to one (``desk = RoleDesk(token)``)."""
    if value.kind == "name" and value.text in SELF_NAMES:
        return enclosing_class(project, caller)
    if value.kind not in {"name", "attr"}:
        return None
    held = project.held_value(value.text, caller, facts)
    made = project.built_type(held) if held is not None else None
    return made if made in project.classes else None


def entry_function(
    project: ProjectIndex, value: Value, facts: ModuleFacts, function: str | None
) -> str | None:
    """The project function a name-to-handler dict entry runs (``{"x": do_x}``, ``{"x":
    self.do_x}``, ``{"x": slack.send_message}``, ``{"x": XHandler()}``), or None."""
    return project.project_function(value.qualname, facts) or _handler_entry(
        project, value, facts, function
    )


def _handler_entry(
    project: ProjectIndex, value: Value, facts: ModuleFacts, function: str | None
) -> str | None:
    """The function a name-to-handler dict entry runs when it is not a plain function: what a
    lambda calls, a bound method (``self.create_issue``) of the class the dict is built in
    or of an object it keeps (``self.songs.play``), or a handler
    object (``CreateIssueHandler()``) of a project class, whose method the dispatch calls
    on the looked-up entry (``handlers[name].run_tool(arguments)``) or, failing that, its
    one public method."""
    written = value.text
    if value.kind == "lambda":
        return next(iter(_lambda_entries(project, value, facts, function)), None)
    if value.kind == "attr" and written.startswith("self.") and written.count(".") <= 2:
        owner = project.function(function) if function else None
        holder = enclosing_class(project, owner) if owner else None
        attribute, _, bound_name = written[5:].rpartition(".")
        if holder and attribute:
            # ``self.song_tools.play_song_url``: a method of the object the class keeps
            holder = project.self_type(holder, attribute)
        return project.find_method(holder, bound_name) if holder else None
    if value.kind == "attr" and value.qualname and not written.startswith("self."):
        # ``slack.send_message`` on a module's ``slack = SlackConnector()``: its method
        bound = project.resolve_instance(value.qualname)
        if bound != value.qualname and bound in project.functions:
            return bound
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


def _lambda_entries(
    project: ProjectIndex, value: Value, facts: ModuleFacts, function: str | None
) -> list[str]:
    """The project functions and module instances' methods a lambda entry calls, the one it
    runs first leading (``lambda args: (fb.add_task(...), ui.show("added"))`` runs
    ``add_task`` first; ``lambda args: show(report(...))`` runs ``report`` before
    ``show``): the call written deepest inside the others' arguments, else the first
    written. A call that only prepares one input of another (``stock.receive(db,
    qty=_dec(args["qty"]))``) comes after the call it prepares for. The tool runs them all."""
    preparing = _preparing_calls(project, value, facts, function)
    found: list[tuple[bool, int, int, str]] = []
    for index, called in enumerate(value.calls):
        target = _project_target(project, called, facts)
        if target is None:
            continue
        at = value.text.find(f"{called.rsplit('.', 1)[-1]}(")
        if at >= 0:
            depth = value.text.count("(", 0, at) - value.text.count(")", 0, at)
            found.append((called in preparing, -depth, at, target))
        else:
            # imported under another name (``handler as removeHandler``): after those
            # written under their own, in the order called
            found.append((called in preparing, 0, len(value.text) + index, target))
    ordered = [target for *_, target in sorted(found)]
    return list(dict.fromkeys(ordered))


def _project_target(project: ProjectIndex, called: str, facts: ModuleFacts) -> str | None:
    """The project function, or a module instance's method, a callee names."""
    target = project.project_function(called, facts)
    if target is None:
        bound = project.resolve_instance(called)
        target = bound if bound != called and bound in project.functions else None
    return target


def _preparing_calls(
    project: ProjectIndex, value: Value, facts: ModuleFacts, function: str | None
) -> frozenset[str]:
    """The callees of a lambda entry that only convert one input of another project call
    in it: a call of one argument handed as one of that call's several arguments
    (``_dec(args["qty"])`` in ``receive_stock(db, product_id=..., qty=_dec(args["qty"]))``).
    A call handed as the only argument (``show(report(...))``) is the work, not an input."""
    span = value.span
    if function is None or span is None:
        return frozenset()
    start, end = (span.line, span.column), (span.end_line, span.end_column)
    preparing: set[str] = set()
    for call in project.calls_on_lines(function, span.line, span.end_line):
        at = call.span
        if (at.line, at.column) < start or (at.end_line, at.end_column) > end:
            continue
        handed = [*call.args, *call.kwargs.values()]
        if len(handed) < 2 or _project_target(project, call.callee, facts) is None:
            continue
        for argument in handed:
            if argument.kind == "call" and len(argument.call_args) + len(argument.call_kwargs) == 1:
                preparing.add(argument.qualname or "")
    return frozenset(preparing)


class HandlerEntry(NamedTuple):
    """One entry of an object of handlers by tool name (``{create_task: handleCreateTask}``,
    ``{[SEND_TOOL.name]: handleSend}``): where it is, the key as written, the tool name it
    stands for, and the project function it runs."""

    facts: ModuleFacts
    key: str
    name: str
    function: str
    span: Span


def handler_entries(project: ProjectIndex) -> tuple[HandlerEntry, ...]:
    """Every handler-table entry of the project outside the tests, worked out once."""

    def work_out() -> tuple[HandlerEntry, ...]:
        found: list[HandlerEntry] = []
        for facts in project.modules.values():
            if facts.is_test:
                continue
            for assignment in facts.assignments:
                value = assignment.value
                if value.kind != "dict":
                    continue
                for key, held in value.items.items():
                    function = entry_function(project, held, facts, assignment.function)
                    if function is not None:
                        name = branch_name(project, key)
                        span = held.span or assignment.span
                        found.append(HandlerEntry(facts, key, name, function, span))
        return tuple(found)

    return project.remembered(("handler entries",), work_out)
