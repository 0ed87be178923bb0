"""The words of a name or a text, as the catalogue's word lists are matched against them."""

from __future__ import annotations

import re
from functools import lru_cache

# Where a word starts inside a name: a capital after a small letter or a digit.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


def words(text: str, *, identifier: bool = False) -> list[str]:
    """The lower-case words of ``text``, split where a capital follows a small letter or a
    digit and at every character that is no ASCII letter or digit: ``chat.postMessage``
    -> chat, post, message; ``count_tokens`` -> count, tokens.

    ``identifier``: split at underscores only, besides the capitals; any other character
    stays in its word (``créer_commande`` -> créer, commande), as in a name of the code."""
    return list(_split(text, identifier))


# The same few thousand names are split again for every call site that mentions them.
@lru_cache(maxsize=65536)
def _split(text: str, identifier: bool) -> tuple[str, ...]:
    lowered = _CAMEL.sub("_", text).lower()
    pieces = lowered.split("_") if identifier else _NOT_ALPHANUMERIC.split(lowered)
    return tuple(piece for piece in pieces if piece)
