"""What the model reads after a guarded call: plain words plus structured fields."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from agentguard.runtime.errors import TRANSIENT_CODES, ErrorCode
from agentguard.runtime.hashing import UNENCODABLE
from agentguard.runtime.ledger.base import LedgerEntry, Status

SCHEMA = "agentguard.observation/v1"


def observation_schema() -> dict[str, Any]:
    """The JSON Schema of observations (``agentguard/data/observation.schema.json``)."""
    text = resources.files("agentguard").joinpath("data/observation.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _observation(
    tool_name: str,
    entry: LedgerEntry | None,
    code: ErrorCode | None,
    content: str,
    *,
    result: Any = None,
    retryable: bool = False,
    replayed: bool = False,
    next_action: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Every observation: ``ok`` when there is no error code; a result only on success."""
    metadata: dict[str, Any] = {
        "schema": SCHEMA,
        "tool_name": tool_name,
        "call_id": entry.call_id if entry else None,
        "idempotency_key": entry.idempotency_key if entry else None,
        "retryable": retryable,
        "status": entry.status._value_ if entry else None,
        "replayed": replayed,
        "attempts": entry.attempts if entry else 0,
        "run_id": entry.run_id if entry else None,
        "input_hash": entry.input_hash if entry else None,
    }
    metadata["next_action"] = next_action or {"action": _next_action(code, retryable), "tool": None}
    metadata["sideEffects"] = list(entry.side_effects) if entry else []
    if code is None or code is ErrorCode.OUTPUT_TOO_LARGE:
        metadata["resultRef"] = entry.result_ref if entry else None
    metadata.update(extra)
    if entry is not None and entry.version == UNRECORDED:
        metadata["recorded"] = False
        content += (
            " The runtime could not record this outcome yet (its ledger is unavailable) and "
            f"keeps trying; do not call {tool_name} again for this request."
        )
    return {
        "ok": code is None,
        "code": code.value if code else None,
        "content": content,
        "result": result,
        "metadata": metadata,
    }


# What the model should do next, as data (the content says it in words).
_NEXT_BY_CODE = {
    ErrorCode.DUPLICATE_IN_PROGRESS: "wait",
    ErrorCode.IDEMPOTENCY_MISMATCH: "ask_user",
    ErrorCode.APPROVAL_REQUIRED: "get_approval",
    ErrorCode.INVALID_ARGUMENTS: "fix_arguments",
    ErrorCode.OUTPUT_TOO_LARGE: "none",
}


def _next_action(code: ErrorCode | None, retryable: bool) -> str:
    if code is None:
        return "none"
    if code in _NEXT_BY_CODE:
        return _NEXT_BY_CODE[code]
    return "retry_later" if retryable else "ask_user"


def succeeded(
    tool_name: str, entry: LedgerEntry, *, replayed: bool, reconciled_with: str | None = None
) -> dict[str, Any]:
    if replayed:
        content = (
            f"{tool_name} had already run for this request (call {entry.call_id}); this is its "
            f"recorded result and nothing was done again. Do not call {tool_name} again for "
            "this request."
        )
    elif reconciled_with:
        content = (
            f"{tool_name} did not answer in time, but a check with {reconciled_with} shows it "
            f"took effect; this is the result. Do not call {tool_name} again for this request."
        )
    else:
        content = f"{tool_name} succeeded."
        result = entry.result
        if entry.version != UNRECORDED and not (isinstance(result, dict) and UNENCODABLE in result):
            # the common observation, written out: what ``_observation`` builds for it
            return {
                "ok": True,
                "code": None,
                "content": content,
                "result": result,
                "metadata": {
                    "schema": SCHEMA,
                    "tool_name": tool_name,
                    "call_id": entry.call_id,
                    "idempotency_key": entry.idempotency_key,
                    "retryable": False,
                    "status": entry.status._value_,
                    "replayed": False,
                    "attempts": entry.attempts,
                    "run_id": entry.run_id,
                    "input_hash": entry.input_hash,
                    "next_action": {"action": "none", "tool": None},
                    "sideEffects": list(entry.side_effects),
                    "resultRef": entry.result_ref,
                    "reconciled": False,
                },
            }
    if isinstance(entry.result, dict) and UNENCODABLE in entry.result:
        content += (
            " Its result is not JSON, so only its text is shown and recorded. Do not call it "
            "again to get it."
        )
    return _observation(
        tool_name,
        entry,
        None,
        content,
        result=entry.result,
        replayed=replayed,
        reconciled=reconciled_with is not None,
    )


