"""The runtime's own timeout_s never lets a second request out while the first can still send."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from agentguard.runtime import Runtime, Status, current_call, guarded
from tests.runtime.downstream import RecordingDownstream, wait_until


def slow_order_tool(
    runtime: Runtime,
    downstream: RecordingDownstream,
    release: threading.Event,
    connecting_s: float = 5.0,
    **options: Any,
) -> Any:
    @guarded(
        runtime,
        risk="write",
        idempotency="conditional",
        key=lambda call: f"order:{call.user_id}:{call.args['cart_id']}",
        reconcile=downstream.lookup,
        **{"timeout_s": 0.1, **options},
    )
    def create_order(cart_id: str) -> dict[str, Any]:
        """Create an order; the service is slow to accept the request."""
        key = current_call().idempotency_key
        release.wait(connecting_s)  # still connecting when the runtime stops waiting
        return downstream.create(key, cart_id=cart_id)

    return create_order


@pytest.mark.parametrize("replay", ["auto", "never"])
def test_an_abandoned_sync_body_that_sends_later_is_applied_once(
    runtime: Runtime, replay: str
) -> None:
    downstream = RecordingDownstream()
    release = threading.Event()
    create_order = slow_order_tool(runtime, downstream, release, replay=replay)
    with runtime.run(run_id="r1", user_id="u1"):
        first = create_order(cart_id="c1")
        # the model, told the call timed out, calls again at once
        second = create_order(cart_id="c1")
    assert first["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert first["metadata"]["still_running"] is True
    assert first["metadata"]["retryable"] is False
    assert second["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert not downstream.applied
    entry = runtime.ledger.get(first["metadata"]["call_id"])
    assert entry is not None and entry.status is Status.UNCERTAIN and entry.attempts == 1

    release.set()  # the abandoned attempt reaches the service now
    call_id = first["metadata"]["call_id"]
    assert wait_until(lambda: _status(runtime, call_id) is Status.SUCCEEDED)
    with runtime.run(run_id="r1", user_id="u1"):
        third = create_order(cart_id="c1")
    assert third["ok"] and third["metadata"]["replayed"]
    assert len(downstream.applied) == 1


def test_an_abandoned_attempt_that_failed_without_effect_lets_the_lookup_settle(
    runtime: Runtime,
) -> None:
    downstream = RecordingDownstream()
    release = threading.Event()

    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"order:{call.args['cart_id']}",
        reconcile=downstream.lookup,
        replay="auto",
        timeout_s=0.1,
    )
    def create_order(cart_id: str) -> dict[str, Any]:
        """Create an order; the first attempt never connects."""
        key = current_call().idempotency_key
        if current_call().attempt == 1:
            release.wait(5)
            raise TimeoutError("connect timed out")  # may have sent: the outcome stays unknown
        return downstream.create(key, cart_id=cart_id)

    with runtime.run(run_id="r1"):
        first = create_order(cart_id="c2")
    assert first["metadata"]["still_running"] is True
    release.set()
    call_id = first["metadata"]["call_id"]
    assert wait_until(lambda: _lease_owner(runtime, call_id) is None)
    with runtime.run(run_id="r1"):
        second = create_order(cart_id="c2")
    # the first attempt is over and the lookup found nothing: replay="auto" runs it once more
    assert second["ok"], second
    assert len(downstream.applied) == 1


def test_a_cancelled_async_body_whose_thread_sends_later_is_applied_once(
    runtime: Runtime,
) -> None:
    downstream = RecordingDownstream()
    release = threading.Event()

    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"order:{call.args['cart_id']}",
        reconcile=downstream.lookup,
        replay="auto",
        timeout_s=0.1,
        lease_s=30,
    )
    async def create_order(cart_id: str) -> dict[str, Any]:
        """Create an order through a blocking client run in a thread."""
        key = current_call().idempotency_key

        def send() -> dict[str, Any]:
            release.wait(5)
            return downstream.create(key, cart_id=cart_id)

        return await asyncio.to_thread(send)

    async def agent() -> None:
        async with runtime.run(run_id="r1"):
            first = await create_order(cart_id="c3")
            second = await create_order(cart_id="c3")
            assert first["code"] == second["code"] == "SIDE_EFFECT_UNCERTAIN"
            assert first["metadata"]["still_running"] is True
            assert not downstream.applied
            release.set()
            for _ in range(500):
                if downstream.applied:
                    break
                await asyncio.sleep(0.01)
            third = await create_order(cart_id="c3")
        assert third["ok"], third  # the lookup finds the order the cancelled attempt made

    asyncio.run(agent())
    assert len(downstream.applied) == 1


def _status(runtime: Runtime, call_id: str) -> Status | None:
    entry = runtime.ledger.get(call_id)
    return entry.status if entry else None


def _lease_owner(runtime: Runtime, call_id: str) -> str | None:
    entry = runtime.ledger.get(call_id)
    return entry.lease_owner if entry else "missing"


def test_a_sync_body_still_running_when_its_caller_is_interrupted_is_applied_once(
    runtime: Runtime,
) -> None:
    import signal

    downstream = RecordingDownstream()
    release = threading.Event()
    # the body and the runtime's wait both outlast a Ctrl-C sent late on a loaded machine
    create_order = slow_order_tool(
        runtime, downstream, release, connecting_s=60.0, replay="auto", timeout_s=60.0
    )
    main = threading.main_thread().ident
    assert main is not None and threading.get_ident() == main
    # Ctrl-C while the runtime waits for the body's thread: the body goes on in that thread
    threading.Timer(0.2, signal.pthread_kill, args=(main, signal.SIGINT)).start()
    with runtime.run(run_id="r1", user_id="u1"):
        with pytest.raises(KeyboardInterrupt):
            create_order(cart_id="c1")
        # the interrupted attempt may still send: no lookup can settle it, nothing runs again
        again = create_order(cart_id="c1")
        assert not again["ok"] and again["code"] == "SIDE_EFFECT_UNCERTAIN", again
        release.set()
        (entry,) = runtime.ledger.entries()
        assert wait_until(
            lambda: runtime.ledger.get(entry.call_id).status is Status.SUCCEEDED  # type: ignore[union-attr]
        )
    assert len(downstream.applied) == 1, downstream.applied


def _cancelled_async_tool(runtime: Runtime, downstream: RecordingDownstream, **options: Any) -> Any:
    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"order:{call.args['cart_id']}",
        timeout_s=0.2,
        **options,
    )
    async def create_order(cart_id: str) -> dict[str, Any]:
        """Create an order; the first attempt is still connecting when its deadline comes."""
        if current_call().attempt == 1:
            await asyncio.sleep(30)  # cancelled here: nothing was sent
        return downstream.create(current_call().idempotency_key, cart_id=cart_id)

    return create_order


def _order_in_a_run(runtime: Runtime, create_order: Any) -> dict[str, Any]:
    async def agent() -> dict[str, Any]:
        async with runtime.run(run_id="r1"):
            result: dict[str, Any] = await create_order(cart_id="c1")
            return result

    return asyncio.run(agent())


def test_an_async_body_cancelled_at_its_deadline_is_run_again_after_a_not_found(
    runtime: Runtime,
) -> None:
    downstream = RecordingDownstream()
    create_order = _cancelled_async_tool(
        runtime, downstream, reconcile=downstream.lookup, replay="auto"
    )

    observation = _order_in_a_run(runtime, create_order)
    # the cancelled attempt is over: the lookup's NotFound counts, and the call runs once more
    assert observation["ok"] is True, observation
    assert observation["metadata"]["attempts"] == 2
    assert len(downstream.applied) == 1


def test_an_async_body_cancelled_at_its_deadline_is_not_applied_with_replay_never(
    runtime: Runtime,
) -> None:
    downstream = RecordingDownstream()
    create_order = _cancelled_async_tool(
        runtime, downstream, reconcile=downstream.lookup, replay="never"
    )

    observation = _order_in_a_run(runtime, create_order)
    assert observation["ok"] is False
    assert observation["metadata"]["status"] == "failed"
    assert "in progress" not in observation["content"]
    assert "did not take effect" in observation["content"], observation["content"]
    assert not downstream.applied

    assert _order_in_a_run(runtime, create_order)["ok"]  # the model's next call re-arms it
    assert len(downstream.applied) == 1


def test_an_async_body_cancelled_without_a_lookup_is_uncertain_but_not_running(
    runtime: Runtime,
) -> None:
    downstream = RecordingDownstream()
    create_order = _cancelled_async_tool(runtime, downstream)

    observation = _order_in_a_run(runtime, create_order)
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert observation["metadata"]["still_running"] is False
    assert "in progress" not in observation["content"]
    entry = runtime.ledger.get(observation["metadata"]["call_id"])
    assert entry is not None and entry.lease_owner is None  # nothing of it can send any more
