"""The ledger model and the contract every backend keeps.

One row per logical call, unique on (tool_name, idempotency_key). Every change of status is a
compare-and-set on ``version`` that also appends an event, in one transaction.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from dataclasses import fields as fields_of
from datetime import datetime, timezone
from enum import Enum
from json.encoder import encode_basestring_ascii
from typing import Any, TypeVar

from agentguard.runtime.hashing import compact_encoder


class Status(str, Enum):
    PLANNED = "planned"
    APPROVED = "approved"
    STARTED = "started"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    UNCERTAIN = "uncertain"

    def __str__(self) -> str:
        return self.value

    # A member equals its value ("started"), so it hashes as that string does; the default
    # hash of an enum member (by name, through a Python method) costs a call on every lookup.
    __hash__ = str.__hash__


# Legal moves. Anything else is a bug in the caller and is refused by every backend.
TRANSITIONS: dict[Status, frozenset[Status]] = {
    Status.PLANNED: frozenset({Status.APPROVED, Status.STARTED, Status.FAILED}),
    Status.APPROVED: frozenset({Status.STARTED, Status.FAILED}),
    # started -> started is the next attempt of a retry
    Status.STARTED: frozenset({Status.STARTED, Status.SUCCEEDED, Status.FAILED, Status.UNCERTAIN}),
    # uncertain -> started only after a definite NotFound (replay="auto" or approved)
    Status.UNCERTAIN: frozenset({Status.SUCCEEDED, Status.FAILED, Status.STARTED, Status.APPROVED}),
    # failed means "known not applied": the same request may be re-armed
    Status.FAILED: frozenset({Status.STARTED, Status.APPROVED, Status.PLANNED}),
    Status.SUCCEEDED: frozenset(),
}

# Columns a transition may change; everything else is fixed at claim time.
MUTABLE_FIELDS = frozenset(
    {
        "attempts",
        "error_code",
        "error_detail",
        "started_at",
        "finished_at",
        "result",
        "result_ref",
        "lease_owner",
        "lease_expires_at",
        "input_hash",
        "args",
        "approved_by",
        "approved_on",
    }
)


class IllegalTransition(RuntimeError):
    pass


class LedgerConfigurationError(RuntimeError):
    pass


class LedgerMissing(LedgerConfigurationError):
    """A ledger opened to be read is not there: nothing was created in its place."""


class LedgerUnanswered(RuntimeError):
    """The ledger did not answer within its bound (a lock held, a server gone silent).

    Whether the operation took effect is not known; asking again at once would wait as long,
    so callers give up on the ledger for now instead of retrying.
    """


class LedgerClosed(LedgerUnanswered):
    """The ledger was closed: nothing is read or written through it any more.

    A closed ledger never reopens by itself, so nothing reaches its file or schema after
    ``close()`` (which may have been moved, archived or dropped since).
    """


# Call ids need uniqueness, not secrecy: 128 bits from a generator seeded by the OS (a private
# one, so a user's random.seed() cannot make two processes agree), reseeded in every forked
# child. uuid4() asks the kernel for fresh bytes on every call, which costs more here.
_ids = random.Random()
# This process's id, read again in a forked child: os.getpid() is a system call, and the
# runtime asks for it several times a call (lease owner, heartbeat, the connection's owner).
_pid = os.getpid()


def _after_fork_in_child() -> None:
    global _pid
    _pid = os.getpid()
    _ids.seed()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


async def run_to_the_end(operation: Awaitable[T]) -> T:
    """Await ``operation`` in a task of its own, which no cancellation of the caller stops."""
    future = asyncio.ensure_future(operation)
    while True:
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            continue  # cancelled again: the operation still has to finish


def current_pid() -> int:
    """``os.getpid()``, without its system call."""
    return _pid


def new_call_id() -> str:
    return f"call_{_ids.getrandbits(128):032x}"


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class LedgerEntry:
    call_id: str
    run_id: str
    tool_name: str
    idempotency_key: str
    input_hash: str
    status: Status
    risk: str
    idempotency: str
    replay: str
    step_id: str | None = None
    user_id: str | None = None
    approved_at: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    error_code: str | None = None
    error_detail: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    result: Any = None
    result_ref: str | None = None
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    # the run fields a key function or a lookup may read, so recovery sees what the call saw
    tenant: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # who approved the call (a person by name, or "callback:NAME") and when
    approved_by: str | None = None
    approved_on: float | None = None
    # the effects the tool declares (DESIGN 1's effect kinds: payment, message, destructive...)
    side_effects: list[str] = field(default_factory=list)
    created_at: float = 0.0
    updated_at: float = 0.0
    version: int = 1

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        for name in (
            "started_at",
            "finished_at",
            "lease_expires_at",
            "approved_on",
            "created_at",
            "updated_at",
        ):
            data[name] = iso(data[name])
        return data


@dataclass(frozen=True)
class LedgerEvent:
    call_id: str
    at: float
    from_status: str | None
    to_status: str
    actor: str
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["at"] = iso(self.at)
        return data


T = TypeVar("T")


def evolve(instance: T, **changes: Any) -> T:
    """``dataclasses.replace`` for the frozen entry and call dataclasses, on the hot path.

    A copy of the instance's fields with ``changes``, without running ``__init__`` (a frozen
    dataclass sets each field through ``object.__setattr__``: a few microseconds a copy, four
    copies a call). Only for dataclasses without ``__post_init__`` or ``__slots__``.
    """
    fields = instance.__dict__.copy()
    count = len(fields)
    fields.update(changes)
    if len(fields) != count:
        unknown = changes.keys() - instance.__dict__.keys()
        raise TypeError(f"{type(instance).__name__} has no fields {sorted(unknown)}")
    return with_fields(instance.__class__, fields)


def with_fields(cls: type[T], fields: dict[str, Any]) -> T:
    """An instance of ``cls`` whose attributes are ``fields`` (already checked), without
    ``__init__``."""
    instance = object.__new__(cls)
    object.__setattr__(instance, "__dict__", fields)
    return instance


_FIELD_NAMES: dict[type, frozenset[str]] = {}


def assemble(cls: type[T], fields: dict[str, Any]) -> T:
    """``cls(**fields)`` for the frozen entry, call and run dataclasses, without ``__init__``.

    ``fields`` names every field, defaults included, and becomes the instance's own: a frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``, several
    microseconds for the 31 of an entry. Raises TypeError for a missing or unknown field, as
    ``__init__`` would.
    """
    names = _FIELD_NAMES.get(cls)
    if names is None:
        members = fields_of(cls)  # type: ignore[arg-type]
        names = _FIELD_NAMES[cls] = frozenset(item.name for item in members)
    if fields.keys() != names:
        missing = sorted(names - fields.keys())
        unknown = sorted(fields.keys() - names)
        raise TypeError(f"{cls.__name__}: missing fields {missing}, unknown fields {unknown}")
    return with_fields(cls, fields)


_DUMPS = compact_encoder(
    json.JSONEncoder().default,
    encode_basestring_ascii,
    lambda value: json.dumps(value, sort_keys=True, separators=(",", ":")),
)


def dumps(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"))``, faster."""
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if kind is int:
        return int.__repr__(value)
    if not value and (kind is dict or kind is list):
        return "{}" if kind is dict else "[]"
    return _DUMPS(value)


