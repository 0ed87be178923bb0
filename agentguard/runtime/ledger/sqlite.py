"""SQLite ledger: the embedded default, safe for several processes on one machine.

WAL with synchronous=FULL, so an acknowledged commit survives power loss. Every write takes the
write lock before it reads (BEGIN IMMEDIATE for multi-statement transactions; a single writing
statement in autocommit mode does so by itself), so writers queue on the busy timeout instead of
failing with SQLITE_BUSY.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
            f"""CREATE TABLE agentguard_calls (
                call_id TEXT PRIMARY KEY,
                run_id TEXT NOT NULL,
                step_id TEXT,
                tool_name TEXT NOT NULL,
                user_id TEXT,
                approved_at TEXT,
                idempotency_key TEXT NOT NULL,
                input_hash TEXT NOT NULL,
                args_json TEXT NOT NULL,
                status TEXT NOT NULL CHECK ({STATUS_CHECK}),
                risk TEXT NOT NULL,
                idempotency TEXT NOT NULL,
                replay TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                error_code TEXT,
                error_detail TEXT,
                started_at REAL,
                finished_at REAL,
                result_json TEXT,
                result_ref TEXT,
                lease_owner TEXT,
                lease_expires_at REAL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                version INTEGER NOT NULL
            )""",
            "CREATE UNIQUE INDEX agentguard_calls_key ON agentguard_calls (tool_name, idempotency_key)",
            "CREATE INDEX agentguard_calls_run ON agentguard_calls (run_id)",
            "CREATE INDEX agentguard_calls_status ON agentguard_calls (status)",
            "CREATE INDEX agentguard_calls_input_hash ON agentguard_calls (input_hash)",
            """CREATE TABLE agentguard_events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                call_id TEXT NOT NULL,
                at REAL NOT NULL,
                from_status TEXT,
                to_status TEXT NOT NULL,
                actor TEXT NOT NULL,
                detail TEXT
            )""",
            "CREATE INDEX agentguard_events_call ON agentguard_events (call_id, id)",
        ],
    ),
    (
        # v2: the history moves into the row (one page per transition, no event table or
        # index to update), and the status and input-hash indexes go: they were touched by
        # every call, while only recovery and the ledger CLI filter on those columns.
        2,
        [
            "ALTER TABLE agentguard_calls ADD COLUMN history TEXT NOT NULL DEFAULT ''",
            """UPDATE agentguard_calls SET history = coalesce((
                SELECT group_concat(line, '') FROM (
                    SELECT json_array(at, from_status, to_status, actor, detail) || char(10) AS line
                    FROM agentguard_events e WHERE e.call_id = agentguard_calls.call_id
                    ORDER BY e.id
                )), '')""",
            "DROP INDEX agentguard_calls_status",
            "DROP INDEX agentguard_calls_input_hash",
            "DROP TABLE agentguard_events",
        ],
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]

_INSERT_CALL = (
    f"INSERT INTO agentguard_calls ({', '.join(INSERT_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in INSERT_COLUMNS)}) "
    "ON CONFLICT (tool_name, idempotency_key) DO NOTHING"
)
_SELECT_CALLS = f"SELECT {', '.join(CALL_COLUMNS)} FROM agentguard_calls"


class SQLiteLedger(Ledger):
    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_s: float = 30.0) -> None:
        self.path = str(path)
        self.url = f"sqlite:///{self.path}"
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._update_texts: dict[tuple[str, ...], str] = {}
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._migrate()

    # One connection per thread and per process: sqlite3 connections must not cross threads,
    # and a connection inherited through fork() must never be used by the child.
    def _connection(self) -> sqlite3.Connection:
        pid = os.getpid()
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == pid:
            return connection
        connection = sqlite3.connect(
            self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=True
        )
        # Only takes effect when the file is created. A call writes small rows, so a 2 KiB page
        # halves the bytes each commit appends to the WAL (and syncs) compared with 4 KiB.
        connection.execute("PRAGMA page_size=2048")
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal" and self.path != ":memory:":
            raise LedgerConfigurationError(f"SQLite refused WAL mode (got {mode!r})")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
        self._local.connection = connection
        self._local.pid = pid
        with self._connections_lock:
            self._connections.append(connection)
        return connection

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        connection = self._connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def _migrate(self) -> None:
        with self._write() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS agentguard_schema (version INTEGER NOT NULL)"
            )
            row = connection.execute("SELECT max(version) FROM agentguard_schema").fetchone()
            current = row[0] or 0
            if current > SCHEMA_VERSION:
                raise LedgerConfigurationError(
                    f"ledger schema version {current} is newer than this agentguard ({SCHEMA_VERSION})"
                )
            for version, statements in MIGRATIONS:
                if version <= current:
                    continue
                for statement in statements:
                    connection.execute(statement)
                connection.execute("INSERT INTO agentguard_schema (version) VALUES (?)", (version,))

    def schema_version(self) -> int:
        row = self._connection().execute("SELECT max(version) FROM agentguard_schema").fetchone()
        return int(row[0] or 0)

    def pragma(self, name: str) -> Any:
        return self._connection().execute(f"PRAGMA {name}").fetchone()[0]

    def claim(self, entry: LedgerEntry, path: Sequence[Status]) -> tuple[bool, LedgerEntry]:
        steps = normalise_path(path)
        check_path(Status.PLANNED, steps[1:])
        now = time.time()
        stored = evolve(entry, status=steps[-1], created_at=now, updated_at=now, version=1)
        history = encode_history(None, steps, "runtime", None, now)
        # One statement in autocommit mode is its own transaction, and a writing statement
        # takes the write lock (waiting on the busy timeout) before it reads anything: the
        # same guarantee as BEGIN IMMEDIATE, without two extra round trips.
        connection = self._connection()
        if connection.execute(_INSERT_CALL, entry_to_row(stored, history)).rowcount == 1:
            return True, stored
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
            columns = [column_for(name) for name in changes]
            statement = update_text(
                "agentguard_calls",
                [*columns, "status", "updated_at", "version"],
                "?",
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
        cursor = self._connection().execute(
            "UPDATE agentguard_calls SET lease_expires_at = ? "
            "WHERE call_id = ? AND status = 'started' AND attempts = ?",
            (expires_at, call_id, attempt),
        )
        return bool(cursor.rowcount == 1)

    def get(self, call_id: str) -> LedgerEntry | None:
        row = (
            self._connection().execute(f"{_SELECT_CALLS} WHERE call_id = ?", (call_id,)).fetchone()
        )
        return row_to_entry(row) if row else None

    def find(self, tool_name: str, idempotency_key: str) -> LedgerEntry | None:
        row = (
            self._connection()
            .execute(
                f"{_SELECT_CALLS} WHERE tool_name = ? AND idempotency_key = ?",
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
        clauses: list[str] = []
        parameters: list[Any] = []
        for column, value in (
            ("run_id", run_id),
            ("tool_name", tool_name),
            ("input_hash", input_hash),
            ("idempotency_key", idempotency_key),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                parameters.append(value)
        statuses = normalise_statuses(status)
        if statuses is not None:
            clauses.append(f"status IN ({', '.join('?' for _ in statuses)})")
            parameters.extend(statuses)
        sql = _SELECT_CALLS
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        sql += " ORDER BY created_at, call_id"
        if limit is not None:
            sql += " LIMIT ?"
            parameters.append(limit)
        return [row_to_entry(row) for row in self._connection().execute(sql, parameters)]

    def events(self, call_id: str) -> list[LedgerEvent]:
        row = (
            self._connection()
            .execute("SELECT history FROM agentguard_calls WHERE call_id = ?", (call_id,))
            .fetchone()
        )
        return decode_history(call_id, row[0]) if row else []

    def close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            # a connection of another thread refuses close(); it goes when that thread does
            with contextlib.suppress(sqlite3.ProgrammingError):
                connection.close()
        self._local = threading.local()
