"""The checklist report (`agentguard report`): per question a verdict with evidence, and a
table of every tool's declared or inferred replay-safety, in Markdown, HTML or JSON."""

from __future__ import annotations

from typing import TextIO

from agentguard.report.model import Report, build_report

FORMATS = ("markdown", "html", "json")


def render_report(report: Report, output_format: str, stream: TextIO) -> None:
    if output_format == "markdown":
        from agentguard.report.markdown import render
    elif output_format == "html":
        from agentguard.report.html import render
    elif output_format == "json":
        from agentguard.report.json_format import render
    else:
        raise ValueError(f"unknown report format {output_format!r}; choose one of {FORMATS}")
    render(report, stream)


__all__ = ["FORMATS", "Report", "build_report", "render_report"]
