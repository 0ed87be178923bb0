"""recover() reconciles as DESIGN §5 says: Found -> succeeded, NotFound -> re-run only when
replay="auto" (with the same key, and only with the exact arguments), else failed."""

from __future__ import annotations

import time
from typing import Any

import pytest

from agentguard.runtime import (
    Found,
    NotFound,
    Runtime,
    SimulatedCrash,
    Status,
    Unknown,
    current_call,
    guarded,
)
from agentguard.runtime.testing import FaultInjector


class Service:
    def __init__(self) -> None:
        self.orders: dict[str, dict[str, Any]] = {}
        self.calls = 0
        self.blind = False

    def find(self, call: Any) -> Any:
        if self.blind:
            return Unknown("lookup service down")
        order = self.orders.get(call.idempotency_key)
        return Found(order) if order else NotFound()


def _tool(runtime: Runtime, service: Service, *, replay: str, is_async: bool = False) -> Any:
    options: dict[str, Any] = {
        "risk": "write",
        "replay": replay,
        "key": ("user_id", "cart_id"),
        "reconcile": service.find,
        "lease_s": 0.05,
    }

    def create(cart_id: str) -> dict[str, Any]:
        service.calls += 1
        key = current_call().idempotency_key
        service.orders[key] = {"cart_id": cart_id, "key": key, "n": len(service.orders) + 1}
        return service.orders[key]

    if is_async:

        @guarded(runtime, **options)
        async def create_order(cart_id: str) -> dict[str, Any]:
            return create(cart_id)

        return create_order

    @guarded(runtime, **options)
    def create_order(cart_id: str) -> dict[str, Any]:  # type: ignore[misc]
        return create(cart_id)

    return create_order


def _crash(
    ledger_factory: Any,
    service: Service,
    *,
    replay: str,
    applied: bool,
    is_async: bool = False,
) -> None:
    """A worker that dies between `started` and its result, with or without having applied."""
    runtime = Runtime(ledger=ledger_factory())
    create_order = _tool(runtime, service, replay=replay, is_async=is_async)
    faults = FaultInjector(runtime)
    if applied:
        faults.crash_after_apply("create_order")
    else:
        faults.crash_after_started("create_order")
    with runtime.run(run_id="r1", user_id="u1"), pytest.raises(SimulatedCrash):
        if is_async:
            import asyncio

            asyncio.run(create_order(cart_id="c1"))
        else:
            create_order(cart_id="c1")
    time.sleep(0.06)  # the lease runs out


def _recover(ledger_factory: Any, service: Service, *, replay: str, is_async: bool = False) -> Any:
    restarted = Runtime(ledger=ledger_factory())
    _tool(restarted, service, replay=replay, is_async=is_async)
    return restarted, restarted.recover()


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_recovery_reruns_an_auto_replay_call_the_lookup_did_not_find(
    ledger_factory: Any, is_async: bool
) -> None:
    service = Service()
    _crash(ledger_factory, service, replay="auto", applied=False, is_async=is_async)
    assert service.calls == 0
    restarted, report = _recover(ledger_factory, service, replay="auto", is_async=is_async)
    assert (report.expired, report.succeeded, report.failed, report.uncertain) == (1, 1, 0, 0)
    assert report.replayed == 1
    assert service.calls == 1 and len(service.orders) == 1
    entry = restarted.ledger.get(report.call_ids[0])
    assert entry is not None and entry.status is Status.SUCCEEDED and entry.attempts == 2
    assert entry.idempotency_key in service.orders  # same key, not a new one
    history = [
        (e.from_status, e.to_status, e.actor) for e in restarted.ledger.events(entry.call_id)
    ]
    assert ("uncertain", "started", "reconciler") in history


def test_recovery_never_reruns_a_call_that_took_effect(ledger_factory: Any) -> None:
    service = Service()
    _crash(ledger_factory, service, replay="auto", applied=True)
    assert service.calls == 1
    _, report = _recover(ledger_factory, service, replay="auto")
    assert (report.succeeded, report.failed, report.replayed) == (1, 0, 0)
    assert service.calls == 1


def test_recovery_does_not_rerun_when_replay_is_never(ledger_factory: Any) -> None:
    service = Service()
    _crash(ledger_factory, service, replay="never", applied=False)
    restarted, report = _recover(ledger_factory, service, replay="never")
    assert (report.succeeded, report.failed, report.replayed) == (0, 1, 0)
    assert service.calls == 0
    # the agent's next call re-arms it with the same key
    again = _tool(restarted, service, replay="never")
    with restarted.run(run_id="r1", user_id="u1"):
        assert again(cart_id="c1")["ok"] is True
    assert service.calls == 1


