"""Text positions and edits: the bridge between findings' spans and file contents.

Fix edits are whole-line replacements computed by diffing the file before and after a
codemod, so every output format can show them as plain text changes and no column unit
(UTF-8 bytes for ``ast``, code points for LibCST, UTF-16 for some editors) is ambiguous.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentguard.diagnostics import Edit, Span


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts (index 0 is line 1)."""
    starts = [0]
    find = text.find
    index = find("\n")
    while index != -1:
        starts.append(index + 1)
        index = find("\n", index + 1)
    return starts


def offset_of(text: str, starts: Sequence[int], line: int, column: int) -> int:
    """Offset of a 1-based line and 1-based code-point column, clamped to the text."""
    if line > len(starts):
        return len(text)
    return min(starts[max(line, 1) - 1] + max(column, 1) - 1, len(text))


def position_of(starts: Sequence[int], offset: int) -> tuple[int, int]:
    """1-based (line, column) of an offset."""
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low + 1, offset - starts[low] + 1


def char_column(line_text: str, byte_column: int) -> int:
    """Convert a 1-based UTF-8 byte column (as ``ast`` counts) to a 1-based code-point column."""
    encoded = line_text.encode("utf-8")
    return len(encoded[: byte_column - 1].decode("utf-8", "replace")) + 1


