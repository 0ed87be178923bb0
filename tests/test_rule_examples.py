"""Every VALID and INVALID example of every rule, run through the real scanner."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.checks.base import Invalid, Rule, Valid, all_rules
from agentguard.config import load_config
from agentguard.engine.apply_fixes import run_fixes, write_changes

from .conftest import ScanFiles, write_project

CASES = [
    pytest.param(rule, example, id=f"{rule.code}-{kind}-{index}")
    for rule in all_rules()
    for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for index, example in enumerate(examples)
]


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_rule_example(rule: type[Rule], example: Valid | Invalid, scan_files: ScanFiles) -> None:
    files = {example.filename: example.code, **example.files}
    result = scan_files(files, select=(rule.code,), **example.config)
    if isinstance(example, Valid):
        mine = [f for f in result.findings if f.code == rule.code]
        assert mine == [], "\n".join(f"{f.location} {f.message}" for f in mine)
        return
    # Exactly the expected findings, spans and all: a second finding of the rule, one of
    # another code (a syntax error, an unused suppression) or a moved span all fail.
    found = sorted((f.code, f.path, tuple(f.span)) for f in result.findings)
    expected = [(rule.code, example.filename, span) for span in example.spans]
    assert found == expected, "; ".join(
        f"{f.location} {f.code} {f.message}" for f in result.findings
    )
    if example.message_contains:
        assert any(example.message_contains in f.message for f in result.findings)


FIX_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-fixed-{index}")
    for rule in all_rules()
    for index, example in enumerate(rule.INVALID)
    if example.fixed is not None
]


@pytest.mark.parametrize(("rule", "example"), FIX_CASES)
def test_rule_fix_example(rule: type[Rule], example: Invalid, tmp_path: Path) -> None:
    """The rule's fixes turn the example into exactly ``fixed``; fixing again changes nothing."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write_project(project, {example.filename: example.code, **example.files})
    config = load_config([project])
    for key, value in example.config.items():
        setattr(config, key, value)
    first = run_fixes([project], config, select=[rule.code], unsafe=True)
    assert first.rolled_back == []
    write_changes(first.changes)
    assert (project / example.filename).read_text(encoding="utf-8") == example.fixed
    second = run_fixes([project], config, select=[rule.code], unsafe=True)
    assert second.changes == []


def test_rules_with_a_fix_show_it_in_an_example() -> None:
    missing = [
        rule.code
        for rule in all_rules()
        if rule.fix_applicability is not None and not any(e.fixed for e in rule.INVALID)
    ]
    assert missing == []


def test_rules_list_a_fix_exactly_when_they_offer_and_build_one() -> None:
    """`agentguard rules` shows a fix from ``fix_applicability``: it must not claim a fix the
    rule cannot build, nor hide one it offers."""
    mismatched = [
        rule.code
        for rule in all_rules()
        if (rule.fix_applicability is not None)
        != (rule.fix_offer is not Rule.fix_offer and rule.fixed_text is not Rule.fixed_text)
    ]
    assert mismatched == []


def test_every_rule_has_docs_and_examples() -> None:
    sections = (
        "## What it does",
        "## Why it matters",
        "## Example",
        "## Use instead",
        "## Fix safety",
    )
    problems = []
    for rule in all_rules():
        docs = rule.docs()
        missing = [s for s in sections if s not in docs]
        if missing:
            problems.append(f"{rule.code}: docs lack {missing}")
        if not rule.VALID or not rule.INVALID:
            problems.append(f"{rule.code}: needs VALID and INVALID examples")
        if not rule.name or not rule.question:
            problems.append(f"{rule.code}: needs a name and a question")
    assert problems == []


def test_rule_codes_are_unique_and_named_consistently() -> None:
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
    for rule in rules:
        assert rule.code.startswith("AG") and len(rule.code) == 5
        assert rule.name == rule.name.lower() and " " not in rule.name
