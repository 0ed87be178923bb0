"""GitHub annotations, Markdown, JUnit and JSON outputs, and several outputs in one run."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.engine.scan_result import ScanResult
from agentguard.output import FORMAT_MODULES, RenderOptions, renderer
from agentguard.output.github import escape_data, escape_property

from .conftest import FIXTURES, ROOT, ScanFiles

PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
FINDINGS_SCHEMA = ROOT / "agentguard" / "data" / "findings.schema.json"

AGENT = """\
import requests
from langchain_core.tools import tool


@tool
def create_order(cart_id: str) -> dict:
    \"\"\"Place an order | pay it.\"\"\"
    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
"""

ANNOTATION = re.compile(r"^::(error|warning|notice) (?P<props>[^:]*)::(?P<message>.*)$")


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def rendered(result: ScanResult, name: str) -> str:
    stream = io.StringIO()
    renderer(name)(result, stream, RenderOptions())
    return stream.getvalue()


def shop_agent() -> ScanResult:
    project = FIXTURES / "shop-agent"
    return scan([project], load_config([project]))


# --- github ---------------------------------------------------------------------------------


def test_github_escaping_follows_the_runner_rules() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_annotations_one_per_finding_with_positions(
    scan_files: ScanFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = scan_files({"agent.py": AGENT})
    monkeypatch.setenv("GITHUB_WORKSPACE", str(result.root))
    lines = rendered(result, "github").splitlines()
    assert len(lines) == len(result.findings)
    for line, finding in zip(lines, result.findings, strict=True):
        match = ANNOTATION.match(line)
        assert match, line
        props = dict(p.split("=", 1) for p in match["props"].split(","))
        assert props["file"] == finding.path
        assert int(props["line"]) == finding.span.line
        assert int(props["endLine"]) == finding.span.end_line
        assert props["title"] == f"{finding.code} {finding.name}"
        assert "\n" not in match["message"]
        assert match["message"].startswith(escape_data(finding.message))


def test_github_paths_are_relative_to_the_workspace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT))
    text = rendered(shop_agent(), "github")
    assert "file=fixtures/shop-agent/shop_agent/tools.py,line=19" in text


def test_github_reports_skipped_files(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT, "big.py": "x = 1\n" * 100}, max_file_size=100)
    assert any(
        line.startswith("::warning ") and "big.py" in line and "max-file-size" in line
        for line in rendered(result, "github").splitlines()
    )


def test_github_reports_an_unreadable_file_as_an_error(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT, "blob.py": "\0\1"})
    assert any(
        line.startswith("::error ") and "blob.py" in line and "AG000" in line
        for line in rendered(result, "github").splitlines()
    )


# --- markdown -------------------------------------------------------------------------------


def test_markdown_table_has_one_row_per_finding_and_escapes_cells(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT})
    text = rendered(result, "markdown")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "AG" in line]
    table_rows = [r for r in rows if r.count(" | ") >= 4 and "| Severity |" not in r]
    assert len(table_rows) == len(result.findings)
    for row in table_rows:
        # Every row has exactly five cells, however the messages read.
        assert len(re.split(r"(?<!\\)\|", row.strip())[1:-1]) == 5
    assert f"**{len(result.findings)} findings**" in text


def test_markdown_says_so_when_clean(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": "def add(a: int, b: int) -> int:\n    return a + b\n"})
    text = rendered(result, "markdown")
    assert "No findings" in text
    assert "| Severity |" not in text


# --- junit ----------------------------------------------------------------------------------


def test_junit_has_one_failed_testcase_per_finding_grouped_by_rule(
    scan_files: ScanFiles,
) -> None:
    big = "x = 1\n" * (len(AGENT) // 6 + 10)  # over the max-file-size below: skipped
    files = {"agent.py": AGENT, "helpers.py": "X = 1\n", "big.py": big}
    result = scan_files(files, max_file_size=len(AGENT) + 10)
    root = ET.fromstring(rendered(result, "junit"))
    assert root.tag == "testsuites"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    cases = [case for suite in root.findall("testsuite") for case in suite.findall("testcase")]
    failed = [case for case in cases if case.find("failure") is not None]
    # Every finding is a failed test case, and nothing else is.
    assert len(failed) == len(result.findings) == int(root.get("failures", "-1"))
    ag201 = next(f for f in result.findings if f.code == "AG201")
    assert f"AG201 {ag201.name}" in suites
    names = {case.get("name") for case in failed}
    assert f"AG201 {ag201.name} at {ag201.location}" in names
    assert "evidence:" in (failed[0].find("failure").text or "")  # type: ignore[union-attr]
    skipped = suites["skipped files"].findall("testcase")
    assert [case.get("name") for case in skipped] == ["big.py"]
    assert root.get("tests") == str(len(cases))


def test_junit_of_a_clean_run_is_one_passing_testcase(scan_files: ScanFiles) -> None:
    result = scan_files({"helpers.py": "X = 1\n"})
    root = ET.fromstring(rendered(result, "junit"))
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 1 and cases[0].find("failure") is None
    assert root.get("failures") == "0" and root.get("tests") == "1"


# --- json -----------------------------------------------------------------------------------


def findings_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(FINDINGS_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_json_output_matches_its_published_schema(project: Path) -> None:
    data = json.loads(rendered(scan([project], load_config([project])), "json"))
    errors = list(findings_validator().iter_errors(data))
    assert not errors, [e.message for e in errors]


def test_json_schema_covers_problems_and_rejects_drift(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT, "broken.py": "def broken(:\n", "blob.py": "\0"})
    data = json.loads(rendered(result, "json"))
    assert not list(findings_validator().iter_errors(data))
    data["findings"][0]["severity"] = "fatal"
    del data["findings"][0]["fingerprint"]
    messages = [e.message for e in findings_validator().iter_errors(data)]
    assert any("fatal" in m for m in messages)
    assert any("fingerprint" in m for m in messages)


# --- several outputs in one run -------------------------------------------------------------


def test_one_run_writes_text_to_the_terminal_and_sarif_and_markdown_to_files(
    tmp_path: Path,
) -> None:
    sarif, summary = tmp_path / "out" / "agentguard.sarif", tmp_path / "summary.md"
    run = CliRunner().invoke(
        app,
        [
            "check",
            str(FIXTURES / "shop-agent"),
            "--output",
            f"sarif:{sarif}",
            "-o",
            f"markdown:{summary}",
        ],
    )
    assert run.exit_code == 1, run.output
    assert "AG201" in run.output and "findings in" in run.output  # text on the terminal
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert summary.read_text().startswith("## agentguard")


@pytest.mark.parametrize("bad", ["sarif", "pdf:out.pdf", ":out.sarif", "sarif:"])
def test_bad_output_option_is_a_usage_error(bad: str) -> None:
    run = CliRunner().invoke(app, ["check", str(FIXTURES / "shop-agent"), "--output", bad])
    assert run.exit_code == 2
    assert "--output" in run.output


def test_every_registered_format_renders_the_fixture() -> None:
    result = shop_agent()
    for name in FORMAT_MODULES:
        assert rendered(result, name).strip(), name


def test_text_output_names_the_installed_rule_command_and_no_repository_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AGENTGUARD_DOCS_URL", raising=False)
    text = rendered(shop_agent(), "text")
    assert "= docs: agentguard rule AG201\n" in text
    assert "docs/rules/" not in text
    monkeypatch.setenv("AGENTGUARD_DOCS_URL", "https://example.org/agentguard/rules/")
    text = rendered(shop_agent(), "text")
    assert "agentguard rule AG201 (https://example.org/agentguard/rules/AG201.md)" in text


def test_markdown_emits_no_relative_docs_link(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTGUARD_DOCS_URL", raising=False)
    text = rendered(shop_agent(), "markdown")
    assert "](docs/" not in text and "`AG201`" in text


def test_source_lines_are_truncated_not_wrapped(scan_files: ScanFiles) -> None:
    long_url = "https://shop.example/orders/" + "segment/" * 30
    source = AGENT.replace('"https://shop.example/orders"', repr(long_url))
    result = scan_files({"agent.py": source})
    from agentguard.output.text import render

    stream = io.StringIO()
    render(result, stream, RenderOptions(color=True, width=80))
    lines = stream.getvalue().splitlines()
    shown = [line for line in lines if "requests.post(" in line]
    assert shown and all(len(strip_ansi(line)) <= 80 for line in shown)
    assert any(strip_ansi(line).endswith("…") for line in shown)
