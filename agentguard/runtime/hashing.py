"""Canonical JSON, input hashes, redaction and JSON-safe results."""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import importlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from json.encoder import encode_basestring
from pathlib import PurePath
from types import FunctionType, MethodType, ModuleType
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
_PLAIN_SCALARS = frozenset({str, int, float, bool})


class NoCanonicalForm(TypeError):
    """An argument that has no stable encoding across processes (it would hash differently)."""


def _canonical_default(value: Any) -> Any:
    """The defined JSON form of the non-JSON types an argument may hold; anything else raises.

    The form must not depend on the process: no ``repr()`` (it holds memory addresses), no set
    iteration order (it follows the per-process string hash seed).
    """
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and not isinstance(value, type):  # pydantic v2 models
        return model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {item.name: getattr(value, item.name) for item in dataclasses.fields(value)}
    attributes = getattr(type(value), "__attrs_attrs__", None)
    if attributes is not None:  # attrs classes
        return {item.name: getattr(value, item.name) for item in attributes}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (Decimal, UUID, PurePath)):
        return str(value)
    if isinstance(value, (set, frozenset)):
        # sorted by each element's own canonical text: defined for elements of any types
        return sorted(value, key=_canonical_text)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    state = _plain_state(value)
    if state:
        return state  # its attributes, which must have a canonical form in turn
    raise NoCanonicalForm(
        f"a {type(value).__module__}.{type(value).__qualname__} has no canonical form"
        + (" (an object without state is known only by its address)" if state == {} else "")
    )


_NOT_VALUES = (type, FunctionType, MethodType, ModuleType, BaseException)


def _plain_state(value: Any) -> dict[str, Any] | None:
    """The attributes of an instance of a Python class (``__dict__`` and ``__slots__``), its
    value by the same rule as a dataclass's fields; None for what is no plain value (a type, a
    function, a module, an exception, an instance of a class written in C)."""
    kind = type(value)
    if kind.__module__ == "builtins" or isinstance(value, _NOT_VALUES):
        return None
    state: dict[str, Any] = {}
    for klass in kind.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                state[name] = getattr(value, name)
    own = getattr(value, "__dict__", None)
    if own is not None:
        state.update(own)
    elif not state and not hasattr(kind, "__slots__"):
        return None  # a C type's instance: its state is not visible
    return state


def compact_encoder(
    default: Callable[[Any], Any],
    encode_string: Callable[[str], str],
    fallback: Callable[[Any], str],
) -> Callable[[Any], str]:
    """JSON with sorted keys and no spaces, by the json module's C encoder built once.

    ``json.dumps`` with options builds an encoder on every call, and ``JSONEncoder.encode``
    its C encoder. This one keeps no table of the containers being encoded (it would be shared
    between threads): a circular value ends in RecursionError, and ``fallback`` (the same
    encoding by the json module) then says what it is. Without the C accelerator, ``fallback``.
    """
    try:
        from _json import make_encoder
    except ImportError:  # pragma: no cover - an interpreter without the C accelerator
        return fallback
    encoder = make_encoder(None, default, encode_string, None, ":", ",", True, False, True)

    def encode(value: Any) -> str:
        try:
            return "".join(encoder(value, 0))
        except RecursionError:
            return fallback(value)

    return encode


_CANONICAL_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_canonical_default
)
_encode = compact_encoder(_canonical_default, encode_basestring, _CANONICAL_ENCODER.encode)


def _canonical_text(value: Any) -> str:
    try:
        return _encode(value)
    except TypeError as exc:
        if isinstance(exc, NoCanonicalForm) or not _has_mixed_keys(value):
            raise
        # keys of mixed types cannot be sorted as they are: sort them as their JSON strings
        return _canonical_text(_string_keys(value))


