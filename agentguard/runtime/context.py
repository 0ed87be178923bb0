"""The run and call contexts, carried in contextvars so frameworks can invoke tools themselves."""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

CURRENT_RUN: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar(
    "agentguard_run", default=None
)
_current_call: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar(
    "agentguard_call", default=None
)


@dataclass(frozen=True)
class RunContext:
    """Who is acting and under which approval; the material business keys are built from."""

    run_id: str
    user_id: str | None = None
    approved_at: str | None = None
    step_id: str | None = None
    tenant: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallContext:
    """One call of a guarded tool, as the key function, reconcile and the tool body see it."""

    call_id: str
    tool_name: str
    args: Mapping[str, Any]
    run_id: str
    user_id: str | None
    approved_at: str | None
    step_id: str | None
    tenant: str | None
    extra: Mapping[str, Any]
    idempotency_key: str = ""
    input_hash: str = ""
    attempt: int = 0

    def __getitem__(self, name: str) -> Any:
        """Named parts for keys: run fields first, then the call's arguments."""
        if name in ("run_id", "user_id", "approved_at", "tenant", "tool_name"):
            return getattr(self, name)
        if name in self.extra:
            return self.extra[name]
        return self.args[name]


class RunScope:
    """``with runtime.run(...)`` / ``async with runtime.run(...)``."""

    def __init__(self, context: RunContext) -> None:
        self.context = context
        self._tokens: list[contextvars.Token[RunContext | None]] = []

    def __enter__(self) -> RunContext:
        self._tokens.append(CURRENT_RUN.set(self.context))
        return self.context

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        CURRENT_RUN.reset(self._tokens.pop())

    async def __aenter__(self) -> RunContext:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, traceback)


def new_run_id() -> str:
    return "run_" + uuid.uuid4().hex


def current_run() -> RunContext | None:
    return CURRENT_RUN.get()


def current_call() -> CallContext:
    """The call being executed; only available inside a guarded tool's body."""
    call = _current_call.get()
    if call is None:
        raise RuntimeError(
            "current_call() is only available inside a tool wrapped with agentguard's guarded()"
        )
    return call
