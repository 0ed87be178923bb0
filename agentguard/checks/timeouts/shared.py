"""Q4 judgement for AG401: a timeout caught around a counted write (in a tool, an executor
or a retry) that is answered as a plain failure or retried, not as an unknown outcome."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentguard.facts.module_facts import (
    Function,
    Handler,
    ModuleFacts,
    TryBlock,
    Value,
)
from agentguard.knowledge.checklist import knowledge
from agentguard.project.counted_writes import counts_as_write
from agentguard.project.project_model import ProjectModel
from agentguard.project.retries import retried_effects
from agentguard.project.tool_facts import Effect, ToolFacts


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


def try_block(fn: Function, handler: Handler) -> TryBlock | None:
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
    know = knowledge()
    result: list[TimeoutVerdict] = []
    for qualname, (fn, facts) in project.sorted_functions():
        if facts.is_test:
            continue
        for handler in fn.handlers:
            caught = [c for c in handler.caught if know.is_timeout(c)]
            if not caught:
                continue
            block = try_block(fn, handler)
            if block is None:
                continue
            owner = project.tool_for_function(qualname)
            name = owner.name if owner else fn.name
            effects = [
                e
                for e in project.effects_in_orders(qualname, block.body_order)
                if counts_as_write(e, name, project.catalog, owner.description if owner else "")
            ]
            if not effects or says_outcome_unknown(handler):
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
    know = knowledge()
    writers = [
        t
        for t in project.tools
        if t.guarded is None and any(counts_as_write(e, t.name, project.catalog) for e in t.effects)
    ]
    if not writers:
        return []
    result: list[TimeoutVerdict] = []
    for executor in project.ledger_index().executors:
        if executor.dispatch is None:
            continue
        entry = project.functions.get(executor.function)
        if entry is None:
            continue
        fn, facts = entry
        for handler in fn.handlers:
            caught = [c for c in handler.caught if know.is_timeout(c)]
            block = try_block(fn, handler)
            if not caught or block is None:
                continue
            if not (block.body_order[0] <= executor.dispatch_order < block.body_order[1]):
                continue
            if says_outcome_unknown(handler):
                continue
            verdict = _handler_outcome(fn, block, handler)
            if verdict is None:
                continue
            outcome, detail = verdict
            effects = [
                e
                for e in writers[0].effects
                if counts_as_write(e, writers[0].name, project.catalog)
            ]
            result.append(
                TimeoutVerdict(fn, facts, handler, effects, outcome, detail, None, caught, writers)
            )
    return result


def _timeout_retries(project: ProjectModel) -> list[TimeoutVerdict]:
    """A retry decorator or wrapper that names a timeout among the errors it retries."""
    know = knowledge()
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
            if counts_as_write(
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