def _has_mixed_keys(value: Any) -> bool:
    if isinstance(value, Mapping):
        kinds = {type(key) for key in value}
        return len(kinds) > 1 or any(_has_mixed_keys(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_mixed_keys(item) for item in value)
    return False


def _string_keys(value: Any) -> Any:
    if isinstance(value, Mapping):
        converted: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, _JSON_SCALARS):
                raise NoCanonicalForm(f"a dict key of type {type(key).__qualname__}")
            name = key if isinstance(key, str) else json.dumps(key)
            if name in converted:
                raise NoCanonicalForm(f"dict keys {name!r} of two types collide as JSON")
            converted[name] = _string_keys(item)
        return converted
    if isinstance(value, (list, tuple)):
        return [_string_keys(item) for item in value]
    return value


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``: the same in every process and on every machine.

    Raises ``NoCanonicalForm`` for a value that has none (an object without a defined
    encoding, a string that is not valid Unicode).
    """
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if value is None or kind is bool:
        return "null" if value is None else "true" if value else "false"
    try:
        text = _canonical_text(value)
    except (ValueError, RecursionError):
        raise NoCanonicalForm("a value that contains itself (a circular structure)") from None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise NoCanonicalForm("a string holds a lone surrogate (not valid Unicode)") from None
    return text


def describe_offender(value: Any, path: str = "") -> str:
    """Where in ``value`` the part without a canonical form is, for the error message."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = describe_offender(item, f"{path}[{key!r}]" if path else str(key))
            if found:
                return found
        return ""
    if isinstance(value, (list, tuple, set, frozenset)):
        for index, item in enumerate(value):
            found = describe_offender(item, f"{path}[{index}]")
            if found:
                return found
        return ""
    try:
        canonical_json(value)
    except NoCanonicalForm as exc:
        state = None if dataclasses.is_dataclass(value) else _plain_state(value)
        for name, item in (state or {}).items():  # which attribute of the object has no value
            found = describe_offender(item, f"{path}.{name}" if path else name)
            if found:
                return found
        return f"{path or 'the value'}: {exc}"
    return ""


NO_CANONICAL_FORM = "$no_canonical_form"


