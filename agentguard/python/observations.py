"""What a tool's errors become for the model (Q4, Q6): timeouts caught around side effects,
raw exception text in observations, error results without a code or a retryable flag.

Judgements read facts only (handlers, their raw-error uses, try blocks, effect summaries).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence, Location
from agentguard.python.checklist_knowledge import knowledge
from agentguard.python.facts import Function, Handler, ModuleFacts, RawErrorUse, TryBlock, Value
from agentguard.python.ledger import ledger_index

if TYPE_CHECKING:
    from agentguard.project import Effect, ProjectModel, ToolFacts


@dataclass
class ObservationSite:
    """A function whose return value or messages reach the model: a tool or an executor."""

    function: Function
    facts: ModuleFacts
    tool: ToolFacts | None
    role: str  # tool | wrapper | executor


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
    result = [sites[q] for q in sorted(sites)]
    cache["_observation_sites"] = result
    return result


# ---------------------------------------------------------------- Q6: raw error text


@dataclass
class RawObservation:
    site: ObservationSite
    use: RawErrorUse
    location: Location
    reaches: str
    confidence: Confidence


def _reaches_model(site: ObservationSite, use: RawErrorUse) -> tuple[str, Confidence] | None:
    know = knowledge()
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
            found = _first_raw(site, handler)
            if found is not None:
                result.append(found)
    cache["_raw_observations"] = result
    return result


def _first_raw(site: ObservationSite, handler: Handler) -> RawObservation | None:
    for use in handler.raw_error_uses:
        verdict = _reaches_model(site, use)
        if verdict is not None:
            reaches, confidence = verdict
            return RawObservation(
                site, use, Location(site.facts.path, use.span), reaches, confidence
            )
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
    return None


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


def _try_block(fn: Function, handler: Handler) -> TryBlock | None:
    return next((t for t in fn.tries if t.try_id == handler.try_id), None)


def says_outcome_unknown(handler: Handler) -> bool:
    know = knowledge()
    texts = [*handler.strings, *(v.text for v in (*handler.returns, *handler.raises))]
    if any(know.uncertain_words.search(t) for t in texts):
        return True
    if any(know.uncertain_exception.search(v.qualname or v.text) for v in handler.raises):
        return True
    if any(know.reconcile_call.search(c.rsplit(".", 1)[-1]) for c in handler.calls):
        return True
    return any(_says_not_retryable(v) for v in handler.returns)


def _says_not_retryable(value: Value) -> bool:
    know = knowledge()
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
    know = knowledge()
    result: list[TimeoutVerdict] = []
    for qualname, (fn, facts) in sorted(project.functions.items()):
        if facts.is_test:
            continue
        for handler in fn.handlers:
            caught = [c for c in handler.caught if know.is_timeout(c)]
            if not caught:
                continue
            block = _try_block(fn, handler)
            if block is None:
                continue
            effects = [
                e
                for e in project.effects_in_orders(qualname, block.body_order)
                if e.non_idempotent and e.kind != "unknown"
            ]
            if not effects or says_outcome_unknown(handler):
                continue
            if handler.returns or handler.raises:
                value = (handler.returns or handler.raises)[0]
                outcome, detail = "plain", value.text
            elif (handler.continues or not handler.reraises) and _in_retry_loop(fn, block):
                outcome, detail = "retry", "the enclosing loop sends it again"
            else:
                continue
            tool = project.tool_for_function(qualname) or _tool_with_effect(project, effects[0])
            result.append(
                TimeoutVerdict(fn, facts, handler, effects, outcome, detail, tool, caught)
            )
    cache["_timeout_verdicts"] = result
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
    know = knowledge()
    raw_lines = {(r.location.path, r.location.span.line) for r in raw_observations(project)}
    for site in observation_sites(project):
        if site.role != "tool" or site.tool is None or not site.tool.non_idempotent_writes():
            continue
        fn = site.function
        for handler in fn.handlers:
            block = _try_block(fn, handler)
            if block is None:
                continue
            effects = [
                e
                for e in project.effects_in_orders(fn.qualname, block.body_order)
                if e.non_idempotent
            ]
            if not effects or says_outcome_unknown(handler):
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
