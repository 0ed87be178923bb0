"""Async guarded calls on PostgreSQL write the ledger through psycopg's async connections, on
the event loop itself (no thread, no executor), and answer exactly as sync calls do: the same
claim, outcome, uncertainty, fencing and bounds."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentguard.runtime import (
    Found,
    NotFound,
    Runtime,
    SimulatedCrash,
    Status,
    Unknown,
    current_call,
    guarded,
)
from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres
from tests.runtime.downstream import RecordingDownstream, wait_until
from tests.runtime.test_bounded_ledger import BOUND_S, FreezableProxy, _lock_table


class _NoThreads(concurrent.futures.ThreadPoolExecutor):
    """An event loop's default executor that refuses work: ``asyncio.to_thread`` fails."""

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a ledger operation hopped to a thread")


_SYNC_OPERATIONS = ("claim", "transition", "get", "find", "note", "release_lease", "entries")


@contextlib.contextmanager
def _sync_ledger_forbidden(runtime: Runtime) -> Iterator[None]:
    """While it lasts, the ledger's sync operations fail: only its async driver may be used."""
    ledger = runtime.ledger

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an async call used the ledger's sync connection")

    for name in _SYNC_OPERATIONS:
        setattr(ledger, name, forbidden)
    try:
        yield
    finally:
        for name in _SYNC_OPERATIONS:
            delattr(ledger, name)


def _run_async(runtime: Runtime, calls: Callable[[], Any], *, run_id: str = "r1") -> Any:
    """``calls()`` inside ``runtime.run`` on a new event loop that has no thread to hop to."""

    async def agent() -> Any:
        asyncio.get_running_loop().set_default_executor(_NoThreads())
        async with runtime.run(run_id=run_id):
            return await calls()

    return asyncio.run(agent())


def _shape(observation: dict[str, Any]) -> tuple[Any, ...]:
    """What a sync and an async call must agree on (ids and times aside)."""
    metadata = observation["metadata"]
    return (
        observation["ok"],
        observation["code"],
        observation["result"] and {k: v for k, v in observation["result"].items() if k != "at"},
        metadata["status"],
        metadata["replayed"],
        metadata["attempts"],
        metadata["retryable"],
        metadata["next_action"]["action"],
        metadata.get("recorded", True),
    )


def _history(runtime: Runtime, call_id: str) -> list[tuple[str | None, str, str]]:
    return [
        (event.from_status, event.to_status, event.actor)
        for event in runtime.ledger.events(call_id)
    ]


@pytest.fixture
def postgres_runtimes() -> Iterator[Callable[..., Runtime]]:
    """Runtimes over PostgreSQL ledgers, each in a schema of its own."""
    from agentguard.runtime.ledger.postgres import PostgresLedger

    dsn = require_postgres()
    made: list[tuple[Any, str]] = []

    def make(**options: Any) -> Runtime:
        schema = fresh_schema()
        ledger = PostgresLedger(dsn, schema=schema, **options)
        made.append((ledger, schema))
        runtime = Runtime(ledger=ledger, seed=7)
        runtime.sleep = lambda seconds: None
        return runtime

    yield make
    for ledger, schema in made:
        ledger.close()
        drop_schema(dsn, schema)


def _tools(runtime: Runtime, downstream: RecordingDownstream, **options: Any) -> tuple[Any, Any]:
    """The same order tool, sync and async; ``fail_after_send`` makes its first attempt time out
    after the order was placed."""
    fail_after_send = options.pop("fail_after_send", False)
    failures = [TimeoutError("read timed out")] if fail_after_send else []

    def place(cart_id: str) -> dict[str, Any]:
        order = downstream.create(current_call().idempotency_key, cart_id=cart_id)
        if failures:
            raise failures.pop()
        return order

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}", **options)
    def create_order(cart_id: str) -> dict[str, Any]:
        return place(cart_id)

    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"order:{call.args['cart_id']}",
        name="create_order_async",
        **options,
    )
    async def create_order_async(cart_id: str) -> dict[str, Any]:
        return place(cart_id)

    return create_order, create_order_async


