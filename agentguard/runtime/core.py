"""The runtime: write-ahead ledger, replay-safe execution, reconciliation, recovery.

``Runtime`` is a thin facade over its layers: the decision logic (``planning``), written once as
a generator that yields the effects it needs (``effects``); the sync and async drivers that
perform them (``drivers``); recovery and people's decisions (``recovery``). ``guarded`` wraps a
tool. The names users import from here stay here.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from agentguard.runtime.context import (
    CallContext,
    RunContext,
    RunScope,
    new_run_id,
)
from agentguard.runtime.drivers import AbandonedAttempts
from agentguard.runtime.frameworks import context_parameters
from agentguard.runtime.hashing import (
    NoCanonicalForm,
    describe_offender,
    to_jsonable,
)
from agentguard.runtime.heartbeat import Heartbeat
from agentguard.runtime.kinds import (
    _DEFAULTS_BY_RISK,
    _EFFECTS_BY_RISK,
    DEFAULT_LOOKUP_TIMEOUT_S,
    DEFAULT_MAX_OUTPUT_BYTES,
    EFFECT_KINDS,
    AttemptStillRunning,
    CancelledBeforeStart,
    Found,
    Idempotency,
    KeyFunction,
    NotFound,
    RecoveryReport,
    Replay,
    Risk,
    SimulatedCrash,
    ToolSpec,
    Unknown,
    Verdict,
)
from agentguard.runtime.ledger.base import Ledger, with_fields
from agentguard.runtime.observation_type import Observation
from agentguard.runtime.outbox import Outbox
from agentguard.runtime.planning import _simple_parameters
from agentguard.runtime.recovery import Recovery, approve_call, resolve_call
from agentguard.runtime.retry import NO_RETRY, RetryPolicy

__all__ = [
    "DEFAULT_LOOKUP_TIMEOUT_S",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "EFFECT_KINDS",
    "AttemptStillRunning",
    "CancelledBeforeStart",
    "Found",
    "Idempotency",
    "KeyFunction",
    "NotFound",
    "RecoveryReport",
    "Replay",
    "Risk",
    "Runtime",
    "SimulatedCrash",
    "ToolSpec",
    "Unknown",
    "Verdict",
    "approve_call",
    "guarded",
    "resolve_call",
]

F = TypeVar("F", bound=Callable[..., Any])

logger = logging.getLogger("agentguard.runtime")


class Runtime(Recovery):
    """Owns the ledger and the registry of guarded tools (for ``recover()``).

    ``implicit_runs=True``: a guarded call made outside ``with runtime.run(...)`` runs in a
    run of its own (a new run_id, no user or approval) instead of raising RuntimeError. It is
    journalled and its timeout still ends uncertain, but a key naming the run differs for
    every such call, so a repeat is recognised only inside one explicit run.
    """

    def __init__(
        self,
        ledger: Ledger | None = None,
        *,
        lease_s: float = 300.0,
        approve: Callable[[CallContext], Any] | None = None,
        worker_id: str | None = None,
        seed: int | None = None,
        implicit_runs: bool = False,
    ) -> None:
        if ledger is None:
            from agentguard.runtime.ledger.sqlite import SQLiteLedger

            ledger = SQLiteLedger("agentguard-ledger.db")
        self.ledger = ledger
        self.implicit_runs = implicit_runs
        self.lease_s = lease_s
        self.approval_callback = approve  # the default for tools without approve=
        self._worker_id = worker_id
        self._rng = random.Random(seed)
        self.tools: dict[str, ToolSpec] = {}
        self.fault_hooks: list[Any] = []
        self.sleep: Callable[[float], None] = time.sleep
        self.async_sleep: Callable[[float], Any] = asyncio.sleep
        self.heartbeat = Heartbeat(lambda: self.ledger)
        self.outbox = Outbox(lambda: self.ledger)
        self.abandoned = AbandonedAttempts()

    def close(self, timeout_s: float = 10.0) -> list[str]:
        """Close the runtime and its ledger, once its own work has reached the ledger.

        Waits at most ``timeout_s`` in all for the attempts this runtime stopped waiting for
        (sync bodies past their ``timeout_s``, still running in their threads) to finish and
        record their outcome, and for outcomes kept in the outbox to be recorded; then closes
        the ledger. Returns the ids of the calls whose outcome was not recorded in time: each
        stays uncertain (logged), and its lookup (``recover()``) or a person settles it.
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        running = self.abandoned.wait(timeout_s)
        self.outbox.flush(max(0.0, deadline - time.monotonic()))
        self.ledger.close()
        unrecorded = self.outbox.abandon()
        for call_id, attempt in running:
            logger.warning(
                "closing the runtime while attempt %d of %s still runs, past its timeout: its "
                "outcome will not be recorded, and the call stays uncertain until its lookup "
                "(recover()) or a person settles it",
                attempt,
                call_id,
            )
        return sorted({call_id for call_id, _ in running} | set(unrecorded))

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        run_id: str | None = None,
        *,
        user_id: str | None = None,
        approved_at: str | None = None,
        step_id: str | None = None,
        tenant: str | None = None,
        **extra: Any,
    ) -> RunScope:
        """The context guarded calls run in; keys are built from it. Sync and async.

        Every field is stored with each call (recovery gives lookups and keys what the call
        saw), so extra fields must be JSON values; they reach keys as their JSON form.
        """
        try:
            fields = to_jsonable(extra) if extra else {}
        except NoCanonicalForm:
            raise TypeError(
                f"runtime.run() field {describe_offender(extra)}: extra run fields are stored "
                "with each call and must be JSON values"
            ) from None
        return RunScope(
            with_fields(  # RunContext(...) without __init__: a run is often opened for one call
                RunContext,
                {
                    "run_id": run_id or new_run_id(),
                    "user_id": user_id,
                    "approved_at": approved_at,
                    "step_id": step_id,
                    "tenant": tenant,
                    "extra": fields,
                },
            )
        )


