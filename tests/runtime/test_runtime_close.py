"""Closing a runtime or its ledger while a body the runtime stopped waiting for still runs.

A sync body past its ``timeout_s`` runs on in its thread, and its outcome arrives later (a
late completion). After ``ledger.close()`` that outcome must reach nothing: the user may have
archived the file or dropped the schema, and a closed ledger reopened behind their back wrote
to it (SQLite made a new file; PostgreSQL raised ``UndefinedTable`` in the body's thread).
``Runtime.close()`` waits, within its bound, for such attempts so their outcomes are kept.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.runtime import (
    Found,
    Ledger,
    LedgerClosed,
    NotFound,
    Runtime,
    SQLiteLedger,
    Status,
    current_call,
    guarded,
)
from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres

Reopen = Callable[[], Ledger]


class Store:
    """A durable ledger's store: a ledger on it, a way to reopen it, and to take it away."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.taken_away = False
        if kind == "sqlite":
            self.path = tmp_path / "ledger" / "agentguard-ledger.db"
            self.open: Reopen = lambda: SQLiteLedger(self.path)
        else:
            from agentguard.runtime.ledger.postgres import PostgresLedger

            self.dsn = require_postgres()
            self.schema = fresh_schema()
            self.open = lambda: PostgresLedger(self.dsn, schema=self.schema)

    def take_away(self, archive: Path) -> None:
        """What a user does once the ledger is closed: archive the file, drop the schema."""
        self.taken_away = True
        if self.kind == "sqlite":
            archive.mkdir()
            for item in self.path.parent.iterdir():
                item.rename(archive / item.name)
        else:
            drop_schema(self.dsn, self.schema)

    def still_away(self) -> bool:
        if self.kind == "sqlite":
            return not self.path.parent.exists() or not any(self.path.parent.iterdir())
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as connection:
            row = connection.execute(
                "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (self.schema,)
            ).fetchone()
        return row is not None and row[0] == 0

    def clean(self) -> None:
        if self.kind == "postgres":
            drop_schema(self.dsn, self.schema)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    ORDERS.clear()
    made = Store(request.param, tmp_path)
    yield made
    made.clean()


@pytest.fixture
def thread_errors(monkeypatch: pytest.MonkeyPatch) -> list[BaseException | None]:
    """Exceptions that escaped a thread (what pytest reports as a warning under a later test)."""
    seen: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    return seen


# the order service: an order is there once a body has placed it
ORDERS: dict[str, dict[str, Any]] = {}


def find_order(call: Any) -> Found | NotFound:
    order = ORDERS.get(call.idempotency_key)
    return Found(order) if order else NotFound()


def slow_tool(runtime: Runtime, release: threading.Event, bodies: list[threading.Thread]) -> Any:
    @guarded(
        runtime,
        risk="write",
        idempotency="conditional",
        key=lambda call: f"order:{call.args['cart_id']}",
        reconcile=find_order,
        timeout_s=0.05,
    )
    def create_order(cart_id: str) -> dict[str, Any]:
        bodies.append(threading.current_thread())
        release.wait(10)  # slow to reach the service: still running when the runtime gives up
        order = {"order_id": "o1", "cart_id": cart_id}
        ORDERS[current_call().idempotency_key] = order
        return order

    return create_order


def abandoned_call(store: Store) -> tuple[Runtime, threading.Event, list[threading.Thread], str]:
    """A call whose body the runtime stopped waiting for: uncertain, still running."""
    runtime = Runtime(ledger=store.open(), seed=7)
    runtime.sleep = lambda seconds: None
    release = threading.Event()
    bodies: list[threading.Thread] = []
    create_order = slow_tool(runtime, release, bodies)
    with runtime.run(run_id="r1", user_id="u1"):
        observation = create_order(cart_id="c1")
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert observation["metadata"]["still_running"] is True
    return runtime, release, bodies, observation["metadata"]["call_id"]


