"""A key names one request: other arguments are a mismatch whatever the first call's status;
bad input of every kind gets an observation with its code, never a raw exception."""

from __future__ import annotations

from typing import Any

import pytest

from agentguard.runtime import Runtime, Status, ToolError, current_call, guarded
from tests.runtime.downstream import RecordingDownstream


@pytest.mark.parametrize("failure", ["definite", "reconciled"])
def test_other_arguments_under_a_failed_key_are_a_mismatch(runtime: Runtime, failure: str) -> None:
    downstream = RecordingDownstream()
    attempts: list[str] = []

    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"transfer:{call.run_id}",
        reconcile=downstream.lookup,
    )
    def transfer(amount: int) -> dict[str, Any]:
        attempts.append(str(amount))
        if len(attempts) == 1:
            if failure == "definite":
                raise ToolError("PERMISSION_DENIED", "over the limit", sent=False)
            raise TimeoutError("read timed out")  # uncertain; the lookup finds nothing: failed
        return downstream.create(current_call().idempotency_key, amount=amount)

    with runtime.run(run_id="r1"):
        first = transfer(amount=100)
        second = transfer(amount=900)
    assert first["ok"] is False
    entry = runtime.ledger.get(first["metadata"]["call_id"])
    assert entry is not None and entry.status is Status.FAILED
    assert second["code"] == "IDEMPOTENCY_MISMATCH"
    assert attempts == ["100"] and not downstream.applied
    stored = runtime.ledger.get(first["metadata"]["call_id"])
    assert stored is not None and stored.args == {"amount": 100}
