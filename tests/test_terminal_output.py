"""The text output in an 80-column terminal: no line wraps back to the first column."""

from __future__ import annotations

import io
import re

from agentguard.output import RenderOptions
from agentguard.output.text import render

from .conftest import ScanFiles

ANSI = re.compile(r"\x1b\[[0-9;]*m")

LONG_LINES = (
    "import requests\n"
    "from langchain_core.tools import tool\n\n"
    "@tool\n"
    "def create_order_for_the_customer_cart_with_a_very_long_descriptive_name(cart_id: str) -> dict:\n"
    '    """Create an order."""\n'
    '    return requests.post("https://shop.example/orders/for/a/long/path", json={"cart": cart_id}).json()\n'
)


def terminal_lines(scan_files: ScanFiles, width: int = 80) -> list[str]:
    result = scan_files({"agent.py": LONG_LINES}, select=("AG201",))
    stream = io.StringIO()
    render(result, stream, RenderOptions(color=True, width=width))
    return ANSI.sub("", stream.getvalue()).splitlines()


def test_the_caret_line_is_cut_with_the_code_line(scan_files: ScanFiles) -> None:
    lines = terminal_lines(scan_files)
    code = next(i for i, line in enumerate(lines) if line.startswith("      7 | "))
    assert lines[code].endswith("…")
    caret = lines[code + 1]
    assert re.fullmatch(r" {8}\| +\^+", caret), caret
    assert len(caret) <= 80
    # The next line is the evidence, not the rest of the carets wrapped to column 0.
    assert lines[code + 2].startswith("  = evidence:")


def test_wrapped_notes_keep_their_indent(scan_files: ScanFiles) -> None:
    lines = terminal_lines(scan_files)
    start = next(i for i, line in enumerate(lines) if line.startswith("  = evidence:"))
    end = next(i for i, line in enumerate(lines) if line.startswith("  = docs:"))
    notes = lines[start:end]
    assert len(notes) > 2  # the long tool name made an evidence line wrap
    assert all(line.startswith("  ") for line in notes), notes
    assert all(len(line) <= 80 for line in lines), [ln for ln in lines if len(ln) > 80]


def test_only_a_finding_starts_at_the_first_column(scan_files: ScanFiles) -> None:
    lines = terminal_lines(scan_files)
    *body, summary = [line for line in lines if line.strip()]
    starts = [line for line in body if not line.startswith(" ")]
    assert starts and all(re.match(r"agent\.py:\d+:\d+: AG\d{3} ", line) for line in starts)
    assert len(body) > len(starts) + 4  # the header itself wrapped, indented
    assert "finding" in summary
