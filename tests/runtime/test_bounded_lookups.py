"""A lookup that hangs holds neither the call nor recovery for longer than its bound."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from agentguard.runtime import Runtime, SimulatedCrash, Status, guarded
from agentguard.runtime.testing import FaultInjector


def _hanging_tool(runtime: Runtime, hang: threading.Event, **options: Any) -> Any:
    def find_order(call: Any) -> Any:
        hang.wait(10)  # a replica that does not answer
        raise ConnectionError("no answer")

    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"order:{call.args['cart_id']}",
        reconcile=find_order,
        **options,
    )
    def create_order(cart_id: str) -> str:
        raise TimeoutError("read timed out")  # may have been applied: uncertain

    return create_order


def test_a_hung_lookup_is_bounded_by_the_call_timeout(runtime: Runtime) -> None:
    hang = threading.Event()
    create_order = _hanging_tool(runtime, hang, timeout_s=0.2)
    began = time.monotonic()
    with runtime.run(run_id="r1"):
        observation = create_order(cart_id="c1")
    elapsed = time.monotonic() - began
    hang.set()
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert elapsed < 1.5, elapsed


def test_recovery_runs_hung_lookups_side_by_side(ledger_factory: Any) -> None:
    hang = threading.Event()
    worker = Runtime(ledger=ledger_factory())
    FaultInjector(worker).crash_after_started("create_order", times=5)

    @guarded(worker, risk="write", lease_s=0.05, key=lambda call: f"order:{call.args['cart_id']}")
    def create_order(cart_id: str) -> str:
        return "ordered"

    with worker.run(run_id="r1"):
        for index in range(5):
            with contextlib.suppress(SimulatedCrash):
                create_order(cart_id=f"c{index}")
    time.sleep(0.06)
    restarted = Runtime(ledger=ledger_factory())
    _hanging_tool(restarted, hang, lookup_timeout_s=0.5, lease_s=0.05)
    began = time.monotonic()
    report = restarted.recover()
    elapsed = time.monotonic() - began
    hang.set()
    assert (report.expired, report.uncertain) == (5, 5)
    assert elapsed < 2.0, elapsed  # one after another: 5 x 0.5 s at least
    assert len(restarted.ledger.entries(status=Status.UNCERTAIN)) == 5
