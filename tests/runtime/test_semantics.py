"""DESIGN §5 semantics, on every ledger backend."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

from agentguard.runtime import (
    ErrorCode,
    Found,
    NotFound,
    RetryPolicy,
    Runtime,
    Status,
    ToolError,
    Unknown,
    current_call,
    guarded,
)
from agentguard.runtime.testing import FaultInjector


def order_key(call: Any) -> str:
    return f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}:{call.approved_at}"


class Orders:
    """A downstream that does not deduplicate: every create is a new order."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def create(self, cart_id: str, key: str) -> dict[str, Any]:
        with self.lock:
            order = {"order_id": f"o{len(self.created) + 1}", "cart_id": cart_id, "key": key}
            self.created.append(order)
            return order

    def find(self, key: str) -> dict[str, Any] | None:
        return next((order for order in self.created if order["key"] == key), None)


def make_tool(runtime: Runtime, orders: Orders, **options: Any) -> Any:
    def find_order(call: Any) -> Found | NotFound | Unknown:
        order = orders.find(call.idempotency_key)
        return Found(order) if order else NotFound()

    options.setdefault("reconcile", find_order)
    options.setdefault("idempotency", "non_idempotent")

    @guarded(runtime, risk="write", key=order_key, **options)
    def create_order(cart_id: str, note: str = "") -> dict[str, Any]:
        """Create an order for a cart."""
        return orders.create(cart_id, current_call().idempotency_key)

    return create_order


def test_success_returns_a_json_observation_and_records_the_call(runtime: Runtime) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders, replay="never")
    with runtime.run(run_id="r1", user_id="u1", approved_at="t0"):
        observation = create_order(cart_id="c1")
    json.dumps(observation)
    assert observation["ok"] is True
    assert observation["code"] is None
    assert observation["result"]["order_id"] == "o1"
    metadata = observation["metadata"]
    assert metadata["tool_name"] == "create_order"
    assert metadata["idempotency_key"] == "order:u1:c1:r1:t0"
    assert metadata["status"] == "succeeded"
    assert metadata["retryable"] is False
    entry = runtime.ledger.get(metadata["call_id"])
    assert entry is not None and entry.status is Status.SUCCEEDED
    assert entry.started_at is not None and entry.finished_at is not None
    assert entry.result == observation["result"]
    statuses = [event.to_status for event in runtime.ledger.events(entry.call_id)]
    assert statuses == ["planned", "started", "succeeded"]


def test_started_is_durable_before_the_body_runs(ledger_factory: Any) -> None:
    runtime = Runtime(ledger=ledger_factory())
    observer = ledger_factory()  # another connection, as another process would see it
    seen: list[str] = []

    @guarded(runtime, risk="write", key=lambda call: f"k:{call.args['n']}")
    def write(n: int) -> int:
        entry = observer.find("write", f"k:{n}")
        seen.append(entry.status.value if entry else "absent")
        return n

    with runtime.run(run_id="r"):
        for n in range(5):
            write(n=n)
    assert seen == ["started"] * 5


def test_a_second_call_replays_the_result_without_running_the_body(runtime: Runtime) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders)
    with runtime.run(run_id="r1", user_id="u1"):
        first = create_order(cart_id="c1")
        second = create_order("c1")
    assert len(orders.created) == 1
    assert second["ok"] is True and second["metadata"]["replayed"] is True
    assert second["result"] == first["result"]
    assert second["metadata"]["call_id"] == first["metadata"]["call_id"]
    assert "nothing was done again" in second["content"]


def test_same_key_with_other_arguments_is_a_mismatch(runtime: Runtime) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders)
    with runtime.run(run_id="r1", user_id="u1"):
        create_order(cart_id="c1", note="first")
        other = create_order(cart_id="c1", note="second")
    assert other["code"] == "IDEMPOTENCY_MISMATCH"
    assert other["metadata"]["retryable"] is False
    assert len(orders.created) == 1


