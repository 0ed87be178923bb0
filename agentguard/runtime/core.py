"""The runtime: write-ahead ledger, replay-safe execution, reconciliation, recovery.

The decision logic is written once, as a generator that yields the effects it needs (ledger
operations, the tool body, sleeps, user callbacks); a sync and an async driver perform them.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, TypeVar

from agentguard.runtime import liveness
from agentguard.runtime import observations as words
from agentguard.runtime.context import (
    CallContext,
    RunContext,
    RunScope,
    _current_call,
    current_run,
    new_run_id,
)
from agentguard.runtime.errors import ErrorCode, Failure, classify_exception
from agentguard.runtime.hashing import (
    NoCanonicalForm,
    derived_key,
    describe_offender,
    input_hash,
    jsonable_result,
    redact,
    to_jsonable,
)
from agentguard.runtime.heartbeat import Heartbeat
from agentguard.runtime.ledger.base import Ledger, LedgerEntry, Status, evolve, new_call_id
from agentguard.runtime.outbox import Outbox
from agentguard.runtime.retry import NO_RETRY, RetryPolicy

logger = logging.getLogger("agentguard.runtime")

F = TypeVar("F", bound=Callable[..., Any])


class Risk(str, Enum):
    READ = "read"
    WRITE = "write"
    NETWORK = "network"
    DESTRUCTIVE = "destructive"


class Idempotency(str, Enum):
    IDEMPOTENT = "idempotent"
    CONDITIONAL = "conditional"
    NON_IDEMPOTENT = "non_idempotent"


class Replay(str, Enum):
    AUTO = "auto"
    ASK = "ask"
    NEVER = "never"


@dataclass(frozen=True)
class Found:
    """The lookup found the effect: the call took effect; ``value`` becomes its result."""

    value: Any = None


@dataclass(frozen=True)
class NotFound:
    """The lookup is sure the effect did not happen."""


@dataclass(frozen=True)
class Unknown:
    """The lookup cannot tell (yet)."""

    reason: str = ""


Verdict = Found | NotFound | Unknown
KeyFunction = Callable[[CallContext], str]


class SimulatedCrash(BaseException):
    """Raised by fault injection to stop a call as a dead process would: nothing more recorded."""


class CancelledBeforeStart(Exception):
    """The call was cancelled after its claim was written and before its body started."""


class AttemptStillRunning(TimeoutError):
    """The runtime's own ``timeout_s`` gave up waiting, but the body may still send.

    A sync body cannot be interrupted (it runs on in its thread), and an async body that was
    cancelled may have handed its request to a thread. Until the attempt is known to be over,
    no lookup can settle the call and no second attempt starts.
    """


@dataclass
class ToolSpec:
    name: str
    function: Callable[..., Any]
    is_async: bool
    risk: Risk
    idempotency: Idempotency
    replay: Replay
    key: KeyFunction | Sequence[str] | None
    reconcile: Callable[[CallContext], Any] | None
    retry: RetryPolicy
    timeout_s: float | None
    approve: Callable[[CallContext], Any] | None
    redact_fields: frozenset[str]
    settle_s: float
    lease_s: float | None
    signature: inspect.Signature
    drop_first: bool
    max_output_bytes: int | None = None
    lookup_timeout_s: float | None = None
    side_effects: tuple[str, ...] = ()
    simple_parameters: tuple[tuple[str, ...], frozenset[str], dict[str, Any]] | None = None

    @property
    def lookup_name(self) -> str | None:
        if self.reconcile is None:
            return None
        return getattr(self.reconcile, "__name__", "the lookup")

    @property
    def lookup_tool(self) -> str | None:
        """The lookup's tool name, when the lookup is itself a guarded tool the model can call."""
        lookup_spec = getattr(self.reconcile, "__agentguard__", None)
        return lookup_spec.name if isinstance(lookup_spec, ToolSpec) else None


@dataclass(frozen=True)
class RecoveryReport:
    expired: int = 0
    succeeded: int = 0
    failed: int = 0
    uncertain: int = 0
    call_ids: list[str] = field(default_factory=list)
    replayed: int = 0  # of the settled calls, how many recovery re-ran (replay="auto")


# Effects the decision generator asks its driver to perform.
@dataclass(frozen=True)
class _LedgerOp:
    operation: Callable[[], Any]


@dataclass(frozen=True)
class _Body:
    call: CallContext


@dataclass(frozen=True)
class _Sleep:
    seconds: float


@dataclass(frozen=True)
class _Callback:
    function: Callable[[CallContext], Any]
    call: CallContext
    timeout_s: float | None = None  # past it, the callback's answer is not waited for


@dataclass(frozen=True)
class _Outcome:
    value: Any = None
    error: BaseException | None = None


Plan = Generator[Any, Any, dict[str, Any]]

_FINISHED = object()


class _Drive:
    """What the sync and async drivers share: the plan's state between its requests.

    A driver performs each request its own way and hands back the reply, or the exception it
    raised to ``absorb``: a ledger error goes back into the plan; an interruption of the body
    (KeyboardInterrupt, SystemExit, cancellation) is recorded, then re-raised at the end.
    """

    __slots__ = ("interrupted", "observation", "pending", "plan", "reply", "spec")

    def __init__(self, spec: ToolSpec, plan: Plan) -> None:
        self.spec = spec
        self.plan = plan
        self.reply: Any = None
        self.pending: BaseException | None = None
        self.interrupted: BaseException | None = None
        self.observation: dict[str, Any] = {}

    def next_request(self) -> Any:
        """The plan's next request, or ``_FINISHED`` once ``observation`` holds its answer."""
        try:
            if self.pending is not None:
                request = self.plan.throw(self.pending)
            else:
                request = self.plan.send(self.reply)
        except StopIteration as stop:
            if self.interrupted is not None:
                raise self.interrupted from None
            self.observation = _limit_output(self.spec, stop.value)
            return _FINISHED
        except Exception as exc:
            if self.pending is None or exc is not self.pending:
                raise
            # a ledger write failed where the plan could not say more: what is known, plainly
            if self.interrupted is not None:
                raise self.interrupted from None
            logger.error("ledger failure during %s: %r", self.spec.name, exc)
            self.observation = words.ledger_failed(self.spec.name, f"{type(exc).__name__}: {exc}")
            return _FINISHED
        self.reply, self.pending = None, None
        return request

    def absorb(self, request: Any, error: BaseException) -> bool:
        """Whether ``error``, raised performing ``request``, goes back to the plan."""
        if isinstance(request, _LedgerOp):
            if isinstance(error, Exception):
                self.pending = error
                return True
            return False
        if isinstance(request, _Body) and not isinstance(error, SimulatedCrash):
            self.interrupted = error
            self.reply = _Outcome(error=error)
            return True
        return False


