"""Open-world effects: a call that leaves the project and that the catalogue does not know.

Such a call is judged by its verb (``rules/effects.yaml``, section ``open_world``): the
first real verb of the method name (``chat_scheduleMessage`` schedules, ``batch_create_issues``
creates), the method of the request a builder chain ends in (``events().insert(...).execute()``
inserts), or ``save()`` / ``send()`` on an object just built (a create). A read verb makes a
read (no effect); a write verb a write of medium confidence; neither an effect of kind
``unknown``, which no write rule judges and the report shows as unknown, never as safe.

Precision guards live in the same catalogue: SDK calls whose names look like verbs but read
(a maps client's ``place``), and local files that are credential plumbing (a refreshed token
file) or a derived cache of remote state, which are not a tool's side effects.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import CALL_STEP, Call, Chain, Function, ModuleFacts, Value
from agentguard.facts.typescript.modules import npm_package_name
from agentguard.knowledge.catalog import Sink
from agentguard.knowledge.open_world import OpenWorld
from agentguard.knowledge.words import words
from agentguard.project.definitions import enclosing_class
from agentguard.project.index.guessed_types import MAX_ATTRIBUTE_HOPS, constructed_type
from agentguard.project.index.resolution import entry_holder
from agentguard.project.read_posts import graphql_document, mutation_field
from agentguard.project.receivers import (
    STDLIB_MODULES,
    asks_a_collection,
    call_receiver,
    in_process_method,
    receiver_name,
    runs_code_handed_in_place,
    stays_in_process,
)
from agentguard.project.sink_keys import handed_in, local_value
from agentguard.project.tool_facts import (
    SELF_NAMES,
    ArgSpec,
    Effect,
    KeyEvidence,
    argument_at,
)

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

UNKNOWN = "unknown"
# How many project helpers handing on another's answer are followed to the package call.
MAX_HELPER_HOPS = 3
# What a JavaScript promise is awaited through: a call chained so on another one uses its
# outcome, not an object it made.
_PROMISE_METHODS = frozenset({"then", "catch", "finally"})
# What a JSON answer is made of (dict, list, str) and a set: their own methods change the
# value in the process (``data = api.get(...).json()``, then ``data.update(...)``).
_DATA_METHODS = frozenset(
    name for kind in (dict, list, set, str) for name in dir(kind) if not name.startswith("_")
)
# The verb classes of ``effects.verbs`` and the effect each write class makes.
WRITE_CLASSES = {
    "non_idempotent": ("network_write", False),
    "destructive": ("destructive", True),
    "idempotent_write": ("write", True),
}
KeyFor = Callable[[Sink], "KeyEvidence | None"]


def _called(chain: Chain | None) -> str | None:
    """The name a call expression calls (``insert`` for ``events().insert(...)``)."""
    return chain.called() if chain is not None else None


def _root(chain: Chain | None) -> str:
    """The name a chain starts from: ``self.api_resource`` for
    ``self.api_resource.events().insert(...)``, ``service`` for ``service.users()``."""
    return chain.base() if chain is not None else ""


@dataclass(frozen=True)
class _Verdict:
    verb_class: str | None  # None: no verb, an unknown effect
    how: str  # the evidence step's words


def judge(
    project: ProjectIndex,
    call: Call,
    callee: str,
    fn: Function,
    facts: ModuleFacts,
    key_for: KeyFor,
) -> Effect | None:
    """The effect of an external call no catalogue entry knows, or None for a read or a
    call that stays in the process."""
    written = _written_request(project, call, fn, facts)
    if written is not None:
        return written[0]
    world = project.catalog.open_world
    verdict = _verdict(project, world, call, callee, fn, facts)
    return _effect(call, fn, facts, verdict, key_for)


def judge_built(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts, key_for: KeyFor
) -> Effect | None:
    """``Issue(...).save()`` / ``mail = Mail(...); mail.send()`` on an external class: a
    create, whatever the write-verb heuristic would make of ``save``. So is the verb
    followed by a thing a service holds (``message.save_draft()``, ``mail.send_email()``),
    not by where the bytes go (``stream.save_to_wav_file(path)``)."""
    world = project.catalog.open_world
    named = words(call.method, identifier=True)
    said = len(named) == 1 or (len(named) == 2 and named[1] in world.nouns_alone)
    if not said or named[0] not in world.object_writes or "." not in call.callee:
        return None
    head = call.callee.split(".", 1)[0]
    if head in STDLIB_MODULES or head in project.module_heads or head in world.in_process_packages:
        return None  # an in-process package's object creates nothing remote (its save: a file)
    # what the method is called on; a function called by name is itself what was built
    receiver = (call.chain.receiver() or call.chain) if call.chain else None
    if not _just_built(project, world, receiver, fn, facts, call):
        return None
    verdict = _Verdict("non_idempotent", f"`{call.method}()` on an object just built")
    return _effect(call, fn, facts, verdict, key_for)


def saved_into_memory(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> bool:
    """``document.save(buffer)`` / ``figure.savefig(buffer)`` with ``buffer = io.BytesIO()``:
    the bytes stay in memory (an upload of them is judged where it is made)."""
    world = project.catalog.open_world
    if call.method not in world.buffer_saves:
        return False
    target = call.args[0] if call.args else None
    if target is None or target.kind != "name":
        return False
    bound = local_value(project, target.text, fn, facts, call.order)
    if bound is None or bound.kind != "call":
        return False
    return (bound.qualname or "").replace("()", "") in world.memory_buffers


def saved_to_file(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """``img.save(path)`` / ``figure.savefig(path)`` on an object of a package whose objects
    live in the process (``img = PIL.Image.open(p).resize(size)``): a local file written,
    the same file again on a repeat. Into an in-memory buffer it is no write
    (``saved_into_memory``)."""
    world = project.catalog.open_world
    if call.method not in world.buffer_saves or not (call.args or call.kwargs):
        return None
    if not _made_in_process(project, world, call, fn, facts):
        return None
    return Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind="write",
        idempotent=True,
        remote=False,
        detail="saves an in-process object to a file",
        confidence=Confidence.MEDIUM,
    )


def _made_in_process(
    project: ProjectIndex, world: OpenWorld, call: Call, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether what ``call`` is made on comes from a package whose objects live in the
    process: its resolved callee, or the local it is called on, bound (through rebindings
    such as ``img = img.resize(size)``) to a call into one."""
    if call.callee.split(".", 1)[0] in world.in_process_packages and call.callee.count(".") >= 2:
        return True
    root = _root(call.chain.receiver() if call.chain else None)
    if not root.isidentifier():
        return False
    before = call.order
    for assignment in reversed(project.local_assignments(facts, fn.qualname, root)):
        if assignment.order >= before:
            continue
        value = assignment.value
        head = (value.qualname or "").split(".", 1)[0]
        if value.kind == "call" and head in world.in_process_packages:
            return True
        if value.kind != "call" or value.chain is None or value.chain.root != root:
            return False
        before = assignment.order  # ``img = img.resize(size)``: what it was made from
    return False


def _effect(
    call: Call, fn: Function, facts: ModuleFacts, verdict: _Verdict | None, key_for: KeyFor
) -> Effect | None:
    if verdict is None or verdict.verb_class == "read":
        return None
    if verdict.verb_class is None:
        kind, idempotent, confidence, key = UNKNOWN, None, Confidence.LOW, None
    else:
        kind, idempotent = WRITE_CLASSES[verdict.verb_class]
        confidence = Confidence.MEDIUM
        key = key_for(Sink(effect=kind, idempotent=idempotent, key={}))
    return Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind=kind,
        idempotent=idempotent,
        remote=True,
        detail=verdict.how,
        confidence=confidence,
        key=key,
    )


# A store's methods that put a value under a key, and those that read one back.
_FILLS = frozenset({"set", "put", "setex", "setEx", "set_json", "setJSON"})
_LOOKUPS = frozenset({"get", "getEx", "get_json", "getJSON"})


def mutation_effect(project: ProjectIndex, text: str) -> tuple[str, bool | None]:
    """What a GraphQL mutation does, by its first field's verb (``productCreate`` creates,
    ``productUpdate`` sets, ``productDelete`` deletes; none: a write of unknown idempotency)."""
    field = mutation_field(text)
    verb = project.catalog.open_world.verb_class(field) if field else None
    if verb in WRITE_CLASSES:
        return WRITE_CLASSES[verb]
    return "network_write", None


