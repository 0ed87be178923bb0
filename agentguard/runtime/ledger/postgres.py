"""PostgreSQL ledger: many workers on many machines.

Uniqueness comes from a unique index on (tool_name, idempotency_key) and INSERT ... ON CONFLICT;
every change is a compare-and-set on ``version``. Each claim and each transition is a single
statement (the transition appends its events to the row's history), so one round trip and one
commit.
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
    INSERT_COLUMNS,
    STATUS_CHECK,
    column_for,
    decode_history,
    encode_field,
    encode_history,
    entry_to_row,
    row_to_entry,
    update_text,
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
    (
        # v2: the history moves into the row and the status and input-hash indexes go, so a
        # transition changes no indexed column: PostgreSQL updates the row in place (HOT, with
        # room left on each page by the fillfactor) and writes no index entries at all.
        2,
        [
            "ALTER TABLE {schema}.agentguard_calls ADD COLUMN history text NOT NULL DEFAULT ''",
            """UPDATE {schema}.agentguard_calls AS c SET history = coalesce((
                SELECT string_agg(
                    json_build_array(e.at, e.from_status, e.to_status, e.actor, e.detail)::text
                    || chr(10), '' ORDER BY e.id)
                FROM {schema}.agentguard_events e WHERE e.call_id = c.call_id), '')""",
            "DROP INDEX {schema}.agentguard_calls_status",
            "DROP INDEX {schema}.agentguard_calls_input_hash",
            "DROP TABLE {schema}.agentguard_events",
            "ALTER TABLE {schema}.agentguard_calls SET (fillfactor = 70)",
        ],
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]
_MIGRATION_LOCK = 0x61676774  # pg_advisory_xact_lock key: one migrator at a time


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
        connection = self._connection()
        columns = sql.SQL(", ").join(sql.Identifier(c) for c in CALL_COLUMNS)
        self._select = sql.SQL("SELECT {} FROM {}").format(columns, self._calls)
        self._select_text = self._select.as_string(connection)
        self._calls_text = self._calls.as_string(connection)
        self._insert_text = (
            sql.SQL(
                "INSERT INTO {calls} ({columns}) VALUES ({values})"
                " ON CONFLICT (tool_name, idempotency_key) DO NOTHING"
            )
            .format(
                calls=self._calls,
                columns=sql.SQL(", ").join(sql.Identifier(c) for c in INSERT_COLUMNS),
                values=sql.SQL(", ").join(sql.Placeholder() for _ in INSERT_COLUMNS),
            )
            .as_string(connection)
        )
        self._update_texts: dict[tuple[str, ...], str] = {}

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
        history = encode_history(None, steps, "runtime", None, now)
        cursor = self._connection().execute(self._insert_text, entry_to_row(stored, history))
        if cursor.rowcount == 1:
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
        lease_expired_by: float | None = None,
        **changes: Any,
    ) -> LedgerEntry | None:
        steps = normalise_path(path)
        check_path(entry.status, steps)
        now = time.time()
        updated = apply_changes(entry, steps, changes, now)
        shape = (*changes, "" if lease_expired_by is None else "lease_expired_by")
        statement = self._update_texts.get(shape)
        if statement is None:
            # Composing SQL costs more than the statement's own work on the server: once per shape.
            columns = [column_for(name) for name in changes]
            statement = update_text(
                self._calls_text,
                [*columns, "status", "updated_at", "version"],
                "%s",
                lease_guard=lease_expired_by is not None,
            )
            self._update_texts[shape] = statement
        parameters = (
            *[encode_field(name, value) for name, value in changes.items()],
            steps[-1].value,
            now,
            entry.version + 1,
            encode_history(entry.status, steps, actor, detail, now),
            entry.call_id,
            entry.version,
            entry.status.value,
            *(() if lease_expired_by is None else (lease_expired_by,)),
        )
        if self._connection().execute(statement, parameters).rowcount != 1:
            return None
        return updated

    def renew_lease(self, call_id: str, attempt: int, expires_at: float) -> bool:
        statement = (
            f"UPDATE {self._calls_text} SET lease_expires_at = %s "
            "WHERE call_id = %s AND status = 'started' AND attempts = %s"
        )
        cursor = self._connection().execute(statement, (expires_at, call_id, attempt))
        return bool(cursor.rowcount == 1)

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
        row = (
            self._connection()
            .execute(
                sql.SQL("SELECT history FROM {} WHERE call_id = %s").format(self._calls),
                (call_id,),
            )
            .fetchone()
        )
        return decode_history(call_id, row[0]) if row else []

    def close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()
        self._local = threading.local()
