"""Guessed sinks: an unresolved call whose method name starts with a write verb, on a
receiver that looks like a service client (not a container, a logger or the standard
library)."""

from __future__ import annotations

import ast
import re
import sys
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence, EvidenceStep, Location, StepKind
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import Sink
from agentguard.knowledge.open_world import words
from agentguard.project import open_world
from agentguard.project.sink_keys import key_for, local_value
from agentguard.project.tool_facts import (
    Effect,
)

if TYPE_CHECKING:
    from agentguard.project.project_model import ProjectModel


# The standard library talks to no service on its own (queue.Queue.put, collections...);
# its real sinks (smtplib, subprocess, urllib) are catalogue entries.
STDLIB_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins"}


def _written_receiver(call: Call) -> str:
    """The receiver as written in the source (``self._client`` for ``self._client.place``)."""
    text = call.text
    return text.rsplit(".", 1)[0] if "." in text else ""


def _receiver_name(written: str) -> str:
    """The last part of a receiver as written: ``_client`` for ``self._client`` (and for
    ``self._client["eu"]``); for what a call returns, the called name (``get_client`` for
    ``get_client(region)``, ``replace`` for ``url.replace("https://", "wss://")``), never
    text from the call's arguments."""
    while written.endswith("]") and "[" in written:
        written = written[: written.rindex("[")]  # ``self.clients["stripe"]``: ``clients``
    if written.endswith(")"):
        node = None  # cut short at the text limit: judged as written
        for source in (written, f"(\n{written}\n)"):  # a chain over several lines
            try:
                node = ast.parse(source, mode="eval").body
                break
            except (SyntaxError, ValueError):
                continue
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                return node.func.attr
            if isinstance(node.func, ast.Name):
                return node.func.id
    return written.rsplit(".", 1)[-1]


def _is_container(
    project: ProjectModel, name: str, fn: Function, facts: ModuleFacts, before: int
) -> bool:
    """A receiver bound to a list/dict/set literal or factory, locally or at module level."""
    if name.startswith("self.") and name.count(".") == 1:
        # ``self.orders = {}`` in any method of the class (``__init__`` mostly).
        owner = f"{fn.class_name}." if fn.class_name else None
        bound = [
            a.value
            for a in facts.assignments
            if owner and a.target == name and (a.function or "").startswith(owner)
        ]
        return bool(bound) and all(_holds_container(project, value) for value in bound)
    value = local_value(project, name, fn, facts, before)
    if value is None:
        module_level = project.local_assignments(facts, None, name)
        value = module_level[-1].value if module_level else None
    return value is not None and _holds_container(project, value)


def _holds_container(project: ProjectModel, value: Value) -> bool:
    if value.kind in {"list", "dict"} or value.text[:1] in {"[", "{"}:
        return True
    return value.kind == "call" and bool(
        project.catalog.container_factories.match(value.qualname or "")
    )


def _configures_library(
    project: ProjectModel, call: Call, written: str, facts: ModuleFacts
) -> bool:
    """``wikipedia.set_lang("fr")``, ``pandas.set_option(...)``: a setting verb called on an
    imported module itself, not on a client it made, configures the library in this
    process; nothing leaves it."""
    named = words(call.method)
    if not named or named[0] not in project.catalog.open_world.module_settings:
        return False
    imported = facts.imports.get(written)
    if imported is None or imported.split(".", 1)[0] in project.module_heads:
        return False
    return imported.rsplit(".", 1)[-1][:1].islower()  # a module, not a class or a client


def _asks_a_collection(project: ProjectModel, call: Call, collection: str) -> bool:
    """``client.sql_generations.create(prompt=...)``, ``client.completions.create(...)``: a
    generated SDK's ``create`` on a collection named as a question is the POST to that
    collection's path (``/sql-generations``), judged by the path's words as a POST is
    (``read_posts``): a collection whose name only asks makes an answer, nothing a retry
    duplicates."""
    if call.method not in {"create", "acreate"}:
        return False
    named = words(collection)
    catalog = project.catalog
    return (
        bool(named)
        and not any(w in catalog.post_write_words for w in named)
        and any(w in catalog.post_read_words for w in named)
    )


def heuristic_sink(
    project: ProjectModel, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """An unresolved call whose method name starts with a write verb, on a receiver that
    looks like a service client. Lower confidence than a catalogue sink, and silent on
    containers, loggers, strings and the standard library."""
    if call.method.lstrip("_")[:1].isupper():
        return None  # a constructor (SendGridAPIClient(...)) builds a client, it sends nothing
    verb_class = project.catalog.open_world.verb_class(call.method)
    if verb_class in {None, "read"}:
        return None
    if project.catalog.reads(callee) or project.catalog.reads(call.callee):
        return None
    head = callee.split(".", 1)[0]
    if head in STDLIB_MODULES or callee.startswith(("str.", "bytes.", "list.", "dict.", "set.")):
        return None
    written = _written_receiver(call)
    last = _receiver_name(written) if written else ""
    if last and (
        project.catalog.logger_receivers.match(last) or last[:1] in {'"', "'", "[", "{", "("}
    ):
        return None
    if written and _is_container(project, written, fn, facts, call.order):
        return None
    if _asks_a_collection(project, call, last) or _configures_library(
        project, call, written, facts
    ):
        return None
    if open_world.sent_by_terminal(project, call, fn, facts):
        return None  # the request a later ``.execute()`` sends: judged there
    trusted_receiver = bool(last) and bool(project.catalog.client_receiver.search(last))
    # a callee resolved through an attribute typed in another module (``interface: Ain``
    # in a base class) names a package that module imports
    resolved = head in project.third_party_heads and head != written.split(".", 1)[0]
    external = (
        head in project.imported_heads(facts) or resolved
    ) and head not in project.module_heads
    # a method of the project's interface (``Protocol``, abstract): what implements it is
    # out of sight, as an external client's method is
    external = external or project.is_interface_method(callee)
    if external and re.search(r"\.(deps|context)\.", callee):
        # ``ctx.deps.client.send(...)``: the user's own dependencies
        external = resolved = False
    if call.method in project.catalog.container_methods and not (trusted_receiver or resolved):
        # a list's, dict's or generator's method, unless the receiver is typed as a client
        # of a package (``client.messages.send(...)`` with ``client = AgentSDK()``)
        return None
    if call.method in project.catalog.queue_methods and "queue" in last.lower():
        return None  # ``sub.queue.put_nowait(event)``: an asyncio/queue.Queue, in the process
    if not (trusted_receiver or (external and "." in callee)):
        return None
    kind = {
        "non_idempotent": "network_write",
        "destructive": "destructive",
        "idempotent_write": "write",
    }[verb_class]
    idempotent = verb_class != "non_idempotent"
    site = Location(facts.path, call.span)
    sink = Sink(effect=kind, idempotent=idempotent, key={})
    return Effect(
        kind=kind,
        idempotent=idempotent,
        remote=True,
        sink=open_world.shown(call),
        site=site,
        call=call,
        chain=(
            EvidenceStep(
                StepKind.SINK,
                site,
                callee=open_world.shown(call),
                detail="write verb, not resolved",
            ),
        ),
        confidence=Confidence.MEDIUM
        if resolved or (trusted_receiver and external)
        else Confidence.LOW,
        key=key_for(project, call, sink, fn, facts),
        heuristic=True,
        function=fn.qualname,
    )
