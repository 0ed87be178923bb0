"""Ledger contract: uniqueness, compare-and-set, legal transitions, durability settings."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pytest

from agentguard.runtime import IllegalTransition, LedgerEntry, SQLiteLedger, Status, open_ledger
from agentguard.runtime.ledger.base import new_call_id


def make_entry(key: str = "k1", **overrides: Any) -> LedgerEntry:
    values: dict[str, Any] = {
        "call_id": new_call_id(),
        "run_id": "r1",
        "tool_name": "create_order",
        "idempotency_key": key,
        "input_hash": "sha256:x",
        "status": Status.PLANNED,
        "risk": "write",
        "idempotency": "non_idempotent",
        "replay": "never",
        "attempts": 1,
    }
    values.update(overrides)
    return LedgerEntry(**values)


def test_only_one_claim_per_key_wins(ledger: Any) -> None:
    won_first, first = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    won_second, second = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    assert (won_first, won_second) == (True, False)
    assert second.call_id == first.call_id and second.status is Status.STARTED


def test_racing_threads_claim_a_key_once(ledger_factory: Any) -> None:
    ledgers = [ledger_factory() for _ in range(8)]
    barrier = threading.Barrier(len(ledgers))
    wins: list[bool] = []

    def claim(ledger: Any) -> None:
        barrier.wait()
        won, _ = ledger.claim(make_entry("race"), [Status.PLANNED, Status.STARTED])
        wins.append(won)

    threads = [threading.Thread(target=claim, args=(ledger,)) for ledger in ledgers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wins) == [False] * 7 + [True]


def test_transitions_are_compare_and_set(ledger: Any) -> None:
    _, entry = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    moved = ledger.transition(entry, Status.UNCERTAIN, error_code="SIDE_EFFECT_UNCERTAIN")
    assert moved is not None and moved.version == entry.version + 1
    assert ledger.transition(entry, Status.SUCCEEDED) is None  # stale version: someone else won
    assert ledger.get(entry.call_id).status is Status.UNCERTAIN
    with pytest.raises(IllegalTransition):
        ledger.transition(moved, Status.PLANNED)
    done = ledger.transition(moved, Status.SUCCEEDED, result={"id": 1})
    with pytest.raises(IllegalTransition):
        ledger.transition(done, Status.STARTED)
    assert ledger.get(entry.call_id).result == {"id": 1}
    history = [(e.from_status, e.to_status) for e in ledger.events(entry.call_id)]
    assert history == [
        (None, "planned"),
        ("planned", "started"),
        ("started", "uncertain"),
        ("uncertain", "succeeded"),
    ]


def test_transitions_refuse_unknown_fields(ledger: Any) -> None:
    _, entry = ledger.claim(make_entry(), [Status.PLANNED, Status.STARTED])
    with pytest.raises(ValueError, match="not changeable"):
        ledger.transition(entry, Status.FAILED, tool_name="other")


def test_sqlite_durability_settings(tmp_path: Path) -> None:
    ledger = SQLiteLedger(tmp_path / "l.db")
    assert str(ledger.pragma("journal_mode")).lower() == "wal"
    assert ledger.pragma("synchronous") == 2  # FULL
    assert ledger.pragma("busy_timeout") >= 5000
    ledger.close()


def test_migrations_are_versioned_and_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    first = SQLiteLedger(path)
    first.claim(make_entry(), [Status.PLANNED])
    second = SQLiteLedger(path)  # reopening must neither fail nor lose rows
    assert second.schema_version() == 1
    assert len(second.entries()) == 1
    first.close()
    second.close()


def test_open_ledger_by_url(tmp_path: Path) -> None:
    ledger = open_ledger(f"sqlite:///{tmp_path / 'x.db'}")
    assert isinstance(ledger, SQLiteLedger)
    ledger.close()
    with pytest.raises(ValueError):
        open_ledger("redis://localhost")


def _claim_in_process(path: str, barrier: Any, results: Any) -> None:
    ledger = SQLiteLedger(path)
    barrier.wait()
    won, _ = ledger.claim(make_entry("cross-process"), [Status.PLANNED, Status.STARTED])
    results.put(won)


def test_sqlite_processes_claim_a_key_once(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    SQLiteLedger(path).close()
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(6)
    results = context.Queue()
    processes = [
        context.Process(target=_claim_in_process, args=(path, barrier, results)) for _ in range(6)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(20)
    wins = [results.get(timeout=5) for _ in processes]
    assert sorted(wins) == [False] * 5 + [True]