def test_timeout_after_apply_is_uncertain_and_never_reruns(runtime: Runtime) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders, reconcile=None)
    faults = FaultInjector(runtime).timeout_after_apply("create_order")
    with runtime.run(run_id="r1", user_id="u1"):
        observations = [create_order(cart_id="c1") for _ in range(4)]
    assert len(orders.created) == 1
    assert faults.applied["create_order"] == 1
    for observation in observations:
        assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
        assert observation["metadata"]["retryable"] is False
        assert observation["metadata"]["status"] == "uncertain"
        assert "Do not call create_order again" in observation["content"]
    assert len({o["metadata"]["call_id"] for o in observations}) == 1


def test_reconcile_found_settles_as_succeeded(runtime: Runtime) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders)
    FaultInjector(runtime).timeout_after_apply("create_order")
    with runtime.run(run_id="r1", user_id="u1"):
        first = create_order(cart_id="c1")
        again = create_order(cart_id="c1")
    assert first["ok"] is True and first["metadata"]["reconciled"] is True
    assert first["result"] == orders.created[0]
    assert "find_order" in first["content"]
    assert again["metadata"]["replayed"] is True
    assert len(orders.created) == 1
    events = runtime.ledger.events(first["metadata"]["call_id"])
    assert [(e.from_status, e.to_status) for e in events][-2:] == [
        ("started", "uncertain"),
        ("uncertain", "succeeded"),
    ]
    assert events[-1].actor == "reconciler"


@pytest.mark.parametrize("replay", ["never", "auto"])
def test_reconcile_not_found_follows_the_replay_policy(runtime: Runtime, replay: str) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders, replay=replay, idempotency="conditional")
    lost_before_apply = {"count": 0}

    def drop_first_request(call: Any) -> None:
        if lost_before_apply["count"] == 0:
            lost_before_apply["count"] += 1
            raise TimeoutError("read timed out")  # sent, never applied

    faults = FaultInjector(runtime)
    faults._add("create_order", "before", drop_first_request, 1)
    with runtime.run(run_id="r1", user_id="u1"):
        first = create_order(cart_id="c1")
        if replay == "never":
            assert first["ok"] is False and first["metadata"]["status"] == "failed"
            assert "did not take effect" in first["content"]
            assert first["metadata"]["retryable"] is True
            assert orders.created == []
            second = create_order(cart_id="c1")  # the model asks again: re-armed, same key
            assert second["ok"] is True
        else:
            assert first["ok"] is True  # replayed once, same key
    assert len(orders.created) == 1
    assert orders.created[0]["key"] == "order:u1:c1:r1:None"


def test_reconcile_unknown_leaves_the_call_uncertain(runtime: Runtime) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders, reconcile=lambda call: Unknown("index lagging"))
    FaultInjector(runtime).timeout_after_apply("create_order")
    with runtime.run(run_id="r1", user_id="u1"):
        observation = create_order(cart_id="c1")
        again = create_order(cart_id="c1")
    assert observation["code"] == again["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert (
        runtime.ledger.entries(status="uncertain")[0].call_id == observation["metadata"]["call_id"]
    )
    assert len(orders.created) == 1


def test_concurrent_duplicates_run_the_body_once(runtime: Runtime) -> None:
    orders = Orders()
    release = threading.Event()

    @guarded(runtime, risk="write", key=order_key)
    def create_order(cart_id: str) -> dict[str, Any]:
        release.wait(5)
        return orders.create(cart_id, current_call().idempotency_key)

    # The body is held until the five duplicates have been answered (5 s at most), so a
    # slow claim on a loaded machine cannot arrive after the first call finished.
    answered = {"duplicates": 0}
    lock = threading.Lock()

    def call(cart_id: str) -> dict[str, Any]:
        observation = create_order(cart_id=cart_id)
        if observation["code"] == "DUPLICATE_IN_PROGRESS":
            with lock:
                answered["duplicates"] += 1
                if answered["duplicates"] == 5:
                    release.set()
        return observation

    faults = FaultInjector(runtime)
    with runtime.run(run_id="r1", user_id="u1"):
        results = faults.concurrent(call, 6, cart_id="c1")
    assert len(orders.created) == 1
    codes = sorted(str(result["code"]) for result in results)
    assert codes.count("None") == 1
    assert codes.count("DUPLICATE_IN_PROGRESS") == 5
    duplicate = next(r for r in results if r["code"] == "DUPLICATE_IN_PROGRESS")
    assert "Do not call it again" in duplicate["content"]