# What the model is shown of a result at most; the ledger keeps the whole result. A tool that
# returns more (a 20 MB export) gives OUTPUT_TOO_LARGE with a preview; None shows everything.
DEFAULT_MAX_OUTPUT_BYTES = 100_000
# How long a reconcile lookup is waited for (when the tool has no shorter timeout_s).
DEFAULT_LOOKUP_TIMEOUT_S = 10.0

# DESIGN 1's effect kinds; a tool declares its own (side_effects=), else its risk's.
EFFECT_KINDS = frozenset(
    {"read", "write", "network_write", "destructive", "exec", "payment", "message", "unknown"}
)
_EFFECTS_BY_RISK = {
    Risk.READ: ("read",),
    Risk.WRITE: ("write",),
    Risk.NETWORK: ("network_write",),
    Risk.DESTRUCTIVE: ("destructive",),
}

_DEFAULTS_BY_RISK = {
    Risk.READ: (Idempotency.IDEMPOTENT, Replay.AUTO),
    Risk.WRITE: (Idempotency.NON_IDEMPOTENT, Replay.NEVER),
    Risk.NETWORK: (Idempotency.NON_IDEMPOTENT, Replay.NEVER),
    # a destructive tool runs only once approved, unless configured otherwise (replay=...)
    Risk.DESTRUCTIVE: (Idempotency.NON_IDEMPOTENT, Replay.ASK),
}


