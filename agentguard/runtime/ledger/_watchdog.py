"""A bound on how long a statement waits for a server that has stopped answering.

A server's own timeouts (lock, statement) end a wait only while it still answers; a server that
vanished behind a proxy, a frozen host or a half-open connection never sends the error. One
thread per ledger watches the statements in flight and, past a statement's deadline, shuts its
connection's socket: the waiting thread wakes with a broken connection at once.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from agentguard.runtime.ledger.base import current_pid

# how long the watching thread stays when nothing is in flight before it ends
_IDLE_S = 30.0


class Watchdog:
    """Shuts the socket of a statement still unanswered ``seconds`` after it was sent."""

    def __init__(self, seconds: float, socket_of: Callable[[Any], int]) -> None:
        self.seconds = seconds
        self._socket_of = socket_of
        # a sync statement's thread ident, or an async one's connection id -> (deadline,
        # connection): set and cleared by whoever sends the statement
        self._armed: dict[int, tuple[float, Any]] = {}
        self._cut: weakref.WeakSet[Any] = weakref.WeakSet()  # connections this watchdog shut
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = current_pid()

    def arm(self, connection: Any, slot: int | None = None) -> None:
        """Watch a statement sent on ``connection``; ``slot`` names it until ``disarm``: the
        sending thread by default, the connection for statements of an event loop (several
        in flight on one thread). Arming is a dict entry, with no timer of the loop's to
        schedule and cancel for every statement."""
        if self._pid != current_pid():
            self._forked()
        self._armed[threading.get_ident() if slot is None else slot] = (
            time.monotonic() + self.seconds,
            connection,
        )
        # after the entry is set: a watcher ending for want of entries has seen it, or is gone
        if self._thread is None:
            self._start()

    def disarm(self, slot: int | None = None) -> None:
        self._armed.pop(threading.get_ident() if slot is None else slot, None)

    def was_cut(self, connection: Any) -> bool:
        """Whether this watchdog shut ``connection`` (its statement outlived its bound)."""
        with self._lock:
            return connection in self._cut

    def _forked(self) -> None:
        """In a forked child: no watcher runs (threads are not copied), and the statements
        armed are the parent's, whose sockets the child shares: they are not the child's to
        shut."""
        with self._lock:
            if self._pid != current_pid():
                self._armed.clear()
                self._thread = None
                self._pid = current_pid()

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._watch, name="agentguard-ledger-watchdog", daemon=True
            )
            self._thread.start()

    def _watch(self) -> None:
        tick = min(0.25, self.seconds / 4)
        idle_since = time.monotonic()
        while True:
            time.sleep(tick)
            now = time.monotonic()
            armed = list(self._armed.items())
            if armed:
                idle_since = now
            elif now - idle_since > _IDLE_S:
                with self._lock:
                    if not self._armed:
                        self._thread = None
                        return
            for ident, (deadline, connection) in armed:
                # still the same statement: a finished one cleared its slot or set a new one
                if deadline < now and self._armed.get(ident, (None,))[0] == deadline:
                    self.shut(connection)

    def shut(self, connection: Any) -> None:
        """Shut the socket of ``connection``: whoever waits on it (a thread, or an event loop
        polling it) wakes with a broken connection."""
        with self._lock:
            self._cut.add(connection)
        with contextlib.suppress(Exception):  # already closed
            duplicate = socket.socket(fileno=os.dup(self._socket_of(connection)))
            try:
                duplicate.shutdown(socket.SHUT_RDWR)
            finally:
                duplicate.close()
