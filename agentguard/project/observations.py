"""What a tool's errors become for the model (Q4, Q6): timeouts caught around side effects,
raw exception text in observations, error results without a code or a retryable flag.

Judgements read facts only (handlers, their raw-error uses, try blocks, effect summaries).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence, Location
from agentguard.facts.module_facts import (
    Function,
    Handler,
    ModuleFacts,
    RawErrorUse,
    TryBlock,
    Value,
)
from agentguard.knowledge.checklist import Knowledge
from agentguard.project.ledger_writes import ledger_index

if TYPE_CHECKING:
    from agentguard.project.project_model import ProjectModel
    from agentguard.project.tool_facts import Effect, ToolFacts


@dataclass
class ObservationSite:
    """A function whose return value or messages reach the model: a tool or an executor."""

    function: Function
    facts: ModuleFacts
    tool: ToolFacts | None
    role: str  # tool | wrapper | executor | helper (a function whose result a tool returns)


def observation_sites(project: ProjectModel) -> list[ObservationSite]:
    cache = vars(project)
    cached = cache.get("_observation_sites")
    if isinstance(cached, list):
        return cached
    sites: dict[str, ObservationSite] = {}
    for tool in project.tools:
        for qualname in tool.functions:
            entry = project.functions.get(qualname)
            if entry is None:
                continue
            fn, facts = entry
            sites.setdefault(qualname, ObservationSite(fn, facts, tool, "tool"))
            for dec in fn.decorators:
                target = project.project_function(dec.qualname, facts)
                decorator = project.function(target) if target else None
                if decorator is None:
                    continue
                for nested in decorator.nested:
                    inner = project.functions.get(nested)
                    if inner is not None and nested not in sites:
                        sites[nested] = ObservationSite(inner[0], inner[1], None, "wrapper")
    for executor in ledger_index(project).executors:
        entry = project.functions.get(executor.function)
        if entry is not None and executor.function not in sites:
            sites[executor.function] = ObservationSite(entry[0], entry[1], None, "executor")
    for site in [s for s in sites.values() if s.role == "tool"]:
        for helper in _returned_helpers(project, site):
            if helper not in sites:
                fn, facts = project.functions[helper]
                sites[helper] = ObservationSite(fn, facts, site.tool, "helper")
    result = [sites[q] for q in sorted(sites)]
    cache["_observation_sites"] = result
    return result


def _returned_helpers(project: ProjectModel, site: ObservationSite) -> list[str]:
    """Project functions whose result the tool returns: ``return await make_request(...)``
    or ``data = make_request(...)`` then ``return json.dumps(data)``. What the helper
    returns from its ``except`` handlers reaches the model too."""
    fn, facts = site.function, site.facts
    held: dict[str, list[str]] = {}  # local name -> helpers whose result it holds
    for assignment in facts.assignments:
        if assignment.function == fn.qualname and assignment.value.kind in {"call", "other"}:
            held.setdefault(assignment.target, []).extend(assignment.value.calls)
    found: list[str] = []
    for value in fn.returns:
        callees = [] if value.kind not in {"call", "other"} else value.calls[:1]
        if value.kind == "other" and not value.text.startswith("await "):
            callees = []
        for name in value.names:
            callees += held.get(name, [])
        for callee in callees:
            target = project.project_function(callee.replace("()", ""), facts)
            if target and target != fn.qualname and target in project.functions:
                found.append(target)
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------- Q6: raw error text


@dataclass
class RawObservation:
    site: ObservationSite
    use: RawErrorUse
    location: Location
    reaches: str
    confidence: Confidence


def _reaches_model(
    know: Knowledge, site: ObservationSite, use: RawErrorUse
) -> tuple[str, Confidence] | None:
    if use.dest == "return":
        return "the tool's return value", Confidence.HIGH
    if use.dest == "raise":
        callee = (use.callee or "").replace("()", "")
        if know.tool_error_exceptions(callee):
            return f"a raised `{callee.rsplit('.', 1)[-1]}` message", Confidence.HIGH
        framework = site.tool.framework if site.tool else ""
        default = know.framework_errors.get(framework) or {}
        if site.role == "tool" and default.get("raw"):
            return f"the error text {framework} sends to the model", Confidence.MEDIUM
        return None
    callee = (use.callee or "").replace("()", "")
    if know.model_message_types(callee):
        return f"a `{callee.rsplit('.', 1)[-1]}`", Confidence.HIGH
    method = callee.rsplit(".", 1)[-1]
    if method in {"append", "add", "put", "put_nowait", "extend", "send"}:
        if set(use.arg_keys) & know.tool_message_keys or (
            "role" in use.arg_keys and set(use.arg_strings) & know.tool_message_roles
        ):
            return "a tool message for the model", Confidence.HIGH
    return None


def raw_observations(project: ProjectModel) -> list[RawObservation]:
    cache = vars(project)
    cached = cache.get("_raw_observations")
    if isinstance(cached, list):
        return cached
    result: list[RawObservation] = []
    for site in observation_sites(project):
        for handler in site.function.handlers:
            found = _first_raw(project, site, handler)
            if found is not None:
                result.append(found)
    cache["_raw_observations"] = result
    return result


def _input_error_only(project: ProjectModel, site: ObservationSite, handler: Handler) -> bool:
    """``except InvalidQueryError as e: raise ModelRetry(str(e))`` around code that writes
    nothing: the message describes the model's own input (a rejected SQL statement, a
    failed validation), which is what the model needs to correct it; no outcome is in
    doubt."""
    know = project.catalog.checklist
    if not handler.caught or not all(
        know.input_error.search(name.rsplit(".", 1)[-1]) for name in handler.caught
    ):
        return False
    block = _try_block(site.function, handler)
    if block is None:
        return False
    name = site.tool.name if site.tool else site.function.name
    description = site.tool.description if site.tool else ""
    return not any(
        know.counts_as_write(e, name, project.catalog, description)
        for e in project.effects_in_orders(site.function.qualname, block.body_order)
    )


def _first_raw(
    project: ProjectModel, site: ObservationSite, handler: Handler
) -> RawObservation | None:
    if _input_error_only(project, site, handler):
        return None
    for use in handler.raw_error_uses:
        verdict = _reaches_model(project.catalog.checklist, site, use)
        if verdict is not None:
            reaches, confidence = verdict
            if site.role == "helper" and use.dest == "return":
                # one step removed: the tool returns what this function returns
                reaches = f"`{site.function.name}`'s return value, which the tool returns"
                confidence = min(confidence, Confidence.MEDIUM, key=lambda c: c.rank)
            return RawObservation(
                site, use, Location(site.facts.path, use.span), reaches, confidence
            )
    helper = _error_helper_return(project, site, handler)
    if helper is not None:
        return helper
    if handler.tainted_names:
        tainted = set(handler.tainted_names)
        for value in site.function.returns:
            if value.span is None or value.span.line <= handler.span.line:
                continue
            if (tainted & set(value.names) and value.kind != "name") or value.text in tainted:
                use = RawErrorUse(
                    f"`{sorted(tainted & set(value.names))[0]}` (set from the exception)",
                    "return",
                    value.span,
                    None,
                    value.text,
                )
                return RawObservation(
                    site,
                    use,
                    Location(site.facts.path, value.span),
                    "the tool's return value",
                    Confidence.MEDIUM,
                )
        # error = f"... {e}" in the handler, messages.append({... "content": error}) later
        for call in project.calls_in(site.function.qualname):
            if call.span.line <= handler.span.end_line:
                continue
            args = [*call.args, *call.kwargs.values()]
            held = sorted(
                tainted
                & {
                    n
                    for v in args
                    for n in (*v.names, *(n for i in v.items.values() for n in i.names))
                }
            )
            if not held:
                continue
            keys = [k for v in args for k in v.items] + list(call.kwargs)
            strings = [s for v in args for i in v.items.values() if (s := i.string())]
            use = RawErrorUse(
                f"`{held[0]}` (set from the exception)",
                "call",
                call.span,
                call.callee,
                call.text,
                keys,
                strings,
            )
            verdict = _reaches_model(project.catalog.checklist, site, use)
            if verdict is not None:
                return RawObservation(
                    site, use, Location(site.facts.path, call.span), verdict[0], Confidence.MEDIUM
                )
    return None


def _error_helper_return(
    project: ProjectModel, site: ObservationSite, handler: Handler
) -> RawObservation | None:
    """``return format_error(e)`` where the project helper returns ``str(e)``/``f"{e}"``."""
    if not handler.name:
        return None
    for value in handler.returns:
        if value.kind != "call" or value.span is None:
            continue
        target = project.project_function(value.qualname, site.facts)
        helper = project.function(target) if target else None
        if helper is None:
            continue
        params = [p for p in helper.params if p not in {"self", "cls"}]
        passed = [
            params[i]
            for i, arg in enumerate(value.call_args)
            if i < len(params) and arg.kind == "name" and arg.text == handler.name
        ]
        passed += [k for k, arg in value.call_kwargs.items() if arg.text == handler.name]
        for param in passed:
            for returned in helper.returns:
                if _formats(returned, param):
                    use = RawErrorUse(
                        f"`{helper.name}({param})` returns its text",
                        "return",
                        value.span,
                        helper.qualname,
                        value.text,
                    )
                    return RawObservation(
                        site,
                        use,
                        Location(site.facts.path, value.span),
                        "the tool's return value",
                        Confidence.MEDIUM,
                    )
    return None


def _formats(value: Value, param: str) -> bool:
    if param not in value.names:
        return False
    if value.kind == "fstring":
        return True
    stack = [value, *value.items.values()]
    while stack:
        current = stack.pop()
        if current.kind == "fstring" and param in current.names:
            return True
        if current.kind == "call" and current.qualname in {"str", "repr"}:
            if current.call_args and current.call_args[0].text == param:
                return True
        stack += current.call_args + list(current.items.values()) + current.elements
    return False


# ---------------------------------------------------------------- Q4: timeouts


@dataclass
class TimeoutVerdict:
    function: Function
    facts: ModuleFacts
    handler: Handler
    effects: list[Effect]
    outcome: str  # plain | retry
    detail: str
    tool: ToolFacts | None = None
    caught: list[str] = field(default_factory=list)
    dispatched: list[ToolFacts] = field(default_factory=list)  # for executors


def _try_block(fn: Function, handler: Handler) -> TryBlock | None:
    return next((t for t in fn.tries if t.try_id == handler.try_id), None)


def says_outcome_unknown(know: Knowledge, handler: Handler) -> bool:
    texts = [*handler.strings, *(v.text for v in (*handler.returns, *handler.raises))]
    if any(know.uncertain_words.search(t) for t in texts):
        return True
    if any(know.uncertain_exception.search(v.qualname or v.text) for v in handler.raises):
        return True
    if any(know.reconcile_call.search(c.rsplit(".", 1)[-1]) for c in handler.calls):
        return True
    return any(_says_not_retryable(know, v) for v in handler.returns)


def _says_not_retryable(know: Knowledge, value: Value) -> bool:
    items = value.items if value.kind == "dict" else {}
    if value.kind == "call" and value.call_args and value.call_args[0].kind == "dict":
        items = value.call_args[0].items
    for key in know.retry_keys:
        if key in items and items[key].kind == "const" and items[key].const is False:
            return True
    return False


def _in_retry_loop(fn: Function, block: TryBlock) -> bool:
    return any(loop.loop_id in block.loop_ids and loop.is_retry_shape for loop in fn.loops)


def timeout_verdicts(project: ProjectModel) -> list[TimeoutVerdict]:
    cache = vars(project)
    cached = cache.get("_timeout_verdicts")
    if isinstance(cached, list):
        return cached
    know = project.catalog.checklist
    result: list[TimeoutVerdict] = []
    for qualname, (fn, facts) in project.sorted_functions():
        if facts.is_test:
            continue
        for handler in fn.handlers:
            caught = [c for c in handler.caught if know.is_timeout(c)]
            if not caught:
                continue
            block = _try_block(fn, handler)
            if block is None:
                continue
            owner = project.tool_for_function(qualname)
            name = owner.name if owner else fn.name
            effects = [
                e
                for e in project.effects_in_orders(qualname, block.body_order)
                if know.counts_as_write(
                    e, name, project.catalog, owner.description if owner else ""
                )
            ]
            if not effects or says_outcome_unknown(know, handler):
                continue
            verdict = _handler_outcome(fn, block, handler)
            if verdict is None:
                continue
            outcome, detail = verdict
            tool = project.tool_for_function(qualname) or _tool_with_effect(project, effects[0])
            result.append(
                TimeoutVerdict(fn, facts, handler, effects, outcome, detail, tool, caught)
            )
    seen = {(v.facts.path, v.handler.span) for v in result}
    result += [v for v in _executor_timeouts(project) if (v.facts.path, v.handler.span) not in seen]
    result += _timeout_retries(project)
    cache["_timeout_verdicts"] = result
    return result


def _handler_outcome(fn: Function, block: TryBlock, handler: Handler) -> tuple[str, str] | None:
    """plain: the handler answers with an error; retry: the loop around it sends it again."""
    if handler.returns or handler.raises:
        return "plain", (handler.returns or handler.raises)[0].text
    if handler.reraises:
        return None
    if _in_retry_loop(fn, block):
        return "retry", "the enclosing loop sends it again"
    messages = [s for s in handler.strings if " " in s.strip()]
    logs = {"logger", "log", "logging", "print", "warnings", "console"}
    if messages and not any(c.split(".")[0] in logs for c in handler.calls):
        return "plain", repr(messages[0])  # result = "Timed out, try again" used later
    return None


def _executor_timeouts(project: ProjectModel) -> list[TimeoutVerdict]:
    """An executor that catches a timeout around ``tools[name](...)``: it speaks for every
    tool it may run, so it counts when the project has a non-idempotent write tool."""
    know = project.catalog.checklist
    writers = [
        t
        for t in project.tools
        if t.guarded is None
        and any(know.counts_as_write(e, t.name, project.catalog) for e in t.effects)
    ]
    if not writers:
        return []
    result: list[TimeoutVerdict] = []
    for executor in ledger_index(project).executors:
        if executor.dispatch is None:
            continue
        entry = project.functions.get(executor.function)
        if entry is None:
            continue
        fn, facts = entry
        for handler in fn.handlers:
            caught = [c for c in handler.caught if know.is_timeout(c)]
            block = _try_block(fn, handler)
            if not caught or block is None:
                continue
            if not (block.body_order[0] <= executor.dispatch_order < block.body_order[1]):
                continue
            if says_outcome_unknown(know, handler):
                continue
            verdict = _handler_outcome(fn, block, handler)
            if verdict is None:
                continue
            outcome, detail = verdict
            effects = [
                e
                for e in writers[0].effects
                if know.counts_as_write(e, writers[0].name, project.catalog)
            ]
            result.append(
                TimeoutVerdict(fn, facts, handler, effects, outcome, detail, None, caught, writers)
            )
    return result


def _timeout_retries(project: ProjectModel) -> list[TimeoutVerdict]:
    """A retry decorator or wrapper that names a timeout among the errors it retries."""
    from agentguard.checks.retries.shared import retried_effects

    know = project.catalog.checklist
    result: list[TimeoutVerdict] = []
    for use in project.retry_uses():
        if use.kind != "decorator" or not use.catches or use.function is None:
            continue
        caught = [c for c in use.catches if know.is_timeout(c)]
        if not caught:
            continue
        effects, tool = retried_effects(project, use)
        risky = [
            e
            for e in effects
            if know.counts_as_write(
                e,
                tool.name if tool else use.function.rsplit(".", 1)[-1],
                project.catalog,
                tool.description if tool else "",
            )
            and (e.key is None or e.key.origin in {"fresh", "param"})
        ]
        entry = project.functions.get(use.function)
        if not risky or entry is None or (tool is not None and tool.guarded is not None):
            continue
        fn, facts = entry
        handler = Handler(try_id=-1, caught=caught, span=use.location.span, name=None)
        result.append(
            TimeoutVerdict(
                fn, facts, handler, risky, "retry", f"{use.library} retries it", tool, caught
            )
        )
    return result


def _tool_with_effect(project: ProjectModel, effect: Effect) -> ToolFacts | None:
    for tool in project.tools:
        if any(e.site == effect.site for e in tool.effects):
            return tool
    return None


# ---------------------------------------------------------------- Q6: unstructured errors


@dataclass
class UnstructuredError:
    site: ObservationSite
    value: Value
    location: Location
    missing: list[str]


def _error_items(value: Value) -> dict[str, Value] | None:
    if value.kind == "dict":
        return value.items
    if value.kind == "call" and value.call_args and value.call_args[0].kind == "dict":
        if (value.qualname or "").endswith(("dumps", "dict", "JSONResponse")):
            return value.call_args[0].items
    return None


def unstructured_errors(project: ProjectModel) -> Iterator[UnstructuredError]:
    know = project.catalog.checklist
    raw_lines = {(r.location.path, r.location.span.line) for r in raw_observations(project)}
    for site in observation_sites(project):
        if site.role != "tool" or site.tool is None:
            continue
        tool_name = site.tool.name
        fn = site.function
        for handler in fn.handlers:
            block = _try_block(fn, handler)
            if block is None:
                continue
            effects = [
                e
                for e in project.effects_in_orders(fn.qualname, block.body_order)
                if know.counts_as_write(e, tool_name, project.catalog, site.tool.description)
            ]
            if not effects or says_outcome_unknown(know, handler):
                continue
            for value in handler.returns:
                if value.span is None:
                    continue
                location = Location(site.facts.path, value.span)
                if (location.path, value.span.line) in raw_lines:
                    continue
                items = _error_items(value)
                if items is not None:
                    missing = []
                    if not set(items) & know.code_keys:
                        missing.append("a code")
                    if not set(items) & know.retry_keys:
                        missing.append("a retryable flag")
                    if missing:
                        yield UnstructuredError(site, value, location, missing)
                elif value.kind == "fstring" or isinstance(value.const, str):
                    yield UnstructuredError(site, value, location, ["a code", "a retryable flag"])
                break