# An HTTP call whose method is a caller's choice: no effect until a caller passes one.
HTTP_DEFERRED = "http_deferred"
# A URL as written, or the start of one (an absolute URL, a template's first literal).
_ROUTE_URL = re.compile(r"^\s*(https?://|/)")


def _first_text(call: Call) -> str:
    """The first argument's literal text, or its template's first literal part; "" else."""
    if not call.args:
        return ""
    first = call.args[0]
    text = first.literal_text()
    if text is None and first.kind == "fstring" and first.parts:
        text = first.parts[0].string()
    return text or ""


# An HTTP route written as its method and path (Octokit's ``request("POST /repos/{owner}/
# {repo}/issues", ...)``, and the clients written after it): the method says what it does.
_ROUTE = re.compile(r"^\s*(GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE)\s+/")
_HTTP_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
_ROUTE_EFFECTS: dict[str, tuple[str, bool | None]] = {
    "POST": ("network_write", False),
    "PUT": ("network_write", True),
    "PATCH": ("network_write", None),
    "DELETE": ("destructive", True),
}


def _route_method(call: Call) -> str | None:
    """The HTTP method a call's first argument names as a route (``"DELETE /x/{id}"``, or
    a template starting so)."""
    text = _first_text(call)
    found = _ROUTE.match(text) if text else None
    return found.group(1) if found else None


def _options_method(call: Call, fn: Function) -> tuple[str | None, str | None]:
    """The HTTP method an options object the call is handed names (``{method: "DELETE"}``),
    or the parameter of ``fn`` it is (``{method}``, the caller's choice)."""
    for value in (*call.args, *call.kwargs.values()):
        held = value.items.get("method") if value.kind == "dict" else None
        if held is None:
            continue
        written = (held.string() or "").upper()
        if written:
            # an HTTP method only: ``{"method": "tools/call"}`` is a JSON-RPC message's
            return (written, None) if written in _HTTP_METHODS else (None, None)
        if held.kind == "name" and held.text in fn.params and held.text not in SELF_NAMES:
            return None, held.text
    return None, None


def _written_request(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> tuple[Effect | None] | None:
    """What a call does when its arguments say it in a protocol's own words, whatever sends
    it (a client typed ``any``): a GraphQL ``mutation`` document writes as its first field's
    verb says; an HTTP route (``"POST /repos/..."``) or an options object's ``method`` as its
    method does (a method that is a parameter: as its callers choose). ``(None,)`` for a
    read; None when the arguments say neither."""
    if not call.receiver:
        return None  # ``gql("mutation ...")`` builds a document; what executes it is judged
    method = _route_method(call)
    chosen_by: str | None = None
    if method is None and _ROUTE_URL.match(_first_text(call)):
        # ``client.request(`https://api.example${path}`, { method })``: a URL, then options
        method, chosen_by = _options_method(call, fn)
    idempotent: bool | None
    if chosen_by is not None:
        kind, idempotent = HTTP_DEFERRED, None
        detail = "a request whose method its caller chooses"
    elif method is not None:
        if method not in _ROUTE_EFFECTS:
            return (None,)
        kind, idempotent = _ROUTE_EFFECTS[method]
        detail = f"the route `{method} ...` it requests"
    else:
        written = _first_text(call)
        if not call.args or (written and not written.lstrip().startswith("mutation")):
            return None  # most calls: a literal that is no mutation, read without resolving
        judged = graphql_document(project, call.args[0], fn, facts, call.order)
        if judged is None or judged[0] != "mutation":
            return None
        kind, idempotent = mutation_effect(project, judged[1])
        field = mutation_field(judged[1])
        detail = f"a GraphQL mutation{f' `{field}`' if field else ''}"
    effect = Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind=kind,
        idempotent=idempotent,
        remote=True,
        detail=detail,
        confidence=Confidence.MEDIUM,
    )
    return (replace(effect, method_param=chosen_by),)


def fills_what_it_read(call: Call, facts: ModuleFacts) -> bool:
    """``store.set(key, value)`` after ``store.get(key)`` in the same function, on the same
    store and key as written: a read-through cache filled with what the function looked up
    elsewhere when the key was missing. It keeps a copy; it changes nothing of its own."""
    if call.method not in _FILLS or not call.args or call.function is None or call.chain is None:
        return False
    store = call.chain.receiver()
    key = call.args[0].text
    return store is not None and any(
        other.order < call.order
        and other.method in _LOOKUPS
        and other.args
        and other.args[0].text == key
        and other.chain is not None
        and other.chain.receiver() == store
        for other in facts.calls_in(call.function)
    )


