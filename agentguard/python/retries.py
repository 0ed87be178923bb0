"""Retry constructs: decorators, wrapper calls, hand-written loops, client retry settings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.catalog import RetryConstruct
from agentguard.diagnostics import Location
from agentguard.model import RetryUse, argument_at
from agentguard.python.facts import Function, ModuleFacts, Value

if TYPE_CHECKING:
    from agentguard.project import ProjectModel


def retry_uses(
    project: ProjectModel,
) -> Iterator[RetryUse]:
    """Every retry construct in the project, with the code it re-runs."""
    for qualname, (fn, facts) in sorted(project.functions.items()):
        for dec in fn.decorators:
            construct = project.catalog.retries(dec.qualname)
            if construct is None or construct.kind != "decorator":
                continue
            yield RetryUse(
                kind="decorator",
                library=construct.library,
                location=Location(facts.path, dec.span),
                function=qualname,
                catches=_catches(project, construct, dec.args, dec.kwargs, dec.called),
                construct=construct,
                text=dec.text,
            )
        yield from _loop_retries(project, fn, facts)
    for facts in project.modules.values():
        for call in facts.calls:
            construct = project.catalog.retries(call.callee)
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
            elif construct.kind in {"http_retry", "global"}:
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


def _catches(
    project: ProjectModel,
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


def _loop_retries(project: ProjectModel, fn: Function, facts: ModuleFacts) -> Iterator[RetryUse]:
    """for attempt in range(n): try: ... except E: continue / sleep."""
    for loop in fn.loops:
        if not loop.is_retry_shape:
            continue
        for try_block in fn.tries:
            if loop.loop_id not in try_block.loop_ids:
                continue
            handlers = [h for h in fn.handlers if h.try_id == try_block.try_id]
            retrying = [
                h
                for h in handlers
                if (not h.reraises and not h.returns and not h.raises)
                or (h.continues)
                or (any(c.endswith("sleep") for c in h.calls) and not h.returns)
            ]
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
