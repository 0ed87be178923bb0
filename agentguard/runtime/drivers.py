"""The sync and async drivers: they perform what the plan asks, and run the tool body."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from operator import methodcaller
from typing import Any

from agentguard.runtime import liveness
from agentguard.runtime import observations as words
from agentguard.runtime.context import (
    CallContext,
    _current_call,
)
from agentguard.runtime.effects import (
    _FINISHED,
    Interruptible,
    Plan,
    _Body,
    _call_callback_async,
    _call_callback_sync,
    _Callback,
    _Drive,
    _ledger_op_through_cancellation,
    _LedgerOp,
    _limit_output,
    _Outcome,
    _Sleep,
)
from agentguard.runtime.errors import classify_exception
from agentguard.runtime.hashing import (
    jsonable_result,
)
from agentguard.runtime.kinds import (
    NOTHING_ATTEMPTED,
    AttemptStillRunning,
    CancelledBeforeStart,
    SimulatedCrash,
    ToolSpec,
)
from agentguard.runtime.ledger.base import (
    AsyncLedger,
    Ledger,
    LedgerEntry,
    Status,
    run_to_the_end,
)
from agentguard.runtime.planning import _CLAIM_STARTED, Planner, succeeded_changes

logger = logging.getLogger("agentguard.runtime")


class Drivers(Planner):
    """Runs plans: ledger operations, the body (with its deadline), sleeps and callbacks."""

    abandoned: AbandonedAttempts  # set by Runtime.__init__

    # ---- drivers --------------------------------------------------------------------------

    def _call_sync(
        self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        prepared = self._prepare(spec, args, kwargs)
        if isinstance(prepared, dict):
            return prepared
        call, entry, path = prepared
        # ``_runs_directly``, written out
        if path is not _CLAIM_STARTED or spec.timeout_s is not None or self.fault_hooks:
            return self._drive_sync(spec, self._claimed(spec, call, entry, path), args, kwargs)
        return self._claim_and_run_sync(spec, call, entry, args, kwargs)

    def _runs_directly(self, spec: ToolSpec, path: tuple[Status, ...]) -> bool:
        """Whether a call's first steps are performed without the plan (``_claim_and_run_*``):
        a new claim straight to started, no deadline of the runtime's, no fault hook."""
        return path is _CLAIM_STARTED and spec.timeout_s is None and not self.fault_hooks

    def _claim_and_run_sync(
        self,
        spec: ToolSpec,
        call: CallContext,
        entry: LedgerEntry,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> dict[str, Any]:
        """The plan's first steps performed directly: claim, run the body, record its success.

        Most calls are a new key whose body returns; for them the plan's generator and its
        requests are a third of the runtime's own cost. Every other turn (a key already held,
        an error, a lost compare-and-set) is handed to the plan at that point, so the decisions
        stay the plan's alone; this only performs the steps no decision precedes.
        """
        try:
            won, stored = self.ledger.claim(entry, _CLAIM_STARTED)
        except Exception as exc:
            return self._claim_failed(spec, exc, entry)
        except BaseException as exc:
            self._release_unstarted_claim(call.call_id, exc)
            raise
        if not won:
            return self._drive_sync(spec, self._after_claim(spec, call, won, stored), args, kwargs)
        interrupted: BaseException | None = None
        started = False
        error: BaseException | None = None
        try:
            # ``_begin_attempt`` and ``_end_attempt``, written out
            token = _current_call.set(call)
            try:
                liveness.begin(call.call_id, call.attempt)
                try:
                    beat = self.heartbeat.watch(
                        call.call_id,
                        call.attempt,
                        self.lease_s if spec.lease_s is None else spec.lease_s,  # ``_lease``
                    )
                    try:
                        started = True  # from here on, the body may act
                        value = spec.function(*args, **kwargs)
                    finally:
                        self.heartbeat.unwatch(beat)
                finally:
                    liveness.end(call.call_id, call.attempt)
            finally:
                _current_call.reset(token)
        except SimulatedCrash:
            raise
        except Exception as exc:
            error = exc
        except BaseException as exc:
            if not started:  # interrupted before the body was called: nothing was attempted
                self._release_unstarted_claim(call.call_id, exc)
                raise
            # the plan records what the body may have done, then the interruption goes on
            interrupted = error = exc
        if error is None:
            try:
                settled = self.ledger.transition(
                    stored, Status.SUCCEEDED, **succeeded_changes(value)
                )
            except Exception:
                settled = None  # the plan's settling retries, reads back, or keeps it in the outbox
            if settled is not None:
                return _limit_output(spec, words.succeeded(spec.name, settled, replayed=False))
            outcome = _Outcome(value=value)
        else:
            outcome = _Outcome(error=error)
        plan = self._execute(spec, call, stored, replays_left=1, outcome=outcome)
        return self._drive_sync(spec, plan, args, kwargs, interrupted=interrupted)

    def _drive_sync(
        self,
        spec: ToolSpec,
        plan: Plan,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        interrupted: BaseException | None = None,
    ) -> dict[str, Any]:
        drive = _Drive(spec, plan)
        drive.interrupted = interrupted
        try:
            while (request := drive.next_request()) is not _FINISHED:
                try:
                    if isinstance(request, _LedgerOp):
                        drive.reply = request.operation(self.ledger)
                    elif isinstance(request, _Body):
                        drive.reply = self._body_sync(spec, request.call, args, kwargs, drive)
                    elif isinstance(request, _Sleep):
                        self.sleep(request.seconds)
                    elif isinstance(request, _Callback):
                        drive.reply = _call_callback_sync(request)
                except BaseException as exc:
                    if not drive.absorb(request, exc):
                        raise
        except BaseException as exc:
            self._release_unstarted_claim(drive.unstarted_claim, exc)
            raise
        return drive.observation

    def _release_unstarted_claim(self, call_id: str | None, error: BaseException) -> None:
        """After an interruption between a claim and its body: the claim fails, nothing ran.

        Otherwise the ``started`` entry of a body that never ran would answer every retry with
        "already running" until its lease ran out, then turn uncertain. A simulated crash
        stands for a dead process, which releases nothing.
        """
        if call_id is None or isinstance(error, SimulatedCrash):
            return
        try:
            stored = self.ledger.get(call_id)  # None: the claim was lost, or never written
            if stored is None or stored.status is not Status.STARTED or stored.version != 1:
                return
            self.ledger.transition(
                stored,
                Status.FAILED,
                detail=f"interrupted ({type(error).__name__}) before the body ran",
                error_detail=NOTHING_ATTEMPTED,
                finished_at=time.time(),
            )
        except Exception as exc:  # its lease still runs out, and the call turns uncertain
            logger.warning("could not release the claim of %s: %r", call_id, exc)

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
        self,
        spec: ToolSpec,
        call: CallContext,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        drive: _Drive,
    ) -> _Outcome:
        def invoke() -> Any:
            for hook in self.fault_hooks:
                hook.before_body(call)
            drive.unstarted_claim = None  # from here on, the body may act
            value = spec.function(*args, **kwargs)
            for hook in self.fault_hooks:
                value = hook.after_body(call, value)
            return value

        token, beat = self._begin_attempt(spec, call)
        outcome: _Outcome | None = None
        try:
            if spec.timeout_s is None:
                outcome = _Outcome(value=invoke())
            else:
                # once its thread starts, the body may act whatever happens to this one
                drive.unstarted_claim = None
                outcome = self._body_with_deadline(spec, call, invoke, drive)
            return outcome
        except SimulatedCrash:
            raise
        except Exception as exc:
            outcome = _Outcome(error=exc)
            return outcome
        finally:
            running = outcome is not None and isinstance(outcome.error, AttemptStillRunning)
            self._end_attempt(token, beat, call, running=running)

    def _body_with_deadline(
        self, spec: ToolSpec, call: CallContext, invoke: Callable[[], Any], drive: _Drive
    ) -> _Outcome:
        # A sync function cannot be interrupted: it runs on in its thread. Past the deadline, or
        # when the caller is interrupted (Ctrl-C) while waiting, the attempt is still running
        # (it may still send); when it finishes, its outcome is recorded as a late completion
        # of this attempt and the attempt stops counting as live.
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
                    self.abandoned.done(call.call_id, call.attempt)

        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(runner,), daemon=True).start()
        try:
            finished.wait(spec.timeout_s)
        except BaseException as exc:  # the plan records the attempt as running, then it goes on
            drive.interrupted = exc
        with lock:
            if "outcome" in state:
                outcome = state["outcome"]
                if isinstance(outcome.error, SimulatedCrash):
                    raise outcome.error
                return outcome
            state["abandoned"] = True
            # under the lock: the runner, which reads ``abandoned`` under it, then says done
            self.abandoned.add(call.call_id, call.attempt)
        why = (
            f"was interrupted ({type(drive.interrupted).__name__}) while it ran"
            if drive.interrupted is not None
            else f"did not finish within {spec.timeout_s} s"
        )
        return _Outcome(error=AttemptStillRunning(f"{spec.name} {why} and is still running"))

    def _late_completion(self, spec: ToolSpec, call: CallContext, outcome: _Outcome) -> None:
        """Record the outcome of an attempt that finished after the runtime stopped waiting.

        Not on a ledger closed meanwhile: nothing reaches its store after ``close()`` (it may
        have been moved, or its schema dropped). The outcome is then logged, not recorded, and
        the call stays uncertain with this attempt's lease: recovery's lookup or a person
        settles it, as for a worker that died (``Runtime.close`` waits for such attempts
        first)."""
        ledger = self.ledger
        if ledger.closed:
            _late_outcome_lost(spec, call, outcome)
            return
        try:
            self._record_late_completion(ledger, call, outcome)
        except Exception as exc:
            if ledger.closed:  # closed while this was being recorded: one statement or none
                _late_outcome_lost(spec, call, outcome)
                return
            logger.error(
                "could not record the late outcome of %s (attempt %d): %r; the call stays "
                "uncertain until its lookup (recover()) or a person settles it",
                call.call_id,
                call.attempt,
                exc,
            )

    def _record_late_completion(self, ledger: Ledger, call: CallContext, outcome: _Outcome) -> None:
        for _ in range(8):
            entry = ledger.get(call.call_id)
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
                    changes = {
                        "result": result,
                        "result_ref": result_ref,
                        "error_code": None,
                        "error_detail": None,
                    }
                else:
                    target, what = Status.FAILED, "did not take effect"
                    changes = {"error_code": failure.code.value, "error_detail": failure.message}
                moved = ledger.transition(
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
                ledger.release_lease(
                    entry.call_id,
                    call.attempt,
                    entry.lease_owner,
                    f"the attempt finished after its deadline with {failure.code.value}: "
                    "its outcome is still unknown, and nothing of it can send any more",
                )
            return

    async def _call_async(
        self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        prepared = self._prepare(spec, args, kwargs)
        if isinstance(prepared, dict):
            return prepared
        call, entry, path = prepared
        native = self.ledger.aio
        if not self._runs_directly(spec, path) or (native is None and self.ledger.blocks):
            return await self._drive_async(
                spec, self._claimed(spec, call, entry, path), args, kwargs
            )
        return await self._claim_and_run_async(spec, call, entry, args, kwargs, native)

    async def _claim_and_run_async(
        self,
        spec: ToolSpec,
        call: CallContext,
        entry: LedgerEntry,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        native: AsyncLedger | None,
    ) -> dict[str, Any]:
        """``_claim_and_run_sync`` on the event loop, for a ledger with a native async driver
        or one that never waits (``native`` None: written in place, as the plan would): every
        turn that needs a decision, and every cancellation, is handed to the plan."""
        drive = Interruptible()
        # a ledger operation: on the loop with the native driver, else performed in place (a
        # ledger that never waits); written out here, a coroutine fewer for each
        claim = methodcaller("claim", entry, _CLAIM_STARTED)
        try:
            won, stored = (
                claim(self.ledger) if native is None else await _on_the_loop(drive, claim, native)
            )
        except Exception as exc:
            return self._claim_failed(spec, exc, entry)
        except BaseException as exc:
            self._release_unstarted_claim(call.call_id, exc)
            raise
        if not won or drive.interrupted is not None:
            # cancelled while its claim was written: the body never starts, the plan releases it
            plan = (
                self._after_claim(spec, call, won, stored)
                if not won
                else self._execute(
                    spec,
                    call,
                    stored,
                    replays_left=1,
                    outcome=_Outcome(error=CancelledBeforeStart()),
                )
            )
            return await self._drive_async(spec, plan, args, kwargs, interrupted=drive.interrupted)
        token, beat = self._begin_attempt(spec, call)
        try:
            outcome = _Outcome(value=await spec.function(*args, **kwargs))
        except SimulatedCrash:
            raise
        except Exception as exc:
            outcome = _Outcome(error=exc)
        except BaseException as exc:  # cancelled: the plan records what the body may have done
            drive.interrupted, outcome = exc, _Outcome(error=exc)
        finally:
            self._end_attempt(token, beat, call, running=False)
        if outcome.error is None:
            try:
                success = methodcaller(
                    "transition", stored, Status.SUCCEEDED, **succeeded_changes(outcome.value)
                )
                settled = (
                    success(self.ledger)
                    if native is None
                    else await _on_the_loop(drive, success, native)
                )
            except Exception:
                settled = None  # the plan's settling retries, reads back, or keeps it in the outbox
            if settled is not None:
                if drive.interrupted is not None:
                    raise drive.interrupted
                return _limit_output(spec, words.succeeded(spec.name, settled, replayed=False))
        plan = self._execute(spec, call, stored, replays_left=1, outcome=outcome)
        return await self._drive_async(spec, plan, args, kwargs, interrupted=drive.interrupted)

    async def _drive_async(
        self,
        spec: ToolSpec,
        plan: Plan,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        interrupted: BaseException | None = None,
    ) -> dict[str, Any]:
        drive = _Drive(spec, plan)
        drive.interrupted = interrupted
        try:
            while (request := drive.next_request()) is not _FINISHED:
                try:
                    if isinstance(request, _LedgerOp):
                        ledger = self.ledger
                        if ledger.aio is not None:
                            drive.reply = await _on_the_loop(drive, request.operation, ledger.aio)
                        elif drive.interrupted is not None or not ledger.blocks:
                            # after a cancellation, record synchronously: awaiting could be
                            # cancelled again; a ledger that never waits needs no thread
                            drive.reply = request.operation(ledger)
                        else:
                            drive.reply = await _ledger_op_through_cancellation(
                                drive, asyncio.to_thread(request.operation, ledger)
                            )
                    elif isinstance(request, _Body):
                        if drive.interrupted is not None:
                            # cancelled while its claim was being written: the body never
                            # starts, and the plan releases the claim
                            drive.unstarted_claim = None
                            drive.reply = _Outcome(error=CancelledBeforeStart())
                        else:
                            drive.reply = await self._body_async(
                                spec, request.call, args, kwargs, drive
                            )
                    elif isinstance(request, _Sleep):
                        await self.async_sleep(request.seconds)
                    elif isinstance(request, _Callback):
                        drive.reply = await _call_callback_async(request)
                except BaseException as exc:
                    if not drive.absorb(request, exc):
                        raise
        except BaseException as exc:
            self._release_unstarted_claim(drive.unstarted_claim, exc)
            raise
        return drive.observation

    async def _body_async(
        self,
        spec: ToolSpec,
        call: CallContext,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        drive: _Drive,
    ) -> _Outcome:
        token, beat = self._begin_attempt(spec, call)
        outcome = _Outcome(error=RuntimeError("the body did not finish"))
        try:
            for hook in self.fault_hooks:
                hook.before_body(call)
            drive.unstarted_claim = None  # from here on, the body may act
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
                    outcome = await self._cancel_at_deadline(spec, call, task)
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

    async def _cancel_at_deadline(
        self, spec: ToolSpec, call: CallContext, task: asyncio.Future[Any]
    ) -> _Outcome:
        """Cancel an async body past its deadline; what it may still do decides the outcome.

        A body cancelled at an await is over: nothing of it can send any more, so the call is
        settled by the lookup like any timeout. Only work the body handed to a thread
        (``asyncio.to_thread``, ``run_in_executor``) goes on after the cancellation, or a body
        that ignores it: that attempt counts as running until the work ends.
        """
        thread_work = _thread_work_awaited_by(task)
        task.cancel()
        await asyncio.wait({task}, timeout=_CANCEL_GRACE_S)
        if task.done() and not task.cancelled():
            # it finished (or failed) while being cancelled: that is its outcome
            error = task.exception()
            return _Outcome(error=error) if error is not None else _Outcome(value=task.result())
        if task.done() and (thread_work is None or thread_work.done()):
            return _Outcome(
                error=asyncio.TimeoutError(
                    f"{spec.name} did not finish within {spec.timeout_s} s and was cancelled"
                )
            )
        self._release_when_done(call, thread_work if task.done() else task)
        return _Outcome(
            error=AttemptStillRunning(
                f"{spec.name} did not finish within {spec.timeout_s} s and was cancelled; "
                + (
                    "work it handed to a thread is still running"
                    if task.done()
                    else "it has not stopped yet"
                )
            )
        )

    def _release_when_done(self, call: CallContext, work: Any) -> None:
        """Once ``work`` (a thread's future, or the body's task) ends, the attempt is over.

        A thread's future calls back in its thread, which writes the ledger itself; the body's
        task calls back on the event loop, where a ledger with a native async driver writes
        the release in a task of its own instead of holding up the loop (a ledger without one
        writes it in place, as a call's own operations after a cancellation are)."""
        owner = self.worker_id
        detail = "the cancelled attempt's remaining work ended: nothing of it can send any more"

        def failed(exc: BaseException) -> None:
            logger.warning("could not release the lease of %s: %r", call.call_id, exc)

        def release(_: Any) -> None:
            liveness.end(call.call_id, call.attempt)
            native = self.ledger.aio
            if native is not None and isinstance(work, asyncio.Future):
                try:
                    _in_background(
                        self._release_natively(native, call, owner, detail, failed),
                        work.get_loop(),
                    )
                    return
                except RuntimeError:  # the loop is closed: written from here after all
                    pass
            try:
                self.ledger.release_lease(call.call_id, call.attempt, owner, detail)
            except Exception as exc:
                failed(exc)

        work.add_done_callback(release)

    async def _release_natively(
        self,
        native: AsyncLedger,
        call: CallContext,
        owner: str,
        detail: str,
        failed: Callable[[BaseException], None],
    ) -> None:
        try:
            await run_to_the_end(native.release_lease(call.call_id, call.attempt, owner, detail))
        except Exception as exc:
            failed(exc)


def _late_outcome_lost(spec: ToolSpec, call: CallContext, outcome: _Outcome) -> None:
    what = (
        "succeeded"
        if outcome.error is None
        else f"raised {type(outcome.error).__name__}: {outcome.error}"
    )
    logger.error(
        "%s attempt %d of %s finished after its ledger was closed and %s: not recorded (a closed "
        "ledger takes nothing); the call stays uncertain until its lookup (recover()) or a "
        "person (agentguard ledger resolve) settles it",
        spec.name,
        call.attempt,
        call.call_id,
        what,
    )


class AbandonedAttempts:
    """Attempts of sync bodies the runtime stopped waiting for (past ``timeout_s``), whose
    threads still run: ``Runtime.close`` waits for them to end and record their outcome."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running: set[tuple[str, int]] = set()

    def add(self, call_id: str, attempt: int) -> None:
        with self._changed:
            self._running.add((call_id, attempt))

    def done(self, call_id: str, attempt: int) -> None:
        with self._changed:
            if (call_id, attempt) in self._running:
                self._running.discard((call_id, attempt))
                self._changed.notify_all()

    def wait(self, timeout_s: float) -> list[tuple[str, int]]:
        """Wait at most ``timeout_s`` for every attempt to end; those still running."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._changed:
            while self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return sorted(self._running)


async def _on_the_loop(
    drive: Interruptible, operation: Callable[[AsyncLedger], Any], ledger: AsyncLedger
) -> Any:
    """Perform a ledger operation with the ledger's native async driver, on the event loop.

    Awaited in the calling task: a task of its own for every operation (what a thread's needs,
    ``_ledger_op_through_cancellation``) would cost more than the statement's client work. A
    cancellation does not stop an operation that has sent a statement (``AsyncLedger``): the
    plan records what happened, then the cancellation goes on. One that came before anything
    was sent is performed again in a task of its own, which a cancellation cannot stop.
    """
    task = asyncio.current_task()
    if drive.interrupted is None and task is not None and _cancel_requests is not None:
        requested = _cancel_requests(task)
        try:
            reply = await operation(ledger)
        except asyncio.CancelledError as exc:
            drive.interrupted = exc
        else:
            if _cancel_requests(task) > requested:
                drive.interrupted = asyncio.CancelledError()
            return reply
    return await _ledger_op_through_cancellation(drive, operation(ledger))


# Tasks the runtime started on a loop for work of its own (a lease's release): a loop keeps
# only weak references to its tasks.
_BACKGROUND: set[asyncio.Task[Any]] = set()


def _in_background(work: Coroutine[Any, Any, Any], loop: asyncio.AbstractEventLoop) -> None:
    """Run ``work`` on ``loop`` (whose thread this is) without waiting for it; RuntimeError if
    the loop is closed."""
    try:
        task = loop.create_task(work)
    except RuntimeError:
        work.close()
        raise
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


# Task.cancelling (Python 3.11): without it, every operation runs in a task of its own.
_cancel_requests: Callable[[asyncio.Task[Any]], int] | None = getattr(
    asyncio.Task, "cancelling", None
)


# How long a cancelled body is given to stop before it counts as still running.
_CANCEL_GRACE_S = 1.0


def _thread_work_awaited_by(task: asyncio.Future[Any]) -> concurrent.futures.Future[Any] | None:
    """The thread's future ``task`` is waiting for (``asyncio.to_thread``,
    ``loop.run_in_executor``), if that is what it waits on: cancelling the task does not stop
    that thread once it runs. Read from the asyncio future chained to it."""
    waiter = getattr(task, "_fut_waiter", None)
    for callback, _ in getattr(waiter, "_callbacks", None) or ():
        if getattr(callback, "__name__", "") != "_call_check_cancel":
            continue
        for cell in getattr(callback, "__closure__", None) or ():
            contents = cell.cell_contents
            if isinstance(contents, concurrent.futures.Future):
                return contents
    return None