def test_retries_only_listed_codes_not_sent_until_success(runtime: Runtime) -> None:
    calls = {"n": 0}

    @guarded(
        runtime,
        risk="write",
        key=("user_id", "item"),
        retry=RetryPolicy(max_attempts=3, backoff_ms=1, retry_on={"TRANSIENT_NETWORK"}),
    )
    def reserve(item: str) -> str:
        calls["n"] += 1
        if calls["n"] < 3:
            raise ConnectionRefusedError("refused")
        return "reserved"

    with runtime.run(run_id="r1", user_id="u1"):
        observation = reserve(item="x")
    assert observation["ok"] is True and observation["result"] == "reserved"
    assert observation["metadata"]["attempts"] == 3
    assert calls["n"] == 3


def test_no_new_attempt_once_a_non_idempotent_request_may_have_been_sent(runtime: Runtime) -> None:
    calls = {"n": 0}

    @guarded(
        runtime,
        risk="write",
        retry=RetryPolicy(max_attempts=5, backoff_ms=1, retry_on={"TRANSIENT_NETWORK"}),
    )
    def send_email(to: str) -> None:
        calls["n"] += 1
        raise ConnectionResetError("reset after the request was written")

    with runtime.run(run_id="r1", user_id="u1"):
        observation = send_email(to="a@example.com")
    assert calls["n"] == 1
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert observation["metadata"]["cause"] == "TRANSIENT_NETWORK"


def test_unlisted_codes_are_not_retried_and_definite_failures_fail(runtime: Runtime) -> None:
    calls = {"n": 0}

    @guarded(runtime, risk="write", retry=RetryPolicy(max_attempts=5, backoff_ms=1))
    def update(record_id: str) -> None:
        calls["n"] += 1
        raise ToolError(ErrorCode.PERMISSION_DENIED, "token lacks orders:write", sent="yes")

    with runtime.run(run_id="r1"):
        observation = update(record_id="1")
    assert calls["n"] == 1
    assert observation["code"] == "PERMISSION_DENIED"
    assert observation["metadata"]["status"] == "failed"
    assert observation["metadata"]["retryable"] is False


def test_ask_requires_approval_before_running(runtime: Runtime) -> None:
    ran: list[str] = []
    decisions: list[bool] = []

    def approver(call: Any) -> bool:
        return decisions.pop(0) if decisions else False

    @guarded(runtime, risk="destructive", replay="ask", approve=approver, key=("name",))
    def delete_repo(name: str) -> str:
        ran.append(name)
        return "deleted"

    with runtime.run(run_id="r1", user_id="u1"):
        refused = delete_repo(name="prod")
        assert refused["code"] == "APPROVAL_REQUIRED" and ran == []
        assert refused["metadata"]["status"] == "planned"
        decisions.append(True)
        approved = delete_repo(name="prod")
    assert approved["ok"] is True and ran == ["prod"]
    statuses = [e.to_status for e in runtime.ledger.events(approved["metadata"]["call_id"])]
    assert statuses == ["planned", "approved", "started", "succeeded"]


