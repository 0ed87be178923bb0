"""Generic RPC calls that name the remote operation in a string argument (Odoo's external
API: ``models.execute_kw(db, uid, password, "res.partner", "create", [values])``, the
catalogue's ``rpc_dispatch``). The operation is judged by the verb table like a method name
(``create`` creates, ``write`` sets fields, ``search_read`` reads, ``message_post`` posts);
when it is a parameter of the function making the call, each caller's argument decides, as
for an HTTP helper whose method is its parameter. An operation no verb names, or one the
model chooses, is an unknown effect: never judged read."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.knowledge.words import words
from agentguard.project.open_world import UNKNOWN
from agentguard.project.read_posts import DELETES, READ, SETS, WRITE, rpc_operation_judgement
from agentguard.project.sink_keys import local_value
from agentguard.project.tool_facts import SELF_NAMES, Effect

if TYPE_CHECKING:
    from agentguard.knowledge.catalog import Sink
    from agentguard.project.index import ProjectIndex

# An RPC whose operation a caller chooses: no effect until a caller passes one.
RPC_DEFERRED = "rpc_deferred"

# what an operation's name says (``read_posts.rpc_operation_judgement``) -> (effect kind,
# idempotent): the call always reaches the remote service.
_JUDGED_EFFECTS: dict[str, tuple[str, bool]] = {
    WRITE: ("network_write", False),
    SETS: ("network_write", True),
    DELETES: ("destructive", True),
}


def rpc_operation(project: ProjectIndex, call: Call, callee: str) -> Value | bool | None:
    """The argument naming the operation of an RPC dispatch call; False when ``call`` is
    no such call, None when it passes no operation."""
    dispatch = project.catalog.rpc_dispatch
    position = dispatch.first(callee, call.callee) if dispatch else None
    if position is None:
        return False
    return call.args[position] if position < len(call.args) else call.kwargs.get("method")


def _proxy_method(project: ProjectIndex, callee: str) -> bool:
    """Whether ``callee`` is a method called on a remote-procedure proxy (the catalogue's
    ``rpc_proxies``), other than the proxy's own dunder methods."""
    owner, _, method = callee.rpartition(".")
    return owner in project.catalog.rpc_proxies and not method.startswith("_")


def _stub_method(project: ProjectIndex, callee: str) -> str | None:
    """The remote method a stub's attribute sends (``AddItem`` for ``CartStub.AddItem``,
    bound in ``__init__`` to ``channel.unary_unary("/shop.Cart/AddItem")``), or None."""
    owner, _, attr = callee.rpartition(".")
    if owner not in project.classes:
        return None
    for bound in project.self_bindings(owner, attr):
        made_by = bound.calls[0].rpartition(".")[2] if bound.kind == "call" and bound.calls else ""
        path = bound.call_args[0].string() if bound.call_args else None
        if made_by in project.catalog.rpc_stub_methods and path:
            return path.rpartition("/")[2] or None
    return None


def judge_rpc(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | bool | None:
    """The effect of an RPC dispatch call (None: a read), or False when ``call`` is none
    (never True)."""
    operation = rpc_operation(project, call, callee)
    if operation is False and _proxy_method(project, callee):
        # ``proxy.create_object(doc, data)`` on an XML-RPC proxy: the method names it
        operation = Value(kind="const", text=repr(call.method), const=call.method)
    if operation is False:
        stub_method = _stub_method(project, callee)
        if stub_method is not None:
            operation = Value(kind="const", text=repr(stub_method), const=stub_method)
    if operation is False or project.call_site(call, fn, facts).target is not None:
        return False  # no dispatch, or the project's own function of that name
    effect = Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind=UNKNOWN,
        idempotent=None,
        remote=True,
        detail="an RPC dispatch",
        confidence=Confidence.LOW,
        sink=call.callee,
        callee=call.callee,
    )
    for _ in range(2):  # a request object naming the operation (MCP's ``tools/call``)
        if isinstance(operation, Value) and operation.kind == "name":
            if operation.text in fn.params and operation.text not in SELF_NAMES:
                return replace(effect, kind=RPC_DEFERRED, method_param=operation.text)
            operation = local_value(project, operation.text, fn, facts, call.order) or operation
        if not isinstance(operation, Value) or operation.kind != "dict":
            break
        operation = _requested_operation(operation)
    name = operation.string() if isinstance(operation, Value) else None
    if name is None and isinstance(operation, Value) and operation.kind == "attr":
        # a JavaScript function reference (``api.notes.upsert``) names what it runs
        name = operation.text if facts.language != "python" else None
    return _named(project, effect, name) if name else effect


def _requested_operation(request: Value) -> Value | None:
    """The operation a request object names: the tool an MCP ``tools/call`` request runs
    (``{method: "tools/call", params: {name}}``), another request's method (``tools/list``
    reads), or the ``name`` of the parameters handed to ``callTool({name, arguments})``."""
    method = request.items.get("method")
    params = request.items.get("params")
    if method is not None and method.string() == "tools/call":
        return params.items.get("name") if params is not None and params.kind == "dict" else None
    return method if method is not None else request.items.get("name")


