"""The order service as the engine apps call it: one POST that places an order (the effect the
tests count) and one lookup of the orders placed under a key (the reconciliation)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from agentguard.runtime import Found, NotFound


def place_order(service: str, cart_id: str, key: str | None, timeout: float = 10) -> dict[str, Any]:
    request = urllib.request.Request(
        service + "/orders",
        data=json.dumps({"cart_id": cart_id}).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Idempotency-Key": key or ""},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        order: dict[str, Any] = json.loads(response.read())
    return order


def lookup_order(service: str, call: Any) -> Found | NotFound:
    url = f"{service}/orders?idempotency_key={call.idempotency_key}"
    with urllib.request.urlopen(url, timeout=10) as response:
        orders = json.loads(response.read())
    return Found(orders[0]) if orders else NotFound()
