"""Ledger backends and the URL that selects one."""

from __future__ import annotations

import urllib.parse
from typing import Any

from agentguard.runtime.ledger.base import (
    AsyncLedger,
    IllegalTransition,
    Ledger,
    LedgerClosed,
    LedgerConfigurationError,
    LedgerEntry,
    LedgerEvent,
    LedgerMissing,
    LedgerUnanswered,
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


def open_ledger(url: str, *, read_only: bool = False, **options: Any) -> Ledger:
    """``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``postgresql://...``, ``memory://``.

    A PostgreSQL URL may name the ledger's schema with ``?schema=NAME`` (default ``agentguard``).
    ``read_only``: the ledger must exist; nothing is created, migrated or written
    (``LedgerMissing`` otherwise). ``options`` go to the backend (``busy_timeout_s`` for
    SQLite; ``lock_timeout_s``, ``statement_timeout_s``... for PostgreSQL).
    """
    if url.startswith("sqlite:///"):
        return SQLiteLedger(url[len("sqlite:///") :], read_only=read_only, **options)
    if url.startswith(("postgresql://", "postgres://")):
        from agentguard.runtime.ledger.postgres import PostgresLedger

        dsn, schema = _split_schema(url)
        if schema:
            options["schema"] = schema
        return PostgresLedger(dsn, read_only=read_only, **options)
    if url == "memory://":
        if options:
            raise TypeError(f"the memory ledger takes no options ({', '.join(options)})")
        return MemoryLedger()
    raise ValueError(f"unsupported ledger URL {url!r}: use sqlite:///PATH or postgresql://...")


def _split_schema(url: str) -> tuple[str, str | None]:
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    schema = next((value for name, value in query if name == "schema"), None)
    rest = urllib.parse.urlencode([(name, value) for name, value in query if name != "schema"])
    return urllib.parse.urlunsplit(parts._replace(query=rest)), schema


__all__ = [
    "AsyncLedger",
    "IllegalTransition",
    "Ledger",
    "LedgerClosed",
    "LedgerConfigurationError",
    "LedgerEntry",
    "LedgerEvent",
    "LedgerMissing",
    "LedgerUnanswered",
    "MemoryLedger",
    "PostgresLedger",
    "SQLiteLedger",
    "Status",
    "open_ledger",
]
