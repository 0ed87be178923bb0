"""The command line as a CI user meets it: exit codes, selection, formats, rule docs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.engine.scan_result import ScanResult

from .conftest import FIXTURES, write_project
from .test_bad_input import WRITE_TOOL

runner = CliRunner()
SHOP = str(FIXTURES / "shop-agent")

READ_ONLY = (
    "import requests\n"
    "from langchain_core.tools import tool\n\n"
    "@tool\n"
    "def get_order(order_id: str) -> dict:\n"
    '    """Look an order up."""\n'
    '    return requests.get(f"https://shop.example/orders/{order_id}").json()\n'
)


def test_findings_exit_1_and_print_a_summary_line() -> None:
    result = runner.invoke(app, ["check", SHOP])
    assert result.exit_code == 1
    last = result.output.strip().splitlines()[-1]
    assert "findings in" in last and "files" in last
    assert "AG201" in result.output
    assert "evidence:" in result.output


def test_clean_project_exits_0(tmp_path: Path) -> None:
    write_project(tmp_path, {"agent.py": READ_ONLY})
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "0 findings" in result.output


def test_exit_zero_and_fail_on() -> None:
    assert runner.invoke(app, ["check", SHOP, "--exit-zero"]).exit_code == 0
    # Only warnings selected: below the default fail-on=error.
    only_warnings = runner.invoke(app, ["check", SHOP, "--select", "AG204"])
    assert only_warnings.exit_code == 0


def test_select_and_ignore_take_codes_and_prefixes() -> None:
    result = runner.invoke(app, ["check", SHOP, "--format", "json", "--select", "AG2"])
    codes = {f["code"] for f in json.loads(result.output)["findings"]}
    assert codes == {"AG201"}
    result = runner.invoke(app, ["check", SHOP, "--format", "json", "--ignore", "AG2,AG9"])
    codes = {f["code"] for f in json.loads(result.output)["findings"]}
    assert "AG201" not in codes and "AG901" not in codes and "AG101" in codes


def test_json_output_has_the_documented_fields_and_is_deterministic() -> None:
    first = runner.invoke(app, ["check", SHOP, "--format", "json"])
    second = runner.invoke(app, ["check", SHOP, "--format", "json"])
    assert first.output == second.output
    document = json.loads(first.output)
    assert document["schema_version"]
    for finding in document["findings"]:
        for key in (
            "code",
            "name",
            "severity",
            "confidence",
            "path",
            "line",
            "column",
            "end_line",
            "end_column",
            "tool",
            "message",
            "question",
            "fix",
            "fingerprint",
        ):
            assert key in finding
        assert not finding["path"].startswith("/")
        assert "\\" not in finding["path"]


def test_statistics_counts_per_rule_instead_of_the_findings() -> None:
    result = runner.invoke(app, ["check", SHOP, "--statistics"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(re.fullmatch(r" *\d+  AG201      missing-idempotency-key", ln) for ln in lines)
    assert any(re.fullmatch(r" *\d+  AG101  \[\*\] undeclared-tool-semantics", ln) for ln in lines)
    assert "evidence:" not in result.output
    assert "findings in" in lines[-1]


def test_unknown_format_is_a_usage_error() -> None:
    result = runner.invoke(app, ["check", SHOP, "--format", "yaml"])
    assert result.exit_code == 2
    assert "unknown format" in result.output


def test_rule_docs_and_rule_list() -> None:
    result = runner.invoke(app, ["rule", "AG201"])
    assert result.exit_code == 0
    assert "missing-idempotency-key" in result.output
    assert "Why it matters" in result.output
    by_name = runner.invoke(app, ["rule", "missing-idempotency-key"])
    assert by_name.exit_code == 0
    assert runner.invoke(app, ["rule", "AG999"]).exit_code == 2
    listing = runner.invoke(app, ["rules", "--format", "json"])
    codes = [r["code"] for r in json.loads(listing.output)]
    assert "AG101" in codes and codes == sorted(codes)


def test_python_dash_m_runs_the_cli() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agentguard", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0
    assert completed.stdout.startswith("agentguard ")


def test_a_check_run_as_a_process_ends_with_every_output_complete(
    shop_agent: Path, tmp_path: Path
) -> None:
    """``check`` ends the process without the interpreter's teardown: what it printed and
    wrote must still all be there, with the exit code a normal exit gives."""
    sarif = tmp_path / "out.sarif"
    command = [sys.executable, "-m", "agentguard", "check", str(shop_agent), "--no-cache"]
    failing = subprocess.run(
        [*command, "--format", "json", "--output", f"sarif:{sarif}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failing.returncode == 1, failing.stderr
    assert json.loads(failing.stdout)["findings"]
    assert json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    passing = subprocess.run(
        [*command, "--exit-zero", "--statistics"], capture_output=True, text=True, check=False
    )
    assert passing.returncode == 0, passing.stderr
    assert "AG101" in passing.stdout
    usage = subprocess.run(
        [*command, "--format", "nope"], capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2 and "unknown format" in usage.stderr


def test_a_check_that_exits_0_ends_the_process_with_its_result_unfreed(
    shop_agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that passes (here ``--exit-zero``) returns from ``check`` instead of raising:
    its result must still be alive when the process ends, or the model is freed object by
    object first (0.45 s of a re-link of 5,556 files)."""
    import agentguard.cli as cli

    alive_at_exit: list[object] = []

    class Ended(Exception):
        pass

    def end_process(status: int) -> None:
        alive_at_exit.append(cli._Exit.kept)
        raise Ended(status)

    monkeypatch.setattr(cli.os, "_exit", end_process)
    monkeypatch.setattr(cli.sys, "gettrace", lambda: None)  # as when not under coverage
    monkeypatch.setattr(cli.sys, "getprofile", lambda: None)
    monkeypatch.setattr(
        cli.sys, "argv", ["agentguard", "check", str(shop_agent), "--no-cache", "--exit-zero"]
    )
    monkeypatch.setattr(cli._Exit, "fast", False)
    monkeypatch.setattr(cli._Exit, "armed", False)
    monkeypatch.setattr(cli._Exit, "kept", None)
    with pytest.raises(Ended) as ended:
        cli.main()
    assert ended.value.args == (0,)
    (kept,) = alive_at_exit
    assert isinstance(kept, ScanResult) and kept.findings and kept.project is not None


