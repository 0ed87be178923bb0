"""Lease renewal while tool bodies run, so recovery elsewhere never takes a live call for dead.

One daemon thread per runtime (and per process) renews the leases of every body in flight:
watching a call costs a dict insert, not a thread, and bodies that finish before their first
renewal is due never touch the ledger.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Final

from agentguard.runtime.ledger.base import Ledger, current_pid

logger = logging.getLogger("agentguard.runtime")

# Renew when this fraction of the lease has passed: two renewals can fail before it runs out.
RENEW_FRACTION = 1 / 3
# A heartbeat thread with nothing to renew for this long stops (a new call restarts it).
IDLE_STOP_S = 5.0


# A watched call: (call_id, attempt, lease_s, when its next renewal is due); a tuple, built
# without a Python-level __init__, replaced by the renewal thread when it renews.
_Watched = tuple[str, int, float, float]
_DUE: Final = 3


class Heartbeat:
    def __init__(self, ledger: Callable[[], Ledger]) -> None:
        self._ledger = ledger
        # watch and unwatch take the plain lock (a Condition's `with` is a Python-level call);
        # the renewal thread waits on the condition built on it
        self._mutex = threading.Lock()
        self._lock = threading.Condition(self._mutex)
        self._watched: dict[int, _Watched] = {}
        self._tokens = itertools.count(1)  # next() hands out each number once, in any thread
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._tick = float("inf")
        self.renewals = 0

    def watch(self, call_id: str, attempt: int, lease_s: float) -> int | None:
        """Keep the lease of ``call_id`` (on ``attempt``) alive until ``unwatch``."""
        if lease_s <= 0:
            return None
        interval = lease_s * RENEW_FRACTION
        token = next(self._tokens)
        with self._mutex:
            self._watched[token] = (call_id, attempt, lease_s, time.monotonic() + interval)
            if self._thread is None or self._pid != current_pid():
                # a thread does not survive fork(): a child process starts its own
                self._pid = current_pid()
                self._tick = interval
                self._thread = threading.Thread(
                    target=self._loop, name="agentguard-heartbeat", daemon=True
                )
                self._thread.start()
            elif interval < self._tick:
                # The thread wakes every `tick` (the shortest renewal interval seen), so watching
                # a call is a dict insert; only a shorter lease than any before wakes it early.
                self._tick = interval
                self._lock.notify()
        return token

    def unwatch(self, token: int | None) -> None:
        if token is None:
            return
        with self._mutex:
            self._watched.pop(token, None)

    def _loop(self) -> None:
        idle_since: float | None = None
        while True:
            with self._lock:
                self._lock.wait(min(self._tick, 3600.0))
                if self._pid != current_pid():
                    return
                now = time.monotonic()
                if not self._watched:
                    # Idle for a while: stop, so that a runtime nobody uses can be collected;
                    # the next watched call starts a new thread (decided under the lock, so no
                    # call is ever left to a thread that is about to stop).
                    if idle_since is None:
                        idle_since = now
                    elif now - idle_since >= max(IDLE_STOP_S, self._tick):
                        self._thread = None
                        return
                    continue
                idle_since = None
                due = [(token, item) for token, item in self._watched.items() if item[_DUE] <= now]
                for token, (call_id, attempt, lease_s, _) in due:
                    self._watched[token] = (
                        call_id,
                        attempt,
                        lease_s,
                        now + lease_s * RENEW_FRACTION,
                    )
            for token, item in due:
                if not self._renew(item):
                    self.unwatch(token)

    def _renew(self, item: _Watched) -> bool:
        """False once the call has moved on without us: there is nothing left to renew."""
        call_id, attempt, lease_s, _ = item
        ledger = self._ledger()
        if ledger.closed:
            return False  # nothing is written to a closed ledger: the lease runs out there
        try:
            renewed = ledger.renew_lease(call_id, attempt, time.time() + lease_s)
        except Exception as exc:  # the next beat tries again; the lease has slack for it
            if ledger.closed:
                return False
            logger.warning("could not renew the lease of %s: %r", call_id, exc)
            return True
        if renewed:
            self.renewals += 1
        else:
            logger.error(
                "%s attempt %d lost its lease while still running (declared uncertain elsewhere); "
                "its outcome will be recorded when it finishes",
                call_id,
                attempt,
            )
        return renewed
