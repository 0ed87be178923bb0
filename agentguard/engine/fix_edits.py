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
import pickle
import time
import tokenize
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.checks.base import rule_by_code
from agentguard.diagnostics import Finding, Fix, FixOffer
from agentguard.engine.parallel import pool_context, share_work
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
    jobs: int = 1,
) -> list[Finding]:
    """Return the findings with a Fix attached where the rule has one for them, the files
    shared between ``jobs`` processes."""
    # Edits only for findings with a fix on offer: the others' files are not even read.
    by_file: dict[str, list[tuple[int, FixOffer]]] = {}
    for index, finding in enumerate(findings):
        if finding.fix is None and (offer := fix_offer(finding, project)) is not None:
            by_file.setdefault(finding.path, []).append((index, offer))
    if not by_file:
        return findings
    work = _FixWork(findings, project, root, sources, list(by_file.items()))
    fixes = work.run(jobs)
    return [
        finding.with_fix(fixes[index]) if fixes.get(index) is not None else finding
        for index, finding in enumerate(findings)
    ]


# Below this many lines in the files to fix (about 0.2 s of LibCST's parse on this
# machine), starting a worker process costs more than it saves.
MIN_LINES_FOR_POOL = 3000


class _FixWork:
    """The files with fixes on offer, and each one's findings: a file is the unit of work,
    so that its one LibCST parse serves every edit made in it."""

    def __init__(
        self,
        findings: list[Finding],
        project: ProjectModel,
        root: Path,
        sources: Mapping[str, bytes] | None,
        files: list[tuple[str, list[tuple[int, FixOffer]]]],
    ) -> None:
        self.findings = findings
        self.project = project
        self.root = root
        self.sources = sources
        self.files = files
        self.shared = ProjectFixFacts(project, root)

    def run(self, jobs: int) -> dict[int, Fix | None]:
        """Each fixable finding's Fix (None: none could be built), by its index. The pool
        is forked, so that the workers have the project model without its being sent."""
        fixes: dict[int, Fix | None] = {}
        if jobs < 2 or len(self.files) < 2 or self._lines() < MIN_LINES_FOR_POOL or not _can_fork():
            for file_index in range(len(self.files)):
                fixes.update(self.file_fixes(file_index))
            return fixes
        # Imported before the fork, so that no process imports it again.
        import agentguard.fixes.cst_tools  # noqa: F401

        global _INHERITED
        _INHERITED = self
        try:
            share_work(
                # The most work last, taken first (a file's parse, then a pass over it per
                # fix), so that no process is left with a big file at the end; results
                # land by index.
                sorted(range(len(self.files)), key=self._cost),
                min(jobs, len(self.files)),
                chunk_size=1,
                send=lambda chunk: chunk,
                worker=_fix_files_in_worker,
                here=lambda file_index: fixes.update(self.file_fixes(file_index)),
                receive=lambda output: fixes.update(pickle.loads(output)),
            )
        finally:
            _INHERITED = None
        return fixes

    def file_fixes(self, file_index: int) -> list[tuple[int, Fix | None]]:
        """The fixes of one file's findings, built from one context (one LibCST parse)."""
        path, wanted = self.files[file_index]
        context = _context(path, self.shared, self.root, self.sources)
        built: list[tuple[int, Fix | None]] = []
        for index, offer in wanted:
            fix = None
            if context is not None:
                try:
                    fix = build_fix(self.findings[index], context, offer)
                except Exception:
                    fix = None
            built.append((index, fix))
        return built

    def _cost(self, file_index: int) -> tuple[int, str]:
        path, wanted = self.files[file_index]
        facts = self.project.modules.get(path)
        return ((facts.lines if facts is not None else 0) * (1 + len(wanted)), path)

    def _lines(self) -> int:
        return sum(
            facts.lines
            for path, _ in self.files
            if (facts := self.project.modules.get(path)) is not None
        )


# The fix work of the pool being started: forked workers inherit it (project model
# included), so a task names only files, by index.
_INHERITED: _FixWork | None = None


def _fix_files_in_worker(file_indices: list[int]) -> bytes:
    """In a forked worker: the pickled fixes of some files of the inherited work."""
    work = _INHERITED
    assert work is not None  # set before the pool was forked
    return pickle.dumps(
        [fix for file_index in file_indices for fix in work.file_fixes(file_index)],
        protocol=pickle.HIGHEST_PROTOCOL,
    )


def _can_fork() -> bool:
    """Whether workers can be forked (and so inherit the project): elsewhere the fixes are
    built in this process alone."""
    return pool_context().get_start_method() == "fork"


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
