"""A Markdown findings table that fits a pull-request comment or ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, TextIO

from agentguard.output import RenderOptions
from agentguard.output.rule_docs import rule_doc_url

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult

# GitHub refuses comments over 65,536 characters; leave room for the rest of the comment.
MAX_ROWS = 200
ICON = {"error": "🔴 error", "warning": "🟠 warning", "info": "🔵 info"}


def cell(text: str) -> str:
    """Text safe inside a table cell: no pipes, no line breaks, no HTML."""
    return (
        " ".join(text.split())
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )


def rule_link(code: str) -> str:
    """A link to the published rule page when its base URL is set; otherwise the code as
    text: a relative docs/ link is broken in any repository but agentguard's own."""
    url = rule_doc_url(code)
    return f"[{code}]({url})" if url else f"`{code}`"


def render(result: ScanResult, stream: TextIO, options: RenderOptions) -> None:
    paths = result.paths  # every path relative to the repository root
    findings = paths.findings(result.findings)
    counts = Counter(f.severity.value for f in findings)
    out = ["## agentguard", ""]
    if findings:
        parts = [f"{counts[s]} {s}" for s in ("error", "warning", "info") if counts[s]]
        out.append(
            f"**{len(findings)} finding{'s' if len(findings) != 1 else ''}** ({', '.join(parts)}) "
            f"in {result.files_scanned} files, {result.tools} tools found."
        )
    else:
        out.append(f"No findings in {result.files_scanned} files ({result.tools} tools found).")
    if result.suppressed:
        out.append(f"{len(result.suppressed)} suppressed.")
    outcome = result.baseline
    if outcome is not None:
        out.append(
            f"Baseline: {outcome.matched} known findings hidden, "
            f"{len(outcome.stale)} stale entries."
        )
    out.append("")
    if findings:
        out += [
            "| Severity | Rule | Location | Tool | Message |",
            "| --- | --- | --- | --- | --- |",
        ]
        for finding in findings[:MAX_ROWS]:
            out.append(
                f"| {ICON[finding.severity.value]} | {rule_link(finding.code)} `{finding.name}` "
                f"| `{cell(str(finding.location))}` | {cell(finding.tool or '-')} "
                f"| {cell(finding.message)} |"
            )
        if len(findings) > MAX_ROWS:
            out.append("")
            out.append(f"…and {len(findings) - MAX_ROWS} more; see the SARIF or JSON output.")
        out.append("")
        by_rule = Counter((f.code, f.name) for f in findings)
        out += ["<details><summary>Findings by rule</summary>", ""]
        out += ["| Rule | Count |", "| --- | ---: |"]
        for (code, name), count in sorted(by_rule.items()):
            out.append(f"| {rule_link(code)} `{name}` | {count} |")
        out += ["", "</details>", ""]
    skipped = [p for p in paths.problems(result.problems) if not p.reported]
    if skipped:
        out += ["**Files not analysed**", ""]
        for problem in skipped:
            out.append(f"- `{cell(problem.path)}`: {cell(problem.reason)}")
        out.append("")
    for entry in outcome.stale if outcome else []:
        out.append(f"- stale baseline entry: {cell(entry.describe())}")
    stream.write("\n".join(out).rstrip("\n") + "\n")
