"""Observations name the next step as data; the declared effects and the result are referenced."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from agentguard.runtime import Found, NotFound, Runtime, Unknown, current_call, guarded
from agentguard.runtime.observations import observation_schema
from tests.runtime.downstream import RecordingDownstream


def test_next_actions_side_effects_and_result_refs(runtime: Runtime) -> None:
    downstream = RecordingDownstream()

    @guarded(runtime, risk="read")
    def find_payment(reference: str) -> dict[str, Any]:
        """Look a payment up by its reference (a tool the model may call)."""
        order = downstream.find(reference)
        return {"found": order is not None}

    def check(call: Any) -> Found | NotFound | Unknown:
        return Unknown("the payment provider is slow")

    check.__agentguard__ = find_payment.__agentguard__  # type: ignore[attr-defined]

    @guarded(
        runtime,
        risk="write",
        side_effects=["payment", "message"],
        reconcile=check,
        key=lambda call: f"pay:{call.args['invoice']}",
    )
    def pay(invoice: str, fail: bool = False) -> dict[str, Any]:
        if fail:
            raise TimeoutError("read timed out")
        return downstream.create(current_call().idempotency_key, invoice=invoice)

    with runtime.run(run_id="r1"):
        paid = pay(invoice="i1")
        replayed = pay(invoice="i1")
        mismatch = pay(invoice="i1", fail=True)
        uncertain = pay(invoice="i2", fail=True)
        invalid = pay(invoice="i3", surplus=1)
    schema = observation_schema()
    for observation in (paid, replayed, mismatch, uncertain, invalid):
        jsonschema.validate(observation, schema)
    assert paid["metadata"]["next_action"] == {"action": "none", "tool": None}
    assert paid["metadata"]["sideEffects"] == ["payment", "message"]
    entry = runtime.ledger.get(paid["metadata"]["call_id"])
    assert entry is not None and entry.side_effects == ["payment", "message"]
    assert paid["metadata"]["resultRef"] == entry.result_ref
    assert replayed["metadata"]["resultRef"] == entry.result_ref
    assert mismatch["metadata"]["next_action"]["action"] == "ask_user"
    assert uncertain["metadata"]["next_action"] == {"action": "call_lookup", "tool": "find_payment"}
    assert invalid["metadata"]["next_action"]["action"] == "fix_arguments"


def test_an_unknown_side_effect_is_refused(runtime: Runtime) -> None:
    with pytest.raises(ValueError, match="teleport"):
        guarded(runtime, risk="write", side_effects=["teleport"])


def test_a_large_result_is_referenced_not_inlined(runtime: Runtime) -> None:
    @guarded(runtime, risk="read", max_output_bytes=1_000)
    def export(table: str) -> list[int]:
        return list(range(10_000))

    with runtime.run(run_id="r1"):
        observation = export(table="t")
    entry = runtime.ledger.get(observation["metadata"]["call_id"])
    assert entry is not None and entry.result == list(range(10_000))
    assert observation["code"] == "OUTPUT_TOO_LARGE"
    assert len(observation["result"]) <= 1_000
    assert observation["metadata"]["resultRef"] == entry.result_ref
    assert observation["metadata"]["call_id"] in observation["content"]