def test_recover_settles_calls_of_dead_workers(ledger_factory: Any) -> None:
    orders = Orders()
    runtime = Runtime(ledger=ledger_factory(), lease_s=0.05)
    create_order = make_tool(runtime, orders)
    faults = FaultInjector(runtime)
    from agentguard.runtime import SimulatedCrash

    with runtime.run(run_id="r1", user_id="u1"):
        faults.crash_after_apply("create_order")
        with pytest.raises(SimulatedCrash):
            create_order(cart_id="applied")
        faults.crash_after_started("create_order")
        with pytest.raises(SimulatedCrash):
            create_order(cart_id="not-applied")
    assert len(runtime.ledger.entries(status="started")) == 2
    # a new process: the same ledger, the same tools registered
    restarted = Runtime(ledger=ledger_factory())
    create_again = make_tool(restarted, orders)
    time.sleep(0.06)
    report = restarted.recover()
    assert (report.expired, report.succeeded, report.failed, report.uncertain) == (2, 1, 1, 0)
    with restarted.run(run_id="r1", user_id="u1"):
        assert create_again(cart_id="applied")["metadata"]["replayed"] is True
        assert create_again(cart_id="not-applied")["ok"] is True
    assert sorted(order["cart_id"] for order in orders.created) == ["applied", "not-applied"]


def test_an_expired_lease_seen_by_a_duplicate_is_reconciled(ledger_factory: Any) -> None:
    orders = Orders()
    runtime = Runtime(ledger=ledger_factory())
    # a lease long enough that a loaded machine does not let it run out before the duplicate
    create_order = make_tool(runtime, orders, lease_s=0.5)
    from agentguard.runtime import SimulatedCrash

    FaultInjector(runtime).crash_after_apply("create_order")
    with runtime.run(run_id="r1", user_id="u1"):
        with pytest.raises(SimulatedCrash):
            create_order(cart_id="c1")
        assert create_order(cart_id="c1")["code"] == "DUPLICATE_IN_PROGRESS"
        time.sleep(0.55)
        settled = create_order(cart_id="c1")
    assert settled["ok"] is True and settled["metadata"]["reconciled"] is True
    assert len(orders.created) == 1


def test_async_tools_share_the_semantics(runtime: Runtime) -> None:
    orders = Orders()

    def find_order(call: Any) -> Found | NotFound:
        order = orders.find(call.idempotency_key)
        return Found(order) if order else NotFound()

    @guarded(runtime, risk="write", key=order_key, reconcile=find_order, timeout_s=0.05)
    async def create_order(cart_id: str) -> dict[str, Any]:
        """Create an order."""
        order = orders.create(cart_id, current_call().idempotency_key)
        if cart_id == "slow":
            await asyncio.sleep(1)  # committed, but the answer comes too late
        return order

    async def scenario() -> list[dict[str, Any]]:
        async with runtime.run(run_id="r1", user_id="u1"):
            return [
                await create_order(cart_id="c1"),
                await create_order(cart_id="c1"),
                await create_order(cart_id="slow"),
                await create_order(cart_id="slow"),
            ]

    fast, fast_again, slow, slow_again = asyncio.run(scenario())
    assert fast["ok"] and fast_again["metadata"]["replayed"]
    assert slow["ok"] and slow["metadata"]["reconciled"]
    assert slow_again["metadata"]["replayed"]
    assert len(orders.created) == 2


def test_sync_deadline_becomes_uncertain_and_a_late_success_settles_it(runtime: Runtime) -> None:
    done = threading.Event()

    @guarded(runtime, risk="write", timeout_s=0.05)
    def slow_write(value: str) -> str:
        time.sleep(0.2)
        done.set()
        return value

    with runtime.run(run_id="r1", user_id="u1"):
        observation = slow_write(value="v")
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert observation["metadata"]["cause"] == "TIMEOUT"
    done.wait(2)
    for _ in range(100):
        entry = runtime.ledger.get(observation["metadata"]["call_id"])
        if entry is not None and entry.status is Status.SUCCEEDED:
            break
        time.sleep(0.01)
    assert entry is not None and entry.status is Status.SUCCEEDED and entry.result == "v"


