"""Qualified-name matching for the catalogues: a ``Matcher`` maps the names a catalogue
lists (exact or ``*`` globs) to its entries; a ``NameIndex`` holds a project's callees so a
catalogue finds the few names it may match through its own keys."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


def normalise(qualname: str) -> str:
    return qualname.replace("()", "")


class NameIndex:
    """Distinct dotted names (callees, many thousands) by their exact form, first part and
    last part, as a ``Matcher`` reads them: a catalogue finds the few names it may match
    through its own keys, without looking at every name."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(names)
        self.by_name: dict[str, list[str]] = {}
        self.by_head: dict[str, list[str]] = {}
        self.by_tail: dict[str, list[str]] = {}
        for written in self.names:
            name = written.replace("()", "") if "()" in written else written
            self.by_name.setdefault(name, []).append(written)
            self.by_head.setdefault(name.split(".", 1)[0], []).append(written)
            self.by_tail.setdefault(name.rsplit(".", 1)[-1], []).append(written)


class Matcher(Generic[T]):
    """Maps qualified names to entries: exact names first, then glob patterns in order."""

    def __init__(self) -> None:
        self._exact: dict[str, T] = {}
        self._globs: list[tuple[re.Pattern[str], T]] = []
        # Globs by the first or last dotted part every name they match must have
        # (``stripe.*.create`` by ``stripe``, ``*.put_item`` by ``put_item``): a name is
        # tried against the few globs that can match it, not against all of them.
        self._by_head: dict[str, list[int]] = {}
        self._by_tail: dict[str, list[int]] = {}
        self._unkeyed: list[int] = []
        self._memo: dict[str | None, T | None] = {}

    def add(self, patterns: Iterable[str], entry: T) -> None:
        for pattern in patterns:
            if any(ch in pattern for ch in "*?["):
                self._index_glob(pattern, len(self._globs))
                self._globs.append((re.compile(fnmatch.translate(pattern)), entry))
            else:
                self._exact.setdefault(pattern, entry)
        self._memo.clear()

    def __bool__(self) -> bool:
        """Whether any name can match (the user's sinks are often none)."""
        return bool(self._exact or self._globs)

    def entries(self) -> list[T]:
        """Every entry, once each, in the order added to names and then to globs."""
        found: list[T] = []
        for entry in [*self._exact.values(), *(entry for _, entry in self._globs)]:
            if entry not in found:
                found.append(entry)
        return found

    def among(self, index: NameIndex) -> frozenset[str]:
        """The names in ``index`` that match: for a walk over every call site, which then
        tests membership in a set instead of asking the matcher at each site."""
        if self._unkeyed:
            candidates: Iterable[str] = index.names
        else:
            groups = [index.by_name.get(name, ()) for name in self._exact]
            groups += [index.by_head.get(head, ()) for head in self._by_head]
            groups += [index.by_tail.get(tail, ()) for tail in self._by_tail]
            candidates = {name for group in groups for name in group}
        return frozenset(name for name in candidates if self(name) is not None)

    def _index_glob(self, pattern: str, position: int) -> None:
        if "[" in pattern or "]" in pattern:
            self._unkeyed.append(position)
            return
        prefix = re.split(r"[*?]", pattern, maxsplit=1)[0]
        suffix = re.split(r"[*?]", pattern)[-1]
        if "." in prefix:
            self._by_head.setdefault(prefix.split(".", 1)[0], []).append(position)
        elif "." in suffix:
            self._by_tail.setdefault(suffix.rsplit(".", 1)[1], []).append(position)
        else:
            self._unkeyed.append(position)

    def __call__(self, qualname: str | None) -> T | None:
        # One probe of the memo on the hot path: callers ask per call site.
        try:
            return self._memo[qualname]
        except KeyError:
            return self._lookup(qualname)

    def named(self, qualname: str) -> T | None:
        """The entry written for exactly ``qualname`` (no pattern): what a library
        documents for that one call."""
        return self._exact.get(qualname.replace("()", ""))

    def first(self, *qualnames: str) -> T | None:
        """The entry of the first of ``qualnames`` that has one (a call's resolved callee,
        then the callee as written)."""
        for qualname in qualnames:
            found = self(qualname)
            if found is not None:
                return found
        return None

    def _lookup(self, qualname: str | None) -> T | None:
        if not qualname:
            self._memo[qualname] = None
            return None
        memo = self._memo
        name = qualname.replace("()", "") if "()" in qualname else qualname
        found = self._exact.get(name)
        if found is None and self._globs:
            head = self._by_head.get(name.split(".", 1)[0], ())
            tail = self._by_tail.get(name.rsplit(".", 1)[-1], ())
            candidates = sorted((*head, *tail, *self._unkeyed)) if head or tail else self._unkeyed
            for position in candidates:
                regex, entry = self._globs[position]
                if regex.match(name):
                    found = entry
                    break
        memo[qualname] = found
        return found
