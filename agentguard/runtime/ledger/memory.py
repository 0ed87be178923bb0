"""In-process ledger for tests: same contract, no durability."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

from agentguard.runtime.ledger.base import (
    Ledger,
    LedgerEntry,
    LedgerEvent,
    Status,
    apply_changes,
    evolve,
    legal_path,
    normalise_statuses,
    path_events,
    with_fields,
)


class MemoryLedger(Ledger):
    url = "memory://"
    blocks = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, LedgerEntry] = {}
        self._by_key: dict[tuple[str, str], str] = {}
        # per call, each transition as given (start, path, actor, detail, at): expanded into
        # events only when read, which calls rarely do
        self._history: dict[str, list[tuple[Any, ...]]] = {}

    def claim(self, entry: LedgerEntry, path: Sequence[Status]) -> tuple[bool, LedgerEntry]:
        now = time.time()
        steps = legal_path(None, path)
        key = (entry.tool_name, entry.idempotency_key)
        with self._lock:
            existing_id = self._by_key.get(key)
            if existing_id is not None:
                return False, self._rows[existing_id]
            # evolve(entry, status=..., created_at=now, updated_at=now, version=1), written out
            stored = with_fields(
                entry.__class__,
                {
                    **entry.__dict__,
                    "status": steps[-1],
                    "created_at": now,
                    "updated_at": now,
                    "version": 1,
                },
            )
            call_id = entry.call_id
            self._rows[call_id] = stored
            self._by_key[key] = call_id
            self._history[call_id] = [(None, steps, "runtime", None, now)]
            return True, stored

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
        now = time.time()
        with self._lock:
            current = self._rows.get(entry.call_id)
            if current is None or current.version != entry.version:
                return None
            if lease_expired_by is not None and not (
                current.lease_expires_at is not None and current.lease_expires_at < lease_expired_by
            ):
                return None
            steps = legal_path(current.status, path)
            updated = apply_changes(current, steps, changes, now)
            self._rows[entry.call_id] = updated
            self._history[entry.call_id].append((current.status, steps, actor, detail, now))
            return updated

    def renew_lease(self, call_id: str, attempt: int, expires_at: float) -> bool:
        with self._lock:
            current = self._rows.get(call_id)
            if current is None or current.status is not Status.STARTED:
                return False
            if current.attempts != attempt:
                return False
            self._rows[call_id] = evolve(current, lease_expires_at=expires_at)
            return True

    def release_lease(self, call_id: str, attempt: int, owner: str, detail: str) -> bool:
        with self._lock:
            current = self._rows.get(call_id)
            if current is None or current.status is not Status.UNCERTAIN:
                return False
            if current.attempts != attempt or current.lease_owner != owner:
                return False
            self._rows[call_id] = evolve(current, lease_owner=None, lease_expires_at=None)
            status = [Status.UNCERTAIN]
            self._history[call_id].append(
                (Status.UNCERTAIN, status, "runtime", detail, time.time())
            )
            return True

    def note(self, entry: LedgerEntry, actor: str, detail: str) -> None:
        with self._lock:
            current = self._rows.get(entry.call_id)
            if current is not None:
                self._history[entry.call_id].append(
                    (current.status, [current.status], actor, detail, time.time())
                )

    def get(self, call_id: str) -> LedgerEntry | None:
        with self._lock:
            return self._rows.get(call_id)

    def find(self, tool_name: str, idempotency_key: str) -> LedgerEntry | None:
        with self._lock:
            call_id = self._by_key.get((tool_name, idempotency_key))
            return self._rows.get(call_id) if call_id else None

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
        statuses = normalise_statuses(status)
        with self._lock:
            rows = [
                row
                for row in self._rows.values()
                if (run_id is None or row.run_id == run_id)
                and (tool_name is None or row.tool_name == tool_name)
                and (statuses is None or row.status.value in statuses)
                and (input_hash is None or row.input_hash == input_hash)
                and (idempotency_key is None or row.idempotency_key == idempotency_key)
            ]
        rows.sort(key=lambda row: (row.created_at, row.call_id))
        return rows[:limit] if limit is not None else rows

    def events(self, call_id: str) -> list[LedgerEvent]:
        with self._lock:
            history = list(self._history.get(call_id, ()))
        return [
            event
            for start, path, actor, detail, at in history
            for event in path_events(call_id, start, path, actor, detail, at)
        ]
