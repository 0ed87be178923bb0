"""SARIF 2.1.0 for code-scanning services (GitHub code scanning, Azure DevOps, IDE viewers).

Every rule is described once under ``tool.driver.rules`` with its docs as help text; each
finding becomes a result with a stable ``partialFingerprints`` entry (rule, file, enclosing
symbol and flagged text: no line numbers), its fix as ``artifactChanges``, its evidence chain
as a code flow, and files that could not be read or parsed become tool execution
notifications, so a partial scan never looks like a clean one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import quote

from agentguard import __version__
from agentguard.checks.base import QUESTIONS, Rule, all_rules
from agentguard.diagnostics import Finding, Fix, Location, Severity, Span
from agentguard.engine.fix_edits import ensure_fixes
from agentguard.output import RenderOptions
from agentguard.output.columns import ColumnMapper
from agentguard.output.indented_json import write_indented
from agentguard.output.rule_docs import rule_doc_url

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "agentguard/v1"
SRCROOT_TEXT = {
    "repository root": "The repository root (git top level).",
    "project root": "The project root: the folder of the agentguard config.",
    "working directory": "The working directory agentguard ran in.",
    "scanned folder": "The folder agentguard scanned.",
}

LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# GitHub code scanning treats a rule tagged "security" as a security alert and ranks it by
# this CVSS-like score (critical >= 9.0, high >= 7.0, medium >= 4.0, low > 0); other rules
# are ranked by problem.severity alone, so only security rules carry a score.
SECURITY_SEVERITY = {Severity.ERROR: "7.0", Severity.WARNING: "5.0", Severity.INFO: "2.0"}
TAGS = {
    "reliability": ("reliability", "replay-safety"),
    "security": ("security", "replay-safety"),
    "meta": (),
}
PROBLEM_SEVERITY = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "recommendation",
}
PRECISION = {"high": "high", "medium": "medium", "low": "low"}


def _region(span: Span, path: str = "", columns: ColumnMapper | None = None) -> dict[str, int]:
    if columns is not None and path:
        span = Span(
            span.line,
            columns.column(path, span.line, span.column),
            span.end_line,
            columns.column(path, span.end_line, span.end_column),
        )
    end_line = max(span.end_line, span.line)
    end_column = span.end_column if end_line > span.line else max(span.end_column, span.column)
    return {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": end_line,
        "endColumn": max(end_column, 1),
    }


def _artifact(path: str) -> dict[str, str]:
    """A shown path as an artifact location: a URI reference relative to %SRCROOT%, or an
    absolute file URI for a file outside it."""
    if Path(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path), "uriBaseId": SRCROOT}


def _physical(location: Location, columns: ColumnMapper | None) -> dict[str, Any]:
    return {
        "artifactLocation": _artifact(location.path),
        "region": _region(location.span, location.path, columns),
    }


def _rule_descriptor(rule: type[Rule]) -> dict[str, Any]:
    docs = rule.docs()
    url = rule_doc_url(rule.code)
    question = QUESTIONS.get(rule.question, "")
    short = rule.short_description()
    full = short
    if "## Why it matters" in docs:
        why = docs.split("## Why it matters", 1)[1].split("\n## ", 1)[0].strip()
        full = f"{short} {' '.join(why.split())}"
    help_markdown = (
        f"**{rule.code} {rule.name}** ({rule.question}: {question})\n\n{docs}\n\n"
        f"Documentation: `agentguard rule {rule.code}`" + (f", or {url}." if url else ".")
    )
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": f"{short}\n\n{docs}", "markdown": help_markdown},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {
            "tags": sorted({"agentguard", *TAGS[rule.kind()], rule.question}),
            "problem.severity": PROBLEM_SEVERITY[rule.severity],
            "question": rule.question,
            "fix": rule.fix_applicability.value if rule.fix_applicability else None,
        },
    }
    if rule.kind() == "security":
        descriptor["properties"]["security-severity"] = SECURITY_SEVERITY[rule.severity]
    if url:
        descriptor["helpUri"] = url
    return descriptor


def _fixes(fix: Fix) -> list[dict[str, Any]]:
    if not fix.edits:
        return []
    by_path: dict[str, list[dict[str, Any]]] = {}
    for edit in fix.edits:
        span = edit.span
        by_path.setdefault(edit.path, []).append(
            {
                "deletedRegion": {
                    "startLine": span.line,
                    "startColumn": span.column,
                    "endLine": span.end_line,
                    "endColumn": span.end_column,
                },
                "insertedContent": {"text": edit.replacement},
            }
        )
    return [
        {
            "description": {"text": f"{fix.description} ({fix.applicability.value} fix)"},
            "artifactChanges": [
                {"artifactLocation": _artifact(path), "replacements": reps}
                for path, reps in by_path.items()
            ],
            "properties": {"applicability": fix.applicability.value},
        }
    ]


def _result(
    finding: Finding,
    rule_index: dict[str, int],
    occurrence: int,
    baseline: bool,
    columns: ColumnMapper,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": _physical(finding.location, columns)}],
        # The n-th identical finding in the same symbol gets its own identity, so two
        # copies of one mistake are two alerts, and neither depends on line numbers.
        "partialFingerprints": {FINGERPRINT_KEY: f"{finding.fingerprint}:{occurrence}"},
        "properties": {
            "confidence": finding.confidence.value,
            "question": finding.question,
            "tool": finding.tool,
            "symbol": finding.symbol,
            "precision": PRECISION[finding.confidence.value],
        },
    }
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    if finding.tool:
        result["locations"][0]["logicalLocations"] = [{"name": finding.tool, "kind": "function"}]
    related: list[dict[str, Any]] = []
    labels = {step.location: step.label for step in finding.evidence if step.location}
    for location in finding.related:
        # The cause of a finding located in the tool (a helper's sink or handler), named
        # by its evidence step when it has one.
        related.append(
            {
                "id": len(related) + 1,
                "physicalLocation": _physical(location, columns),
                "message": {"text": labels.get(location, "related")},
            }
        )
    for step in finding.evidence:
        if step.location is not None and step.location not in finding.related:
            related.append(
                {
                    "id": len(related) + 1,
                    "physicalLocation": _physical(step.location, columns),
                    "message": {"text": step.label},
                }
            )
    if related:
        result["relatedLocations"] = related
    chain = [step for step in finding.evidence if step.location is not None]
    if chain:
        result["codeFlows"] = [
            {
                "message": {"text": "evidence: tool -> helpers -> sink"},
                "threadFlows": [
                    {
                        "locations": [
                            {
                                "location": {
                                    "physicalLocation": _physical(step.location, columns),
                                    "message": {"text": step.label},
                                },
                                "nestingLevel": depth,
                            }
                            for depth, step in enumerate(chain)
                            if step.location is not None
                        ]
                    }
                ],
            }
        ]
    if finding.fix is not None:
        fixes = _fixes(finding.fix)
        if fixes:
            result["fixes"] = fixes
        result["properties"]["fix"] = finding.fix.to_dict()
    if baseline:
        result["baselineState"] = "new"
    return result


def _notifications(result: ScanResult) -> list[dict[str, Any]]:
    notes = []
    for problem in result.paths.problems(result.problems):
        parse_error = problem.reported
        notes.append(
            {
                "level": "error" if parse_error else "warning",
                "message": {
                    "text": (
                        f"{problem.path}: could not parse: {problem.reason}"
                        if problem.kind == "parse-error"
                        else f"{problem.path}: could not read: {problem.reason}"
                        if parse_error
                        else f"{problem.path}: skipped: {problem.reason}"
                    )
                },
                "locations": [
                    {"physicalLocation": _physical(Location(problem.path, problem.span), None)}
                ],
                "descriptor": {"id": "AG000" if parse_error else "skipped-file"},
                "properties": {"kind": problem.kind},
            }
        )
    outcome = result.baseline
    for entry in outcome.stale if outcome else []:
        notes.append(
            {
                "level": "note",
                "message": {"text": f"stale baseline entry: {entry.describe()}"},
                "descriptor": {"id": "stale-baseline-entry"},
            }
        )
    return notes


def document(result: ScanResult) -> dict[str, Any]:
    ensure_fixes(result)  # these formats print each fix's edits
    # Every URI is relative to the repository root (%SRCROOT%), as code scanning expects.
    paths = result.paths
    columns = ColumnMapper(paths.base)
    rules = all_rules()
    rule_index = {rule.code: index for index, rule in enumerate(rules)}
    baseline = result.baseline is not None
    seen: Counter[str] = Counter()
    results = []
    for finding in paths.findings(result.findings):
        occurrence = seen[finding.fingerprint]
        seen[finding.fingerprint] += 1
        results.append(_result(finding, rule_index, occurrence, baseline, columns))
    notifications = _notifications(result)
    # The run completed, but it did not analyse every file: say so rather than pass as clean.
    successful = not result.problems
    invocation: dict[str, Any] = {
        "executionSuccessful": successful,
        "toolExecutionNotifications": notifications,
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "agentguard",
                        "semanticVersion": __version__,
                        "version": __version__,
                        "rules": [_rule_descriptor(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {
                    SRCROOT: {
                        "uri": paths.base.as_uri() + "/",
                        "description": {"text": SRCROOT_TEXT[paths.kind]},
                    },
                },
                "invocations": [invocation],
                "results": results,
                "columnKind": "unicodeCodePoints",
                "properties": {
                    "files": result.files_scanned,
                    "tools": result.tools,
                    "suppressed": len(result.suppressed),
                },
            }
        ],
    }


def render(result: ScanResult, stream: TextIO, options: RenderOptions) -> None:
    write_indented(document(result), stream)
    stream.write("\n")