def line_edits(path: str, before: str, after: str) -> tuple[Edit, ...]:
    """The changed line ranges between two versions of a file, as edits on ``before``."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    starts = line_starts(before)
    edits: list[Edit] = []
    end = 0  # offset on ``before`` where the last range ends
    last = 0  # its line index
    for i1, i2, j1, j2 in changed_lines(old, new):
        start = end + sum(len(x) for x in old[last:i1])
        end = start + sum(len(x) for x in old[i1:i2])
        last = i2
        line, column = position_of(starts, start)
        end_line, end_column = position_of(starts, end)
        edits.append(Edit(path, Span(line, column, end_line, end_column), "".join(new[j1:j2])))
    return tuple(edits)


def changed_lines(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int, int, int]]:
    """The ranges ``old[i1:i2]`` replaced by ``new[j1:j2]``: the ranges that are not
    "equal" in ``difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()``,
    found as difflib finds them (:class:`LineMatcher`)."""
    changed = []
    i = j = 0
    for block_i, block_j, size in LineMatcher(old, new).matching_blocks():
        if i < block_i or j < block_j:
            changed.append((i, block_i, j, block_j))
        i, j = block_i + size, block_j + size
    return changed


# A Mersenne prime modulus and a base for the hashes of runs of lines.
HASH_MODULUS = (1 << 61) - 1
HASH_BASE = 1_000_003


class LineMatcher:
    """The matching blocks of ``difflib.SequenceMatcher(None, old, new, autojunk=False)``
    (the same ones), for two versions of a file that differ in a few places.

    difflib splits the ranges around the longest common run of lines, which it finds by
    visiting, for each line of ``old``, every equal line of ``new``: quadratic in a file's
    blank lines. Here the longest run is first guessed from the runs through the lines
    found once in each range, and the common head and tail; hashes of the runs one line
    longer prove the guess (no such run exists, so none is longer), and among the runs as
    long, the one difflib takes (the first in ``old``, then in ``new``) is found the same
    way. Where there is no proof, difflib searches that range.
    """

    def __init__(self, old: Sequence[str], new: Sequence[str]) -> None:
        ids: dict[str, int] = {}
        self.old = [ids.setdefault(line, len(ids)) for line in old]
        self.new = [ids.setdefault(line, len(ids)) for line in new]
        self._old_hashes = _prefix_hashes(self.old)
        self._new_hashes = _prefix_hashes(self.new)

    def matching_blocks(self) -> list[tuple[int, int, int]]:
        """(i, j, size) of each common run, in order, ending with ``(len(old), len(new),
        0)``, as ``difflib.SequenceMatcher.get_matching_blocks`` (adjacent runs not merged)."""
        blocks = []
        ranges = [(0, len(self.old), 0, len(self.new))]
        while ranges:
            alo, ahi, blo, bhi = ranges.pop()
            i, j, size = found = self.longest_run(alo, ahi, blo, bhi)
            if size:
                blocks.append(found)
                if alo < i and blo < j:
                    ranges.append((alo, i, blo, j))
                if i + size < ahi and j + size < bhi:
                    ranges.append((i + size, ahi, j + size, bhi))
        blocks.sort()
        blocks.append((len(self.old), len(self.new), 0))
        return blocks

    def longest_run(self, alo: int, ahi: int, blo: int, bhi: int) -> tuple[int, int, int]:
        """``difflib.SequenceMatcher.find_longest_match``: the longest run of lines common
        to ``old[alo:ahi]`` and ``new[blo:bhi]``, the first in ``old`` (then in ``new``) of
        those as long."""
        guess = self._guess(alo, ahi, blo, bhi)
        if guess and self._first_common(guess + 1, alo, ahi, blo, bhi) is None:
            first = self._first_common(guess, alo, ahi, blo, bhi)
            assert first is not None  # the guess is one
            return first[0], first[1], guess
        matcher = difflib.SequenceMatcher(None, self.old[alo:ahi], self.new[blo:bhi], False)
        i, j, size = matcher.find_longest_match(0, ahi - alo, 0, bhi - blo)
        return alo + i, blo + j, size

    def _guess(self, alo: int, ahi: int, blo: int, bhi: int) -> int:
        """The length of the longest of the runs through a line found once in each range,
        and of the common head and tail of the ranges."""
        a, b = self.old, self.new
        most = min(ahi - alo, bhi - blo)
        head = 0
        while head < most and a[alo + head] == b[blo + head]:
            head += 1
        tail = 0
        while tail < most and a[ahi - 1 - tail] == b[bhi - 1 - tail]:
            tail += 1
        longest = max(head, tail)
        in_old = Counter(a[alo:ahi])
        in_new = Counter(b[blo:bhi])
        where = {line: j for j, line in enumerate(b[blo:bhi], blo) if in_new[line] == 1}
        ends: dict[int, int] = {}  # diagonal (j - i) -> end in ``old`` of the run found on it
        for i in range(alo, ahi):
            line = a[i]
            j = where.get(line, -1)
            if j < 0 or in_old[line] != 1 or i < ends.get(j - i, -1):
                continue
            start, end = i, i + 1
            while start > alo and start - i + j > blo and a[start - 1] == b[start - 1 - i + j]:
                start -= 1
            while end < ahi and end - i + j < bhi and a[end] == b[end - i + j]:
                end += 1
            ends[j - i] = end
            longest = max(longest, end - start)
        return longest

    def _first_common(
        self, size: int, alo: int, ahi: int, blo: int, bhi: int
    ) -> tuple[int, int] | None:
        """The first (in ``old``, then in ``new``) run of ``size`` lines in both ranges."""
        if size > min(ahi - alo, bhi - blo):
            return None
        power = _power(size)
        new_hashes = self._new_hashes
        runs: dict[int, list[int]] = {}
        for j in range(blo, bhi - size + 1):
            key = (new_hashes[j + size] - new_hashes[j] * power) % HASH_MODULUS
            runs.setdefault(key, []).append(j)
        old_hashes = self._old_hashes
        a, b = self.old, self.new
        for i in range(alo, ahi - size + 1):
            key = (old_hashes[i + size] - old_hashes[i] * power) % HASH_MODULUS
            for j in runs.get(key, ()):
                if a[i : i + size] == b[j : j + size]:  # not two runs of one hash
                    return i, j
        return None


_POWERS = [1]  # HASH_BASE ** k % HASH_MODULUS at index k, grown as longer runs are hashed


def _power(size: int) -> int:
    while len(_POWERS) <= size:
        _POWERS.append(_POWERS[-1] * HASH_BASE % HASH_MODULUS)
    return _POWERS[size]


def _prefix_hashes(ids: Sequence[int]) -> list[int]:
    """The hash of each head of ``ids`` (index k: the first k), for the hash of any run."""
    hashes = [0]
    value = 0
    for line_id in ids:
        value = (value * HASH_BASE + line_id + 1) % HASH_MODULUS
        hashes.append(value)
    return hashes


@dataclass(frozen=True, order=True)
class TextEdit:
    """An edit resolved to offsets of one text."""

    start: int
    end: int
    replacement: str

    def conflicts(self, other: TextEdit) -> bool:
        if self == other:
            return False  # the same edit from two fixes (an import both need): applied once
        added = self.replacement.strip()
        if added and added == other.replacement.strip():
            # Two fixes adding the same text at different places (a shared definition, the
            # diff aligned differently): one now, the other recomputed next round.
            return True
        if self.start == self.end or other.start == other.end:
            # An insertion touching another edit: their order would be ambiguous.
            return self.start <= other.end and other.start <= self.end
        return max(self.start, other.start) < min(self.end, other.end)


def resolve(text: str, edits: Iterable[Edit]) -> list[TextEdit]:
    starts = line_starts(text)
    return [
        TextEdit(
            offset_of(text, starts, e.span.line, e.span.column),
            offset_of(text, starts, e.span.end_line, e.span.end_column),
            e.replacement,
        )
        for e in edits
    ]


def apply_text_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-conflicting edits (duplicates applied once), last first."""
    unique = sorted(set(edits), key=lambda e: (e.start, e.end), reverse=True)
    for edit in unique:
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text