def _verdict(
    project: ProjectIndex,
    world: OpenWorld,
    call: Call,
    callee: str,
    fn: Function,
    facts: ModuleFacts,
) -> _Verdict | None:
    catalog = project.catalog
    if catalog.reads(callee) or catalog.reads(call.callee):
        return None
    if world.reads(callee) or world.reads(call.callee):
        return None
    loaded, member = call.callee.partition("().")[::2]
    if member and loaded in catalog.module_scans and not member.startswith("__"):
        # ``importlib.import_module(name).run(...)``: a function of a module named at run
        # time, whatever that module holds
        return _Verdict(None, f"runs `{member}` of a module `{loaded}` loads at run time")
    handed = _callable_handed(project, call, fn)
    if handed is not None:
        return _Verdict(None, f"calls `{call.callee}`, a callable its `{handed}` was handed")
    if in_process_method(project, callee, call.method) or stays_in_process(
        project, call, callee, fn, facts
    ):
        # ``qr.make(fit=True)`` on a ``qrcode.QRCode``, ``part_queue.extend(parts)`` on a
        # list bound here: an object of the process, whatever it is called
        return None
    if fills_what_it_read(call, facts) or runs_code_handed_in_place(call):
        return None
    if call.method in _DATA_METHODS and _json_answer(project, world, call, fn, facts):
        return None  # ``data = resp.json()``, then ``data.copy()``: a dict in the process
    dynamic = _named_at_run_time(project, world, call, fn, facts)
    if dynamic is not None:
        return _Verdict(None, f"a method of `{dynamic}` named at run time")
    chosen = _callable_returned(project, call, fn, facts)
    if chosen is not None:
        return _Verdict(None, f"calls what `{chosen}` returned, a callable chosen at run time")
    looked_up = _callable_looked_up(project, call, fn, facts)
    if looked_up is not None:
        return _Verdict(None, f"calls `{call.callee}`, looked up at run time (`{looked_up}`)")

    if call.method.lstrip("_")[:1].isupper() or not call.method.isidentifier():
        return None  # a constructor builds a client, it sends nothing
    if _alternate_constructor(call):
        return None  # ``PromptTemplate.from_template(text)``: builds one too
    if facts.language != "python" and on_static_factory_chain(project, call, fn):
        return None  # ``UrlForge.create(base).addQuery(k, v)``: a builder made in memory
    if callee in project.classes:
        return None  # a project class with no ``__init__`` (a dataclass record) built
    receiver = call_receiver(call)
    operation = _operation_module(project, world, call, callee, facts)
    if operation is not None:
        return _Verdict(world.verb_class(operation), f"runs the operation `{operation}`")
    if call.method in world.terminals:
        request = _called(receiver)
        if request is None and receiver is not None and receiver.is_name:
            bound = local_value(project, receiver.root, fn, facts, call.order)
            if bound is not None and bound.kind == "call":
                receiver = bound.chain
                request = _called(receiver)
        if request is None and project.is_interface_method(callee):
            # ``self._sandbox.execute(command)`` on a ``Protocol`` or abstract class: what
            # implements it runs, out of sight; no builder chain says what it sends
            return _Verdict(None, "runs what implements an interface method")
        root = _root(receiver)
        if request is None or not (
            _leaves_project(project, world, root, fn, facts)
            # ``docs = build("docs", "v1")``, then ``docs.documents().create(...).execute()``
            or _answer_of_external_call(project, world, root, fn, facts, call)
        ):
            return None  # ``cursor.execute(sql)``: the SQL catalogue entry judges it
        chained = project.chained_request(call)
        batch = batch_operations(project, chained, fn, facts) if chained else None
        if batch is not None:
            return _Verdict(batch[0], f"the request `{request}` it executes ({batch[1]})")
        return _Verdict(world.verb_class(request), f"the request `{request}` it executes")
    verb = method_verb(project, call.method, call)
    if receiver is not None and receiver.ends_in_call:
        built_by = receiver.called()
        if (
            verb in WRITE_CLASSES
            and built_by is not None
            and built_by != receiver.root
            and method_verb(project, built_by) is None
            and call.method not in project.catalog.container_methods
            and call.method not in _DATA_METHODS
            and not _sent_in_chain(world, call, project.calls_in(fn.qualname))
        ):
            # ``get_db().table("notes").delete()``: the write verb acts on what a call of no
            # verb built (a query, a handle), which judged nothing; what it does is unknown
            return _Verdict(None, "a write verb on what a call of no verb built")
        return None  # ``conn.execute(...).fetchall()``: handles what a judged call returned
    root = _root(receiver)
    containers = project.catalog.container_methods
    named = words(call.method, identifier=True)
    derived = (
        call.method in world.derived_writes
        # ``member.remove_roles(role)``, ``message.delete_reaction(e)``: a verb with its
        # object named after it, which no list, dict or set method is
        or (len(named) > 1 and named[0] in world.derived_write_prefixes)
        # ``card = board.add_card(...)``, ``blob.upload_from_string(...)``: a verb that adds,
        # in a method no list, dict or set has (``add_roles`` too, though it only links)
        or (world.verb_class(call.method) == "non_idempotent" and call.method not in containers)
        # ``issue.update(summary=text)``: a write verb given named fields only, where a
        # list, dict or set method is handed items or a mapping
        or (
            verb in WRITE_CLASSES and bool(call.kwargs or call.star_kwargs_values) and not call.args
        )
        # ``network.remove()``: no list, dict or set removes without being handed the item
        or (call.method in world.item_taking_methods and not call.args)
    )
    if verb in WRITE_CLASSES and derived and _handed_out(project, world, root, fn, facts, call):
        # ``project = gl.projects.get(1); project.issues.create(...)``
        return _Verdict(verb, "on an object an external client handed out")
    # Only calls the write-verb heuristic (guessed_sinks) left unjudged come here: a write
    # verb on a receiver it does not trust is judged below, never taken for a read.
    writes = (
        verb in WRITE_CLASSES
        and not stays_in_process(project, call, callee, fn, facts)
        and not asks_a_collection(project, call, receiver_name(call))
        and not sent_by_terminal(project, call, fn, facts)
        # ``events.patch(...).execute()``: the terminal after it sends it, judged there
        and not _sent_in_chain(world, call, project.calls_in(fn.qualname))
    )
    # a method of an interface (a ``Protocol``, an abstract method) runs what implements
    # it, outside what the project shows
    interface = project.is_interface_method(callee)
    # ``agent: Any = None``, then ``self.agent.request_task(...)``: declared to hold anything,
    # as unknown as an external client's method
    opaque = _opaque_attribute(project, root, fn)
    if not (interface or opaque) and (
        not root or not _leaves_project(project, world, root, fn, facts, callee)
    ):
        if (
            writes
            and call.method not in _DATA_METHODS
            and _answer_of_external_call(project, world, root, fn, facts, call)
        ):
            # ``ch = connect(url)``, then ``ch.publish(...)``: an object from outside the
            # project that no name says is a client; what the verb does to it is unknown
            return _Verdict(None, "a write verb on what an external call returned")
        # a generator's or a queue's ``send`` is a channel's too (``channel.send(text)``)
        contained = call.method in containers and call.method not in world.channel_sends
        if writes and not contained and call.method not in _DATA_METHODS:
            # a write verb on an object whose kind is decided at run time: unknown, never a
            # read
            if _taken_from_parameter(project, root.split(".", 1)[0], fn, facts, call):
                # ``ctx.messenger.send_message(text)`` on a parameter nothing types, or
                # ``channel = guild.channels.cache.get(id); channel.delete()`` on what was
                # got from one: what it is handed decides
                return _Verdict(None, "a write verb on a parameter of no known type")
            if _loaded_by_project_function(project, root, fn, facts, call):
                # ``const journal = await loadApp("journal"); journal.addEntry(...)``,
                # ``bot = connect_bot(); bot.send_message(...)``: what a project function
                # returned (a module imported at run time, a client of no declared type)
                return _Verdict(None, "a write verb on what a project function returned")
            if _entry_of_filled_container(project, call, root, fn, facts):
                # ``adapter = self.adapters.get(channel)``, then ``adapter.send_text(...)``,
                # where the project fills ``self.adapters`` at run time: whatever was put
                # there runs
                return _Verdict(None, "a write verb on an entry of a container filled at run time")
        return None
    if writes:
        last = root.rsplit(".", 1)[-1]
        names_a_service = world.client_roots.search(last) or catalog.client_receiver.search(last)
        if names_a_service and call.method not in containers:
            return _Verdict(verb, "a write verb on a receiver that names a service")
        # ``drive.update(...)`` (a service's write, or a container's in-process change);
        # ``ctx.deps.board.send_move(...)`` (the user's own object, of no known kind)
        return _Verdict(None, "a write verb on an object of a kind no name tells")
    if verb is not None or call.method in world.no_effect:
        return None  # a read
    if _chain_segment(project, call, fn) or _handle_factory(project, call, fn, facts):
        return None  # ``service.users()`` builds the request a later call sends
    return _Verdict(None, "not in the catalogue, no verb in its name")


def _taken_from_parameter(
    project: ProjectIndex, head: str, fn: Function, facts: ModuleFacts, call: Call
) -> bool:
    """Whether ``head`` is a parameter of ``fn`` (not ``self``) or of a function it is
    nested in, or a local last bound to what is got from one (``guild.channels.cache.
    get(id)``, ``ctx.client``)."""
    if head in SELF_NAMES:
        return False
    for _ in range(3):  # ``gotChannel = await guild.channels.fetch(id); channel = gotChannel``
        if handed_in(project, head, fn, facts):
            return True
        bound = local_value(project, head, fn, facts, call.order)
        chain = bound.chain if bound is not None else None
        if chain is None or chain.root in SELF_NAMES or chain.root == head:
            return False
        head = chain.root
    return False


# What fills a container with an entry at run time, besides ``holder[key] = value``.
_FILLING_METHODS = frozenset({"set", "setdefault", "append", "push", "add", "insert"})


