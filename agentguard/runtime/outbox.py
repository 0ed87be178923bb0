"""Outcomes the ledger could not take when the body finished, recorded as soon as it can.

A tool body that ran has had its effect; if the ledger is unreachable at that moment (a
database restart, a full disk, a lock held past the busy timeout), its outcome is kept here and
written by a background thread, fenced by the attempt number like any other outcome.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentguard.runtime.ledger.base import Ledger, LedgerEntry, Status

logger = logging.getLogger("agentguard.runtime")

RETRY_EVERY_S = 0.5
GIVE_UP_AFTER_S = 3600.0
# A retry every half second must not become a warning every half second: one when an item
# first fails, then one a minute while it keeps failing.
WARN_EVERY_S = 60.0


@dataclass
class _Pending:
    entry: LedgerEntry
    attempt: int
    target: Status
    changes: dict[str, Any]
    since: float
    detail: str
    warned_at: float | None = None


class Outbox:
    def __init__(self, ledger: Callable[[], Ledger]) -> None:
        self._ledger = ledger
        self._lock = threading.Condition()
        self._pending: list[_Pending] = []
        self._thread: threading.Thread | None = None

    def put(
        self,
        entry: LedgerEntry,
        attempt: int,
        target: Status,
        changes: dict[str, Any],
        *,
        detail: str = "recorded after the ledger was unavailable when the body finished",
    ) -> None:
        with self._lock:
            self._pending.append(
                _Pending(entry, attempt, target, dict(changes), time.monotonic(), detail)
            )
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="agentguard-outbox", daemon=True
                )
                self._thread.start()
            self._lock.notify()

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def flush(self, timeout_s: float) -> bool:
        """Wait at most ``timeout_s`` for every kept outcome to be recorded; True if none is
        left."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            self._lock.notify_all()  # the outbox's thread tries at once rather than at its beat
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def abandon(self) -> list[str]:
        """Drop every kept outcome (the ledger was closed), each logged; their call ids."""
        with self._lock:
            dropped, self._pending = self._pending, []
            self._lock.notify_all()
        for item in dropped:
            _log_unrecorded(item)
        return [item.entry.call_id for item in dropped]

    def _loop(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._thread = None
                    return
                batch = list(self._pending)
            done = [item for item in batch if self._record(item)]
            with self._lock:
                self._pending = [item for item in self._pending if item not in done]
                self._lock.notify_all()  # a flush() waiting for the outbox to empty
                if self._pending:
                    self._lock.wait(RETRY_EVERY_S)

    def _record(self, item: _Pending) -> bool:
        """True once the outcome is recorded or can no longer be (the call moved on)."""
        if time.monotonic() - item.since > GIVE_UP_AFTER_S:
            logger.error("gave up recording %s of %s", item.target.value, item.entry.call_id)
            return True
        ledger = self._ledger()
        if ledger.closed:
            _log_unrecorded(item)
            return True
        try:
            current = ledger.get(item.entry.call_id)
            if current is None:
                return True
            if current.attempts != item.attempt or current.status not in (
                Status.STARTED,
                Status.UNCERTAIN,
            ):
                ledger.note(
                    current,
                    "late_outcome",
                    f"outcome {item.target.value} of attempt {item.attempt}, recorded late, not "
                    f"applied: the call is {current.status.value} at attempt {current.attempts}",
                )
                return True
            if current.status is item.target:
                return True
            moved = ledger.transition(
                current,
                item.target,
                actor="outbox",
                detail=item.detail,
                **item.changes,
            )
            if moved is not None:
                logger.info("recorded %s of %s late", item.target.value, item.entry.call_id)
            return moved is not None
        except Exception as exc:
            if ledger.closed:  # closed meanwhile: the outcome is not recorded
                _log_unrecorded(item)
                return True
            now = time.monotonic()
            if item.warned_at is None or now - item.warned_at >= WARN_EVERY_S:
                item.warned_at = now
                logger.warning(
                    "the ledger is still unavailable for %s: %r", item.entry.call_id, exc
                )
            return False


def _log_unrecorded(item: _Pending) -> None:
    logger.error(
        "the ledger was closed before outcome %s of %s (attempt %d) could be recorded: not "
        "recorded; the call stays uncertain until its lookup (recover()) or a person settles it",
        item.target.value,
        item.entry.call_id,
        item.attempt,
    )
