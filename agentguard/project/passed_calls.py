"""Calls made through a parameter: a project helper that calls the callable it is handed
(``def _call(fn, *args): return fn(*args)``), however many helpers pass it on. The helper's
own call names nothing (``fn``); what runs is what each caller hands it. A project function
handed over is a call edge (``project.index``); an external method (``_call(client.remove,
key)``) is judged here, at the call site, as a call of that method; anything else handed (an
item of a table, what a call returned) runs code no reader of the source can name, an
``unknown`` effect, never no effect."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.project import open_world
from agentguard.project.open_world import WRITE_CLASSES
from agentguard.project.sink_calls import classify_sink
from agentguard.project.tool_facts import Effect

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex
    from agentguard.project.index.call_site import CallSite


def passed_effects(
    project: ProjectIndex, site: CallSite, fn: Function, facts: ModuleFacts
) -> list[Effect]:
    """The effects of what ``site`` hands a project function that calls it."""
    found: list[Effect] = []
    for param, value in project.passed_callables(site):
        if value.kind == "name" and value.text in fn.params:
            continue  # the caller's own parameter: its callers say what it is
        held = value
        if value.kind == "name":
            bound = project.held_value(value.text, fn, facts)
            if bound is not None and bound.kind in {"attr", "call"}:
                held = bound  # ``remove = client.remove`` handed on by its local
        if (
            held.kind == "call"
            and (held.qualname or "").rsplit(".", 1)[-1] == "partial"
            and held.call_args
            and held.call_args[0].kind in {"name", "attr"}
        ):
            held = held.call_args[0]  # ``partial(client.remove, key)``: the method inside
        if held.kind in {"name", "attr"} and held.chain is not None:
            call = _as_call(site.call, held, value)
            callee = project.call_site(call, fn, facts).callee
            effect = classify_sink(project, call, callee, fn, facts)
            if effect is not None:
                found.append(effect)
            continue
        found.append(_unknown(site.call, param, fn, facts))
    return found


def _as_call(call: Call, method: Value, given: Value) -> Call:
    """The handed method called with the arguments that follow it at the call site."""
    text = method.text
    args = call.args
    index = next((i for i, arg in enumerate(args) if arg is given), None)
    rest = args[index + 1 :] if index is not None else []
    kwargs = {k: v for k, v in call.kwargs.items() if v is not given}
    return Call(
        callee=method.qualname or text,
        text=f"{text}(...)",
        method=(method.qualname or text).rsplit(".", 1)[-1],
        receiver=text.rsplit(".", 1)[0] if "." in text else None,
        span=call.span,
        args=list(rest),
        kwargs=kwargs,
        function=call.function,
        loop_ids=call.loop_ids,
        order=call.order,
    )


def _unknown(call: Call, param: str, fn: Function, facts: ModuleFacts) -> Effect:
    return Effect.judged(
        call,
        fn.qualname,
        facts.path,
        kind=open_world.UNKNOWN,
        idempotent=None,
        remote=True,
        detail=f"calls what it is handed as `{param}`, of no kind the source tells",
        confidence=Confidence.LOW,
    )


def parameter_call_targets(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> tuple[list[str], list[Effect]]:
    """``apiPost(path, body)`` where ``apiPost`` is a parameter of ``fn`` that calls of no
    resolved target hand (``handler.handle(name, args, apiGet, apiPost)`` on a module
    picked from a table): what they hand it runs at this call. Each project function handed
    is a call edge from here; an external method handed (``client.remove``) is judged as a
    call of it; anything else is unknown, never no effect, and so is a parameter named for
    a write that no call is seen handing anything."""
    param = call.callee
    targets: list[str] = []
    effects: list[Effect] = []
    resolved, handed = project.handed_values(fn, param)
    if resolved:
        # calls that resolve to ``fn`` each judge what they hand at their own site
        # (``passed_effects``): one caller's callable is not every caller's
        return targets, effects
    for value, site_call, site_facts in handed:
        functions = project.handed_functions(value, site_call, site_facts)
        if functions:
            targets.extend(t for t in functions if t != fn.qualname and t not in targets)
            continue
        caller = project.function(site_call.function) if site_call.function else None
        if value.kind == "name" and _a_parameter_around(project, caller, value.text):
            continue  # handed on from a parameter of the caller (or of a function it is in)
        if value.kind == "attr" and value.chain is not None and caller is not None:
            method = _as_call(call, value, value)
            method.args, method.kwargs = call.args, call.kwargs
            callee = project.call_site(method, caller, site_facts).callee
            effect = classify_sink(project, method, callee, fn, facts)
            if effect is not None:
                effects.append(effect)
            continue
        if value.kind == "lambda":
            continue  # a lambda's calls are its caller's own
        effects.append(_unknown(call, param, fn, facts))
    if not handed and open_world.method_verb(project, param) in WRITE_CLASSES:
        # no call is seen handing it anything (a callback of an options object): unknown
        # when its name says it writes (``onSubmitOrder``), as a method of an unknown
        # object is; a callback named for nothing else (``onProgress``) is not judged
        effects.append(_unknown(call, param, fn, facts))
    return targets, effects


def _a_parameter_around(project: ProjectIndex, fn: Function | None, name: str) -> bool:
    """Whether ``name`` is a parameter of ``fn`` or of a function ``fn`` is written in:
    what those functions' callers hand decides, not this call."""
    while fn is not None:
        if name in fn.params:
            return True
        head, sep, _ = fn.qualname.rpartition(".<locals>.")
        fn = project.function(head) if sep else None
    return False
