"""Tools registered in a loop over spec rows.

``for func, name, description in functions: mcp.add_tool(Tool.from_function(func,
name=name))``: the function handed over is a loop target, so the tools are the rows of what
the loop walks, at the target's position. The rows are followed through locals, module
variables, and calls of project functions returning them (``functions = get_tools()``),
including a function picked from a module dict of such functions (``get_tools =
BY_AREA[area]``, every value a candidate). A loop at module level (``for fn in TOOLS:
mcp.add_tool(fn)``) is followed as one in a function is, and a list variable's rows include
what its own scope appends or extends it with before the loop (``TOOLS.append(fn)``); a
dict literal walked by ``.items()`` gives a ``(key, value)`` row per entry, by ``.values()``
its values. Only written rows count: anything computed is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Call, Function, Loop, ModuleFacts, Value
from agentguard.project.definitions import local_function

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

_MAX_DEPTH = 5
# What adds one row to a list: Python's ``list.append``, JavaScript's ``Array.push``.
_ADDS_ONE = ("append", "push")


@dataclass(frozen=True)
class LoopRow:
    """One row a registration loop walks: the function it hands over, and the row's value
    at another loop target's position (the name, say)."""

    function: str
    row: Value
    facts: ModuleFacts
    targets: tuple[str, ...]

    def string_at(self, target: Value | None) -> str | None:
        held = self.value_at(target)
        return held.string() if held is not None else None

    def value_at(self, target: Value | None) -> Value | None:
        """The row's value at the position of the loop target ``target`` names."""
        if target is None or target.kind != "name" or target.text not in self.targets:
            return None
        position = self.targets.index(target.text)
        elements = self.row.elements
        return elements[position] if position < len(elements) else None

    def options(self, options: dict[str, Value]) -> dict[str, Value]:
        """The registration's options for this row: a loop target written as an option, or
        as a field of one (``annotations=ToolAnnotations(readOnlyHint=read_only)``), takes
        the row's value (``("list_files", list_files, True)``)."""
        result: dict[str, Value] = {}
        for key, value in options.items():
            held = self.value_at(value)
            if held is not None:
                result[key] = held
            elif value.kind == "call" and value.call_kwargs:
                fields = {k: self.value_at(v) or v for k, v in value.call_kwargs.items()}
                result[key] = replace(value, call_kwargs=fields)
            else:
                result[key] = value
        return result


def loop_rows(
    project: ProjectIndex, target: Value | None, call: Call, module: ModuleFacts | None = None
) -> list[LoopRow]:
    """The rows whose function a registration ``call`` inside a ``for`` loop hands over
    when its function argument ``target`` is one of the loop's targets; ``module`` holds
    the call when it is made at module level."""
    if target is None or target.kind != "name":
        return []
    fn: Function | None = None
    if call.function is not None:
        entry = project.functions.get(call.function)
        if entry is None:
            return []
        fn, facts = entry
        loops = fn.loops
    elif module is not None:
        facts, loops = module, module.loops
    else:
        return []
    loop = _enclosing_loop(loops, target.text, call)
    if loop is None or loop.iterable is None:
        return []
    position = loop.targets.index(target.text)
    result: list[LoopRow] = []
    seen: set[str] = set()
    for row, row_facts in _rows(project, loop.iterable, fn, facts, loop.span.line, 0):
        if row.kind in {"name", "attr"} and len(loop.targets) == 1:
            element = row  # ``for f in (send, search)``: each row is the function
        elif row.kind != "list" or position >= len(row.elements):
            continue
        else:
            element = row.elements[position]
        if element.kind not in {"name", "attr"}:
            continue
        qual = project.project_function(element.qualname, row_facts) or (
            # a function nested in the registering one (a toolkit's ``get_tools``)
            local_function(project, element, call) if row_facts is facts else None
        )
        if qual and qual not in seen:
            seen.add(qual)
            result.append(LoopRow(qual, row, row_facts, tuple(loop.targets)))
    return result


