"""Versioned JSON output, described by ``agentguard/data/findings.schema.json``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from agentguard import __version__
from agentguard.engine.fix_edits import ensure_fixes
from agentguard.output import RenderOptions
from agentguard.output.columns import ColumnMapper
from agentguard.output.indented_json import write_indented

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult

SCHEMA_VERSION = "1.1"


def document(result: ScanResult) -> dict[str, Any]:
    ensure_fixes(result)  # these formats print each fix's edits
    paths = result.paths
    columns = ColumnMapper(paths.base)
    presented = paths.findings(result.findings)
    findings = []
    for finding in presented:
        entry = finding.to_dict()
        # Editors and SARIF count characters; ast counts UTF-8 bytes.
        entry["column"] = columns.column(finding.path, finding.span.line, finding.span.column)
        entry["end_column"] = columns.column(
            finding.path, finding.span.end_line, finding.span.end_column
        )
        for step, shown in zip(finding.evidence, entry["evidence"], strict=True):
            if step.location is not None:
                shown["column"] = columns.column(
                    step.location.path, step.location.span.line, step.location.span.column
                )
        findings.append(entry)
    by_severity = {"error": 0, "warning": 0, "info": 0}
    for finding in presented:
        by_severity[finding.severity.value] += 1
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "agentguard", "version": __version__},
        "summary": {
            "findings": len(findings),
            "by_severity": by_severity,
            "tools": result.tools,
            "files": result.files_scanned,
            "suppressed": len(result.suppressed),
            "baseline": result.baseline.summary() if result.baseline is not None else None,
        },
        "findings": findings,
        "tools": [
            {
                "name": tool.name,
                "framework": tool.framework,
                "path": paths.show(tool.path),
                "line": tool.anchor.span.line,
                "declared": tool.declaration is not None,
                "schema_only": tool.schema_only,
                "sources": paths.sources(tool),
                "effects": sorted({e.kind for e in tool.effects}),
            }
            for tool in result.found_tools
        ],
        "problems": [
            {"path": p.path, "kind": p.kind, "reason": p.reason, "line": p.span.line}
            for p in paths.problems(result.problems)
        ],
    }


def render(result: ScanResult, stream: TextIO, options: RenderOptions) -> None:
    write_indented(document(result), stream)
    stream.write("\n")
