"""GitHub Actions workflow commands: one annotation per finding on the pull request's diff.

``::error file=F,line=L,endLine=E,col=C,endColumn=D,title=AG201 name::message``. Messages
escape ``%``, CR and LF; property values also escape ``:`` and ``,`` (the runner's own
rules, as in @actions/core ``escapeData`` / ``escapeProperty``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from agentguard.diagnostics import Finding, Severity, Span
from agentguard.output import RenderOptions
from agentguard.output.columns import ColumnMapper

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **properties: str | int) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return (
        f"::{kind} {props}::{escape_data(message)}"
        if props
        else f"::{kind}::{escape_data(message)}"
    )


def annotation(finding: Finding, columns: ColumnMapper | None = None) -> str:
    """One finding (its paths as shown: relative to the repository root) as an annotation."""
    span = finding.span
    if columns is not None:
        span = Span(
            span.line,
            columns.column(finding.path, span.line, span.column),
            span.end_line,
            columns.column(finding.path, span.end_line, span.end_column),
        )
    message = finding.message
    if finding.evidence:
        message += "\n" + "\n".join(
            f"evidence: {step.label}" + (f" ({step.location})" if step.location else "")
            for step in finding.evidence
        )
    message += f"\nconfidence {finding.confidence.value}; docs: agentguard rule {finding.code}"
    properties: dict[str, str | int] = {
        "file": finding.path,
        "line": span.line,
        "endLine": max(span.end_line, span.line),
    }
    # Columns only make sense on one line; the runner ignores them otherwise.
    if span.end_line <= span.line:
        properties["col"] = span.column
        properties["endColumn"] = max(span.end_column, span.column)
    properties["title"] = f"{finding.code} {finding.name}"
    return command(COMMAND[finding.severity], message, **properties)


def render(result: ScanResult, stream: TextIO, options: RenderOptions) -> None:
    # Paths relative to the repository root, as the annotations of a pull request name files.
    paths = result.paths
    columns = ColumnMapper(paths.base)
    for finding in paths.findings(result.findings):
        stream.write(annotation(finding, columns) + "\n")
    for problem in paths.problems(result.problems):
        if problem.reported:
            continue  # already an AG000 finding
        stream.write(
            command(
                "warning",
                f"skipped: {problem.reason}",
                file=problem.path,
                title="agentguard skipped a file",
            )
            + "\n"
        )
    outcome = result.baseline
    for entry in outcome.stale if outcome else []:
        stream.write(command("notice", f"stale baseline entry: {entry.describe()}") + "\n")
