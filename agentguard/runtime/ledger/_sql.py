"""The ledger operations both SQL backends share, written once.

Each operation is a generator of the statements it sends, reading their answers as they come, so
that the sync driver here (one connection per thread) and PostgreSQL's async one (psycopg's
async connections, pooled) perform the same statements with the same fencing. A backend supplies what differs between dialects: how it opens a connection, its placeholder,
the table names as SQL text, how a statement matches a list of statuses, and how it migrates
and locks. Every claim and every transition stays one statement, so one round trip and one
commit.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from abc import abstractmethod
from collections.abc import Callable, Coroutine, Generator, Iterable, Sequence
from typing import Any, TypeVar

from agentguard.runtime.ledger._rows import (
    CALL_COLUMNS,
    INSERT_COLUMNS,
    column_for,
    decode_history,
    encode_field,
    encode_history,
    fields_to_row,
    history_rests,
    history_text,
    row_to_entry,
    update_text,
)
from agentguard.runtime.ledger.base import (
    MUTABLE_FIELDS,
    AsyncLedger,
    Ledger,
    LedgerClosed,
    LedgerConfigurationError,
    LedgerEntry,
    LedgerEvent,
    Status,
    current_pid,
    legal_path,
    normalise_statuses,
    with_fields,
)

Migrations = list[tuple[int, list[str]]]

T = TypeVar("T")

# A claim's final status and history lines (``history_rests``), by its path.
_CLAIM_PLANS: dict[tuple[Status, ...], tuple[Status, list[str]]] = {}

# The fields ``encode_field`` writes as JSON; every other one is sent as it is (a status as
# its value).
_ENCODED = frozenset({"args", "extra", "result"})

# What an operation wants back from a statement it yields: the count of rows it changed, its
# first row (None if it has none), or all its rows.
ROWCOUNT, ONE_ROW, ALL_ROWS = "rowcount", "one row", "all rows"

# A ledger operation written once for every driver: it yields (statement, parameters, wanted)
# and is sent that answer; its return value is the operation's.
Operation = Generator[tuple[str, Sequence[Any], str], Any, T]


class _Held:
    """A thread's connection; closed when the thread ends and its thread-local goes with it.

    Only by the process that opened it: a child forked with a copy must not close (for
    PostgreSQL: terminate) its parent's session.
    """

    __slots__ = ("__weakref__", "_close", "connection", "executor", "pid")

    def __init__(self, connection: Any, close: Callable[[Any], None]) -> None:
        self.connection = connection
        self.executor: Any = None  # what the ledger's statements are sent through
        self.pid = current_pid()
        self._close = close

    def release(self) -> None:
        connection, self.connection, self.executor = self.connection, None, None
        if connection is not None and self.pid == current_pid():
            with contextlib.suppress(Exception):  # already gone
                self._close(connection)

    def __del__(self) -> None:
        self.release()


class SQLLedger(Ledger):
    """A ledger in one SQL table, reached through one connection per thread and per process.

    Subclasses set ``placeholder`` and implement ``_connect``; they call ``_init_connections``
    before their first statement and ``_prepare_statements`` once the table exists.
    """

    placeholder: str = "?"

    def _init_connections(self) -> None:
        self._local = threading.local()
        self._connections: weakref.WeakSet[_Held] = weakref.WeakSet()
        self._connections_lock = threading.Lock()

    @abstractmethod
    def _connect(self) -> Any:
        """A new connection in autocommit mode, checked for the durability the ledger needs."""

    def _reusable(self, connection: Any) -> bool:
        return True

    def _close_connection(self, connection: Any) -> None:
        connection.close()

    @abstractmethod
    def _statuses_match(self, statuses: list[str]) -> tuple[str, list[Any]]:
        """A condition that ``status`` is one of ``statuses``, and its parameters."""

    # One connection per thread and per process: a connection must not cross threads, and one
    # inherited through fork() must never be used by the child.
    # A thread's connection is closed when the thread ends (its thread-local holder goes), so
    # short-lived threads do not pile up server connections or file descriptors.
    def _connection(self) -> Any:
        held = getattr(self._local, "held", None)
        if (
            held is not None
            and held.connection is not None
            and held.pid == current_pid()
            and self._reusable(held.connection)
        ):
            return held.connection
        if self.closed:  # a closed ledger does not reopen: nothing reaches its store any more
            raise LedgerClosed(f"this {type(self).__name__} was closed")
        held = _Held(self._connect(), self._close_connection)
        self._local.held = held
        with self._connections_lock:
            self._connections.add(held)
        return held.connection

    def _broken(self, connection: Any, error: Exception) -> bool:
        """Whether ``error`` left ``connection`` unusable (the server restarted, a dropped link)."""
        return False

    def _execute(self, statement: str, parameters: Sequence[Any]) -> Any:
        """Run one statement; on a connection that broke, once more on a new connection.

        Every statement the ledger sends is safe to send twice: reads, an insert that does
        nothing on conflict, compare-and-set updates (the callers recognise their own write
        when the first one committed but its answer was lost).
        """
        connection = self._connection()
        try:
            return self._executor_of(connection).execute(statement, parameters)
        except Exception as exc:
            if not self._broken(connection, exc):
                raise
        self._drop(connection)
        return self._executor_of(self._connection()).execute(statement, parameters)

    def _executor_of(self, connection: Any) -> Any:
        """This thread's cursor of ``connection``, kept for its statements (each statement's
        answer is read before the next is sent): ``Connection.execute`` would build a cursor
        (and, in psycopg, its adapters) for every statement."""
        held = self._local.held  # ``connection``'s, set by ``_connection()``
        if held.executor is None:
            held.executor = connection.cursor()
        return held.executor

    def _drop(self, connection: Any) -> None:
        held = getattr(self._local, "held", None)
        if held is not None and held.connection is connection:
            self._local.held = None
            held.release()

    def _prepare_statements(self, calls: str, schema_table: str) -> None:
        """Statement texts for the calls table and the schema-version table named as given."""
        mark = self.placeholder
        self._calls_text = calls
        self._schema_table_text = schema_table
        self._select_text = f"SELECT {', '.join(CALL_COLUMNS)} FROM {calls}"
        self._insert_text = (
            f"INSERT INTO {calls} ({', '.join(INSERT_COLUMNS)}) "
            f"VALUES ({', '.join(mark for _ in INSERT_COLUMNS)}) "
            "ON CONFLICT (tool_name, idempotency_key) DO NOTHING"
        )
        self._get_text = f"{self._select_text} WHERE call_id = {mark}"
        self._find_text = (
            f"{self._select_text} WHERE tool_name = {mark} AND idempotency_key = {mark}"
        )
        self._renew_text = (
            f"UPDATE {calls} SET lease_expires_at = {mark} "
            f"WHERE call_id = {mark} AND status = 'started' AND attempts = {mark}"
        )
        self._release_text = (
            f"UPDATE {calls} SET lease_owner = NULL, lease_expires_at = NULL, "
            f"history = history || {mark} WHERE call_id = {mark} AND attempts = {mark} "
            f"AND lease_owner = {mark} AND status = 'uncertain'"
        )
        self._note_text = f"UPDATE {calls} SET history = history || {mark} WHERE call_id = {mark}"
        self._events_text = f"SELECT history FROM {calls} WHERE call_id = {mark}"
        self._update_texts: dict[tuple[str, ...], str] = {}
        self._transition_plans: dict[tuple[Any, ...], Any] = {}

    @staticmethod
    def _apply_migrations(
        migrations: Migrations,
        current: int,
        execute: Callable[[str], object],
        record: Callable[[int], object],
    ) -> None:
        """Run the statements of every migration newer than ``current``, recording each."""
        latest = migrations[-1][0]
        if current > latest:
            raise LedgerConfigurationError(
                f"ledger schema version {current} is newer than this agentguard ({latest})"
            )
        for version, statements in migrations:
            if version <= current:
                continue
            for statement in statements:
                execute(statement)
            record(version)

    def schema_version(self) -> int:
        row = (
            self._connection()
            .execute(f"SELECT max(version) FROM {self._schema_table_text}")
            .fetchone()
        )
        return int(row[0] or 0) if row else 0

    # ---- the operations, written once; ``_perform`` sends their statements -----------------

    def _perform(self, operation: Operation[T]) -> T:
        """Run ``operation`` on this thread's connection: the sync driver of the operations."""
        answer: Any = None
        while True:
            try:
                text, parameters, wanted = operation.send(answer)
            except StopIteration as done:
                return done.value
            cursor = self._execute(text, parameters)
            if wanted == ROWCOUNT:
                answer = cursor.rowcount
            else:
                answer = cursor.fetchone() if wanted == ONE_ROW else cursor.fetchall()

    # A call's claim and its transition are sent here directly, not through ``_perform``: the
    # generator's frames and its StopIteration cost a fifth of the ledger's own Python work.
    # The rare turns (a key already held, a compare-and-set that finds another version) go on
    # through the operations written once below.
    def claim(self, entry: LedgerEntry, path: Sequence[Status]) -> tuple[bool, LedgerEntry]:
        stored, row = self._claim_row(entry, path)
        if self._execute(self._insert_text, row).rowcount == 1:
            return True, stored
        return self._perform(self._claim_lost(entry))

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
        updated, statement, parameters = self._transition_statement(
            entry, path, actor, detail, lease_expired_by, changes
        )
        if self._execute(statement, parameters).rowcount == 1:
            return updated
        return self._perform(self._transition_lost(entry, updated))

    def renew_lease(self, call_id: str, attempt: int, expires_at: float) -> bool:
        return self._perform(self._renew_lease(call_id, attempt, expires_at))

    def release_lease(self, call_id: str, attempt: int, owner: str, detail: str) -> bool:
        return self._perform(self._release_lease(call_id, attempt, owner, detail))

    def note(self, entry: LedgerEntry, actor: str, detail: str) -> None:
        self._perform(self._note(entry, actor, detail))

    def get(self, call_id: str) -> LedgerEntry | None:
        return self._perform(self._get(call_id))

    def find(self, tool_name: str, idempotency_key: str) -> LedgerEntry | None:
        return self._perform(self._find(tool_name, idempotency_key))

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
        return self._perform(
            self._entries(run_id, tool_name, status, input_hash, idempotency_key, limit)
        )

    def _entries(
        self,
        run_id: str | None,
        tool_name: str | None,
        status: Status | str | Iterable[Status | str] | None,
        input_hash: str | None,
        idempotency_key: str | None,
        limit: int | None,
    ) -> Operation[list[LedgerEntry]]:
        mark = self.placeholder
        clauses: list[str] = []
        parameters: list[Any] = []
        for column, value in (
            ("run_id", run_id),
            ("tool_name", tool_name),
            ("input_hash", input_hash),
            ("idempotency_key", idempotency_key),
        ):
            if value is not None:
                clauses.append(f"{column} = {mark}")
                parameters.append(value)
        statuses = normalise_statuses(status)
        if statuses is not None:
            clause, values = self._statuses_match(statuses)
            clauses.append(clause)
            parameters.extend(values)
        statement = self._select_text
        if clauses:
            statement += " WHERE " + " AND ".join(clauses)
        statement += " ORDER BY created_at, call_id"
        if limit is not None:
            statement += f" LIMIT {mark}"
            parameters.append(limit)
        rows = yield statement, parameters, ALL_ROWS
        return [row_to_entry(row) for row in rows]

    def events(self, call_id: str) -> list[LedgerEvent]:
        row = self._execute(self._events_text, (call_id,)).fetchone()
        return decode_history(call_id, row[0]) if row else []

    # Each operation below is a generator: it yields ``(statement, parameters, wanted)`` and is
    # sent the answer it wanted (the row count, one row or None, or all rows), so that a sync
    # driver (``_perform``) and an async one (PostgreSQL's) send the same statements and read
    # their answers the same way.

    def _claim(
        self, entry: LedgerEntry, path: Sequence[Status]
    ) -> Operation[tuple[bool, LedgerEntry]]:
        stored, row = self._claim_row(entry, path)
        # One statement in autocommit mode is its own transaction, and a writing statement takes
        # the write lock (SQLite waits on its busy timeout) before it reads anything: the same
        # guarantee as an explicit transaction, without two extra round trips.
        inserted = yield self._insert_text, row, ROWCOUNT
        if inserted == 1:
            return True, stored
        return (yield from self._claim_lost(entry))

    @staticmethod
    def _claim_row(entry: LedgerEntry, path: Sequence[Status]) -> tuple[LedgerEntry, list[Any]]:
        """The entry a claim stores, and its row (``INSERT_COLUMNS``)."""
        plan = _CLAIM_PLANS.get(path) if type(path) is tuple else None
        if plan is None:
            steps = legal_path(None, path)
            plan = steps[-1], history_rests(None, steps, "runtime", None)
            if type(path) is tuple:  # bounded: a claim takes one of a few legal paths
                _CLAIM_PLANS[path] = plan
        status, rests = plan
        now = time.time()
        # evolve(entry, status=..., created_at=now, updated_at=now, version=1), written out
        fields = entry.__dict__ | {
            "status": status,
            "created_at": now,
            "updated_at": now,
            "version": 1,
        }
        return with_fields(entry.__class__, fields), fields_to_row(fields, history_text(rests, now))

    def _claim_lost(self, entry: LedgerEntry) -> Operation[tuple[bool, LedgerEntry]]:
        """A claim whose insert changed nothing: the key's winner, read back."""
        # ON CONFLICT DO NOTHING waited for a concurrent inserter to commit; read the winner.
        existing = yield from self._find(entry.tool_name, entry.idempotency_key)
        if existing is None:
            raise RuntimeError(f"claim of {entry.idempotency_key!r} lost, yet no winner is visible")
        if existing.call_id == entry.call_id:
            return True, existing  # our insert committed; its answer was lost with the connection
        return False, existing

    def _transition(
        self,
        entry: LedgerEntry,
        path: Status | Sequence[Status],
        actor: str,
        detail: str | None,
        lease_expired_by: float | None,
        changes: dict[str, Any],
    ) -> Operation[LedgerEntry | None]:
        updated, statement, parameters = self._transition_statement(
            entry, path, actor, detail, lease_expired_by, changes
        )
        if (yield statement, parameters, ROWCOUNT) != 1:
            return (yield from self._transition_lost(entry, updated))
        return updated

    def _transition_statement(
        self,
        entry: LedgerEntry,
        path: Status | Sequence[Status],
        actor: str,
        detail: str | None,
        lease_expired_by: float | None,
        changes: dict[str, Any],
    ) -> tuple[LedgerEntry, str, list[Any]]:
        """The entry a transition stores, its compare-and-set statement and parameters."""
        start = entry.status
        guarded = lease_expired_by is not None
        # A call's transitions recur in a few shapes (from, to, by whom, the fields changed):
        # the steps, statement and history lines of each are worked out once.
        key = (start, path, actor, guarded, *changes) if type(path) is Status else None
        plan = self._transition_plans.get(key) if key is not None else None
        if plan is None:
            plan = self._transition_plan(start, path, actor, guarded, changes)
            if key is not None and len(self._transition_plans) < 256:  # bounded: actors vary
                self._transition_plans[key] = plan
        steps, statement, encoded, rests, status = plan
        now = time.time()
        version = entry.version + 1
        # apply_changes(entry, steps, changes, now), its check made with the plan
        updated = with_fields(
            LedgerEntry,
            {
                **entry.__dict__,
                **changes,
                "status": status,
                "version": version,
                "updated_at": now,
            },
        )
        values = [*changes.values()]
        for index, name in encoded:
            values[index] = encode_field(name, values[index])
        if Status in map(type, values):  # a status given as a field's value: sent as its text
            values = [value._value_ if type(value) is Status else value for value in values]
        values += (
            status._value_,
            now,
            version,
            history_text(rests, now)
            if detail is None
            else encode_history(start, steps, actor, detail, now),
            entry.call_id,
            entry.version,
            start._value_,
        )
        if lease_expired_by is not None:
            values.append(lease_expired_by)
        return updated, statement, values

    def _transition_plan(
        self,
        start: Status,
        path: Status | Sequence[Status],
        actor: str,
        guarded: bool,
        changes: dict[str, Any],
    ) -> tuple[tuple[Status, ...], str, tuple[tuple[int, str], ...], list[str], Status]:
        """A transition's steps (IllegalTransition), its statement, the changed fields written
        as JSON (by position), its history lines without a detail (``history_rests``) and the
        status it ends in."""
        steps = legal_path(start, path)
        if not MUTABLE_FIELDS.issuperset(changes):
            unknown = set(changes) - MUTABLE_FIELDS
            raise ValueError(f"fields not changeable by a transition: {sorted(unknown)}")
        shape = (*changes, "lease_expired_by" if guarded else "")
        statement = self._update_texts.get(shape)
        if statement is None:
            # Composing SQL costs more than the statement's own work on the server: once per shape.
            columns = [column_for(name) for name in changes]
            statement = update_text(
                self._calls_text,
                [*columns, "status", "updated_at", "version"],
                self.placeholder,
                lease_guard=guarded,
            )
            self._update_texts[shape] = statement
        encoded = tuple((index, name) for index, name in enumerate(changes) if name in _ENCODED)
        return steps, statement, encoded, history_rests(start, steps, actor, None), steps[-1]

    def _transition_lost(
        self, entry: LedgerEntry, updated: LedgerEntry
    ) -> Operation[LedgerEntry | None]:
        """A transition whose compare-and-set changed no row: ``updated`` if it was ours after
        all (committed before the connection broke), else None."""
        current = yield from self._get(entry.call_id)
        if current == updated:  # ours, committed before the connection broke
            return updated
        return None

    def _renew_lease(self, call_id: str, attempt: int, expires_at: float) -> Operation[bool]:
        renewed = yield self._renew_text, (expires_at, call_id, attempt), ROWCOUNT
        return bool(renewed == 1)

    def _release_lease(
        self, call_id: str, attempt: int, owner: str, detail: str
    ) -> Operation[bool]:
        line = encode_history(Status.UNCERTAIN, [Status.UNCERTAIN], "runtime", detail, time.time())
        released = yield self._release_text, (line, call_id, attempt, owner), ROWCOUNT
        return bool(released == 1)

    def _note(self, entry: LedgerEntry, actor: str, detail: str) -> Operation[None]:
        line = encode_history(entry.status, [entry.status], actor, detail, time.time())
        yield self._note_text, (line, entry.call_id), ROWCOUNT

    def _get(self, call_id: str) -> Operation[LedgerEntry | None]:
        row = yield self._get_text, (call_id,), ONE_ROW
        return row_to_entry(row) if row else None

    def _find(self, tool_name: str, idempotency_key: str) -> Operation[LedgerEntry | None]:
        row = yield self._find_text, (tool_name, idempotency_key), ONE_ROW
        return row_to_entry(row) if row else None

    def close(self) -> None:
        self.closed = True
        with self._connections_lock:
            held, self._connections = list(self._connections), weakref.WeakSet()
        for item in held:
            item.release()
        self._local = threading.local()