def _entry_of_filled_container(
    project: ProjectIndex, call: Call, root: str, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether ``call`` is made on an entry of a container the module fills at run time
    (``self.adapters[name] = adapter``, ``this.adapters.set(name, adapter)``): looked up
    where it is called on (``NOTIFIERS[kind].send(...)``) or through a local bound to
    the lookup (``adapter = self.adapters.get(channel)``)."""
    receiver = call.receiver or ""
    if receiver.endswith("]") and "[" in receiver:
        holder = entry_holder(Value("other", receiver))
    elif root.isidentifier():
        bound = local_value(project, root, fn, facts, call.order)
        holder = entry_holder(bound) if bound is not None else None
    else:
        holder = None
    head = holder.partition(".")[0] if holder is not None else ""
    if holder is None or (head in fn.params and head not in SELF_NAMES):
        return False  # a container the caller hands in: what it holds is the caller's
    return holder in _filled_containers(project, facts)


def _filled_containers(project: ProjectIndex, facts: ModuleFacts) -> frozenset[str]:
    """The containers, as written, a module stores entries in or fills by a method: once
    per module, asked for each write verb on an entry."""

    def work_out() -> frozenset[str]:
        filled = {store.target for store in facts.stores}
        filled.update(
            call.receiver
            for call in facts.calls
            if call.receiver and call.method in _FILLING_METHODS
        )
        return frozenset(filled)

    return project.remembered(("filled containers", facts.path), work_out)


def _named_at_run_time(
    project: ProjectIndex, world: OpenWorld, call: Call, fn: Function, facts: ModuleFacts
) -> str | None:
    """The client whose method a call picks by a name known only at run time:
    ``getattr(client, action)(**params)``, or ``method = getattr(client, action)`` then
    ``method(**params)``. Any method of the client may run, a write as well as a read, so
    the call is unknown. The project's own methods (``getattr(self, ...)``) are followed
    as calls instead, and a literal name is an ordinary method call."""
    arguments: list[Value] = []
    if call.callee.startswith("getattr("):
        inner = project.chained_request(call)
        if inner is not None and inner.callee == "getattr":
            arguments = list(inner.args)
    elif call.callee.isidentifier():
        bound = local_value(project, call.callee, fn, facts, call.order)
        if bound is not None and bound.kind == "call" and bound.qualname == "getattr":
            arguments = bound.call_args
    if len(arguments) < 2 or arguments[1].string() is not None:
        return None
    owner = arguments[0].text
    if owner.split(".", 1)[0] in SELF_NAMES or not _leaves_project(
        project, world, owner, fn, facts
    ):
        return None
    return owner


def _callable_returned(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> str | None:
    """``func = evaluate(node.func, state)``, then ``func(*args)``: a local holding what a
    project function returned, called. No call edge names what runs (the answer is picked
    at run time, from a table, a state, a model's code), so its effect is unknown, never
    none. The project function, or None when the call is no such call."""
    if call.receiver is not None or not call.callee.isidentifier():
        return None
    bound = local_value(project, call.callee, fn, facts, call.order)
    if bound is None or bound.kind != "call" or not bound.qualname:
        return None
    found = project.functions.get(bound.qualname)
    if found is None:
        return None
    returns = found[0].returns
    if returns and all(value.kind in {"name", "attr"} for value in returns):
        # ``return build``, ``return guard_import("googleapiclient.discovery").build``: a
        # function handed back by its name, judged as the call of it it is
        return None
    return bound.qualname


def _callable_looked_up(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> str | None:
    """``handler = registry[name]``, ``entry = getattr(plugin, "main")``, ``run =
    hooks.get(event)``, then ``handler(payload)``: a local holding a callable looked up in
    a table, an object or a module at run time, which no call edge resolved (a project
    dict of functions would have). Whatever the lookup answers runs, so its effect is
    unknown, never none. The lookup as written, or None when the call is no such call."""
    if call.receiver is not None or not call.callee.isidentifier() or call.callee in fn.params:
        return None
    bound = local_value(project, call.callee, fn, facts, call.order)
    if bound is None or bound.chain is None:
        return None
    steps = bound.chain.steps
    last = steps[-1][0] if steps else None
    if bound.kind == "call":
        looked_up = bound.qualname == "getattr" or bound.chain.called() in _LOOKUP_METHODS
    else:
        # an item of a table, or an attribute of what no name resolved (``plugin.main``)
        looked_up = last == "item" or (bound.kind == "attr" and not bound.qualname)
    if looked_up and _standard_functions_only(project, bound.chain.root, fn, facts):
        return None  # ``SAFE_FUNCTIONS[name]`` of ``{"sqrt": math.sqrt, "abs": abs}``
    return bound.text if looked_up else None


def _standard_functions_only(
    project: ProjectIndex, table: str, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether ``table`` is a dict written out whose every entry is a function of Python's
    own (a builtin, or one of the standard library's modules): whichever is looked up, it
    computes in the process."""
    held = project.held_value(table, fn, facts)
    if held is None or held.kind != "dict" or not held.items:
        return False
    for entry in held.items.values():
        named = entry.qualname or "" if entry.kind in {"name", "attr"} else ""
        head = named.split(".", 1)[0]
        if not named or (head not in STDLIB_MODULES and not hasattr(builtins, named)):
            return False
    return True


# The methods a mapping answers an entry by (``hooks.get(event)``).
_LOOKUP_METHODS = frozenset({"get", "pop", "setdefault"})


def _callable_handed(project: ProjectIndex, call: Call, fn: Function) -> str | None:
    """``self._send_message(thread, text)`` where the object keeps a callable its
    constructor (or another method) was handed (``self._send_message =
    step(send_message)``), and its class has no such method: whoever built the object chose
    what runs, so its effect is unknown, never none. The method that keeps it, or None."""
    head, _, attr = call.callee.partition(".")
    if head not in SELF_NAMES or not attr.isidentifier():
        return None
    owner = enclosing_class(project, fn)  # a method's, or the method a closure is in
    if owner is None or project.find_method(owner, attr) is not None:
        return None
    for current in project.lineage(owner):
        entry = project.classes.get(current)
        for method in entry[0].methods if entry else ():
            keeper = project.function(method)
            if keeper is None:
                continue
            facts = project.functions[method][1]
            for assignment in project.local_assignments(facts, method, call.callee):
                held = assignment.value
                if held.kind == "call" and held.qualname in project.catalog.callable_factories:
                    # ``self.session_maker = async_sessionmaker(bind=engine)``: a package's
                    # factory object, built from what was handed, not the handed callable
                    return None
                names = [held.text] if held.kind == "name" else held.names
                if held.kind in {"name", "call"} and any(n in keeper.params for n in names):
                    return keeper.name
    return None


def _json_answer(
    project: ProjectIndex, world: OpenWorld, call: Call, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether ``call`` is made on a local holding data an answer was converted to: a
    JSON answer (``data = resp.json()``, ``json.loads(text)``, an item of one), a model's
    fields (``item.model_dump()``, ``to_dict()``): a dict, list or string of the process."""
    receiver = call.chain.receiver() if call.chain is not None else None
    if receiver is None or not receiver.root.isidentifier():
        return False
    if receiver.without_items().steps:
        return False  # ``data.items.copy()``: an attribute of it, of no known kind
    bound = local_value(project, receiver.root, fn, facts, call.order)
    if bound is None or bound.kind != "call" or bound.chain is None:
        return False
    made = bound.chain.without_items()
    if not made.ends_in_call:
        return False
    called = made.called() or ""
    loads = (bound.qualname or "").replace("()", "").split("[", 1)[0]
    return called in world.answer_conversions or loads in {"json.loads", "json.load"}


def _opaque_attribute(project: ProjectIndex, root: str, fn: Function) -> bool:
    """Whether ``root`` is ``self.<attr>`` with ``attr`` declared to hold anything."""
    head, _, attr = root.partition(".")
    if head not in SELF_NAMES or not attr.isidentifier() or fn.class_name is None:
        return False
    return project.opaque_attribute(fn.class_name, attr)


def holds_external_answer(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether the call is made on what a call into an imported package answered
    (``issue = await client.issue(id); issue.update(...)``): an object of that service."""
    written = call.text.rsplit(".", 1)[0] if "." in call.text else ""
    return bool(written) and _answer_of_external_call(
        project, project.catalog.open_world, written, fn, facts, call
    )


def _answer_of_external_call(
    project: ProjectIndex, world: OpenWorld, root: str, fn: Function, facts: ModuleFacts, call: Call
) -> bool:
    """Whether ``root`` starts from a local bound to what a call into an imported package
    returned (``ch = connect(url)``, ``wb = openpyxl.load_workbook(path)``): not the
    standard library, not this project, not a package whose objects live in the process
    (but for their saves)."""
    first, _, rest = root.partition(".")
    if not first.isidentifier():
        return False
    if set(words(root, identifier=True)) & world.telemetry_words:
        # ``tracer = trace.get_tracer(name)``, then ``tracer.start_as_current_span(...)``: the
        # process's own tracing or logging, nothing the tool is for
        return False
    owner = enclosing_class(project, fn)
    attributes = rest.split(".") if rest else []
    bound: Value | None = None
    typed: str | None = None
    if first in SELF_NAMES:
        typed = owner  # ``self.table.put_item(...)``: an attribute of this class
    else:
        bound = local_value(project, first, fn, facts, call.order)
        if bound is None and not project.local_assignments(facts, fn.qualname, first):
            # ``table = connect(url)`` at module level, used in the function
            module_level = project.local_assignments(facts, None, first)
            bound = module_level[-1].value if module_level else None
    for _ in range(MAX_ATTRIBUTE_HOPS + 1):
        # ``self.table``, ``self._service.tasks.tasklists()``, ``svc.todo.tasks()``: an
        # attribute of an instance of a project class, what that class binds it to
        held = typed if typed in project.classes else None
        if held is None and bound is not None and bound.kind == "call":
            held = bound.qualname if bound.qualname in project.classes else None
        if held is None or not attributes:
            break
        attribute = attributes.pop(0)
        owner = held
        bound = _attribute_call(project, held, attribute)
        typed = project.self_type(held, attribute)
    if bound is None or bound.kind != "call":
        return False
    # ``task = await Task.get(task_id)`` on a ``Task(beanie.Document)``: the package's answer
    parts = (project.inherited_method(bound.qualname or "") or bound.qualname or "").split(".")
    for _ in range(MAX_ATTRIBUTE_HOPS):
        if len(parts) < 3 or parts[0] not in SELF_NAMES or owner is None:
            break
        # ``issue = await self.client.issue(id)``: the client the class's attribute holds,
        # by its type, else by what the attribute was bound to (``self.table =
        # self.conn.Table(name)`` with ``self.conn = connect(url)``)
        typed = project.self_type(owner, parts[1])
        if typed:
            parts = typed.split(".")
            break
        attribute_value = _attribute_call(project, owner, parts[1])
        if attribute_value is None or not attribute_value.qualname:
            break
        parts = attribute_value.qualname.split(".")
    helper = project.project_function((bound.qualname or "").partition("()")[0], facts)
    if helper is not None:
        # ``calendar = get_calendar()`` where the project's helper returns ``build(...)``;
        # ``events = get_calendar().events()``, a part of that client
        return _helper_returns_external_answer(project, world, helper, call)
    return _external_answer(project, world, ".".join(parts), call)


def _attribute_call(project: ProjectIndex, cls_qual: str, attribute: str) -> Value | None:
    """The last call the class ``cls_qual`` binds ``self.<attribute>`` to (``self._api =
    build(...)`` between ``= None`` resets), or that a property of that name returns
    (``@property def tasks(self): return self._tasks_api``)."""
    calls = [v for v in project.self_bindings(cls_qual, attribute) if v.kind == "call"]
    if calls:
        return calls[-1]
    method = project.find_method(cls_qual, attribute)
    function = project.function(method) if method else None
    if function is None or not any(d.qualname.endswith("property") for d in function.decorators):
        return None
    for returned in function.returns:
        head, _, held = returned.text.partition(".")
        if head in SELF_NAMES and held.isidentifier():
            found = [v for v in project.self_bindings(cls_qual, held) if v.kind == "call"]
            if found:
                return found[-1]
    return None


def _external_answer(project: ProjectIndex, world: OpenWorld, qualname: str, call: Call) -> bool:
    """Whether a call so named is into an imported package whose objects leave the process
    (not the standard library, not this project, not an in-process package but for its
    saves)."""
    head = qualname.split(".", 1)[0]
    if not head or head in STDLIB_MODULES or head in project.module_heads:
        return False
    if head in world.in_process_packages and call.method not in world.buffer_saves:
        return False  # ``frame = pandas.read_csv(path)``: a data frame, changed in the process
    # a package imported anywhere in the project: a model class's lookup leaves through the
    # module that defines the class, not the one calling it
    return head in project.third_party_heads


def _helper_returns_external_answer(
    project: ProjectIndex, world: OpenWorld, helper: str, call: Call, hops: int = 0
) -> bool:
    """Whether the project function ``helper`` returns what a call into an imported package
    answered (``return build("calendar", "v3", credentials=creds)``), directly, through a
    local it bound so, or through another such helper."""
    fn, facts = project.functions[helper]
    for returned in fn.returns:
        value = project.returned_binding(returned, fn, facts)
        if value.kind != "call" or not value.qualname:
            continue
        inner = project.project_function(value.qualname, facts)
        if inner is None:
            if _external_answer(project, world, value.qualname, call):
                return True
        elif (
            inner != helper
            and hops < MAX_HELPER_HOPS
            and _helper_returns_external_answer(project, world, inner, call, hops + 1)
        ):
            return True
    return False


def _loaded_by_project_function(
    project: ProjectIndex, root: str, fn: Function, facts: ModuleFacts, call: Call
) -> bool:
    """Whether ``root`` is a local bound to what a project function returned, when that
    function says nothing of what it returns (no project class made, no type named)."""
    if "." in root or not root.isidentifier():
        return False
    bound = local_value(project, root, fn, facts, call.order)
    if bound is None or bound.kind != "call" or bound.chain is None:
        return False
    if bound.chain.steps[:1] != (("call", None),) or len(bound.chain.steps) != 1:
        return False  # ``loadApp("journal")`` itself, not a method of what it returned
    target = project.project_function(bound.qualname, facts)
    entry = project.functions.get(target) if target else None
    if entry is None:
        return False
    loader = entry[0]
    return loader.return_type is None and not any(
        value.kind == "call" and project.project_function(value.qualname, entry[1])
        for value in loader.returns
    )


# How much each verb class weighs when a batch holds several operations: the worst decides.
_WORST = {"non_idempotent": 3, "destructive": 2, "idempotent_write": 1, "read": 0}


def batch_operations(
    project: ProjectIndex, request: Call, fn: Function, facts: ModuleFacts
) -> tuple[str, str] | None:
    """A batch request (``spreadsheets().batchUpdate(body={"requests": [{"insertDimension":
    {...}}]})``, the Google Sheets, Docs and Slides form): the worst verb class among its
    operations, each named by its item's one key, and the operation that decides; None when
    the body is no such batch or names no verb."""
    keys = project.catalog.open_world.batch_request_keys
    if not keys:
        return None
    listed: Value | None = None
    for given in request.kwargs.values():
        body = given
        if body.kind == "name":
            body = local_value(project, body.text, fn, facts, request.order) or body
        if body.kind == "dict":
            listed = next((body.items[k] for k in keys if k in body.items), None)
            if listed is not None:
                break
    if listed is None or listed.kind != "list":
        return None
    world = project.catalog.open_world
    worst: tuple[str, str] | None = None
    for item in listed.elements:
        if item.kind != "dict" or len(item.items) != 1:
            continue
        operation = next(iter(item.items))
        verb = world.verb_class(operation)
        if verb in _WORST and (worst is None or _WORST[verb] > _WORST[worst[0]]):
            worst = (verb, f"`{operation}`")
    return worst


def method_verb(project: ProjectIndex, method: str, call: Call | None = None) -> str | None:
    """The verb class of a client method: as the verb table says, except that adding
    existing things to a set of links (``add_roles``, ``issue_add_watcher``, ``add_labels``)
    repeats safely, an idempotent write; and a noun that alone names what is looked up
    (``jira.issue(key)``) looks nothing up when ``call`` hands it content: two positional
    arguments or a body (``client.message(channel_id, text)``), which is not judged."""
    world = project.catalog.open_world
    named = words(method, identifier=True)
    if len(named) >= 2 and named[1] == "by":
        # ``orderBy``, ``group_by``, ``sortBy``: a verb followed by "by" names how rows are
        # arranged in a query, not an action taken
        return None
    verb = world.verb_class(method)
    if verb == "read" and call is not None and method in world.nouns_alone:
        given_body = any(name in project.catalog.body_kwargs for name in call.kwargs)
        # named fields and no key (``broker.place(symbol=s, qty=q, side="buy")``): content
        given_fields = not call.args and len(call.kwargs) >= 2
        if len(call.args) >= 2 or given_body or given_fields:
            # what is handed is made, not looked up: the word's own verb, if it is one
            own = world.verbs.get(method)
            return own if own in WRITE_CLASSES else None
    if verb != "non_idempotent":
        return verb
    for index, word in enumerate(named):
        if word in project.catalog.link_verbs:
            if set(named[index + 1 :]) & project.catalog.post_relation_words:
                return "idempotent_write"
            break
    return verb


def _operation_module(
    project: ProjectIndex, world: OpenWorld, call: Call, callee: str, facts: ModuleFacts
) -> str | None:
    """``messages_send.sync(client=c, body=b)`` with ``from sdk.api.messages import
    messages_send``: a generated client's module runs the operation it is named after."""
    if call.method not in world.operation_module_calls or "." not in call.text:
        return None
    written = call.text.rsplit(".", 1)[0]
    module = facts.imports.get(written)
    if module is None or callee != f"{module}.{call.method}":
        return None
    head = module.split(".", 1)[0]
    if head in STDLIB_MODULES or head in project.module_heads:
        return None
    return module.rsplit(".", 1)[-1]


def _alternate_constructor(call: Call) -> bool:
    """``PromptTemplate.from_template(text)``, ``Credentials.from_service_account_file(p)``,
    ``Keypair.fromPublicKey(key)``: a ``from_`` (``fromX``) class method of a class,
    written by its name, builds an instance."""
    method = call.method
    named_from = method.startswith("from_") or (method[:4] == "from" and method[4:5].isupper())
    if not named_from or "." not in call.text:
        return False
    owner = call.text.rsplit(".", 1)[0].rsplit(".", 1)[-1]
    return owner.isidentifier() and owner.lstrip("_")[:1].isupper()


def static_factory_chained(project: ProjectIndex, call: Call, fn: Function) -> bool:
    """``Builder.create(x).add(y)``: a static method called on a class by its name, with a
    method of what it returned called in the same expression (not awaited through
    ``then``): the class's factory of an object the expression goes on building."""
    owner, _, _ = call.text.rpartition(".")
    if not owner.isidentifier() or not owner.lstrip("_")[:1].isupper():
        return False
    return any(
        other is not call
        and other.span[:2] == call.span[:2]
        and other.span[2:] > call.span[2:]
        and other.method not in _PROMISE_METHODS
        for other in project.calls_in(fn.qualname)
    )


def on_static_factory_chain(project: ProjectIndex, call: Call, fn: Function) -> bool:
    """Whether ``call`` is a step of ``Builder.create(x).add(y).build()``: the chain the
    expression starts with a class's static factory (``static_factory_chained``)."""
    return any(
        other is not call
        and other.span[:2] == call.span[:2]
        and other.span[2:] <= call.span[2:]
        and static_factory_chained(project, other, fn)
        for other in project.calls_in(fn.qualname)
    ) or static_factory_chained(project, call, fn)


def _chain_segment(project: ProjectIndex, call: Call, fn: Function) -> bool:
    """Whether another call goes on from what ``call`` returns (``service.users()`` in
    ``service.users().messages().list(...)``): such calls start where ``call`` starts."""
    start = call.span[:2]
    # the later call's receiver is written or resolved (``msgraph.GraphServiceClient.users.
    # by_user_id().send_mail`` for ``graph_client.users.by_user_id("u1").send_mail``)
    prefixes = (call.text + "(", call.callee + "(")
    return any(
        other is not call
        and other.span[:2] == start
        and (other.receiver or "").startswith(prefixes)
        for other in project.calls_in(fn.qualname)
    )


def _assigned_to(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> str | None:
    """The local that ``call``'s answer is bound to (``ch = conn.channel()``), if any."""
    start = call.span[:2]
    for assignment in project.local_assignments(facts, fn.qualname):
        value = assignment.value
        if value.kind == "call" and value.span is not None and value.span[:2] == start:
            return assignment.target
    return None


def _handle_factory(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> bool:
    """``ch = conn.channel()`` then ``ch.basic_publish(...)``: the call hands out an object
    that later calls use; those calls are judged, not the one that made it. Later calls
    that only convert the answer (``response.to_dict()``) make no handle: the call acted."""
    target = _assigned_to(project, call, fn, facts)
    if target is None:
        return False
    conversions = project.catalog.open_world.answer_conversions
    return any(
        other.order > call.order
        and other.method not in conversions
        and not _reads_a_key(other)
        and _root(other.chain).split(".", 1)[0] == target
        for other in project.calls_in(fn.qualname)
    )


def hands_out_handle(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> bool:
    """Whether later calls of ``fn`` use what ``call`` returned as their receiver, or the
    same expression calls it or a method of it (``createAmazonBedrock(opts)(model)``)."""
    # a call that starts where ``call`` starts and goes on past its end is made on what
    # ``call`` returned; awaiting it (``createIssue(body).then(...)``) or converting its
    # answer is no use of a handle: the call acted
    conversions = project.catalog.open_world.answer_conversions
    return _handle_factory(project, call, fn, facts) or any(
        other.span[:2] == call.span[:2]
        and other.span[2:] > call.span[2:]
        and other.method not in _PROMISE_METHODS
        and other.method not in conversions
        for other in project.calls_in(fn.qualname)
    )


def _reads_a_key(call: Call) -> bool:
    """``ack.get("task_id")``: a mapping's value read by its literal key, as an answer's
    fields are read; a client's ``get`` takes an id or a keyword (``files.get(fileId=f)``)."""
    return (
        call.method == "get"
        and not call.kwargs
        and bool(call.args)
        and call.args[0].string() is not None
        and call.args[0].kind == "const"
    )


def _sent_in_chain(world: OpenWorld, call: Call, calls: list[Call]) -> bool:
    """``service.users().labels().create(body=b).execute()``: a builder terminal later in
    the same expression sends what ``call`` builds, and is judged there; so is the terminal
    handed to a runner uncalled (``asyncio.to_thread(....create(body=b).execute)``)."""
    start, prefix = call.span[:2], call.text + "("
    for other in calls:
        if (
            other.span[:2] == start
            and other.method in world.terminals
            and other.text.startswith(prefix)
        ):
            return True
        for value in (*other.args, *other.kwargs.values()):
            if (
                value.kind == "attr"
                and value.text.startswith(prefix)
                and value.text.rsplit(".", 1)[-1] in world.terminals
            ):
                return True
    return False


def sent_by_terminal(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> bool:
    """``request = service.users().messages().send(...)``, then ``request.execute()``: the
    call builds a request that a builder terminal sends later, where it is judged."""
    target = _assigned_to(project, call, fn, facts)
    if target is None:
        return False
    terminals = project.catalog.open_world.terminals
    return any(
        other.order > call.order
        and other.method in terminals
        and other.text == f"{target}.{other.method}"
        for other in project.calls_in(fn.qualname)
    )


def _handed_out(
    project: ProjectIndex,
    world: OpenWorld,
    root: str,
    fn: Function,
    facts: ModuleFacts,
    call: Call,
    depth: int = 0,
) -> bool:
    """Whether ``root`` starts from a local bound to what an external client returned,
    directly or through other such locals (``bucket = client.bucket(b)``, then ``blob =
    bucket.blob(k)``; ``lists = board.list_lists()[0]``)."""
    first = root.split(".", 1)[0]
    if not first.isidentifier() or depth > 3:
        return False
    walked = _walked(project, first, fn, facts, call)
    for bound in (
        [walked] if walked is not None else _bindings_before(project, first, fn, facts, call)
    ):
        if bound.kind == "name" and bound.text != first:
            bound = local_value(project, bound.text, fn, facts, call.order) or bound
        # ``board.list_lists()[0]``: an item of what the call returned
        made = bound.chain.without_items() if bound.chain is not None else None
        if made is None or not made.ends_in_call:
            continue
        made_by = _root(made)
        if not made_by:
            continue
        callee = (bound.qualname or "").replace("()", "") if bound.kind == "call" else ""
        if callee.split(".", 1)[0] in SELF_NAMES:
            # ``msg = self.client.me.messages.by_message_id(i)``: the attribute's type, as
            # the class's methods set it, says where the call goes
            callee = (project.bound_callee(bound, fn, facts) or callee).replace("()", "")
        if _leaves_project(project, world, made_by, fn, facts, callee) or (
            made_by.split(".", 1)[0] != first
            and _handed_out(project, world, made_by, fn, facts, call, depth + 1)
        ):
            return True
    return False


def _bindings_before(
    project: ProjectIndex, name: str, fn: Function, facts: ModuleFacts, call: Call
) -> list[Value]:
    """Every value ``fn`` binds ``name`` to before ``call``, any of which it may hold there
    (``role = None``, then ``role = guild.get_role(i)`` in one branch and ``role = r`` in
    another), the last first; for a name a nested function neither binds nor takes, the
    last binding of the function it is nested in (``local_value``)."""
    bound = [
        assignment.value
        for assignment in project.local_assignments(facts, fn.qualname, name)
        if assignment.order <= call.order
    ]
    if bound:
        return bound[::-1]
    inherited = local_value(project, name, fn, facts, call.order)
    return [inherited] if inherited is not None else []


def _walked(
    project: ProjectIndex, name: str, fn: Function, facts: ModuleFacts, call: Call
) -> Value | None:
    """What the ``for`` loop around ``call`` walks when it binds ``name`` (``for comment in
    repo.get_comments(): comment.edit(...)``), unless the loop body rebinds it first."""
    span = call.span
    for loop in reversed(fn.loops):
        inside = loop.span[:2] <= span[:2] and span[2:] <= loop.span[2:]
        if not inside or name not in loop.targets or loop.iterable is None:
            continue
        rebound = any(
            loop.span.line <= a.span.line and a.order <= call.order
            for a in project.local_assignments(facts, fn.qualname, name)
        )
        return None if rebound else loop.iterable
    return None


def _leaves_project(
    project: ProjectIndex,
    world: OpenWorld,
    root: str,
    fn: Function,
    facts: ModuleFacts,
    callee: str = "",
) -> bool:
    """Whether calls on ``root`` go to an external client: a name that says so
    (``service``, ``self._client``), or a callee resolved into an external package."""
    if not root:
        return False
    last = root.rsplit(".", 1)[-1]
    if world.client_roots.search(last) or project.catalog.client_receiver.search(last):
        return True
    head = callee.split(".", 1)[0]
    if not callee or head in STDLIB_MODULES or head in project.module_heads:
        return False
    imported = project.imported_heads(facts) | project.third_party_heads
    if head not in imported or callee.count(".") < 2:
        return False
    if any(callee.startswith(f"{package}.") for package in project.catalog.service_packages):
        # ``stripe.Invoice.finalize_invoice(...)``: a class of a service's SDK, called on
        # the class itself; no entry knows it, but it goes to the service
        return True
    # ``slack_sdk.WebClient.conversations_list``: resolved into a package, called on a client
    return head != root.split(".", 1)[0]


def _just_built(
    project: ProjectIndex,
    world: OpenWorld,
    receiver: Chain | None,
    fn: Function,
    facts: ModuleFacts,
    call: Call,
) -> bool:
    """``Issue(...).save()`` or ``mail = Mail(...); mail.send()``: a class built here; or
    an object a client's factory makes new (``m = account.new_message(); m.send()``)."""
    name = _called(receiver)
    if name is None and receiver is not None and receiver.is_name:
        bound = local_value(project, receiver.root, fn, facts, call.order)
        if bound is not None and bound.kind == "call":
            name = _called(bound.chain)
    if name is None:
        return False
    if name[:1].isupper():
        return name not in {"Path", "PurePath"}
    return (words(name, identifier=True) or [""])[0] in world.object_factories


def delivers_telemetry(project: ProjectIndex, effect: Effect, helper: Function) -> bool:
    """A request or a local write a helper named for the server's own logs, audit trail or
    metrics makes (``flushLoggerSafely``, ``flush_audit_events``, ``record`` in
    ``app/telemetry.py``, a session trace file written by ``tool_execute`` in
    ``core/logger.py``): telemetry of the call reaching it, not the side effect of the tool
    that calls the helper. Its module's own name says so as well as its own name (not a
    package above it: a whole ``analytics_agent`` package is no telemetry; nor a class:
    ``Audit.send`` may be the business's audit queue)."""
    if not effect.remote and effect.kind not in {"write", "destructive"}:
        return False  # (a log's old files removed are its own too)
    parts = [helper.module.rsplit(".", 1)[-1].rsplit("/", 1)[-1], helper.name]
    named = {word for part in parts for word in words(part, identifier=True)}
    return bool(named & project.catalog.open_world.telemetry_words)


def opens_a_discard_file(project: ProjectIndex, call: Call) -> bool:
    """``open(os.devnull, "w")``: the file opened is the null device (the catalogue's
    ``discard_files``), which keeps nothing written to it."""
    path = argument_at(call.args, call.kwargs, ArgSpec(0, "file"))
    if path is None:
        return False
    written = path.string() if path.kind == "const" else (path.qualname or path.text)
    return written in project.catalog.open_world.discard_files


def removes_its_temporary(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> bool:
    """``os.remove(tmp)`` where the function itself made ``tmp`` (``fd, tmp =
    tempfile.mkstemp(...)``, the catalogue's ``temp_file_makers``): its own clean-up."""
    target = call.args[0] if call.args else None
    if target is None or target.kind != "name":
        return False
    makers = project.catalog.open_world.temp_file_makers
    bound = project.local_assignments(facts, fn.qualname, target.text)
    made = [
        a
        for a in bound
        if (a.value.qualname or "") in makers
        # ``fd, tmp = tempfile.mkstemp(...)``: an item of what it answers
        or (a.value.kind == "other" and bool(a.value.calls) and a.value.calls[0] in makers)
    ]
    return bool(made) and all(a in made or a.value.text == "None" for a in bound)


def claims_a_lease(project: ProjectIndex, call: Call) -> bool:
    """``redis.set(key, "1", {nx: true, ex: 900})``: a key set only if absent, expiring by
    itself: a lock of the application's own that frees itself."""
    world = project.catalog.open_world
    return (
        call.method in world.lease_set_methods
        and any(
            call.kwargs[name].is_true()
            for name in world.lease_if_absent_options
            if name in call.kwargs
        )
        and any(name in world.expiry_options for name in call.kwargs)
    )


def telemetry_package(project: ProjectIndex, callee: str) -> bool:
    """Whether ``callee`` belongs to a package named for telemetry
    (``@acme/tinybird-ai-analytics``, ``app_metrics``): what it sends records the call
    that reached it, not a side effect of the tool."""
    if callee.startswith("npm:"):
        package = npm_package_name(callee[4:].split(".", 1)[0])
    else:
        package = callee.split(".", 1)[0]
    if package in project.module_heads:
        return False
    return bool(set(words(package)) & project.catalog.open_world.telemetry_words)


def is_plumbing(project: ProjectIndex, effect: Effect, fn: Function) -> bool:
    """A local file write that is credential plumbing (the OAuth token file a client
    refreshes) or a derived cache of remote state: not the tool's side effect. ``fn`` is
    the function making the write, or one the write is reached through
    (``refresh_board_map`` calling ``save_board_map``). A request is plumbing when the
    function making it logs in: its name starts with a word that the catalogue calls no
    effect as a method and that names a credential (``_authenticate_session``), or it
    names a credential and no write (``refresh_access_token``, ``get_token``), or it builds
    a credential holder (``create_credential_provider``: a catalogue ``credential_holders``
    word last, a credential word before it)."""
    world = project.catalog.open_world
    if effect.remote:
        named = words(fn.name, identifier=True)
        credential = world.credential_words
        if named and named[-1] in world.credential_holders and set(named) & credential:
            # ``create_credential_provider``: builds how a client signs in
            return True
        if effect.kind == UNKNOWN:
            # ``get_stored_credentials`` loading them with a call no catalogue knows
            # (``Credentials.new_from_json(data)``): a function named to read credentials
            return world.verb_class(fn.name) == "read" and bool(set(named) & credential)
        if effect.kind == "destructive":
            # ``clear_credentials`` dropping a stored token (``redis.delete(key)``) after an
            # auth error: signing in again, not the tool's deletion; ``delete_secret`` and
            # ``revoke_token`` say they delete
            verb = world.verb_class(fn.name)
            return verb not in {"destructive", None} and bool(set(named) & credential)
        if effect.kind not in {"network_write", "write"}:
            return False
        first = named[0] if named else ""
        if first in world.no_effect and any(first.startswith(word) for word in credential):
            return True
        return world.verb_class(fn.name) in {None, "read"} and bool(set(named) & credential)
    if effect.kind not in {"write", "destructive"}:
        return False
    named = words(fn.name, identifier=True)
    said = set(named)
    for argument in effect.call.args[:1]:
        if argument.kind == "call" and constructed_type(argument) is not None:
            continue  # ``session.add(Memo(text=...))``: a row written, not a place named
        path = words(re.sub(r"\W+", "_", argument.text), identifier=True)
        said.update(path)
        if world.names_a_credential(path):
            return True
    if world.names_a_credential(named) or said & world.cache_words:
        return True
    # ``with open(log_file, "a") as f``: the server's own log, appended to; or the folder
    # it is kept in, made when missing (``os.makedirs(log_dir, exist_ok=True)``)
    mode = argument_at(effect.call.args, effect.call.kwargs, ArgSpec(1, "mode"))
    appends = mode is not None and "a" in (mode.string() or "")
    kept = effect.call.kwargs.get("exist_ok")
    made_if_missing = kept is not None and kept.const is True
    return (appends or made_if_missing) and effect.kind == "write" and bool(said & world.log_words)


# A redirection that sends a stream to another (``2>&1``) or to the null device.
_STREAM_REDIRECT = re.compile(r"(?<=\s)\d?>(?:&\d|\s*/dev/null)(?=\s|$)")
# A subcommand written as a word (``search``, ``list-tags``): no option, path or script name.
_PLAIN_SUBCOMMAND = re.compile(r"^[a-z][a-z_-]*$")


def command_reads(
    project: ProjectIndex, value: Value, fn: Function, facts: ModuleFacts, before: int
) -> bool:
    """Whether the command ``value`` (as written in ``fn`` before call ``before``) is a
    literal one whose program and subcommand only read: the command a process is started
    with, or the one a caller hands a helper that starts it (``_run(["systemctl",
    "is-active", name])``)."""
    walked = _walked_commands(project, value, fn, facts, before)
    if walked is not None:
        return bool(walked) and all(command_text_reads(project, each) for each in walked)
    command = _command_text(project, value, fn, facts, before)
    return command is not None and command_text_reads(project, command)


def _walked_commands(
    project: ProjectIndex, value: Value, fn: Function, facts: ModuleFacts, before: int
) -> list[str] | None:
    """``for command in [["dmesg", "--ctime"], ["journalctl", "-k"]]: run(command)``: each
    literal command the loop variable takes ([] when one of them cannot be read); None
    when ``value`` is no such variable."""
    if value.kind != "name" or local_value(project, value.text, fn, facts, before) is not None:
        return None
    for loop in fn.loops:
        iterable = loop.iterable
        if loop.kind != "for" or value.text not in loop.targets or iterable is None:
            continue
        if iterable.kind == "name":
            iterable = local_value(project, iterable.text, fn, facts, before)
        if iterable is None or iterable.kind != "list" or not iterable.elements:
            return []
        texts = [_command_text(project, e, fn, facts, before) for e in iterable.elements]
        return [text for text in texts if text is not None] if all(texts) else []
    return None


def command_text_reads(project: ProjectIndex, command: str) -> bool:
    """Whether the literal start of a command (``git log --oneline``) only reads."""
    world = project.catalog.open_world
    # ``2>&1``, ``2>/dev/null``: the output joins another stream or is discarded, no file
    command = _STREAM_REDIRECT.sub(" ", command)
    parts = command.split()
    if not parts or re.search(r"[;&|`$<>]", command.split("{", 1)[0]):
        return False
    program = parts[0].rsplit("/", 1)[-1]
    if program in world.read_programs:
        # ``["grep", "-rn", pattern, path]``: whatever it is given, it reads, unless the
        # shell sends its output anywhere (``> count.txt``)
        return not re.search(r"[;&|`$<>]", command)
    writing = world.read_unless.get(program)
    if writing is not None:
        # ``["journalctl", "-k", "-n", "300"]``: it reads unless given an option that
        # changes something (``--vacuum-time``), written or left to run time (``{}``)
        given = {part.partition("=")[0] for part in parts[1:]}
        return not (given & writing or "{}" in given or re.search(r"[;&|`$<>]", command))
    if len(parts) < 2:
        return False
    allowed = world.read_commands.get(program)
    if allowed is not None:
        return parts[1] in allowed
    # a program the catalogue does not know, run with a literal subcommand that is a plain
    # word (``polymarket search <query>``, ``trends related ...``): the subcommand names the
    # operation, as a method's name does; only a read verb makes it a read. Command groups
    # may come first (``netsh wlan show interfaces``, ``az vm list``), and a group's name
    # may read like a verb (``gh release create``): the literal words before the first
    # option or argument read when one of them reads and none writes.
    verbs: set[str | None] = set()
    for subcommand in parts[1:4]:
        if not _PLAIN_SUBCOMMAND.match(subcommand):
            break
        if subcommand in world.no_effect:
            return False  # ``close``, ``commit``: a CLI acts on them
        verbs.add(world.verb_class(subcommand))
    if verbs & {"non_idempotent", "idempotent_write", "destructive"}:
        return False
    return "read" in verbs or _prints_data(world, parts[1:])


def _prints_data(world: OpenWorld, arguments: list[str]) -> bool:
    """Whether the command asks to print its answer in a machine-readable format
    (``--format json``, ``-o yaml``, ``--format=csv``, ``--json``): run to be read."""
    formats = world.output_formats
    for index, argument in enumerate(arguments):
        option, _, given = argument.partition("=")
        if option in world.output_format_options:
            chosen = given or (arguments[index + 1] if index + 1 < len(arguments) else "")
            # ``--format=csv,noheader``: the format, then its settings
            if chosen.lower().partition(",")[0] in formats:
                return True
        elif argument.startswith("--") and argument[2:].lower() in formats:
            return True
    return False


def _command_text(
    project: ProjectIndex,
    value: Value,
    fn: Function,
    facts: ModuleFacts,
    before: int,
    depth: int = 0,
) -> str | None:
    """The literal start of a command: a string, an f-string's text, a list of strings,
    ``command.split()``, or a local variable holding one of those."""
    if depth > 3:
        return None
    if value.kind == "name":
        bound = local_value(project, value.text, fn, facts, before)
        return _command_text(project, bound, fn, facts, before, depth + 1) if bound else None
    if value.kind == "const":
        return value.string()
    if value.kind == "fstring":
        return "".join(str(part.const) if part.op == "text" else "{}" for part in value.parts)
    if value.op == "+" and value.parts and value.parts[0].kind == "list":
        # ``["rg", "-n"] + excludes + [pattern, path]``: the list it starts with
        return _command_text(project, value.parts[0], fn, facts, before, depth + 1)
    if value.kind == "list":
        # the literal words it starts with (``["netsh", "wlan", "show", name]``)
        head: list[str] = []
        for element in value.elements[:4]:
            word = element.string()
            if not word:
                break
            head.append(word)
        if len(value.elements) == 1 and head:
            return head[0]  # ``["ls"]``
        if len(head) < 2:
            return None
        # the options after the words matter too (``--format json``): each other element
        # stands as a placeholder, as an f-string's values do
        return " ".join(element.string() or "{}" for element in value.elements)
    chain = value.chain
    if (
        value.kind == "call"
        and chain is not None
        and chain.steps == (("attr", "split"), CALL_STEP)
        and not (value.call_args or value.call_kwargs)
    ):
        # ``command.split()``, ``"git status".split()``
        if chain.root:
            bound = local_value(project, chain.root, fn, facts, before)
            return _command_text(project, bound, fn, facts, before, depth + 1) if bound else None
        return chain.start.string() if chain.start is not None else None
    return None


def file_mode(
    project: ProjectIndex, call: Call, sink: Sink, fn: Function, facts: ModuleFacts
) -> str | None:
    """The mode a file is opened with: ``"r"`` when none is given, the string written or
    held in a local variable (``mode = "a" if append else "w"`` gives ``aw``), None when it
    cannot be read (a parameter, a call)."""
    position = (sink.method_from or {}).get("arg", 1)
    mode = argument_at(call.args, call.kwargs, ArgSpec(position, "mode"))
    if mode is None:
        return "r"
    if mode.kind == "name":
        bound = local_value(project, mode.text, fn, facts, call.order)
        if bound is None:
            return None
        mode = bound
    if mode.string() is not None:
        return mode.string()
    if mode.op == "if":
        branches = [part.string() for part in mode.parts]
        if all(branch is not None for branch in branches):
            return "".join(branch or "" for branch in branches)
    return None
