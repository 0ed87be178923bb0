"""Autofixes: each rule's edit builder on the files being fixed, rendered as text edits.

Facts come from ``ast`` (fast); edits come from LibCST (lossless), and only when something
needs them: the fixer, and the output formats that print edits (JSON, SARIF), which call
:func:`ensure_fixes`. Whether a finding has a fix, and how safe it is, the rule decides from
facts alone (:meth:`Rule.fix_offer <agentguard.checks.base.Rule.fix_offer>`), so text output
never parses with LibCST. :mod:`agentguard.engine.apply_fixes` applies fixes to a fixpoint,
renders diffs and patches, and writes files atomically.
"""

from __future__ import annotations

import io
import time
import tokenize
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.checks.base import rule_by_code
from agentguard.diagnostics import Finding, Fix, FixOffer
from agentguard.fixes.context import FixContext, ProjectFixFacts
from agentguard.fixes.text import line_edits

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult
    from agentguard.project.project_model import ProjectModel


def fix_offer(finding: Finding, project: ProjectModel) -> FixOffer | None:
    """The fix this finding would get, without building its edits (None: no fix)."""
    rule = rule_by_code(finding.code)
    if rule is None or not fixes_language(finding, project):
        return None
    return rule().fix_offer(finding, project)


def fixes_language(finding: Finding, project: ProjectModel) -> bool:
    """Whether fixes can be made in the finding's file: the edits are LibCST's, so Python
    only (a TypeScript or JavaScript file gets none)."""
    facts = project.modules.get(finding.path)
    return facts is None or facts.language == "python"


def fixable_elsewhere(finding: Finding, project: ProjectModel) -> bool:
    """A finding in a file fixes cannot edit yet whose rule fixes it in Python."""
    rule = rule_by_code(finding.code)
    return (
        rule is not None
        and rule.fix_applicability is not None
        and not fixes_language(finding, project)
    )


def ensure_fixes(result: ScanResult) -> None:
    """Attach their fix (with edits) to the result's findings, once per result."""
    if result.fixes_attached:
        return
    started = time.perf_counter()
    result.findings = attach_fixes(result.findings, result.project, result.root)
    result.fixes_attached = True
    # Shown by --profile; the scan's total does not include it.
    result.timings["fix edits (after scan)"] = time.perf_counter() - started


def attach_fixes(
    findings: list[Finding],
    project: ProjectModel,
    root: Path,
    sources: Mapping[str, bytes] | None = None,
) -> list[Finding]:
    """Return the findings with a Fix attached where the rule has one for them."""
    # Edits only for findings with a fix on offer: the others' files are not even read.
    fixable = [
        (f, offer)
        for f in findings
        if f.fix is None
        if (offer := fix_offer(f, project)) is not None
    ]
    if not fixable:
        return findings
    shared = ProjectFixFacts(project, root)
    # One context per file, so one LibCST parse per file however many fixes it gets.
    contexts: dict[str, FixContext | None] = {}
    fixes: dict[int, Finding] = {}
    for finding, offer in fixable:
        if finding.path not in contexts:
            contexts[finding.path] = _context(finding.path, shared, root, sources)
        context = contexts[finding.path]
        if context is None:
            continue
        try:
            fix = build_fix(finding, context, offer)
        except Exception:
            fix = None
        if fix is not None:
            fixes[id(finding)] = finding.with_fix(fix)
    return [fixes.get(id(f), f) for f in findings]


def build_fix(finding: Finding, context: FixContext, offer: FixOffer) -> Fix | None:
    """The finding's fix with its edits; applicability and description come from its offer,
    so that every output says the same whether or not it computed the edits."""
    rule = rule_by_code(finding.code)
    new_text = rule().fixed_text(finding, context) if rule is not None else None
    if new_text is None or new_text == context.text:
        return None
    edits = line_edits(context.path, context.text, new_text)
    return Fix(offer.applicability, offer.description, edits)


def _context(
    path: str, shared: ProjectFixFacts, root: Path, sources: Mapping[str, bytes] | None
) -> FixContext | None:
    data = sources.get(path) if sources is not None else None
    if data is None:
        try:
            data = (root / path).read_bytes()
        except OSError:
            return None
    text = decode(data)
    if text is None:
        return None
    return FixContext(path=path, text=text[1], shared=shared)


BOM = "\ufeff"


def source_encoding(data: bytes) -> str | None:
    """The encoding a Python file declares (PEP 263: a BOM or a coding cookie; UTF-8 by
    default), as the interpreter reads it; None when the declaration is not understood."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return None
    return "utf-8" if encoding == "utf-8-sig" else encoding


def decode(data: bytes) -> tuple[str, str] | None:
    """(bom, text) of a Python file in the encoding it declares, with its line endings
    untouched; None if it cannot be decoded so."""
    encoding = source_encoding(data)
    if encoding is None:
        return None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None
    if text.startswith(BOM):
        return BOM, text[1:]
    return "", text