def guarded(
    runtime: Runtime,
    *,
    risk: Risk | str = Risk.WRITE,
    idempotency: Idempotency | str | None = None,
    replay: Replay | str | None = None,
    key: KeyFunction | Sequence[str] | None = None,
    reconcile: Callable[[CallContext], Any] | None = None,
    retry: RetryPolicy | None = None,
    timeout_s: float | None = None,
    approve: Callable[[CallContext], Any] | None = None,
    redact: Sequence[str] = (),
    settle_s: float = 0.0,
    lease_s: float | None = None,
    max_output_bytes: int | None = DEFAULT_MAX_OUTPUT_BYTES,
    lookup_timeout_s: float | None = None,
    side_effects: Sequence[str] | None = None,
    name: str | None = None,
) -> Callable[[F], F]:
    """Wrap a tool so each call is written ahead to the ledger and returns an observation.

    The wrapper keeps the function's name, docstring and signature, so framework decorators
    placed outside it build the same tool schema.
    """
    risk_value = Risk(risk)
    default_idempotency, default_replay = _DEFAULTS_BY_RISK[risk_value]
    idempotency_value = Idempotency(idempotency) if idempotency is not None else default_idempotency
    replay_value = Replay(replay) if replay is not None else default_replay
    if isinstance(key, str):
        raise TypeError("key must be a function of the call or a sequence of part names")
    effects = tuple(side_effects) if side_effects is not None else _EFFECTS_BY_RISK[risk_value]
    unknown = set(effects) - EFFECT_KINDS
    if unknown:
        raise ValueError(
            f"unknown side effects {sorted(unknown)}: use {', '.join(sorted(EFFECT_KINDS))}"
        )

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        parameters = list(signature.parameters)
        simple = _simple_parameters(signature)
        spec = ToolSpec(
            name=name or function.__name__,
            function=function,
            is_async=inspect.iscoroutinefunction(function),
            risk=risk_value,
            idempotency=idempotency_value,
            replay=replay_value,
            key=key,
            reconcile=reconcile,
            retry=retry or NO_RETRY,
            timeout_s=timeout_s,
            approve=approve,
            redact_fields=frozenset(redact),
            settle_s=settle_s,
            lease_s=lease_s,
            max_output_bytes=max_output_bytes,
            # a lookup answers for one call: it gets that call's bound, at most 10 s by default
            lookup_timeout_s=lookup_timeout_s
            if lookup_timeout_s is not None
            else min(timeout_s, DEFAULT_LOOKUP_TIMEOUT_S)
            if timeout_s is not None
            else DEFAULT_LOOKUP_TIMEOUT_S,
            side_effects=effects,
            signature=signature,
            drop_first=bool(parameters) and parameters[0] in ("self", "cls"),
            simple_parameters=simple,
            parameter_names=tuple(signature.parameters) if simple is not None else None,
            context_parameters=context_parameters(signature),
        )
        runtime.tools[spec.name] = spec
        wrapper: Any
        if spec.is_async:

            @functools.wraps(function)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Observation:
                return await runtime._call_async(spec, args, kwargs)  # type: ignore[return-value]

            wrapper = async_wrapper
        else:

            @functools.wraps(function)
            def sync_wrapper(*args: Any, **kwargs: Any) -> Observation:
                return runtime._call_sync(spec, args, kwargs)  # type: ignore[return-value]

            wrapper = sync_wrapper
        # The wrapper returns an observation, so that is what it declares (an MCP server
        # advertises its schema as the tool's outputSchema); the parameters, from which
        # frameworks build the model's input schema, stay exactly the function's.
        wrapper.__signature__ = signature.replace(return_annotation=Observation)
        wrapper.__annotations__ = {**function.__annotations__, "return": Observation}
        wrapper.__agentguard__ = spec
        return wrapper

    return decorate