def test_recovery_does_not_rerun_with_redacted_arguments(ledger_factory: Any) -> None:
    service = Service()
    runtime = Runtime(ledger=ledger_factory())
    charged: list[str] = []

    @guarded(runtime, risk="write", replay="auto", reconcile=service.find, lease_s=0.05)
    def charge(amount: int, api_token: str) -> str:
        charged.append(api_token)
        return "ok"

    FaultInjector(runtime).crash_after_started("charge")
    with runtime.run(run_id="r1"), pytest.raises(SimulatedCrash):
        charge(amount=5, api_token="s3cret")
    time.sleep(0.06)
    report = runtime.recover()
    # the stored copy says "[REDACTED]": running with it would be a different request
    assert (report.succeeded, report.failed, report.replayed) == (0, 1, 0)
    assert charged == []
    entry = runtime.ledger.get(report.call_ids[0])
    assert entry is not None and entry.args["api_token"] == "[REDACTED]"


def test_recovery_leaves_a_call_uncertain_when_the_lookup_cannot_tell(ledger_factory: Any) -> None:
    service = Service()
    _crash(ledger_factory, service, replay="auto", applied=False)
    service.blind = True
    _, report = _recover(ledger_factory, service, replay="auto")
    assert (report.expired, report.succeeded, report.failed, report.uncertain) == (1, 0, 0, 1)
    assert service.calls == 0
    service.blind = False
    _, second = _recover(ledger_factory, service, replay="auto")
    assert (second.succeeded, second.replayed) == (1, 1) and service.calls == 1


def test_recovery_does_not_rerun_tools_whose_arguments_json_does_not_keep(
    ledger_factory: Any,
) -> None:
    from datetime import date

    service = Service()
    runtime = Runtime(ledger=ledger_factory())
    ran: list[date] = []

    @guarded(runtime, risk="write", replay="auto", reconcile=service.find, lease_s=0.05)
    def book(day: date) -> str:
        ran.append(day)
        return day.isoformat()

    FaultInjector(runtime).crash_after_started("book")
    with runtime.run(run_id="r1"), pytest.raises(SimulatedCrash):
        book(day=date(2026, 12, 1))
    time.sleep(0.06)
    report = runtime.recover()
    assert (report.failed, report.replayed) == (1, 0) and ran == []


def test_recovery_inside_a_running_loop_settles_async_calls_without_rerunning(
    ledger_factory: Any,
) -> None:
    import asyncio

    service = Service()
    _crash(ledger_factory, service, replay="auto", applied=False, is_async=True)
    restarted = Runtime(ledger=ledger_factory())
    _tool(restarted, service, replay="auto", is_async=True)

    async def recover_in_loop() -> Any:
        return restarted.recover()

    report = asyncio.run(recover_in_loop())
    assert (report.expired, report.failed, report.replayed) == (1, 1, 0)
    assert service.calls == 0


def test_arecover_on_a_running_loop_reruns_an_async_body_not_found(runtime: Runtime) -> None:
    """On every ledger, ``arecover()`` awaited in the agent's loop settles as ``recover()``
    does outside one: a call its lookup did not find is run again (replay="auto")."""
    import asyncio

    service = Service()
    fail_first = [TimeoutError("connect timed out")]

    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"order:{call.args['cart_id']}",
        reconcile=service.find,
        replay="auto",
    )
    async def create_order(cart_id: str) -> dict[str, Any]:
        if fail_first:
            raise fail_first.pop()  # nothing was sent
        key = current_call().idempotency_key
        service.orders[key] = {"cart_id": cart_id, "key": key}
        return service.orders[key]

    async def agent() -> tuple[Any, Any]:
        service.blind = True
        async with runtime.run(run_id="r1"):
            first = await create_order(cart_id="c1")
        service.blind = False
        return first, await runtime.arecover()

    first, report = asyncio.run(agent())
    assert first["code"] == "SIDE_EFFECT_UNCERTAIN", first
    assert (report.succeeded, report.failed, report.replayed) == (1, 0, 1)
    entry = runtime.ledger.get(first["metadata"]["call_id"])
    assert entry is not None and entry.status is Status.SUCCEEDED
    assert list(service.orders) == [entry.idempotency_key]
