"""JUnit XML: one test case per scanned file; a file with findings fails.

CI systems that only understand test reports (GitLab, Jenkins, Azure) then show each file
with findings as a failed test, its findings in the failure text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import TYPE_CHECKING, TextIO

from agentguard.diagnostics import Finding
from agentguard.output import RenderOptions

if TYPE_CHECKING:
    from agentguard.engine.pipeline import ScanResult


def _scanned_paths(result: ScanResult) -> list[str]:
    paths = {*result.python_paths, *result.schema_paths}
    paths.update(f.path for f in result.findings)
    paths.update(p.path for p in result.problems)
    return sorted(paths)


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


def document(result: ScanResult) -> ET.Element:
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in result.findings:
        by_path[finding.path].append(finding)
    problems = {p.path: p for p in result.problems if p.kind != "parse-error"}
    paths = _scanned_paths(result)
    failures = sum(1 for p in paths if by_path.get(p))
    skipped = sum(1 for p in paths if p in problems and not by_path.get(p))
    suite = ET.Element(
        "testsuite",
        name="agentguard",
        tests=str(len(paths)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time="0",
    )
    for path in paths:
        case = ET.SubElement(suite, "testcase", classname="agentguard", name=path, time="0")
        findings = by_path.get(path, [])
        if findings:
            codes = ", ".join(sorted({f.code for f in findings}))
            failure = ET.SubElement(
                case,
                "failure",
                message=f"{len(findings)} finding{'s' if len(findings) != 1 else ''}: {codes}",
                type=max(findings, key=lambda f: f.severity.rank).severity.value,
            )
            failure.text = "\n".join(_describe(f) for f in findings)
        elif path in problems:
            ET.SubElement(case, "skipped", message=problems[path].reason)
    root = ET.Element(
        "testsuites",
        name="agentguard",
        tests=suite.get("tests", "0"),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time="0",
    )
    root.append(suite)
    return root


def render(result: ScanResult, stream: TextIO, options: RenderOptions) -> None:
    tree = document(result)
    ET.indent(tree)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(tree, encoding="unicode"))
    stream.write("\n")
