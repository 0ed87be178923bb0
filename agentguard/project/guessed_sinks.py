"""Guessed sinks: an unresolved call whose method name starts with a write verb, on a
receiver that looks like a service client (not a container, a logger or the standard
library)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import Call, Function, ModuleFacts
from agentguard.knowledge.catalog import Sink
from agentguard.project import open_world
from agentguard.project.open_world import batch_operations, method_verb
from agentguard.project.receivers import (
    asks_a_collection,
    receiver_name,
    runs_code_handed_in_place,
    stays_in_process,
    written_receiver,
)
from agentguard.project.sink_keys import key_for
from agentguard.project.tool_facts import (
    Effect,
)

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


# The methods of JavaScript's own arrays, maps and sets: an answer that is one is data.
_JS_COLLECTION_METHODS = frozenset(
    {"push", "pop", "shift", "unshift", "splice", "set", "add", "clear", "concat", "sort"}
)


def heuristic_sink(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """An unresolved call whose method name starts with a write verb, on a receiver that
    looks like a service client. Lower confidence than a catalogue sink, and silent on
    containers, loggers, strings and the standard library."""
    if call.method.lstrip("_")[:1].isupper():
        return None  # a constructor (SendGridAPIClient(...)) builds a client, it sends nothing
    if not call.method.isidentifier():
        # ``createBedrock(opts)(model)``, ``perplexity("sonar")`` after ``perplexity =
        # createPerplexity(opts)``: calling what a call returned; a verb in it names the
        # factory, not what this call does
        return None
    verb_class = method_verb(project, call.method, call)
    if verb_class in {None, "read"} or runs_code_handed_in_place(call):
        return None
    batch = batch_operations(project, call, fn, facts)
    if batch is not None:
        verb_class = batch[0]  # ``batchUpdate(body={"requests": [{"addChart": ...}]})``
        if verb_class == "read":
            return None
    world = project.catalog.open_world
    if world.reads(callee) or world.reads(call.callee):
        return None  # a library's own reads (``googlemaps.Client.place``)
    if stays_in_process(project, call, callee, fn, facts):
        return None
    if open_world.telemetry_package(project, callee) or open_world.claims_a_lease(project, call):
        return None
    if open_world.fills_what_it_read(call, facts):
        return None
    head = callee.split(".", 1)[0]
    written = written_receiver(call)
    last = receiver_name(call)
    if asks_a_collection(project, call, last):
        return None
    if open_world.sent_by_terminal(project, call, fn, facts):
        return None  # the request a later ``.execute()`` sends: judged there
    if (
        facts.language != "python"
        and not call.receiver
        and verb_class == "non_idempotent"
        and open_world.hands_out_handle(project, call, fn, facts)
    ):
        # ``const provider = await createEmailProvider(opts); provider.getLabels()``: a
        # JavaScript factory function (Node's own are ``createServer``, ``createHash``):
        # what is done with the object it makes is judged, not its making
        return None
    if facts.language != "python" and open_world.on_static_factory_chain(project, call, fn):
        # ``UrlForge.create(base).addQuery(k, v).build()``: a class's static
        # factory whose object the same expression goes on using, a builder in memory
        return None
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
    # ``issue = await client.issue(id); issue.update({...})``: an object a service answered
    # with, whose own methods act on that service (an array's or a map's excepted)
    answered = (
        facts.language != "python"
        and call.method not in _JS_COLLECTION_METHODS
        and open_world.holds_external_answer(project, call, fn, facts)
    )
    if call.method in project.catalog.container_methods and not (
        trusted_receiver or resolved or answered
    ):
        # a list's, dict's or generator's method, unless the receiver is typed as a client
        # of a package (``client.messages.send(...)`` with ``client = AgentSDK()``)
        return None
    if not (trusted_receiver or (external and "." in callee) or answered):
        return None
    kind = {
        "non_idempotent": "network_write",
        "destructive": "destructive",
        "idempotent_write": "write",
    }[verb_class]
    idempotent = verb_class != "non_idempotent"
    local = local_store(project, callee)
    if local is not None:
        # ``self.db.add_documents(...)`` on a FAISS index: the data stays on this machine
        kind = "destructive" if verb_class == "destructive" else "write"
    sink = Sink(effect=kind, idempotent=idempotent, key={})
    return Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind=kind,
        idempotent=idempotent,
        remote=local is None,
        detail="write verb, not resolved"
        if local is None
        else f"write verb on a local store ({local})",
        confidence=Confidence.MEDIUM
        if resolved or (trusted_receiver and external)
        else Confidence.LOW,
        key=key_for(project, call, sink, fn, facts),
    )


def local_store(project: ProjectIndex, callee: str) -> str | None:
    """The local store class (``rules/effects.yaml: open_world.local_stores``) whose method
    ``callee`` is, directly or through a project class built on it (``class Notes(FAISS)``);
    None for any other callee."""
    stores = project.catalog.open_world.local_stores
    owner = callee.rsplit(".", 1)[0]
    if "." not in callee:
        return None
    for current in project.lineage(owner):
        if current in stores:
            return current
    return None
