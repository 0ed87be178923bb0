"""State that outlives the call: a tool that changes a record of a store the module holds
(``ACCOUNTS[uid]["transactions"].append(entry)``: an item of a module-level dict or list,
taken by a key, or an entry the store itself drops or sets: ``_DATASETS.pop(dataset_id)``)
changes what every later call sees, as a write to a database would; a repeat of an append
adds the entry twice. Such a change is a local write (in the process's
memory), not a remote one. A list the module collects into (``results.extend(items)``) is
no such store, and a container named as a cache, a memo or a log keeps a derived copy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import Assignment, Call, Function, ModuleFacts
from agentguard.knowledge.words import words
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
        kept = (
            keyed
            and bool(held)
            and _container(project, held[-1].value.kind, held[-1].value.qualname or "")
        )
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
