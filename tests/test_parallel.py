"""Fact extraction in worker processes gives byte-identical output at any job count."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine import parallel
from agentguard.engine.pipeline import scan
from agentguard.engine.speed import FactOptions
from agentguard.output import RenderOptions, renderer

from .conftest import FIXTURES, write_project

PROJECTS = sorted(p.parent for p in FIXTURES.glob("*/expected-findings.txt"))


def rendered(project: Path, jobs: int, output_format: str) -> str:
    options = FactOptions(jobs=jobs)
    result = scan([project], load_config([project]), facts=options)
    assert options.stats is not None
    assert options.stats.jobs == jobs  # the pool really ran when asked for
    out = io.StringIO()
    renderer(output_format)(result, out, RenderOptions(color=False, show_source=True))
    return out.getvalue()


@pytest.fixture(autouse=True)
def pool_for_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # Fixtures are small; without this the pool would (rightly) be skipped for them.
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 1)


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_fixture_output_is_identical_at_any_job_count(project: Path, output_format: str) -> None:
    single = rendered(project, 1, output_format)
    assert single.strip()
    for jobs in (2, 3):
        assert rendered(project, jobs, output_format) == single


def test_many_files_with_problems_keep_their_order_across_processes(tmp_path: Path) -> None:
    project = tmp_path / "agent"
    shutil.copytree(
        FIXTURES / "shop-agent", project, ignore=shutil.ignore_patterns(".agentguard_cache")
    )
    (project / ".git").mkdir(exist_ok=True)
    files = {}
    for number in range(40):
        files[f"helpers/h{number:02}.py"] = (
            "import requests\n\n\n"
            f"def submit_{number}(payload):\n"
            f"    return requests.post('https://api.example.com/v{number}', json=payload)\n"
        )
    files["helpers/broken.py"] = "@tool\ndef oops(:\n    pass\n"
    files["helpers/latin.py"] = "# -*- coding: ascii -*-\ntool_name = 'caf\u00e9'\n"
    write_project(project, files)
    outputs = {jobs: rendered(project, jobs, "json") for jobs in (1, 2, 4)}
    assert outputs[2] == outputs[1]
    assert outputs[4] == outputs[1]
    assert "broken.py" in outputs[1]  # the parse problem is reported, in the same place


def test_the_parsed_count_covers_every_file_parsed_here_or_in_a_worker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # --profile prints "parsed N". The tool file is parsed before the pool starts (only
    # it is a seed), the 60 helpers it imports after, here and in the worker.
    project = tmp_path / "agent"
    helpers = {
        f"billing/h{number:02}.py": (
            "import requests\n\n\n"
            f"def submit_{number}(payload):\n"
            f"    return requests.post('https://api.example.com/v{number}', json=payload)\n"
        )
        for number in range(60)
    }
    imports = "".join(f"from billing.h{number:02} import submit_{number}\n" for number in range(60))
    calls = "".join(f"    submit_{number}(payload)\n" for number in range(60))
    tool = (
        f"from langchain_core.tools import tool\n{imports}\n\n"
        f"@tool\ndef settle(payload: dict) -> str:\n{calls}    return 'done'\n"
    )
    write_project(project, {**helpers, "agent/tools.py": tool})
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 24)
    options = FactOptions(jobs=2)
    result = scan([project], load_config([project]), facts=options)
    assert options.stats is not None and options.stats.jobs == 2
    assert options.stats.parsed == len(result.project.modules) == 61


def test_a_pool_is_not_started_for_a_handful_of_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 24)
    options = FactOptions(jobs=2)
    scan([FIXTURES / "shop-agent"], load_config([FIXTURES / "shop-agent"]), facts=options)
    assert options.stats is not None and options.stats.jobs == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_counts_every_file_once(jobs: int) -> None:
    project = FIXTURES / "shop-agent"
    seen: list[tuple[int, int]] = []
    options = FactOptions(jobs=jobs, progress=lambda done, total: seen.append((done, total)))
    result = scan([project], load_config([project]), facts=options)
    files = len(result.project.modules) + len(
        [p for p in result.problems if p.kind == "parse-error"]
    )
    assert sum(done for done, _ in seen) == files
    assert {total for _, total in seen} == {files}


def test_profile_prints_each_phase_and_rule() -> None:
    from typer.testing import CliRunner

    from agentguard.cli import app

    result = CliRunner().invoke(
        app, ["check", str(FIXTURES / "shop-agent"), "--no-cache", "--profile", "--exit-zero"]
    )
    assert result.exit_code == 0, result.output
    for phase in ("discovery", "facts", "project", "rule AG201", "total"):
        assert phase in result.output
