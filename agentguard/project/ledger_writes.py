"""Durable tool-call records (Q3, Q7) and tool executors: code that runs the tool the model named.

A record is a call matched by the catalogue (agentguard's runtime, the user's
``ledger-functions``), a write method on a receiver that names a ledger/journal/audit log,
an ORM add of a tool-call row, or SQL that inserts into such a table. Functions that write a
record directly or through project helpers are *recording* functions; a call to one counts as
writing the record at that point.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Assignment, Call, Function, ModuleFacts
from agentguard.knowledge.checklist import Knowledge
from agentguard.project.passes import Pass, PassResults
from agentguard.project.schema_tools import SchemaTools
from agentguard.project.tool_index import ToolIndex

if TYPE_CHECKING:
    from agentguard.knowledge.catalog import Catalog
    from agentguard.project.index import ProjectIndex

_SUBSCRIPT_DISPATCH = re.compile(r"^[\w.]+\[(?P<key>.+)\](\.(?P<method>\w+))?$")
_LOOKUP_VALUE = re.compile(r"^[\w.]+(\[(?P<key>.+)\]|\.get\((?P<arg>[^,)]+)[,)]?.*)$")


@dataclass
class LedgerWrite:
    call: Call
    function: str | None
    location: Location
    how: str
    stores_identity: bool
    inner: bool = False  # the callee is a project function that itself writes the record


@dataclass
class Executor:
    function: str
    location: Location
    dispatch_order: int
    dispatch: Call | None
    path: str


@dataclass(frozen=True)
class LedgerIndex:
    """The ledger pass's facts, read by the ledger, resume and observation rules: where
    records are written, which functions record (directly or through a helper), and the
    executors that dispatch tool calls by name. Built once by :func:`build_ledger_index`
    (the ``LedgerWrites`` pass; ``ProjectModel.ledger_index()``)."""

    writes: tuple[LedgerWrite, ...] = ()
    recording: Mapping[str, str] = field(default_factory=dict)  # function -> how it records
    executors: tuple[Executor, ...] = ()

    def record_calls(self, project: ProjectIndex, qualname: str) -> list[tuple[Call, str]]:
        """Calls in ``qualname`` that write a record, directly or through a helper."""
        entry = project.functions.get(qualname)
        if entry is None:
            return []
        fn, facts = entry
        direct = {id(w.call): w.how for w in self.writes if w.function == qualname}
        result: list[tuple[Call, str]] = []
        for call in project.calls_in(qualname):
            if id(call) in direct:
                result.append((call, direct[id(call)]))
                continue
            target = project_target(project, call, fn, facts)
            if target and target in self.recording and target != qualname:
                result.append((call, f"`{call.text}` ({self.recording[target]})"))
        return result


def project_target(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> str | None:
    return project.call_target(call, fn, facts)


def _identity(know: Knowledge, call: Call, text: str) -> bool:
    names: list[str] = list(call.kwargs)
    for value in (*call.args, *call.kwargs.values()):
        names += list(value.items) + value.names + value.attrs + list(value.call_kwargs)
        if any(c.startswith("hashlib.") for c in value.calls):
            return True
        for item in value.items.values():
            names += item.names + item.attrs
    return any(know.input_identity.search(n) for n in names) or bool(
        know.input_identity.search(text)
    )


def ledger_write(catalog: Catalog, call: Call, facts: ModuleFacts) -> LedgerWrite | None:
    """The record ``call`` (a call in ``facts``) writes, if it writes one: told from the call
    alone, wherever it is."""
    know = catalog.checklist
    # The catalogues normalise names themselves: asked with the call's own string (its
    # hash is cached), not a copy per call.
    callee = call.callee.replace("()", "") if "()" in call.callee else call.callee
    known = know.ledger_functions(call.callee)
    if known and callee.startswith("agentguard."):
        location = Location(facts.path, call.span)
        return LedgerWrite(call, call.function, location, "agentguard runtime", True)
    if known or catalog.ledger_functions(call.callee):
        location = Location(facts.path, call.span)
        return LedgerWrite(
            call,
            call.function,
            location,
            f"`{callee}`",
            _identity(know, call, call.text),
            inner=False,
        )
    method = call.method
    if method in know.ledger_methods and call.receiver:
        receiver = call.receiver.replace("()", "")
        last = receiver.rsplit(".", 1)[-1]
        if receiver and know.ledger_receiver.search(last):
            location = Location(facts.path, call.span)
            return LedgerWrite(
                call, call.function, location, f"`{call.text}`", _identity(know, call, "")
            )
    if method in catalog.checklist.ledger_sql_methods and call.args:
        sql = call.args[0].string()
        if sql and know.ledger_sql.search(sql):
            location = Location(facts.path, call.span)
            return LedgerWrite(
                call,
                call.function,
                location,
                "SQL into a tool-call table",
                _identity(know, call, sql),
            )
    if method in catalog.checklist.ledger_row_methods:
        for value in call.args[:1]:
            if value.kind == "call" and value.qualname:
                cls = value.qualname.rsplit(".", 1)[-1]
                if catalog.checklist.ledger_row_class.search(cls):
                    return LedgerWrite(
                        call,
                        call.function,
                        Location(facts.path, call.span),
                        f"a `{cls}` row",
                        _identity(know, call, "")
                        or any(know.input_identity.search(k) for k in value.call_kwargs),
                    )
    return None


def dispatch_call(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> bool:
    return dispatches_by_name(
        project.catalog.checklist,
        call,
        lambda head: project.local_assignments(facts, fn.qualname, head),
    )


def dispatches_by_name(
    know: Knowledge, call: Call, bound: Callable[[str], Iterable[Assignment]]
) -> bool:
    """Whether ``call`` runs a callable looked up by a name it is given (``tools[name](...)``,
    ``getattr(ops, name)(...)``, ``handler = registry.get(name); handler(...)``);
    ``bound(local)``: the assignments to that local in the calling function."""
    if know.dispatch_direct(call.callee) or call.method in {"on_invoke_tool"}:
        first = call.args[0] if call.args else call.kwargs.get("name")
        return first is None or first.kind != "const"
    match = _SUBSCRIPT_DISPATCH.match(call.text) if "[" in call.text else None
    if match:
        key = match.group("key").strip()
        method = match.group("method")
        if key[:1] in {"'", '"'} or key.isdigit():
            return False
        return method is None or method in know.dispatch_methods
    if call.text.startswith("getattr(") and not call.text.rstrip(")").endswith(("'", '"')):
        return True
    bare = "." not in call.text
    if bare or call.method in know.dispatch_methods:
        head = call.text if bare else call.text.split(".", 1)[0]
        for assignment in bound(head):
            lookup = _LOOKUP_VALUE.match(assignment.value.text)
            if not lookup:
                continue
            key = (lookup.group("key") or lookup.group("arg") or "").strip()
            if key and key[:1] not in {"'", '"'} and not key.isdigit():
                return bare or call.method in know.dispatch_methods
    return False


def _tool_context(project: ToolIndex, fn: Function, facts: ModuleFacts, dispatch: Call) -> bool:
    """The dispatch runs a tool the model named: the code says "tool"/"function call",
    or the table it looks the callable up in holds project tools."""
    know = project.catalog.checklist
    if dispatch.method in {"call_tool", "on_invoke_tool"}:
        return True
    texts = [fn.name, *fn.params, dispatch.text, *(a.text for a in dispatch.args)]
    head = dispatch.text.split("[", 1)[0].split(".", 1)[0]
    for assignment in project.local_assignments(facts, fn.qualname, head):
        texts.append(assignment.value.text)
    if any(project.catalog.checklist.tool_words.search(t) for t in texts):
        return True
    tool_functions = {q for t in project.tools for q in t.functions}
    for assignment in facts.assignments:
        value = assignment.value
        if (
            assignment.function is None
            and value.kind == "dict"
            and assignment.target
            in {
                head,
                *(a.value.text.split("[", 1)[0] for a in facts.assignments if a.target == head),
            }
        ):
            for item in value.items.values():
                if project.project_function(item.qualname, facts) in tool_functions:
                    return True
    return bool(know.dispatch_methods & {dispatch.method} - {"run", "execute", "func"})


def _find_executors(project: ToolIndex) -> list[Executor]:
    know = project.catalog.checklist
    tool_functions = {q for t in project.tools for q in t.functions}
    direct = project.callees_matching(know.dispatch_direct, resolved=False)
    dispatch_methods = know.dispatch_methods
    result: list[Executor] = []
    for qualname, (fn, facts) in project.sorted_functions():
        if facts.is_test or qualname in tool_functions:
            continue
        decorated = bool(fn.decorators) and any(
            know.executor_decorators(d.qualname) for d in fn.decorators
        )
        dispatch: Call | None = None
        for call in project.calls_in(qualname):
            # Only calls of these shapes can dispatch (``dispatch_call`` says no to any
            # other): most calls are passed over without a look at the function's locals.
            text = call.text
            if (
                call.callee in direct
                or call.method in dispatch_methods
                or call.method == "on_invoke_tool"
                or "[" in text
                or text.startswith("getattr(")
            ):
                shaped = True
            else:
                # A bare name (``handler(args)``) dispatches only through a local bound to a
                # lookup: most (print, len) are bound to nothing in the function.
                shaped = "." not in text and bool(
                    project.local_assignments(facts, fn.qualname, text)
                )
            if shaped and dispatch_call(project, call, fn, facts):
                dispatch = call
                break
            if decorated and project_target(project, call, fn, facts) in tool_functions:
                dispatch = call
                break
        if dispatch is None and not decorated:
            continue
        if (
            dispatch is not None
            and not decorated
            and not _tool_context(project, fn, facts, dispatch)
        ):
            continue  # an event router or a command table, not a tool executor
        result.append(
            Executor(
                function=qualname,
                location=Location(facts.path, dispatch.span if dispatch else fn.name_span),
                dispatch_order=dispatch.order if dispatch else 0,
                dispatch=dispatch,
                path=facts.path,
            )
        )
    return result


class LedgerWrites(Pass[LedgerIndex]):
    needs = (SchemaTools,)
    produces = "where tool-call records are written, the functions that record, the executors"

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> LedgerIndex:
        return build_ledger_index(ToolIndex.over(index, results[SchemaTools].tools))


def build_ledger_index(project: ToolIndex) -> LedgerIndex:
    """The ledger index of the project and its tools."""
    know = project.catalog.checklist
    # A record is written only by a ledger function or by a call to a write method: any
    # other call is passed over without a look at its arguments.
    recorders = project.callees_matching(
        know.ledger_functions, resolved=False
    ) | project.callees_matching(project.catalog.ledger_functions, resolved=False)
    write_methods = know.ledger_methods | know.ledger_sql_methods | know.ledger_row_methods
    writes: list[LedgerWrite] = []
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for call in facts.calls:
            if call.method not in write_methods and call.callee not in recorders:
                continue
            write = ledger_write(project.catalog, call, facts)
            if write is not None:
                writes.append(write)
    recording: dict[str, str] = {}
    for write in writes:
        if write.function:
            recording.setdefault(write.function, write.how)
    propagate_recording(project, recording, _reaching(project, recording))
    for position, write in enumerate(writes):
        if write.function is None:
            continue
        entry = project.functions.get(write.function)
        if entry is None:
            continue
        helper = project_target(project, write.call, *entry)
        if helper and helper != write.function and helper in recording:
            writes[position] = replace(write, inner=True)
    return LedgerIndex(tuple(writes), recording, tuple(_find_executors(project)))


def propagate_recording(
    project: ProjectIndex, recording: dict[str, str], candidates: Container[str]
) -> None:
    """Helpers that call recording helpers record too (a few rounds reach a fixpoint), among
    the non-test ``candidates``. A function is looked at again only once one of its callees
    has started recording."""
    targets: dict[str, list[str]] = {}
    callers: dict[str, list[str]] = {}
    for qualname, (_, facts) in project.functions.items():
        if qualname in recording or facts.is_test or qualname not in candidates:
            continue
        targets[qualname] = [called for _, called in project.call_edges(qualname)]
        for called in targets[qualname]:
            callers.setdefault(called, []).append(qualname)
    dirty = {q for q, found in targets.items() if any(t in recording for t in found)}
    for _ in range(6):
        changed = False
        for qualname in targets:
            if qualname not in dirty:
                continue
            dirty.discard(qualname)
            if qualname in recording:
                continue
            for target in targets[qualname]:
                if target in recording:
                    recording[qualname] = recording[target]
                    dirty.update(callers.get(qualname, ()))
                    changed = True
                    break
        if not changed:
            break


def _reaching(project: ProjectIndex, recording: dict[str, str]) -> set[str]:
    """The functions that may reach a recording one through project calls: only these can
    start recording, so only their call edges are worked out (every function's took a third
    of the rule). Found backwards over the call sites tool discovery resolved, whose targets
    are the edges' own, except for a function defined in several modules (its calls are all
    resolved for one of them): such a function is kept, with what reaches it."""
    functions = project.functions
    called_by: dict[str, list[str]] = {}
    reaching = set(recording)
    for facts in project.modules.values():
        if facts.is_test:
            for call in facts.calls:
                qualname = call.function
                entry = functions.get(qualname) if qualname else None
                if qualname and entry is not None and entry[1] is not facts:
                    reaching.add(qualname)
            continue
        for site in project.call_sites(facts):
            qualname = site.call.function
            entry = functions.get(qualname) if qualname else None
            if not qualname or entry is None:
                continue
            if entry[1] is not facts:
                reaching.add(qualname)
            elif site.target and site.target != qualname:
                called_by.setdefault(site.target, []).append(qualname)
    queue = list(reaching)
    while queue:
        for caller in called_by.get(queue.pop(), ()):
            if caller not in reaching:
                reaching.add(caller)
                queue.append(caller)
    return reaching
