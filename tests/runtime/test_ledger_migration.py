"""A ledger written by an earlier agentguard opens with this one, every entry kept."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.runtime import Ledger, Runtime, SQLiteLedger, Status, guarded
from agentguard.runtime.hashing import input_hash

# What agentguard's schema 2 wrote for a call that succeeded (its history in the row).
V2_COLUMNS = (
    "call_id, run_id, step_id, tool_name, user_id, approved_at, idempotency_key, input_hash,"
    " args_json, status, risk, idempotency, replay, attempts, error_code, error_detail,"
    " started_at, finished_at, result_json, result_ref, lease_owner, lease_expires_at,"
    " created_at, updated_at, version, history"
)
V2_ROW = (
    "call_0123456789abcdef0123456789abcdef",
    "run-old",
    "step-1",
    "create_order",
    "user-7",
    "2026-11-01T00:00:00Z",
    "order:c-old",
    # plain JSON arguments hash as schema 2's agentguard hashed them
    input_hash({"cart_id": "c-old"}),
    '{"cart_id":"c-old"}',
    "succeeded",
    "write",
    "non_idempotent",
    "never",
    1,
    None,
    None,
    10.0,
    11.0,
    '{"order_id":"o-old"}',
    "sha256:" + "1" * 64,
    "old-host:1",
    340.0,
    10.0,
    11.0,
    3,
    '[10.0,null,"planned","runtime",null]\n[10.0,"planned","started","runtime",null]\n'
    '[11.0,"started","succeeded","runtime",null]\n',
)


def _old_sqlite(tmp_path: Path) -> Callable[[], Ledger]:
    from agentguard.runtime.ledger.sqlite import MIGRATIONS

    path = tmp_path / "v2.db"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("CREATE TABLE agentguard_schema (version INTEGER NOT NULL)")
    for version, statements in MIGRATIONS[:2]:
        for statement in statements:
            connection.execute(statement)
        connection.execute("INSERT INTO agentguard_schema (version) VALUES (?)", (version,))
    marks = ", ".join("?" for _ in V2_ROW)
    connection.execute(f"INSERT INTO agentguard_calls ({V2_COLUMNS}) VALUES ({marks})", V2_ROW)
    connection.close()
    return lambda: SQLiteLedger(path)


@pytest.fixture(params=["sqlite", "postgres"])
def old_ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Ledger]]:
    if request.param == "sqlite":
        yield _old_sqlite(tmp_path)
        return
    import psycopg
    from psycopg import sql

    from agentguard.runtime.ledger.postgres import MIGRATIONS, PostgresLedger
    from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres

    dsn = require_postgres()
    schema = fresh_schema()
    ident = sql.Identifier(schema)
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(ident))
        connection.execute(
            sql.SQL("CREATE TABLE {}.agentguard_schema (version integer NOT NULL)").format(ident)
        )
        for version, statements in MIGRATIONS[:2]:
            for statement in statements:
                connection.execute(sql.SQL(statement).format(schema=ident))
            connection.execute(
                sql.SQL("INSERT INTO {}.agentguard_schema (version) VALUES (%s)").format(ident),
                (version,),
            )
        marks = ", ".join("%s" for _ in V2_ROW)
        connection.execute(
            sql.SQL(f"INSERT INTO {{}}.agentguard_calls ({V2_COLUMNS}) VALUES ({marks})").format(
                ident
            ),
            V2_ROW,
        )
    opened: list[Ledger] = []

    def factory() -> Ledger:
        ledger = PostgresLedger(dsn, schema=schema)
        opened.append(ledger)
        return ledger

    yield factory
    for ledger in opened:
        ledger.close()
    drop_schema(dsn, schema)


def test_a_schema_2_ledger_keeps_every_entry_and_its_history(
    old_ledger: Callable[[], Ledger],
) -> None:
    ledger = old_ledger()
    entry = ledger.get(V2_ROW[0])
    assert entry is not None
    assert (entry.status, entry.result, entry.attempts, entry.version) == (
        Status.SUCCEEDED,
        {"order_id": "o-old"},
        1,
        3,
    )
    assert (entry.run_id, entry.step_id, entry.user_id, entry.args) == (
        "run-old",
        "step-1",
        "user-7",
        {"cart_id": "c-old"},
    )
    assert entry.tenant is None and entry.extra == {}
    assert [event.to_status for event in ledger.events(entry.call_id)] == [
        "planned",
        "started",
        "succeeded",
    ]
    # the old call is still recognised: a new call with its key replays its result
    runtime = Runtime(ledger=ledger)
    ran: list[Any] = []

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    def create_order(cart_id: str) -> dict[str, Any]:
        ran.append(cart_id)
        return {"order_id": "o-new"}

    with runtime.run(run_id="run-new"):
        observation = create_order(cart_id="c-old")
    assert observation["ok"] and observation["metadata"]["replayed"]
    assert observation["result"] == {"order_id": "o-old"}
    assert not ran
    ledger.close()
