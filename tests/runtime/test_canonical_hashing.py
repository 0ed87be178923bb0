"""Input hashes are the same in every process: the same request is recognised across workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentguard.runtime import MemoryLedger, Runtime, guarded

REPO = Path(__file__).resolve().parents[2]

HASH_SCRIPT = textwrap.dedent(
    """
    import dataclasses, datetime, decimal, enum, json, sys, uuid
    import pydantic
    from agentguard.runtime.hashing import input_hash

    class Colour(enum.Enum):
        RED = "red"

    @dataclasses.dataclass
    class Address:
        street: str
        tags: frozenset

    class Customer(pydantic.BaseModel):
        name: str
        since: datetime.date

    args = {
        "tags": {"gift", "express", "fragile", "insured", "weekend"},
        "nested": [frozenset({"b", "a", "c"}), ("x", 1)],
        "colour": Colour.RED,
        "address": Address("Main St 1", frozenset({"home", "billing", "office"})),
        "customer": Customer(name="Ada", since=datetime.date(2026, 1, 2)),
        "at": datetime.datetime(2026, 11, 29, 2, 0, tzinfo=datetime.timezone.utc),
        "amount": decimal.Decimal("19.90"),
        "blob": b"\\x00\\xffpayload",
        "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    }
    print(input_hash(args))
    """
)


def _run(script: str, seed: int, *args: str) -> str:
    environment = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(REPO)}
    completed = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


def test_the_input_hash_is_the_same_in_every_process() -> None:
    hashes = {_run(HASH_SCRIPT, seed) for seed in (1, 2, 3, 4, 5, 6)}
    assert len(hashes) == 1, hashes


CALL_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from agentguard.runtime import Runtime, guarded, open_ledger

    url, applied_file, explicit = sys.argv[1], sys.argv[2], sys.argv[3] == "explicit"
    runtime = Runtime(ledger=open_ledger(url))
    key = (lambda call: "label:" + call.args["parcel"]) if explicit else None

    @guarded(runtime, risk="write", key=key)
    def print_label(parcel: str, options: set) -> str:
        with open(applied_file, "a") as applied:   # the downstream: every request is applied
            applied.write(parcel + "\\n")
        return "label for " + parcel

    with runtime.run(run_id="run-1", user_id="u1"):
        observation = print_label(parcel="p1", options={"gift", "express", "fragile", "insured"})
    print(json.dumps({"code": observation["code"], "replayed": observation["metadata"]["replayed"]}))
    """
)


@pytest.mark.parametrize("key", ["default", "explicit"])
def test_the_same_request_from_another_process_is_recognised(
    ledger_url: str, key: str, tmp_path: Path
) -> None:
    applied = tmp_path / "applied.txt"
    outcomes = [
        json.loads(_run(CALL_SCRIPT, seed, ledger_url, str(applied), key)) for seed in (11, 12, 13)
    ]
    assert outcomes[0] == {"code": None, "replayed": False}
    # a set argument iterates in another order in each process, yet it is the same request
    assert outcomes[1:] == [{"code": None, "replayed": True}] * 2
    assert applied.read_text().splitlines() == ["p1"]


class Opaque:
    """An object with no defined encoding: its repr() holds a memory address."""


def test_an_argument_without_canonical_form_is_refused_before_anything_runs(
    runtime: Runtime,
) -> None:
    ran: list[Any] = []

    @guarded(runtime, risk="write")
    def send(message: str, attachment: Any) -> str:
        ran.append(attachment)
        return "sent"

    with runtime.run(run_id="r1"):
        observation = send(message="hi", attachment={"files": [Opaque()]})
    assert observation["code"] == "INVALID_ARGUMENTS"
    assert observation["ok"] is False
    assert "attachment['files'][0]" in observation["content"]
    assert "Opaque" in observation["content"]
    assert not ran
    assert runtime.ledger.entries() == []


