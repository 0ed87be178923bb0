"""JSON text exactly as ``json.dumps(value, indent=2)`` writes it, with less work.

The standard library's encoder writes indented JSON in Python (its C encoder takes no
indent before Python 3.14), through a generator per nesting level, and ``json.dump`` hands
the stream every piece by itself; a SARIF report holds a great many small values. Here one
function appends every piece to one list, with strings escaped by the same C function the
standard encoder uses (``ensure_ascii``), numbers and constants written as it writes them,
and the pieces written to the stream a few thousand at a time (the whole text at once
would hold a large report twice in memory).
"""

from __future__ import annotations

import io
from json.encoder import encode_basestring_ascii
from typing import Any, TextIO

_INDENT = "  "
_INFINITY = float("inf")
_FLUSH_AT = 4096  # pieces


def write_indented(value: Any, stream: TextIO) -> None:
    """Write ``json.dumps(value, indent=2)`` to ``stream``, for the values reports hold
    (dicts with string, number, bool or None keys, lists, tuples, strings, numbers, bools
    and None)."""
    pieces: list[str] = []
    _write(value, pieces, "\n", stream)
    stream.write("".join(pieces))


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2)`` (``write_indented``)."""
    stream = io.StringIO()
    write_indented(value, stream)
    return stream.getvalue()


def _scalar(value: Any) -> str | None:
    """A scalar's text as ``json`` writes it, or None for a container or another object."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    return None


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return encode_basestring_ascii(key)
    if isinstance(key, float):
        text = _float(key)
    elif key is True:
        text = "true"
    elif key is False:
        text = "false"
    elif key is None:
        text = "null"
    elif isinstance(key, int):
        text = int.__repr__(key)
    else:
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
    return encode_basestring_ascii(text)


def _write(value: Any, pieces: list[str], newline: str, stream: TextIO) -> None:
    """Append ``value``'s text to ``pieces`` (written to ``stream`` when they are many);
    ``newline`` is a line break and the indent of its own line."""
    text = _scalar(value)
    if text is not None:
        pieces.append(text)
        return
    append = pieces.append
    if isinstance(value, (list, tuple)):
        if not value:
            append("[]")
            return
        inner = newline + _INDENT
        separator = "," + inner
        append("[")
        first = True
        for item in value:
            append(inner if first else separator)
            first = False
            _write_item(item, pieces, inner, stream)
        append(newline + "]")
        return
    if isinstance(value, dict):
        if not value:
            append("{}")
            return
        inner = newline + _INDENT
        separator = "," + inner
        append("{")
        first = True
        for key, item in value.items():
            append(inner if first else separator)
            first = False
            append(_key(key))
            append(": ")
            _write_item(item, pieces, inner, stream)
        append(newline + "}")
        return
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _write_item(item: Any, pieces: list[str], inner: str, stream: TextIO) -> None:
    """One element or value of a container: a scalar's text, else the container written
    at the next indent, its pieces sent to ``stream`` once they are many."""
    text = _scalar(item)
    if text is not None:
        pieces.append(text)
        return
    _write(item, pieces, inner, stream)
    if len(pieces) >= _FLUSH_AT:
        stream.write("".join(pieces))
        pieces.clear()
