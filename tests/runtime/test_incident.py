"""The incident: create_order times out after the service committed, and the model retries."""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agentguard.runtime import Runtime, Status
from agentguard.runtime.fake_service import OrderService

pytest.importorskip("requests")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "runtime_incident.py"
LAG_S = 2.0


@pytest.fixture(scope="module")
def incident() -> ModuleType:
    spec = importlib.util.spec_from_file_location("runtime_incident", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["runtime_incident"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def service() -> Iterator[OrderService]:
    # The lookup's replica lags 2 s: a busy machine that delays the first lookup past the lag
    # would see the order already and settle the call at once (not what this test asserts).
    with OrderService(visibility_lag_s=LAG_S) as running:
        yield running


def orders_for(service: OrderService, cart_id: str) -> list[dict[str, Any]]:
    return [order for order in service.orders() if order["cart_id"] == cart_id]


def test_the_naive_loop_places_two_orders(incident: ModuleType, service: OrderService) -> None:
    service.reset()
    service.queue_faults(incident.SLOW_ANSWER)
    seen = incident.naive_agent(service, "naive-cart")
    assert seen[0].startswith("error: ReadTimeout")
    assert len(orders_for(service, "naive-cart")) == 2


def test_the_guarded_loop_places_one_order_and_settles(
    incident: ModuleType, service: OrderService, runtime: Runtime
) -> None:
    service.reset()  # one service serves every backend's run of this test
    create_order = incident.build_guarded_tool(runtime, service)
    service.queue_faults(incident.SLOW_ANSWER)
    observations = incident.guarded_agent(runtime, create_order, "guarded-cart")

    first = observations[0]
    assert first["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert first["metadata"]["retryable"] is False
    assert "Do not call create_order again" in first["content"]
    assert len({o["metadata"]["call_id"] for o in observations}) == 1
    assert len(orders_for(service, "guarded-cart")) == 1

    time.sleep(LAG_S + 0.1)  # the lookup's replica catches up
    report = runtime.recover()
    assert report.succeeded == 1 and report.uncertain == 0
    entry = runtime.ledger.get(first["metadata"]["call_id"])
    assert entry is not None and entry.status is Status.SUCCEEDED
    assert entry.result["cart_id"] == "guarded-cart"
    with runtime.run(run_id="run_abc", user_id="user_42", approved_at="2026-11-29T02:00:00Z"):
        later = create_order(cart_id="guarded-cart")
    assert later["ok"] is True and later["metadata"]["replayed"] is True
    assert len(orders_for(service, "guarded-cart")) == 1
