"""The effects the decision logic asks its drivers to perform, and how callbacks are run.

The plan (a generator) yields these; a sync and an async driver perform them, sharing the
state kept between requests in ``_Drive``. A call makes several: they are slotted classes,
built without the ``object.__setattr__`` per field a frozen dataclass costs; nothing changes
them once yielded.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, replace
from typing import Any

from agentguard.runtime import observations as words
from agentguard.runtime.context import (
    CallContext,
)
from agentguard.runtime.kinds import (
    CancelledBeforeStart,
    SimulatedCrash,
    ToolSpec,
)
from agentguard.runtime.ledger.base import run_to_the_end

logger = logging.getLogger("agentguard.runtime")


@dataclass(slots=True)
class _LedgerOp:
    """``operation`` is handed the ledger (``Ledger``) or its native async driver
    (``AsyncLedger``, whose methods are the same, as coroutines), and calls one method of it."""

    operation: Callable[[Any], Any]


@dataclass(slots=True)
class _Claim(_LedgerOp):
    """The claim of a new call: until its body starts, an interruption releases it."""

    call_id: str


@dataclass(slots=True)
class _Body:
    call: CallContext


@dataclass(slots=True)
class _Sleep:
    seconds: float


@dataclass(slots=True)
class _Callback:
    function: Callable[[CallContext], Any]
    call: CallContext
    timeout_s: float | None = None  # past it, the callback's answer is not waited for


@dataclass(slots=True)
class _Outcome:
    value: Any = None
    error: BaseException | None = None


Plan = Generator[Any, Any, dict[str, Any]]

_FINISHED = object()


class Interruptible:
    """Where an interruption (Ctrl-C, a cancellation) that must wait its turn is kept: it is
    raised again once what it interrupted has been recorded."""

    __slots__ = ("interrupted",)

    def __init__(self) -> None:
        self.interrupted: BaseException | None = None


class _Drive(Interruptible):
    """What the sync and async drivers share: the plan's state between its requests.

    A driver performs each request its own way and hands back the reply, or the exception it
    raised to ``absorb``: a ledger error goes back into the plan; an interruption of the body
    (KeyboardInterrupt, SystemExit, cancellation) is recorded, then re-raised at the end.

    ``unstarted_claim`` names a call this plan claimed whose body has not started yet: an
    interruption before the body starts releases the claim (it failed, nothing was attempted)
    instead of leaving a ``started`` entry that blocks every retry until its lease runs out.
    """

    __slots__ = (
        "observation",
        "pending",
        "plan",
        "reply",
        "spec",
        "unstarted_claim",
    )

    def __init__(self, spec: ToolSpec, plan: Plan) -> None:
        self.spec = spec
        self.plan = plan
        self.reply: Any = None
        self.pending: BaseException | None = None
        self.interrupted = None
        self.observation: dict[str, Any] = {}
        self.unstarted_claim: str | None = None

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
        if isinstance(request, _Claim):
            self.unstarted_claim = request.call_id  # written from now on, maybe half-way
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
            if self.unstarted_claim == request.call.call_id:
                # interrupted before the body started: the plan releases the claim
                self.unstarted_claim = None
                self.reply = _Outcome(error=CancelledBeforeStart())
            else:
                self.reply = _Outcome(error=error)
            return True
        return False


# What the model is shown of a result at most; the ledger keeps the whole result. A tool that


def _limit_output(spec: ToolSpec, observation: dict[str, Any]) -> dict[str, Any]:
    if spec.max_output_bytes is None or not observation["ok"]:
        return observation
    result = observation["result"]
    if result is None or isinstance(result, (bool, int, float)):  # as ``too_large`` would
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


async def _ledger_op_through_cancellation(drive: Interruptible, operation: Awaitable[Any]) -> Any:
    """Await a ledger operation (in a thread, or on the loop); a cancellation waits for it.

    The operation runs as a task of its own: a claim it commits after the caller was cancelled
    would otherwise stay ``started`` for a body that never runs, and an outcome cancelled half
    way would be lost. The cancellation is kept in ``drive.interrupted`` and re-raised once the
    plan has recorded what happened.
    """
    future = asyncio.ensure_future(operation)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError as exc:
        drive.interrupted = exc
    return await run_to_the_end(future)


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