def test_a_profiled_check_still_writes_its_profile(shop_agent: Path, tmp_path: Path) -> None:
    profile = tmp_path / "check.prof"
    profiled = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "agentguard"]
    completed = subprocess.run(
        [*profiled, "check", str(shop_agent), "--no-cache", "--exit-zero"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert profile.stat().st_size > 0


CONCISE_LINE = re.compile(r"[\w./-]+\.py:\d+:\d+: AG\d{3} \S.*")


def test_concise_output_is_one_line_per_finding() -> None:
    full = json.loads(runner.invoke(app, ["check", SHOP, "--format", "json"]).output)
    result = runner.invoke(app, ["check", SHOP, "--output-format", "concise"])
    assert result.exit_code == 1
    *findings, summary = result.output.splitlines()
    assert len(findings) == len(full["findings"])
    assert all(CONCISE_LINE.fullmatch(line) for line in findings), findings
    first = full["findings"][0]
    assert findings[0] == (
        f"{first['path']}:{first['line']}:{first['column']}: {first['code']} {first['message']}"
    )
    assert "findings in" in summary


def test_quiet_prints_the_findings_and_nothing_else() -> None:
    result = runner.invoke(app, ["check", SHOP, "-f", "concise", "--quiet"])
    assert result.exit_code == 1
    assert result.output.strip()
    assert all(CONCISE_LINE.fullmatch(line) for line in result.output.splitlines())


def test_extend_select_extend_ignore_and_exclude_on_the_command_line(tmp_path: Path) -> None:
    write_project(tmp_path, {"agent.py": READ_ONLY, "vendor/shop.py": WRITE_TOOL})

    def codes(*args: str) -> set[tuple[str, str]]:
        done = runner.invoke(app, ["check", str(tmp_path), "-f", "json", *args])
        return {(f["code"], f["path"]) for f in json.loads(done.output)["findings"]}

    assert ("AG201", "vendor/shop.py") in codes()
    assert codes("--exclude", "vendor") == set()
    assert {c for c, _ in codes("--select", "AG3", "--extend-select", "AG201")} == {
        "AG201",
        "AG301",
    }
    assert "AG201" not in {c for c, _ in codes("--extend-ignore", "AG2")}
    assert ("AG201", "vendor/shop.py") in codes("--exclude", "nothing", "--extend-exclude", "x")


def test_report_and_baseline_take_the_same_exclusions_as_check(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project, {"agent.py": WRITE_TOOL, "vendor/shop.py": WRITE_TOOL})

    def reported(*args: str) -> set[str]:
        done = runner.invoke(app, ["report", str(project), "-f", "json", *args])
        assert done.exit_code == 0, done.output
        return {tool["path"] for tool in json.loads(done.stdout)["tools"]}

    assert reported() == {"agent.py", "vendor/shop.py"}
    assert reported("--exclude", "vendor") == {"agent.py"}
    assert reported("--extend-exclude", "agent.py") == {"vendor/shop.py"}
    baseline = tmp_path / "baseline.json"
    done = runner.invoke(
        app, ["baseline", "create", str(baseline), str(project), "--extend-exclude", "vendor"]
    )
    assert done.exit_code == 0, done.output
    assert "vendor" not in baseline.read_text(encoding="utf-8")
    assert "agent.py" in baseline.read_text(encoding="utf-8")
    done = runner.invoke(
        app, ["baseline", "update", str(baseline), str(project), "--extend-exclude", "vendor"]
    )
    assert "0 added" in done.stdout, done.output


def test_standard_input_is_checked_under_the_stdin_filename(tmp_path: Path) -> None:
    write_project(tmp_path, {"pkg/agent.py": READ_ONLY})
    done = subprocess.run(
        [
            sys.executable, "-m", "agentguard", "check", "-",
            "--stdin-filename", "pkg/agent.py", "--output-format", "concise",
        ],
        input=WRITE_TOOL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "pkg/agent.py:7:12: AG201 " in done.stdout
    assert (tmp_path / "pkg" / "agent.py").read_text() == READ_ONLY  # the file is not touched


def test_fix_accepts_diff_as_its_default_and_show_fixes_lists_them(tmp_path: Path) -> None:
    agent = "def lookup(order_id: str) -> str:  # agentguard: ignore[AG201]\n    return order_id\n"
    write_project(tmp_path, {"agent.py": agent})
    shown = runner.invoke(app, ["fix", str(tmp_path), "--diff"])
    assert shown.exit_code == 1
    assert "+def lookup(order_id: str) -> str:\n" in shown.stdout
    assert runner.invoke(app, ["fix", str(tmp_path), "--diff", "--write"]).exit_code == 2
    written = runner.invoke(app, ["fix", str(tmp_path), "--write", "--show-fixes"])
    assert written.exit_code == 0, written.output
    assert "- agent.py:\n    1 x AG002 (unused-suppression)" in written.stderr