def too_large(observation: dict[str, Any], limit: int) -> dict[str, Any]:
    """A succeeded observation whose result exceeds ``limit`` bytes: a preview, the call stands."""
    result = observation["result"]
    if result is None or isinstance(result, (bool, int, float)):
        return observation
    if isinstance(result, str) and len(result) * 12 + 2 <= limit:  # 12: the longest escape
        return observation
    text = json.dumps(result, sort_keys=True)
    size = len(text.encode("utf-8"))
    if size <= limit:
        return observation
    tool_name = observation["metadata"]["tool_name"]
    preview = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    return {
        **observation,
        "code": ErrorCode.OUTPUT_TOO_LARGE.value,
        "content": (
            f"{tool_name} succeeded, but its result is too large to show ({size} bytes); `result` "
            f"holds the first {limit} bytes of its JSON. The full result is recorded in the "
            f"ledger (metadata.resultRef; `agentguard ledger show "
            f"{observation['metadata']['call_id']}`). Do not call {tool_name} again to get it."
        ),
        "result": preview,
        "metadata": {**observation["metadata"], "truncated": True, "result_bytes": size},
    }


def uncertain(
    tool_name: str,
    entry: LedgerEntry,
    *,
    lookup: str | None,
    checked: bool,
    still_running: bool = False,
    lookup_tool: str | None = None,
) -> dict[str, Any]:
    cause = (entry.error_detail or "").split(":", 1)[0] or "an interrupted call"
    what = {
        "TIMEOUT": "timed out after its request may have reached the service",
        "TRANSIENT_NETWORK": "lost its connection after its request may have reached the service",
        "SERVER_ERROR": "got a server error after its request may have reached the service",
        "TOOL_CRASH": "failed unexpectedly after it may already have acted",
    }.get(cause, "was interrupted after it may already have acted")
    if still_running:
        next_step = (
            f"Its attempt may still be running and reach the service, so no check can settle it "
            f"yet; its outcome is recorded when it finishes. Tell the user it is in progress "
            f"(call {entry.call_id})."
        )
    elif lookup and checked:
        next_step = (
            f"A check with {lookup} could not tell yet. Tell the user the outcome is being "
            f"verified (call {entry.call_id})."
        )
    elif lookup:
        next_step = f"The runtime will verify it with {lookup}. Tell the user it is being verified."
    else:
        next_step = (
            f"A person has to check it: tell the user it is not known yet whether this happened "
            f"(call {entry.call_id}, resolve with `agentguard ledger resolve`)."
        )
    content = (
        f"{tool_name} {what}, so it may or may not have taken effect. Do not call {tool_name} "
        f"again for this request: that could do it twice. {next_step}"
    )
    return _observation(
        tool_name,
        entry,
        ErrorCode.SIDE_EFFECT_UNCERTAIN,
        content,
        cause=cause,
        lookup=lookup,
        still_running=still_running,
        next_action={
            # a lookup the model can call itself is named; otherwise the runtime or a person
            "action": "wait"
            if still_running or (lookup and not lookup_tool)
            else "call_lookup"
            if lookup_tool
            else "ask_user",
            "tool": None if still_running else lookup_tool,
        },
    )


def duplicate_in_progress(tool_name: str, entry: LedgerEntry) -> dict[str, Any]:
    content = (
        f"{tool_name} is already running for this request (call {entry.call_id}). Do not call "
        "it again; wait for that call's result or tell the user it is in progress."
    )
    return _observation(tool_name, entry, ErrorCode.DUPLICATE_IN_PROGRESS, content)


def mismatch(tool_name: str, entry: LedgerEntry) -> dict[str, Any]:
    content = (
        f"{tool_name} already ran for this request with different arguments (call "
        f"{entry.call_id}, status {entry.status.value}). This looks like a different request: "
        f"do not retry it; ask the user to confirm whether they want a new one."
    )
    return _observation(tool_name, entry, ErrorCode.IDEMPOTENCY_MISMATCH, content)


def approval_required(
    tool_name: str, entry: LedgerEntry, *, after_check: str | None = None
) -> dict[str, Any]:
    if after_check:
        content = (
            f"{tool_name} did not take effect (checked with {after_check}). Running it again "
            "needs a person's approval, which was not given. Tell the user what needs approval."
        )
    else:
        content = (
            f"{tool_name} needs a person's approval before it runs, and has not run. Tell the "
            "user what needs approval; do not call it again until they approve."
        )
    return _observation(tool_name, entry, ErrorCode.APPROVAL_REQUIRED, content)


