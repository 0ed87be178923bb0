"""The checklist report as Markdown: fits a pull-request comment and ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from typing import TextIO

from agentguard.report.model import BAD, GOOD, UNKNOWN, Cell, Evidence, Report

VERDICT_ICON = {
    "pass": "✅ pass",
    "partial": "🟡 partial",
    "fail": "❌ fail",
    "not applicable": "⚪ not applicable",
    "not checked": "❔ not checked",
}
STATUS_ICON = {GOOD: "✅ ", BAD: "❌ ", UNKNOWN: "❔ "}
MAX_FINDINGS_PER_QUESTION = 50


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def where(report: Report, path: str | None, line: int | None) -> str:
    if not path:
        return ""
    label = f"{path}:{line}" if line else path
    if report.link_base:
        anchor = f"#L{line}" if line else ""
        return f"[`{label}`]({report.link_base.rstrip('/')}/{path}{anchor})"
    return f"`{label}`"


def show(value: Cell) -> str:
    marker = "*" if value.source == "inferred" else ""
    note = f" ({cell(value.note)})" if value.note else ""
    return f"{STATUS_ICON.get(value.status, '')}{cell(value.value)}{marker}{note}"


def evidence_line(report: Report, item: Evidence) -> str:
    location = where(report, item.path, item.line)
    return f"- {location} {cell(item.text)}".replace("-  ", "- ")


def render(report: Report, stream: TextIO) -> None:
    out = [f"# agentguard checklist: {report.root_name}", ""]
    severities = ", ".join(f"{n} {s}" for s, n in report.by_severity.items() if n)
    out.append(
        f"{len(report.tools)} tools in {report.files} files; {report.findings} findings"
        + (f" ({severities})" if severities else "")
        + f". agentguard {report.version}."
    )
    out += ["", "## Checklist", "", "| | Question | Verdict | Findings | Summary |"]
    out.append("| --- | --- | --- | ---: | --- |")
    for q in report.questions:
        out.append(
            f"| {q.id} | {cell(q.question)} | {VERDICT_ICON[q.verdict]} | "
            f"{q.counts['findings']} | {cell(q.summary)} |"
        )
    out += ["", "## Tools", ""]
    if report.tools:
        out.append(
            "| Tool | Framework | Location | Risk | Idempotency | Replay | Key | Ledger "
            "| Timeout | Observation | Eval | Findings |"
        )
        out.append("| --- " * 12 + "|")
        for tool in report.tools:
            codes = ", ".join(tool.finding_codes) or "-"
            out.append(
                f"| **{cell(tool.name)}** | {cell(tool.framework)} | "
                f"{where(report, tool.path, tool.line)} | {show(tool.risk)} | "
                f"{show(tool.idempotency)} | {show(tool.replay)} | {show(tool.key)} | "
                f"{show(tool.ledger)} | {show(tool.timeout)} | {show(tool.observation)} | "
                f"{show(tool.eval)} | {codes} |"
            )
        out += ["", "\\* inferred from the code, not declared by the tool."]
    else:
        out.append("No tools found.")
    out += ["", "## Evidence by question", ""]
    for q in report.questions:
        if not q.findings and not q.evidence:
            continue
        out += [
            f"<details><summary><b>{q.id}</b> {VERDICT_ICON[q.verdict]}: "
            f"{cell(q.question)}</summary>",
            "",
        ]
        for item in q.findings[:MAX_FINDINGS_PER_QUESTION]:
            out.append(evidence_line(report, item))
        if len(q.findings) > MAX_FINDINGS_PER_QUESTION:
            out.append(f"- …and {len(q.findings) - MAX_FINDINGS_PER_QUESTION} more")
        for item in q.evidence:
            out.append(evidence_line(report, item))
        out += ["", "</details>", ""]
    if report.problems:
        out += ["## Files not analysed", ""]
        out += [evidence_line(report, p) for p in report.problems]
        out.append("")
    stream.write("\n".join(out).rstrip("\n") + "\n")
