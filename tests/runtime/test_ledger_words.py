"""What the ledger says of a call is what the call did: a settled row carries no stale error,
`ledger list` keeps one line per call in a pipe, and recovery names each call it touched once."""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path

from typer.testing import CliRunner

from agentguard.ledger_cli import ledger_app
from agentguard.runtime import (
    Runtime,
    SimulatedCrash,
    SQLiteLedger,
    Status,
    resolve_call,
)
from agentguard.runtime.testing import FaultInjector
from tests.runtime.downstream import RecordingDownstream, order_tool


def test_a_call_reconciled_to_succeeded_shows_no_error(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    create_order = order_tool(runtime, downstream, reconcile=downstream.lookup)
    FaultInjector(runtime).timeout_after_apply("create_order")
    with runtime.run(run_id="r1"):
        observation = create_order(cart_id="c1")
    assert observation["ok"] and observation["metadata"]["reconciled"]
    entry = runtime.ledger.get(observation["metadata"]["call_id"])
    assert entry is not None and entry.status is Status.SUCCEEDED
    assert entry.error_code is None and entry.error_detail is None
    # the history still says why it was uncertain
    assert any(event.to_status == "uncertain" for event in runtime.ledger.events(entry.call_id))


def test_a_call_resolved_as_succeeded_by_a_person_shows_no_error(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    create_order = order_tool(runtime, downstream)
    FaultInjector(runtime).timeout_after_apply("create_order")
    with runtime.run(run_id="r1"):
        observation = create_order(cart_id="c1")
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
    resolved = resolve_call(
        runtime.ledger, observation["metadata"]["call_id"], "succeeded", "seen in the admin"
    )
    assert resolved.status is Status.SUCCEEDED and resolved.error_code is None


def test_recover_names_each_call_it_touched_once(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    create_order = order_tool(runtime, downstream, reconcile=downstream.lookup, lease_s=60)
    FaultInjector(runtime).crash_after_apply("create_order")
    with runtime.run(run_id="r1"), contextlib.suppress(SimulatedCrash):
        create_order(cart_id="c1")
    # its lease ran out (and its attempt no longer runs): expired, then found by the lookup
    report = runtime.recover(now=time.time() + 120)
    assert report.expired == 1 and report.succeeded == 1
    assert len(report.call_ids) == 1


def test_ledger_list_in_a_pipe_prints_one_line_per_call(tmp_path: Path) -> None:
    ledger = SQLiteLedger(tmp_path / "ledger.db")
    runtime = Runtime(ledger=ledger)
    create_order = order_tool(runtime, RecordingDownstream())
    with runtime.run(run_id="run-with-a-rather-long-name-0123456789"):
        for cart in ("c1", "c2", "c3"):
            assert create_order(cart_id=f"{cart}-" + "x" * 40)["ok"]
    ledger.close()
    # a pipe: no terminal, so the console's width is the default 80 columns
    result = CliRunner().invoke(ledger_app, ["list", "--ledger", f"sqlite:///{ledger.path}"])
    assert result.exit_code == 0, result.output
    call_ids = [entry.call_id for entry in SQLiteLedger(ledger.path, read_only=True).entries()]
    lines = result.output.splitlines()
    for call_id in call_ids:
        (line,) = [line for line in lines if call_id in line]
        assert "succeeded" in line and "order:c" in line
    assert sum(bool(re.search(r"call_[0-9a-f]{32}", line)) for line in lines) == 3
