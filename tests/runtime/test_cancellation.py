"""A call cancelled while its claim is being written does not leave a phantom `started`."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agentguard.runtime import Runtime, Status, current_call, guarded
from tests.runtime.downstream import RecordingDownstream


def test_a_claim_cancelled_before_the_body_started_is_released(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    claim = runtime.ledger.claim

    def slow_claim(*args: Any, **kwargs: Any) -> Any:
        won = claim(*args, **kwargs)  # committed; the answer is slow to come back
        time.sleep(0.2)
        return won

    runtime.ledger.claim = slow_claim  # type: ignore[method-assign]

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