def _sync_and_async(
    postgres_runtimes: Callable[..., Runtime], scenario: Callable[[Any], list[Any]], **options: Any
) -> tuple[tuple[Runtime, list[Any]], tuple[Runtime, list[Any]]]:
    """``scenario`` (a list of calls of one tool) run sync on one ledger, async on another."""
    sync_runtime = postgres_runtimes()
    sync_tool, _ = _tools(sync_runtime, RecordingDownstream(), **options)
    with sync_runtime.run(run_id="r1"):
        sync_observations = [call() for call in scenario(sync_tool)]
    async_runtime = postgres_runtimes()
    _, async_tool = _tools(async_runtime, RecordingDownstream(), **options)

    async def calls() -> list[Any]:
        return [await call() for call in scenario(async_tool)]

    with _sync_ledger_forbidden(async_runtime):
        async_observations = _run_async(async_runtime, calls)
    return (sync_runtime, sync_observations), (async_runtime, async_observations)


def _repeat(tool: Any) -> list[Callable[[], Any]]:
    return [lambda: tool(cart_id="c1"), lambda: tool(cart_id="c1"), lambda: tool(cart_id="c2")]


def test_an_async_call_claims_and_succeeds_on_the_event_loop_as_a_sync_call_does(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    (sync_runtime, sync_seen), (async_runtime, async_seen) = _sync_and_async(
        postgres_runtimes, _repeat
    )
    assert [_shape(seen) for seen in async_seen] == [_shape(seen) for seen in sync_seen]
    first, repeat, other = async_seen
    assert first["ok"] and not first["metadata"]["replayed"]
    assert repeat["metadata"]["replayed"] and repeat["result"] == first["result"]
    assert other["ok"] and other["metadata"]["call_id"] != first["metadata"]["call_id"]
    for sync, asynchronous in zip(sync_seen, async_seen, strict=True):
        sync_id, async_id = sync["metadata"]["call_id"], asynchronous["metadata"]["call_id"]
        assert _history(async_runtime, async_id) == _history(sync_runtime, sync_id)


def test_an_async_timeout_after_sending_is_uncertain_as_a_sync_one_is(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    (sync_runtime, sync_seen), (async_runtime, async_seen) = _sync_and_async(
        postgres_runtimes, _repeat, fail_after_send=True
    )
    assert [_shape(seen) for seen in async_seen] == [_shape(seen) for seen in sync_seen]
    uncertain, again, _ = async_seen
    assert uncertain["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert again["code"] == "SIDE_EFFECT_UNCERTAIN"  # never run a second time on its own
    call_id = uncertain["metadata"]["call_id"]
    assert async_runtime.ledger.get(call_id).status is Status.UNCERTAIN  # type: ignore[union-attr]
    assert _history(async_runtime, call_id) == _history(
        sync_runtime, sync_seen[0]["metadata"]["call_id"]
    )


def test_an_async_uncertain_call_is_settled_by_its_lookup_on_the_event_loop(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    runtime = postgres_runtimes()
    downstream = RecordingDownstream()
    timeouts = [TimeoutError("read timed out")]

    async def lookup(call: Any) -> Found | NotFound:
        order = downstream.find(call.idempotency_key)
        return Found(order) if order else NotFound()

    @guarded(
        runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}", reconcile=lookup
    )
    async def create_order(cart_id: str) -> dict[str, Any]:
        order = downstream.create(current_call().idempotency_key, cart_id=cart_id)
        if timeouts:
            raise timeouts.pop()  # the order was placed all the same
        return order

    async def calls() -> list[Any]:
        return [await create_order(cart_id="c1"), await create_order(cart_id="c1")]

    with _sync_ledger_forbidden(runtime):
        settled, replayed = _run_async(runtime, calls)
    assert settled["ok"], settled
    assert settled["metadata"]["status"] == "succeeded"
    assert replayed["ok"] and replayed["metadata"]["replayed"]
    assert len(downstream.applied) == 1  # the lookup found the order: it was not placed twice
    statuses = [to for _, to, _ in _history(runtime, settled["metadata"]["call_id"])]
    assert statuses == ["planned", "started", "uncertain", "succeeded"]


def test_concurrent_async_calls_with_one_key_run_the_body_once(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    runtime = postgres_runtimes(async_pool_max_size=4)
    downstream = RecordingDownstream()

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    async def create_order(cart_id: str) -> dict[str, Any]:
        await asyncio.sleep(0.05)
        return downstream.create(current_call().idempotency_key, cart_id=cart_id)

    async def calls() -> list[Any]:
        return list(await asyncio.gather(*(create_order(cart_id="c1") for _ in range(12))))

    with _sync_ledger_forbidden(runtime):
        seen = _run_async(runtime, calls)
    assert downstream.applied_for("order:c1") == 1
    assert sum(1 for observation in seen if observation["ok"]) >= 1
    assert {observation["code"] for observation in seen} <= {None, "DUPLICATE_IN_PROGRESS"}


def test_an_async_claim_meeting_a_table_lock_answers_within_the_lock_timeout(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    import psycopg

    runtime = postgres_runtimes(lock_timeout_s=0.5)
    downstream = RecordingDownstream()
    _, create_order = _tools(runtime, downstream)
    schema = runtime.ledger.schema  # type: ignore[attr-defined]
    with psycopg.connect(require_postgres()) as holder:
        _lock_table(holder, schema)
        began = time.monotonic()
        with _sync_ledger_forbidden(runtime):
            observation = _run_async(runtime, lambda: create_order(cart_id="c1"))
        waited = time.monotonic() - began
        holder.rollback()
    assert waited < BOUND_S
    assert observation["ok"] is False and observation["code"] == "SERVER_ERROR", observation
    assert "Nothing was done" in observation["content"] and "lock" in observation["content"]
    assert not downstream.applied
    assert _run_async(runtime, lambda: create_order(cart_id="c1"))["ok"]
    assert len(downstream.applied) == 1


def test_an_async_outcome_meeting_a_table_lock_is_kept_and_recorded_later(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    import psycopg

    runtime = postgres_runtimes(lock_timeout_s=0.5)
    downstream = RecordingDownstream()
    schema = runtime.ledger.schema  # type: ignore[attr-defined]
    holder = psycopg.connect(require_postgres())

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    async def create_order(cart_id: str) -> dict[str, Any]:
        order = downstream.create(current_call().idempotency_key, cart_id=cart_id)
        _lock_table(holder, schema)
        return order

    try:
        began = time.monotonic()
        observation = _run_async(runtime, lambda: create_order(cart_id="c1"))
        assert time.monotonic() - began < BOUND_S
        assert observation["ok"] is True, observation
        assert observation["metadata"]["recorded"] is False
    finally:
        holder.rollback()
        holder.close()
    call_id = observation["metadata"]["call_id"]
    assert wait_until(
        lambda: runtime.ledger.get(call_id).status is Status.SUCCEEDED,  # type: ignore[union-attr]
        timeout_s=BOUND_S,
    )
    assert len(downstream.applied) == 1


def test_an_async_call_to_a_server_that_stops_answering_ends_within_its_bound(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    from agentguard.runtime.ledger.postgres import PostgresLedger

    dsn = require_postgres()
    schema = fresh_schema()
    PostgresLedger(dsn, schema=schema).close()
    proxy = FreezableProxy(("127.0.0.1", 5432))
    ledger = PostgresLedger(
        dsn.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}"),
        schema=schema,
        statement_timeout_s=0.5,
        answer_timeout_s=1.5,
        connect_timeout_s=2,
    )
    runtime = Runtime(ledger=ledger)
    downstream = RecordingDownstream()
    _, create_order = _tools(runtime, downstream)
    try:

        async def calls() -> list[Any]:
            first = await create_order(cart_id="c0")  # the pool's connection is open
            proxy.freeze()
            began = time.monotonic()
            frozen = await create_order(cart_id="c1")
            waited = time.monotonic() - began
            proxy.thaw()
            again = await create_order(cart_id="c2")  # a new connection through the proxy
            return [first, frozen, waited, again]

        with _sync_ledger_forbidden(runtime):
            first, frozen, waited, again = _run_async(runtime, calls)
        assert first["ok"], first
        assert waited < BOUND_S
        assert frozen["ok"] is False and frozen["code"] == "SERVER_ERROR", frozen
        assert "did not answer" in frozen["content"]
        assert again["ok"], again
        assert downstream.applied_for("order:c1") == 0  # the frozen call's body never ran
    finally:
        ledger.close()
        proxy.close()
        drop_schema(dsn, schema)


def _cancel_while_blocked(
    runtime: Runtime, tool: Any, holder: Any, blocked: asyncio.Event | None = None
) -> None:
    """Call ``tool`` and cancel the call while its ledger statement waits for a lock that
    ``holder`` holds (from the start, or from when ``blocked`` is set); the lock goes 0.3 s
    after the cancellation."""

    async def agent() -> None:
        async with runtime.run(run_id="r1"):
            task = asyncio.ensure_future(tool(cart_id="c1"))
            if blocked is not None:
                await blocked.wait()
            await asyncio.sleep(0.3)  # the statement now waits for the lock
            task.cancel()
            asyncio.get_running_loop().call_later(0.3, holder.rollback)
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(agent())


def test_an_async_call_cancelled_while_its_outcome_waits_for_a_lock_keeps_the_outcome(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    import psycopg

    runtime = postgres_runtimes()
    downstream = RecordingDownstream()
    schema = runtime.ledger.schema  # type: ignore[attr-defined]
    blocked = asyncio.Event()

    with psycopg.connect(require_postgres()) as holder:

        @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
        async def create_order(cart_id: str) -> dict[str, Any]:
            order = downstream.create(current_call().idempotency_key, cart_id=cart_id)
            # another session holds the call's row: recording the outcome waits for it
            holder.execute(
                f'SELECT 1 FROM "{schema}".agentguard_calls WHERE call_id = %s FOR UPDATE',
                (current_call().call_id,),
            )
            blocked.set()
            return order

        _cancel_while_blocked(runtime, create_order, holder, blocked)
    (entry,) = runtime.ledger.entries()
    assert entry.status is Status.SUCCEEDED, entry  # the cancellation did not lose the outcome
    assert len(downstream.applied) == 1
    again = _run_async(runtime, lambda: create_order(cart_id="c1"))
    assert again["ok"] and again["metadata"]["replayed"], again
    assert len(downstream.applied) == 1


def test_an_async_claim_cancelled_while_it_waits_for_a_lock_is_released(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    import psycopg

    runtime = postgres_runtimes()
    downstream = RecordingDownstream()
    _, create_order = _tools(runtime, downstream)
    with psycopg.connect(require_postgres()) as holder:
        _lock_table(holder, runtime.ledger.schema)  # type: ignore[attr-defined]
        _cancel_while_blocked(runtime, create_order, holder)
    (entry,) = runtime.ledger.entries()
    assert entry.status is Status.FAILED, entry  # claimed, never run: released
    assert not downstream.applied
    assert _run_async(runtime, lambda: create_order(cart_id="c1"))["ok"]
    assert len(downstream.applied) == 1


def _sessions(dsn: str, application: str) -> set[int]:
    """The server processes of the sessions that name ``application``."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (application,)
        ).fetchall()
    return {row[0] for row in rows}


def test_an_async_ledger_connection_lost_between_calls_is_replaced_and_none_outlives_the_loop(
    postgres_runtimes: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    """A loop's connections stay with the ledger between operations: one the server ended in
    the meantime is replaced within the next operation, every new connection is made at the
    first attempt (the lost one's socket left nothing behind on the loop), and every one of
    them is closed when the loop ends (no server session left behind)."""
    import psycopg

    caplog.set_level(logging.WARNING, logger="psycopg.pool")

    dsn = require_postgres()
    application = fresh_schema()
    runtime = postgres_runtimes()
    schema = runtime.ledger.schema  # type: ignore[attr-defined]
    runtime.ledger.close()
    from agentguard.runtime.ledger.postgres import PostgresLedger

    separator = "&" if "?" in dsn else "?"
    runtime.ledger = ledger = PostgresLedger(
        f"{dsn}{separator}application_name={application}", schema=schema
    )
    downstream = RecordingDownstream()
    _, create_order = _tools(runtime, downstream)
    sync_sessions = _sessions(dsn, application)  # the migrating thread's connection
    try:

        async def calls() -> list[Any]:
            first = await create_order(cart_id="c1")
            in_use = _sessions(dsn, application) - sync_sessions
            with psycopg.connect(dsn, autocommit=True) as admin:
                for pid in in_use:
                    admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            after_loss = await create_order(cart_id="c2")
            replayed = await create_order(cart_id="c1")
            return [first, in_use, after_loss, replayed]

        with _sync_ledger_forbidden(runtime):
            first, in_use, after_loss, replayed = _run_async(runtime, calls)
        assert first["ok"], first
        assert in_use, "the async calls' connection was not found"
        assert after_loss["ok"], after_loss  # on a new connection, within the call
        assert replayed["ok"] and replayed["metadata"]["replayed"], replayed
        assert [entry.status for entry in ledger.entries()] == [Status.SUCCEEDED] * 2
        assert downstream.applied_for("order:c2") == 1
        # (an attempt cancelled by the loop's end is no failure)
        failed = [
            r.getMessage()
            for r in caplog.records
            if "error connecting" in r.getMessage()
            and not isinstance((r.args or ())[-1], asyncio.CancelledError)
        ]
        assert not failed, failed
        # the loop has ended: its connections are closed, the sync one is still there
        assert wait_until(lambda: _sessions(dsn, application) == sync_sessions, timeout_s=5)
    finally:
        ledger.close()


class _ClosingProxy(FreezableProxy):
    """A proxy that closes the server's side when the client's side closes (a connection the
    client gives up ends on the server too)."""

    def _pump(self, client: Any, server: Any) -> None:
        try:
            super()._pump(client, server)
        finally:
            for side in (client, server):
                with contextlib.suppress(OSError):
                    side.close()


def test_an_async_ledger_connection_interrupted_while_being_made_leaves_no_server_session() -> None:
    """The pool of a loop that ends while it is making a connection has that attempt cancelled
    and logs it; a log handler that keeps the record (pytest's, an error reporter's) keeps its
    exception. The half-made connection is closed at once all the same: no server session
    outlives the loop."""
    from agentguard.runtime.ledger.postgres import _LedgerConnection

    base = require_postgres()
    application = f"agentguard_attempt_{fresh_schema()}"
    proxy = _ClosingProxy(("127.0.0.1", 5432))
    proxy.lose_answers()  # the server gets the attempt and answers; the answers never come
    dsn = base.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    assert dsn != base
    separator = "&" if "?" in dsn else "?"
    dsn += f"{separator}application_name={application}&sslmode=disable&gssencmode=disable"
    kept: list[BaseException] = []
    try:

        async def interrupted_attempt() -> None:
            attempt = asyncio.ensure_future(_LedgerConnection.connect(dsn))
            began = time.monotonic()
            while not _sessions(base, application):
                assert time.monotonic() - began < BOUND_S, "the attempt never reached the server"
                await asyncio.sleep(0.05)
            attempt.cancel()
            try:
                await attempt
            except asyncio.CancelledError as exc:
                kept.append(exc)  # as a log record keeps it

        asyncio.run(interrupted_attempt())
        assert kept
        assert wait_until(lambda: not _sessions(base, application), timeout_s=5)
    finally:
        proxy.close()


def test_arecover_settles_expired_and_uncertain_calls_on_the_event_loop(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    """``await runtime.arecover()`` does what ``recover()`` does, with every ledger operation
    on the loop (no thread, no sync connection), and re-runs an async body its lookup did not
    find, which ``recover()`` inside a running loop cannot."""
    runtime = postgres_runtimes()
    downstream = RecordingDownstream()
    lookups_know = False
    faults = {"c1": "timeout after send", "c2": "timeout before send", "c3": "crash"}

    async def lookup(call: Any) -> Found | NotFound | Unknown:
        if not lookups_know:
            return Unknown("the order service is down")
        order = downstream.find(call.idempotency_key)
        return Found(order) if order else NotFound()

    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"order:{call.args['cart_id']}",
        reconcile=lookup,
        replay="auto",
        lease_s=60,
    )
    async def create_order(cart_id: str) -> dict[str, Any]:
        fault = faults.pop(cart_id, None)
        if fault == "timeout before send":
            raise TimeoutError("connect timed out")
        if fault == "crash":
            raise SimulatedCrash("the worker died")  # its entry stays started, its lease runs
        order = downstream.create(current_call().idempotency_key, cart_id=cart_id)
        if fault == "timeout after send":
            raise TimeoutError("read timed out")
        return order

    async def agent() -> Any:
        nonlocal lookups_know
        asyncio.get_running_loop().set_default_executor(_NoThreads())
        async with runtime.run(run_id="r1"):
            for cart in ("c1", "c2"):
                seen = await create_order(cart_id=cart)
                assert seen["code"] == "SIDE_EFFECT_UNCERTAIN", seen
            with pytest.raises(SimulatedCrash):
                await create_order(cart_id="c3")
        lookups_know = True
        return await runtime.arecover(now=time.time() + 120)  # c3's lease ran out

    with _sync_ledger_forbidden(runtime):
        report = asyncio.run(agent())
    assert report.expired == 1
    assert (report.succeeded, report.failed, report.uncertain) == (3, 0, 0)
    assert report.replayed == 2  # c2 and c3 were not found: run again, once each
    assert len(report.call_ids) == 3
    assert [downstream.applied_for(f"order:{cart}") for cart in ("c1", "c2", "c3")] == [1, 1, 1]
    assert {entry.status for entry in runtime.ledger.entries()} == {Status.SUCCEEDED}


def test_a_cancelled_async_body_that_ends_late_releases_its_lease_on_the_event_loop(
    postgres_runtimes: Callable[..., Runtime],
) -> None:
    """A body that outlives its cancellation at the deadline keeps its attempt running; when
    it ends, the lease is released through the native driver, not the sync connection."""
    runtime = postgres_runtimes()
    downstream = RecordingDownstream()
    finish = asyncio.Event()

    @guarded(
        runtime,
        risk="write",
        key=lambda call: f"order:{call.args['cart_id']}",
        reconcile=downstream.lookup,
        timeout_s=0.1,
        lease_s=60,
    )
    async def create_order(cart_id: str) -> dict[str, Any]:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await finish.wait()  # it does not stop when cancelled: still running
        return {}

    async def agent() -> Any:
        asyncio.get_running_loop().set_default_executor(_NoThreads())
        async with runtime.run(run_id="r1"):
            first = await create_order(cart_id="c1")
            call_id = first["metadata"]["call_id"]
            held = await runtime.ledger.aio.get(call_id)  # type: ignore[union-attr]
            finish.set()
            for _ in range(300):
                released = await runtime.ledger.aio.get(call_id)  # type: ignore[union-attr]
                if released is not None and released.lease_owner is None:
                    break
                await asyncio.sleep(0.01)
            return first, held, released

    with _sync_ledger_forbidden(runtime):
        first, held, released = asyncio.run(agent())
    assert first["code"] == "SIDE_EFFECT_UNCERTAIN" and first["metadata"]["still_running"], first
    assert held.status is Status.UNCERTAIN and held.lease_owner is not None
    assert released.status is Status.UNCERTAIN and released.lease_owner is None
