"""One line a finding, as ruff's ``--output-format concise``: ``path:line:col: CODE message``.

For editors, grep and terminals too narrow for the full text output; the files that were
skipped and the summary follow, as in the text output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from agentguard.output import RenderOptions
from agentguard.output.columns import ColumnMapper
from agentguard.output.text import closing_lines

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult


def render(result: ScanResult, stream: TextIO, options: RenderOptions) -> None:
    paths = result.paths
    columns = ColumnMapper(paths.base)
    if not options.statistics:
        for scanned in result.findings:
            finding = paths.finding(scanned)
            span = finding.span
            column = columns.column(finding.path, span.line, span.column)
            stream.write(f"{finding.path}:{span.line}:{column}: {finding.code} {finding.message}\n")
    for line, _style in closing_lines(result, options):
        stream.write(line + "\n")
