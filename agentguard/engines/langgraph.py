"""LangGraph: a ``@task`` (or a node) whose tool call is never sent twice.

LangGraph journals a task's result in the checkpointer when the task returns; a task cut off
before (a killed process, or a node re-run from its first line after ``interrupt()``) runs again
on ``invoke(None, config)``. ``guarded_task`` composes ``langgraph.func.task`` with the runtime:
the run is the thread (``configurable.thread_id``), the step the task's ``checkpoint_ns``.

    from agentguard.engines.langgraph import guarded_task

    @guarded_task(runtime, reconcile=find_order)
    def create_order(cart_id: str) -> dict: ...

Needs the ``langgraph`` extra: ``pip install "agentguard[langgraph]"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from agentguard.engines.base import (
    DEFAULT_ENGINE_LEASE_S,
    CallInFlight,
    OnUncertain,
    guard_step,
)
from agentguard.runtime import Runtime

F = TypeVar("F", bound=Callable[..., Any])


def in_flight_retry_policy(
    *, initial_interval: float = 0.5, max_interval: float = 5.0, max_attempts: int = 12
) -> Any:
    """A LangGraph ``RetryPolicy`` that only polls: it retries :class:`CallInFlight`, nothing
    else, with a bounded backoff (about 45 s in all by default, longer than the adapter's lease,
    so an attempt that died on another machine is taken over before the policy gives up)."""
    from langgraph.types import RetryPolicy

    return RetryPolicy(
        initial_interval=initial_interval,
        backoff_factor=2.0,
        max_interval=max_interval,
        max_attempts=max_attempts,
        retry_on=CallInFlight,
    )


def guarded_step(
    runtime: Runtime,
    *,
    key: Any = None,
    on_uncertain: OnUncertain = "return",
    lease_s: float | None = DEFAULT_ENGINE_LEASE_S,
    **options: Any,
) -> Callable[[F], F]:
    """The runtime's guard with the run taken from LangGraph's config, without ``@task``: for a
    graph node's own body, or to place under a ``@task`` of your own."""
    return guard_step(
        runtime,
        engines=("langgraph",),
        key=key,
        on_uncertain=on_uncertain,
        lease_s=lease_s,
        **options,
    )


def guarded_task(
    runtime: Runtime,
    *,
    name: str | None = None,
    retry_policy: Any = None,
    key: Any = None,
    on_uncertain: OnUncertain = "return",
    lease_s: float | None = DEFAULT_ENGINE_LEASE_S,
    **options: Any,
) -> Callable[[Callable[..., Any]], Any]:
    """``@task`` over the runtime's guard: the task returns the observation (LangGraph
    checkpoints it); an attempt in flight raises :class:`CallInFlight`, which
    ``retry_policy`` (default :func:`in_flight_retry_policy`) retries. ``options`` are
    ``guarded``'s (``risk``, ``reconcile``, ``replay``, ``timeout_s``, ...)."""
    from langgraph.func import task

    guard = guarded_step(runtime, key=key, on_uncertain=on_uncertain, lease_s=lease_s, **options)
    policy = retry_policy if retry_policy is not None else in_flight_retry_policy()

    def decorate(function: Callable[..., Any]) -> Any:
        return task(name=name or function.__name__, retry_policy=policy)(guard(function))

    return decorate
