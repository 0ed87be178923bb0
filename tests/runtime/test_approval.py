"""A call that needs approval waits for it: a person approves later, by API or CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentguard.ledger_cli import ledger_app
from agentguard.runtime import Runtime, SQLiteLedger, Status, current_call, guarded
from tests.runtime.downstream import RecordingDownstream


def _delete_tool(runtime: Runtime, downstream: RecordingDownstream, **options: Any) -> Any:
    @guarded(runtime, risk="destructive", key=lambda call: f"delete:{call.args['repo']}", **options)
    def delete_repository(repo: str) -> dict[str, Any]:
        return downstream.create(current_call().idempotency_key, repo=repo)

    return delete_repository


def test_a_destructive_call_waits_for_a_named_approval_then_runs_once(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    delete_repository = _delete_tool(runtime, downstream)
    with runtime.run(run_id="r1"):
        waiting = delete_repository(repo="legacy")
        asked_again = delete_repository(repo="legacy")
    assert waiting["code"] == asked_again["code"] == "APPROVAL_REQUIRED"
    assert waiting["metadata"]["status"] == "planned" and not downstream.applied
    call_id = waiting["metadata"]["call_id"]

    approved = runtime.approve(call_id, by="alice", note="ticket OPS-12")
    assert approved.status is Status.APPROVED and approved.approved_by == "alice"
    assert approved.approved_on is not None
    with runtime.run(run_id="r1"):
        ran = delete_repository(repo="legacy")
        again = delete_repository(repo="legacy")
    assert ran["ok"] and not ran["metadata"]["replayed"]
    assert again["metadata"]["replayed"]
    assert len(downstream.applied) == 1
    entry = runtime.ledger.get(call_id)
    assert entry is not None and entry.approved_by == "alice"
    events = [(event.to_status, event.actor) for event in runtime.ledger.events(call_id)]
    assert ("approved", "alice") in events


def test_destructive_tools_can_be_configured_to_run_without_approval(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    delete_repository = _delete_tool(runtime, downstream, replay="never")
    with runtime.run(run_id="r1"):
        assert delete_repository(repo="scratch")["ok"]
    assert len(downstream.applied) == 1


def test_an_approval_callback_is_recorded_as_the_approver(runtime: Runtime) -> None:
    downstream = RecordingDownstream()

    def on_call_policy(call: Any) -> bool:
        return True

    delete_repository = _delete_tool(runtime, downstream, approve=on_call_policy)
    with runtime.run(run_id="r1"):
        observation = delete_repository(repo="tmp")
    entry = runtime.ledger.get(observation["metadata"]["call_id"])
    assert entry is not None and entry.approved_by == "callback:on_call_policy"


def test_ledger_approve_from_the_command_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    runtime = Runtime(ledger=SQLiteLedger(tmp_path / "ledger.db"))
    downstream = RecordingDownstream()
    delete_repository = _delete_tool(runtime, downstream)
    with runtime.run(run_id="r1"):
        call_id = delete_repository(repo="legacy")["metadata"]["call_id"]

    result = CliRunner().invoke(
        ledger_app, ["approve", call_id, "--by", "bob", "--ledger", url, "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["approved_by"] == "bob"
    with runtime.run(run_id="r1"):
        assert delete_repository(repo="legacy")["ok"]
    assert len(downstream.applied) == 1

    refused = CliRunner().invoke(ledger_app, ["approve", call_id, "--by", "bob", "--ledger", url])
    assert refused.exit_code == 1 and "only calls waiting for approval" in refused.output