def record_rows(
    project: ProjectIndex, named: Value | None, call: Call, module: ModuleFacts | None = None
) -> tuple[str, list[tuple[Value, ModuleFacts]], dict[str, str]] | None:
    """A registration inside a loop over written records, named by a field of the loop's
    target (``for (const t of tools) server.tool(t.name, ..., cb)``, ``tool(fn, {name:
    t.name})``): the field, each record (a dict literal holding that field), and the fields
    the loop binds to locals of other names (``{ name: toolName }``: local -> field). None
    for any other name."""
    if named is None:
        return None
    if named.kind == "name":
        # ``for (const { name, handler } of tools) server.tool(name, ...)``: a field bound
        # by an object pattern
        root = field = named.text
    elif named.kind == "attr" and named.chain is not None:
        chain = named.chain
        if (
            len(chain.steps) != 1
            or chain.steps[0][0] != "attr"
            or not isinstance(chain.steps[0][1], str)
        ):
            return None
        root, field = chain.root, chain.steps[0][1]
    else:
        return None
    fn: Function | None = None
    if call.function is not None:
        entry = project.functions.get(call.function)
        if entry is None:
            return None
        fn, facts = entry
        loops = fn.loops
        # a callback registered inside the loop: the loop is its enclosing function's
        while not _enclosing_loop(loops, root, call) and fn is not None:
            outer = _outer_function(project, fn)
            if outer is None:
                break
            fn, facts = project.functions[outer]
            loops = fn.loops
    elif module is not None:
        facts, loops = module, module.loops
    else:
        return None
    loop = _enclosing_loop(loops, root, call)
    if loop is None or loop.iterable is None:
        return None
    if loop.fields != (named.kind == "name") or (not loop.fields and len(loop.targets) != 1):
        return None
    field = loop.renamed.get(field, field) if named.kind == "name" else field
    rows = [
        (record, record_facts)
        for row, row_facts in _rows(project, loop.iterable, fn, facts, loop.span.line, 0)
        for record, record_facts in [_record(project, row, row_facts)]
        if record.kind == "dict" and field in record.items
    ]
    return field, rows, loop.renamed


def _record(project: ProjectIndex, row: Value, facts: ModuleFacts) -> tuple[Value, ModuleFacts]:
    """A row as the record it names: ``[createEventTool, ...]`` holds constants each set to
    an object literal, in its own module."""
    if row.kind == "name":
        held = module_value(project, row.text, facts)
        if held is not None:
            return held
    return row, facts


def _outer_function(project: ProjectIndex, fn: Function) -> str | None:
    """The function ``fn`` is written inside, if any."""
    qualname, _, _ = fn.qualname.rpartition(".<locals>.")
    return qualname if qualname and qualname in project.functions else None


def _enclosing_loop(loops: list[Loop], name: str, call: Call) -> Loop | None:
    found: Loop | None = None
    for loop in loops:
        if loop.kind not in {"for", "comprehension"} or name not in loop.targets:
            continue
        if loop.span.line <= call.span.line <= loop.span.end_line:
            if found is None or loop.span.line >= found.span.line:
                found = loop
    return found


def _rows(
    project: ProjectIndex,
    value: Value,
    fn: Function | None,
    facts: ModuleFacts,
    before: int,
    depth: int,
) -> list[tuple[Value, ModuleFacts]]:
    """The written rows ``value`` stands for, each with the module it is written in."""
    if depth > _MAX_DEPTH:
        return []
    if value.kind == "list":
        rows: list[tuple[Value, ModuleFacts]] = []
        for element in value.elements:
            spread = _spread_name(element)
            if spread is None:
                rows.append((element, facts))
            else:
                # ``[...authTools, ...allTools]``, ``[*BASE_TOOLS, extra]``: the rows of each
                rows += _rows(project, spread, fn, facts, before, depth + 1)
        return rows
    if value.kind == "name":
        assigned = [
            a.value
            for a in project.local_assignments(facts, fn.qualname if fn else None, value.text)
            if a.span.line < before
        ]
        if assigned:
            rows = []
            for held in assigned:
                rows += _rows(project, held, fn, facts, before, depth + 1)
            if any(held.kind == "list" for held in assigned):
                rows += _added_rows(project, value.text, fn, facts, before, depth)
            return rows
        return _module_rows(project, value.text, facts, depth)
    if value.kind == "dict":
        # a dict's rows are its entries (key and value) for ``.items()``/``.values()``
        return [
            (Value(kind="pair", text=key, elements=[_key(key, held), held]), facts)
            for key, held in value.items.items()
        ]
    walked = _dict_walk(value)
    if walked is not None:
        # ``for name, fn in TOOLS.items()``: a row per entry, ``(key, value)``
        root, how = walked
        rows = []
        for entry, holder in _rows(project, root, fn, facts, before, depth + 1):
            if how == "items" and entry.kind == "pair":
                rows.append((replace(entry, kind="list"), holder))
            elif how == "values" and entry.kind == "pair":
                rows.append((entry.elements[1], holder))
        return rows
    if value.kind == "call":
        rows = []
        for qual in _callees(project, value, fn, facts, before):
            callee, callee_facts = project.functions[qual]
            for returned in callee.returns:
                rows += _rows(
                    project, returned, callee, callee_facts, callee.span.end_line + 1, depth + 1
                )
        return rows
    return []


