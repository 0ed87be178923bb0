"""Leases are renewed while a body runs: recovery on another worker leaves a live call alone."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from agentguard.runtime import Found, NotFound, Runtime, Status, guarded
from agentguard.runtime.ledger.base import LedgerEntry, new_call_id

LEASE_S = 0.3
BODY_S = 1.0  # more than three leases


def _orders_tool(runtime: Runtime, created: list[str], *, is_async: bool) -> Any:
    def find_order(call: Any) -> Found | NotFound:
        return Found(call.args["cart_id"]) if call.args["cart_id"] in created else NotFound()

    options: dict[str, Any] = {
        "risk": "write",
        "key": ("user_id", "cart_id"),
        "reconcile": find_order,
        "lease_s": LEASE_S,
    }
    if is_async:

        @guarded(runtime, **options)
        async def create_order(cart_id: str) -> str:
            await asyncio.sleep(BODY_S)
            created.append(cart_id)
            return cart_id

        return create_order

    @guarded(runtime, **options)
    def create_order(cart_id: str) -> str:  # type: ignore[misc]
        time.sleep(BODY_S)
        created.append(cart_id)
        return cart_id

    return create_order


def _sweep_while_running(ledger_factory: Any, running: threading.Event) -> list[Any]:
    """Another worker (its own runtime and ledger connection) recovering every 100 ms."""
    other = Runtime(ledger=ledger_factory())
    _orders_tool(other, [], is_async=False)
    reports = []
    running.wait(5)
    deadline = time.monotonic() + BODY_S - 0.1
    while time.monotonic() < deadline:
        reports.append(other.recover())
        time.sleep(0.1)
    return reports


def _check(runtime: Runtime, reports: list[Any], observation: dict[str, Any]) -> None:
    assert reports, "the sweeper never ran"
    assert sum(report.expired for report in reports) == 0
    assert observation["ok"] is True and observation["metadata"]["status"] == "succeeded"
    entry = runtime.ledger.get(observation["metadata"]["call_id"])
    assert entry is not None and entry.status is Status.SUCCEEDED
    assert [e.to_status for e in runtime.ledger.events(entry.call_id)] == [
        "planned",
        "started",
        "succeeded",
    ]
    assert runtime.heartbeat.renewals >= 2


def test_a_slow_sync_body_keeps_its_lease(ledger_factory: Any) -> None:
    runtime = Runtime(ledger=ledger_factory())
    created: list[str] = []
    create_order = _orders_tool(runtime, created, is_async=False)
    running = threading.Event()
    reports: list[Any] = []
    sweeper = threading.Thread(
        target=lambda: reports.extend(_sweep_while_running(ledger_factory, running))
    )
    sweeper.start()
    with runtime.run(run_id="r1", user_id="u1"):
        running.set()
        observation = create_order(cart_id="c1")
    sweeper.join()
    _check(runtime, reports, observation)
    assert created == ["c1"]


def test_a_slow_async_body_keeps_its_lease(ledger_factory: Any) -> None:
    runtime = Runtime(ledger=ledger_factory())
    created: list[str] = []
    create_order = _orders_tool(runtime, created, is_async=True)
    running = threading.Event()
    reports: list[Any] = []
    sweeper = threading.Thread(
        target=lambda: reports.extend(_sweep_while_running(ledger_factory, running))
    )
    sweeper.start()

    async def main() -> dict[str, Any]:
        async with runtime.run(run_id="r1", user_id="u1"):
            running.set()
            result: dict[str, Any] = await create_order(cart_id="c1")
            return result

    observation = asyncio.run(main())
    sweeper.join()
    _check(runtime, reports, observation)
    assert created == ["c1"]


def test_a_renewal_loses_to_an_earlier_expiry_and_wins_over_a_later_one(
    ledger_factory: Any,
) -> None:
    ledger = ledger_factory()
    entry = LedgerEntry(
        call_id=new_call_id(),
        run_id="r1",
        tool_name="create_order",
        idempotency_key="k-renew",
        input_hash="sha256:x",
        status=Status.PLANNED,
        risk="write",
        idempotency="non_idempotent",
        replay="never",
        attempts=1,
        lease_expires_at=time.time() - 1,
    )
    _, started = ledger.claim(entry, [Status.PLANNED, Status.STARTED])
    # the sweeper read the entry while it was expired; the renewal lands first and wins
    assert ledger.renew_lease(started.call_id, 1, time.time() + 60) is True
    assert ledger.transition(started, Status.UNCERTAIN, lease_expired_by=time.time()) is None
    current = ledger.get(started.call_id)
    assert current is not None and current.status is Status.STARTED
    assert current.version == started.version  # the running attempt's outcome still applies
    assert ledger.renew_lease(started.call_id, 2, time.time() + 60) is False  # not its attempt
    # once the lease really ran out and the sweeper moved it, a late renewal changes nothing
    assert ledger.renew_lease(started.call_id, 1, time.time() - 1) is True
    moved = ledger.transition(started, Status.UNCERTAIN, lease_expired_by=time.time())
    assert moved is not None and moved.status is Status.UNCERTAIN
    assert ledger.renew_lease(started.call_id, 1, time.time() + 60) is False
    final = ledger.get(started.call_id)
    assert final is not None and final.status is Status.UNCERTAIN


def test_a_dead_worker_stops_renewing(ledger_factory: Any) -> None:
    from agentguard.runtime import SimulatedCrash
    from agentguard.runtime.testing import FaultInjector

    runtime = Runtime(ledger=ledger_factory())
    created: list[str] = []

    @guarded(runtime, risk="write", key=("cart_id",), lease_s=0.15)
    def create_order(cart_id: str) -> str:
        created.append(cart_id)
        return cart_id

    FaultInjector(runtime).crash_after_started("create_order")
    with runtime.run(run_id="r1"), pytest.raises(SimulatedCrash):
        create_order(cart_id="c1")
    time.sleep(0.3)
    report = Runtime(ledger=ledger_factory()).recover(reconcile=False)
    assert report.expired == 1 and report.uncertain == 1


def test_an_idle_heartbeat_stops_and_a_new_call_restarts_it(
    ledger_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentguard.runtime import heartbeat

    monkeypatch.setattr(heartbeat, "IDLE_STOP_S", 0.2)
    runtime = Runtime(ledger=ledger_factory())

    @guarded(runtime, risk="write", key=("n",), lease_s=0.3)
    def slow(n: int) -> int:
        time.sleep(0.35)
        return n

    with runtime.run(run_id="r1"):
        assert slow(n=1)["ok"] is True
    first_thread = runtime.heartbeat._thread
    assert first_thread is not None
    first_thread.join(3)
    assert not first_thread.is_alive() and runtime.heartbeat._thread is None
    renewals = runtime.heartbeat.renewals
    with runtime.run(run_id="r1"):
        assert slow(n=2)["ok"] is True
    assert runtime.heartbeat.renewals > renewals
