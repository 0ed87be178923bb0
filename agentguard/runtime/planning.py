"""The decision logic, written once: claim, replay, execute, settle, reconcile.

Every method is a generator step of the plan; it asks for ledger operations, the body, sleeps
and callbacks as effects (``agentguard.runtime.effects``) and never performs them itself.
"""

from __future__ import annotations

import inspect
import logging
import random
import sys
import time
from collections.abc import Callable, Generator
from dataclasses import MISSING, replace
from dataclasses import fields as fields_of
from operator import methodcaller
from typing import Any

from agentguard.runtime import liveness
from agentguard.runtime import observations as words
from agentguard.runtime.context import (
    CURRENT_RUN,
    CallContext,
    RunContext,
    new_run_id,
)
from agentguard.runtime.effects import (
    Plan,
    _Body,
    _Callback,
    _Claim,
    _LedgerOp,
    _Outcome,
    _Sleep,
)
from agentguard.runtime.errors import ErrorCode, Failure, classify_exception
from agentguard.runtime.frameworks import framework_run, is_framework_context
from agentguard.runtime.hashing import (
    NoCanonicalForm,
    default_key,
    derived_key,
    describe_offender,
    input_hash,
    jsonable_result,
    redact,
    with_stand_ins,
)
from agentguard.runtime.heartbeat import Heartbeat
from agentguard.runtime.kinds import (
    NOTHING_ATTEMPTED,
    AttemptStillRunning,
    CancelledBeforeStart,
    Found,
    Idempotency,
    NotFound,
    Replay,
    ToolSpec,
    Unknown,
)
from agentguard.runtime.ledger.base import (
    AsyncLedger,
    Ledger,
    LedgerEntry,
    LedgerUnanswered,
    Status,
    evolve,
    new_call_id,
    with_fields,
)
from agentguard.runtime.outbox import Outbox

logger = logging.getLogger("agentguard.runtime")

_CLAIM_STARTED = (Status.PLANNED, Status.STARTED)
_CLAIM_PLANNED = (Status.PLANNED,)

# A call ready to be claimed: its context, its entry and the claim's path.
Prepared = tuple[CallContext, LedgerEntry, tuple[Status, ...]]


