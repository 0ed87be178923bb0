"""Ledger contract: uniqueness, compare-and-set, legal transitions, durability settings."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pytest

from agentguard.runtime import IllegalTransition, LedgerEntry, SQLiteLedger, Status, open_ledger
from agentguard.runtime.ledger.base import new_call_id
from agentguard.runtime.ledger.sqlite import SCHEMA_VERSION


def make_entry(key: str = "k1", **overrides: Any) -> LedgerEntry:
    values: dict[str, Any] = {
        "call_id": new_call_id(),
        "run_id": "r1",
        "tool_name": "create_order",
        "idempotency_key": key,
        "input_hash": "sha256:x",
        "status": Status.PLANNED,
        "risk": "write",
        "idempotency": "non_idempotent",
        "replay": "never",
        "attempts": 1,
    }
    values.update(overrides)
    return LedgerEntry(**values)


def test_only_one_claim_per_key_wins(ledger: Any) -> None:
    won_first, first = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    won_second, second = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    assert (won_first, won_second) == (True, False)
    assert second.call_id == first.call_id and second.status is Status.STARTED


def test_racing_threads_claim_a_key_once(ledger_factory: Any) -> None:
    ledgers = [ledger_factory() for _ in range(8)]
    barrier = threading.Barrier(len(ledgers))
    wins: list[bool] = []

    def claim(ledger: Any) -> None:
        barrier.wait()
        won, _ = ledger.claim(make_entry("race"), [Status.PLANNED, Status.STARTED])
        wins.append(won)

    threads = [threading.Thread(target=claim, args=(ledger,)) for ledger in ledgers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wins) == [False] * 7 + [True]


def test_transitions_are_compare_and_set(ledger: Any) -> None:
    _, entry = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    moved = ledger.transition(entry, Status.UNCERTAIN, error_code="SIDE_EFFECT_UNCERTAIN")
    assert moved is not None and moved.version == entry.version + 1
    assert ledger.transition(entry, Status.SUCCEEDED) is None  # stale version: someone else won
    assert ledger.get(entry.call_id).status is Status.UNCERTAIN
    with pytest.raises(IllegalTransition):
        ledger.transition(moved, Status.PLANNED)
    done = ledger.transition(moved, Status.SUCCEEDED, result={"id": 1})
    with pytest.raises(IllegalTransition):
        ledger.transition(done, Status.STARTED)
    assert ledger.get(entry.call_id).result == {"id": 1}
    history = [(e.from_status, e.to_status) for e in ledger.events(entry.call_id)]
    assert history == [
        (None, "planned"),
        ("planned", "started"),
        ("started", "uncertain"),
        ("uncertain", "succeeded"),
    ]


def test_transitions_refuse_unknown_fields(ledger: Any) -> None:
    _, entry = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    with pytest.raises(ValueError, match="not changeable"):
        ledger.transition(entry, Status.FAILED, tool_name="other")


def test_sqlite_durability_settings(tmp_path: Path) -> None:
    ledger = SQLiteLedger(tmp_path / "l.db")
    assert str(ledger.pragma("journal_mode")).lower() == "wal"
    assert ledger.pragma("synchronous") == 2  # FULL
    assert ledger.pragma("busy_timeout") >= 5000
    assert ledger.pragma("page_size") == 2048
    ledger.close()


def test_migrations_are_versioned_and_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    first = SQLiteLedger(path)
    first.claim(make_entry(), [Status.PLANNED])
    second = SQLiteLedger(path)  # reopening must neither fail nor lose rows
    assert second.schema_version() == SCHEMA_VERSION
    assert len(second.entries()) == 1
    first.close()
    second.close()


def test_open_ledger_by_url(tmp_path: Path) -> None:
    ledger = open_ledger(f"sqlite:///{tmp_path / 'x.db'}")
    assert isinstance(ledger, SQLiteLedger)
    ledger.close()
    with pytest.raises(ValueError):
        open_ledger("redis://localhost")


def _claim_in_process(path: str, barrier: Any, results: Any) -> None:
    ledger = SQLiteLedger(path)
    barrier.wait()
    won, _ = ledger.claim(make_entry("cross-process"), [Status.PLANNED, Status.STARTED])
    results.put(won)


def test_sqlite_processes_claim_a_key_once(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    SQLiteLedger(path).close()
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(6)
    results = context.Queue()
    processes = [
        context.Process(target=_claim_in_process, args=(path, barrier, results)) for _ in range(6)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(20)
    wins = [results.get(timeout=5) for _ in processes]
    assert sorted(wins) == [False] * 5 + [True]


def test_a_version_1_ledger_is_migrated_with_its_history(tmp_path: Path) -> None:
    import sqlite3

    from agentguard.runtime.ledger.sqlite import MIGRATIONS

    path = tmp_path / "v1.db"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("CREATE TABLE agentguard_schema (version INTEGER NOT NULL)")
    for statement in MIGRATIONS[0][1]:
        connection.execute(statement)
    connection.execute("INSERT INTO agentguard_schema (version) VALUES (1)")
    connection.execute(
        "INSERT INTO agentguard_calls (call_id, run_id, tool_name, idempotency_key, input_hash,"
        " args_json, status, risk, idempotency, replay, attempts, created_at, updated_at, version)"
        " VALUES ('call_old', 'r1', 'create_order', 'k1', 'sha256:x', '{}', 'uncertain',"
        " 'write', 'non_idempotent', 'never', 1, 1.0, 3.0, 3)"
    )
    for event_id, (source, target, actor) in enumerate(
        [
            (None, "planned", "runtime"),
            ("planned", "started", "runtime"),
            ("started", "uncertain", "sweeper"),
        ]
    ):
        connection.execute(
            "INSERT INTO agentguard_events (call_id, at, from_status, to_status, actor, detail)"
            " VALUES ('call_old', ?, ?, ?, ?, ?)",
            (
                1.0 + event_id,
                source,
                target,
                actor,
                "lease expired" if actor == "sweeper" else None,
            ),
        )
    connection.close()

    ledger = SQLiteLedger(path)
    assert ledger.schema_version() == SCHEMA_VERSION
    events = ledger.events("call_old")
    assert [(e.from_status, e.to_status, e.actor) for e in events] == [
        (None, "planned", "runtime"),
        ("planned", "started", "runtime"),
        ("started", "uncertain", "sweeper"),
    ]
    assert events[-1].detail == "lease expired" and events[0].at == 1.0
    entry = ledger.get("call_old")
    assert entry is not None
    moved = ledger.transition(entry, Status.SUCCEEDED, actor="human", detail="seen in admin")
    assert moved is not None
    assert [e.to_status for e in ledger.events("call_old")][-1] == "succeeded"
    ledger.close()


def test_a_version_1_postgres_ledger_is_migrated_with_its_history() -> None:
    import psycopg
    from psycopg import sql

    from agentguard.runtime.ledger.postgres import MIGRATIONS, PostgresLedger
    from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres

    dsn = require_postgres()
    schema = fresh_schema()
    ident = sql.Identifier(schema)
    try:
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE SCHEMA {}").format(ident))
            connection.execute(
                sql.SQL("CREATE TABLE {}.agentguard_schema (version integer NOT NULL)").format(
                    ident
                )
            )
            for statement in MIGRATIONS[0][1]:
                connection.execute(sql.SQL(statement).format(schema=ident))
            connection.execute(
                sql.SQL("INSERT INTO {}.agentguard_schema (version) VALUES (1)").format(ident)
            )
            connection.execute(
                sql.SQL(
                    "INSERT INTO {}.agentguard_calls (call_id, run_id, tool_name, idempotency_key,"
                    " input_hash, args_json, status, risk, idempotency, replay, attempts,"
                    " created_at, updated_at, version) VALUES ('call_old', 'r1', 'create_order',"
                    " 'k1', 'sha256:x', '{{}}', 'started', 'write', 'non_idempotent', 'never', 1,"
                    " 1.0, 2.0, 2)"
                ).format(ident)
            )
            for event_id, (source, target) in enumerate(
                [(None, "planned"), ("planned", "started")]
            ):
                connection.execute(
                    sql.SQL(
                        "INSERT INTO {}.agentguard_events"
                        " (call_id, at, from_status, to_status, actor, detail)"
                        " VALUES ('call_old', %s, %s, %s, 'runtime', NULL)"
                    ).format(ident),
                    (1.0 + event_id, source, target),
                )
        ledger = PostgresLedger(dsn, schema=schema)
        assert ledger.schema_version() == MIGRATIONS[-1][0]
        assert [(e.from_status, e.to_status) for e in ledger.events("call_old")] == [
            (None, "planned"),
            ("planned", "started"),
        ]
        entry = ledger.get("call_old")
        assert entry is not None
        assert ledger.transition(entry, Status.UNCERTAIN, actor="sweeper") is not None
        assert [e.actor for e in ledger.events("call_old")][-1] == "sweeper"
        ledger.close()
    finally:
        drop_schema(dsn, schema)


def _child_call_ids(queue: Any) -> None:
    queue.put([new_call_id() for _ in range(3)])


def test_call_ids_differ_across_forked_processes_and_user_seeding() -> None:
    import random

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    children = [context.Process(target=_child_call_ids, args=(queue,)) for _ in range(2)]
    for child in children:
        child.start()
    ids = [call_id for _ in children for call_id in queue.get(timeout=20)]
    for child in children:
        child.join(20)
    random.seed(0)  # a user's seeding must not make ids repeat
    first = new_call_id()
    random.seed(0)
    ids += [first, new_call_id(), *(new_call_id() for _ in range(3))]
    assert len(set(ids)) == len(ids)
    assert all(call_id.startswith("call_") and len(call_id) == 37 for call_id in ids)


def test_sqlite_none_parameters_are_sent_as_null_in_the_statement(tmp_path: Path) -> None:
    """A parameter that is None goes into the statement as NULL (the sqlite3 module binds None
    only after a failing adapter search); statements whose "?" are not all plain placeholders
    are sent as they are, and every answer is the one binding None would give."""
    ledger = SQLiteLedger(tmp_path / "l.db")
    assert ledger._with_nulls("SELECT ?, ?, ?", [1, None, "a"], (False, True, False)) == (
        "SELECT ?, NULL, ?",
        (1, "a"),
    )
    assert ledger._with_nulls("SELECT ?, ?", [None, None], (True, True)) == (
        "SELECT NULL, NULL",
        (),
    )
    assert ledger._with_nulls("SELECT ?1, ?2", [1, None], (False, True))[0] == "SELECT ?1, ?2"
    assert ledger._with_nulls("SELECT '?', ?", [None], (True,))[0] == "SELECT '?', ?"
    for statement in (
        "SELECT ?, ?, ?, ?",
        "SELECT ?1, ?2, ?3, ?4",
        "SELECT ?, ?, ?, ? WHERE '?' = '?'",
    ):
        assert ledger._execute(statement, [None, 1, None, "a"]).fetchall() == [(None, 1, None, "a")]
    _, entry = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    stored = ledger.get(entry.call_id)
    assert stored == entry and stored.result is None and stored.error_code is None
    ledger.close()
