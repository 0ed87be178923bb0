"""Text positions and edits: the bridge between findings' spans and file contents.

Fix edits are whole-line replacements computed by diffing the file before and after a
codemod, so every output format can show them as plain text changes and no column unit
(UTF-8 bytes for ``ast``, code points for LibCST, UTF-16 for some editors) is ambiguous.
"""

from __future__ import annotations

import difflib
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
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start = sum(len(x) for x in old[:i1])
        end = start + sum(len(x) for x in old[i1:i2])
        line, column = position_of(starts, start)
        end_line, end_column = position_of(starts, end)
        edits.append(Edit(path, Span(line, column, end_line, end_column), "".join(new[j1:j2])))
    return tuple(edits)


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
