"""Every output of a run names a file the same way: relative to the repository root (the git
top level, else the config's folder, else the working directory), whether the scan starts
at the top of the repository or inside a folder of it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from typer.testing import CliRunner

from agentguard.cli import app

AGENT = """\
import requests
from langchain_core.tools import tool


@tool
def create_order(cart_id: str) -> str:
    \"\"\"Place an order for the cart.\"\"\"
    try:
        response = requests.post("https://shop.example/orders", json={"cart": cart_id})
    except Exception as exc:
        return str(exc)
    return response.text
"""

STATUS = """\
import requests
from langchain_core.tools import tool


@tool
def order_status(order_id: str) -> str:
    \"\"\"Look up an order.\"\"\"
    return requests.get(f"https://shop.example/orders/{order_id}").text


LIMIT = 3  # agentguard: ignore[AG201]
"""

SHOWN = {"src/shop/orders.py", "src/shop/status.py"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository (a `.git` folder is all it takes) with its code in src/ and no config."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "shop").mkdir(parents=True)
    (root / "src" / "shop" / "orders.py").write_text(AGENT, encoding="utf-8")
    (root / "src" / "shop" / "status.py").write_text(STATUS, encoding="utf-8")
    return root


def run(*args: str, code: int | None = 1) -> str:
    """agentguard, run in the working directory; its stdout."""
    done = CliRunner().invoke(app, [*args], catch_exceptions=False, env={"NO_COLOR": "1"})
    if code is not None:
        assert done.exit_code == code, done.output
    return done.stdout


# Scanning `src` from the top, and `.` from inside src/: both name the files the same way.
STARTS = [pytest.param("", "src", id="from-the-top"), pytest.param("src", ".", id="inside-src")]


def check(repo: Path, start: str, target: str, fmt: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(repo / start)
    return run("check", target, "--no-cache", "--format", fmt)


def json_paths(data: object) -> set[str]:
    """Every value of a "path" key, anywhere in a JSON document."""
    found: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "path" and isinstance(value, str):
                found.add(value)
            else:
                found |= json_paths(value)
    elif isinstance(data, list):
        for item in data:
            found |= json_paths(item)
    return found


def sarif_uris(data: object) -> list[dict[str, str]]:
    """Every artifactLocation in a SARIF document."""
    found: list[dict[str, str]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "artifactLocation":
                found.append(value)
            else:
                found += sarif_uris(value)
    elif isinstance(data, list):
        for item in data:
            found += sarif_uris(item)
    return found


@pytest.mark.parametrize(("start", "target"), STARTS)
def test_every_check_format_shows_paths_from_the_repository_root(
    repo: Path, start: str, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = check(repo, start, target, "text", monkeypatch)
    located = set(re.findall(r"^(\S+?):\d+:\d+: AG", text, re.M))
    assert located == SHOWN
    assert set(re.findall(r"\((src/[^:]+):\d+:\d+\)", text)) <= SHOWN  # evidence steps

    data = json.loads(check(repo, start, target, "json", monkeypatch))
    assert {f["path"] for f in data["findings"]} == SHOWN
    assert json_paths(data) == SHOWN  # evidence, related, fix edits, tools
    assert {s.split(":")[0] for t in data["tools"] for s in t["sources"]} == SHOWN

    github = check(repo, start, target, "github", monkeypatch)
    assert set(re.findall(r"file=([^,]+),", github)) == SHOWN

    junit = ET.fromstring(check(repo, start, target, "junit", monkeypatch))
    assert {case.get("file") for case in junit.iter("testcase")} == SHOWN

    markdown = check(repo, start, target, "markdown", monkeypatch)
    assert set(re.findall(r"\| `([^`:]+):\d+:\d+` \|", markdown)) == SHOWN


@pytest.mark.parametrize(("start", "target"), STARTS)
def test_sarif_uris_are_relative_to_srcroot_at_the_repository_root(
    repo: Path, start: str, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = json.loads(check(repo, start, target, "sarif", monkeypatch))
    (sarif_run,) = data["runs"]
    srcroot = sarif_run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert srcroot == repo.resolve().as_uri() + "/"
    base = Path(unquote(urlparse(srcroot).path))
    locations = sarif_uris(data)
    assert locations
    for location in locations:
        assert location["uriBaseId"] == "%SRCROOT%"
        assert (base / unquote(location["uri"])).is_file(), location
    assert {loc["uri"] for loc in locations} == SHOWN


@pytest.mark.parametrize(("start", "target"), STARTS)
def test_report_paths_and_link_base_links_point_at_repository_files(
    repo: Path, start: str, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / start)
    base = "https://example.org/acme/shop/blob/abc123"
    markdown = run("report", target, "--link-base", base, code=0)
    links = set(re.findall(rf"\({re.escape(base)}/([^)#]+)#L\d+\)", markdown))
    assert links == SHOWN
    html = run("report", target, "--format", "html", "--link-base", base, code=0)
    assert set(re.findall(rf'href="{re.escape(base)}/([^"#]+)#L\d+"', html)) == SHOWN
    report = json.loads(run("report", target, "--format", "json", code=0))
    assert {t["path"] for t in report["tools"]} == SHOWN


def test_fingerprints_do_not_depend_on_where_the_scan_starts(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fingerprints(start: str, target: str) -> list[str]:
        data = json.loads(check(repo, start, target, "json", monkeypatch))
        return [f["fingerprint"] for f in data["findings"]]

    assert fingerprints("", "src") == fingerprints("src", ".")


def test_a_git_file_marks_a_worktree_or_submodule_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / ".git").rmdir()
    (repo / ".git").write_text("gitdir: ../elsewhere/.git/worktrees/repo\n", encoding="utf-8")
    monkeypatch.chdir(repo / "src")
    data = json.loads(run("check", ".", "--no-cache", "--format", "json"))
    assert {f["path"] for f in data["findings"]} == SHOWN


def test_outside_a_repository_the_config_folder_is_the_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / ".git").rmdir()
    (repo / "src" / "agentguard.toml").write_text('fail-on = "error"\n', encoding="utf-8")
    monkeypatch.chdir(repo)
    data = json.loads(run("check", "src", "--no-cache", "--format", "json"))
    assert {f["path"] for f in data["findings"]} == {"shop/orders.py", "shop/status.py"}


def test_outside_a_repository_without_config_the_working_directory_is_the_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / ".git").rmdir()
    monkeypatch.chdir(repo)
    data = json.loads(run("check", "src", "--no-cache", "--format", "json"))
    assert {f["path"] for f in data["findings"]} == SHOWN
    sarif = json.loads(run("check", "src", "--no-cache", "--format", "sarif"))
    assert sarif["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == (
        repo.resolve().as_uri() + "/"
    )


def test_config_patterns_stay_relative_to_the_config_folder(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The config sits in src/: its patterns name files from there, as ruff reads them, while
    # the outputs still name them from the repository root.
    (repo / "src" / "pyproject.toml").write_text(
        '[tool.agentguard]\nper-file-ignores = { "shop/status.py" = ["ALL"] }\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(repo)
    data = json.loads(run("check", "src", "--no-cache", "--format", "json"))
    # (what stays in status.py is AG002: an unused suppression is reported regardless)
    shown = {f["path"] for f in data["findings"] if f["code"] != "AG002"}
    assert shown == {"src/shop/orders.py"}


def baseline_of_src(repo: Path) -> tuple[Path, dict[str, Any]]:
    """`agentguard baseline create FILE src` run at the top of the repository: the file and
    what it holds."""
    baseline = repo / "agentguard-baseline.json"
    run("baseline", "create", str(baseline), "src", code=0)
    return baseline, json.loads(baseline.read_text(encoding="utf-8"))


def test_a_baseline_serves_a_scan_from_the_top_and_from_a_folder(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    baseline, written = baseline_of_src(repo)
    assert written["paths"] == "repository-root"
    assert {e["path"] for e in written["entries"]} == SHOWN
    monkeypatch.chdir(repo / "src")
    assert run("check", ".", "--no-cache", "--baseline", str(baseline), code=0)


def test_a_baseline_with_scan_relative_paths_still_matches_and_is_rewritten(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As agentguard 0.1.0 wrote it for `agentguard baseline create FILE src`: paths relative
    # to src/, and no "paths" key.
    monkeypatch.chdir(repo)
    baseline, data = baseline_of_src(repo)
    del data["paths"]
    for entry in data["entries"]:
        entry["path"] = entry["path"].removeprefix("src/")
    baseline.write_text(json.dumps(data), encoding="utf-8")

    done = CliRunner().invoke(app, ["check", "src", "--no-cache", "--baseline", str(baseline)])
    assert done.exit_code == 0, done.output
    assert "relative to the scanned folder" in done.stderr
    assert "baseline update" in done.stderr
    assert "stale baseline entry" not in done.stderr

    updated = CliRunner().invoke(app, ["baseline", "update", str(baseline), "src"])
    assert updated.exit_code == 0, updated.output
    assert "they are rewritten relative to the repository root" in updated.stderr
    rewritten = json.loads(baseline.read_text(encoding="utf-8"))
    assert rewritten["paths"] == "repository-root"
    assert {e["path"] for e in rewritten["entries"]} == SHOWN
    again = CliRunner().invoke(app, ["check", "src", "--no-cache", "--baseline", str(baseline)])
    assert again.exit_code == 0 and "relative to the scanned folder" not in again.stderr


def test_a_baseline_with_an_unknown_path_base_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline = repo / "agentguard-baseline.json"
    baseline.write_text('{"version": 1, "paths": "elsewhere", "entries": []}', encoding="utf-8")
    monkeypatch.chdir(repo)
    done = CliRunner().invoke(app, ["check", "src", "--no-cache", "--baseline", str(baseline)])
    assert done.exit_code == 2
    assert 'unknown "paths"' in done.stderr


def test_the_fix_diff_names_files_from_the_repository_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "src")
    diff = run("fix", ".", code=1)
    assert "--- a/src/shop/status.py\n+++ b/src/shop/status.py\n" in diff
    if shutil.which("git") is None:
        return
    patch = repo / "fixes.patch"
    patch.write_text(diff, encoding="utf-8")
    (repo / ".git").rmdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    applied = subprocess.run(
        ["git", "apply", "--check", str(patch)], cwd=repo, capture_output=True, text=True
    )
    assert applied.returncode == 0, applied.stderr


def test_several_folders_are_shown_from_the_one_repository_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scan root is the first folder (src/); tools/ lies outside it.
    (repo / "tools").mkdir()
    (repo / "tools" / "refunds.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(repo)
    data = json.loads(run("check", "src", "tools", "--no-cache", "--format", "json"))
    assert {f["path"] for f in data["findings"]} == {*SHOWN, "tools/refunds.py"}


def test_a_file_outside_the_repository_is_shown_by_its_absolute_path(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere" / "refunds.py"
    elsewhere.parent.mkdir()
    elsewhere.write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(repo)
    data = json.loads(run("check", "src", str(elsewhere), "--no-cache", "--format", "sarif"))
    locations = {json.dumps(loc, sort_keys=True) for loc in sarif_uris(data)}
    assert json.dumps({"uri": elsewhere.resolve().as_uri()}) in locations
    assert all("uriBaseId" in loc for loc in sarif_uris(data) if "elsewhere" not in loc["uri"])