def _named(
    project: ProjectIndex, effect: Effect | Callable[[], Effect], operation: str
) -> Effect | None:
    """``effect`` once its operation is known: judged by its name as any RPC operation is
    (``rpc_operation_judgement``: ``search_read`` reads, ``write`` sets fields,
    ``add_followers`` links existing things, ``unlink`` names no verb). An operation that
    runs what it names (``run_all_cells``, ``exec_script``) is unknown, never a read."""
    judged = rpc_operation_judgement(project.catalog, operation)
    if judged is not None and judged.verdict == READ:
        return None
    if not isinstance(effect, Effect):
        effect = effect()  # worked out only for an operation that is no read
    chain = (
        *effect.chain[:-1],
        replace(effect.chain[-1], detail=f"the RPC operation `{operation}`"),
    )
    if judged is None or judged.verdict not in _JUDGED_EFFECTS:
        return replace(effect, kind=UNKNOWN, method=operation, method_param=None, chain=chain)
    kind, idempotent = _JUDGED_EFFECTS[judged.verdict]
    if not effect.remote and kind == "network_write":
        kind = "write"  # another process on this machine: a local write
    return replace(
        effect,
        kind=kind,
        idempotent=idempotent,
        method=operation,
        method_param=None,
        confidence=Confidence.MEDIUM,
        chain=chain,
    )


def map_operation(
    project: ProjectIndex,
    effect: Effect,
    argument: Value | None,
    caller: Function,
    facts: ModuleFacts,
    call: Call,
) -> Effect | None:
    """An RPC helper's operation parameter takes the caller's ``argument`` (not a parameter
    of the caller's own, which defers to its callers): a string is judged, anything else is
    unknown. A channel helper handed the whole message (``self._send({"action":
    "delete_file", "path": p})``) is judged by the operation the caller's message names;
    a message naming none is no command."""
    if argument is None:
        return replace(effect, kind=UNKNOWN, method_param=None)
    message = _message(project, argument, call, caller, facts, 0)
    if message is not None:
        judged = _judged_message(
            project,
            lambda: replace(effect, kind=UNKNOWN, method_param=None),
            message,
            caller,
            facts,
            call,
        )
        return judged or None
    name = argument.string()
    if name is None:
        return replace(effect, kind=UNKNOWN, method_param=None)
    return _named(project, effect, name)


def judge_channel(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts, sink: Sink | None
) -> Effect | bool | None:
    """A message sent over a channel (``sock.sendall(json.dumps({"type": "list_layers",
    "params": p}).encode())``, a websocket's or a queue's ``send``) that names the operation
    it asks for: judged by that operation as an RPC operation is (``list_layers`` reads,
    ``delete_layer`` deletes); an operation a caller passes is its caller's to name, one the
    model chooses unknown. Sent to this machine (localhost, a unix socket, a child process's
    stdin), its effect is local. None: a read; False: ``call`` sends no such message. A
    whole message handed in is the caller's to name, unless the catalogue knows the send
    (``sink``)."""
    world = project.catalog.open_world
    if (
        call.method not in world.channel_sends and call.method not in world.channel_shared_sends
    ) or not call.args:
        return False
    # the message: the first argument, or the second after an event's name
    # (``socketio.emit("device-command", payload)``)
    sent = call.args[:2]
    message = next(
        (m for m in (_message(project, v, call, fn, facts, 0) for v in sent) if m is not None),
        None,
    )
    if message is not None:
        return _judged_message(
            project, lambda: _channel_effect(project, call, fn, facts), message, fn, facts, call
        )
    if sink is not None or call.method in world.channel_shared_sends:
        return False  # ``f.write(text)``, ``queue.put(item)``: no command handed on
    # the parameter used as a mapping, not an event's name handed on beside it
    # (``emit(event, command)``)
    handed = next(
        (
            v.text
            for v in sent
            if v.kind == "name"
            and v.text in fn.params
            and v.text not in SELF_NAMES
            and _read_by_key(project, v.text, fn, facts)
        ),
        None,
    )
    if handed is None:
        return False  # a text or an object handed on (``channel.send(text)``)
    # the whole message is the caller's: its operation is named where it is written
    return replace(
        _channel_effect(project, call, fn, facts), kind=RPC_DEFERRED, method_param=handed
    )


def _channel_effect(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> Effect:
    """The unknown effect of a command sent over ``call``'s channel, local when the channel
    leads to this machine: worked out only once there is a command to judge."""
    return Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind=UNKNOWN,
        idempotent=None,
        remote=not _local_endpoint(project, call, fn, facts),
        detail="a command sent over a channel",
        confidence=Confidence.LOW,
    )


