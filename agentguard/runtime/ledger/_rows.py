"""Row <-> entry conversion and statement text shared by the SQL backends."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from json.encoder import encode_basestring_ascii
from operator import itemgetter
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
    "tenant",
    "extra_json",
    "approved_by",
    "approved_on",
    "side_effects_json",
)

# Written on insert, appended to by every transition; read only by ``events()``.
HISTORY_COLUMN = "history"
INSERT_COLUMNS = (*CALL_COLUMNS, HISTORY_COLUMN)

EVENT_COLUMNS = ("call_id", "at", "from_status", "to_status", "actor", "detail")

STATUS_CHECK = "status IN ('planned','approved','started','succeeded','failed','uncertain')"

# Entry attribute -> column, where they differ.
_FIELD_COLUMNS = {"args": "args_json", "result": "result_json", "extra": "extra_json"}


def column_for(field_name: str) -> str:
    return _FIELD_COLUMNS.get(field_name, field_name)


def encode_field(field_name: str, value: Any) -> Any:
    if field_name in ("args", "extra"):
        return dumps(value)
    if field_name == "result":
        return None if value is None else dumps(value)
    if isinstance(value, Status):
        return value._value_
    return value


# The entry field each of CALL_COLUMNS holds, read from an entry's fields in one call.
_ROW_FIELDS = itemgetter(
    *(
        {
            "args_json": "args",
            "result_json": "result",
            "extra_json": "extra",
            "side_effects_json": "side_effects",
        }.get(column, column)
        for column in CALL_COLUMNS
    )
)
_ARGS_AT = CALL_COLUMNS.index("args_json")
_STATUS_AT = CALL_COLUMNS.index("status")
_RESULT_AT = CALL_COLUMNS.index("result_json")
_EXTRA_AT = CALL_COLUMNS.index("extra_json")
_SIDE_EFFECTS_AT = CALL_COLUMNS.index("side_effects_json")


def fields_to_row(fields: dict[str, Any], history: str) -> list[Any]:
    """Values for INSERT_COLUMNS of the entry whose fields (its ``__dict__``) are ``fields``,
    read in one call (``itemgetter``) rather than an attribute at a time."""
    row = [*_ROW_FIELDS(fields), history]
    row[_ARGS_AT] = dumps(row[_ARGS_AT])
    row[_STATUS_AT] = row[_STATUS_AT]._value_
    if row[_RESULT_AT] is not None:
        row[_RESULT_AT] = dumps(row[_RESULT_AT])
    row[_EXTRA_AT] = dumps(row[_EXTRA_AT])
    row[_SIDE_EFFECTS_AT] = _side_effects_json(row[_SIDE_EFFECTS_AT])
    return row


_SIDE_EFFECTS_JSON: dict[tuple[str, ...], str] = {}


def _side_effects_json(side_effects: list[str]) -> str:
    """``dumps(side_effects)``: a tool's declared effects, the same few lists, written once."""
    key = tuple(side_effects)
    try:
        text = _SIDE_EFFECTS_JSON.get(key)  # only lists of strings are kept
    except TypeError:  # an item that is no key (a list read from elsewhere)
        return dumps(side_effects)
    if text is None:
        text = dumps(side_effects)
        if len(_SIDE_EFFECTS_JSON) < 256 and all(type(item) is str for item in key):
            _SIDE_EFFECTS_JSON[key] = text
    return text


def row_to_entry(row: Sequence[Any]) -> LedgerEntry:
    data = dict(zip(CALL_COLUMNS, row, strict=True))
    args_json = data.pop("args_json")
    result_json = data.pop("result_json")
    extra_json = data.pop("extra_json")
    side_effects_json = data.pop("side_effects_json")
    data["side_effects"] = json.loads(side_effects_json) if side_effects_json else []
    data["extra"] = json.loads(extra_json) if extra_json else {}
    data["status"] = Status(data["status"])
    data["args"] = json.loads(args_json) if args_json else {}
    data["result"] = json.loads(result_json) if result_json is not None else None
    return LedgerEntry(**data)


def encode_history(
    start: Status | None,
    path: Sequence[Status],
    actor: str,
    detail: str | None,
    now: float,
) -> str:
    """The events of one transition as JSON lines, appended to the row in the same statement.

    Keeping the history in the row (instead of a table of its own) means a transition dirties
    one page and no index, which is most of what a guarded call costs beyond its two commits.
    """
    # Each line after its moment, joined by the moment's text: a call's transitions name no
    # detail and recur, so their lines are written once.
    key = (start, tuple(path), actor) if detail is None else None
    rests = _HISTORY_RESTS.get(key) if key is not None else None
    if rests is None:
        rests = history_rests(start, path, actor, detail)
        if key is not None and len(_HISTORY_RESTS) < 256:  # bounded: actors are few
            _HISTORY_RESTS[key] = rests
    return history_text(rests, now)


_HISTORY_RESTS: dict[Any, list[str]] = {}


def history_rests(
    start: Status | None, path: Sequence[Status], actor: str, detail: str | None
) -> list[str]:
    """``encode_history``'s lines without their moments: ``history_text`` joins them by it."""
    tail = f",{encode_basestring_ascii(actor)},{_json_or_null(detail)}]\n"
    rests = [""]
    previous = "null" if start is None else f'"{start._value_}"'
    for status in path:
        current = f'"{status._value_}"'
        rests.append(f"{previous},{current}{tail}")
        previous = current
    return rests


def history_text(rests: list[str], now: float) -> str:
    """The history lines of ``rests`` (``history_rests``) at the moment ``now``."""
    # Written directly: the same text as ``dumps([now, from, to, actor, detail])`` per event.
    moment = float.__repr__(now) if type(now) is float and math.isfinite(now) else dumps(now)
    return f"[{moment},".join(rests)


def _json_or_null(value: str | None) -> str:
    return "null" if value is None else encode_basestring_ascii(value)


def decode_history(call_id: str, history: str | None) -> list[LedgerEvent]:
    events = []
    for line in (history or "").splitlines():
        at, from_status, to_status, actor, detail = json.loads(line)
        events.append(LedgerEvent(call_id, at, from_status, to_status, actor, detail))
    return events


def update_text(
    table: str, columns: Sequence[str], placeholder: str, *, lease_guard: bool = False
) -> str:
    """A compare-and-set UPDATE of ``columns`` that also appends to the history.

    Parameters: the column values, the history lines, then call_id, version and status, then
    (with ``lease_guard``) the moment the stored lease must have expired by.
    """
    assignments = ", ".join(f"{column} = {placeholder}" for column in columns)
    guard = f" AND lease_expires_at < {placeholder}" if lease_guard else ""
    return (
        f"UPDATE {table} SET {assignments}, "
        f"{HISTORY_COLUMN} = {HISTORY_COLUMN} || {placeholder} "
        f"WHERE call_id = {placeholder} AND version = {placeholder} AND status = {placeholder}"
        f"{guard}"
    )
