"""A call cancelled while its claim is being written does not leave a phantom `started`."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import pytest

from agentguard.runtime import Runtime, Status, current_call, guarded
from tests.runtime.downstream import RecordingDownstream


def _slow_to_answer(
    runtime: Runtime, operation: str, when: Callable[[dict[str, Any]], bool] = lambda _: True
) -> None:
    """The ledger's ``operation`` is done, then its answer takes 0.2 s to come back (when
    ``when`` holds for its keyword arguments), as a disk's or a server's does; on the sync
    ledger and on its async driver, which async calls use where it has one (PostgreSQL)."""
    ledger = runtime.ledger
    ledger.blocks = True
    done = getattr(ledger, operation)

    def slow(*args: Any, **kwargs: Any) -> Any:
        answer = done(*args, **kwargs)
        if when(kwargs):
            time.sleep(0.2)
        return answer

    setattr(ledger, operation, slow)
    native = ledger.aio
    if native is None:
        return
    done_async = getattr(native, operation)

    async def slow_async(*args: Any, **kwargs: Any) -> Any:
        answer = await done_async(*args, **kwargs)
        if when(kwargs):
            # an operation that has sent its statement is not stopped by a cancellation
            # (AsyncLedger): it answers, and the caller sees the task was cancelled
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.2)
        return answer

    setattr(native, operation, slow_async)


def test_a_claim_cancelled_before_the_body_started_is_released(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    _slow_to_answer(runtime, "claim")  # committed; the answer is slow to come back

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    async def create_order(cart_id: str) -> dict[str, Any]:
        return downstream.create(current_call().idempotency_key, cart_id=cart_id)

    async def agent() -> dict[str, Any]:
        async with runtime.run(run_id="r1"):
            task = asyncio.ensure_future(create_order(cart_id="c1"))
            await asyncio.sleep(0.05)
            task.cancel()  # the framework gives up on the turn
            try:
                await task
            except asyncio.CancelledError:
                pass
            else:
                raise AssertionError("the cancellation was swallowed")
            (entry,) = runtime.ledger.entries()
            assert entry.status is Status.FAILED, entry
            assert not downstream.applied
            return await create_order(cart_id="c1")  # the retry runs, not "already running"

    observation = asyncio.run(agent())
    assert observation["ok"], observation
    assert len(downstream.applied) == 1


class _InterruptBeforeBody:
    """A fault hook standing in for Ctrl-C arriving after the claim, before the body runs."""

    def __init__(self, error: type[BaseException]) -> None:
        self.errors = [error()]

    def before_body(self, call: Any) -> None:
        if self.errors:
            raise self.errors.pop()

    def after_body(self, call: Any, value: Any) -> Any:
        return value


def _interrupt_claim(runtime: Runtime, error: type[BaseException]) -> None:
    claim = runtime.ledger.claim
    errors = [error()]

    def interrupted_claim(*args: Any, **kwargs: Any) -> Any:
        won = claim(*args, **kwargs)  # committed; the interruption lands before it is used
        if errors:
            raise errors.pop()
        return won

    runtime.ledger.claim = interrupted_claim  # type: ignore[method-assign]


def _sync_order_tool(runtime: Runtime, downstream: RecordingDownstream) -> Any:
    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    def create_order(cart_id: str) -> dict[str, Any]:
        return downstream.create(current_call().idempotency_key, cart_id=cart_id)

    return create_order


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("where", ["after the claim was written", "before the body started"])
def test_a_sync_call_interrupted_between_claim_and_body_releases_its_claim(
    runtime: Runtime, where: str, error: type[BaseException]
) -> None:
    downstream = RecordingDownstream()
    if where == "after the claim was written":
        _interrupt_claim(runtime, error)
    else:
        runtime.fault_hooks.append(_InterruptBeforeBody(error))
    create_order = _sync_order_tool(runtime, downstream)
    with runtime.run(run_id="r1"):
        with pytest.raises(error):
            create_order(cart_id="c1")
        (entry,) = runtime.ledger.entries()
        assert entry.status is Status.FAILED, entry
        assert "cancelled before the body ran" in (entry.error_detail or "")
        assert not downstream.applied
        observation = create_order(cart_id="c1")  # runs now, not "already running"
    assert observation["ok"], observation
    assert len(downstream.applied) == 1


def test_a_sync_interrupt_inside_the_body_still_leaves_the_call_uncertain(
    runtime: Runtime,
) -> None:
    downstream = RecordingDownstream()

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    def create_order(cart_id: str) -> dict[str, Any]:
        downstream.create(current_call().idempotency_key, cart_id=cart_id)
        raise KeyboardInterrupt  # after the request went out: it may have taken effect

    with runtime.run(run_id="r1"):
        with pytest.raises(KeyboardInterrupt):
            create_order(cart_id="c1")
        (entry,) = runtime.ledger.entries()
        assert entry.status is Status.UNCERTAIN, entry
        again = create_order(cart_id="c1")
    assert not again["ok"] and again["code"] == "SIDE_EFFECT_UNCERTAIN", again
    assert len(downstream.applied) == 1


def test_a_claim_lost_to_another_call_is_left_alone_when_interrupted(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    create_order = _sync_order_tool(runtime, downstream)
    with runtime.run(run_id="r1"):
        assert create_order(cart_id="c1")["ok"]
        _interrupt_claim(runtime, KeyboardInterrupt)  # this claim loses: the first holds the key
        with pytest.raises(KeyboardInterrupt):
            create_order(cart_id="c1")
    (entry,) = runtime.ledger.entries()
    assert entry.status is Status.SUCCEEDED, entry
    assert len(downstream.applied) == 1


def test_a_retry_cancelled_before_it_ran_does_not_say_nothing_was_attempted(
    runtime: Runtime,
) -> None:
    from agentguard.runtime import RetryPolicy

    attempts: list[int] = []
    # the retry's claim on attempt 2 is slow to come back
    _slow_to_answer(runtime, "transition", when=lambda changes: changes.get("attempts") == 2)

    @guarded(
        runtime,
        risk="write",
        idempotency="idempotent",
        retry=RetryPolicy(max_attempts=3, backoff_ms=0),
    )
    async def set_status(ticket: str) -> str:
        attempts.append(current_call().attempt)
        raise ConnectionRefusedError("the service is restarting")  # nothing was sent

    async def agent() -> None:
        async with runtime.run(run_id="r1"):
            task = asyncio.ensure_future(set_status(ticket="t1"))
            await asyncio.sleep(0.1)  # attempt 1 has failed; attempt 2 is being recorded
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    asyncio.run(agent())
    (entry,) = runtime.ledger.entries()
    assert attempts == [1], attempts  # attempt 2 never ran
    assert entry.status is Status.FAILED, entry
    assert "nothing was attempted" not in (entry.error_detail or ""), entry.error_detail
    assert "attempt 2" in (entry.error_detail or ""), entry.error_detail
