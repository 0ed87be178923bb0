"""A check whose inputs are unchanged reuses the recorded run; a change that can matter re-links."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine import fact_cache
from agentguard.engine.pipeline import FactOptions, ScanResult, scan


@pytest.fixture
def project(shop_agent: Path) -> Path:
    return shop_agent


def recorded_scan(
    project: Path, cache_dir: Path, select: list[str] | None = None, with_fixes: bool = False
) -> ScanResult:
    options = FactOptions(jobs=1, cache_dir=cache_dir, record_runs=True)
    return scan(
        [project],
        load_config([project]),
        select=select or [],
        facts=options,
        with_fixes=with_fixes,
    )


def lines(result: ScanResult) -> list[str]:
    return [f"{f.code} {f.path}:{f.span.line} {f.tool} {f.message}" for f in result.findings]


def records(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*/runs/*.pickle"))


def test_an_unchanged_tree_reuses_the_recorded_run_even_after_a_fresh_clone(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    assert not first.from_record and first.findings
    for path in project.rglob("*.py"):
        os.utime(path, (1_900_000_000, 1_900_000_000))  # new mtimes, same bytes
    second = recorded_scan(project, cache_dir)
    assert second.from_record
    assert second.project is None  # nothing was linked
    assert lines(second) == lines(first)
    assert second.tools == first.tools > 0
    assert second.python_paths == first.python_paths


def test_one_changed_byte_in_one_file_links_the_project_again(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    flagged = first.findings[0]
    path = project / flagged.path
    # Suppress the first finding: only a real re-check can notice the comment.
    source = path.read_text(encoding="utf-8").splitlines(keepends=True)
    line = source[flagged.span.line - 1].rstrip("\n")
    source[flagged.span.line - 1] = f"{line}  # agentguard: ignore[{flagged.code}]\n"
    path.write_text("".join(source), encoding="utf-8")
    second = recorded_scan(project, cache_dir)
    assert not second.from_record
    assert lines(second) != lines(first)
    assert any(f.code == flagged.code and f.path == flagged.path for f in second.suppressed)


@pytest.fixture
def report(project: Path) -> Path:
    """A module no tool reaches: the prefilter leaves it out."""
    path = project / "reports" / "revenue.py"
    path.parent.mkdir()
    path.write_text("def total(values: list) -> int:\n    return sum(values)\n")
    return path


def test_an_edit_to_code_no_tool_reaches_reuses_the_recorded_run(
    project: Path, report: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    assert "reports/revenue.py" in first.python_paths
    report.write_text("def total(values: list) -> int:\n    return sum(values, 0)\n")
    second = recorded_scan(project, cache_dir)
    assert second.from_record
    assert lines(second) == lines(first)


def test_a_left_out_file_that_becomes_a_tool_links_the_project_again(
    project: Path, report: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    report.write_text(
        "import requests\nfrom langchain_core.tools import tool\n\n\n@tool\n"
        "def publish_revenue(month: str) -> dict:\n"
        '    """Publish the revenue of a month to the finance API."""\n'
        '    return requests.post("https://finance.example/revenue", json={"m": month}).json()\n'
    )
    second = recorded_scan(project, cache_dir)
    assert not second.from_record
    assert second.tools == first.tools + 1
    assert any(f.path == "reports/revenue.py" for f in second.findings)


def test_a_new_file_links_the_project_again(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    recorded_scan(project, cache_dir)
    (project / "notes.py").write_text("NOTES = []\n")
    assert not recorded_scan(project, cache_dir).from_record


def test_switching_back_to_an_earlier_version_reuses_its_record(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    path = project / first.findings[0].path
    original = path.read_bytes()
    path.write_bytes(original + b"\n# another branch\n")
    assert not recorded_scan(project, cache_dir).from_record
    path.write_bytes(original)
    back = recorded_scan(project, cache_dir)
    assert back.from_record
    assert lines(back) == lines(first)


def test_another_selection_or_fix_setting_is_another_run(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    everything = recorded_scan(project, cache_dir)
    only_keys = recorded_scan(project, cache_dir, select=["AG2"])
    assert not only_keys.from_record
    assert {f.code[:3] for f in only_keys.findings} == {"AG2"}
    assert len(only_keys.findings) < len(everything.findings)
    with_edits = recorded_scan(project, cache_dir, with_fixes=True)
    assert not with_edits.from_record
    again = recorded_scan(project, cache_dir, with_fixes=True)
    assert again.from_record and again.fixes_attached
    assert [f.fix for f in again.findings] == [f.fix for f in with_edits.findings]
    assert any(f.fix is not None and f.fix.edits for f in again.findings)


@pytest.mark.parametrize(
    "garbage",
    [b"", b"not a pickle", pickle.dumps({"findings": []}), pickle.dumps(Path("/etc/passwd"))],
    ids=["empty", "text", "wrong-type", "foreign-class"],
)
def test_a_corrupt_record_is_ignored_and_rewritten(
    project: Path, tmp_path: Path, garbage: bytes
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    (record,) = records(cache_dir)
    record.write_bytes(garbage)
    rebuilt = recorded_scan(project, cache_dir)
    assert not rebuilt.from_record
    assert lines(rebuilt) == lines(first)
    assert recorded_scan(project, cache_dir).from_record


def test_a_record_naming_any_other_callable_is_never_run(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    recorded_scan(project, cache_dir)
    (record,) = records(cache_dir)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.mkdir, (str(marker),))

    record.write_bytes(pickle.dumps(Payload()))
    assert not recorded_scan(project, cache_dir).from_record
    assert not marker.exists()


def test_the_cli_prints_the_same_report_from_a_recorded_run(project: Path) -> None:
    runner = CliRunner()
    outputs, notes = [], []
    for _ in range(2):
        result = runner.invoke(
            app, ["check", str(project), "--exit-zero", "--jobs", "1", "-f", "json", "--profile"]
        )
        assert result.exit_code == 0, result.output
        outputs.append(result.stdout)
        notes.append(result.stderr)
    assert "reused" not in notes[0]
    assert "no input changed since a recorded run" in notes[1]
    first, second = (json.loads(text) for text in outputs)
    assert second == first
    assert first["findings"] and first["tools"]
    assert records(project / fact_cache.CACHE_DIR_NAME)
    text_runs = [
        runner.invoke(app, ["check", str(project), "--exit-zero", "--jobs", "1"]).stdout
        for _ in range(2)
    ]
    assert text_runs[0] == text_runs[1]
    assert "fix available" in text_runs[1]  # offers come from the record too


def test_no_cache_records_nothing(project: Path) -> None:
    result = CliRunner().invoke(app, ["check", str(project), "--exit-zero", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert not (project / fact_cache.CACHE_DIR_NAME).exists()
