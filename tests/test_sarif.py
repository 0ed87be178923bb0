"""SARIF 2.1.0 output: valid against the official schema, stable fingerprints, no silent drops."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentguard.checks.base import all_rules
from agentguard.config import load_config
from agentguard.diagnostics import Applicability, Edit, Fix, Span
from agentguard.engine.pipeline import scan
from agentguard.engine.scan_result import ScanResult
from agentguard.output import RenderOptions
from agentguard.output.sarif import FINGERPRINT_KEY, document, render

from .conftest import FIXTURES, ScanFiles

SCHEMA = Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json"
PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())

AGENT = """\
import requests
from langchain_core.tools import tool


@tool
def create_order(cart_id: str) -> dict:
    \"\"\"Place an order for the cart.\"\"\"
    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
"""


@cache
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def assert_valid(sarif: dict[str, Any]) -> None:
    errors = sorted(validator().iter_errors(sarif), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def sarif_of(result: ScanResult) -> dict[str, Any]:
    stream = io.StringIO()
    render(result, stream, RenderOptions())
    data: dict[str, Any] = json.loads(stream.getvalue())
    return data


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_every_fixture_project_gives_schema_valid_sarif(project: Path) -> None:
    result = scan([project], load_config([project]))
    sarif = sarif_of(result)
    assert_valid(sarif)
    run = sarif["runs"][0]
    assert len(run["results"]) == len(result.findings)
    assert {r["ruleId"] for r in run["results"]} == {f.code for f in result.findings}


def test_rules_carry_docs_severity_and_question_tags() -> None:
    project = FIXTURES / "shop-agent"
    run = sarif_of(scan([project], load_config([project])))["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert set(rules) == {r.code for r in all_rules()}
    for rule in all_rules():
        descriptor = rules[rule.code]
        assert descriptor["shortDescription"]["text"] == rule.short_description()
        assert rule.docs() in descriptor["help"]["markdown"]
        assert rule.question in descriptor["properties"]["tags"]
        expected_level = {"error": "error", "warning": "warning", "info": "note"}
        assert descriptor["defaultConfiguration"]["level"] == expected_level[rule.severity.value]
    # ruleIndex points at the right descriptor.
    for res in run["results"]:
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]


def test_only_security_rules_are_security_alerts_and_meta_rules_carry_no_category() -> None:
    project = FIXTURES / "shop-agent"
    run = sarif_of(scan([project], load_config([project])))["runs"][0]
    rules = {r["id"]: r["properties"] for r in run["tool"]["driver"]["rules"]}
    # A parse error is not a High security alert; a retry that doubles an order is a
    # reliability defect; raw exception text reaching the model is a security one.
    for meta in ("AG000", "AG001", "AG002"):
        assert "security" not in rules[meta]["tags"] and "reliability" not in rules[meta]["tags"]
        assert "security-severity" not in rules[meta]
    assert "reliability" in rules["AG902"]["tags"] and "security" not in rules["AG902"]["tags"]
    assert "security-severity" not in rules["AG902"]
    assert "security" in rules["AG601"]["tags"]
    assert float(rules["AG601"]["security-severity"]) > 0
    for props in rules.values():
        assert ("security-severity" in props) == ("security" in props["tags"])


def test_help_uri_points_at_the_published_rule_doc(monkeypatch: pytest.MonkeyPatch) -> None:
    project = FIXTURES / "shop-agent"
    result = scan([project], load_config([project]))
    assert "helpUri" not in sarif_of(result)["runs"][0]["tool"]["driver"]["rules"][0]
    monkeypatch.setenv("AGENTGUARD_DOCS_URL", "https://example.org/agentguard/docs/rules/")
    rules = sarif_of(result)["runs"][0]["tool"]["driver"]["rules"]
    assert rules[0]["helpUri"] == f"https://example.org/agentguard/docs/rules/{rules[0]['id']}.md"
    assert_valid(sarif_of(result))


def test_evidence_chain_becomes_a_code_flow_and_related_locations(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT})
    run = sarif_of(result)["runs"][0]
    ag201 = next(r for r in run["results"] if r["ruleId"] == "AG201")
    steps = ag201["codeFlows"][0]["threadFlows"][0]["locations"]
    assert steps[0]["location"]["message"]["text"].startswith("tool `create_order`")
    assert steps[-1]["location"]["physicalLocation"]["region"]["startLine"] == 8
    assert [loc["id"] for loc in ag201["relatedLocations"]] == list(
        range(1, len(ag201["relatedLocations"]) + 1)
    )


def test_fingerprints_survive_line_shifts_but_not_code_changes(scan_files: ScanFiles) -> None:
    before = sarif_of(scan_files({"agent.py": AGENT}))["runs"][0]["results"]
    shifted = sarif_of(scan_files({"agent.py": "\n\n# moved down\n\n" + AGENT}))["runs"][0][
        "results"
    ]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in shifted] != [
        r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in before
    ]
    assert [r["partialFingerprints"] for r in shifted] == [r["partialFingerprints"] for r in before]
    renamed = AGENT.replace("create_order", "place_order")
    changed = sarif_of(scan_files({"agent.py": renamed}))["runs"][0]["results"]
    assert {r["partialFingerprints"][FINGERPRINT_KEY] for r in changed}.isdisjoint(
        r["partialFingerprints"][FINGERPRINT_KEY] for r in before
    )


def test_identical_findings_get_distinct_fingerprints(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT})
    first = next(f for f in result.findings if f.code == "AG201")
    copy = replace(first, location=replace(first.location, span=Span(20, 1, 20, 5)))
    result.findings.append(copy)
    prints = [
        r["partialFingerprints"][FINGERPRINT_KEY]
        for r in sarif_of(result)["runs"][0]["results"]
        if r["ruleId"] == "AG201"
    ]
    assert len(prints) == len(set(prints)) == 2


def test_a_fix_becomes_artifact_changes(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT})
    finding = result.findings[0]
    edit = Edit("agent.py", Span(5, 1, 5, 6), "@tool\n@guarded(runtime)")
    result.findings[0] = finding.with_fix(Fix(Applicability.UNSAFE, "Declare the tool", (edit,)))
    sarif = sarif_of(result)
    assert_valid(sarif)
    fix = sarif["runs"][0]["results"][0]["fixes"][0]
    change = fix["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "agent.py"
    replacement = change["replacements"][0]
    assert replacement["deletedRegion"] == {
        "startLine": 5,
        "startColumn": 1,
        "endLine": 5,
        "endColumn": 6,
    }
    assert replacement["insertedContent"]["text"] == "@tool\n@guarded(runtime)"
    assert "unsafe" in fix["description"]["text"]


def test_unreadable_and_unparsable_files_become_notifications(scan_files: ScanFiles) -> None:
    result = scan_files(
        {"agent.py": AGENT, "broken.py": "@tool\ndef broken(:\n", "blob.py": "\0\1"}
    )
    sarif = sarif_of(result)
    assert_valid(sarif)
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = {
        n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: n
        for n in invocation["toolExecutionNotifications"]
    }
    assert notes["broken.py"]["level"] == "error"
    # A file nobody could read is an error too: its tools went unchecked.
    assert notes["blob.py"]["level"] == "error"
    assert "could not read: binary" in notes["blob.py"]["message"]["text"]


def test_a_clean_full_scan_is_successful(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": "def add(a: int, b: int) -> int:\n    return a + b\n"})
    invocation = document(result)["runs"][0]["invocations"][0]
    assert invocation == {"executionSuccessful": True, "toolExecutionNotifications": []}


def test_columns_count_characters_not_utf8_bytes(scan_files: ScanFiles) -> None:
    # "é" and "€" are several bytes in UTF-8; ast counts bytes, SARIF counts code points.
    source = AGENT.replace(
        '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()',
        '    note = "café €"; return requests.post("https://shop.example/o", json={"c": cart_id})',
    )
    result = scan_files({"agent.py": source})
    ag201 = next(f for f in result.findings if f.code == "AG201")
    line = source.splitlines()[ag201.span.line - 1]
    region = next(r for r in sarif_of(result)["runs"][0]["results"] if r["ruleId"] == "AG201")[
        "locations"
    ][0]["physicalLocation"]["region"]
    assert line[region["startColumn"] - 1 :].startswith("requests.post(")
    assert ag201.span.column != region["startColumn"]  # the byte column would be off
