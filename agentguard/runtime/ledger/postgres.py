"""PostgreSQL ledger: many workers on many machines.

Uniqueness comes from a unique index on (tool_name, idempotency_key) and INSERT ... ON CONFLICT;
every change is a compare-and-set on ``version``. Each claim and each transition is a single
statement (the transition appends its events to the row's history), so one round trip and one
commit.

Every statement answers in bounded time: the session's lock and statement timeouts end a wait
on the server, TCP keepalives and a user timeout notice a peer that vanished, the connect
timeout bounds a new connection, and a watchdog shuts a connection whose server has not
answered a statement shortly after the statement timeout (a server frozen, a proxy that stopped
forwarding). Each ends in ``LedgerUnanswered``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import select
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.abc import RV, PQGen
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import ConnStatus, TransactionStatus

from agentguard.runtime.ledger._rows import STATUS_CHECK
from agentguard.runtime.ledger._sql import (
    ONE_ROW,
    ROWCOUNT,
    AsyncSQLLedger,
    Migrations,
    Operation,
    SQLLedger,
    T,
)
from agentguard.runtime.ledger._watchdog import Watchdog
from agentguard.runtime.ledger.base import (
    LedgerClosed,
    LedgerConfigurationError,
    LedgerMissing,
    LedgerUnanswered,
    current_pid,
    run_to_the_end,
)

MIGRATIONS: Migrations = [
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
    (
        # v3: the run's tenant and extra fields, which keys and lookups read: recovery sees them
        3,
        [
            "ALTER TABLE {schema}.agentguard_calls ADD COLUMN tenant text",
            "ALTER TABLE {schema}.agentguard_calls ADD COLUMN extra_json text NOT NULL DEFAULT '{{}}'",
        ],
    ),
    (
        # v4: who approved a call and when (approval may come later, from a person)
        4,
        [
            "ALTER TABLE {schema}.agentguard_calls ADD COLUMN approved_by text",
            "ALTER TABLE {schema}.agentguard_calls ADD COLUMN approved_on double precision",
        ],
    ),
    (
        # v5: the effects the tool declares, kept with each call
        5,
        [
            "ALTER TABLE {schema}.agentguard_calls"
            " ADD COLUMN side_effects_json text NOT NULL DEFAULT '[]'"
        ],
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]
_MIGRATION_LOCK = 0x61676774  # pg_advisory_xact_lock key: one migrator at a time
# A migration may wait for another process's migration and rewrite a large table: its own
# bounds, longer than a call's.
_MIGRATION_LOCK_TIMEOUT_S = 120
# How long after the statement timeout a silent server is given before its connection is shut.
_ANSWER_GRACE_S = 5.0


# Every new connection, sync or pooled async: the session's bounds, and the durability check,
# in one round trip.
_SESSION_SETUP = (
    "SELECT set_config('lock_timeout', %s, false), "
    "set_config('statement_timeout', %s, false), current_setting('synchronous_commit')"
)
_READ_ONLY = "SET default_transaction_read_only = on"


def _timeout_setting(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def _check_durable(session: Sequence[Any] | None) -> None:
    """Refuse a session whose commits may be acknowledged before they are durable."""
    if session is not None and str(session[2]).lower() == "off":
        raise LedgerConfigurationError(
            "PostgreSQL synchronous_commit is off: an acknowledged 'started' record could be lost"
        )


class PostgresLedger(SQLLedger):
    placeholder = "%s"
    aio: AsyncPostgresLedger

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agentguard",
        connect_timeout_s: int = 10,
        lock_timeout_s: float = 5.0,
        statement_timeout_s: float = 15.0,
        answer_timeout_s: float | None = None,
        keepalives_idle_s: int = 30,
        async_pool_min_size: int = 1,
        async_pool_max_size: int = 10,
        read_only: bool = False,
    ) -> None:
        """``read_only``: open a ledger that exists, at this agentguard's schema version, to
        read it: nothing is created or migrated, and the server refuses any write
        (``LedgerMissing`` when there is no such ledger).

        Bounds: a statement waits at most ``lock_timeout_s`` for a lock and runs at most
        ``statement_timeout_s``; a server that sends nothing for ``answer_timeout_s`` (default:
        the statement timeout plus 5 s) has its connection shut; a connection is made within
        ``connect_timeout_s``. TCP keepalives start after ``keepalives_idle_s`` idle (then every
        10 s, 3 probes) and unacknowledged data gives up after as long; keepalive settings
        named in ``dsn`` win.

        Async guarded calls use ``aio``: psycopg's async connections from a
        ``psycopg_pool.AsyncConnectionPool`` of ``async_pool_min_size`` to
        ``async_pool_max_size`` connections per event loop, under the same bounds; a call waits
        at most ``connect_timeout_s`` plus ``answer_timeout_s`` for a connection of the pool."""
        self.dsn = dsn
        self.url = dsn
        self.schema = schema
        self.connect_timeout_s = connect_timeout_s
        self.lock_timeout_s = lock_timeout_s
        self.statement_timeout_s = statement_timeout_s
        self.answer_timeout_s = (
            answer_timeout_s
            if answer_timeout_s is not None
            else statement_timeout_s + _ANSWER_GRACE_S
        )
        self.read_only = read_only
        given = conninfo_to_dict(dsn)
        keepalives = {
            "keepalives": 1,
            "keepalives_idle": keepalives_idle_s,
            "keepalives_interval": 10,
            "keepalives_count": 3,
            # data sent and not acknowledged (a peer that vanished mid-statement)
            "tcp_user_timeout": (keepalives_idle_s + 30) * 1000,
        }
        self._connect_options: dict[str, Any] = {
            name: value for name, value in keepalives.items() if name not in given
        }
        self._session_settings = (
            _timeout_setting(lock_timeout_s),
            _timeout_setting(statement_timeout_s),
        )
        self._watchdog = Watchdog(self.answer_timeout_s, lambda connection: connection.fileno())
        self.aio = AsyncPostgresLedger(self, async_pool_min_size, async_pool_max_size)
        self._init_connections()
        if read_only:
            try:
                self._require_current()
            except Exception:
                self.close()
                raise
        else:
            self._migrate()
        connection = self._connection()
        ident = sql.Identifier(schema)
        self._prepare_statements(
            sql.SQL("{}.agentguard_calls").format(ident).as_string(connection),
            sql.SQL("{}.agentguard_schema").format(ident).as_string(connection),
        )

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            connection = psycopg.connect(
                self.dsn,
                autocommit=True,
                connect_timeout=self.connect_timeout_s,
                **self._connect_options,
            )
        except pg_errors.ConnectionTimeout as exc:
            raise LedgerUnanswered(
                f"no connection to PostgreSQL within {self.connect_timeout_s} s: {exc}"
            ) from exc
        try:
            _check_durable(
                self._send(
                    connection, connection, _SESSION_SETUP, self._session_settings
                ).fetchone()
            )
            if self.read_only:
                connection.execute(_READ_ONLY)
        except BaseException:
            connection.close()
            raise
        return connection

    def _execute(self, statement: str, parameters: Sequence[Any]) -> Any:
        """Run one statement under the watchdog; on a connection that broke (a restart, a
        failover), once more on a new connection. A statement the server did not answer in its
        bound is not sent again: that would wait as long once more."""
        connection = self._connection()
        try:
            return self._send(connection, self._executor_of(connection), statement, parameters)
        except Exception as exc:
            if not self._broken(connection, exc):
                raise
        self._drop(connection)
        connection = self._connection()
        return self._send(connection, self._executor_of(connection), statement, parameters)

    def _send(
        self,
        connection: psycopg.Connection[Any],
        executor: Any,
        statement: str,
        parameters: Sequence[Any],
    ) -> Any:
        watchdog = self._watchdog
        watchdog.arm(connection)
        try:
            return executor.execute(statement, parameters)
        except psycopg.Error as exc:
            unanswered = self._unanswered(connection, exc)
            if unanswered is None:
                raise
            if connection.broken:
                self._drop(connection)
            raise unanswered from exc
        finally:
            watchdog.disarm()

    def _unanswered(self, connection: Any, error: Exception) -> LedgerUnanswered | None:
        """What ``error`` means when the server did not answer within a bound, else None: its
        lock or statement timeout, or the watchdog shut ``connection`` (sync and async)."""
        if isinstance(error, (pg_errors.LockNotAvailable, pg_errors.QueryCanceled)):
            return LedgerUnanswered(f"PostgreSQL: {error}".strip())
        if isinstance(error, psycopg.OperationalError) and self._watchdog.was_cut(connection):
            return LedgerUnanswered(f"PostgreSQL did not answer within {self.answer_timeout_s:g} s")
        return None

    def close(self) -> None:
        super().close()
        self.aio.close()

    def _reusable(self, connection: psycopg.Connection[Any]) -> bool:
        return not connection.closed and not connection.broken

    def _broken(self, connection: psycopg.BaseConnection[Any], error: Exception) -> bool:
        return isinstance(error, psycopg.OperationalError) and (
            connection.closed or connection.broken
        )

    def _statuses_match(self, statuses: list[str]) -> tuple[str, list[Any]]:
        return "status = ANY(%s)", [statuses]

    def _require_current(self) -> None:
        """The ledger's schema and tables exist (else ``LedgerMissing``, naming the database
        and what is not there) at this agentguard's version (else a configuration error): read
        without creating anything."""
        connection = self._connection()
        schema = sql.Identifier(self.schema)
        found = connection.execute(
            "SELECT current_database(), "
            "EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = %s), "
            "to_regclass(%s) IS NOT NULL, to_regclass(%s) IS NOT NULL",
            (
                self.schema,
                sql.SQL("{}.agentguard_schema").format(schema).as_string(connection),
                sql.SQL("{}.agentguard_calls").format(schema).as_string(connection),
            ),
        ).fetchone()
        database, has_schema, has_versions, has_calls = found or ("?", False, False, False)
        where = f"database {database!r}"
        if not has_schema:
            raise LedgerMissing(f"{where} has no ledger: there is no schema {self.schema!r}")
        missing = [
            name
            for name, present in (
                ("agentguard_schema", has_versions),
                ("agentguard_calls", has_calls),
            )
            if not present
        ]
        if missing:
            raise LedgerMissing(
                f"{where} has no ledger in schema {self.schema!r}: no table "
                + " and no table ".join(missing)
            )
        row = connection.execute(
            sql.SQL("SELECT max(version) FROM {}.agentguard_schema").format(schema)
        ).fetchone()
        version = (row[0] if row else None) or 0
        if version != SCHEMA_VERSION:
            newer = version > SCHEMA_VERSION
            raise LedgerConfigurationError(
                f"the ledger in {where}, schema {self.schema!r}, is at schema version {version}; "
                f"this agentguard reads version {SCHEMA_VERSION}"
                + (
                    ": use the agentguard that wrote it"
                    if newer
                    else ": the agent's next run upgrades it"
                )
            )

    def _migrate(self) -> None:
        connection = self._connection()
        schema = sql.Identifier(self.schema)
        with connection.transaction():
            connection.execute(
                "SELECT set_config('lock_timeout', %s, true), "
                "set_config('statement_timeout', '0', true)",
                (_timeout_setting(_MIGRATION_LOCK_TIMEOUT_S),),
            )
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
            self._apply_migrations(
                MIGRATIONS,
                (row[0] if row else None) or 0,
                lambda statement: connection.execute(sql.SQL(statement).format(schema=schema)),
                lambda version: connection.execute(
                    sql.SQL("INSERT INTO {}.agentguard_schema (version) VALUES (%s)").format(
                        schema
                    ),
                    (version,),
                ),
            )


# The states psycopg's generators yield (wait for reading, writing) and are sent (ready for).
_WAIT_R, _WAIT_W = 1, 2
_READY_R, _READY_W = 1, 2
# The connection attempts (psycopg's connect generators) of the ``connect()`` running.
_ATTEMPTS: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "agentguard_ledger_attempts", default=None
)
# How long an interrupted statement is given to end once the server was asked to cancel it.
_CANCEL_WAIT_S = 5.0


class _LedgerConnection(psycopg.AsyncConnection[Any]):
    """psycopg's async connection, waiting for its server's answers at less cost per statement.

    psycopg's own wait registers the socket with the event loop for each wait, removes it after,
    and schedules a timer beside it (two ``epoll_ctl`` calls, the selector's bookkeeping and a
    timer: about as much client time as the rest of the statement). Here the socket stays
    registered with the loop between statements, and a wait is one future. A wait is woken by
    the answer, by the server closing the connection, or by the ledger's watchdog shutting the
    socket (a server that stopped answering); ``close()`` wakes a wait on the connection it
    closes.

    Data that arrives while no statement waits (a notice, the server ending the session) is
    read into libpq's buffer at once, so the socket never stays readable for nothing; a
    connection whose server went away stops being watched until its next statement finds it
    broken. An interrupted wait (a cancellation) does what psycopg's does: it asks the server
    to cancel the statement and waits a bounded time for its end.
    """

    # the loop and socket registered for reading, and the wait in progress
    _reading: tuple[asyncio.AbstractEventLoop, int] | None = None
    # the generator waiting for the server's answer, and the wait that ends with it: the state
    # it waits for next (0: it has ended) and its value
    _gen: PQGen[Any] | None = None
    _waiter: asyncio.Future[tuple[int, Any]] | None = None

    def _readable(self) -> None:
        """The socket can be read: the waiting generator reads it here, in the loop's callback,
        and its wait ends only once it has ended (or must write). Read in the callback, the
        answer no longer makes the socket readable at the loop's next poll, which would run this
        callback once more and wake the next statement's wait before its answer came."""
        gen, waiter = self._gen, self._waiter
        if gen is None or waiter is None:
            # no statement waits: read what came (a notice), or notice the end of the
            # connection and stop watching it until its next statement
            try:
                self.pgconn.consume_input()
            except Exception:
                self._stop_reading()
            self._watch_while_open()
            return
        try:
            state = gen.send(_READY_R)
        except StopIteration as done:
            self._gen = None
            waiter.set_result((0, done.value))
        except Exception as exc:
            self._gen = None
            waiter.set_exception(exc)
        else:
            if state & _WAIT_W:
                self._gen = None
                waiter.set_result((state, None))
        self._watch_while_open()

    def _watch_while_open(self) -> None:
        """Stop watching a connection libpq found lost: libpq closes its socket then, and the
        loop must not keep a closed socket's number registered (a new socket of the same
        number could not be registered). Called right after each call into libpq that may
        find it lost, before anything else can open a socket."""
        if self._reading is not None and self.pgconn.status == ConnStatus.BAD:
            self._stop_reading()

    def _stop_reading(self) -> None:
        reading, self._reading = self._reading, None
        if reading is not None and not reading[0].is_closed():
            with contextlib.suppress(Exception):
                reading[0].remove_reader(reading[1])
        waiter, self._waiter, self._gen = self._waiter, None, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(psycopg.OperationalError("the connection is closed"))

    def _start_reading(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        self._stop_reading()
        try:
            loop.add_reader(fd, self._readable)
        except OSError:
            # the loop still has a closed socket of this number registered (closed without
            # being unregistered): this socket is ours, so that entry is stale
            loop.remove_reader(fd)
            loop.add_reader(fd, self._readable)
        self._reading = (loop, fd)

    async def close(self) -> None:
        self._stop_reading()
        await super().close()

    @classmethod
    async def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
        """psycopg's connect, except that an attempt interrupted midway closes the connection
        it had begun at once.

        psycopg leaves a half-made connection to its attempt's generator, which the
        interruption's traceback keeps: the pool logs the cancelled attempt of a loop that
        ended while the pool was making a connection (a lost one replaced, the pool growing),
        and a handler that keeps log records (pytest's, an error reporter's) kept that server
        session open after the loop, as long as the record.
        """
        attempts: list[Any] = []
        token = _ATTEMPTS.set(attempts)
        try:
            return await super().connect(conninfo, **kwargs)
        except BaseException:
            for attempt in attempts:
                attempt.close()  # its half-made connection goes with it
            raise
        finally:
            _ATTEMPTS.reset(token)

    @classmethod
    def _connect_gen(cls, *args: Any, **kwargs: Any) -> Any:
        attempt = super()._connect_gen(*args, **kwargs)
        attempts = _ATTEMPTS.get()
        if attempts is not None:
            attempts.append(attempt)
        return attempt

    async def wait(self, gen: PQGen[RV], interval: float = 0.1, timeout: float | None = None) -> RV:
        if timeout is not None:  # psycopg's own bounded waits
            self._stop_reading()
            return await super().wait(gen, interval, timeout)
        if self._waiter is not None:
            raise psycopg.InterfaceError("a statement is already waiting on this connection")
        fd = self.pgconn.socket
        try:
            return await self._drive(gen, fd, next(gen))
        except StopIteration as done:
            return done.value
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            await self._interrupted(gen, fd)
            raise
        except OSError as exc:  # as psycopg: the socket was closed
            raise psycopg.OperationalError("connection socket closed") from exc
        finally:
            self._watch_while_open()

    async def _drive(self, gen: PQGen[RV], fd: int, state: int) -> RV:
        """Run ``gen``, which waits for ``state``, to its end."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                if state & _WAIT_W:
                    # a socket asked for writing is nearly always writable at once
                    ready = _ready_now(fd, state)
                    if ready:
                        state = gen.send(ready)
                        continue
                self._watch_while_open()
                if self._reading is None or self._reading[0] is not loop:
                    self._start_reading(loop, fd)
                if state & _WAIT_W:
                    # what arrives meanwhile is read by ``_readable``
                    state = gen.send(await _writable(loop, fd))
                    continue
                self._waiter = waiter = loop.create_future()
                self._gen = gen
                try:
                    state, value = await waiter
                finally:
                    self._waiter = self._gen = None
                if not state:
                    return value
        except StopIteration as done:
            return done.value

    async def _interrupted(self, gen: PQGen[Any], fd: int) -> None:
        """After a wait was interrupted, as psycopg does: a statement still running is cancelled
        on the server and given a bounded time to end; else the connection is closed."""
        if self.pgconn.transaction_status != TransactionStatus.ACTIVE:
            return
        try:
            with contextlib.suppress(Exception):
                await self.cancel_safe(timeout=_CANCEL_WAIT_S)
            # the generator waits for reading (a write wait is never interrupted mid-way)
            await asyncio.wait_for(self._drive(gen, fd, _WAIT_R), _CANCEL_WAIT_S)
        except pg_errors.QueryCanceled:
            pass  # as asked
        except BaseException:  # not ended in time, or interrupted again: its state is unknown
            self._stop_reading()
            self.pgconn.finish()


# psycopg's cursors build each statement's exchange as a generator that ``execute`` runs under
# the connection's lock (psycopg 3.0 to 3.3); the async ``execute`` takes an asyncio lock for it,
# about a tenth of an async statement's client time.
_EXECUTE_GEN = hasattr(psycopg.AsyncCursor, "_execute_gen")


def _ready_now(fd: int, state: int) -> int:
    """What ``fd`` is ready for of ``state`` at once (0: nothing yet)."""
    poller = select.poll()
    poller.register(fd, (select.POLLIN if state & _WAIT_R else 0) | select.POLLOUT)
    ready = 0
    for _, events in poller.poll(0):
        ready |= (_READY_R if events & select.POLLIN else 0) | (
            _READY_W if events & (select.POLLOUT | select.POLLERR | select.POLLHUP) else 0
        )
    return ready


async def _writable(loop: asyncio.AbstractEventLoop, fd: int) -> int:
    """Wait on the loop until ``fd`` can be written to."""
    ready: asyncio.Future[int] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(_READY_W)

    loop.add_writer(fd, wake)
    try:
        return await ready
    finally:
        loop.remove_writer(fd)


class _Link:
    """A connection taken from a loop's pool, with the cursor its statements are sent through
    (``AsyncConnection.cursor()`` builds a cursor and its adapters: once per connection)."""

    __slots__ = ("connection", "cursor")

    def __init__(self, connection: psycopg.AsyncConnection[Any]) -> None:
        self.connection = connection
        self.cursor = connection.cursor()


class _LoopPool:
    """The pool of one event loop (and process), the connections its operations left idle, and
    the task that closes them with the loop."""

    __slots__ = ("__weakref__", "closer", "idle", "loop", "made", "pid", "pool", "ready")

    def __init__(self, loop: asyncio.AbstractEventLoop, pool: Any) -> None:
        self.loop = loop
        self.pool = pool
        self.pid = current_pid()
        # Connections between two operations of this loop, last used first. The pool's
        # getconn and putconn cost an operation as much client time as its statement; an
        # operation takes one of these, and the pool is asked only when none is idle (so the
        # pool's size still bounds them). One past its lifetime goes back to the pool, and
        # none is kept before the pool has its first connections: it waits for them in itself.
        self.idle: list[_Link] = []
        self.ready = False
        # every connection the pool made for this loop, so that none outlives the loop
        self.made: weakref.WeakSet[psycopg.AsyncConnection[Any]] = weakref.WeakSet()
        # a strong reference: the loop keeps only weak ones to its tasks
        self.closer = loop.create_task(_close_with_loop(self), name="agentguard-ledger-pool")

    async def close(self) -> None:
        """Give the idle connections back, then close the pool (and with it every connection)."""
        idle, self.idle = self.idle, []
        for link in idle:
            with contextlib.suppress(Exception):
                await self.pool.putconn(link.connection)
        await self.pool.close()

    async def close_with_loop(self) -> None:
        """Close the pool and every connection it made for this loop, whose end is near.

        The pool's own close stops at its workers when they were cancelled with the loop's
        other tasks (``asyncio.run`` cancels them all at once), and leaves the connections it
        held open until they are collected: each is closed here, in use or not."""
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await self.close()
        for connection in list(self.made):
            if not connection.closed:
                with contextlib.suppress(Exception):
                    await connection.close()


async def _close_with_loop(held: _LoopPool) -> None:
    """Wait until cancelled, then close ``held``'s pool and connections.

    ``asyncio.run`` cancels every task before it closes its loop, and waits for them; a pool's
    workers do not all end on a cancellation (one making a connection goes on waiting for work),
    so without this the loop's end would wait for them forever. Closing the pool ends them.
    """
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        await held.close_with_loop()


class AsyncPostgresLedger(AsyncSQLLedger):
    """The PostgreSQL ledger's operations on the event loop: psycopg's ``AsyncConnection``, pooled
    by ``psycopg_pool.AsyncConnectionPool``, with no thread in between.

    One pool per event loop: a pool's connections and its tasks belong to the loop that opened
    them, so a thread keeps the pool of the loop it runs, and a new loop (another
    ``asyncio.run``) opens its own. Every connection gets the sync connections' session bounds
    and keepalives; a server that sends nothing for ``answer_timeout_s`` has its connection
    shut by the ledger's watchdog, as a sync statement's is.
    """

    def __init__(self, ledger: PostgresLedger, min_size: int, max_size: int) -> None:
        super().__init__(ledger)
        self._postgres = ledger
        self.min_size = min_size
        self.max_size = max_size
        self._local = threading.local()
        self._pools: weakref.WeakSet[_LoopPool] = weakref.WeakSet()
        self._pools_lock = threading.Lock()

    async def _held(self) -> _LoopPool:
        """This loop's pool, opened on its first operation."""
        held: _LoopPool | None = getattr(self._local, "held", None)
        if held is not None and held.pid == current_pid():
            if held.loop is asyncio.get_running_loop():
                return held
        if self._postgres.closed:
            raise LedgerClosed("this PostgresLedger was closed")
        loop = asyncio.get_running_loop()
        try:
            from psycopg_pool import AsyncConnectionPool, PoolTimeout
        except ImportError as exc:
            raise LedgerConfigurationError(
                "async calls on a PostgreSQL ledger need psycopg_pool: "
                "pip install 'agentguard[postgres]'"
            ) from exc
        ledger = self._postgres
        pool = AsyncConnectionPool(
            ledger.dsn,
            kwargs={
                "autocommit": True,
                "connect_timeout": ledger.connect_timeout_s,
                **ledger._connect_options,
            },
            min_size=self.min_size,
            max_size=self.max_size,
            open=False,
            configure=self._configure,
            connection_class=_LedgerConnection,
            # a connection comes back within a statement's bound, a new one within the connect
            # timeout
            timeout=ledger.connect_timeout_s + ledger.answer_timeout_s,
            name="agentguard-ledger",
        )
        # open(wait=False) does not suspend: no other call on this loop sees a pool half made
        await pool.open(wait=False)
        self._local.held = held = _LoopPool(loop, pool)
        with self._pools_lock:
            self._pools.add(held)
        try:
            # its first connection made before this call asks for one: a pool with callers
            # waiting grows, and would make a second connection at once
            await pool.wait(timeout=ledger.connect_timeout_s)
        except PoolTimeout as exc:
            raise LedgerUnanswered(
                f"no connection to PostgreSQL within {ledger.connect_timeout_s} s: {exc}"
            ) from exc
        held.ready = True
        return held

    async def _configure(self, connection: psycopg.AsyncConnection[Any]) -> None:
        held: _LoopPool | None = getattr(self._local, "held", None)
        if held is not None and held.loop is asyncio.get_running_loop():
            held.made.add(connection)
        _check_durable(
            await self._send(
                _Link(connection), _SESSION_SETUP, self._postgres._session_settings, ONE_ROW
            )
        )
        if self._postgres.read_only:
            await connection.execute(_READ_ONLY)

    async def _connection(self, pool: Any) -> _Link:
        from psycopg_pool import PoolTimeout

        try:
            connection: psycopg.AsyncConnection[Any] = await pool.getconn()
        except PoolTimeout as exc:
            raise LedgerUnanswered(
                f"no PostgreSQL connection within {pool.timeout:g} s: {exc}"
            ) from exc
        return _Link(connection)

    async def _perform(self, operation: Operation[T]) -> T:
        # this loop's pool, opened on its first operation (checked here: a call's every
        # operation passes, and a coroutine more would cost as much as the check)
        held: _LoopPool | None = getattr(self._local, "held", None)
        if held is None or held.pid != current_pid() or held.loop is not asyncio.get_running_loop():
            held = await self._held()
        # one slot: the connection this operation holds (replaced when one breaks)
        link: list[_Link | None] = [
            held.idle.pop() if held.idle else await self._connection(held.pool)
        ]
        interrupted = False
        answer: Any = None
        try:
            while True:
                try:
                    statement, parameters, wanted = operation.send(answer)
                except StopIteration as done:
                    return done.value
                if not interrupted:
                    try:
                        answer = await self._answer(held.pool, link, statement, parameters, wanted)
                        continue
                    except asyncio.CancelledError:
                        # whether the statement took effect is not known: it is sent again,
                        # and the operation goes on to its end, whatever else is cancelled
                        interrupted = True
                answer = await run_to_the_end(
                    self._answer(held.pool, link, statement, parameters, wanted)
                )
        finally:
            kept = link[0]
            if kept is not None and not self._kept_idle(held, kept):
                await held.pool.putconn(kept.connection)  # the pool discards one that broke

    def _kept_idle(self, held: _LoopPool, link: _Link) -> bool:
        """Keep an idle connection for this loop's next operation (True); one that broke, is
        in a transaction, is past its lifetime, or that this loop no longer runs goes back to
        the pool instead (False)."""
        connection = link.connection
        if (
            held.ready
            and not held.pool.closed
            and not connection.closed
            and not connection.broken
            and connection.pgconn.transaction_status == TransactionStatus.IDLE
            and getattr(connection, "_expire_at", 0.0) > time.monotonic()
            and held is getattr(self._local, "held", None)
        ):
            held.idle.append(link)
            return True
        return False

    async def _answer(
        self,
        pool: Any,
        link: list[_Link | None],
        statement: str,
        parameters: Sequence[Any],
        wanted: str,
    ) -> Any:
        """Send one statement on the held connection; on a connection that broke (a restart, a
        failover, a cancelled statement's), once more on a new one, as the sync driver does."""
        held = link[0]
        if held is not None and not held.connection.broken and not held.connection.closed:
            try:
                return await self._send(held, statement, parameters, wanted)
            except Exception as exc:
                if not self._postgres._broken(held.connection, exc):
                    raise
        if held is not None:
            link[0] = None
            await pool.putconn(held.connection)  # the pool discards it
        held = link[0] = await self._connection(pool)
        return await self._send(held, statement, parameters, wanted)

    async def _send(
        self,
        link: _Link,
        statement: str,
        parameters: Sequence[Any],
        wanted: str,
    ) -> Any:
        ledger = self._postgres
        connection, cursor = link.connection, link.cursor
        # the slot is the connection's: several statements of this loop are in flight at once
        slot = -id(connection)
        ledger._watchdog.arm(connection, slot)
        try:
            if _EXECUTE_GEN:
                # the statement sent as ``cursor.execute`` sends it, without its asyncio lock:
                # a link's connection is only ever used by the one operation holding it
                await connection.wait(cursor._execute_gen(statement, parameters))
            else:  # pragma: no cover - a psycopg without the generator: its public execute
                await cursor.execute(statement, parameters)
            if wanted == ROWCOUNT:
                return cursor.rowcount
            return await cursor.fetchone() if wanted == ONE_ROW else await cursor.fetchall()
        except psycopg.Error as exc:
            unanswered = ledger._unanswered(connection, exc)
            if unanswered is None:
                raise
            raise unanswered from exc
        finally:
            ledger._watchdog.disarm(slot)

    async def aclose(self) -> None:
        held = getattr(self._local, "held", None)
        if held is not None and held.loop is asyncio.get_running_loop():
            self._local.held = None
            held.closer.cancel()
            await held.close()

    def close(self) -> None:
        """Close every loop's pool: at once where its loop is stopped, else scheduled on it."""
        with self._pools_lock:
            pools, self._pools = list(self._pools), weakref.WeakSet()
        self._local = threading.local()
        for held in pools:
            if held.pid != current_pid() or held.loop.is_closed():
                continue  # a parent's, or a finished loop's: its connections go with it
            if held.loop.is_running():
                held.loop.call_soon_threadsafe(held.closer.cancel)
            else:  # its closer closes the pool once cancelled
                held.closer.cancel()
                with contextlib.suppress(BaseException):
                    held.loop.run_until_complete(held.closer)