def _spread_name(element: Value) -> Value | None:
    """The name a list element spreads (``...authTools`` in JavaScript, ``*TOOLS`` in
    Python), or None for any other element."""
    text = element.text
    name = text[3:] if text.startswith("...") else text[1:] if text.startswith("*") else ""
    if not name.isidentifier():
        return None
    return Value(kind="name", text=name, qualname=name, span=element.span)


def _key(key: str, held: Value) -> Value:
    return Value(kind="const", text=repr(key), const=key, span=held.span)


def _dict_walk(value: Value) -> tuple[Value, str] | None:
    """``TOOLS.items()`` / ``TOOLS.values()`` on a name: the name and the method."""
    chain = value.chain
    if value.kind != "call" or chain is None or len(chain.steps) != 2:
        return None
    (attr, method), (call, _) = chain.steps
    if attr != "attr" or call != "call" or method not in {"items", "values"}:
        return None
    return Value(kind="name", text=chain.root, qualname=chain.root), str(method)


def _added_rows(
    project: ProjectIndex,
    name: str,
    fn: Function | None,
    facts: ModuleFacts,
    before: int,
    depth: int,
) -> list[tuple[Value, ModuleFacts]]:
    """What the list ``name`` is given in its own scope before line ``before``:
    ``TOOLS.append(send)`` adds one row, ``TOOLS.extend([...])`` the rows of its argument."""
    calls = project.calls_in(fn.qualname) if fn is not None else facts.calls_in(None)
    rows: list[tuple[Value, ModuleFacts]] = []
    held = {name, f"{facts.module}.{name}"}  # a module variable's receiver is qualified
    for other in calls:
        if other.receiver not in held or len(other.args) != 1 or other.span.line >= before:
            continue
        if other.method in _ADDS_ONE:
            rows.append((other.args[0], facts))
        elif other.method == "extend":
            rows += _rows(project, other.args[0], fn, facts, other.span.line, depth + 1)
    return rows


def _module_rows(
    project: ProjectIndex, name: str, facts: ModuleFacts, depth: int
) -> list[tuple[Value, ModuleFacts]]:
    held = module_value(project, name, facts)
    if held is None:
        return []
    value, holder = held
    rows = _rows(project, value, None, holder, 1 << 30, depth + 1)
    if value.kind == "list":
        own = (facts.imports.get(name) or name).rsplit(".", 1)[-1]  # its name where written
        rows += _added_rows(project, own, None, holder, 1 << 30, depth)
        rows += _rows_added_elsewhere(project, f"{holder.module}.{own}", holder, depth)
    return rows


def _rows_added_elsewhere(
    project: ProjectIndex, qualname: str, holder: ModuleFacts, depth: int
) -> list[tuple[Value, ModuleFacts]]:
    """What other modules give the module's list ``qualname`` when they are loaded: each
    tool's own file importing the shared list and adding itself (``tools.push(updateCard)``
    at its top level, ``TOOLS.append(send)``)."""
    rows: list[tuple[Value, ModuleFacts]] = []
    for method in (*_ADDS_ONE, "extend"):
        for call, facts in project.calls_named(method):
            if call.function is not None or facts is holder or call.receiver != qualname:
                continue
            if len(call.args) != 1:
                continue
            if method == "extend":
                rows += _rows(project, call.args[0], None, facts, call.span.line, depth + 1)
            else:
                rows.append((call.args[0], facts))
    return rows


def module_value(
    project: ProjectIndex, name: str, facts: ModuleFacts
) -> tuple[Value, ModuleFacts] | None:
    """What the module variable ``name`` (of ``facts``, or imported into it) was last bound
    to, with the module it is written in."""
    return project.module_binding(facts.imports.get(name) or f"{facts.module}.{name}")


def _callees(
    project: ProjectIndex, call: Value, fn: Function | None, facts: ModuleFacts, before: int
) -> list[str]:
    """The project functions a call expression may call: its own callee, or the function a
    local names (``get = get_tools``), or any function a module dict it is picked from
    holds (``get = BY_AREA[area]``)."""
    own = project.project_function(call.qualname, facts)
    if own is not None:
        return [own]
    head = call.text.split("(", 1)[0].strip()
    if not head.isidentifier() or fn is None:
        return []
    result: list[str] = []
    for assignment in project.local_assignments(facts, fn.qualname, head):
        if assignment.span.line >= before:
            continue
        picked = assignment.value
        if picked.kind == "name":
            qual = project.project_function(picked.qualname, facts)
            result += [qual] if qual else []
            continue
        for name in picked.names:
            held = module_value(project, name, facts)
            if held is None or held[0].kind != "dict":
                continue
            table, holder = held
            for listed in table.names:
                qual = project.project_function(holder.imports.get(listed) or listed, holder)
                if qual and qual not in result:
                    result.append(qual)
    return result
