"""DBOS: a ``@DBOS.step()`` whose tool call is never sent twice.

DBOS checkpoints a step's output in its system database when the step returns; a step cut off
before (the process killed, then recovered on restart; or a retried step whose first attempt
timed out after sending) runs again. ``guarded_step`` composes ``DBOS.step`` with the runtime:
the run is the workflow (``DBOS.workflow_id``), the step the step's id (``DBOS.step_id``).

    from agentguard.engines.dbos import guarded_step

    @guarded_step(runtime, reconcile=find_order)
    def create_order(cart_id: str) -> dict: ...

DBOS's step retries are turned on and take only :class:`~agentguard.engines.CallInFlight`
(``should_retry``): they poll until the attempt in flight has recorded its outcome. Transient
failures of the service are the runtime's ``retry=`` policy, which knows whether a request may
have been sent. The ledger may live in the workflow's own PostgreSQL database, in a schema of
its own: ``PostgresLedger(url, schema="agentguard")``.

Needs the ``dbos`` extra: ``pip install "agentguard[dbos]"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from agentguard.engines.base import (
    DEFAULT_ENGINE_LEASE_S,
    OnUncertain,
    guard_step,
    is_in_flight,
)
from agentguard.runtime import Runtime

F = TypeVar("F", bound=Callable[..., Any])

# DBOS's step retry options that only poll: about a minute in all (at most 11 s apart), longer
# than the adapter's lease, so an attempt that died on another machine is taken over before
# DBOS gives up.
IN_FLIGHT_RETRIES: dict[str, Any] = {
    "retries_allowed": True,
    "interval_seconds": 1.0,
    "backoff_rate": 1.2,
    "max_attempts": 15,
    "should_retry": is_in_flight,
}


def guarded_step(
    runtime: Runtime,
    *,
    name: str | None = None,
    key: Any = None,
    on_uncertain: OnUncertain = "return",
    lease_s: float | None = DEFAULT_ENGINE_LEASE_S,
    interval_seconds: float = IN_FLIGHT_RETRIES["interval_seconds"],
    backoff_rate: float = IN_FLIGHT_RETRIES["backoff_rate"],
    max_attempts: int = IN_FLIGHT_RETRIES["max_attempts"],
    **options: Any,
) -> Callable[[F], F]:
    """``@DBOS.step()`` over the runtime's guard: the step returns the observation (DBOS
    checkpoints it); an attempt in flight raises ``CallInFlight``, which the step's retries
    take; with ``on_uncertain="raise"`` an uncertain outcome raises ``OutcomeUncertain``, which
    they do not. ``options`` are ``guarded``'s (``risk``, ``reconcile``, ``replay``, ...)."""
    from dbos import DBOS

    guard = guard_step(
        runtime,
        engines=("dbos",),
        key=key,
        on_uncertain=on_uncertain,
        lease_s=lease_s,
        **options,
    )
    step = DBOS.step(
        name=name,
        retries_allowed=True,
        interval_seconds=interval_seconds,
        backoff_rate=backoff_rate,
        max_attempts=max_attempts,
        should_retry=is_in_flight,
    )

    def decorate(function: F) -> F:
        return cast(F, step(guard(function)))

    return decorate
