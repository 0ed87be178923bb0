"""Every ledger operation answers in bounded time: a lock held on the ledger, or a server that
stops answering, gives the agent an observation within the configured bound, never a hang."""

from __future__ import annotations

import contextlib
import select
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.runtime import Runtime, SQLiteLedger, Status, current_call, guarded
from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres
from tests.runtime.downstream import RecordingDownstream, order_tool, wait_until

# generous: the machine running the tests may be loaded; a hang would last minutes
BOUND_S = 20.0


class FreezableProxy:
    """A TCP proxy on 127.0.0.1 to a server; ``freeze()`` makes it stop forwarding in both
    directions while keeping every connection open (a server gone silent, a half-open link)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.frozen = threading.Event()
        self.answers_lost = threading.Event()  # requests still reach the server
        self.closed = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self.frozen.set()

    def lose_answers(self) -> None:
        """The server gets every request and answers, but no answer comes back."""
        self.answers_lost.set()

    def thaw(self) -> None:
        self.frozen.clear()
        self.answers_lost.clear()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(client)
            if self.frozen.is_set():
                continue  # accepted, never answered
            server = socket.create_connection(self.target)
            self.sockets.append(server)
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        peers = {client: server, server: client}
        while not self.closed.is_set():
            if self.frozen.is_set():
                time.sleep(0.05)
                continue
            try:
                readable, _, _ = select.select(list(peers), [], [], 0.05)
                for source in readable:
                    if self.frozen.is_set():
                        break
                    data = source.recv(65536)
                    if not data:
                        return
                    if source is server and self.answers_lost.is_set():
                        continue  # the answer is dropped on its way back
                    peers[source].sendall(data)
            except OSError:
                return

    def close(self) -> None:
        self.closed.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        for item in self.sockets:
            with contextlib.suppress(OSError):
                item.close()


@pytest.fixture
def postgres_schema() -> Iterator[tuple[str, str]]:
    dsn = require_postgres()
    schema = fresh_schema()
    yield dsn, schema
    drop_schema(dsn, schema)


@pytest.fixture
def locking_postgres(postgres_schema: tuple[str, str]) -> Iterator[tuple[str, str, Runtime]]:
    """A runtime over a PostgreSQL ledger that waits at most 0.5 s for a lock."""
    from agentguard.runtime.ledger.postgres import PostgresLedger

    dsn, schema = postgres_schema
    ledger = PostgresLedger(dsn, schema=schema, lock_timeout_s=0.5)
    yield dsn, schema, Runtime(ledger=ledger)
    ledger.close()


def _lock_table(connection: Any, schema: str) -> None:
    """What a migration or a long transaction does: no one reads or writes the table."""
    connection.execute(f'LOCK TABLE "{schema}".agentguard_calls IN ACCESS EXCLUSIVE MODE')


def _assert_nothing_done(observation: dict[str, Any], downstream: RecordingDownstream) -> None:
    assert observation["ok"] is False and observation["code"] == "SERVER_ERROR", observation
    assert observation["metadata"]["retryable"] is True
    assert "Nothing was done" in observation["content"]
    assert not downstream.applied


def test_a_postgres_table_lock_ends_the_claim_within_the_lock_timeout(
    locking_postgres: tuple[str, str, Runtime],
) -> None:
    import psycopg

    dsn, schema, runtime = locking_postgres
    downstream = RecordingDownstream()
    create_order = order_tool(runtime, downstream)
    with psycopg.connect(dsn) as holder:
        _lock_table(holder, schema)
        began = time.monotonic()
        with runtime.run(run_id="r1"):
            observation = create_order(cart_id="c1")
        waited = time.monotonic() - began
        holder.rollback()
    assert waited < BOUND_S
    _assert_nothing_done(observation, downstream)
    assert "lock" in observation["content"]
    with runtime.run(run_id="r1"):
        assert create_order(cart_id="c1")["ok"]  # the lock is gone: the call runs
    assert len(downstream.applied) == 1


def test_a_postgres_lock_after_the_body_keeps_the_outcome_and_records_it_later(
    locking_postgres: tuple[str, str, Runtime],
) -> None:
    import psycopg

    dsn, schema, runtime = locking_postgres
    downstream = RecordingDownstream()
    holder = psycopg.connect(dsn)

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    def create_order(cart_id: str) -> dict[str, Any]:
        order = downstream.create(current_call().idempotency_key, cart_id=cart_id)
        _lock_table(holder, schema)
        return order

    try:
        began = time.monotonic()
        with runtime.run(run_id="r1"):
            observation = create_order(cart_id="c1")
        assert time.monotonic() - began < BOUND_S
        # the body ran: the agent is told so, and that the record is pending
        assert observation["ok"] is True, observation
        assert observation["metadata"]["recorded"] is False
        assert len(downstream.applied) == 1
    finally:
        holder.rollback()
        holder.close()
    call_id = observation["metadata"]["call_id"]
    assert wait_until(lambda: _status(runtime, call_id) is Status.SUCCEEDED, timeout_s=BOUND_S)


@pytest.fixture
def proxied_postgres(
    postgres_schema: tuple[str, str],
) -> Iterator[tuple[FreezableProxy, Any, Runtime, Any]]:
    """A PostgreSQL ledger reached through a proxy the test can freeze: the proxy, the ledger
    (a server silent for 1.5 s is given up on), its runtime and an order tool that has placed
    a first order."""
    from agentguard.runtime.ledger.postgres import PostgresLedger

    dsn, schema = postgres_schema
    PostgresLedger(dsn, schema=schema).close()  # the schema exists; the proxy carries calls
    proxy = FreezableProxy(("127.0.0.1", 5432))
    proxied = dsn.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    assert proxied != dsn
    ledger = PostgresLedger(
        proxied, schema=schema, statement_timeout_s=0.5, answer_timeout_s=1.5, connect_timeout_s=2
    )
    runtime = Runtime(ledger=ledger)
    downstream = RecordingDownstream()
    create_order = order_tool(runtime, downstream)
    with runtime.run(run_id="r1"):
        assert create_order(cart_id="c0")["ok"]
    try:
        yield proxy, downstream, runtime, create_order
    finally:
        ledger.close()
        proxy.close()


def test_a_postgres_server_that_stops_answering_ends_the_call_within_its_bound(
    proxied_postgres: tuple[FreezableProxy, Any, Runtime, Any],
) -> None:
    proxy, downstream, runtime, create_order = proxied_postgres
    proxy.freeze()
    began = time.monotonic()
    with runtime.run(run_id="r1"):
        observation = create_order(cart_id="c1")
    assert time.monotonic() - began < BOUND_S
    assert observation["ok"] is False and observation["code"] == "SERVER_ERROR"
    assert "did not answer" in observation["content"]
    assert len(downstream.applied) == 1  # the frozen call's body never ran
    proxy.thaw()
    with runtime.run(run_id="r1"):
        again = create_order(cart_id="c2")  # a new connection through the thawed proxy
    assert again["ok"], again


def test_a_claim_whose_answer_was_lost_is_released_once_the_ledger_answers(
    proxied_postgres: tuple[FreezableProxy, Any, Runtime, Any],
) -> None:
    proxy, downstream, runtime, create_order = proxied_postgres
    with runtime.run(run_id="r1"):
        proxy.lose_answers()  # the claim is committed; its answer never arrives
        lost = create_order(cart_id="c1")
        assert lost["code"] == "SERVER_ERROR" and not downstream.applied_for("order:c1")
        proxy.thaw()
        # the claim written for a body that never ran is released as soon as the ledger
        # answers: the model's next call runs instead of meeting "already in progress"
        assert wait_until(
            lambda: (
                [entry.status for entry in runtime.ledger.entries(idempotency_key="order:c1")]
                == [Status.FAILED]
            ),
            timeout_s=BOUND_S,
        )
        again = create_order(cart_id="c1")
    assert again["ok"], again
    assert downstream.applied_for("order:c1") == 1


def test_a_sqlite_lock_after_the_body_keeps_the_outcome_and_records_it_later(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    runtime = Runtime(ledger=SQLiteLedger(path, busy_timeout_s=0.3))
    downstream = RecordingDownstream()
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    @guarded(runtime, risk="write", key=lambda call: f"order:{call.args['cart_id']}")
    def create_order(cart_id: str) -> dict[str, Any]:
        order = downstream.create(current_call().idempotency_key, cart_id=cart_id)
        blocker.execute("BEGIN IMMEDIATE")  # another process takes the write lock
        return order

    began = time.monotonic()
    with runtime.run(run_id="r1"):
        observation = create_order(cart_id="c1")
    assert time.monotonic() - began < BOUND_S
    assert observation["ok"] is True and observation["metadata"]["recorded"] is False
    blocker.execute("ROLLBACK")
    blocker.close()
    call_id = observation["metadata"]["call_id"]
    assert wait_until(lambda: _status(runtime, call_id) is Status.SUCCEEDED, timeout_s=BOUND_S)


def _status(runtime: Runtime, call_id: str) -> Status | None:
    entry = runtime.ledger.get(call_id)
    return entry.status if entry else None


def test_a_sqlite_ledger_at_its_schema_version_opens_while_another_process_writes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    SQLiteLedger(path).close()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # a long write of another worker
    try:
        # a worker starting now needs no write lock: the schema is current
        ledger = SQLiteLedger(path, busy_timeout_s=0.2)
        assert ledger.entries() == []
        ledger.close()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()


def _bounds_of(parameters: dict[str, str], settings: tuple[Any, ...]) -> dict[str, str]:
    names = ("connect_timeout", "keepalives", "keepalives_idle", "tcp_user_timeout")
    return {
        **{name: parameters.get(name, "") for name in names},
        "lock_timeout": str(settings[0]),
        "statement_timeout": str(settings[1]),
    }


def test_every_postgres_ledger_connection_runs_under_its_bounds(
    postgres_schema: tuple[str, str],
) -> None:
    """Sync and async connections alike: the session's lock and statement timeouts, TCP
    keepalives and a connect timeout, as configured, and bounded by default."""
    import asyncio

    from agentguard.runtime.ledger.postgres import PostgresLedger

    dsn, schema = postgres_schema
    show = "SELECT current_setting('lock_timeout'), current_setting('statement_timeout')"
    wanted = {
        "connect_timeout": "4",
        "keepalives": "1",
        "keepalives_idle": "11",
        "tcp_user_timeout": "41000",
        "lock_timeout": "1500ms",
        "statement_timeout": "7s",
    }
    ledger = PostgresLedger(
        dsn,
        schema=schema,
        connect_timeout_s=4,
        lock_timeout_s=1.5,
        statement_timeout_s=7,
        keepalives_idle_s=11,
    )
    try:
        connection = ledger._connection()
        row = connection.execute(show).fetchone()
        assert row is not None
        assert _bounds_of(connection.info.get_parameters(), row) == wanted

        async def async_bounds() -> dict[str, str]:
            held = await ledger.aio._held()
            async with held.pool.connection() as connection:
                cursor = await connection.execute(show)
                row = await cursor.fetchone()
                assert row is not None
                return _bounds_of(connection.info.get_parameters(), row)

        assert asyncio.run(async_bounds()) == wanted
    finally:
        ledger.close()

    default = PostgresLedger(dsn, schema=schema)
    try:
        connection = default._connection()
        row = connection.execute(show).fetchone()
        assert row is not None
        bounds = _bounds_of(connection.info.get_parameters(), row)
        assert bounds["lock_timeout"] == "5s" and bounds["statement_timeout"] == "15s"
        assert bounds["keepalives"] == "1" and bounds["connect_timeout"] == "10"
    finally:
        default.close()
