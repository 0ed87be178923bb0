"""Every kind of observation a guarded call returns validates against the shipped JSON Schema."""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

import jsonschema
import pytest

from agentguard.runtime import ErrorCode, Found, NotFound, Runtime, ToolError, Unknown, guarded
from agentguard.runtime.observations import observation_schema


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = observation_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _observations(runtime: Runtime) -> dict[str, dict[str, Any]]:
    """One real observation of each kind, keyed by what happened."""
    created: dict[str, dict[str, Any]] = {}
    lookup_answer: dict[str, Any] = {"verdict": Unknown("service still syncing")}
    entered, release = threading.Event(), threading.Event()

    def find_order(call: Any) -> Any:
        return lookup_answer["verdict"]

    @guarded(runtime, risk="write", key=("user_id", "cart_id"), reconcile=find_order)
    def create_order(cart_id: str, quantity: int = 1) -> dict[str, Any]:
        """Create an order."""
        if cart_id == "timeout":
            raise TimeoutError("read timed out")
        if cart_id == "denied":
            raise ToolError("PERMISSION_DENIED", "not your cart", sent="yes")
        if cart_id == "slow":
            entered.set()
            release.wait(10)
        order = {"order_id": f"o{len(created) + 1}", "cart_id": cart_id, "quantity": quantity}
        created[cart_id] = order
        return order

    @guarded(runtime, risk="destructive", replay="ask")
    def delete_repo(name: str) -> str:
        return name

    @guarded(runtime, risk="read", max_output_bytes=32)
    def read_log(lines: int) -> str:
        return "x" * lines

    seen: dict[str, dict[str, Any]] = {}
    with runtime.run(run_id="r1", user_id="u1"):
        seen["success"] = create_order(cart_id="c1")
        seen["replayed"] = create_order(cart_id="c1")
        seen["mismatch"] = create_order(cart_id="c1", quantity=5)
        seen["uncertain"] = create_order(cart_id="timeout")
        seen["failed"] = create_order(cart_id="denied")
        lookup_answer["verdict"] = NotFound()
        seen["failed after reconcile"] = create_order(cart_id="timeout")
        seen["approval required"] = delete_repo(name="prod")
        seen["invalid arguments"] = create_order(cart="c9")
        seen["output too large"] = read_log(lines=500)
        lookup_answer["verdict"] = Found({"order_id": "o-late"})

        def slow() -> None:
            with runtime.run(run_id="r1", user_id="u1"):
                seen["slow"] = create_order(cart_id="slow")

        worker = threading.Thread(target=slow)
        worker.start()
        entered.wait(10)
        seen["duplicate in progress"] = create_order(cart_id="slow")
        release.set()
        worker.join()
    return seen


def test_real_observations_validate(runtime: Runtime, validator: Any) -> None:
    seen = _observations(runtime)
    expected_codes = {
        "success": None,
        "replayed": None,
        "mismatch": "IDEMPOTENCY_MISMATCH",
        "uncertain": "SIDE_EFFECT_UNCERTAIN",
        "failed": "PERMISSION_DENIED",
        "failed after reconcile": "TIMEOUT",
        "approval required": "APPROVAL_REQUIRED",
        "invalid arguments": "INVALID_ARGUMENTS",
        "output too large": "OUTPUT_TOO_LARGE",
        "duplicate in progress": "DUPLICATE_IN_PROGRESS",
        "slow": None,
    }
    assert {name: obs["code"] for name, obs in seen.items()} == expected_codes
    assert seen["replayed"]["metadata"]["replayed"] is True
    for name, observation in seen.items():
        json.dumps(observation)  # JSON-serialisable as handed to a framework
        errors = sorted(validator.iter_errors(observation), key=str)
        assert not errors, f"{name}: {[error.message for error in errors]}"


def test_the_schema_catches_contract_breaks(runtime: Runtime, validator: Any) -> None:
    seen = _observations(runtime)
    broken = []
    uncertain_but_retryable = copy.deepcopy(seen["uncertain"])
    uncertain_but_retryable["metadata"]["retryable"] = True
    broken.append(uncertain_but_retryable)
    success_without_key = copy.deepcopy(seen["success"])
    del success_without_key["metadata"]["idempotency_key"]
    broken.append(success_without_key)
    failure_with_result = copy.deepcopy(seen["failed"])
    failure_with_result["result"] = {"order_id": "o1"}
    broken.append(failure_with_result)
    ok_with_error = copy.deepcopy(seen["success"])
    ok_with_error["code"] = "TIMEOUT"
    broken.append(ok_with_error)
    unknown_code = copy.deepcopy(seen["failed"])
    unknown_code["code"] = "OOPS"
    broken.append(unknown_code)
    for observation in broken:
        assert not validator.is_valid(observation)


def test_the_schema_knows_every_error_code() -> None:
    codes = observation_schema()["$defs"]["errorCode"]["enum"]
    assert sorted(codes) == sorted(code.value for code in ErrorCode)
