"""Short-lived threads do not leave ledger connections behind."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from agentguard.runtime import Runtime, SQLiteLedger, guarded
from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres


def _calls_in_short_lived_threads(runtime: Runtime, threads: int, batch: int) -> list[Any]:
    @guarded(runtime, risk="write")
    def record(index: int) -> int:
        return index

    observations: list[Any] = []

    def one(index: int) -> None:
        with runtime.run(run_id="r1"):
            observations.append(record(index=index))

    for start in range(0, threads, batch):
        workers = [threading.Thread(target=one, args=(i,)) for i in range(start, start + batch)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return observations


def _open_files(name: str) -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if name in os.readlink(f"/proc/self/fd/{fd}"):
                count += 1
        except OSError:
            continue
    return count


def test_sqlite_connections_of_finished_threads_are_closed(tmp_path: Path) -> None:
    ledger = SQLiteLedger(tmp_path / "ledger.db")
    observations = _calls_in_short_lived_threads(Runtime(ledger=ledger), 300, 10)
    assert all(observation["ok"] for observation in observations)
    assert len(observations) == 300
    # bounded by the threads alive at once (SQLite keeps a few closed files' descriptors for
    # reuse while the file is open in the process), not by the 300 that ever ran (600 before)
    assert _open_files("ledger.db") <= 40
    ledger.close()


def test_postgres_connections_of_finished_threads_are_closed() -> None:
    import psycopg

    from agentguard.runtime.ledger.postgres import PostgresLedger

    dsn = require_postgres()
    schema = fresh_schema()
    ledger = PostgresLedger(dsn, schema=schema)
    try:
        observations = _calls_in_short_lived_threads(Runtime(ledger=ledger), 60, 6)
        assert [observation["ok"] for observation in observations] == [True] * 60
        with psycopg.connect(dsn, autocommit=True) as admin:
            row = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE %s AND pid <> "
                "pg_backend_pid()",
                (f"%{schema}%",),
            ).fetchone()
        assert row is not None and row[0] <= 2, row  # the opening thread's, nothing else
    finally:
        ledger.close()
        drop_schema(dsn, schema)
