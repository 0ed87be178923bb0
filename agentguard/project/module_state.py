"""State that outlives the call: a tool that changes a record of a store the module holds
(``ACCOUNTS[uid]["transactions"].append(entry)``: an item of a module-level dict or list,
taken by a key, or an entry the store itself drops or sets: ``_DATASETS.pop(dataset_id)``)
changes what every later call sees, as a write to a database would; a repeat of an append
adds the entry twice. Such a change is a local write (in the process's
memory), not a remote one. A list the module collects into (``results.extend(items)``) is
no such store, and a container named as a cache, a memo or a log keeps a derived copy.

Only a container whose contents some function of the project hands back (``return
TASKS.get(task_id)``, or a local taken from it) is such a store: the data a tool answers
with. One the project only tests against (``if model in _blocked_models``, rate-limit
bookkeeping) changes how calls are made, not what a tool is about."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import Assignment, Call, Function, ModuleFacts, Value
from agentguard.knowledge.words import words
from agentguard.project.state_writes import local_write
from agentguard.project.tool_facts import Effect

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def module_state_write(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """The write ``call`` makes to a container of its module, or None."""
    catalog = project.catalog
    method = call.method
    if call.chain is None or (
        # a container's method, or a store's (JavaScript's ``Map.delete``)
        method not in catalog.container_methods and method not in catalog.store_methods
    ):
        return None
    root = call.chain.root
    receiver = call.chain.receiver()
    if receiver is None or not root.isidentifier() or root in fn.params:
        return None
    if project.local_assignments(facts, fn.qualname, root):
        return None  # a local of the same name
    steps = receiver.steps
    if steps and steps[0][0] == "attr" and all(kind == "item" for kind, _ in steps[1:]):
        # ``db.insights.append(text)``: a container attribute of a project object made
        # outside the call (at module level, or in the function the tool is nested in)
        kept = _object_container(project, root, str(steps[0][1]), fn, facts)
    else:
        held = project.local_assignments(facts, None, root)
        # ``ACCOUNTS[uid]["log"].append(entry)``, or ``_DATASETS.pop(dataset_id)`` on the
        # store itself
        keyed = any(kind == "item" for kind, _ in steps) or (
            not steps
            and call.method in catalog.store_methods
            and _keyed_store(held, catalog.store_factories)
        )
        # ``TASKS.append(task)`` on a list the module keeps and a function hands back:
        # the tool's data, not a list the module gathers into
        # (a ``global`` rebinding in a function, ``tasks = [t for t in tasks if ...]``, is
        # kept as the module's too: the container is what the module first binds)
        kept_list = (
            not steps
            and any(h.value.kind == "list" for h in held)
            and method in catalog.container_methods
            and handed_back(project, f"{facts.module}.{root}")
        )
        kept = (
            keyed
            and bool(held)
            and _container(project, held[-1].value.kind, held[-1].value.qualname or "")
        )
        kept = kept or kept_list
    if not kept:
        return None
    world = catalog.open_world
    named = set(words(root, identifier=True))
    if steps and steps[0][0] == "attr":
        named |= set(words(str(steps[0][1]), identifier=True))
    if named & (world.cache_words | world.log_words):
        return None
    return Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind="write",
        idempotent=call.method not in catalog.append_methods,
        remote=False,
        detail=f"changes `{root}`, which the module keeps across calls",
        confidence=Confidence.MEDIUM,
        callee=call.callee,
    )


def module_store_writes(
    project: ProjectIndex, fn: Function, facts: ModuleFacts, skipped: list[tuple[int, int]]
) -> list[Effect]:
    """The write ``fn`` makes by setting or deleting an item of a container its module keeps
    (``TASKS[task_id] = task``, ``del TASKS[task_id]``, the container the module's own or
    imported from another module of the project): no call, so no sink judges it. One
    effect says the function writes the store; ``skipped`` are the orders of its set-up."""
    # the item stores, and the entries set under a written key (``task["title"] = t``,
    # kept by the facts as a binding of ``task[title]``)
    keyed = [a for a in facts.assignments if a.function == fn.qualname and "[" in a.target]
    for store in [*facts.stores, *keyed]:
        root = store.target.partition("[")[0]
        if store.function != fn.qualname or not root.isidentifier() or root in fn.params:
            continue
        if any(start <= store.order < end for start, end in skipped):
            continue
        # ``for task in TASKS: task["title"] = title``: an entry of the container walked
        root = _walked_container(fn, root, store.span.line) or root
        if root in fn.params or project.local_assignments(facts, fn.qualname, root):
            continue  # a local of the same name
        qualname = facts.imports.get(root) or f"{facts.module}.{root}"
        if not _kept_container(project, qualname):
            continue
        if store.target == root and (
            _made_once(fn, root, store) or _answered_from(project, facts, fn, root, store)
        ):
            continue
        if not _the_tools_data(project, qualname):
            continue
        return [
            local_write(
                fn.qualname,
                facts,
                f"{root}[...]",
                store.value.text,
                store.span,
                idempotent=True,
                detail=f"changes an entry of `{root}`, which the module keeps across calls",
            )
        ]
    return _rebound_store(project, fn, facts)


def _rebound_store(project: ProjectIndex, fn: Function, facts: ModuleFacts) -> list[Effect]:
    """``global tasks; tasks = [t for t in tasks if t["id"] != task_id]``: a container the
    module keeps, and a function hands back, bound again to what is made of it and of
    what the call is handed (what is left, or more: ``tasks = tasks + [task]``). A first
    binding (``_client = Client()``) reads nothing of the old value: set-up, not this;
    one made of nothing the caller hands (a window pruned by the clock) is bookkeeping."""
    nested = [
        entry[0].span for name in fn.nested if (entry := project.functions.get(name)) is not None
    ]
    for assignment in _self_rebindings(project, facts):
        root, line = assignment.target, assignment.span.line
        if not fn.span.line < line <= fn.span.end_line:
            continue
        value = assignment.value
        if not set(value.names) & set(fn.params):
            continue  # ``calls = [t for t in calls if now - t < 60]``: a window pruned
        if assignment.value.text.startswith(f"{root}["):
            continue  # ``history = history[-20:]``: a window kept, bookkeeping of its own
        if any(span.line <= line <= span.end_line for span in nested):
            continue  # a function defined inside this one binds it
        qualname = f"{facts.module}.{root}"
        if not _kept_container(project, qualname) or not _the_tools_data(project, qualname):
            continue
        return [
            local_write(
                fn.qualname,
                facts,
                root,
                assignment.value.text,
                assignment.span,
                idempotent=assignment.value.op != "+",
                detail=f"binds `{root}`, which the module keeps across calls, anew from itself",
            )
        ]
    return []


def _the_tools_data(project: ProjectIndex, qualname: str) -> bool:
    """Whether the module container ``qualname`` holds the tools' data: a function hands
    it back (one the project only tests against is bookkeeping), and it is named as no
    cache, memo or log (a derived copy)."""
    world = project.catalog.open_world
    named = set(words(qualname.rpartition(".")[2], identifier=True))
    return handed_back(project, qualname) and not named & (world.cache_words | world.log_words)


def _self_rebindings(project: ProjectIndex, facts: ModuleFacts) -> tuple[Assignment, ...]:
    """The module's variables bound anew from themselves inside a function (``global``):
    few in any module, found once per module rather than per function."""

    def work_out() -> tuple[Assignment, ...]:
        return tuple(
            a
            for a in facts.assignments
            if a.function is None and a.target.isidentifier() and a.target in a.value.names
        )

    return project.remembered(("self rebindings", facts.path), work_out)


def _made_once(fn: Function, root: str, store: Assignment) -> bool:
    """Whether setting an entry of ``root`` only keeps what is there already or one made
    the first time, for later calls: a memo, not the tools' data. ``limiters[key] =
    limiters.get(key, Limiter())`` (not ``{**orders[key], "day": day}``, an update), or a
    store under a test of the container itself (``if name not in loaded: loaded[name] =
    load(name)``, ``if (!loaded[name]) ...``)."""
    value = store.value
    if root in value.names and not value.text.startswith(f"{root}[") and value.kind != "dict":
        # the container's own answer put back (``.get(key, default)``), or what is left
        # of an entry (``hits[user] = [t for t in hits[user] if now - t < 60]``); a record
        # spread anew (``{**orders[key], "day": day}``) is an update
        return True
    line = store.span.line
    return any(
        branch.span.line <= line <= branch.span.end_line
        and (root in branch.test.names or f"{root}[" in branch.test.text)
        for branch in fn.branches
    )


def _answered_from(
    project: ProjectIndex, facts: ModuleFacts, fn: Function, root: str, store: Assignment
) -> bool:
    """Whether ``fn`` first answers from ``root`` when it holds what is asked (``if city in
    _forecasts: return _forecasts[city]``, or ``found = _rates.get(pair)`` and ``if found:
    return found``) and stores under the key afterwards: a copy kept for the next call that
    asks the same, not the tools' data. What is kept is an answer worked out (a call's,
    or a local holding one); a record written from the arguments (``bookings[slot] =
    {"slot": slot, ...}`` after ``if slot in bookings: return bookings[slot]``) is a
    get-or-create of the tools' data. A test of ``root`` that ends in an error and then
    changes the entry is an update."""
    kept = store.value
    if kept.kind == "name":
        bound = [
            a
            for a in project.local_assignments(facts, fn.qualname, kept.text)
            if a.span.line < store.span.line
        ]
        kept = bound[-1].value if bound else kept
    if kept.kind in {"dict", "list", "const", "fstring"} or kept.text in fn.params:
        return False  # a record the call writes, not an answer it worked out

    def of_root(value: Value) -> bool:
        return root in value.names or any(
            root in bound.value.names and bound.span.line < store.span.line
            for local in value.names
            if local != root
            for bound in project.local_assignments(facts, fn.qualname, local)
        )

    for branch in fn.branches:
        if not branch.exits or branch.span.end_line >= store.span.line or not of_root(branch.test):
            continue
        inside = (
            value
            for value in fn.returns
            if value.span is not None
            and branch.span.line <= value.span.line <= branch.span.end_line
        )
        if any(of_root(value) for value in inside):
            return True
    return False


def _kept_container(project: ProjectIndex, qualname: str) -> bool:
    """Whether the module variable ``qualname`` is bound to a container (by the module, or by
    a function rebinding it ``global``: any of its bindings)."""
    binding = project.module_binding(qualname)
    if binding is None:
        return False
    holder = binding[1]
    name = qualname.rpartition(".")[2]
    return any(
        _container(project, bound.value.kind, bound.value.qualname or "")
        for bound in project.local_assignments(holder, None, name)
    )


def _walked_container(fn: Function, target: str, line: int) -> str | None:
    """The name a ``for`` loop of ``fn`` around ``line`` walks, when ``target`` is the
    element it binds."""
    for loop in fn.loops:
        iterable = loop.iterable
        if (
            loop.kind == "for"
            and target in loop.targets
            and iterable is not None
            and iterable.kind == "name"
            and loop.span.line <= line <= loop.span.end_line
        ):
            return iterable.text
    return None


def handed_back(project: ProjectIndex, container: str) -> bool:
    """Whether a function of the project returns what the module container ``container``
    (its qualified name) holds: the container read in a returned value, or in what a
    returned local was bound to (``found = [t for t in TASKS if ...]``, then ``return
    found``), in its own module or one importing it."""

    def work_out() -> bool:
        module, _, name = container.rpartition(".")
        for facts in project.modules.values():
            if facts.is_test:
                continue
            local = name if facts.module == module else None
            if local is None:
                local = next((k for k, v in facts.imports.items() if v == container), None)
                if local is None:
                    continue
            for fn in facts.functions.values():
                if any(_reads(project, facts, fn, value, local) for value in fn.returns):
                    return True
        return False

    return project.remembered(("handed_back", container), work_out)


def _reads(
    project: ProjectIndex, facts: ModuleFacts, fn: Function, value: Value, name: str
) -> bool:
    if name in value.names:
        return True
    return any(
        name in bound.value.names
        for local in value.names
        if local != name
        for bound in project.local_assignments(facts, fn.qualname, local)
    )


def _keyed_store(held: list[Assignment], factories: frozenset[str]) -> bool:
    """Whether the module binds the name to a dict or a set (a store of entries by key,
    built by one of ``factories``), not to a list it gathers into."""
    if not held:
        return False
    value = held[-1].value
    if value.kind == "dict" or (value.kind == "list" and value.text.startswith("{")):
        return True  # a dict or a set literal
    made = (value.qualname or "").rpartition(".")[2] if value.kind == "call" else ""
    return made in factories


def _object_container(
    project: ProjectIndex, root: str, attr: str, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether ``root`` is bound, at module level or in a function ``fn`` is nested in, to
    an object of a project class whose ``__init__`` sets ``self.<attr>`` to a container."""
    scopes: list[str | None] = [None]
    parts = fn.qualname.split(".")
    scopes += [".".join(parts[:end]) for end in range(len(parts) - 1, 1, -1)]
    for scope in scopes:
        bound = project.local_assignments(facts, scope, root)
        if not bound:
            continue
        value = bound[-1].value
        made = (value.qualname or "") if value.kind == "call" else ""
        init = project.find_method(made, "__init__") if made in project.classes else None
        if init is None:
            return False
        init_facts = project.functions[init][1]
        held = project.local_assignments(init_facts, init, f"self.{attr}")
        return bool(held) and _container(
            project, held[-1].value.kind, held[-1].value.qualname or ""
        )
    return False


def _container(project: ProjectIndex, kind: str, qualname: str) -> bool:
    return kind in {"dict", "list"} or (
        kind == "call" and bool(project.catalog.container_factories.match(qualname))
    )