class AsyncSQLLedger(AsyncLedger):
    """A SQL ledger's operations as coroutines: the same operations as its sync methods, whose
    statements a backend's async driver sends (``_perform``)."""

    def __init__(self, ledger: SQLLedger) -> None:
        self._ledger = ledger

    @abstractmethod
    async def _perform(self, operation: Operation[T]) -> T:
        """Run ``operation`` on a connection of the running event loop."""

    # A call's two operations hand back ``_perform``'s coroutine itself: a coroutine of their
    # own around it would be one more frame to suspend and resume at each statement.
    def claim(
        self, entry: LedgerEntry, path: Sequence[Status]
    ) -> Coroutine[Any, Any, tuple[bool, LedgerEntry]]:
        return self._perform(self._ledger._claim(entry, path))

    def transition(
        self,
        entry: LedgerEntry,
        path: Status | Sequence[Status],
        *,
        actor: str = "runtime",
        detail: str | None = None,
        lease_expired_by: float | None = None,
        **changes: Any,
    ) -> Coroutine[Any, Any, LedgerEntry | None]:
        return self._perform(
            self._ledger._transition(entry, path, actor, detail, lease_expired_by, changes)
        )

    async def release_lease(self, call_id: str, attempt: int, owner: str, detail: str) -> bool:
        return await self._perform(self._ledger._release_lease(call_id, attempt, owner, detail))

    async def note(self, entry: LedgerEntry, actor: str, detail: str) -> None:
        await self._perform(self._ledger._note(entry, actor, detail))

    async def get(self, call_id: str) -> LedgerEntry | None:
        return await self._perform(self._ledger._get(call_id))

    async def entries(
        self,
        *,
        run_id: str | None = None,
        tool_name: str | None = None,
        status: Status | str | Iterable[Status | str] | None = None,
        input_hash: str | None = None,
        idempotency_key: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerEntry]:
        return await self._perform(
            self._ledger._entries(run_id, tool_name, status, input_hash, idempotency_key, limit)
        )