def test_methods_are_guarded_without_self_in_the_arguments(runtime: Runtime) -> None:
    class Shop:
        def __init__(self) -> None:
            self.created = 0

        @guarded(runtime, risk="write", key=("user_id", "cart_id"))
        def checkout(self, cart_id: str) -> str:
            """Check out a cart."""
            self.created += 1
            return f"order-for-{cart_id}"

    shop = Shop()
    with runtime.run(run_id="r1", user_id="u1"):
        first = shop.checkout(cart_id="c1")
        second = shop.checkout("c1")
    assert first["result"] == "order-for-c1" and second["metadata"]["replayed"]
    assert shop.created == 1
    assert runtime.ledger.get(first["metadata"]["call_id"]).args == {"cart_id": "c1"}  # type: ignore[union-attr]


def test_secrets_are_stored_redacted(runtime: Runtime) -> None:
    @guarded(runtime, risk="network", redact=("iban",))
    def pay(amount: int, iban: str, api_key: str, metadata: dict[str, Any]) -> str:
        return "paid"

    with runtime.run(run_id="r1"):
        observation = pay(
            amount=5, iban="DE00 1234", api_key="sk_live_x", metadata={"password": "p"}
        )
    entry = runtime.ledger.get(observation["metadata"]["call_id"])
    assert entry is not None
    stored = json.dumps(entry.args)
    for secret in ("DE00 1234", "sk_live_x", '"p"'):
        assert secret not in stored
    assert entry.args["amount"] == 5
    assert entry.input_hash.startswith("sha256:")


def test_invalid_arguments_touch_nothing(runtime: Runtime) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders)
    with runtime.run(run_id="r1"):
        observation = create_order(wrong="x")
    assert observation["code"] == "INVALID_ARGUMENTS"
    assert runtime.ledger.entries() == []


def test_calls_outside_a_run_are_refused(runtime: Runtime) -> None:
    create_order = make_tool(runtime, Orders())
    with pytest.raises(RuntimeError, match=r"runtime\.run"):
        create_order(cart_id="c1")


def test_the_default_key_is_scoped_to_the_run_and_user(runtime: Runtime) -> None:
    orders = Orders()

    @guarded(runtime, risk="write")
    def create_order(cart_id: str) -> dict[str, Any]:
        return orders.create(cart_id, current_call().idempotency_key)

    with runtime.run(run_id="r1", user_id="u1"):
        a = create_order(cart_id="c1")
        b = create_order(cart_id="c1")
    with runtime.run(run_id="r2", user_id="u1"):
        c = create_order(cart_id="c1")
    assert a["metadata"]["idempotency_key"] == b["metadata"]["idempotency_key"]
    assert a["metadata"]["idempotency_key"] != c["metadata"]["idempotency_key"]
    assert a["metadata"]["idempotency_key"].startswith("agk1_")
    assert len(orders.created) == 2


def test_entries_query_filters(runtime: Runtime) -> None:
    orders = Orders()
    create_order = make_tool(runtime, orders)
    with runtime.run(run_id="r1", user_id="u1"):
        first = create_order(cart_id="c1")
        create_order(cart_id="c2")
    with runtime.run(run_id="r2", user_id="u1"):
        create_order(cart_id="c1")
    assert len(runtime.ledger.entries(run_id="r1")) == 2
    assert len(runtime.ledger.entries(tool_name="create_order", status="succeeded")) == 3
    same_input = runtime.ledger.entries(input_hash=first["metadata"]["input_hash"])
    assert {entry.run_id for entry in same_input} == {"r1", "r2"}
    assert runtime.ledger.entries(status=["uncertain", "started"]) == []


def test_a_guarded_call_costs_two_commits_on_sqlite(tmp_path: Any) -> None:
    from agentguard.runtime import SQLiteLedger

    ledger = SQLiteLedger(tmp_path / "l.db")
    runtime = Runtime(ledger=ledger)
    statements: list[str] = []
    ledger._connection().set_trace_callback(statements.append)

    @guarded(runtime, risk="write")
    def noop(value: int) -> int:
        return value

    with runtime.run(run_id="r1"):
        noop(value=1)
    # Each write is one statement in autocommit mode (its own durable transaction): the
    # write-ahead insert, then the outcome with its history; nothing else is executed.
    assert [s.split()[0] for s in statements] == ["INSERT", "UPDATE"]
    assert not ledger._connection().in_transaction
    ledger.close()


