"""JUnit XML: one failed test case per finding, grouped in a test suite per rule.

CI dashboards that only understand test reports (GitLab, Jenkins, Azure) count each finding
as a failed test named by its rule and location, with the evidence in the failure text, so
the failure count is the finding count. A file skipped without being read is a skipped test
case; a run with no findings is one passing test case, so the report is never empty.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import TYPE_CHECKING, TextIO

from agentguard.diagnostics import Finding
from agentguard.output import RenderOptions

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult


def _describe(finding: Finding) -> str:
    lines = [
        f"{finding.location}: {finding.code} {finding.name} ({finding.severity.value}, "
        f"confidence {finding.confidence.value}): {finding.message}"
    ]
    lines += [
        f"    evidence: {step.label}" + (f" ({step.location})" if step.location else "")
        for step in finding.evidence
    ]
    return "\n".join(lines)


def _suite(name: str, cases: list[ET.Element], failures: int, skipped: int) -> ET.Element:
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time="0",
    )
    suite.extend(cases)
    return suite


def _finding_case(finding: Finding) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=f"agentguard.{finding.code}",
        name=f"{finding.code} {finding.name} at {finding.location}",
        file=finding.path,
        line=str(finding.span.line),
        time="0",
    )
    failure = ET.SubElement(case, "failure", message=finding.message, type=finding.severity.value)
    failure.text = _describe(finding)
    return case


def document(result: ScanResult) -> ET.Element:
    paths = result.paths  # every path relative to the repository root
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for finding in paths.findings(result.findings):
        by_rule[f"{finding.code} {finding.name}"].append(finding)
    suites = [
        _suite(name, [_finding_case(f) for f in findings], len(findings), 0)
        for name, findings in sorted(by_rule.items())
    ]
    skipped_files = [p for p in paths.problems(result.problems) if not p.reported]
    if skipped_files:
        cases = []
        for problem in skipped_files:
            case = ET.Element("testcase", classname="agentguard.files", name=problem.path, time="0")
            ET.SubElement(case, "skipped", message=problem.reason)
            cases.append(case)
        suites.append(_suite("skipped files", cases, 0, len(cases)))
    if not result.findings:
        files = len({*result.python_paths, *result.schema_paths})
        passed = ET.Element(
            "testcase",
            classname="agentguard",
            name=f"no findings in {files} file{'s' if files != 1 else ''}",
            time="0",
        )
        suites.insert(0, _suite("agentguard", [passed], 0, 0))
    root = ET.Element(
        "testsuites",
        name="agentguard",
        tests=str(sum(int(s.get("tests", "0")) for s in suites)),
        failures=str(len(result.findings)),
        errors="0",
        skipped=str(len(skipped_files)),
        time="0",
    )
    root.extend(suites)
    return root


def render(result: ScanResult, stream: TextIO, options: RenderOptions) -> None:
    tree = document(result)
    ET.indent(tree)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(tree, encoding="unicode"))
    stream.write("\n")
