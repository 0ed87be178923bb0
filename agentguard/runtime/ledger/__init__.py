"""Ledger backends and the URL that selects one."""

from __future__ import annotations

from typing import Any

from agentguard.runtime.ledger.base import (
    IllegalTransition,
    Ledger,
    LedgerConfigurationError,
    LedgerEntry,
    LedgerEvent,
    Status,
)
from agentguard.runtime.ledger.memory import MemoryLedger
from agentguard.runtime.ledger.sqlite import SQLiteLedger


def __getattr__(name: str) -> Any:
    # psycopg is an optional dependency: import it only when PostgresLedger is asked for.
    if name == "PostgresLedger":
        from agentguard.runtime.ledger.postgres import PostgresLedger

        return PostgresLedger
    raise AttributeError(name)


def open_ledger(url: str) -> Ledger:
    """``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``postgresql://...``, ``memory://``."""
    if url.startswith("sqlite:///"):
        return SQLiteLedger(url[len("sqlite:///") :])
    if url.startswith(("postgresql://", "postgres://")):
        from agentguard.runtime.ledger.postgres import PostgresLedger

        return PostgresLedger(url)
    if url == "memory://":
        return MemoryLedger()
    raise ValueError(f"unsupported ledger URL {url!r}: use sqlite:///PATH or postgresql://...")


__all__ = [
    "IllegalTransition",
    "Ledger",
    "LedgerConfigurationError",
    "LedgerEntry",
    "LedgerEvent",
    "MemoryLedger",
    "PostgresLedger",
    "SQLiteLedger",
    "Status",
    "open_ledger",
]
