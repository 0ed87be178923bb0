"""agentguard.runtime: replay-safe tool calls for LLM agents.

Wrap a tool with ``guarded(runtime, ...)``; each call is recorded in a durable ledger before the
tool body runs, a second call for the same request never runs the body again, and the model gets
an observation that says in plain words what happened and whether it may call again.
"""

from __future__ import annotations

from typing import Any

from agentguard.runtime.context import CallContext, RunContext, current_call, current_run
from agentguard.runtime.core import (
    Found,
    Idempotency,
    NotFound,
    RecoveryReport,
    Replay,
    Risk,
    Runtime,
    SimulatedCrash,
    Unknown,
    approve_call,
    guarded,
    resolve_call,
)
from agentguard.runtime.errors import ErrorCode, Failure, Sent, ToolError, classify_exception
from agentguard.runtime.ledger import (
    AsyncLedger,
    IllegalTransition,
    Ledger,
    LedgerClosed,
    LedgerEntry,
    LedgerEvent,
    MemoryLedger,
    SQLiteLedger,
    Status,
    open_ledger,
)
from agentguard.runtime.observation_type import Observation
from agentguard.runtime.retry import RetryPolicy


def __getattr__(name: str) -> Any:
    if name == "PostgresLedger":
        from agentguard.runtime.ledger.postgres import PostgresLedger

        return PostgresLedger
    raise AttributeError(name)


__all__ = [
    "AsyncLedger",
    "CallContext",
    "ErrorCode",
    "Failure",
    "Found",
    "Idempotency",
    "IllegalTransition",
    "Ledger",
    "LedgerClosed",
    "LedgerEntry",
    "LedgerEvent",
    "MemoryLedger",
    "NotFound",
    "Observation",
    "PostgresLedger",
    "RecoveryReport",
    "Replay",
    "RetryPolicy",
    "Risk",
    "RunContext",
    "Runtime",
    "SQLiteLedger",
    "Sent",
    "SimulatedCrash",
    "Status",
    "ToolError",
    "Unknown",
    "approve_call",
    "classify_exception",
    "current_call",
    "current_run",
    "guarded",
    "open_ledger",
    "resolve_call",
]
