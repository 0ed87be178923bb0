"""Inline suppressions (``# agentguard: ignore[CODES] reason``) and per-file ignores.

A comment is read strictly, as ruff reads ``# noqa``: each code in its brackets must name a
rule or a prefix of one, and each must suppress something, else AG002 names it (unknown or
unused). The bare form, ``# agentguard: ignore`` (a reason may follow), suppresses every
rule and is reported when it suppresses nothing. Codes written without brackets
(``# agentguard: ignore AG201``) are not understood: such a comment suppresses nothing and
AG002 says how to write it.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from agentguard.checks.base import Rule, all_rules
from agentguard.checks.meta.meta_rules import MALFORMED, REMOVE
from agentguard.config import Config
from agentguard.diagnostics import Confidence, Finding, Location
from agentguard.facts.module_facts import ModuleFacts, Suppression
from agentguard.project.project_model import ProjectModel

# A reason that starts like a rule code (``AG201``, ``AG2O1``, ``ag201,ag202``): codes
# written without their brackets.
_BRACKETLESS_CODES = re.compile(r"[:\s]*(?P<codes>AG\d[\w,\s]*?)(?:\s|$)", re.IGNORECASE)


@dataclass(frozen=True)
class _Comment:
    """One suppression comment and how it reads."""

    suppression: Suppression

    @property
    def bracketless(self) -> str | None:
        """The codes of ``# agentguard: ignore AG201`` (no brackets), else None."""
        if self.suppression.codes:
            return None
        match = _BRACKETLESS_CODES.match(self.suppression.reason)
        return match.group("codes").strip() if match else None


def _covers(suppression: Suppression, finding: Finding, facts: ModuleFacts | None) -> bool:
    if suppression.codes and not any(finding.code.startswith(c) for c in suppression.codes):
        return False
    span = finding.span
    if span.line <= suppression.line <= span.end_line:
        return True
    if facts is None:
        return False
    # A comment on a decorator or def line covers the whole definition.
    for fn in facts.functions.values():
        if fn.span.line <= suppression.line <= fn.name_span.line:
            if fn.span.line <= span.line <= fn.span.end_line:
                return True
    for cls in facts.classes.values():
        if cls.span.line <= suppression.line <= cls.name_span.line:
            if cls.span.line <= span.line <= cls.span.end_line:
                return True
    return False


def per_file_ignored(finding: Finding, per_file: dict[str, list[str]]) -> bool:
    for pattern, codes in per_file.items():
        if fnmatch.fnmatch(finding.path, pattern) or fnmatch.fnmatch(
            finding.path.rsplit("/", 1)[-1], pattern
        ):
            if any(c == "ALL" or finding.code.startswith(c) for c in codes):
                return True
    return False


def _known(code: str, rule_codes: list[str]) -> bool:
    return code == "ALL" or any(rule.startswith(code) for rule in rule_codes)


def apply_suppressions(
    findings: list[Finding], project: ProjectModel, config: Config, unused_rule: Rule | None
) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """Split findings into kept and suppressed; report each suppression comment with a
    code that is unknown or suppressed nothing, or that is not understood (AG002)."""
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    # (path, comment line) -> the comment's codes that suppressed something ("" for bare).
    used: dict[tuple[str, int], set[str]] = {}
    for finding in findings:
        facts = project.modules.get(finding.path)
        hit = False
        for suppression in facts.suppressions if facts is not None else []:
            if suppression.codes or _Comment(suppression).bracketless is None:
                if _covers(suppression, finding, facts):
                    codes = used.setdefault((finding.path, suppression.line), set())
                    codes.update(c for c in suppression.codes if finding.code.startswith(c))
                    codes.add("")
                    hit = True
        if hit or per_file_ignored(finding, config.per_file_ignores):
            suppressed.append(finding)
        else:
            kept.append(finding)
    unused: list[Finding] = []
    if unused_rule is None:
        return kept, suppressed, unused
    rule_codes = [rule.code for rule in all_rules()]
    for facts in project.modules.values():
        for suppression in facts.suppressions:
            problem = _problem(
                _Comment(suppression), used.get((facts.path, suppression.line)), rule_codes
            )
            if problem is None:
                continue
            message, flagged = problem
            unused.append(
                unused_rule.finding(
                    Location(facts.path, suppression.span),
                    message,
                    confidence=Confidence.HIGH,
                    node_text=flagged,
                )
            )
    return kept, suppressed, unused


def _problem(
    comment: _Comment, used: set[str] | None, rule_codes: list[str]
) -> tuple[str, str] | None:
    """AG002's message and flagged text for a comment, or None when every part of it is
    used. The flagged text (the baseline's key) is the comment's codes and line, and the
    codes its fix removes."""
    suppression = comment.suppression
    line = suppression.line
    bracketless = comment.bracketless
    if bracketless is not None:
        codes = ",".join(c.strip().upper() for c in bracketless.split(",") if c.strip())
        return (
            f"Suppression not understood: rule codes go in brackets, "
            f"`# agentguard: ignore[{codes}]`; this comment suppresses nothing",
            f"{MALFORMED}ignore {bracketless}@{line}",
        )
    listed = ", ".join(suppression.codes) or "every rule"
    flagged = f"ignore[{listed}]@{line}"
    if not suppression.codes:
        if used:
            return None
        return f"Unused suppression: nothing here is reported for {listed}", flagged
    unknown = [c for c in suppression.codes if not _known(c, rule_codes)]
    idle = [c for c in suppression.codes if c not in unknown and c not in (used or set())]
    if not unknown and not idle:
        return None
    if not unknown and len(idle) == len(suppression.codes):
        return f"Unused suppression: nothing here is reported for {listed}", flagged
    parts = []
    if idle:
        parts.append(f"nothing here is reported for {', '.join(idle)}")
    if unknown:
        named = ", ".join(unknown)
        parts.append(f"unknown code{'s' * (len(unknown) > 1)} {named} (no rule has it)")
    removed = [c for c in suppression.codes if c in unknown or c in idle]
    if len(removed) == len(suppression.codes):
        head = "Unused suppression" if idle else "Suppression of an unknown code"
        return f"{head}: {'; '.join(parts)}", flagged
    return (
        f"Suppression partly unused: {'; '.join(parts)}",
        f"{flagged}{REMOVE}{','.join(removed)}",
    )
