"""The duplicate-order incident, reproduced and prevented.

The order service commits an order, then answers after the client's timeout. A naive agent loop
catches the timeout and calls create_order again: two orders. The same loop over the guarded
tool places one order; the model is told the outcome is uncertain and not to retry, and
reconciliation settles the ledger entry to ``succeeded``.

    python examples/runtime_incident.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from agentguard.runtime import (
    Found,
    NotFound,
    Runtime,
    SQLiteLedger,
    current_call,
    guarded,
)
from agentguard.runtime.fake_service import OrderService

CLIENT_TIMEOUT_S = 0.3
SLOW_ANSWER = {"delay_after_commit_s": 1.0}


def post_order(service: OrderService, cart_id: str, key: str | None = None) -> dict[str, Any]:
    headers = {"Idempotency-Key": key} if key else {}
    response = requests.post(
        f"{service.url}/orders",
        json={"cart_id": cart_id},
        headers=headers,
        timeout=CLIENT_TIMEOUT_S,
    )
    response.raise_for_status()
    return dict(response.json())


def naive_agent(service: OrderService, cart_id: str) -> list[str]:
    """What the model sees in a plain loop: a timeout, then it tries again."""
    seen = []
    for _ in range(3):
        try:
            order = post_order(service, cart_id)
            seen.append(f"ok {order['order_id']}")
            break
        except requests.Timeout as exc:
            seen.append(f"error: {exc.__class__.__name__}, please try again")
    return seen


def build_guarded_tool(runtime: Runtime, service: OrderService) -> Any:
    def find_order(call: Any) -> Found | NotFound:
        response = requests.get(
            f"{service.url}/orders", params={"idempotency_key": call.idempotency_key}, timeout=5
        )
        matches = response.json()
        return Found(matches[0]) if matches else NotFound()

    @guarded(
        runtime,
        risk="write",
        idempotency="non_idempotent",
        replay="never",
        key=lambda call: (
            f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}:{call.approved_at}"
        ),
        reconcile=find_order,
        settle_s=2.0,  # the lookup reads a replica that lags: trust "not found" only after this
    )
    def create_order(cart_id: str) -> dict[str, Any]:
        """Create an order for the cart."""
        return post_order(service, cart_id, key=current_call().idempotency_key)

    return create_order


def guarded_agent(runtime: Runtime, create_order: Any, cart_id: str) -> list[dict[str, Any]]:
    """The same naive loop: it calls again whenever the last call did not succeed."""
    observations = []
    with runtime.run(run_id="run_abc", user_id="user_42", approved_at="2026-11-29T02:00:00Z"):
        for _ in range(3):
            observation = create_order(cart_id=cart_id)
            observations.append(observation)
            if observation["ok"]:
                break
    return observations


def main() -> None:
    with OrderService(visibility_lag_s=0.5) as service, tempfile.TemporaryDirectory() as tmp:
        service.queue_faults(SLOW_ANSWER)
        print("naive loop:   ", naive_agent(service, "cart-998"))
        naive_orders = [o for o in service.orders() if o["cart_id"] == "cart-998"]
        print(f"  orders for cart-998: {len(naive_orders)}")

        runtime = Runtime(ledger=SQLiteLedger(Path(tmp) / "ledger.db"))
        create_order = build_guarded_tool(runtime, service)
        service.queue_faults(SLOW_ANSWER)
        observations = guarded_agent(runtime, create_order, "cart-999")
        print("guarded loop: ", [o["code"] or "ok" for o in observations])
        print("  model reads:", observations[0]["content"])
        time.sleep(0.6)
        print("  recover():  ", runtime.recover())
        entry = runtime.ledger.get(observations[0]["metadata"]["call_id"])
        guarded_orders = [o for o in service.orders() if o["cart_id"] == "cart-999"]
        print(
            f"  orders for cart-999: {len(guarded_orders)}; ledger status: {entry.status.value if entry else None}"
        )


if __name__ == "__main__":
    main()
