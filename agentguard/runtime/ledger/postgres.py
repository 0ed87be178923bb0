"""PostgreSQL ledger: many workers on many machines.

Uniqueness comes from a unique index on (tool_name, idempotency_key) and INSERT ... ON CONFLICT;
every change is a compare-and-set on ``version``. Each claim and each transition is a single
statement (data-modifying CTEs append the events), so one round trip and one commit.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg
from psycopg import sql

from agentguard.runtime.ledger._rows import (
    CALL_COLUMNS,
    EVENT_COLUMNS,
    STATUS_CHECK,
    column_for,
    encode_field,
    entry_to_row,
    row_to_entry,
    row_to_event,
)
from agentguard.runtime.ledger.base import (
    Ledger,
    LedgerConfigurationError,
    LedgerEntry,
    LedgerEvent,
    Status,
    apply_changes,
    check_path,
    evolve,
    normalise_path,
    normalise_statuses,
    path_events,
)

MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            f"""CREATE TABLE {{schema}}.agentguard_calls (
                call_id text PRIMARY KEY,
                run_id text NOT NULL,
                step_id text,
                tool_name text NOT NULL,
                user_id text,
                approved_at text,
                idempotency_key text NOT NULL,
                input_hash text NOT NULL,
                args_json text NOT NULL,
                status text NOT NULL CHECK ({STATUS_CHECK}),
                risk text NOT NULL,
                idempotency text NOT NULL,
                replay text NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                error_code text,
                error_detail text,
                started_at double precision,
                finished_at double precision,
                result_json text,
                result_ref text,
                lease_owner text,
                lease_expires_at double precision,
                created_at double precision NOT NULL,
                updated_at double precision NOT NULL,
                version bigint NOT NULL
            )""",
            "CREATE UNIQUE INDEX agentguard_calls_key ON {schema}.agentguard_calls (tool_name, idempotency_key)",
            "CREATE INDEX agentguard_calls_run ON {schema}.agentguard_calls (run_id)",
            "CREATE INDEX agentguard_calls_status ON {schema}.agentguard_calls (status)",
            "CREATE INDEX agentguard_calls_input_hash ON {schema}.agentguard_calls (input_hash)",
            """CREATE TABLE {schema}.agentguard_events (
                id bigserial PRIMARY KEY,
                call_id text NOT NULL,
                at double precision NOT NULL,
                from_status text,
                to_status text NOT NULL,
                actor text NOT NULL,
                detail text
            )""",
            "CREATE INDEX agentguard_events_call ON {schema}.agentguard_events (call_id, id)",
        ],
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]
_MIGRATION_LOCK = 0x61676774  # pg_advisory_xact_lock key: one migrator at a time


def _event_rows(count: int) -> sql.Composable:
    row = sql.SQL("(%s::double precision, %s::text, %s::text, %s::text, %s::text)")
    return sql.SQL(", ").join([row] * count)


def _event_values(events: list[LedgerEvent]) -> list[Any]:
    values: list[Any] = []
    for event in events:
        values.extend((event.at, event.from_status, event.to_status, event.actor, event.detail))
    return values


class PostgresLedger(Ledger):
    def __init__(
        self, dsn: str, *, schema: str = "agentguard", connect_timeout_s: int = 10
    ) -> None:
        self.dsn = dsn
        self.url = dsn
        self.schema = schema
        self.connect_timeout_s = connect_timeout_s
        self._local = threading.local()
        self._connections: list[psycopg.Connection[Any]] = []
        self._connections_lock = threading.Lock()
        ident = sql.Identifier(schema)
        self._calls = sql.SQL("{}.agentguard_calls").format(ident)
        self._events = sql.SQL("{}.agentguard_events").format(ident)
        self._migrate()
        self._prepare_statements()

    def _connection(self) -> psycopg.Connection[Any]:
        pid = os.getpid()
        connection: psycopg.Connection[Any] | None = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == pid and not connection.closed:
            return connection
        connection = psycopg.connect(
            self.dsn, autocommit=True, connect_timeout=self.connect_timeout_s
        )
        setting = connection.execute("SHOW synchronous_commit").fetchone()
        if setting is not None and str(setting[0]).lower() == "off":
            connection.close()
            raise LedgerConfigurationError(
                "PostgreSQL synchronous_commit is off: an acknowledged 'started' record could be lost"
            )
        self._local.connection = connection
        self._local.pid = pid
        with self._connections_lock:
            self._connections.append(connection)
        return connection

    def _migrate(self) -> None:
        connection = self._connection()
        schema = sql.Identifier(self.schema)
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
            connection.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {}.agentguard_schema (version integer NOT NULL)"
                ).format(schema)
            )
            row = connection.execute(
                sql.SQL("SELECT max(version) FROM {}.agentguard_schema").format(schema)
            ).fetchone()
            current = (row[0] if row else None) or 0
            if current > SCHEMA_VERSION:
                raise LedgerConfigurationError(
                    f"ledger schema version {current} is newer than this agentguard ({SCHEMA_VERSION})"
                )
            for version, statements in MIGRATIONS:
                if version <= current:
                    continue
                for statement in statements:
                    connection.execute(sql.SQL(statement).format(schema=schema))
                connection.execute(
                    sql.SQL("INSERT INTO {}.agentguard_schema (version) VALUES (%s)").format(
                        schema
                    ),
                    (version,),
                )

    def _prepare_statements(self) -> None:
        columns = sql.SQL(", ").join(sql.Identifier(c) for c in CALL_COLUMNS)
        event_columns = sql.SQL(", ").join(sql.Identifier(c) for c in EVENT_COLUMNS)
        placeholders = sql.SQL(", ").join(sql.Placeholder() for _ in CALL_COLUMNS)
        self._select = sql.SQL("SELECT {} FROM {}").format(columns, self._calls)
        self._event_columns = event_columns
        connection = self._connection()
        # The claim and its events in one statement: one round trip, one commit.
        self._claim_texts = {
            event_count: sql.SQL(
                "WITH inserted AS ("
                " INSERT INTO {calls} ({columns}) VALUES ({values})"
                " ON CONFLICT (tool_name, idempotency_key) DO NOTHING RETURNING call_id),"
                " logged AS ("
                " INSERT INTO {events} ({event_columns})"
                " SELECT inserted.call_id, e.at, e.from_status, e.to_status, e.actor, e.detail"
                " FROM inserted CROSS JOIN (VALUES {rows})"
                " AS e(at, from_status, to_status, actor, detail))"
                " SELECT count(*) FROM inserted"
            )
            .format(
                calls=self._calls,
                columns=columns,
                values=placeholders,
                events=self._events,
                event_columns=event_columns,
                rows=_event_rows(event_count),
            )
            .as_string(connection)
            for event_count in (1, 2)
        }
        self._select_text = self._select.as_string(connection)
        self._transition_cache: dict[tuple[str, ...], str] = {}

    def _transition_statement(self, columns: tuple[str, ...], event_count: int) -> str:
        # Composing SQL costs more than the statement's own CPU on the server: do it once per shape.
        cache_key = (*columns, str(event_count))
        cached = self._transition_cache.get(cache_key)
        if cached is not None:
            return cached
        statement = sql.SQL(
            "WITH updated AS ("
            " UPDATE {calls} SET {assignments}"
            " WHERE call_id = %s AND version = %s AND status = %s RETURNING call_id),"
            " logged AS ("
            " INSERT INTO {events} ({event_columns})"
            " SELECT updated.call_id, e.at, e.from_status, e.to_status, e.actor, e.detail"
            " FROM updated CROSS JOIN (VALUES {rows})"
            " AS e(at, from_status, to_status, actor, detail))"
            " SELECT count(*) FROM updated"
        ).format(
            calls=self._calls,
            rows=_event_rows(event_count),
            assignments=sql.SQL(", ").join(
                sql.SQL("{} = %s").format(sql.Identifier(column)) for column in columns
            ),
            events=self._events,
            event_columns=self._event_columns,
        )
        text = statement.as_string(self._connection())
        self._transition_cache[cache_key] = text
        return text

    def schema_version(self) -> int:
        row = (
            self._connection()
            .execute(
                sql.SQL("SELECT max(version) FROM {}.agentguard_schema").format(
                    sql.Identifier(self.schema)
                )
            )
            .fetchone()
        )
        return int(row[0] or 0) if row else 0

    def claim(self, entry: LedgerEntry, path: Sequence[Status]) -> tuple[bool, LedgerEntry]:
        steps = normalise_path(path)
        check_path(Status.PLANNED, steps[1:])
        now = time.time()
        stored = evolve(entry, status=steps[-1], created_at=now, updated_at=now, version=1)
        events = path_events(stored.call_id, None, steps, "runtime", None, now)
        connection = self._connection()
        row = connection.execute(
            self._claim_texts[len(events)], (*entry_to_row(stored), *_event_values(events))
        ).fetchone()
        if row is not None and row[0] == 1:
            return True, stored
        # ON CONFLICT DO NOTHING waited for a concurrent inserter to commit; read the winner.
        existing = self.find(entry.tool_name, entry.idempotency_key)
        if existing is None:
            raise RuntimeError(f"claim of {entry.idempotency_key!r} lost, yet no winner is visible")
        return False, existing

    def transition(
        self,
        entry: LedgerEntry,
        path: Status | Sequence[Status],
        *,
        actor: str = "runtime",
        detail: str | None = None,
        **changes: Any,
    ) -> LedgerEntry | None:
        steps = normalise_path(path)
        check_path(entry.status, steps)
        now = time.time()
        updated = apply_changes(entry, steps, changes, now)
        assignments = {
            column_for(name): encode_field(name, value) for name, value in changes.items()
        }
        assignments.update(status=steps[-1].value, updated_at=now, version=entry.version + 1)
        events = path_events(entry.call_id, entry.status, steps, actor, detail, now)
        statement = self._transition_statement(tuple(assignments), len(events))
        row = (
            self._connection()
            .execute(
                statement,
                (
                    *assignments.values(),
                    entry.call_id,
                    entry.version,
                    entry.status.value,
                    *_event_values(events),
                ),
            )
            .fetchone()
        )
        if row is None or row[0] != 1:
            return None
        return updated

    def get(self, call_id: str) -> LedgerEntry | None:
        row = (
            self._connection()
            .execute(self._select_text + " WHERE call_id = %s", (call_id,))
            .fetchone()
        )
        return row_to_entry(row) if row else None

    def find(self, tool_name: str, idempotency_key: str) -> LedgerEntry | None:
        row = (
            self._connection()
            .execute(
                self._select_text + " WHERE tool_name = %s AND idempotency_key = %s",
                (tool_name, idempotency_key),
            )
            .fetchone()
        )
        return row_to_entry(row) if row else None

    def entries(
        self,
        *,
        run_id: str | None = None,
        tool_name: str | None = None,
        status: Status | str | Iterable[Status | str] | None = None,
        input_hash: str | None = None,
        idempotency_key: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerEntry]:
        clauses: list[sql.Composable] = []
        parameters: list[Any] = []
        for column, value in (
            ("run_id", run_id),
            ("tool_name", tool_name),
            ("input_hash", input_hash),
            ("idempotency_key", idempotency_key),
        ):
            if value is not None:
                clauses.append(sql.SQL("{} = %s").format(sql.Identifier(column)))
                parameters.append(value)
        statuses = normalise_statuses(status)
        if statuses is not None:
            clauses.append(sql.SQL("status = ANY(%s)"))
            parameters.append(statuses)
        statement = self._select
        if clauses:
            statement = statement + sql.SQL(" WHERE ") + sql.SQL(" AND ").join(clauses)
        statement = statement + sql.SQL(" ORDER BY created_at, call_id")
        if limit is not None:
            statement = statement + sql.SQL(" LIMIT %s")
            parameters.append(limit)
        rows = self._connection().execute(statement, parameters).fetchall()
        return [row_to_entry(row) for row in rows]

    def events(self, call_id: str) -> list[LedgerEvent]:
        rows = (
            self._connection()
            .execute(
                sql.SQL("SELECT {} FROM {} WHERE call_id = %s ORDER BY id").format(
                    self._event_columns, self._events
                ),
                (call_id,),
            )
            .fetchall()
        )
        return [row_to_event(row) for row in rows]

    def close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()
        self._local = threading.local()
