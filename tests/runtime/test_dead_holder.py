"""A worker restarted on the same machine reclaims at once a call whose holder process is known
dead, instead of waiting for its lease; a holder that may be alive is still waited for."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from agentguard.runtime import Runtime, Status, open_ledger
from tests.runtime.downstream import RecordingDownstream, order_tool

REPO = Path(__file__).resolve().parents[2]

SLOW_WORKER = textwrap.dedent(
    """
    import pathlib, sys, time
    from agentguard.runtime import Runtime, guarded, open_ledger

    runtime = Runtime(ledger=open_ledger(sys.argv[1]))

    @guarded(runtime, risk="write", key=lambda call: "order:" + call.args["cart_id"], lease_s=600)
    def create_order(cart_id: str) -> str:
        pathlib.Path(sys.argv[2]).write_text("started")
        time.sleep(120)   # still connecting to the service
        return "late"

    with runtime.run(run_id="r1"):
        create_order(cart_id="c1")
    """
)

KILLED_WORKER = textwrap.dedent(
    """
    import sys
    from agentguard.runtime import Runtime, guarded, open_ledger
    from agentguard.runtime.testing import FaultInjector

    runtime = Runtime(ledger=open_ledger(sys.argv[1]))

    @guarded(runtime, risk="write", key=lambda call: "order:" + call.args["cart_id"], lease_s=600)
    def create_order(cart_id: str) -> str:
        return "never reached"

    FaultInjector(runtime).crash_after_started("create_order", kill=True)
    with runtime.run(run_id="r1"):
        create_order(cart_id="c1")   # SIGKILLed between 'started' and the body
    """
)


def _killed_worker(ledger_url: str) -> None:
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    completed = subprocess.run(
        [sys.executable, "-c", KILLED_WORKER, ledger_url],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == -9, completed.stderr


def test_a_restarted_worker_reclaims_the_call_of_a_dead_holder_at_once(ledger_url: str) -> None:
    _killed_worker(ledger_url)
    ledger = open_ledger(ledger_url)
    try:
        (held,) = ledger.entries(status=Status.STARTED)
        assert held.lease_expires_at is not None and held.lease_expires_at > time.time() + 60
        runtime, downstream, create_order = _settling_order_tool(ledger)
        with runtime.run(run_id="r1"):
            observation = create_order(cart_id="c1")  # the restarted agent calls again
        # the holder is gone: the lookup's NotFound counts, and the call runs, once
        assert observation["ok"] is True, observation
        assert len(downstream.applied) == 1
        history = [event.detail or "" for event in ledger.events(held.call_id)]
        assert any("has ended" in detail for detail in history), history
    finally:
        ledger.close()


def test_recover_settles_the_call_of_a_dead_holder_before_its_lease_ends(
    ledger_url: str,
) -> None:
    _killed_worker(ledger_url)
    ledger = open_ledger(ledger_url)
    try:
        runtime = Runtime(ledger=ledger)
        downstream = RecordingDownstream()
        order_tool(runtime, downstream, lease_s=600, reconcile=downstream.lookup, replay="auto")
        report = runtime.recover()
        assert report.expired == 1
        assert report.call_ids[0] == ledger.entries()[0].call_id
        (entry,) = ledger.entries()
        assert entry.status is Status.SUCCEEDED  # re-run with its key after NotFound
        assert len(downstream.applied) == 1
    finally:
        ledger.close()


def test_a_live_holder_is_waited_for_and_reclaimed_once_it_is_killed(
    ledger_url: str, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    worker = subprocess.Popen(
        [sys.executable, "-c", SLOW_WORKER, ledger_url, str(started)], env=environment
    )
    ledger = open_ledger(ledger_url)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists()
        runtime, downstream, create_order = _settling_order_tool(ledger)
        with runtime.run(run_id="r1"):
            waiting = create_order(cart_id="c1")
        # its holder is alive on this machine: it may still send, so nothing runs
        assert waiting["code"] == "DUPLICATE_IN_PROGRESS", waiting
        worker.kill()
        worker.wait(30)
        with runtime.run(run_id="r1"):
            reclaimed = create_order(cart_id="c1")
        assert reclaimed["ok"] is True, reclaimed
        assert len(downstream.applied) == 1
    finally:
        worker.kill()
        worker.wait(30)
        ledger.close()


def _settling_order_tool(ledger: Any) -> tuple[Runtime, RecordingDownstream, Any]:
    """A guarded order tool on ``ledger`` with a long lease, settled by the downstream's
    lookup and replayed when the lookup finds nothing."""
    runtime = Runtime(ledger=ledger)
    downstream = RecordingDownstream()
    create_order = order_tool(
        runtime, downstream, lease_s=600, reconcile=downstream.lookup, replay="auto"
    )
    return runtime, downstream, create_order


def _hand_the_claim_to_another_machine(ledger_url: str) -> str:
    """The held call's lease owner rewritten as a process of another machine (another host
    name and boot), whose liveness this machine cannot see."""
    ledger = open_ledger(ledger_url)
    try:
        (held,) = ledger.entries(status=Status.STARTED)
    finally:
        ledger.close()
    assert held.lease_owner is not None
    prefix, _, identity = held.lease_owner.rpartition("@")
    parts = identity.split(":")
    parts[0], parts[-1] = "another-machine", "0" * 32
    owner = (prefix + "@" if prefix else "") + ":".join(parts)
    if ledger_url.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(ledger_url.removeprefix("sqlite:///")) as connection:
            connection.execute("UPDATE agentguard_calls SET lease_owner = ?", (owner,))
    else:
        import psycopg

        dsn, _, schema = ledger_url.partition("?schema=")
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(f'UPDATE "{schema}".agentguard_calls SET lease_owner = %s', (owner,))
    return owner


def test_a_holder_on_another_machine_is_waited_for_until_its_lease_ends(ledger_url: str) -> None:
    _killed_worker(ledger_url)
    owner = _hand_the_claim_to_another_machine(ledger_url)
    ledger = open_ledger(ledger_url)
    try:
        runtime, downstream, create_order = _settling_order_tool(ledger)
        with runtime.run(run_id="r1"):
            waiting = create_order(cart_id="c1")
        # its process cannot be seen from here: it may still send, so nothing runs before the
        # lease ends (fencing unchanged), and recovery leaves it alone too
        assert waiting["code"] == "DUPLICATE_IN_PROGRESS", waiting
        assert runtime.recover().expired == 0
        (held,) = ledger.entries()
        assert held.status is Status.STARTED and held.lease_owner == owner
        assert not downstream.applied
    finally:
        ledger.close()