# The legal moves as pairs of values: checked on every claim and transition, and an enum
# member hashes through a Python method while a tuple of strings does not.
_LEGAL_MOVES = frozenset(
    (start.value, end.value) for start, ends in TRANSITIONS.items() for end in ends
)


def check_path(current: Status, path: Sequence[Status]) -> None:
    previous = current
    for status in path:
        if (previous._value_, status._value_) not in _LEGAL_MOVES:
            raise IllegalTransition(f"{previous.value} -> {status.value} is not a legal transition")
        previous = status


_LEGAL_PATHS: dict[tuple[Status | None, tuple[Any, ...]], tuple[Status, ...]] = {}


def legal_path(start: Status | None, path: Status | Sequence[Status]) -> tuple[Status, ...]:
    """``path`` as statuses, each a legal move from the one before, starting at ``start``.

    ``start`` None is a new entry's claim: it starts planned, and its path may name planned
    first. Raises IllegalTransition. Every call checks its path, and the same few paths recur,
    so each is checked once.
    """
    shape = (path,) if type(path) is Status or isinstance(path, str) else tuple(path)
    steps = _LEGAL_PATHS.get((start, shape))
    if steps is None:
        steps = tuple(normalise_path(path))
        if start is None:
            check_path(Status.PLANNED, steps[1:] if steps[0] is Status.PLANNED else steps)
        else:
            check_path(start, steps)
        _LEGAL_PATHS[(start, shape)] = steps  # bounded: statuses make a few short paths
    return steps