class Planner:
    """The decision logic of ``Runtime``; the drivers and recovery are built on it."""

    # Set by Runtime.__init__; declared here for the layers built on this one.
    ledger: Ledger
    lease_s: float
    implicit_runs: bool
    approval_callback: Callable[[CallContext], Any] | None
    _rng: random.Random
    tools: dict[str, ToolSpec]
    fault_hooks: list[Any]
    sleep: Callable[[float], None]
    async_sleep: Callable[[float], Any]
    heartbeat: Heartbeat
    outbox: Outbox

    @property
    def worker_id(self) -> str:
        """The lease owner this process writes: it names the process, so that another worker
        on this machine can tell whether the owner of an expired lease is still alive."""
        identity = liveness.process_identity()
        return f"{self._worker_id}@{identity}" if self._worker_id else identity

    _worker_id: str | None

    # ---- decision logic -------------------------------------------------------------------

    def _plan(self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
        prepared = self._prepare(spec, args, kwargs)
        if isinstance(prepared, dict):
            return prepared
        return (yield from self._claimed(spec, *prepared))

    def _prepare(
        self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Prepared | dict[str, Any]:
        """The call and its entry before the claim, or the observation refusing the call."""
        try:
            arguments = _bind(spec, args, kwargs)
        except TypeError as exc:
            return words.invalid_call(spec.name, str(exc))
        contexts = _framework_contexts(spec, arguments) if spec.context_parameters else ()
        run = CURRENT_RUN.get()  # ``current_run()``
        if run is None:
            # a framework calling the tool names the run (LangGraph's thread, the Agents SDK's
            # trace, the MCP session); else a run of the call's own, if the runtime allows it
            run = framework_run(contexts)
        if run is None and self.implicit_runs:
            run = RunContext(run_id=new_run_id())
        if run is None:
            raise RuntimeError(
                f"{spec.name} is guarded by agentguard: call it inside `with runtime.run(...)`"
                " or create the Runtime with implicit_runs=True"
                + (
                    "; served by an MCP server, give it a `ctx: Context` parameter, whose "
                    "request names the run"
                    if "mcp.server" in sys.modules
                    else ""
                )
            )
        stored_arguments = arguments
        try:
            arguments_hash = input_hash(arguments)
        except NoCanonicalForm:
            # A hash that differed between processes would run the same request twice. A tool
            # whose own key says which request a call is hashes a marker in the part's place.
            problem = describe_offender(arguments) or "an argument has no canonical form"
            if spec.key is None:
                logger.warning(
                    "%s: %s; give the tool a key= or pass a value type", spec.name, problem
                )
                return words.invalid_call(
                    spec.name,
                    f"{problem}, so a repeat of this request could not be recognised; the "
                    "tool needs a key= naming what identifies the request, or a value type "
                    "(a dataclass, a pydantic model, plain JSON)",
                )
            stored_arguments = with_stand_ins(arguments)
            arguments_hash = input_hash(stored_arguments)

        needs_approval = spec.replay is Replay.ASK
        # the attempt the body runs as (an approval callback first sees the call at attempt 0)
        attempt = 0 if needs_approval else 1
        call_id = new_call_id()
        # Built without __init__, and only once: until the key is set, no other code sees it.
        fields = {
            "call_id": call_id,
            "tool_name": spec.name,
            "args": arguments,
            "run_id": run.run_id,
            "user_id": run.user_id,
            "approved_at": run.approved_at,
            "step_id": run.step_id,
            "tenant": run.tenant,
            "extra": run.extra,
            "idempotency_key": "",
            "input_hash": arguments_hash,
            "attempt": 0,
        }
        key_parts = spec.key
        try:
            if key_parts is None:  # the key is the call's own fields': no code sees it before
                key = (
                    call_id
                    if spec.idempotency is Idempotency.IDEMPOTENT
                    else default_key(
                        spec.name,
                        run.tenant,
                        run.user_id,
                        run.run_id,
                        run.approved_at,
                        arguments_hash,
                    )
                )
            else:
                call = with_fields(CallContext, fields)
                key = self._key_for(spec, call)
        except NoCanonicalForm as exc:  # a key part without a canonical form
            return words.invalid_call(spec.name, f"{exc}; the key's parts must be plain values")
        except Exception as exc:  # the key function is the tool author's code: it may raise
            logger.warning("the key function of %s failed: %r", spec.name, exc)
            return words.key_failed(spec.name, f"{type(exc).__name__}: {exc}")
        if key_parts is None:
            fields["idempotency_key"] = key
            fields["attempt"] = attempt
            call = with_fields(CallContext, fields)
        elif callable(key_parts):
            call = evolve(call, idempotency_key=key, attempt=attempt)  # the key function saw it
        else:
            object.__setattr__(call, "idempotency_key", key)
            object.__setattr__(call, "attempt", attempt)
        # the entry: a copy of the tool's fixed fields, with the call's (in the template's order)
        values = {
            **_entry_template(spec),
            "call_id": call_id,
            "run_id": run.run_id,
            "idempotency_key": key,
            "input_hash": arguments_hash,
            "step_id": run.step_id,
            "user_id": run.user_id,
            "approved_at": run.approved_at,
            "args": redact(stored_arguments, spec.redact_fields),
            "attempts": attempt,
            "tenant": run.tenant,
            "extra": dict(run.extra),
            "side_effects": list(spec.side_effects),
        }
        if not needs_approval:
            now = time.time()
            values["started_at"] = now
            values["lease_owner"] = self.worker_id
            values["lease_expires_at"] = now + self._lease(spec)
        entry = with_fields(LedgerEntry, values)
        return call, entry, _CLAIM_PLANNED if needs_approval else _CLAIM_STARTED

    def _claimed(
        self, spec: ToolSpec, call: CallContext, entry: LedgerEntry, path: tuple[Status, ...]
    ) -> Plan:
        """From the claim of a prepared call on."""
        try:
            won, stored = yield _Claim(lambda ledger: ledger.claim(entry, path), call.call_id)
        except Exception as exc:
            return self._claim_failed(spec, exc, entry if path is _CLAIM_STARTED else None)
        return (yield from self._after_claim(spec, call, won, stored))

    def _claim_failed(
        self, spec: ToolSpec, error: Exception, claimed: LedgerEntry | None = None
    ) -> dict[str, Any]:
        # the ledger is down, locked or full: nothing has run
        logger.warning("could not claim %s in the ledger: %r", spec.name, error)
        if claimed is not None:
            # The claim may have been written even so (its answer lost): once the ledger
            # answers, it is released, so that the next call with the key runs instead of
            # meeting a 'started' entry no body will ever finish.
            self.outbox.put(
                claimed,
                claimed.attempts,
                Status.FAILED,
                {"error_detail": NOTHING_ATTEMPTED, "finished_at": time.time()},
                detail="the claim's answer was lost and its body never ran: released",
            )
        return words.ledger_unavailable(spec.name, f"{type(error).__name__}: {error}")

    def _after_claim(
        self, spec: ToolSpec, call: CallContext, won: bool, entry: LedgerEntry
    ) -> Plan:
        if not won:
            return (yield from self._existing(spec, evolve(call, call_id=entry.call_id), entry))
        if entry.status is Status.PLANNED:
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
        return default_key(
            spec.name, call.tenant, call.user_id, call.run_id, call.approved_at, call.input_hash
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
            if entry.lease_expires_at is not None and (
                entry.lease_expires_at < now or liveness.owner_known_gone(entry.lease_owner)
            ):
                # the worker stopped (its lease ran out) or, on this machine, is known dead:
                # its lease need not be waited for
                moved = yield _LedgerOp(lambda ledger: _expire_lease(ledger, entry, now))
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
                lambda ledger: ledger.transition(
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
            lambda ledger: ledger.transition(
                entry, path, detail="re-armed by a new call", **changes
            )
        )
        if rearmed is None:
            return (yield from self._current_view(spec, call, entry))
        return (yield from self._execute(spec, call, rearmed, replays_left=1))

    def _current_view(self, spec: ToolSpec, call: CallContext, entry: LedgerEntry) -> Plan:
        current = yield _LedgerOp(lambda ledger: ledger.get(entry.call_id))
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
            lambda ledger: ledger.transition(
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
        self,
        spec: ToolSpec,
        call: CallContext,
        entry: LedgerEntry,
        *,
        replays_left: int,
        outcome: _Outcome | None = None,
    ) -> Plan:
        """Run the body (``outcome``: the first attempt's, when a driver already ran it)."""
        deadline = (
            time.monotonic() + spec.retry.deadline_s if spec.retry.deadline_s is not None else None
        )
        while True:
            attempt = entry.attempts
            if outcome is None:
                outcome = yield _Body(
                    call if call.attempt == attempt else evolve(call, attempt=attempt)
                )
            if outcome.error is None:
                settled = yield from self._settle(
                    entry, Status.SUCCEEDED, attempt, **succeeded_changes(outcome.value)
                )
                if settled.status is Status.SUCCEEDED and settled.attempts == attempt:
                    return words.succeeded(spec.name, settled, replayed=False)
                return words.from_entry(spec.name, settled, lookup=spec.lookup_name)
            if isinstance(outcome.error, CancelledBeforeStart):
                # this attempt did nothing: release the claim, so that the next call runs (an
                # earlier attempt, retried or replayed, failed or was not found: its own record)
                unclaimed = yield from self._settle(
                    entry,
                    Status.FAILED,
                    attempt,
                    error_detail=NOTHING_ATTEMPTED
                    if attempt == 1
                    else f"cancelled before attempt {attempt} ran: that attempt did nothing; "
                    "the history holds what the earlier attempts did",
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
                    methodcaller(
                        "transition",
                        entry,
                        Status.STARTED,
                        detail=retry_note,
                        **self._start_changes(entry, spec),
                    )
                )
                if retried is None:
                    return (yield from self._current_view(spec, call, entry))
                entry, outcome = retried, None
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
                    lambda ledger: ledger.transition(snapshot, target, **changes)  # noqa: B023
                )
            except Exception as exc:
                logger.warning("recording %s of %s failed: %r", target.value, entry.call_id, exc)
                # a ledger that did not answer within its bound would make each retry wait as
                # long: the outbox takes the outcome at once
                write_failures = 4 if isinstance(exc, LedgerUnanswered) else write_failures + 1
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
                detail = _late_outcome_refused(current, attempt, target)
                try:
                    yield _LedgerOp(methodcaller("note", current, "late_outcome", detail))
                except Exception as exc:  # the log line still says it
                    logger.warning(
                        "could not record the late outcome of %s: %r", entry.call_id, exc
                    )
                return current
            if current.status is target:
                if "lease_owner" in changes and current.lease_owner is not None:
                    # a sweeper marked it uncertain first: the attempt has stopped all the same
                    yield _LedgerOp(
                        methodcaller(
                            "release_lease",
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
                fresh = yield _LedgerOp(lambda ledger: ledger.get(call_id))
            except LedgerUnanswered:
                return None  # each try would wait its whole bound again
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
                lambda ledger: ledger.transition(
                    entry,
                    Status.SUCCEEDED,
                    actor="reconciler",
                    detail=f"{lookup} found the effect",
                    result=result,
                    result_ref=result_ref,
                    finished_at=time.time(),
                    # the uncertainty is over: the row says what the call did, its history why
                    error_code=None,
                    error_detail=None,
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
                    lambda ledger: ledger.transition(
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
                lambda ledger: ledger.transition(
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

    def _refuse_late_outcome(self, entry: LedgerEntry, attempt: int, outcome: Status) -> None:
        """A late outcome that cannot be recorded as the call's: kept in its history, logged."""
        detail = _late_outcome_refused(entry, attempt, outcome)
        try:
            self.ledger.note(entry, "late_outcome", detail)
        except Exception as exc:  # the log line still says it
            logger.warning("could not record the late outcome of %s: %r", entry.call_id, exc)


def _late_outcome_refused(entry: LedgerEntry, attempt: int, outcome: Status) -> str:
    """Log that a late outcome of ``attempt`` is not the call's; the history note saying so."""
    detail = (
        f"late outcome {outcome.value} of attempt {attempt} not applied: the call is "
        f"{entry.status.value} at attempt {entry.attempts}"
    )
    if outcome is Status.SUCCEEDED:
        detail += "; it may have taken effect twice"
    logger.error("%s: %s", entry.call_id, detail)
    return detail


def succeeded_changes(value: Any) -> dict[str, Any]:
    """The changes recording a body's return value as the call's result."""
    result, result_ref = jsonable_result(value)
    return {
        "result": result,
        "result_ref": result_ref,
        "finished_at": time.time(),
        "error_code": None,
        "error_detail": None,
    }


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
    if not args and tuple(kwargs) == spec.parameter_names and not spec.drop_first:
        return dict(kwargs)  # every argument by keyword, in order: how frameworks call tools
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


def _framework_contexts(spec: ToolSpec, arguments: dict[str, Any]) -> list[Any]:
    """Take out of ``arguments`` the context objects a framework passed the tool: they name
    the run, and are no part of the request (no value to hash, nothing to store)."""
    if not spec.context_parameters:
        return []
    return [
        arguments.pop(name)
        for name in spec.context_parameters
        if name in arguments and is_framework_context(arguments[name])
    ]


def _entry_template(spec: ToolSpec) -> dict[str, Any]:
    """The fields every entry of ``spec``'s tool starts with (``assemble``'s every field):
    built once per tool, copied for each call."""
    template = spec.entry_template
    if template is None:
        template = {item.name: _default_of(item) for item in fields_of(LedgerEntry)}
        template.update(
            tool_name=spec.name,
            status=Status.PLANNED,
            risk=spec.risk._value_,
            idempotency=spec.idempotency._value_,
            replay=spec.replay._value_,
            version=1,
        )
        spec.entry_template = template
    return template


def _default_of(item: Any) -> Any:
    if item.default is not MISSING:
        return item.default
    if item.default_factory is not MISSING:
        return item.default_factory()
    return None  # set for each call


def _expire_lease(
    ledger: Ledger | AsyncLedger, entry: LedgerEntry, moment: float, *, actor: str = "runtime"
) -> Any:
    """Mark a started call uncertain if its stored lease ran out before ``moment``, or if its
    owner is a process of this machine known to be dead (then only if the stored lease is still
    the one read: a renewal would prove it alive). The moved entry or None; from an
    ``AsyncLedger``, the coroutine answering that."""
    detail = "lease expired: the worker stopped before recording the outcome"
    by = moment
    if (
        entry.lease_expires_at is not None
        and entry.lease_expires_at >= moment
        and liveness.owner_known_gone(entry.lease_owner)
    ):
        by = entry.lease_expires_at + 0.001
        detail = (
            f"the worker {entry.lease_owner} has ended (its process is gone from this machine) "
            "before recording the outcome: its lease is not waited for"
        )
    return ledger.transition(
        entry,
        Status.UNCERTAIN,
        lease_expired_by=by,
        actor=actor,
        detail=detail,
        error_code=ErrorCode.SIDE_EFFECT_UNCERTAIN.value,
        error_detail="TOOL_CRASH: lease expired",
    )