def with_stand_ins(value: Any) -> Any:
    """``value`` with each part that has no canonical form replaced by a marker naming its
    type: what is hashed and stored of the arguments of a tool whose own ``key=`` says which
    request a call is."""
    if isinstance(value, Mapping):
        return {key: with_stand_ins(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [with_stand_ins(item) for item in value]
    try:
        canonical_json(value)
    except NoCanonicalForm:
        return {NO_CANONICAL_FORM: f"{type(value).__module__}.{type(value).__qualname__}"}
    return value


def to_jsonable(value: Any) -> Any:
    """A JSON-compatible copy of ``value`` (pydantic models, dataclasses, enums, dates...)."""
    if type(value) in _JSON_SCALARS:
        return value
    return json.loads(canonical_json(value))


def _lenient_default(value: Any) -> Any:
    try:
        return _canonical_default(value)
    except NoCanonicalForm:
        return repr(value)


def jsonable_result(value: Any) -> tuple[Any, str]:
    """A tool's result as stored (JSON-compatible) and its ``result_ref``, encoding it once."""
    try:
        text = canonical_json(value)
    except NoCanonicalForm:
        try:  # a string that is not valid Unicode is kept escaped, an object as its repr
            text = json.dumps(
                value, sort_keys=True, separators=(",", ":"), default=_lenient_default
            )
        except (TypeError, ValueError, RecursionError) as exc:
            text = _unencodable(value, exc)
    except (ValueError, RecursionError) as exc:  # a circular structure
        text = _unencodable(value, exc)
    result = value if type(value) in _JSON_SCALARS else json.loads(text)
    data = text.encode("utf-8")
    return result, "sha256:" + (_sha256 if len(data) < _SHORT else _openssl_sha256)(
        data
    ).hexdigest()


UNENCODABLE = "unencodable_result"


def _unencodable(value: Any, error: BaseException) -> str:
    """What is recorded of a result JSON cannot hold: its type, the reason and its text."""
    try:
        text = repr(value)[:2000]
    except Exception:
        text = f"<{type(value).__qualname__}>"
    record = {UNENCODABLE: type(value).__qualname__, "reason": str(error), "text": text}
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def sha256_hex(text: str) -> str:
    data = text.encode("utf-8")
    return (_sha256 if len(data) < _SHORT else _openssl_sha256)(data).hexdigest()


# CPython's own SHA-256 (the same digest) for short texts: a call hashes three, and OpenSSL's
# constructor (an algorithm fetch and a context per hash) runs several times the code, which a
# call right after a commit's wait finds out of the CPU's caches; OpenSSL's hashes long texts
# faster. hashlib's alone where Python has none of its own.
def _builtin_sha256() -> Callable[[bytes], Any]:
    for module in ("_sha256", "_sha2"):  # Python 3.11; 3.12 on
        try:
            constructor: Callable[[bytes], Any] = importlib.import_module(module).sha256
        except (ImportError, AttributeError):
            continue
        if constructor(b"abc").hexdigest() == hashlib.sha256(b"abc").hexdigest():
            return constructor
    return hashlib.sha256  # pragma: no cover - a Python without its own


_sha256 = _builtin_sha256()
_openssl_sha256 = hashlib.sha256
_SHORT = 4096


def input_hash(args: Mapping[str, Any]) -> str:
    value = args if type(args) is dict else dict(args)
    try:
        # canonical_json's own path for the common case: text the C encoder writes in ASCII
        text = _encode(value)
    except Exception:
        text = ""
    if not text or not text.isascii():  # canonical_json says why there is no text, or checks it
        text = canonical_json(value)
    data = text.encode("utf-8")
    return "sha256:" + (_sha256 if len(data) < _SHORT else _openssl_sha256)(data).hexdigest()


def derived_key(material: Mapping[str, Any]) -> str:
    """A short key safe for HTTP headers and every API's key field: ``agk1_`` + 160 bits in hex."""
    return "agk1_" + sha256_hex(canonical_json(dict(material)))[:40]


# The fields of the last default key written and their text around the input hash: a run's
# calls share them. One tuple, replaced whole, so threads read a consistent one.
_last_key_texts: tuple[Any, ...] = (None, None, None, None, None, "", "")


def default_key(
    tool: str,
    tenant: str | None,
    user: str | None,
    run: str,
    approved_at: str | None,
    input_hash: str,
) -> str:
    """``derived_key`` of a call's default key material, its canonical JSON written directly.

    The text is exactly ``canonical_json`` of the material (sorted keys, no spaces, strings as
    the canonical encoder writes them), so keys stay what they were; a field that is not a
    string, or text outside ASCII, goes through ``derived_key``.
    """
    global _last_key_texts
    quote = encode_basestring
    last_tool, last_tenant, last_user, last_run, last_approved_at, head, tail = _last_key_texts
    try:
        if not (
            last_run is run
            and last_tool is tool
            and last_user is user
            and last_tenant is tenant
            and last_approved_at is approved_at
        ):  # else the same run's fields as the call before (the very objects): their text too
            head = (
                f'{{"approved_at":{"null" if approved_at is None else quote(approved_at)},"input":'
            )
            tail = (
                f',"run":{quote(run)},"tenant":{"null" if tenant is None else quote(tenant)},'
                f'"tool":{quote(tool)},"user":{"null" if user is None else quote(user)},"v":1}}'
            )
            _last_key_texts = (tool, tenant, user, run, approved_at, head, tail)
        text = f"{head}{quote(input_hash)}{tail}"
    except TypeError:  # a field that is not a string
        text = ""
    if not text or not text.isascii():
        material: dict[str, Any] = {
            "v": 1,
            "tool": tool,
            "tenant": tenant,
            "user": user,
            "run": run,
            "approved_at": approved_at,
            "input": input_hash,
        }
        return derived_key(material)
    return "agk1_" + _sha256(text.encode("utf-8")).hexdigest()[:40]


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


_PLAIN_VALUES = frozenset({str, int, float, bool, type(None)})


@functools.lru_cache(maxsize=1024)
def _names_not_secret(names: tuple[Any, ...], extra_fields: frozenset[str]) -> bool:
    """Whether each of ``names`` is a string that names no secret: a tool's argument names
    recur from call to call, so each set of them is judged once."""
    return all(type(name) is str and not is_secret_name(name, extra_fields) for name in names)


def redact(value: Any, extra_fields: frozenset[str] = frozenset()) -> Any:
    """A copy of ``value`` with secret-named fields (at any depth) replaced by a marker."""
    if (
        type(value) is dict
        and _PLAIN_VALUES.issuperset(map(type, value.values()))
        and _names_not_secret(tuple(value), extra_fields)
    ):
        return dict(value)  # plain values under names that are no secret's: nothing to hide
    if type(value) is dict or isinstance(value, Mapping):
        copy: dict[str, Any] = {}
        for key, item in value.items():
            name = key if type(key) is str else str(key)
            if is_secret_name(name, extra_fields):
                copy[name] = REDACTED
            elif item is None or type(item) in _PLAIN_SCALARS:
                copy[name] = item  # the common case, without a call per argument
            else:
                copy[name] = redact(item, extra_fields)
        return copy
    if isinstance(value, (list, tuple)):
        return [redact(item, extra_fields) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    plain = to_jsonable(value)
    # a model, a dataclass or an object holds named fields too: a secret among them is hidden
    return redact(plain, extra_fields) if isinstance(plain, (dict, list)) else plain
