"""Recovery and people's decisions: expired leases, reconciliation of uncertain calls,
resolutions and approvals.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentguard.runtime import liveness
from agentguard.runtime.context import (
    CallContext,
)
from agentguard.runtime.drivers import Drivers
from agentguard.runtime.effects import (
    Plan,
    _loop_running,
    _run_awaitable,
)
from agentguard.runtime.errors import ErrorCode
from agentguard.runtime.hashing import (
    input_hash,
)
from agentguard.runtime.kinds import (
    RecoveryReport,
    ToolSpec,
)
from agentguard.runtime.ledger.base import Ledger, LedgerEntry, Status
from agentguard.runtime.planning import _expire_lease


class Recovery(Drivers):
    """``recover()``, ``resolve()`` and ``approve()``."""

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
        for entry in self.ledger.entries(status=Status.STARTED):
            if _abandoned(entry, moment):
                moved = _expire_lease(self.ledger, entry, moment, actor="sweeper")
                if moved is not None:
                    expired += 1
                    touched.append(entry.call_id)
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
        return _report(expired, touched, uncertain, outcomes)

    async def arecover(
        self, *, now: float | None = None, reconcile: bool = True, concurrency: int = 8
    ) -> RecoveryReport:
        """``recover()`` for an agent on an event loop, without blocking it.

        The ledger is read and written through its native async driver where it has one
        (PostgreSQL), else each operation in a thread; lookups run side by side on the loop,
        at most ``concurrency`` at a time. An async tool whose lookup answers NotFound can be
        re-run here as its next call would (``recover()`` called inside a running loop cannot).
        """
        moment = time.time() if now is None else now
        expired = 0
        touched: list[str] = []
        for entry in await self._entries_async(Status.STARTED):
            if _abandoned(entry, moment):
                moved = await self._ledger_op_async(
                    functools.partial(_expire_lease, entry=entry, moment=moment, actor="sweeper")
                )
                if moved is not None:
                    expired += 1
                    touched.append(entry.call_id)
        uncertain = await self._entries_async(Status.UNCERTAIN)
        limit = asyncio.Semaphore(max(1, concurrency))

        async def settle(entry: LedgerEntry) -> LedgerEntry | None:
            if not reconcile:
                return entry
            async with limit:
                return await self._recover_one_async(entry, moment)

        outcomes = list(await asyncio.gather(*(settle(entry) for entry in uncertain)))
        return _report(expired, touched, uncertain, outcomes)

    async def _ledger_op_async(self, operation: Callable[[Any], Any]) -> Any:
        """One ledger operation from the loop: natively, in place (a ledger that never waits),
        or in a thread."""
        ledger = self.ledger
        if ledger.aio is not None:
            return await operation(ledger.aio)
        if not ledger.blocks:
            return operation(ledger)
        return await asyncio.to_thread(operation, ledger)

    async def _entries_async(self, status: Status) -> list[LedgerEntry]:
        native = self.ledger.aio
        if native is not None:
            try:
                return await native.entries(status=status)
            except NotImplementedError:  # a driver of one's own without it
                pass
        return list(await self._ledger_op_async(lambda ledger: ledger.entries(status=status)))

    def _recover_one(self, entry: LedgerEntry, moment: float) -> LedgerEntry | None:
        """Reconcile one uncertain entry as a call would; its entry afterwards."""
        spec = self.tools.get(entry.tool_name)
        if spec is None or spec.reconcile is None:
            return entry
        # An async body can only be re-run here when no event loop runs in this thread.
        async_blocked = spec.is_async and _loop_running()
        plan, kwargs = self._recovery_plan(spec, entry, moment, may_rerun=not async_blocked)
        if spec.is_async and not async_blocked:
            _run_awaitable(self._drive_async(spec, plan, (), kwargs))
        else:
            self._drive_sync(spec, plan, (), kwargs)  # never asks for the body
        return self.ledger.get(entry.call_id)

    async def _recover_one_async(self, entry: LedgerEntry, moment: float) -> LedgerEntry | None:
        """``_recover_one`` on the loop: an async tool's plan is driven here, a sync tool's
        (whose body may be re-run) in a thread."""
        spec = self.tools.get(entry.tool_name)
        if spec is None or spec.reconcile is None:
            return entry
        plan, kwargs = self._recovery_plan(spec, entry, moment, may_rerun=True)
        if spec.is_async:
            await self._drive_async(spec, plan, (), kwargs)
        else:
            await asyncio.to_thread(self._drive_sync, spec, plan, (), kwargs)
        return await self._ledger_op_async(lambda ledger: ledger.get(entry.call_id))

    def _recovery_plan(
        self, spec: ToolSpec, entry: LedgerEntry, moment: float, *, may_rerun: bool
    ) -> tuple[Plan, dict[str, Any]]:
        """The reconciliation of ``entry`` as a call would make it, and the body's arguments."""
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
        replays_left = 1 if may_rerun and _can_rerun_from_ledger(spec, entry) else 0
        plan = self._reconcile(spec, call, entry, replays_left=replays_left, now=moment)
        return plan, dict(entry.args)

    def resolve(
        self, call_id: str, outcome: str, note: str, *, actor: str = "human"
    ) -> LedgerEntry:
        return resolve_call(self.ledger, call_id, outcome, note, actor=actor)

    def approve(self, call_id: str, *, by: str, note: str | None = None) -> LedgerEntry:
        """Approve a call waiting for approval; the next call with its key runs it."""
        return approve_call(self.ledger, call_id, by=by, note=note)


def _abandoned(entry: LedgerEntry, moment: float) -> bool:
    """A started call whose lease ran out, or whose worker, a process of this machine, is
    known dead (its lease is not waited for)."""
    return entry.lease_expires_at is not None and (
        entry.lease_expires_at < moment or liveness.owner_known_gone(entry.lease_owner)
    )


def _report(
    expired: int,
    touched: list[str],
    uncertain: list[LedgerEntry],
    outcomes: list[LedgerEntry | None],
) -> RecoveryReport:
    counts = {Status.SUCCEEDED: 0, Status.FAILED: 0, Status.UNCERTAIN: 0}
    replayed = 0
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
        list(dict.fromkeys(touched)),  # a call both expired and settled is named once
        replayed,
    )


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
        else:  # the row says what the call did; its history keeps why it was uncertain
            changes["error_code"] = changes["error_detail"] = None
        moved = ledger.transition(entry, target, actor=actor, detail=note, **changes)
        if moved is not None:
            return moved
    raise RuntimeError(f"{call_id} kept changing while it was being resolved")


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