def _read_by_key(project: ProjectIndex, name: str, fn: Function, facts: ModuleFacts) -> bool:
    """Whether ``fn`` uses its parameter ``name`` as a mapping: sets or reads an item of it
    (``command["request_id"] = rid``, ``command["action"]``) or asks it for a key
    (``command.get("action")``). A message with fields, not a text or an object to send."""
    keyed = f"{name}["
    if any(
        assignment.target.startswith(keyed) or assignment.value.text.startswith(keyed)
        for assignment in project.local_assignments(facts, fn.qualname)
    ):
        return True
    return any(
        call.chain is not None and call.chain.root == name and call.method == "get"
        for call in project.calls_in(fn.qualname)
    )


def _judged_message(
    project: ProjectIndex,
    effect: Callable[[], Effect],
    message: Value,
    fn: Function,
    facts: ModuleFacts,
    call: Call,
) -> Effect | Literal[False] | None:
    """A channel message judged by the operation it names; False when it names none."""
    world = project.catalog.open_world
    keys = (*world.channel_operation_keys, *world.channel_kind_keys)
    field = next((k for k in keys if k in message.items), None)
    if field is None:
        return False
    operation = message.items[field]
    if operation.kind == "name":
        if operation.text in fn.params and operation.text not in SELF_NAMES:
            return replace(effect(), kind=RPC_DEFERRED, method_param=operation.text)
        operation = local_value(project, operation.text, fn, facts, call.order) or operation
    name = operation.string()
    # a JSON-RPC method is named in its namespace (``tools/list``, ``resources/read``): the
    # last part is the operation
    named = words(name.rsplit(".", 1)[-1].rsplit("/", 1)[-1], identifier=True) if name else []
    # ``run_cell``, ``exec_script``: it runs what it names, judged below as unknown
    verb = bool(named) and (
        world.verbs.get(named[0]) is not None or world.runs_what_it_names(named[0])
    )
    if field in world.channel_kind_keys and (len(named) < 2 or not verb):
        # ``type`` names a kind of message as often as an operation (``{"type": "text"}``,
        # ``{"type": "progress"}``): an operation only when it is a verb and its object
        return False
    if not name:
        return effect()  # an operation the code works out at run time: unknown
    if not verb:
        return False  # ``{"command": "ping"}``: no verb, the message says nothing it does
    return _named(project, effect, name)


def _message(
    project: ProjectIndex, value: Value, call: Call, fn: Function, facts: ModuleFacts, depth: int
) -> Value | None:
    """The dict literal a sent value is made from: the value itself, a local holding it, or
    the dict a call serialises (``json.dumps({...}).encode()``)."""
    if depth > 3:
        return None
    if value.kind == "dict":
        return value
    if value.kind == "name":
        bound = local_value(project, value.text, fn, facts, call.order)
        return _message(project, bound, call, fn, facts, depth + 1) if bound else None
    if value.kind != "call":
        return None
    for given in (*value.call_args, *value.call_kwargs.values()):
        found = _message(project, given, call, fn, facts, depth + 1)
        if found is not None:
            return found
    span = value.span
    if span is None:
        return None
    for inner in project.calls_in(fn.qualname):
        inside = span[:2] <= inner.span[:2] and inner.span[2:] <= span[2:]
        if inner is call or not inside or not inner.args or inner.span == span:
            continue
        found = _message(project, inner.args[0], call, fn, facts, depth + 1)
        if found is not None:
            return found
    return None


def _local_endpoint(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> bool:
    """Whether the channel ``call`` sends on leads to this machine: an endpoint named in the
    call's receiver (``proc.stdin``), in the sending function's calls (``sock.connect(
    ("localhost", 9876))``), or in its module's or class's settings (``HOST = "127.0.0.1"``)."""
    local = project.catalog.open_world.local_endpoints
    if local.search(call.receiver or ""):
        return True
    # the sending method's own calls, then those of its class's other methods (``connect``
    # opening ``self.socket``) and the class's constructions (``Conn(host="localhost")``)
    places = [(fn.qualname, fn)]
    owner = project.classes.get(fn.class_name or "")
    if owner is not None:
        places += [
            (method, entry[0])
            for method in owner[0].methods
            if method != fn.qualname and (entry := project.functions.get(method)) is not None
        ]
    for qualname, place in places:
        for other in project.calls_in(qualname):
            if _names_local(project, local, other, place, facts):
                return True
    if owner is not None and fn.class_name:
        for other, _ in project.calls_to(fn.class_name):
            if any(local.search(value.text) for value in (*other.args, *other.kwargs.values())):
                return True
    return False


def _names_local(
    project: ProjectIndex, local: re.Pattern[str], call: Call, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether ``call`` is handed this machine's address, written or held
    (``sock.connect((HOST, PORT))``, ``(self.host, self.port)``)."""
    for value in (*call.args, *call.kwargs.values()):
        if local.search(value.text):
            return True
        named = [*value.names, *(e.text for e in value.elements if e.kind == "attr")]
        for name in named:
            held = project.held_value(name, fn, facts)
            if held is not None and local.search(held.text):
                return True
    return False
