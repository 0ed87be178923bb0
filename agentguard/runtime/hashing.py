"""Canonical JSON, input hashes, redaction and JSON-safe results."""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

REDACTED = "[REDACTED]"

# Substrings of argument names that hold secrets; matched case-insensitively after removing
# separators, so "apiKey", "api_key" and "X-Api-Key" all match.
SECRET_NAME_PARTS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "authorization",
    "credential",
    "cookie",
    "session",
    "cardnumber",
    "cvv",
    "cvc",
    "ssn",
)

# Whole names that are secrets but too short to match as substrings ("pin" is in "shipping").
SECRET_NAMES = frozenset({"pin", "otp", "auth", "key"})

_SEPARATORS = re.compile(r"[^a-z0-9]")


_JSON_SCALARS = (str, int, float, bool, type(None))


def to_jsonable(value: Any) -> Any:
    """A JSON-compatible copy of ``value`` (pydantic models, dataclasses, enums, dates...)."""
    if type(value) in _JSON_SCALARS:
        return value
    return json.loads(json.dumps(value, default=_json_default))


def jsonable_result(value: Any) -> tuple[Any, str]:
    """A tool's result as stored (JSON-compatible) and its ``result_ref``, encoding it once."""
    try:
        text = canonical_json(value)
    except TypeError:  # keys of mixed types cannot be sorted until they are strings
        text = canonical_json(to_jsonable(value))
    result = value if type(value) in _JSON_SCALARS else json.loads(text)
    return result, "sha256:" + sha256_hex(text)


def _json_default(value: Any) -> Any:
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (Decimal, UUID)):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return repr(value)


def canonical_json(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default
    )


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def input_hash(args: Mapping[str, Any]) -> str:
    return "sha256:" + sha256_hex(canonical_json(dict(args)))


def derived_key(material: Mapping[str, Any]) -> str:
    """A short key safe for HTTP headers and every API's key field: ``agk1_`` + 160 bits in hex."""
    return "agk1_" + sha256_hex(canonical_json(dict(material)))[:40]


def is_secret_name(name: str, extra: Iterable[str] = ()) -> bool:
    if name in extra:
        return True
    return _is_common_secret_name(name)


@functools.lru_cache(maxsize=4096)
def _is_common_secret_name(name: str) -> bool:
    # argument names repeat from call to call: decide each once
    compact = _SEPARATORS.sub("", name.lower())
    if compact in SECRET_NAMES:
        return True
    # "max_tokens" is a count, not a credential
    if compact.endswith("tokens"):
        return False
    return any(part in compact for part in SECRET_NAME_PARTS)


def redact(value: Any, extra_fields: frozenset[str] = frozenset()) -> Any:
    """A copy of ``value`` with secret-named fields (at any depth) replaced by a marker."""
    if isinstance(value, Mapping):
        return {
            str(key): REDACTED
            if is_secret_name(str(key), extra_fields)
            else redact(item, extra_fields)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact(item, extra_fields) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return to_jsonable(value)
