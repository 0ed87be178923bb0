"""Column conversion for outputs that count characters.

Spans carry ``ast`` columns, which are UTF-8 byte offsets (1-based here). SARIF
(``columnKind: unicodeCodePoints``) and GitHub annotations count characters, so a line with
``"café"`` before the flagged call would otherwise put the marker in the wrong place.
"""

from __future__ import annotations

from pathlib import Path


class ColumnMapper:
    """Converts 1-based byte columns to 1-based code-point columns, reading each file once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[str, list[bytes] | None] = {}

    def _line(self, path: str, line: int) -> bytes | None:
        if path not in self._lines:
            try:
                self._lines[path] = (self.root / path).read_bytes().splitlines()
            except OSError:
                self._lines[path] = None
        lines = self._lines[path]
        if lines is None or not 0 < line <= len(lines):
            return None
        return lines[line - 1]

    def column(self, path: str, line: int, byte_column: int) -> int:
        text = self._line(path, line)
        if text is None or text.isascii():
            return byte_column
        prefix = text[: max(byte_column - 1, 0)]
        return len(prefix.decode("utf-8", errors="replace")) + 1
