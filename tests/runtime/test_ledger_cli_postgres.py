"""`agentguard ledger list|show|find` on PostgreSQL read the ledger and write nothing: a
database without the ledger's schema is a clear error, and the schema is not created."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.ledger_cli import ledger_app
from agentguard.runtime import Runtime, guarded
from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres

runner = CliRunner()

READS = [["list"], ["show", "call-1"], ["find", "--key", "k1"]]


@pytest.fixture
def schema() -> Iterator[tuple[str, str]]:
    """A DSN and a schema name of this test's own, dropped afterwards."""
    dsn = require_postgres()
    name = fresh_schema()
    try:
        yield dsn, name
    finally:
        drop_schema(dsn, name)


def tables_in(dsn: str, schema: str) -> list[str] | None:
    """The tables of ``schema``, or None when there is no such schema."""
    import psycopg

    with psycopg.connect(dsn) as connection:
        if (
            connection.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
            ).fetchone()
            is None
        ):
            return None
        rows = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename", (schema,)
        ).fetchall()
    return [row[0] for row in rows]


def run_sql(dsn: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)


@pytest.mark.parametrize("command", READS)
def test_a_missing_ledger_schema_is_an_error_and_is_not_created(
    schema: tuple[str, str], command: list[str]
) -> None:
    dsn, name = schema
    result = runner.invoke(ledger_app, [*command, "--ledger", f"{dsn}?schema={name}"])
    assert result.exit_code == 2, result.output
    assert f"database 'test' has no ledger: there is no schema '{name}'" in result.output
    assert tables_in(dsn, name) is None


def test_a_schema_without_the_ledger_tables_is_named_and_left_alone(
    schema: tuple[str, str],
) -> None:
    dsn, name = schema
    run_sql(dsn, f'CREATE SCHEMA "{name}"', f'CREATE TABLE "{name}".notes (body text)')
    result = runner.invoke(ledger_app, ["list", "--ledger", f"{dsn}?schema={name}"])
    assert result.exit_code == 2, result.output
    assert "no table agentguard_schema and no table agentguard_calls" in result.output
    assert tables_in(dsn, name) == ["notes"]


def test_an_older_ledger_is_not_migrated_by_a_read(schema: tuple[str, str]) -> None:
    from agentguard.runtime.ledger.postgres import MIGRATIONS

    dsn, name = schema
    statements = [s.format(schema=f'"{name}"') for s in MIGRATIONS[0][1]]
    run_sql(
        dsn,
        f'CREATE SCHEMA "{name}"',
        f'CREATE TABLE "{name}".agentguard_schema (version integer NOT NULL)',
        *statements,
        f'INSERT INTO "{name}".agentguard_schema (version) VALUES (1)',
    )
    result = runner.invoke(ledger_app, ["list", "--ledger", f"{dsn}?schema={name}"])
    assert result.exit_code == 2, result.output
    assert "is at schema version 1" in result.output
    assert tables_in(dsn, name) == ["agentguard_calls", "agentguard_events", "agentguard_schema"]


def test_an_existing_ledger_is_listed_and_shown(schema: tuple[str, str]) -> None:
    from agentguard.runtime.ledger.postgres import PostgresLedger

    dsn, name = schema
    ledger = PostgresLedger(dsn, schema=name)
    runtime = Runtime(ledger=ledger)

    @guarded(runtime, risk="write", key=("user_id", "cart_id"))
    def create_order(cart_id: str) -> str:
        return f"order-{cart_id}"

    with runtime.run(run_id="run-1", user_id="u1"):
        done: Any = create_order(cart_id="c1")
    ledger.close()
    url = f"{dsn}?schema={name}"
    listed = runner.invoke(ledger_app, ["list", "--ledger", url, "-f", "json"])
    assert listed.exit_code == 0, listed.output
    call_id = done["metadata"]["call_id"]
    assert [row["call_id"] for row in json.loads(listed.output)] == [call_id]
    shown = runner.invoke(ledger_app, ["show", call_id, "--ledger", url, "-f", "json"])
    assert json.loads(shown.output)["entry"]["status"] == "succeeded"


def test_a_ledger_opened_read_only_refuses_a_write(schema: tuple[str, str]) -> None:
    import psycopg

    from agentguard.runtime.core import resolve_call
    from agentguard.runtime.ledger import open_ledger
    from agentguard.runtime.testing import FaultInjector

    dsn, name = schema
    url = f"{dsn}?schema={name}"
    writer = open_ledger(url)
    runtime = Runtime(ledger=writer)

    @guarded(runtime, risk="write", key=("user_id", "cart_id"))
    def create_order(cart_id: str) -> str:
        return f"order-{cart_id}"

    FaultInjector(runtime).timeout_after_apply("create_order")
    with runtime.run(run_id="run-1", user_id="u1"):
        uncertain: Any = create_order(cart_id="c1")
    writer.close()
    call_id = uncertain["metadata"]["call_id"]
    with open_ledger(url, read_only=True) as reader:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            resolve_call(reader, call_id, "succeeded", "seen in admin")
        entry = reader.get(call_id)
    assert entry is not None and entry.status.value == "uncertain"


def test_a_ledger_that_cannot_be_opened_is_named_without_its_password() -> None:
    url = "postgresql://agent:s3cret-pw@127.0.0.1:1/test"  # nothing listens on port 1
    result = runner.invoke(ledger_app, ["list", "--ledger", url])
    assert result.exit_code == 2, result.output
    assert "cannot open ledger postgresql://agent:***@127.0.0.1:1/test" in result.output
    assert "s3cret-pw" not in result.output
