"""Whether an attempt of a call may still be running, and so may still send its request.

A lookup's ``NotFound`` proves only that the effect has not happened *yet*: it settles a call
only once no attempt of it can send any more. An attempt is known to be over when its outcome
is recorded or its lease is released (``lease_owner`` cleared); while the lease is held, the
attempt is over only if its owner process is known to be gone. Attempts of this process are
tracked here; another process on this machine is looked up by its pid (and start time, so a
reused pid does not pass for it); a process on another machine cannot be seen, so its attempt
counts as possibly running (a frozen VM can wake up and send).
"""

from __future__ import annotations

import os
import socket
import threading

from agentguard.runtime.ledger.base import current_pid

_lock = threading.Lock()
_running: dict[tuple[str, int], int] = {}
_identity: tuple[int, str] = (0, "")


def _stat_fields(pid: int | str) -> list[str]:
    """/proc/PID/stat after the command name (Linux): state first; empty if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except OSError:
        return []
    # the command name (field 2) may hold spaces and parentheses: split after its last ')'
    return text[text.rfind(")") + 2 :].split()


def _start_ticks(pid: int | str) -> str | None:
    """The process's start time in clock ticks since boot, or None if unknown."""
    fields = _stat_fields(pid)
    return fields[19] if len(fields) > 19 else None


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def _boot_id() -> str:
    """This boot of the machine (Linux); "-" where it cannot be read. A process of an earlier
    boot is gone."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            return boot.read().strip().replace(":", "") or "-"
    except OSError:
        return "-"


def process_identity() -> str:
    """``host:pid:pid-namespace:start:boot``: names this process, and no later one with its
    pid, on this boot of this machine."""
    global _identity
    pid = current_pid()
    if _identity[0] != pid:  # computed once per process (again in a forked child)
        _identity = (
            pid,
            f"{socket.gethostname()}:{pid}:{_pid_namespace()}:{_start_ticks(pid)}:{_boot_id()}",
        )
    return _identity[1]


def begin(call_id: str, attempt: int) -> None:
    key = (call_id, attempt)
    with _lock:
        _running[key] = _running.get(key, 0) + 1


def end(call_id: str, attempt: int) -> None:
    key = (call_id, attempt)
    with _lock:
        count = _running.get(key, 0) - 1
        if count > 0:
            _running[key] = count
        else:
            _running.pop(key, None)


def running_here(call_id: str, attempt: int) -> bool:
    with _lock:
        return _running.get((call_id, attempt), 0) > 0


def owner_may_be_running(owner: str | None, call_id: str, attempt: int) -> bool:
    """Whether the attempt ``attempt`` of ``call_id``, leased by ``owner``, may still send."""
    if owner is None:
        return False  # released: its outcome is recorded or it is known to have stopped
    identity = owner.rsplit("@", 1)[-1]
    if identity == process_identity():
        return running_here(call_id, attempt)
    parts = identity.split(":")
    if len(parts) == 2 and parts[0] == socket.gethostname() and parts[1] == str(os.getpid()):
        return running_here(call_id, attempt)  # written by an older agentguard, this process
    return not owner_known_gone(owner)


def owner_known_gone(owner: str | None) -> bool:
    """Whether ``owner`` names another process of this machine that has ended: its pid is gone
    or a zombie, or now another (later) process's, or the machine has rebooted since. A
    process on another machine, or in another pid namespace, cannot be seen: not known gone.
    This process is never gone."""
    if owner is None:
        return False
    identity = owner.rsplit("@", 1)[-1]
    parts = identity.split(":")
    here = process_identity().split(":")
    if len(parts) not in (2, 4, 5) or parts[0] != here[0] or not parts[1].isdigit():
        return False  # a worker id we cannot read, or another machine
    if len(parts) == 5 and "-" not in (parts[4], here[4]) and parts[4] != here[4]:
        return True  # this machine has rebooted since: every process of that boot is gone
    if len(parts) >= 4 and parts[2] != here[2]:
        return False  # another pid namespace (container) on the same host name
    pid = int(parts[1])
    if pid == current_pid():
        # this process's pid: the owner is this process (never gone), or an earlier process
        # whose pid this one reuses (gone), told apart by the start time
        return len(parts) >= 4 and parts[3] != "None" and parts[3] != here[3]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, under another user
    except OSError:
        return False
    fields = _stat_fields(pid)
    if fields and fields[0] in ("Z", "X"):
        return True  # exited, not yet reaped
    if len(parts) >= 4 and parts[3] != "None":
        started = fields[19] if len(fields) > 19 else None
        if started is not None and started != parts[3]:
            return True  # the pid was reused by a later process
    return False
