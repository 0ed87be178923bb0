"""The adapter every engine shares: the engine's workflow is the run, its step the step.

A durable engine (DBOS, LangGraph, Temporal) runs a step at least once: it journals a step's
outcome, never that it started, so a step cut off after its side effect runs again. A tool
wrapped here is guarded by the runtime inside the step, with the run taken from the engine:

- run id: the engine's workflow id (DBOS ``workflow_id``, Temporal ``workflow_id``, LangGraph
  ``thread_id``), never the attempt number nor an id that changes when the engine re-runs the
  workflow;
- step id: the engine's id of the step (DBOS ``step_id``, Temporal ``activity_id``, LangGraph
  ``checkpoint_ns``).

The key stays the runtime's own (tool, who, run, approval, arguments), so the model asking
again for the same thing after a lost answer is the same request; ``key="step"`` adds the step,
for a workflow that legitimately makes the same call twice.

The outcome is turned into what the engine understands:

- succeeded, replayed or reconciled: the observation is returned (the engine checkpoints it);
- in flight (another attempt holds the call, or may still send): :class:`CallInFlight` is
  raised, which the engine's retry policy retries, so the retry only polls until the first
  attempt's outcome is recorded. Returning the "in progress" observation would make the
  engine checkpoint it as the step's permanent result while the real effect exists;
- uncertain: the uncertain observation is returned to the agent, or with
  ``on_uncertain="raise"`` :class:`OutcomeUncertain` is raised, which no engine retry takes.

Engines are read only if the agent already imported them; nothing here imports one.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from agentguard.runtime import CallContext, ErrorCode, Runtime, current_run, guarded
from agentguard.runtime.hashing import derived_key

F = TypeVar("F", bound=Callable[..., Any])

# A lease short enough that an attempt on another machine takes over soon after a worker dies
# (on this machine a dead holder is reclaimed at once); the runtime renews it while the body
# runs, so a slow body keeps it.
DEFAULT_ENGINE_LEASE_S = 30.0

OnUncertain = Literal["return", "raise"]


class CallInFlight(Exception):
    """Another attempt of this step holds the call: retry later, it is not done and not failed.

    Engines' retry policies built by :mod:`agentguard.engines` retry this error only, with a
    bounded backoff: each retry asks the ledger again, which answers from the first attempt's
    outcome once it is recorded (or reclaims a holder known to be dead).
    """

    def __init__(self, observation: dict[str, Any]) -> None:
        self.observation = observation
        super().__init__(
            f"{observation['metadata'].get('tool_name')}: an earlier attempt of this call is "
            "still in flight; retry the step later (it will not be sent again)"
        )


class OutcomeUncertain(Exception):
    """The effect may or may not have happened and no lookup settled it: not retryable.

    Raised only with ``on_uncertain="raise"``; a person settles the call with
    ``agentguard ledger resolve`` (the ledger keeps it ``uncertain``).
    """

    def __init__(self, observation: dict[str, Any]) -> None:
        self.observation = observation
        super().__init__(str(observation.get("content", "the outcome is uncertain")))


@dataclass(frozen=True)
class EngineRun:
    """Where a step runs: the engine, its workflow id and the step's id within it."""

    engine: str
    workflow_id: str
    step_id: str | None
    user_id: str | None = None


def _dbos_run() -> EngineRun | None:
    module = sys.modules.get("dbos")
    dbos = getattr(module, "DBOS", None)
    if dbos is None:
        return None
    workflow_id = dbos.workflow_id
    if not workflow_id:
        return None
    step_id = dbos.step_id
    return EngineRun("dbos", str(workflow_id), None if step_id is None else str(step_id))


def _langgraph_run() -> EngineRun | None:
    config_module = sys.modules.get("langgraph.config")
    get_config = getattr(config_module, "get_config", None)
    if get_config is None:
        return None
    try:
        config = get_config()
    except RuntimeError:  # called outside a runnable context
        return None
    configurable = config.get("configurable") or {}
    thread = configurable.get("thread_id")
    if thread is None or thread == "":
        return None
    namespace = configurable.get("checkpoint_ns")
    user = configurable.get("user_id")
    return EngineRun(
        "langgraph",
        str(thread),
        str(namespace) if namespace else None,
        None if user is None else str(user),
    )


