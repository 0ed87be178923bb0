"""Row <-> entry conversion shared by the SQL backends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentguard.runtime.ledger.base import LedgerEntry, LedgerEvent, Status, dumps

CALL_COLUMNS = (
    "call_id",
    "run_id",
    "step_id",
    "tool_name",
    "user_id",
    "approved_at",
    "idempotency_key",
    "input_hash",
    "args_json",
    "status",
    "risk",
    "idempotency",
    "replay",
    "attempts",
    "error_code",
    "error_detail",
    "started_at",
    "finished_at",
    "result_json",
    "result_ref",
    "lease_owner",
    "lease_expires_at",
    "created_at",
    "updated_at",
    "version",
)

EVENT_COLUMNS = ("call_id", "at", "from_status", "to_status", "actor", "detail")

STATUS_CHECK = "status IN ('planned','approved','started','succeeded','failed','uncertain')"

# Entry attribute -> column, where they differ.
_FIELD_COLUMNS = {"args": "args_json", "result": "result_json"}


def column_for(field_name: str) -> str:
    return _FIELD_COLUMNS.get(field_name, field_name)


def encode_field(field_name: str, value: Any) -> Any:
    if field_name == "args":
        return dumps(value)
    if field_name == "result":
        return None if value is None else dumps(value)
    if isinstance(value, Status):
        return value.value
    return value


def entry_to_row(entry: LedgerEntry) -> tuple[Any, ...]:
    values = {
        "args_json": dumps(entry.args),
        "result_json": None if entry.result is None else dumps(entry.result),
        "status": entry.status.value,
    }
    return tuple(
        values[column] if column in values else getattr(entry, column) for column in CALL_COLUMNS
    )


def row_to_entry(row: Sequence[Any]) -> LedgerEntry:
    data = dict(zip(CALL_COLUMNS, row, strict=True))
    args_json = data.pop("args_json")
    result_json = data.pop("result_json")
    data["status"] = Status(data["status"])
    data["args"] = json.loads(args_json) if args_json else {}
    data["result"] = json.loads(result_json) if result_json is not None else None
    return LedgerEntry(**data)


def row_to_event(row: Sequence[Any]) -> LedgerEvent:
    return LedgerEvent(**dict(zip(EVENT_COLUMNS, row, strict=True)))
