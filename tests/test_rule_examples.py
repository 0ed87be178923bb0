"""Every VALID and INVALID example of every rule, run through the real scanner."""

from __future__ import annotations

import pytest

from agentguard.checks.base import Invalid, Rule, Valid, all_rules

from .conftest import ScanFiles

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
    mine = [f for f in result.findings if f.code == rule.code]
    if isinstance(example, Valid):
        assert mine == [], "\n".join(f"{f.location} {f.message}" for f in mine)
        return
    lines = [(f.path, f.span.line) for f in mine]
    assert (example.filename, example.line) in lines, (
        f"expected {rule.code} at {example.filename}:{example.line}, got {lines}: "
        + "; ".join(f.message for f in mine)
    )
    if example.message_contains:
        assert any(example.message_contains in f.message for f in mine)


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