class Runtime:
    """Owns the ledger and the registry of guarded tools (for ``recover()``)."""

    def __init__(
        self,
        ledger: Ledger | None = None,
        *,
        lease_s: float = 300.0,
        approve: Callable[[CallContext], Any] | None = None,
        worker_id: str | None = None,
        seed: int | None = None,
    ) -> None:
        if ledger is None:
            from agentguard.runtime.ledger.sqlite import SQLiteLedger

            ledger = SQLiteLedger("agentguard-ledger.db")
        self.ledger = ledger
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

    @property
    def worker_id(self) -> str:
        """The lease owner this process writes: it names the process, so that another worker
        on this machine can tell whether the owner of an expired lease is still alive."""
        identity = liveness.process_identity()
        return f"{self._worker_id}@{identity}" if self._worker_id else identity

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
            RunContext(
                run_id=run_id or new_run_id(),
                user_id=user_id,
                approved_at=approved_at,
                step_id=step_id,
                tenant=tenant,
                extra=fields,
            )
        )

    # ---- decision logic -------------------------------------------------------------------

    def _plan(self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
        run = current_run()
        if run is None:
            raise RuntimeError(
                f"{spec.name} is guarded by agentguard: call it inside `with runtime.run(...)`"
            )
        try:
            arguments = _bind(spec, args, kwargs)
        except TypeError as exc:
            return words.invalid_call(spec.name, str(exc))
        try:
            arguments_hash = input_hash(arguments)
        except NoCanonicalForm:
            # a hash that differed between processes would run the same request twice
            problem = describe_offender(arguments) or "an argument has no canonical form"
            return words.invalid_call(spec.name, f"{problem}; pass plain JSON values")

        call = CallContext(
            call_id=new_call_id(),
            tool_name=spec.name,
            args=arguments,
            run_id=run.run_id,
            user_id=run.user_id,
            approved_at=run.approved_at,
            step_id=run.step_id,
            tenant=run.tenant,
            extra=run.extra,
            input_hash=arguments_hash,
        )
        try:
            key = self._key_for(spec, call)
        except Exception as exc:  # the key function is the tool author's code: it may raise
            logger.warning("the key function of %s failed: %r", spec.name, exc)
            return words.key_failed(spec.name, f"{type(exc).__name__}: {exc}")
        call = evolve(call, idempotency_key=key)
        needs_approval = spec.replay is Replay.ASK
        now = time.time()
        entry = LedgerEntry(
            call_id=call.call_id,
            run_id=call.run_id,
            tool_name=spec.name,
            idempotency_key=call.idempotency_key,
            input_hash=call.input_hash,
            status=Status.PLANNED,
            risk=spec.risk.value,
            idempotency=spec.idempotency.value,
            replay=spec.replay.value,
            step_id=call.step_id,
            user_id=call.user_id,
            approved_at=call.approved_at,
            tenant=call.tenant,
            extra=dict(run.extra),
            side_effects=list(spec.side_effects),
            args=redact(arguments, spec.redact_fields),
            attempts=0 if needs_approval else 1,
            started_at=None if needs_approval else now,
            lease_owner=None if needs_approval else self.worker_id,
            lease_expires_at=None if needs_approval else now + self._lease(spec),
        )
        path = [Status.PLANNED] if needs_approval else [Status.PLANNED, Status.STARTED]
        try:
            won, entry = yield _LedgerOp(lambda: self.ledger.claim(entry, path))
        except Exception as exc:  # the ledger is down, locked or full: nothing has run
            logger.warning("could not claim %s in the ledger: %r", spec.name, exc)
            return words.ledger_unavailable(spec.name, f"{type(exc).__name__}: {exc}")
        if not won:
            return (yield from self._existing(spec, evolve(call, call_id=entry.call_id), entry))
        if needs_approval:
            return (yield from self._approve_then_execute(spec, call, entry))
        return (yield from self._execute(spec, call, entry, replays_left=1))

    def _key_for(self, spec: ToolSpec, call: CallContext) -> str:
        if callable(spec.key):
            key = spec.key(call)
            if not isinstance(key, str) or not key:
                raise ValueError(f"the key function of {spec.name} must return a non-empty str")
            if len(key) > 200 or not key.isprintable() or not key.isascii():
                return derived_key({"tool": spec.name, "key": key})
            return key
        if spec.key is not None:
            material = {"v": 1, "tool": spec.name}
            for part in spec.key:
                try:
                    material[part] = call[part]
                except KeyError:
                    raise ValueError(
                        f"key part {part!r} of {spec.name} is neither a run field nor an argument"
                    ) from None
            return derived_key(material)
        if spec.idempotency is Idempotency.IDEMPOTENT:
            return call.call_id  # nothing to deduplicate: every call may run
        # Scoped by who, which run and which approval, never by call id, attempt or time:
        # the model's second call for the same thing must land on the same key.
        return derived_key(
            {
                "v": 1,
                "tool": spec.name,
                "tenant": call.tenant,
                "user": call.user_id,
                "run": call.run_id,
                "approved_at": call.approved_at,
                "input": call.input_hash,
            }
        )

    def _lease(self, spec: ToolSpec) -> float:
        if spec.lease_s is not None:
            return spec.lease_s
        if spec.timeout_s is not None:
            return spec.timeout_s + 30.0
        return self.lease_s

    def _start_changes(self, entry: LedgerEntry, spec: ToolSpec) -> dict[str, Any]:
        now = time.time()
        return {
            "attempts": entry.attempts + 1,
            "started_at": now,
            "finished_at": None,
            "lease_owner": self.worker_id,
            "lease_expires_at": now + self._lease(spec),
            "error_code": None,
            "error_detail": None,
        }

    def _existing(self, spec: ToolSpec, call: CallContext, entry: LedgerEntry) -> Plan:
        if entry.input_hash != call.input_hash:
            # whatever the first call's status: a key names one request, with one set of
            # arguments (a failed call is re-armed only by the same request)
            return words.mismatch(spec.name, entry)
        if entry.status is Status.SUCCEEDED:
            return words.succeeded(spec.name, entry, replayed=True)
        if entry.status is Status.STARTED:
            now = time.time()
            if entry.lease_expires_at is not None and entry.lease_expires_at < now:
                moved = yield _LedgerOp(lambda: _expire_lease(self.ledger, entry, now))
                if moved is None:
                    return (yield from self._current_view(spec, call, entry))
                return (yield from self._reconcile(spec, call, moved, replays_left=1))
            return words.duplicate_in_progress(spec.name, entry)
        if entry.status is Status.UNCERTAIN:
            return (yield from self._reconcile(spec, call, entry, replays_left=1))
        if entry.status is Status.PLANNED:
            return (yield from self._approve_then_execute(spec, call, entry))
        if entry.status is Status.APPROVED:
            started = yield _LedgerOp(
                lambda: self.ledger.transition(
                    entry, Status.STARTED, **self._start_changes(entry, spec)
                )
            )
            if started is None:
                return (yield from self._current_view(spec, call, entry))
            return (yield from self._execute(spec, call, started, replays_left=1))
        # failed = known not to have taken effect: the same request may run again (re-armed);
        # with replay="ask" a person approves first.
        path = [Status.STARTED]
        if spec.replay is Replay.ASK:
            if not (yield from self._ask(spec, call)):
                return words.approval_required(spec.name, entry)
            path = [Status.APPROVED, Status.STARTED]
        changes = self._start_changes(entry, spec)
        rearmed = yield _LedgerOp(
            lambda: self.ledger.transition(entry, path, detail="re-armed by a new call", **changes)
        )
        if rearmed is None:
            return (yield from self._current_view(spec, call, entry))
        return (yield from self._execute(spec, call, rearmed, replays_left=1))

    def _current_view(self, spec: ToolSpec, call: CallContext, entry: LedgerEntry) -> Plan:
        current = yield _LedgerOp(lambda: self.ledger.get(entry.call_id))
        return words.from_entry(spec.name, current or entry, lookup=spec.lookup_name)

    def _ask(self, spec: ToolSpec, call: CallContext) -> Generator[Any, Any, bool]:
        approver = spec.approve or self.approval_callback
        if approver is None:
            return False
        outcome = yield _Callback(approver, call)
        if outcome.error is not None:
            logger.warning("approval callback of %s raised %r", spec.name, outcome.error)
            return False
        return bool(outcome.value)

    def _approver_name(self, spec: ToolSpec) -> str:
        approver = spec.approve or self.approval_callback
        return f"callback:{getattr(approver, '__name__', 'approve')}"

    def _approve_then_execute(self, spec: ToolSpec, call: CallContext, entry: LedgerEntry) -> Plan:
        if not (yield from self._ask(spec, call)):
            # rests planned: a person approves it later (runtime.approve, `ledger approve`)
            return words.approval_required(spec.name, entry)
        approver = self._approver_name(spec)
        started = yield _LedgerOp(
            lambda: self.ledger.transition(
                entry,
                [Status.APPROVED, Status.STARTED],
                actor=approver,
                approved_by=approver,
                approved_on=time.time(),
                **self._start_changes(entry, spec),
            )
        )
        if started is None:
            return (yield from self._current_view(spec, call, entry))
        return (yield from self._execute(spec, call, started, replays_left=1))

    def _retry_delay(
        self, spec: ToolSpec, failure: Failure, attempt: int, deadline: float | None
    ) -> float | None:
        policy = spec.retry
        if not policy.should_retry(failure.code, attempt, spec.idempotency, sent=failure.sent):
            return None  # not listed, out of attempts, or it could apply twice: reconcile
        delay = policy.delay_s(attempt, self._rng, failure.retry_after_s)
        if deadline is not None and time.monotonic() + delay > deadline:
            return None
        return delay

    def _execute(
        self, spec: ToolSpec, call: CallContext, entry: LedgerEntry, *, replays_left: int
    ) -> Plan:
        deadline = (
            time.monotonic() + spec.retry.deadline_s if spec.retry.deadline_s is not None else None
        )
        while True:
            attempt = entry.attempts
            outcome = yield _Body(evolve(call, attempt=attempt))
            if outcome.error is None:
                result, result_ref = jsonable_result(outcome.value)
                settled = yield from self._settle(
                    entry,
                    Status.SUCCEEDED,
                    attempt,
                    result=result,
                    result_ref=result_ref,
                    finished_at=time.time(),
                    error_code=None,
                    error_detail=None,
                )
                if settled.status is Status.SUCCEEDED and settled.attempts == attempt:
                    return words.succeeded(spec.name, settled, replayed=False)
                return words.from_entry(spec.name, settled, lookup=spec.lookup_name)
            if isinstance(outcome.error, CancelledBeforeStart):
                # nothing was attempted: release the claim, so that the next call runs
                unclaimed = yield from self._settle(
                    entry,
                    Status.FAILED,
                    attempt,
                    error_detail="cancelled before the body ran: nothing was attempted",
                    finished_at=time.time(),
                )
                return words.from_entry(spec.name, unclaimed, lookup=spec.lookup_name)
            failure = classify_exception(outcome.error)
            still_running = isinstance(outcome.error, AttemptStillRunning)
            # while an attempt may still send, a second one could apply the request twice
            delay = None if still_running else self._retry_delay(spec, failure, attempt, deadline)
            if delay is not None:
                yield _Sleep(delay)
                retry_note = (
                    f"attempt {attempt} failed with {failure.code.value} "
                    f"(sent: {failure.sent.value}); retrying"
                )
                retried = yield _LedgerOp(
                    functools.partial(
                        self.ledger.transition,
                        entry,
                        Status.STARTED,
                        detail=retry_note,
                        **self._start_changes(entry, spec),
                    )
                )
                if retried is None:
                    return (yield from self._current_view(spec, call, entry))
                entry = retried
                continue
            if failure.may_have_applied and spec.idempotency is not Idempotency.IDEMPOTENT:
                # The lease stays held while the attempt may still send; once the body has
                # returned, it is released, so that a lookup's NotFound can settle the call.
                released = {} if still_running else {"lease_owner": None, "lease_expires_at": None}
                settled = yield from self._settle(
                    entry,
                    Status.UNCERTAIN,
                    attempt,
                    error_code=ErrorCode.SIDE_EFFECT_UNCERTAIN.value,
                    error_detail=f"{failure.code.value}: {failure.message}",
                    **released,
                )
                if settled.status is not Status.UNCERTAIN:
                    return words.from_entry(spec.name, settled, lookup=spec.lookup_name)
                return (yield from self._reconcile(spec, call, settled, replays_left=replays_left))
            settled = yield from self._settle(
                entry,
                Status.FAILED,
                attempt,
                error_code=failure.code.value,
                error_detail=failure.message,
                finished_at=time.time(),
            )
            if settled.status is not Status.FAILED:
                return words.from_entry(spec.name, settled, lookup=spec.lookup_name)
            return words.failed(spec.name, settled, code=failure.code, detail=failure.message)

    def _settle(
        self, entry: LedgerEntry, target: Status, attempt: int, **changes: Any
    ) -> Generator[Any, Any, LedgerEntry]:
        """Record an attempt's outcome, fenced by its attempt number.

        If a sweeper marked the call uncertain meanwhile, the late outcome of the same attempt
        still settles it; if a newer attempt exists, the stale outcome is refused (and kept in
        the history). If the ledger cannot be written, the outcome goes to the outbox, which
        keeps trying; the returned entry then has ``version`` -1 (not recorded yet).
        """
        current = entry
        write_failures = 0
        for _ in range(8):
            snapshot = current
            try:
                updated = yield _LedgerOp(
                    lambda: self.ledger.transition(snapshot, target, **changes)  # noqa: B023
                )
            except Exception as exc:
                logger.warning("recording %s of %s failed: %r", target.value, entry.call_id, exc)
                write_failures += 1
                updated = None
            if updated is not None:
                return updated
            fresh = None
            if write_failures < 4:
                if write_failures:
                    yield _Sleep(0.05 * 4 ** (write_failures - 1))
                fresh = yield from self._read_retrying(entry.call_id)
            if fresh is None:
                # The body has run: its outcome must not be lost. The outbox keeps trying in
                # the background; the caller is told plainly that it is not recorded yet.
                self.outbox.put(snapshot, attempt, target, changes)
                return evolve(snapshot, status=target, version=words.UNRECORDED, **changes)
            current = fresh
            if current.attempts != attempt or current.status not in (
                Status.STARTED,
                Status.UNCERTAIN,
            ):
                yield _LedgerOp(
                    functools.partial(self._refuse_late_outcome, current, attempt, target)
                )
                return current
            if current.status is target:
                if "lease_owner" in changes and current.lease_owner is not None:
                    # a sweeper marked it uncertain first: the attempt has stopped all the same
                    yield _LedgerOp(
                        functools.partial(
                            self.ledger.release_lease,
                            entry.call_id,
                            attempt,
                            current.lease_owner,
                            "the attempt's body returned",
                        )
                    )
                    current = evolve(current, lease_owner=None, lease_expires_at=None)
                return current
        return current

    def _read_retrying(self, call_id: str) -> Generator[Any, Any, LedgerEntry | None]:
        """The entry as stored, trying a few times with backoff; None if the ledger stays down."""
        for delay in (0.0, 0.05, 0.2, 0.5):
            if delay:
                yield _Sleep(delay)
            try:
                fresh = yield _LedgerOp(lambda: self.ledger.get(call_id))
            except Exception:
                continue
            if fresh is None:
                raise RuntimeError(f"ledger entry {call_id} disappeared")
            return fresh
        return None

    def _reconcile(
        self,
        spec: ToolSpec,
        call: CallContext,
        entry: LedgerEntry,
        *,
        replays_left: int,
        now: float | None = None,
    ) -> Plan:
        lookup = spec.lookup_name
        if spec.reconcile is None:
            running = liveness.owner_may_be_running(
                entry.lease_owner, entry.call_id, entry.attempts
            )
            return words.uncertain(
                spec.name, entry, lookup=None, checked=False, still_running=running
            )
        reconcile_call = replace(
            call,
            call_id=entry.call_id,
            idempotency_key=entry.idempotency_key,
            attempt=entry.attempts,
        )
        outcome = yield _Callback(spec.reconcile, reconcile_call, spec.lookup_timeout_s)
        verdict = outcome.value if outcome.error is None else Unknown(repr(outcome.error))
        moment = time.time() if now is None else now
        if isinstance(verdict, NotFound) and moment < (entry.started_at or 0.0) + spec.settle_s:
            verdict = Unknown("too early to trust a negative lookup")
        still_running = False
        if isinstance(verdict, NotFound) and liveness.owner_may_be_running(
            entry.lease_owner, entry.call_id, entry.attempts
        ):
            # "not found yet": the attempt (abandoned at its deadline, or of a worker that
            # stopped renewing but may be frozen, not dead) could still send its request
            verdict = Unknown(f"attempt {entry.attempts} may still be running")
            still_running = True
        if isinstance(verdict, Found):
            result, result_ref = jsonable_result(verdict.value)
            moved = yield _LedgerOp(
                lambda: self.ledger.transition(
                    entry,
                    Status.SUCCEEDED,
                    actor="reconciler",
                    detail=f"{lookup} found the effect",
                    result=result,
                    result_ref=result_ref,
                    finished_at=time.time(),
                )
            )
            if moved is None:
                return (yield from self._current_view(spec, call, entry))
            return words.succeeded(spec.name, moved, replayed=False, reconciled_with=lookup)
        if isinstance(verdict, NotFound):
            path: list[Status] | None = None
            if spec.replay is Replay.AUTO and replays_left > 0:
                path = [Status.STARTED]
            elif (
                spec.replay is Replay.ASK
                and replays_left > 0
                and (yield from self._ask(spec, call))
            ):
                path = [Status.APPROVED, Status.STARTED]
            if path is not None:
                replay_path = path
                restarted = yield _LedgerOp(
                    lambda: self.ledger.transition(
                        entry,
                        replay_path,
                        actor="reconciler",
                        detail=f"{lookup} did not find the effect: replaying with the same key",
                        **self._start_changes(entry, spec),
                    )
                )
                if restarted is None:
                    return (yield from self._current_view(spec, call, entry))
                return (
                    yield from self._execute(spec, call, restarted, replays_left=replays_left - 1)
                )
            needs_approval = spec.replay is Replay.ASK
            cause = (entry.error_detail or "TOOL_CRASH").split(":", 1)[0]
            code = ErrorCode.APPROVAL_REQUIRED if needs_approval else ErrorCode(cause)
            moved = yield _LedgerOp(
                lambda: self.ledger.transition(
                    entry,
                    Status.FAILED,
                    actor="reconciler",
                    detail=f"{lookup} did not find the effect: it did not take effect",
                    error_code=code.value,
                    finished_at=time.time(),
                )
            )
            if moved is None:
                return (yield from self._current_view(spec, call, entry))
            if needs_approval:
                return words.approval_required(spec.name, moved, after_check=lookup)
            return words.failed(spec.name, moved, code=code, detail=None, checked_with=lookup)
        logger.info("%s could not settle %s: %r", lookup, entry.call_id, verdict)
        still_running = still_running or liveness.owner_may_be_running(
            entry.lease_owner, entry.call_id, entry.attempts
        )
        return words.uncertain(
            spec.name,
            entry,
            lookup=lookup,
            checked=True,
            still_running=still_running,
            lookup_tool=spec.lookup_tool,
        )

    # ---- drivers --------------------------------------------------------------------------

    def _call_sync(
        self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        return self._drive_sync(spec, self._plan(spec, args, kwargs), args, kwargs)

    def _drive_sync(
        self, spec: ToolSpec, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        drive = _Drive(spec, plan)
        while (request := drive.next_request()) is not _FINISHED:
            try:
                if isinstance(request, _LedgerOp):
                    drive.reply = request.operation()
                elif isinstance(request, _Body):
                    drive.reply = self._body_sync(spec, request.call, args, kwargs)
                elif isinstance(request, _Sleep):
                    self.sleep(request.seconds)
                elif isinstance(request, _Callback):
                    drive.reply = _call_callback_sync(request)
            except BaseException as exc:
                if not drive.absorb(request, exc):
                    raise
        return drive.observation

    def _begin_attempt(self, spec: ToolSpec, call: CallContext) -> tuple[Any, Any]:
        """Make ``call`` current, count its attempt as running and watch its lease."""
        token = _current_call.set(call)
        liveness.begin(call.call_id, call.attempt)
        return token, self.heartbeat.watch(call.call_id, call.attempt, self._lease(spec))

    def _end_attempt(self, token: Any, beat: Any, call: CallContext, *, running: bool) -> None:
        """Undo ``_begin_attempt``; an attempt that may still run stays counted as running."""
        self.heartbeat.unwatch(beat)
        if not running:
            liveness.end(call.call_id, call.attempt)
        _current_call.reset(token)

    def _body_sync(
        self, spec: ToolSpec, call: CallContext, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> _Outcome:
        def invoke() -> Any:
            for hook in self.fault_hooks:
                hook.before_body(call)
            value = spec.function(*args, **kwargs)
            for hook in self.fault_hooks:
                value = hook.after_body(call, value)
            return value

        token, beat = self._begin_attempt(spec, call)
        outcome = _Outcome(error=RuntimeError("the body did not finish"))
        try:
            if spec.timeout_s is None:
                outcome = _Outcome(value=invoke())
            else:
                outcome = self._body_with_deadline(spec, call, invoke)
            return outcome
        except SimulatedCrash:
            raise
        except Exception as exc:
            outcome = _Outcome(error=exc)
            return outcome
        finally:
            running = isinstance(outcome.error, AttemptStillRunning)
            self._end_attempt(token, beat, call, running=running)

    def _body_with_deadline(
        self, spec: ToolSpec, call: CallContext, invoke: Callable[[], Any]
    ) -> _Outcome:
        # A sync function cannot be interrupted: it runs on in its thread. Past the deadline the
        # attempt is still running (it may still send); when it finishes, its outcome is
        # recorded as a late completion of this attempt and the attempt stops counting as live.
        lock = threading.Lock()
        state: dict[str, Any] = {"abandoned": False}
        finished = threading.Event()

        def runner() -> None:
            try:
                outcome = _Outcome(value=invoke())
            except BaseException as exc:
                outcome = _Outcome(error=exc)
            with lock:
                state["outcome"] = outcome
                abandoned = state["abandoned"]
            finished.set()
            if abandoned:
                try:
                    self._late_completion(spec, call, outcome)
                finally:
                    liveness.end(call.call_id, call.attempt)

        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(runner,), daemon=True).start()
        finished.wait(spec.timeout_s)
        with lock:
            if "outcome" in state:
                outcome = state["outcome"]
                if isinstance(outcome.error, SimulatedCrash):
                    raise outcome.error
                return outcome
            state["abandoned"] = True
        return _Outcome(
            error=AttemptStillRunning(
                f"{spec.name} did not finish within {spec.timeout_s} s and is still running"
            )
        )

    def _late_completion(self, spec: ToolSpec, call: CallContext, outcome: _Outcome) -> None:
        """Record the outcome of an attempt that finished after the runtime stopped waiting."""
        for _ in range(8):
            entry = self.ledger.get(call.call_id)
            if entry is None:
                return
            if entry.status is not Status.UNCERTAIN or entry.attempts != call.attempt:
                if outcome.error is None and entry.status is not Status.SUCCEEDED:
                    self._refuse_late_outcome(entry, call.attempt, Status.SUCCEEDED)
                return
            failure = None if outcome.error is None else classify_exception(outcome.error)
            if failure is None or not failure.may_have_applied:
                changes: dict[str, Any]
                if failure is None:
                    result, result_ref = jsonable_result(outcome.value)
                    target, what = Status.SUCCEEDED, "succeeded"
                    changes = {"result": result, "result_ref": result_ref}
                else:
                    target, what = Status.FAILED, "did not take effect"
                    changes = {"error_code": failure.code.value, "error_detail": failure.message}
                moved = self.ledger.transition(
                    entry,
                    target,
                    actor="late_completion",
                    detail=f"the attempt finished after its deadline and {what}",
                    finished_at=time.time(),
                    lease_owner=None,
                    lease_expires_at=None,
                    **changes,
                )
                if moved is not None:
                    return
                continue
            if entry.lease_owner is not None:
                self.ledger.release_lease(
                    entry.call_id,
                    call.attempt,
                    entry.lease_owner,
                    f"the attempt finished after its deadline with {failure.code.value}: "
                    "its outcome is still unknown, and nothing of it can send any more",
                )
            return

    def _refuse_late_outcome(self, entry: LedgerEntry, attempt: int, outcome: Status) -> None:
        """A late outcome that cannot be recorded as the call's: kept in its history, logged."""
        detail = (
            f"late outcome {outcome.value} of attempt {attempt} not applied: the call is "
            f"{entry.status.value} at attempt {entry.attempts}"
        )
        if outcome is Status.SUCCEEDED:
            detail += "; it may have taken effect twice"
        logger.error("%s: %s", entry.call_id, detail)
        try:
            self.ledger.note(entry, "late_outcome", detail)
        except Exception as exc:  # the log line above still says it
            logger.warning("could not record the late outcome of %s: %r", entry.call_id, exc)

    async def _call_async(
        self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        return await self._drive_async(spec, self._plan(spec, args, kwargs), args, kwargs)

    async def _drive_async(
        self, spec: ToolSpec, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        drive = _Drive(spec, plan)
        while (request := drive.next_request()) is not _FINISHED:
            try:
                if isinstance(request, _LedgerOp):
                    if drive.interrupted is not None:
                        # after a cancellation, record synchronously: awaiting could be cancelled again
                        drive.reply = request.operation()
                    else:
                        drive.reply = await _ledger_op_through_cancellation(drive, request)
                elif isinstance(request, _Body):
                    if drive.interrupted is not None:
                        # cancelled while its claim was being written: the body never starts
                        drive.reply = _Outcome(error=CancelledBeforeStart())
                    else:
                        drive.reply = await self._body_async(spec, request.call, args, kwargs)
                elif isinstance(request, _Sleep):
                    await self.async_sleep(request.seconds)
                elif isinstance(request, _Callback):
                    drive.reply = await _call_callback_async(request)
            except BaseException as exc:
                if not drive.absorb(request, exc):
                    raise
        return drive.observation

    async def _body_async(
        self, spec: ToolSpec, call: CallContext, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> _Outcome:
        token, beat = self._begin_attempt(spec, call)
        outcome = _Outcome(error=RuntimeError("the body did not finish"))
        try:
            for hook in self.fault_hooks:
                hook.before_body(call)
            if spec.timeout_s is None:
                value = await spec.function(*args, **kwargs)
            else:
                # not wait_for: a TimeoutError the body raises itself is not the deadline's
                task = asyncio.ensure_future(spec.function(*args, **kwargs))
                try:
                    done, _ = await asyncio.wait({task}, timeout=spec.timeout_s)
                except BaseException:
                    task.cancel()
                    raise
                if task in done:
                    value = task.result()
                else:
                    task.cancel()
                    await asyncio.wait({task})
                    outcome = _Outcome(
                        error=AttemptStillRunning(
                            f"{spec.name} did not finish within {spec.timeout_s} s and was "
                            "cancelled; work it handed to a thread may still be running"
                        )
                    )
                    self._release_after_grace(spec, call)
                    return outcome
            for hook in self.fault_hooks:
                value = hook.after_body(call, value)
            outcome = _Outcome(value=value)
            return outcome
        except SimulatedCrash:
            raise
        except Exception as exc:
            outcome = _Outcome(error=exc)
            return outcome
        finally:
            running = isinstance(outcome.error, AttemptStillRunning)
            self._end_attempt(token, beat, call, running=running)

    def _release_after_grace(self, spec: ToolSpec, call: CallContext) -> None:
        """A cancelled async attempt counts as running for one more lease, then is released.

        Cancellation stops the coroutine, not a thread it handed its request to
        (``asyncio.to_thread``, an executor), and nothing tells when such a thread ends.
        """
        owner = self.worker_id

        def release() -> None:
            liveness.end(call.call_id, call.attempt)
            try:
                self.ledger.release_lease(
                    call.call_id,
                    call.attempt,
                    owner,
                    "the cancelled attempt's grace period ended: nothing of it can send any more",
                )
            except Exception as exc:
                logger.warning("could not release the lease of %s: %r", call.call_id, exc)

        timer = threading.Timer(self._lease(spec), release)
        timer.daemon = True
        timer.start()

    # ---- recovery and resolution ----------------------------------------------------------

    def recover(
        self, *, now: float | None = None, reconcile: bool = True, concurrency: int = 8
    ) -> RecoveryReport:
        """Mark calls whose worker died (lease expired) uncertain, then reconcile uncertain calls.

        Recovery never re-runs a tool body: a call its lookup did not find becomes ``failed``
        (known not to have taken effect), and the agent's next call with the same key re-arms it.
        """
        moment = time.time() if now is None else now
        expired = 0
        touched: list[str] = []
        for entry in self.ledger.expired(moment):
            moved = _expire_lease(self.ledger, entry, moment, actor="sweeper")
            if moved is not None:
                expired += 1
                touched.append(entry.call_id)
        counts = {Status.SUCCEEDED: 0, Status.FAILED: 0, Status.UNCERTAIN: 0}
        replayed = 0
        uncertain = self.ledger.entries(status=Status.UNCERTAIN)

        def settle(entry: LedgerEntry) -> LedgerEntry | None:
            return self._recover_one(entry, moment) if reconcile else entry

        # Lookups wait on other services: run them side by side, a bounded number at a time,
        # so that a few slow ones do not hold up the rest (each is bounded by its own timeout).
        workers = max(1, min(concurrency, len(uncertain)))
        if workers == 1:
            outcomes = [settle(entry) for entry in uncertain]
        else:
            with ThreadPoolExecutor(workers, thread_name_prefix="agentguard-recover") as pool:
                outcomes = list(pool.map(settle, uncertain))
        for entry, settled in zip(uncertain, outcomes, strict=True):
            if settled is None or settled.status not in counts:
                continue
            counts[settled.status] += 1
            if settled.attempts > entry.attempts:
                replayed += 1
            if settled.status is not Status.UNCERTAIN:
                touched.append(entry.call_id)
        return RecoveryReport(
            expired,
            counts[Status.SUCCEEDED],
            counts[Status.FAILED],
            counts[Status.UNCERTAIN],
            touched,
            replayed,
        )

    def _recover_one(self, entry: LedgerEntry, moment: float) -> LedgerEntry | None:
        """Reconcile one uncertain entry as a call would; its entry afterwards."""
        spec = self.tools.get(entry.tool_name)
        if spec is None or spec.reconcile is None:
            return entry
        call = CallContext(
            call_id=entry.call_id,
            tool_name=entry.tool_name,
            args=entry.args,
            run_id=entry.run_id,
            user_id=entry.user_id,
            approved_at=entry.approved_at,
            step_id=entry.step_id,
            tenant=entry.tenant,
            extra=entry.extra,
            idempotency_key=entry.idempotency_key,
            input_hash=entry.input_hash,
            attempt=entry.attempts,
        )
        # The same reconciliation as inside a call: Found -> succeeded; NotFound -> re-run
        # with the same key when replay="auto" (or "ask" and approved), else failed;
        # anything else stays uncertain. A re-run needs the exact arguments, so calls whose
        # stored arguments cannot be passed back to the tool are settled failed instead,
        # and the agent's next call with the same key re-arms them.
        # An async body can only be re-run here when no event loop runs in this thread.
        async_blocked = spec.is_async and _loop_running()
        replays_left = 1 if _can_rerun_from_ledger(spec, entry) and not async_blocked else 0
        plan = self._reconcile(spec, call, entry, replays_left=replays_left, now=moment)
        kwargs = dict(entry.args)
        if spec.is_async and not async_blocked:
            _run_awaitable(self._drive_async(spec, plan, (), kwargs))
        else:
            self._drive_sync(spec, plan, (), kwargs)  # never asks for the body
        return self.ledger.get(entry.call_id)

    def resolve(
        self, call_id: str, outcome: str, note: str, *, actor: str = "human"
    ) -> LedgerEntry:
        return resolve_call(self.ledger, call_id, outcome, note, actor=actor)

    def approve(self, call_id: str, *, by: str, note: str | None = None) -> LedgerEntry:
        """Approve a call waiting for approval; the next call with its key runs it."""
        return approve_call(self.ledger, call_id, by=by, note=note)


def approve_call(ledger: Ledger, call_id: str, *, by: str, note: str | None = None) -> LedgerEntry:
    """Record ``by``'s approval of a planned call (who and when); it rests ``approved``."""
    if not by.strip():
        raise ValueError("an approval names who gives it")
    for _ in range(8):
        entry = ledger.get(call_id)
        if entry is None:
            raise LookupError(f"no ledger entry with call id {call_id}")
        if entry.status is Status.APPROVED:
            return entry
        if entry.status is not Status.PLANNED:
            raise ValueError(
                f"{call_id} is {entry.status.value}; only calls waiting for approval are approved"
            )
        moved = ledger.transition(
            entry,
            Status.APPROVED,
            actor=by,
            detail=note or f"approved by {by}",
            approved_by=by,
            approved_on=time.time(),
        )
        if moved is not None:
            return moved
    raise RuntimeError(f"{call_id} kept changing while it was being approved")


def resolve_call(
    ledger: Ledger, call_id: str, outcome: str, note: str, *, actor: str = "human"
) -> LedgerEntry:
    """Record a person's resolution of an uncertain call (``succeeded`` or ``failed``)."""
    target = Status(outcome)
    if target not in (Status.SUCCEEDED, Status.FAILED):
        raise ValueError("a call can be resolved as succeeded or failed")
    for _ in range(8):
        entry = ledger.get(call_id)
        if entry is None:
            raise LookupError(f"no ledger entry with call id {call_id}")
        if entry.status is not Status.UNCERTAIN:
            raise ValueError(
                f"{call_id} is {entry.status.value}; only uncertain calls are resolved by hand"
            )
        changes: dict[str, Any] = {"finished_at": time.time()}
        if target is Status.FAILED:
            changes["error_code"] = entry.error_code or ErrorCode.SIDE_EFFECT_UNCERTAIN.value
        moved = ledger.transition(entry, target, actor=actor, detail=note, **changes)
        if moved is not None:
            return moved
    raise RuntimeError(f"{call_id} kept changing while it was being resolved")


def _simple_parameters(
    signature: inspect.Signature,
) -> tuple[tuple[str, ...], frozenset[str], dict[str, Any]] | None:
    """Positional names, all names and defaults, if no parameter is variadic or positional-only."""
    positional: list[str] = []
    defaults: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            positional.append(parameter.name)
        elif parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            return None
        if parameter.default is not inspect.Parameter.empty:
            defaults[parameter.name] = parameter.default
    return tuple(positional), frozenset(signature.parameters), defaults


def _bind(spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by name, defaults applied, in the signature's order.

    Signature.bind costs more than the rest of the decision logic; the common shapes are bound
    directly, and anything unusual (or wrong, for its error message) goes through it.
    """
    simple = spec.simple_parameters
    if simple is not None and len(args) <= len(simple[0]):
        positional, names, defaults = simple
        arguments = dict(zip(positional, args, strict=False))
        if all(name in names and name not in arguments for name in kwargs):
            arguments.update(kwargs)
            if len(arguments) < len(names):
                for name, default in defaults.items():
                    arguments.setdefault(name, default)
            if len(arguments) == len(names):
                ordered = {name: arguments[name] for name in spec.signature.parameters}
                if spec.drop_first:
                    ordered.pop(next(iter(ordered)))
                return ordered
    bound = spec.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    if spec.drop_first and arguments:
        arguments.pop(next(iter(arguments)))
    return arguments


_JSON_ANNOTATIONS = frozenset(
    {"str", "int", "float", "bool", "dict", "list", "Any", "None", "typing.Any", "object"}
)


def _can_rerun_from_ledger(spec: ToolSpec, entry: LedgerEntry) -> bool:
    """Whether the stored (JSON, possibly redacted) arguments are exactly what the tool got.

    Methods need their instance; redacted secrets and arguments whose type JSON does not keep
    (a pydantic model, a datetime) cannot be passed back. The input hash proves nothing was
    redacted; the annotations that every parameter takes plain JSON values.
    """
    if spec.drop_first or spec.simple_parameters is None:
        return False  # no instance; or variadic/positional-only parameters
    if entry.input_hash != input_hash(entry.args):
        return False
    for parameter in spec.signature.parameters.values():
        annotation = parameter.annotation
        if annotation is inspect.Parameter.empty:
            continue
        text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
        parts = {part.strip() for part in re.split(r"[|\[\],]|Optional|Union", text)}
        if not parts - {""} <= _JSON_ANNOTATIONS:
            return False
    return True


def _expire_lease(
    ledger: Ledger, entry: LedgerEntry, moment: float, *, actor: str = "runtime"
) -> LedgerEntry | None:
    """Mark a started call uncertain if its stored lease ran out before ``moment``."""
    return ledger.transition(
        entry,
        Status.UNCERTAIN,
        lease_expired_by=moment,
        actor=actor,
        detail="lease expired: the worker stopped before recording the outcome",
        error_code=ErrorCode.SIDE_EFFECT_UNCERTAIN.value,
        error_detail="TOOL_CRASH: lease expired",
    )


def _limit_output(spec: ToolSpec, observation: dict[str, Any]) -> dict[str, Any]:
    if spec.max_output_bytes is None or not observation["ok"]:
        return observation
    return words.too_large(observation, spec.max_output_bytes)


def _call_callback_sync(request: _Callback) -> _Outcome:
    if request.timeout_s is not None:
        return _call_with_deadline(request)
    try:
        value = request.function(request.call)
        if inspect.isawaitable(value):
            value = _run_awaitable(value)
        return _Outcome(value=value)
    except Exception as exc:
        return _Outcome(error=exc)


def _call_with_deadline(request: _Callback) -> _Outcome:
    """The callback in a thread of its own, waited for at most ``timeout_s``.

    A lookup that hangs (a dead replica, a lock) would otherwise hold the call, or recovery,
    for as long as it hangs; past its deadline its answer counts as Unknown.
    """
    box: list[_Outcome] = []
    unbounded = replace(request, timeout_s=None)
    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run,
        args=(lambda: box.append(_call_callback_sync(unbounded)),),
        daemon=True,
        name="agentguard-lookup",
    )
    thread.start()
    thread.join(request.timeout_s)
    if box:
        return box[0]
    return _Outcome(error=TimeoutError(f"the lookup did not answer within {request.timeout_s} s"))


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run_awaitable(awaitable: Any) -> Any:
    async def wait() -> Any:
        return await awaitable

    return asyncio.run(wait())


async def _ledger_op_through_cancellation(drive: _Drive, request: _LedgerOp) -> Any:
    """Perform a ledger operation in a thread; a cancellation waits for it to finish.

    The thread cannot be stopped: a claim it commits after the caller was cancelled would
    otherwise stay ``started`` for a body that never runs. The cancellation is kept in
    ``drive.interrupted`` and re-raised once the plan has recorded what happened.
    """
    future = asyncio.ensure_future(asyncio.to_thread(request.operation))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError as exc:
        drive.interrupted = exc
    while True:
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            continue  # cancelled again: the operation still has to finish


async def _call_callback_async(request: _Callback) -> _Outcome:
    try:
        if inspect.iscoroutinefunction(request.function):
            value = await asyncio.wait_for(request.function(request.call), request.timeout_s)
        else:
            answer = asyncio.to_thread(_call_callback_sync, replace(request, timeout_s=None))
            # a thread cannot be stopped: past the deadline its answer is not waited for
            outcome: _Outcome = await asyncio.wait_for(asyncio.shield(answer), request.timeout_s)
            return outcome
        return _Outcome(value=value)
    except asyncio.TimeoutError:
        return _Outcome(
            error=TimeoutError(f"the lookup did not answer within {request.timeout_s} s")
        )
    except Exception as exc:
        return _Outcome(error=exc)


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
            simple_parameters=_simple_parameters(signature),
        )
        runtime.tools[spec.name] = spec
        wrapper: Any
        if spec.is_async:

            @functools.wraps(function)
            async def async_wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
                return await runtime._call_async(spec, args, kwargs)

            wrapper = async_wrapper
        else:

            @functools.wraps(function)
            def sync_wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
                return runtime._call_sync(spec, args, kwargs)

            wrapper = sync_wrapper
        # The wrapper returns an observation, so that is what it declares; the parameters, from
        # which frameworks build the model's input schema, stay exactly the function's.
        wrapper.__signature__ = signature.replace(return_annotation=dict[str, Any])
        wrapper.__annotations__ = {**function.__annotations__, "return": dict[str, Any]}
        wrapper.__agentguard__ = spec
        return wrapper

    return decorate
