from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentguard.runtime import Ledger, MemoryLedger, Runtime, SQLiteLedger

DEFAULT_PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="session", autouse=True)
def quiet_background_retries_after_the_session() -> Iterator[None]:
    """Some tests take their ledger away for good (a dropped schema, a closed proxy): the
    outbox threads of those calls go on retrying until the process exits. Once the last test
    has run, their warnings would only bury the run's summary."""
    yield
    logging.getLogger("agentguard.runtime").disabled = True


def pg_dsn() -> str:
    return os.environ.get("AGENTGUARD_TEST_PG_DSN", DEFAULT_PG_DSN)


def require_postgres() -> str:
    """The DSN if the server answers; under CI an unreachable server fails instead of skipping."""
    dsn = pg_dsn()
    try:
        import psycopg

        with psycopg.connect(dsn, connect_timeout=3) as connection:
            connection.execute("SELECT 1")
    except Exception as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"PostgreSQL at {dsn} is unreachable under CI: {exc}")
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    return dsn


def fresh_schema() -> str:
    return "agentguard_test_" + uuid.uuid4().hex[:12]


def drop_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


LedgerFactory = Callable[[], Ledger]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def ledger_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LedgerFactory]:
    """Opens ledgers on one shared store (several opens = several processes' views)."""
    opened: list[Ledger] = []
    if request.param == "memory":
        shared = MemoryLedger()

        def factory() -> Ledger:
            return shared

        yield factory
        return
    if request.param == "sqlite":
        path = tmp_path / "ledger.db"

        def factory() -> Ledger:
            ledger = SQLiteLedger(path)
            opened.append(ledger)
            return ledger

        yield factory
        for ledger in opened:
            ledger.close()
        return
    dsn = require_postgres()
    schema = fresh_schema()
    from agentguard.runtime.ledger.postgres import PostgresLedger

    def factory() -> Ledger:
        ledger = PostgresLedger(dsn, schema=schema)
        opened.append(ledger)
        return ledger

    yield factory
    for ledger in opened:
        ledger.close()
    drop_schema(dsn, schema)


@pytest.fixture
def ledger(ledger_factory: LedgerFactory) -> Ledger:
    return ledger_factory()


@pytest.fixture
def runtime(ledger: Ledger) -> Runtime:
    rt = Runtime(ledger=ledger, seed=7)
    rt.sleep = lambda seconds: None
    return rt


@pytest.fixture(params=["sqlite", "postgres"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A durable ledger's URL, for tests that open it from other processes."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'ledger.db'}"
        return
    dsn = require_postgres()
    schema = fresh_schema()
    yield f"{dsn}?schema={schema}"
    drop_schema(dsn, schema)