def test_a_late_outcome_after_the_ledger_was_closed_writes_nothing_and_is_logged(
    store: Store,
    tmp_path: Path,
    thread_errors: list[BaseException | None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    runtime, release, bodies, call_id = abandoned_call(store)
    runtime.ledger.close()
    store.take_away(tmp_path / "archive")

    with caplog.at_level(logging.ERROR, logger="agentguard.runtime"):
        release.set()  # the body finishes now, after the ledger was closed
        bodies[0].join(10)
        assert not bodies[0].is_alive()

    assert thread_errors == []  # before: UndefinedTable (PostgreSQL), no such table (SQLite)
    assert store.still_away()  # before: SQLite made a new, empty ledger file at the old path
    lost = [r.getMessage() for r in caplog.records if call_id in r.getMessage()]
    assert len(lost) == 1, lost
    assert "closed" in lost[0] and "not recorded" in lost[0] and "succeeded" in lost[0]
    with pytest.raises(LedgerClosed):
        runtime.ledger.get(call_id)


def test_a_late_outcome_after_the_ledger_was_closed_leaves_the_call_for_recovery(
    store: Store, thread_errors: list[BaseException | None]
) -> None:
    runtime, release, bodies, call_id = abandoned_call(store)
    at_close = runtime.ledger.get(call_id)
    runtime.ledger.close()
    release.set()
    bodies[0].join(10)

    ledger = store.open()  # the next run of the agent
    try:
        entry = ledger.get(call_id)
        assert entry is not None
        # nothing was written after close: the call is as the closing runtime left it
        assert entry == at_close and entry.status is Status.UNCERTAIN
        assert not [event for event in ledger.events(call_id) if "late" in event.actor]
        again = Runtime(ledger=ledger, seed=7)
        slow_tool(again, threading.Event(), [])
        report = again.recover()
        assert call_id in report.call_ids
        settled = ledger.get(call_id)
        assert settled is not None and settled.status is Status.SUCCEEDED
        assert settled.result == {"order_id": "o1", "cart_id": "c1"}
    finally:
        ledger.close()
    assert thread_errors == []


def test_closing_the_runtime_waits_for_an_abandoned_attempt_and_records_its_outcome(
    store: Store, thread_errors: list[BaseException | None]
) -> None:
    runtime, release, _bodies, call_id = abandoned_call(store)
    threading.Timer(0.3, release.set).start()

    assert runtime.close(timeout_s=10) == []
    assert runtime.ledger.closed

    ledger = store.open()
    try:
        entry = ledger.get(call_id)
        assert entry is not None and entry.status is Status.SUCCEEDED
        assert entry.result == {"order_id": "o1", "cart_id": "c1"}
        assert [event.actor for event in ledger.events(call_id)][-1] == "late_completion"
    finally:
        ledger.close()
    assert thread_errors == []


def test_closing_the_runtime_gives_up_on_an_attempt_within_its_bound_and_names_it(
    store: Store, thread_errors: list[BaseException | None], caplog: pytest.LogCaptureFixture
) -> None:
    runtime, release, bodies, call_id = abandoned_call(store)
    with caplog.at_level(logging.WARNING, logger="agentguard.runtime"):
        assert runtime.close(timeout_s=0.2) == [call_id]
        release.set()
        bodies[0].join(10)
    assert any("still runs" in r.getMessage() and call_id in r.getMessage() for r in caplog.records)
    ledger = store.open()
    try:
        entry = ledger.get(call_id)
        assert entry is not None and entry.status is Status.UNCERTAIN
    finally:
        ledger.close()
    assert thread_errors == []


def test_a_closed_sqlite_ledger_does_not_reopen(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    ledger = SQLiteLedger(path)
    ledger.close()
    ledger.close()  # twice is harmless
    path.unlink()
    with pytest.raises(LedgerClosed):
        ledger.entries()
    assert not path.exists()
