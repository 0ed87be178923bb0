"""A worker frozen past its lease (SIGSTOP, a body holding the GIL) is not taken for dead."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentguard.runtime import Found, NotFound, Runtime, Status, current_call, guarded, open_ledger
from tests.runtime.downstream import RecordingDownstream, wait_until

REPO = Path(__file__).resolve().parents[2]


def _tool(
    runtime: Runtime, downstream: RecordingDownstream, gate: threading.Event, replay: str
) -> Any:
    @guarded(
        runtime,
        risk="write",
        replay=replay,
        key=lambda call: f"order:{call.args['cart_id']}",
        reconcile=downstream.lookup,
        lease_s=0.1,
    )
    def create_order(cart_id: str) -> dict[str, Any]:
        gate.wait(10)
        return downstream.create(current_call().idempotency_key, cart_id=cart_id)

    return create_order


@pytest.mark.parametrize("replay", ["auto", "never"])
def test_a_worker_that_cannot_renew_its_lease_is_not_replayed_or_failed(
    ledger_factory: Any, replay: str
) -> None:
    downstream = RecordingDownstream()
    gate = threading.Event()
    frozen = Runtime(ledger=ledger_factory())
    frozen.heartbeat.watch = lambda *args: None  # type: ignore[method-assign]  # it cannot renew
    first_tool = _tool(frozen, downstream, gate, replay)
    outcome: dict[str, Any] = {}

    def first_worker() -> None:
        with frozen.run(run_id="r1"):
            outcome["first"] = first_tool(cart_id="c1")

    worker = threading.Thread(target=first_worker)
    worker.start()
    time.sleep(0.2)  # its lease ran out while its body is still before the send

    other = Runtime(ledger=ledger_factory())
    second_tool = _tool(other, downstream, threading.Event(), replay)
    with other.run(run_id="r1"):
        second = second_tool(cart_id="c1")
    assert second["code"] == "SIDE_EFFECT_UNCERTAIN", second
    assert second["metadata"]["still_running"] is True
    report = other.recover()
    assert (report.failed, report.replayed, report.uncertain) == (0, 0, 1)

    gate.set()  # the frozen worker wakes up and sends its request
    worker.join(5)
    assert outcome["first"]["ok"], outcome["first"]  # its late outcome is recorded
    with other.run(run_id="r1"):
        third = second_tool(cart_id="c1")
    assert third["ok"] and third["metadata"]["replayed"]
    assert len(downstream.applied) == 1


def test_a_late_outcome_after_the_call_was_settled_is_kept_in_its_history(
    ledger_factory: Any,
) -> None:
    downstream = RecordingDownstream()
    gate = threading.Event()
    frozen = Runtime(ledger=ledger_factory())
    frozen.heartbeat.watch = lambda *args: None  # type: ignore[method-assign]
    tool = _tool(frozen, downstream, gate, "never")
    results: list[dict[str, Any]] = []

    def first_worker() -> None:
        with frozen.run(run_id="r1"):
            results.append(tool(cart_id="c9"))

    worker = threading.Thread(target=first_worker)
    worker.start()
    time.sleep(0.2)
    other = Runtime(ledger=ledger_factory())
    _tool(other, downstream, threading.Event(), "never")
    other.recover()
    (entry,) = other.ledger.entries(status=Status.UNCERTAIN)
    # a person, not knowing the worker is only frozen, settles it as failed
    other.resolve(entry.call_id, "failed", "not in the order admin")
    gate.set()
    worker.join(5)
    final = other.ledger.get(entry.call_id)
    assert final is not None and final.status is Status.FAILED  # not silently overwritten
    late = [event for event in other.ledger.events(entry.call_id) if event.actor == "late_outcome"]
    assert len(late) == 1 and "succeeded" in (late[0].detail or "")
    assert "twice" in (late[0].detail or "")


WORKER = textwrap.dedent(
    """
    import json, sys, time
    from agentguard.runtime import Runtime, current_call, guarded, open_ledger

    url, applied_file = sys.argv[1], sys.argv[2]
    runtime = Runtime(ledger=open_ledger(url))

    @guarded(runtime, risk="write", replay="auto", lease_s=0.3,
             key=lambda call: "order:" + call.args["cart_id"])
    def create_order(cart_id: str) -> str:
        time.sleep(1.0)                       # connecting; SIGSTOP lands here
        with open(applied_file, "a") as applied:
            applied.write(current_call().idempotency_key + "\\n")
        return "ordered"

    with runtime.run(run_id="r1"):
        print(json.dumps(create_order(cart_id="c1")), flush=True)
    """
)


def test_a_sigstopped_worker_is_not_taken_for_dead(ledger_url: str, tmp_path: Path) -> None:
    applied = tmp_path / "applied.txt"
    applied.touch()
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, ledger_url, str(applied)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    ledger = open_ledger(ledger_url)
    try:
        assert wait_until(lambda: ledger.entries(status=Status.STARTED) != [], timeout_s=30)
        os.kill(worker.pid, signal.SIGSTOP)
        time.sleep(0.6)  # its lease runs out: the stopped process cannot renew it

        def lookup(call: Any) -> Found | NotFound:
            keys = applied.read_text().splitlines()
            return Found("ordered") if call.idempotency_key in keys else NotFound()

        runtime = Runtime(ledger=ledger)

        @guarded(
            runtime,
            risk="write",
            replay="auto",
            lease_s=0.3,
            reconcile=lookup,
            key=lambda call: "order:" + call.args["cart_id"],
        )
        def create_order(cart_id: str) -> str:
            with applied.open("a") as out:
                out.write(current_call().idempotency_key + "\n")
            return "ordered"

        with runtime.run(run_id="r1"):
            observation = create_order(cart_id="c1")
        assert observation["code"] == "SIDE_EFFECT_UNCERTAIN", observation
        assert runtime.recover().replayed == 0
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    output, _ = worker.communicate(timeout=30)
    assert json.loads(output)["ok"] is True  # the woken worker's outcome is recorded
    assert applied.read_text().splitlines() == ["order:c1"]
    ledger.close()
