"""Retry constructs: decorators, wrapper calls, hand-written loops, client retry settings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call, Function, Handler, ModuleFacts, Value
from agentguard.knowledge.catalog import RetryConstruct
from agentguard.project.client_retries import client_retry_uses
from agentguard.project.passes import Pass, PassResults
from agentguard.project.schema_tools import SchemaTools
from agentguard.project.tool_facts import RetryUse, ToolFacts, argument_at
from agentguard.project.tool_index import ToolIndex

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def retry_uses(
    project: ToolIndex,
) -> Iterator[RetryUse]:
    """Every retry construct in the project, with the code it re-runs."""
    for qualname, (fn, facts) in project.sorted_functions():
        for dec in fn.decorators:
            construct = project.catalog.retries(dec.qualname)
            args, kwargs, called = dec.args, dec.kwargs, dec.called
            if construct is None and not dec.called:
                # ``_rest_retry = retry(stop=..., retry=...)`` once, then ``@_rest_retry``
                made = project.held_value(dec.qualname, None, facts)
                if made is not None and made.kind == "call":
                    construct = project.catalog.retries(made.qualname or "")
                    args, kwargs, called = made.call_args, made.call_kwargs, True
            if construct is None or construct.kind != "decorator":
                continue
            if construct.requires_kwarg:
                policy = kwargs.get(construct.requires_kwarg)
                if policy is None or (policy.kind == "const" and policy.const is None):
                    continue
                catches = _policy_catches(project, policy)
            else:
                catches = _catches(project, construct, args, kwargs, called)
            yield RetryUse(
                kind="decorator",
                library=construct.library,
                location=Location(facts.path, dec.span),
                function=qualname,
                catches=catches,
                construct=construct,
                text=dec.text,
            )
        yield from _loop_retries(project, fn, facts)
    # The names of retry constructs among the callees: most calls are none of them.
    written = project.callees_matching(project.catalog.retries, resolved=False)
    resolved = project.callees_matching(project.catalog.retries, resolved=True)
    for facts in sorted(project.modules.values(), key=lambda m: m.path):
        for site in project.call_sites(facts):
            call = site.call
            if call.callee in written:
                construct = project.catalog.retries(call.callee)
            elif site.callee in resolved:
                construct = project.catalog.retries(site.callee)
            else:
                continue
            if construct is None:
                continue
            location = Location(facts.path, call.span)
            if construct.kind == "wrapper":
                function = call.function
                if construct.library == "langchain":
                    function = None
                yield RetryUse(
                    kind="with_retry" if construct.library == "langchain" else "wrapper",
                    library=construct.library,
                    location=location,
                    function=function,
                    catches=_catches(project, construct, call.args, call.kwargs, True),
                    construct=construct,
                    call=call,
                    text=call.text,
                )
            elif construct.kind == "global":
                yield from _global_retry(project, construct, call, location)
            elif construct.kind == "node_retry":
                yield from _node_retry(project, construct, call, facts, location)
            elif construct.kind == "http_retry":
                yield RetryUse(
                    kind=construct.kind,
                    library=construct.library,
                    location=location,
                    function=call.function,
                    catches=None,
                    construct=construct,
                    call=call,
                    text=call.text,
                )
    yield from client_retry_uses(project)


def _global_retry(
    project: ToolIndex, construct: RetryConstruct, call: Call, location: Location
) -> Iterator[RetryUse]:
    """A retry over every tool, or, with its scope argument (``tools=[...]``), a retry of
    each named tool."""
    if construct.requires_kwarg and construct.requires_kwarg not in call.kwargs:
        return
    catches = _catches(project, construct, call.args, call.kwargs, True) if construct.on else None
    scope = call.kwargs.get(construct.scope_kwarg) if construct.scope_kwarg else None
    if scope is None:
        yield _global_use(construct, location, call, catches)
        return
    for tool in _tools_named(project, scope.elements if scope.kind == "list" else []):
        yield RetryUse(
            kind="tool_retry",
            library=construct.library,
            location=location,
            function=tool.functions[0] if tool.functions else None,
            catches=catches,
            construct=construct,
            call=call,
            text=call.text,
            tool=tool.name,
        )


def _tools_named(project: ToolIndex, values: list[Value]) -> list[ToolFacts]:
    """The project's tools a list names, by tool name (strings) or by reference."""
    found: list[ToolFacts] = []
    for value in values:
        name = value.string() or value.text.rsplit(".", 1)[-1]
        for tool in project.tools:
            if tool.name == name or any(f.rsplit(".", 1)[-1] == name for f in tool.functions):
                if tool not in found:
                    found.append(tool)
                break
    return found


def _node_retry(
    project: ToolIndex,
    construct: RetryConstruct,
    call: Call,
    facts: ModuleFacts,
    location: Location,
) -> Iterator[RetryUse]:
    """``add_node(name, node, retry_policy=...)``: a ToolNode retries every tool it holds;
    a function node retries its own body."""
    policy = call.kwargs.get(construct.requires_kwarg or "retry_policy")
    if policy is None or (policy.kind == "const" and policy.const is None):
        return
    args = call.args
    node: Value | None = None
    for name in construct.node.kwarg if construct.node else ():
        node = node or call.kwargs.get(name)
    if node is None and args:
        node = args[1] if args[0].string() is not None and len(args) > 1 else args[0]
    if node is None:
        return
    catches = _policy_catches(project, policy)
    if node.kind == "call" and (node.qualname or "").rsplit(".", 1)[-1] in construct.tool_nodes:
        yield _global_use(construct, location, call, catches)
        return
    caller = project.function(call.function) if call.function else None
    target = node.qualname or node.text
    resolved = project.project_function(target, facts)
    if resolved is None and caller is not None:
        resolved = project.project_function(f"{caller.qualname}.<locals>.{node.text}", facts)
    if resolved is None:
        return
    yield RetryUse(
        kind="node",
        library=construct.library,
        location=location,
        function=resolved,
        catches=catches,
        construct=construct,
        call=call,
        text=call.text,
    )


