"""Temporal: an activity whose tool call is never sent twice.

Temporal runs an activity at least once: a worker killed after the effect, or a live worker
slower than ``start_to_close_timeout``, gets the activity scheduled again (attempt 2, on
another worker or on the same one while attempt 1 still runs). ``guarded_activity`` composes
``activity.defn`` with the runtime: the run is the workflow (``activity.info().workflow_id``),
the step the activity's id.

    from agentguard.engines.temporal import guarded_activity, in_flight_retry_policy

    @guarded_activity(runtime, reconcile=find_order)
    def create_order(cart_id: str) -> dict: ...

    # in the workflow
    await workflow.execute_activity(create_order, cart_id,
        start_to_close_timeout=timedelta(seconds=30), retry_policy=in_flight_retry_policy())

An attempt that finds the call in flight raises a retryable ``ApplicationError`` of type
``CallInFlight`` with a retry delay, so Temporal's retries only poll; ``on_uncertain="raise"``
raises a non-retryable one of type ``OutcomeUncertain``.

Needs the ``temporal`` extra: ``pip install "agentguard[temporal]"``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from agentguard.engines.base import (
    DEFAULT_ENGINE_LEASE_S,
    CallInFlight,
    OnUncertain,
    OutcomeUncertain,
    guard_step,
)
from agentguard.runtime import Runtime

# how long an attempt that met the call in flight waits before asking again
IN_FLIGHT_DELAY = timedelta(seconds=1)


def in_flight_retry_policy(
    *,
    initial_interval: timedelta = timedelta(milliseconds=500),
    maximum_interval: timedelta = timedelta(seconds=5),
    maximum_attempts: int = 0,
) -> Any:
    """An activity ``RetryPolicy`` for guarded activities: a guarded activity raises only
    "in flight" (retryable, with its own short delay) and, if asked, "uncertain" (not
    retryable), so the retries poll an attempt in flight, bounded by the activity's
    ``schedule_to_close_timeout`` or ``maximum_attempts`` (0: no limit, Temporal's default)."""
    from temporalio.common import RetryPolicy

    return RetryPolicy(
        initial_interval=initial_interval,
        backoff_coefficient=2.0,
        maximum_interval=maximum_interval,
        maximum_attempts=maximum_attempts,
        non_retryable_error_types=["OutcomeUncertain"],
    )


def as_temporal_error(error: CallInFlight | OutcomeUncertain) -> Exception:
    from temporalio.exceptions import ApplicationError

    if isinstance(error, CallInFlight):
        return ApplicationError(str(error), type="CallInFlight", next_retry_delay=IN_FLIGHT_DELAY)
    return ApplicationError(
        str(error), error.observation, type="OutcomeUncertain", non_retryable=True
    )


def guarded_activity(
    runtime: Runtime,
    *,
    name: str | None = None,
    key: Any = None,
    on_uncertain: OnUncertain = "return",
    lease_s: float | None = DEFAULT_ENGINE_LEASE_S,
    **options: Any,
) -> Callable[[Callable[..., Any]], Any]:
    """``@activity.defn`` over the runtime's guard: the activity returns the observation
    (Temporal records it as the activity's result). ``options`` are ``guarded``'s (``risk``,
    ``reconcile``, ``replay``, ...). A sync activity needs the worker's
    ``activity_executor`` (a thread pool), as any sync activity does."""
    from temporalio import activity

    guard = guard_step(
        runtime,
        engines=("temporal",),
        key=key,
        on_uncertain=on_uncertain,
        lease_s=lease_s,
        **options,
    )

    def decorate(function: Callable[..., Any]) -> Any:
        step = guard(function)
        wrapper: Any
        if inspect.iscoroutinefunction(function):

            @functools.wraps(step)
            async def async_activity(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await step(*args, **kwargs)
                except (CallInFlight, OutcomeUncertain) as error:
                    raise as_temporal_error(error) from error

            wrapper = async_activity
        else:

            @functools.wraps(step)
            def sync_activity(*args: Any, **kwargs: Any) -> Any:
                try:
                    return step(*args, **kwargs)
                except (CallInFlight, OutcomeUncertain) as error:
                    raise as_temporal_error(error) from error

            wrapper = sync_activity
        return activity.defn(name=name or function.__name__)(wrapper)

    return decorate