def test_async_duplicates_racing_on_one_loop_run_the_body_once(runtime: Runtime) -> None:
    entered = {"n": 0}

    @guarded(runtime, risk="write", key=("user_id", "cart_id"))
    async def create_order(cart_id: str) -> str:
        entered["n"] += 1
        await asyncio.sleep(0.1)
        return "created"

    async def scenario() -> list[dict[str, Any]]:
        async with runtime.run(run_id="r1", user_id="u1"):
            return list(await asyncio.gather(*(create_order(cart_id="c1") for _ in range(5))))

    observations = asyncio.run(scenario())
    assert entered["n"] == 1
    assert sorted(str(o["code"]) for o in observations) == ["DUPLICATE_IN_PROGRESS"] * 4 + ["None"]


def test_retries_stop_at_the_total_deadline(runtime: Runtime) -> None:
    attempts = {"n": 0}
    slept: list[float] = []
    runtime.sleep = slept.append

    @guarded(
        runtime,
        risk="read",
        retry=RetryPolicy(max_attempts=50, backoff_ms=40, max_backoff_ms=40, deadline_s=0.2),
    )
    def flaky_read(item: str) -> str:
        attempts["n"] += 1
        time.sleep(0.01)
        raise ToolError("RATE_LIMIT", "slow down", sent="no", retry_after_s=0.02)

    with runtime.run(run_id="r1"):
        observation = flaky_read(item="x")
    assert observation["code"] == "RATE_LIMIT" and observation["metadata"]["retryable"] is True
    # the sleeps are faked, so only the bodies' 10 ms count against the 200 ms deadline
    assert 1 < attempts["n"] < 25
    assert all(0.02 <= delay <= 0.04 for delay in slept)


def test_too_large_output_is_previewed_and_the_call_stands(runtime: Runtime) -> None:
    runs = {"n": 0}

    @guarded(runtime, risk="write", max_output_bytes=64)
    def export_report(report_id: str) -> list[str]:
        runs["n"] += 1
        return [f"row {index}" for index in range(100)]

    with runtime.run(run_id="r1"):
        observation = export_report(report_id="q3")
        again = export_report(report_id="q3")
    assert observation["ok"] is True and observation["code"] == "OUTPUT_TOO_LARGE"
    assert len(observation["result"].encode()) <= 64
    assert observation["metadata"]["status"] == "succeeded"
    assert "Do not call export_report again" in observation["content"]
    assert again["code"] == "OUTPUT_TOO_LARGE" and again["metadata"]["replayed"] is True
    assert runs["n"] == 1
    stored = runtime.ledger.get(observation["metadata"]["call_id"])
    assert stored is not None and len(stored.result) == 100


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1,), {}),
        ((1, 5), {}),
        ((), {"a": 1, "c": 4}),
        ((1,), {"c": 9, "b": 2}),
        ((), {}),  # missing a
        ((1,), {"a": 1}),  # a twice
        ((1, 2, 3), {}),  # c is keyword-only
        ((1,), {"d": 1}),  # unknown
    ],
)
def test_arguments_are_bound_exactly_as_python_binds_them(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    import inspect

    from agentguard.runtime import MemoryLedger

    runtime = Runtime(ledger=MemoryLedger())

    def tool(a: int, b: int = 2, *, c: int = 3) -> int:
        return a + b + c

    guarded_tool = guarded(runtime, risk="read")(tool)
    with runtime.run(run_id="r1"):
        observation = guarded_tool(*args, **kwargs)
    try:
        bound = inspect.signature(tool).bind(*args, **kwargs)
    except TypeError as exc:
        assert observation["code"] == "INVALID_ARGUMENTS"
        assert str(exc) in observation["content"]
        return
    bound.apply_defaults()
    assert observation["ok"] is True and observation["result"] == tool(*args, **kwargs)
    entry = runtime.ledger.get(observation["metadata"]["call_id"])
    assert entry is not None and list(entry.args.items()) == list(bound.arguments.items())