def _policy_catches(project: ToolIndex, policy: Value) -> list[str] | None:
    """What a LangGraph ``RetryPolicy(retry_on=...)`` retries."""
    retry_on = policy.call_kwargs.get("retry_on") if policy.kind == "call" else None
    if retry_on is None:
        return list(project.catalog.policy_default_catches)
    names = (
        [e.qualname or e.text for e in retry_on.elements]
        if retry_on.kind == "list"
        else [retry_on.qualname or retry_on.text]
    )
    if any(n in project.catalog.catch_all_exceptions for n in names):
        return None
    return names


def _catches(
    project: ToolIndex,
    construct: RetryConstruct,
    args: list[Value],
    kwargs: dict[str, Value],
    called: bool,
) -> list[str] | None:
    if not called:
        return None if construct.default_catches_all else []
    value = argument_at(args, kwargs, construct.on) if construct.on else None
    if value is None:
        return None if construct.default_catches_all else []
    names: list[str] = []
    if value.kind == "call":
        inner = [*value.call_args, *value.call_kwargs.values()]
        if not inner:
            return None  # retry_if_exception_type() defaults to Exception
        for item in inner:
            names += (
                [e.qualname or e.text for e in item.elements]
                if item.kind == "list"
                else [item.qualname or item.text]
            )
    elif value.kind == "list":
        names = [e.qualname or e.text for e in value.elements]
    else:
        names = [value.qualname or value.text]
    if any(n in project.catalog.catch_all_exceptions for n in names):
        return None
    return names


def status_text(statuses: list[int]) -> str:
    """``429, 5xx``: the statuses a loop sends again on, server errors folded."""
    words = [str(s) for s in statuses if s < 500]
    if any(s >= 500 for s in statuses):
        words.append("5xx")
    return ", ".join(words)


def _loop_retries(project: ToolIndex, fn: Function, facts: ModuleFacts) -> Iterator[RetryUse]:
    """for attempt in range(n): try: ... except E: continue / sleep; or a loop that sends
    again on a response status (``if r.status_code in RETRYABLE: sleep(); continue``)."""
    shapes = {loop.loop_id: loop.is_retry_shape for loop in fn.loops}
    for loop in fn.loops:
        if loop.retried_statuses:
            yield RetryUse(
                kind="loop",
                library="hand-written",
                location=Location(facts.path, loop.span),
                function=fn.qualname,
                catches=[],
                covered_orders=loop.body_order,
                text=f"retry loop (sends again on HTTP {status_text(loop.retried_statuses)})",
                statuses=list(loop.retried_statuses),
            )
        if not loop.is_retry_shape:
            continue
        for try_block in fn.tries:
            if loop.loop_id not in try_block.loop_ids:
                continue
            inner = try_block.loop_ids[try_block.loop_ids.index(loop.loop_id) + 1 :]
            if not all(shapes.get(i, True) for i in inner):
                # ``for call in tool_calls: try: ...`` inside an agent's ``while`` loop: the
                # inner loop moves on to the next item, the outer one never repeats this one
                continue
            handlers = [h for h in fn.handlers if h.try_id == try_block.try_id]
            transient = project.catalog.transient_statuses
            retrying = [h for h in handlers if _handler_retries(h, transient)]
            if not retrying:
                continue
            catches: list[str] | None = []
            for handler in retrying:
                if not handler.caught or any(
                    c in project.catalog.catch_all_exceptions for c in handler.caught
                ):
                    catches = None
                    break
                assert catches is not None
                catches += handler.caught
            yield RetryUse(
                kind="loop",
                library="hand-written",
                location=Location(facts.path, loop.span),
                function=fn.qualname,
                catches=catches,
                covered_orders=try_block.body_order,
                text="retry loop",
            )
            break


def _global_use(
    construct: RetryConstruct, location: Location, call: Call, catches: list[str] | None
) -> RetryUse:
    """A retry that re-runs every tool behind it (middleware, node defaults, a ToolNode)."""
    return RetryUse(
        kind="global",
        library=construct.library,
        location=location,
        function=call.function,
        catches=catches,
        construct=construct,
        call=call,
        text=call.text,
    )


def _handler_retries(handler: Handler, transient: set[int]) -> bool:
    """Whether an ``except`` in a retry-shaped loop lets the loop send again: one that tests
    the response status retries unless only transient statuses are retried; any other
    continues, or swallows or sleeps without leaving the loop. A handler that leaves it
    (``break``, ``return``, ``raise``) and never continues runs nothing again."""
    if handler.retried_statuses is not None:
        return not set(handler.retried_statuses) <= transient
    if handler.continues:
        return True
    leaves = handler.breaks or bool(handler.returns)
    return (not handler.reraises and not handler.raises and not leaves) or (
        any(c.endswith("sleep") for c in handler.calls) and not leaves
    )


@dataclass(frozen=True)
class RetryConstructs:
    """The constructs that re-run code, in the order found."""

    uses: tuple[RetryUse, ...]


class RetryDetection(Pass[RetryConstructs]):
    needs = (SchemaTools,)
    produces = "the retry constructs (decorators, wrappers, loops, client settings)"

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> RetryConstructs:
        return RetryConstructs(tuple(retry_uses(ToolIndex.over(index, results[SchemaTools].tools))))