def apply_changes(
    entry: LedgerEntry, path: Sequence[Status], changes: dict[str, Any], now: float
) -> LedgerEntry:
    if not MUTABLE_FIELDS.issuperset(changes):
        unknown = set(changes) - MUTABLE_FIELDS
        raise ValueError(f"fields not changeable by a transition: {sorted(unknown)}")
    # evolve() without its check: every name in ``changes`` is a field, checked just above
    return with_fields(
        LedgerEntry,
        {
            **entry.__dict__,
            **changes,
            "status": path[-1],
            "version": entry.version + 1,
            "updated_at": now,
        },
    )


def path_events(
    call_id: str,
    start: Status | None,
    path: Sequence[Status],
    actor: str,
    detail: str | None,
    now: float,
) -> list[LedgerEvent]:
    events = []
    previous = start.value if start is not None else None
    for status in path:
        events.append(LedgerEvent(call_id, now, previous, status.value, actor, detail))
        previous = status.value
    return events


class AsyncLedger(ABC):
    """The operations an async guarded call needs, as coroutines run on the event loop itself.

    A backend with a native async driver offers this as ``Ledger.aio``; the semantics are its
    sync methods', to the statement (see ``Ledger``). A cancellation of the calling task
    before an operation has sent anything raises ``CancelledError``; once it has, the operation
    goes on to its end (a statement whose fate the cancellation left unknown is sent again) and
    returns its answer, and the caller learns of the cancellation from ``Task.cancelling()``.
    """

    @abstractmethod
    async def claim(self, entry: LedgerEntry, path: Sequence[Status]) -> tuple[bool, LedgerEntry]:
        """``Ledger.claim``."""

    @abstractmethod
    async def transition(
        self,
        entry: LedgerEntry,
        path: Status | Sequence[Status],
        *,
        actor: str = "runtime",
        detail: str | None = None,
        lease_expired_by: float | None = None,
        **changes: Any,
    ) -> LedgerEntry | None:
        """``Ledger.transition``."""

    @abstractmethod
    async def release_lease(self, call_id: str, attempt: int, owner: str, detail: str) -> bool:
        """``Ledger.release_lease``."""

    @abstractmethod
    async def note(self, entry: LedgerEntry, actor: str, detail: str) -> None:
        """``Ledger.note``."""

    @abstractmethod
    async def get(self, call_id: str) -> LedgerEntry | None:
        """``Ledger.get``."""

    async def entries(
        self,
        *,
        run_id: str | None = None,
        tool_name: str | None = None,
        status: Status | str | Iterable[Status | str] | None = None,
        input_hash: str | None = None,
        idempotency_key: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerEntry]:
        """``Ledger.entries`` (for ``Runtime.arecover``); a driver without it raises
        NotImplementedError, and the sync method is called in a thread instead."""
        raise NotImplementedError

    async def aclose(self) -> None:  # noqa: B027 - optional for drivers without resources
        """Release what the driver holds for the running event loop (its connections)."""