_FAILURE_WORDS = {
    ErrorCode.INVALID_ARGUMENTS: "rejected the arguments",
    ErrorCode.NOT_FOUND: "did not find what it was asked for",
    ErrorCode.PERMISSION_DENIED: "was not permitted",
    ErrorCode.TIMEOUT: "timed out",
    ErrorCode.TOOL_CRASH: "failed with an internal error",
    ErrorCode.RATE_LIMIT: "was rate limited by the service",
    ErrorCode.TRANSIENT_NETWORK: "could not reach the service",
    ErrorCode.SERVER_ERROR: "got a server error",
    ErrorCode.OUTPUT_TOO_LARGE: "produced too large an output",
    ErrorCode.APPROVAL_REQUIRED: "was not approved",
}

_NEXT_STEP = {
    ErrorCode.INVALID_ARGUMENTS: "Fix the arguments and call it again.",
    ErrorCode.NOT_FOUND: "Check the identifiers (look them up first) before calling again.",
    ErrorCode.PERMISSION_DENIED: "Do not call it again; tell the user.",
    ErrorCode.TOOL_CRASH: "Calling it again is unlikely to help; tell the user.",
    ErrorCode.APPROVAL_REQUIRED: "Tell the user what needs approval.",
}


def failed(
    tool_name: str,
    entry: LedgerEntry,
    *,
    code: ErrorCode,
    detail: str | None,
    checked_with: str | None = None,
) -> dict[str, Any]:
    retryable = code in TRANSIENT_CODES
    words = _FAILURE_WORDS.get(code, "failed")
    reason = f" ({detail})" if detail and detail != code.value else ""
    if checked_with:
        happened = f"A check with {checked_with} shows it did not take effect."
    else:
        happened = "Nothing was done."
    if retryable:
        next_step = f"It is safe to call {tool_name} again later if the user still wants it."
    else:
        next_step = _NEXT_STEP.get(code, "Tell the user.")
    return _observation(
        tool_name,
        entry,
        code,
        f"{tool_name} {words}{reason}. {happened} {next_step}",
        retryable=retryable,
        reconciled=checked_with is not None,
    )


def invalid_call(tool_name: str, message: str) -> dict[str, Any]:
    return _observation(
        tool_name,
        None,
        ErrorCode.INVALID_ARGUMENTS,
        f"{tool_name} was called with invalid arguments ({message}). Nothing was done. "
        "Fix the arguments and call it again.",
    )


def key_failed(tool_name: str, message: str) -> dict[str, Any]:
    return _observation(
        tool_name,
        None,
        ErrorCode.TOOL_CRASH,
        f"{tool_name} could not be run: its idempotency key could not be built ({message}). "
        "Nothing was done. Calling it again will not help; tell the user.",
    )


# The version of an entry whose outcome is waiting in the outbox: not in the ledger yet.
UNRECORDED = -1


def ledger_unavailable(tool_name: str, message: str) -> dict[str, Any]:
    """The claim could not be written: nothing ran, so the call may simply be made again."""
    return _observation(
        tool_name,
        None,
        ErrorCode.SERVER_ERROR,
        f"{tool_name} was not run: the runtime could not write its ledger ({message}). Nothing "
        f"was done. It is safe to call {tool_name} again in a moment.",
        retryable=True,
    )


def ledger_failed(tool_name: str, message: str) -> dict[str, Any]:
    """A ledger write failed midway: say what is not known."""
    return _observation(
        tool_name,
        None,
        ErrorCode.SERVER_ERROR,
        f"The runtime's ledger failed while handling {tool_name} ({message}), so it is not known "
        f"whether {tool_name} took effect. Do not call it again for this request; tell the user "
        "it needs checking.",
    )


def from_entry(tool_name: str, entry: LedgerEntry, *, lookup: str | None) -> dict[str, Any]:
    """The observation for a call whose outcome is already recorded (a duplicate)."""
    if entry.status is Status.SUCCEEDED:
        return succeeded(tool_name, entry, replayed=True)
    if entry.status is Status.STARTED:
        return duplicate_in_progress(tool_name, entry)
    if entry.status is Status.UNCERTAIN:
        return uncertain(tool_name, entry, lookup=lookup, checked=lookup is not None)
    if entry.status is Status.FAILED:
        code = ErrorCode(entry.error_code) if entry.error_code else ErrorCode.TOOL_CRASH
        return failed(tool_name, entry, code=code, detail=entry.error_detail)
    return approval_required(tool_name, entry)
