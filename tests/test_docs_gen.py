"""The committed rule docs under docs/rules are exactly what the rule classes generate."""

from __future__ import annotations

from pathlib import Path

from agentguard.checks.base import all_rules
from agentguard.output.rule_docs import expected_files, main, stale_files, write_docs

from .conftest import ROOT

DOCS = ROOT / "docs" / "rules"


def test_committed_rule_docs_are_current() -> None:
    stale = stale_files(DOCS)
    assert not stale, f"run `python -m agentguard.output.rule_docs`; out of date: {stale}"


def test_every_rule_has_a_page_with_its_docs() -> None:
    files = expected_files()
    for rule in all_rules():
        page = files[f"{rule.code}.md"]
        assert page.startswith(f"# {rule.code} {rule.name}\n")
        assert rule.docs() in page
        assert f"[{rule.code}]({rule.code}.md)" in files["README.md"]


def test_generation_detects_and_repairs_edits_and_leftovers(tmp_path: Path) -> None:
    write_docs(tmp_path)
    assert stale_files(tmp_path) == []
    code = all_rules()[0].code
    (tmp_path / f"{code}.md").write_text("hand edited\n")
    (tmp_path / "AG999.md").write_text("a removed rule\n")
    assert stale_files(tmp_path) == sorted([f"{code}.md", "AG999.md"])
    assert main([str(tmp_path), "--check"]) == 1
    assert main([str(tmp_path)]) == 0
    assert stale_files(tmp_path) == []
    assert not (tmp_path / "AG999.md").exists()