def test_keys_and_input_hashes_stay_what_earlier_versions_wrote() -> None:
    # A ledger written by an earlier version must still recognise the same request: the
    # default key and the input hash are pinned to the values that version computed.
    runtime = Runtime(ledger=MemoryLedger())

    @guarded(runtime, risk="write")
    def send_invoice(customer_id: str, amount_cents: int, note: str = "") -> dict[str, Any]:
        return {"sent": True}

    with runtime.run(run_id="run-42", user_id="u-7", tenant="acme"):
        first = send_invoice("c-1", 1250, note="thanks")
    with runtime.run(run_id="run-43", user_id="zoë", approved_at="2026-01-02T03:04:05Z"):
        second = send_invoice(customer_id="c-2", amount_cents=99)
    assert first["metadata"]["idempotency_key"] == "agk1_f94698f22fd00685f3503e6b8a609089e426bf91"
    assert first["metadata"]["input_hash"] == (
        "sha256:095e88d23eb39fe41efacc947cd6b05640d45a5b0950bdb76fd70dd7817326b2"
    )
    # a user name outside ASCII takes the general encoder: the same key all the same
    assert second["metadata"]["idempotency_key"] == "agk1_c45ab8e5c3496281028aca601d64e9a355177c54"
    assert second["metadata"]["input_hash"] == (
        "sha256:54d0439b7f690d14a5f99a30357b504a7ff56f9bedfdbf14ae4419762ec8fbbf"
    )


VALUE_OBJECTS_SCRIPT = textwrap.dedent(
    """
    import attrs
    from agentguard.runtime.hashing import input_hash

    class Cart:                      # a plain class: its repr() holds its address
        def __init__(self, cart_id, items):
            self.cart_id = cart_id
            self.items = items

    class Point:
        __slots__ = ("x", "y")
        def __init__(self, x, y):
            self.x, self.y = x, y

    @attrs.define
    class Shipping:
        speed: str
        regions: frozenset

    print(input_hash({
        "cart": Cart("c1", {"apple", "pear", "plum", "fig"}),
        "at": Point(1, 2),
        "shipping": Shipping("express", frozenset({"eu", "us", "uk"})),
    }))
    """
)


def test_plain_objects_and_attrs_instances_hash_by_value_in_every_process() -> None:
    hashes = {_run(VALUE_OBJECTS_SCRIPT, seed) for seed in (1, 2, 3, 4)}
    assert len(hashes) == 1, hashes


class Cart:
    def __init__(self, cart_id: str) -> None:
        self.cart_id = cart_id


class Connection:
    """State that is no value: a lock (a client, a socket, a handle)."""

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()


def test_a_plain_object_argument_repeated_runs_the_body_once(runtime: Runtime) -> None:
    ran: list[str] = []

    @guarded(runtime, risk="write")
    def order(cart: Any) -> str:
        ran.append(cart.cart_id)
        return "ordered"

    with runtime.run(run_id="r1", user_id="u1"):
        first = order(cart=Cart("c1"))
        second = order(cart=Cart("c1"))  # the model's retry builds an equal object
        other = order(cart=Cart("c2"))
    assert first["ok"] and second["ok"] and other["ok"]
    assert second["metadata"]["replayed"] is True
    assert ran == ["c1", "c2"]


def test_an_argument_with_no_value_is_refused_naming_the_parameter_and_the_fix(
    runtime: Runtime,
) -> None:
    ran: list[Any] = []

    @guarded(runtime, risk="write")
    def order(cart_id: str, connection: Any) -> str:
        ran.append(cart_id)
        return "ordered"

    with runtime.run(run_id="r1"):
        observation = order(cart_id="c1", connection=Connection())
    assert observation["code"] == "INVALID_ARGUMENTS"
    assert "connection.lock: a _thread.lock" in observation["content"]
    assert "key=" in observation["content"]
    assert not ran
    assert runtime.ledger.entries() == []


def test_with_its_own_key_a_tool_takes_an_argument_with_no_value(runtime: Runtime) -> None:
    ran: list[str] = []

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    def order(cart_id: str, connection: Any) -> str:
        ran.append(cart_id)
        return "ordered"

    with runtime.run(run_id="r1"):
        first = order(cart_id="c1", connection=Connection())
        second = order(cart_id="c1", connection=Connection())
    assert first["ok"] and second["metadata"]["replayed"] is True
    assert ran == ["c1"]
    (entry,) = runtime.ledger.entries()
    assert entry.args["connection"] == {"$no_canonical_form": f"{__name__}.Connection"}


def test_a_secret_inside_a_value_object_is_not_stored(runtime: Runtime) -> None:
    class Login:
        def __init__(self, user: str, password: str) -> None:
            self.user, self.password = user, password

    @guarded(runtime, risk="write")
    def sign_in(login: Any) -> str:
        return "ok"

    with runtime.run(run_id="r1"):
        assert sign_in(login=Login("ada", "hunter2"))["ok"]
    (entry,) = runtime.ledger.entries()
    assert entry.args["login"] == {"user": "ada", "password": "[REDACTED]"}
