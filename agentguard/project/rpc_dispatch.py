"""Generic RPC calls that name the remote operation in a string argument (Odoo's external
API: ``models.execute_kw(db, uid, password, "res.partner", "create", [values])``, the
catalogue's ``rpc_dispatch``). The operation is judged by the verb table like a method name
(``create`` creates, ``write`` sets fields, ``search_read`` reads, ``message_post`` posts);
when it is a parameter of the function making the call, each caller's argument decides, as
for an HTTP helper whose method is its parameter. An operation no verb names, or one the
model chooses, is an unknown effect: never judged read."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence, EvidenceStep, Location, StepKind
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.project.open_world import UNKNOWN
from agentguard.project.read_posts import DELETES, READ, SETS, WRITE, rpc_operation_judgement
from agentguard.project.sink_keys import local_value
from agentguard.project.tool_facts import SELF_NAMES, Effect

if TYPE_CHECKING:
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


def judge_rpc(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | bool | None:
    """The effect of an RPC dispatch call (None: a read), or False when ``call`` is none
    (never True)."""
    operation = rpc_operation(project, call, callee)
    if operation is False or project.call_site(call, fn, facts).target is not None:
        return False  # no dispatch, or the project's own function of that name
    site = Location(facts.path, call.span)
    effect = Effect(
        kind=UNKNOWN,
        idempotent=None,
        remote=True,
        sink=call.callee,
        site=site,
        call=call,
        chain=(EvidenceStep(StepKind.SINK, site, callee=call.callee, detail="an RPC dispatch"),),
        confidence=Confidence.LOW,
        heuristic=True,
        function=fn.qualname,
    )
    if isinstance(operation, Value) and operation.kind == "name":
        if operation.text in fn.params and operation.text not in SELF_NAMES:
            return replace(effect, kind=RPC_DEFERRED, method_param=operation.text)
        operation = local_value(project, operation.text, fn, facts, call.order) or operation
    name = operation.string() if isinstance(operation, Value) else None
    return _named(project, effect, name) if name else effect


def _named(project: ProjectIndex, effect: Effect, operation: str) -> Effect | None:
    """``effect`` once its operation is known: judged by its name as any RPC operation is
    (``rpc_operation_judgement``: ``search_read`` reads, ``write`` sets fields,
    ``add_followers`` links existing things, ``unlink`` names no verb)."""
    judged = rpc_operation_judgement(project.catalog, operation)
    if judged is not None and judged.verdict == READ:
        return None
    chain = (
        *effect.chain[:-1],
        replace(effect.chain[-1], detail=f"the RPC operation `{operation}`"),
    )
    if judged is None or judged.verdict not in _JUDGED_EFFECTS:
        return replace(effect, kind=UNKNOWN, method=operation, method_param=None, chain=chain)
    kind, idempotent = _JUDGED_EFFECTS[judged.verdict]
    return replace(
        effect,
        kind=kind,
        idempotent=idempotent,
        method=operation,
        method_param=None,
        confidence=Confidence.MEDIUM,
        chain=chain,
    )


def map_operation(project: ProjectIndex, effect: Effect, argument: Value | None) -> Effect | None:
    """An RPC helper's operation parameter takes the caller's ``argument`` (not a parameter
    of the caller's own, which defers to its callers): a string is judged, anything else is
    unknown."""
    if argument is None:
        return replace(effect, kind=UNKNOWN, method_param=None)
    name = argument.string()
    if name is None:
        return replace(effect, kind=UNKNOWN, method_param=None)
    return _named(project, effect, name)
