"""Recovery gives keys and lookups the run fields the call had: tenant and extra fields."""

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
    current_call,
    guarded,
)
from agentguard.runtime.testing import FaultInjector
from tests.runtime.downstream import RecordingDownstream


class TenantOrders:
    """One order book per tenant and region, none of which deduplicates."""

    def __init__(self) -> None:
        self.books: dict[tuple[str | None, str | None], RecordingDownstream] = {}

    def book(self, call: Any) -> RecordingDownstream:
        where = (call.tenant, call.extra.get("region"))
        return self.books.setdefault(where, RecordingDownstream())

    def applied(self) -> int:
        return sum(len(book.applied) for book in self.books.values())


def _tool(runtime: Runtime, orders: TenantOrders, replay: str) -> Any:
    def find_order(call: Any) -> Found | NotFound:
        order = orders.book(call).find(call.idempotency_key)
        return Found(order) if order else NotFound()

    @guarded(
        runtime,
        risk="write",
        replay=replay,
        reconcile=find_order,
        lease_s=0.05,
        key=lambda call: f"order:{call.tenant}:{call.extra['region']}:{call.args['cart_id']}",
    )
    def create_order(cart_id: str) -> dict[str, Any]:
        call = current_call()
        return orders.book(call).create(call.idempotency_key, cart_id=cart_id)

    return create_order


@pytest.mark.parametrize("replay", ["auto", "never"])
def test_recovery_looks_up_a_crashed_call_in_its_own_tenant(
    ledger_factory: Any, replay: str
) -> None:
    orders = TenantOrders()
    worker = Runtime(ledger=ledger_factory())
    FaultInjector(worker).crash_after_apply("create_order")
    create_order = _tool(worker, orders, replay)
    with worker.run(run_id="r1", tenant="acme", region="eu"), pytest.raises(SimulatedCrash):
        create_order(cart_id="c1")
    time.sleep(0.06)  # the worker is gone and its lease runs out

    restarted = Runtime(ledger=ledger_factory())
    again = _tool(restarted, orders, replay)
    report = restarted.recover()
    assert (report.succeeded, report.failed, report.replayed) == (1, 0, 0)
    entry = restarted.ledger.get(report.call_ids[0])
    assert entry is not None and entry.status is Status.SUCCEEDED
    assert (entry.tenant, entry.extra) == ("acme", {"region": "eu"})
    with restarted.run(run_id="r1", tenant="acme", region="eu"):
        observation = again(cart_id="c1")
    assert observation["ok"] and observation["metadata"]["replayed"]
    assert orders.applied() == 1
    assert list(orders.books) == [("acme", "eu")]


def test_extra_run_fields_must_be_json(runtime: Runtime) -> None:
    with pytest.raises(TypeError, match="region"):
        runtime.run(run_id="r1", region=object())