class Ledger(ABC):
    """Durable record of tool calls. Backends must be safe for concurrent callers."""

    url: str = ""
    # Whether an operation may wait on a disk or a server: an async call then performs it in a
    # thread, so that the event loop goes on meanwhile, unless the ledger has ``aio``.
    blocks: bool = True
    # The ledger's native async driver, where it has one (PostgreSQL): an async call awaits its
    # operations on the event loop, without a thread.
    aio: AsyncLedger | None = None
    # Set by ``close()``: every operation after it raises ``LedgerClosed`` (the SQL backends),
    # and the runtime's background work (a late completion, the outbox) records nothing more.
    closed: bool = False

    @abstractmethod
    def claim(self, entry: LedgerEntry, path: Sequence[Status]) -> tuple[bool, LedgerEntry]:
        """Insert ``entry`` (moved along ``path`` from planned) unless its key exists.

        Returns (True, the new entry) when this caller won, or (False, the existing entry).
        The insert is durable when this returns.
        """

    @abstractmethod
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
        """Compare-and-set from ``entry.version``; None if someone else changed the row first.

        With ``lease_expired_by``, the move happens only if the lease (as stored now, not as
        read earlier) ran out before that moment: a renewal in between wins.
        """

    @abstractmethod
    def renew_lease(self, call_id: str, attempt: int, expires_at: float) -> bool:
        """Extend the lease of a call still ``started`` on ``attempt``; False if it moved on.

        The version does not change, so the running attempt's outcome still compares-and-sets
        against the entry it started with; expiry moves guard on the stored lease instead.
        """

    @abstractmethod
    def release_lease(self, call_id: str, attempt: int, owner: str, detail: str) -> bool:
        """Record that ``attempt`` of an uncertain call has stopped: nothing of it can send.

        Clears the lease if ``owner`` still holds it for that attempt; False otherwise. From
        then on a lookup's ``NotFound`` settles the call. The version does not change.
        """

    @abstractmethod
    def note(self, entry: LedgerEntry, actor: str, detail: str) -> None:
        """Append an event to the call's history without changing it (a refused late outcome)."""

    @abstractmethod
    def get(self, call_id: str) -> LedgerEntry | None: ...

    @abstractmethod
    def find(self, tool_name: str, idempotency_key: str) -> LedgerEntry | None: ...

    @abstractmethod
    def entries(
        self,
        *,
        run_id: str | None = None,
        tool_name: str | None = None,
        status: Status | str | Iterable[Status | str] | None = None,
        input_hash: str | None = None,
        idempotency_key: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerEntry]: ...

    @abstractmethod
    def events(self, call_id: str) -> list[LedgerEvent]: ...

    def expired(self, now: float) -> list[LedgerEntry]:
        """Started entries whose lease ran out: their worker died or hung."""
        return [
            entry
            for entry in self.entries(status=Status.STARTED)
            if entry.lease_expires_at is not None and entry.lease_expires_at < now
        ]

    def close(self) -> None:
        """Release the ledger's resources and mark it ``closed``: the runtime writes nothing
        more through it (a late outcome, the outbox), and the SQL backends refuse every
        operation with ``LedgerClosed``. A backend that overrides this calls it."""
        self.closed = True

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def normalise_path(path: Status | Sequence[Status]) -> list[Status]:
    if type(path) is Status:
        return [path]
    if isinstance(path, (Status, str)):
        return [Status(path)]
    result = [step if type(step) is Status else Status(step) for step in path]
    if not result:
        raise ValueError("a transition needs at least one status")
    return result


def normalise_statuses(status: Status | str | Iterable[Status | str] | None) -> list[str] | None:
    if status is None:
        return None
    if isinstance(status, (Status, str)):
        return [Status(status).value]
    return [Status(item).value for item in status]
