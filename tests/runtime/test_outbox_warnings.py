"""An outcome the ledger cannot take is retried every half second; the log says so once,
then once a minute, not at every retry."""

from __future__ import annotations

import logging
import time

import pytest

from agentguard.runtime import MemoryLedger, Runtime, guarded
from agentguard.runtime import outbox as outbox_module
from agentguard.runtime.ledger.base import LedgerEntry


class _GoneLedger(MemoryLedger):
    """A ledger that has stopped answering reads (the outbox asks for the call first)."""

    def get(self, call_id: str) -> LedgerEntry | None:
        raise ConnectionError("server closed the connection")


def test_a_ledger_that_stays_away_is_warned_about_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outbox_module, "RETRY_EVERY_S", 0.05)
    ledger = _GoneLedger()
    box = outbox_module.Outbox(lambda: ledger)
    runtime = Runtime(ledger=MemoryLedger())

    @guarded(runtime, risk="write", idempotency="non_idempotent", replay="never")
    def create_order(cart_id: str) -> dict[str, str]:
        return {"order": cart_id}

    with runtime.run(run_id="run_1"):
        create_order(cart_id="c1")
    (entry,) = runtime.ledger.entries(run_id="run_1")
    with caplog.at_level(logging.WARNING, logger="agentguard.runtime"):
        box.put(entry, entry.attempts, entry.status, {})
        deadline = time.monotonic() + 10
        while box.pending() and time.monotonic() < deadline and len(caplog.records) < 1:
            time.sleep(0.05)
        time.sleep(0.5)  # about ten more retries
    # only this outcome's: another test's outbox, still retrying in the background, may
    # warn about its own call once its minute has passed
    warnings = [
        r
        for r in caplog.records
        if "still unavailable" in r.getMessage() and entry.call_id in r.getMessage()
    ]
    assert box.pending() == 1  # still trying
    assert len(warnings) == 1
