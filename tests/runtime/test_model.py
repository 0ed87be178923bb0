"""Model-based test: random interleavings of calls, faults, crashes and recovery.

Invariants after every step: no cart has two orders; a succeeded entry has its order; a failed
entry has none; every order has a ledger entry; the ledger never holds two entries for one key.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from agentguard.runtime import (
    Found,
    MemoryLedger,
    NotFound,
    Runtime,
    SimulatedCrash,
    Status,
    current_call,
    guarded,
)
from agentguard.runtime.testing import FaultInjector

CARTS = st.sampled_from(["a", "b", "c"])
FAULTS = st.sampled_from(
    [
        "none",
        "timeout_after_apply",
        "timeout_before_send",
        "crash_after_started",
        "crash_after_apply",
    ]
)


class GuardedOrders(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.orders: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.lookup_blind = False
        self.ledger = MemoryLedger()
        self.runtime = self._runtime()

    def _runtime(self) -> Runtime:
        runtime = Runtime(ledger=self.ledger, lease_s=0.0)
        runtime.sleep = lambda seconds: None
        self.faults = FaultInjector(runtime)

        def find_order(call: Any) -> Any:
            if self.lookup_blind:
                raise ConnectionError("lookup service down")
            matches = [o for o in self.orders if o["key"] == call.idempotency_key]
            return Found(matches[0]) if matches else NotFound()

        @guarded(
            runtime,
            risk="write",
            replay="auto",
            key=("user_id", "cart_id"),
            reconcile=find_order,
            lease_s=60.0,
        )
        def create_order(cart_id: str) -> dict[str, Any]:
            order = {"cart_id": cart_id, "key": current_call().idempotency_key}
            with self.lock:
                self.orders.append(order)
            return order

        self.create_order = create_order
        return runtime

    @rule(cart=CARTS, fault=FAULTS)
    def call(self, cart: str, fault: str) -> None:
        if fault != "none":
            getattr(self.faults, fault)("create_order")
        try:
            with self.runtime.run(run_id="run", user_id="u"):
                observation = self.create_order(cart_id=cart)
        except SimulatedCrash:
            self.runtime = self._runtime()  # the process died; a new one starts
            return
        finally:
            self.faults.clear()
        if observation["ok"]:
            assert any(o["cart_id"] == cart for o in self.orders)
        if observation["code"] == "SIDE_EFFECT_UNCERTAIN":
            assert observation["metadata"]["retryable"] is False

    @rule()
    def recover(self) -> None:
        self.runtime.recover(now=10**10)

    @rule(blind=st.booleans())
    def lookup_availability(self, blind: bool) -> None:
        self.lookup_blind = blind

    @invariant()
    def no_cart_has_two_orders(self) -> None:
        counts = Counter(order["cart_id"] for order in self.orders)
        assert all(count <= 1 for count in counts.values()), counts

    @invariant()
    def ledger_agrees_with_the_service(self) -> None:
        entries = self.ledger.entries()
        keys = [entry.idempotency_key for entry in entries]
        assert len(keys) == len(set(keys))
        by_key = {entry.idempotency_key: entry for entry in entries}
        ordered_keys = {order["key"] for order in self.orders}
        for key in ordered_keys:
            assert key in by_key  # written ahead: no order without a ledger entry
        for key, entry in by_key.items():
            if entry.status is Status.SUCCEEDED:
                assert key in ordered_keys
            if entry.status is Status.FAILED:
                assert key not in ordered_keys


TestGuardedOrders = GuardedOrders.TestCase
TestGuardedOrders.settings = settings(
    max_examples=150,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
