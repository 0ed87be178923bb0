"""A ledger that fails (a dropped connection, a lock past the busy timeout, a full disk) gives
the agent an observation that says what is known, and a finished body's outcome is not lost."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from agentguard.runtime import Runtime, SQLiteLedger, Status
from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres
from tests.runtime.downstream import RecordingDownstream, order_tool, wait_until


def test_a_dropped_postgres_connection_is_replaced_without_an_error() -> None:
    import psycopg

    from agentguard.runtime.ledger.postgres import PostgresLedger

    dsn = require_postgres()
    schema = fresh_schema()
    ledger = PostgresLedger(dsn, schema=schema)
    try:
        runtime = Runtime(ledger=ledger)
        downstream = RecordingDownstream()
        create_order = order_tool(runtime, downstream)
        with runtime.run(run_id="r1"):
            assert create_order(cart_id="c1")["ok"]
        # the server drops this thread's connection (a restart, a failover, an idle timeout)
        backend = ledger._connection().info.backend_pid
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
        with runtime.run(run_id="r1"):
            observation = create_order(cart_id="c2")
        assert observation["ok"], observation
        assert len(downstream.applied) == 2
    finally:
        ledger.close()
        drop_schema(dsn, schema)


def test_a_lock_held_past_the_busy_timeout_is_an_observation_and_nothing_runs(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    runtime = Runtime(ledger=SQLiteLedger(path, busy_timeout_s=0.2))
    downstream = RecordingDownstream()
    create_order = order_tool(runtime, downstream)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with runtime.run(run_id="r1"):
            observation = create_order(cart_id="c1")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert observation["ok"] is False and observation["code"] == "SERVER_ERROR"
    assert observation["metadata"]["retryable"] is True
    assert "Nothing was done" in observation["content"]
    assert not downstream.applied
    with runtime.run(run_id="r1"):
        assert create_order(cart_id="c1")["ok"]  # the lock is gone: the call runs
    assert len(downstream.applied) == 1


class DiskFull(sqlite3.OperationalError):
    pass


def test_an_outcome_the_ledger_cannot_take_is_recorded_when_it_can(runtime: Runtime) -> None:
    downstream = RecordingDownstream()
    create_order = order_tool(runtime, downstream)
    transition = runtime.ledger.transition
    failing = threading.Event()
    failing.set()

    def full_disk(*args: Any, **kwargs: Any) -> Any:
        if failing.is_set():
            raise DiskFull("database or disk is full")
        return transition(*args, **kwargs)

    runtime.ledger.transition = full_disk  # type: ignore[method-assign]
    with runtime.run(run_id="r1"):
        observation = create_order(cart_id="c1")
    # the body ran: the agent learns it succeeded and that the record is pending
    assert observation["ok"] is True, observation
    assert observation["metadata"]["recorded"] is False
    assert "do not call create_order again" in observation["content"]
    assert len(downstream.applied) == 1
    call_id = observation["metadata"]["call_id"]
    entry = runtime.ledger.get(call_id)
    assert entry is not None and entry.status is Status.STARTED
    failing.clear()  # space is freed
    assert wait_until(lambda: _status(runtime, call_id) is Status.SUCCEEDED, timeout_s=10)
    with runtime.run(run_id="r1"):
        again = create_order(cart_id="c1")
    assert again["ok"] and again["metadata"]["replayed"]
    assert len(downstream.applied) == 1


def _status(runtime: Runtime, call_id: str) -> Status | None:
    entry = runtime.ledger.get(call_id)
    return entry.status if entry else None
