"""A downstream service for the duplicate tests: it records every request it applies and never
deduplicates by key, so any second request the runtime lets through becomes a second order."""

from __future__ import annotations

import threading
import time
from typing import Any

from agentguard.runtime import Found, NotFound, Runtime, Unknown, current_call, guarded


class RecordingDownstream:
    def __init__(self) -> None:
        self.applied: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def create(self, key: str, **fields: Any) -> dict[str, Any]:
        with self.lock:
            order = {"order_id": f"o{len(self.applied) + 1}", "key": key, **fields}
            self.applied.append(order)
            return order

    def find(self, key: str) -> dict[str, Any] | None:
        with self.lock:
            return next((order for order in self.applied if order["key"] == key), None)

    def applied_for(self, key: str) -> int:
        with self.lock:
            return sum(1 for order in self.applied if order["key"] == key)

    def lookup(self, call: Any) -> Found | NotFound | Unknown:
        """The read-only reconcile lookup a user writes for this service."""
        order = self.find(call.idempotency_key)
        return Found(order) if order else NotFound()


def wait_until(predicate: Any, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


def order_tool(runtime: Runtime, downstream: RecordingDownstream, **options: Any) -> Any:
    """A guarded write tool, keyed by its cart, that places an order on ``downstream``."""

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}", **options)
    def create_order(cart_id: str) -> dict[str, Any]:
        return downstream.create(current_call().idempotency_key, cart_id=cart_id)

    return create_order
