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


def _no_key(call: Any) -> str:
    raise KeyError("cart_id")


@pytest.mark.parametrize(
    "key", [_no_key, lambda call: None, lambda call: ""], ids=["raises", "none", "empty"]
)
def test_a_key_function_that_fails_is_an_observation(runtime: Runtime, key: Any) -> None:
    ran: list[str] = []

    @guarded(runtime, risk="write", key=key)
    def create_order(cart_id: str) -> str:
        ran.append(cart_id)
        return "ordered"

    with runtime.run(run_id="r1"):
        observation = create_order(cart_id="c1")
    assert observation["ok"] is False and observation["code"] == "TOOL_CRASH"
    assert "key" in observation["content"] and "Nothing was done" in observation["content"]
    assert not ran and runtime.ledger.entries() == []


@pytest.mark.parametrize(
    "arguments",
    [{"filters": {1: "one", "1": "also one"}}, {"note": "caf\udce9"}],
    ids=["colliding-keys", "lone-surrogate"],
)
def test_arguments_without_one_encoding_are_invalid_arguments(
    runtime: Runtime, arguments: dict[str, Any]
) -> None:
    @guarded(runtime, risk="write")
    def search(**options: Any) -> str:
        return "done"

    with runtime.run(run_id="r1"):
        observation = search(**arguments)
    assert observation["code"] == "INVALID_ARGUMENTS"
    assert runtime.ledger.entries() == []


def test_dict_arguments_with_mixed_key_types_are_one_request(runtime: Runtime) -> None:
    ran: list[Any] = []

    @guarded(runtime, risk="write")
    def tag(labels: dict[Any, str]) -> str:
        ran.append(labels)
        return "tagged"

    with runtime.run(run_id="r1"):
        first = tag(labels={1: "a", "b": "c"})
        second = tag(labels={"b": "c", 1: "a"})
    assert first["ok"] and second["metadata"]["replayed"]
    assert len(ran) == 1


class Handle:
    def __repr__(self) -> str:
        return "Handle(fd=7)"


def test_a_result_that_cannot_be_encoded_is_recorded_as_its_text(runtime: Runtime) -> None:
    circular: list[Any] = []
    circular.append(circular)
    results = iter([Handle(), circular, "caf\udce9"])

    @guarded(runtime, risk="write", idempotency="idempotent")
    def open_file(name: str) -> Any:
        return next(results)

    with runtime.run(run_id="r1"):
        observations = [open_file(name=str(index)) for index in range(3)]
    for observation in observations:
        assert observation["ok"] is True, observation
        entry = runtime.ledger.get(observation["metadata"]["call_id"])
        assert entry is not None and entry.status is Status.SUCCEEDED
    assert observations[0]["result"] == "Handle(fd=7)"
    assert observations[1]["result"]["unencodable_result"] == "list"
    assert "not JSON" in observations[1]["content"]
    assert observations[2]["result"] == "caf\udce9"


def test_a_huge_result_is_previewed_by_default_and_kept_whole(runtime: Runtime) -> None:
    @guarded(runtime, risk="read")
    def export(table: str) -> str:
        return "x" * 20_000_000

    with runtime.run(run_id="r1"):
        observation = export(table="orders")
    assert observation["code"] == "OUTPUT_TOO_LARGE" and observation["ok"] is True
    assert len(observation["result"]) <= 100_000
    entry = runtime.ledger.get(observation["metadata"]["call_id"])
    assert entry is not None and len(entry.result) == 20_000_000
