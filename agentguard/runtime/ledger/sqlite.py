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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import repeat
from operator import is_, itemgetter
from pathlib import Path
from typing import Any

from agentguard.runtime.ledger._rows import STATUS_CHECK
from agentguard.runtime.ledger._sql import Migrations, SQLLedger
from agentguard.runtime.ledger.base import (
    LedgerConfigurationError,
    LedgerMissing,
    LedgerUnanswered,
    current_pid,
)

MIGRATIONS: Migrations = [
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
    (
        # v3: the run's tenant and extra fields, which keys and lookups read: recovery sees them
        3,
        [
            "ALTER TABLE agentguard_calls ADD COLUMN tenant TEXT",
            "ALTER TABLE agentguard_calls ADD COLUMN extra_json TEXT NOT NULL DEFAULT '{}'",
        ],
    ),
    (
        # v4: who approved a call and when (approval may come later, from a person)
        4,
        [
            "ALTER TABLE agentguard_calls ADD COLUMN approved_by TEXT",
            "ALTER TABLE agentguard_calls ADD COLUMN approved_on REAL",
        ],
    ),
    (
        # v5: the effects the tool declares, kept with each call
        5,
        ["ALTER TABLE agentguard_calls ADD COLUMN side_effects_json TEXT NOT NULL DEFAULT '[]'"],
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]


class SQLiteLedger(SQLLedger):
    placeholder = "?"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_s: float = 30.0,
        lazy: bool = False,
        read_only: bool = False,
    ) -> None:
        """``lazy=True``: the file and its schema are created on first use, not here, so a
        module that builds its Runtime at import time touches no disk until a call runs.

        ``read_only=True``: open a ledger that exists, at this agentguard's schema version,
        to read it (``agentguard ledger list``): nothing is created or migrated, SQLite refuses
        every write, and a file without a ledger is ``LedgerMissing``."""
        self.path = str(path)
        self.url = f"sqlite:///{self.path}"
        self.busy_timeout_s = busy_timeout_s
        self.read_only = read_only
        self._init_connections()
        self._null_shapes: dict[tuple[str, tuple[bool, ...]], tuple[str, Any]] = {}
        self._unopened = lazy and not read_only
        self._open_lock = threading.Lock()
        self._opening = threading.local()  # set in the thread running the migration
        if read_only:
            self._require_current()
        elif not lazy:
            self._open()
        self._prepare_statements("agentguard_calls", "agentguard_schema")

    def _require_current(self) -> None:
        """The file holds this agentguard's ledger (else ``LedgerMissing``, naming the file
        and what is not there), read without creating anything."""
        connection = self._connection()
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        missing = [name for name in ("agentguard_schema", "agentguard_calls") if name not in tables]
        if missing:
            raise LedgerMissing(
                f"{self.path} has no ledger: no table " + " and no table ".join(missing)
            )
        row = connection.execute("SELECT max(version) FROM agentguard_schema").fetchone()
        version = (row[0] if row else None) or 0
        if version != SCHEMA_VERSION:
            raise LedgerConfigurationError(
                f"the ledger in {self.path} is at schema version {version}; this agentguard "
                f"reads version {SCHEMA_VERSION}"
                + (
                    ": use the agentguard that wrote it"
                    if version > SCHEMA_VERSION
                    else ": the agent's next run upgrades it"
                )
            )

    def _open(self) -> None:
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._migrate()

    def _connection(self) -> sqlite3.Connection:
        # Threads wait for the first one to migrate; the migration's own statements pass.
        if self._unopened and not self.closed and not getattr(self._opening, "active", False):
            with self._open_lock:
                if self._unopened:
                    self._opening.active = True
                    try:
                        self._open()
                    finally:
                        self._opening.active = False
                    self._unopened = False
        connection: sqlite3.Connection = super()._connection()
        return connection

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            # ``mode=ro``: SQLite creates no file and refuses every write
            target = Path(self.path).resolve().as_uri() + "?mode=ro"
            connection = sqlite3.connect(
                target,
                uri=True,
                timeout=self.busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
            connection.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
            return connection
        connection = sqlite3.connect(
            # used by one thread only; closed from another when that thread has ended
            self.path,
            timeout=self.busy_timeout_s,
            isolation_level=None,
            check_same_thread=False,
        )
        # Only takes effect when the file is created. A call writes small rows, so a 2 KiB page
        # halves the bytes each commit appends to the WAL (and syncs) compared with 4 KiB.
        connection.execute("PRAGMA page_size=2048")
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal" and self.path != ":memory:":
            raise LedgerConfigurationError(f"SQLite refused WAL mode (got {mode!r})")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
        return connection

    def _execute(self, statement: str, parameters: Sequence[Any]) -> Any:
        if type(parameters) is list or type(parameters) is tuple:
            nones = tuple(map(is_, parameters, repeat(None)))
            if True in nones:
                statement, parameters = self._with_nulls(statement, parameters, nones)
        held = getattr(self._local, "held", None)
        try:
            if held is not None and held.executor is not None and held.pid == current_pid():
                # this thread's connection, opened by this process (the ledger is open: it was
                # made by ``_connection()``): a SQLite connection never breaks, so a statement
                # is sent once, as ``SQLLedger._execute`` would after finding the same
                return held.executor.execute(statement, parameters)
            return super()._execute(statement, parameters)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise LedgerUnanswered(
                    f"the SQLite ledger {self.path} stayed locked for its busy timeout "
                    f"({self.busy_timeout_s:g} s): {exc}"
                ) from exc
            raise

    def _with_nulls(
        self, statement: str, parameters: Sequence[Any], nones: tuple[bool, ...]
    ) -> tuple[str, Sequence[Any]]:
        """``statement`` with NULL written in place of each parameter that is None, and the
        other parameters: the same statement. The sqlite3 module binds None only after looking
        for an adapter for it, a search that fails through a formatted AttributeError: several
        times what binding a value costs, for each of the ten None a claim's row holds."""
        key = (statement, nones)
        shape = self._null_shapes.get(key)
        if shape is None:
            parts = statement.split("?")
            if len(parts) != len(nones) + 1 or any(part[:1].isdigit() for part in parts[1:]):
                return statement, parameters  # a "?" that is no placeholder, or a "?NNN"
            text = parts[0] + "".join(
                ("NULL" if none else "?") + part
                for none, part in zip(nones, parts[1:], strict=True)
            )
            kept = tuple(index for index, none in enumerate(nones) if not none)
            # the other parameters read in one call (itemgetter of one index gives no tuple)
            pick = (
                itemgetter(*kept)
                if len(kept) > 1
                else lambda values: tuple(values[index] for index in kept)
            )
            shape = text, pick
            if len(self._null_shapes) < 256:  # bounded: a few statements, a few shapes each
                self._null_shapes[key] = shape
        text, pick = shape
        return text, pick(parameters)

    def _close_connection(self, connection: sqlite3.Connection) -> None:
        # a connection of another thread refuses close(); it goes when that thread does
        with contextlib.suppress(sqlite3.ProgrammingError):
            connection.close()

    def _statuses_match(self, statuses: list[str]) -> tuple[str, list[Any]]:
        return f"status IN ({', '.join('?' for _ in statuses)})", list(statuses)

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
        if self._is_current():
            return  # nothing to do: no write lock to wait for (another process may hold it)
        with self._write() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS agentguard_schema (version INTEGER NOT NULL)"
            )
            row = connection.execute("SELECT max(version) FROM agentguard_schema").fetchone()
            self._apply_migrations(
                MIGRATIONS,
                row[0] or 0,
                connection.execute,
                lambda version: connection.execute(
                    "INSERT INTO agentguard_schema (version) VALUES (?)", (version,)
                ),
            )

    def _is_current(self) -> bool:
        connection = self._connection()
        try:
            row = connection.execute("SELECT max(version) FROM agentguard_schema").fetchone()
        except sqlite3.OperationalError:  # no such table yet
            return False
        return bool(row) and row[0] == SCHEMA_VERSION

    def pragma(self, name: str) -> Any:
        return self._connection().execute(f"PRAGMA {name}").fetchone()[0]