def _temporal_run() -> EngineRun | None:
    activity = sys.modules.get("temporalio.activity")
    if activity is None or not activity.in_activity():
        return None
    info = activity.info()
    # the workflow id, not its run id (a workflow retry or continue-as-new starts a new run),
    # nor the attempt; an activity id names the same activity in every attempt
    if not info.workflow_id:
        return None
    return EngineRun("temporal", str(info.workflow_id), str(info.activity_id))


DETECTORS: dict[str, Callable[[], EngineRun | None]] = {
    "dbos": _dbos_run,
    "temporal": _temporal_run,
    "langgraph": _langgraph_run,
}


def engine_run(engines: Sequence[str] | None = None) -> EngineRun | None:
    """The engine step running now, if any (only engines the agent imported are read)."""
    for name in engines or DETECTORS:
        run = DETECTORS[name]()
        if run is not None:
            return run
    return None


def _step_key(call: CallContext) -> str:
    """The default key's material plus the engine's step: one request per step."""
    return derived_key(
        {
            "v": 1,
            "tool": call.tool_name,
            "tenant": call.tenant,
            "user": call.user_id,
            "run": call.run_id,
            "step": call.step_id,
            "approved_at": call.approved_at,
            "input": call.input_hash,
        }
    )


def guard_step(
    runtime: Runtime,
    *,
    engines: Sequence[str] | None = None,
    key: Any = None,
    on_uncertain: OnUncertain = "return",
    lease_s: float | None = DEFAULT_ENGINE_LEASE_S,
    **options: Any,
) -> Callable[[F], F]:
    """``guarded`` with the run taken from the engine step the call runs in.

    ``engines`` limits which engines are looked for (default: every one the adapter knows);
    outside any engine the call runs in the run open around it, as a plain guarded call does.
    ``key="step"`` scopes the key by the engine's step; other ``key`` values are ``guarded``'s.
    The remaining options are ``guarded``'s.
    """
    if on_uncertain not in ("return", "raise"):
        raise ValueError('on_uncertain must be "return" or "raise"')
    if key == "step":
        key = _step_key
    guard = guarded(runtime, key=key, lease_s=lease_s, **options)

    def decorate(function: F) -> F:
        inner = guard(function)

        def scope() -> Any:
            run = engine_run(engines)
            if run is None:
                return None
            outer = current_run()
            return runtime.run(
                f"{run.engine}:{run.workflow_id}",
                step_id=run.step_id,
                user_id=run.user_id or (outer.user_id if outer else None),
                approved_at=outer.approved_at if outer else None,
                tenant=outer.tenant if outer else None,
                **(dict(outer.extra) if outer else {}),
            )

        def settle(observation: dict[str, Any]) -> dict[str, Any]:
            code = observation.get("code")
            # an uncertain call whose attempt may still send (a sync body past timeout_s, a
            # worker that stopped renewing but may be frozen) is in flight too: its outcome is
            # recorded when it ends, which the engine's retry then reads
            if code == ErrorCode.DUPLICATE_IN_PROGRESS.value or (
                code == ErrorCode.SIDE_EFFECT_UNCERTAIN.value
                and observation["metadata"].get("still_running")
            ):
                raise CallInFlight(observation)
            if code == ErrorCode.SIDE_EFFECT_UNCERTAIN.value and on_uncertain == "raise":
                raise OutcomeUncertain(observation)
            return observation

        wrapper: Any
        if inspect.iscoroutinefunction(function):

            @functools.wraps(inner)
            async def async_step(*args: Any, **kwargs: Any) -> Any:
                run_scope = scope()
                if run_scope is None:
                    return settle(await inner(*args, **kwargs))
                async with run_scope:
                    return settle(await inner(*args, **kwargs))

            wrapper = async_step
        else:

            @functools.wraps(inner)
            def sync_step(*args: Any, **kwargs: Any) -> Any:
                run_scope = scope()
                if run_scope is None:
                    return settle(inner(*args, **kwargs))
                with run_scope:
                    return settle(inner(*args, **kwargs))

            wrapper = sync_step
        wrapper.__signature__ = inspect.signature(inner)
        return wrapper

    return decorate


def is_in_flight(error: BaseException) -> bool:
    """The retry predicate of every engine adapter: only an attempt in flight is retried."""
    return isinstance(error, CallInFlight)
