"""Bad input is reported with its file and reason; the scan goes on; nothing is executed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine import parallel
from agentguard.engine.pipeline import scan

from .conftest import ScanFiles, write_project

runner = CliRunner()

WRITE_TOOL = (
    "import requests\n"
    "from langchain_core.tools import tool\n\n"
    "@tool\n"
    "def create_order(cart_id: str) -> dict:\n"
    '    """Create an order."""\n'
    '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
)


def test_syntax_error_gives_ag000_and_the_scan_goes_on(scan_files: ScanFiles) -> None:
    result = scan_files(
        {"broken.py": "@tool\ndef create_order(:\n    pass\n", "agent.py": WRITE_TOOL}
    )
    codes = {(f.code, f.path) for f in result.findings}
    assert ("AG000", "broken.py") in codes
    assert ("AG201", "agent.py") in codes
    parse_error = next(f for f in result.findings if f.code == "AG000")
    assert parse_error.span.line == 2
    assert "parse" in parse_error.message.lower()


def test_non_utf8_binary_and_oversized_files_are_skipped_with_a_reason(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project, {"agent.py": WRITE_TOOL})
    (project / "latin1.py").write_bytes("TOOL_NAME = 'caf\xe9'\n".encode("latin-1"))
    (project / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (project / "huge.py").write_text("x = 1\n" * 50_000)
    config = load_config([project])
    config.max_file_size = 100_000
    result = scan([project], config)
    reasons = {p.path: p.reason for p in result.problems}
    assert "UTF-8" in reasons["latin1.py"] or "decode" in reasons["latin1.py"]
    assert "binary" in reasons["blob.py"]
    assert "max-file-size" in reasons["huge.py"]
    assert any(f.code == "AG201" for f in result.findings)


def test_unreadable_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    write_project(project, {"agent.py": WRITE_TOOL, "secret.py": "x = 1\n"})
    original = open

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        # chmod 0 does not stop root (CI runs as root): fail the read the way the OS would.
        if os.fspath(file).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return original(file, *args, **kwargs)

    monkeypatch.setattr(parallel, "open", guarded_open, raising=False)
    result = scan([project], load_config([project]))
    assert any(p.path == "secret.py" and "permission" in p.reason for p in result.problems)
    assert any(f.code == "AG201" for f in result.findings)


def test_symlink_loops_are_reported_and_skipped(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project, {"agent.py": WRITE_TOOL})
    (project / "loop.py").symlink_to(project / "loop.py")
    (project / "folder").symlink_to(project)  # a folder link back to the root
    result = scan([project], load_config([project]))
    assert any(p.path.endswith("loop.py") for p in result.problems)
    assert sum(1 for f in result.findings if f.code == "AG201") == 1


def check_in_a_process(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``agentguard check`` as a user runs it, with a timeout: a regression that blocks
    fails the test instead of hanging the suite."""
    return subprocess.run(
        [sys.executable, "-m", "agentguard", "check", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=project,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_named_pipes_are_named_not_read(tmp_path: Path) -> None:
    # Reading a named pipe waits for a writer forever: a check must not.
    project = tmp_path / "project"
    write_project(project, {"agent.py": WRITE_TOOL})
    os.mkfifo(project / "pipe.py")
    os.mkfifo(project / "tools.json")
    for extra in ([], ["--no-cache"]):
        done = check_in_a_process(project, str(project), "--format", "json", *extra)
        assert done.returncode == 1, done.stderr
        report = json.loads(done.stdout)
        reasons = {p["path"]: p["reason"] for p in report["problems"]}
        assert "not a regular file" in reasons["pipe.py"]
        assert "not a regular file" in reasons["tools.json"]
        assert any(f["code"] == "AG201" for f in report["findings"])
    named = check_in_a_process(project, str(project / "pipe.py"))
    assert "pipe.py: not a regular file" in named.stdout + named.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="file names as raw bytes")
def test_a_file_name_that_is_not_utf8_is_named_and_the_check_goes_on(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project, {"agent.py": WRITE_TOOL})
    with open(os.path.join(os.fsencode(project), b"caf\xe9.py"), "wb") as odd:
        odd.write(b"x = 1\n")
    for extra in ([], ["--no-cache"]):  # the cache keys paths too
        done = check_in_a_process(project, str(project), *extra)
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        assert "caf\\xe9.py: file name is not valid UTF-8" in done.stdout
        assert "AG201" in done.stdout


def test_a_broken_symlink_is_named_by_its_path_in_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project, {"agent.py": WRITE_TOOL})
    (project / "pkg").mkdir()
    (project / "pkg" / "gone.py").symlink_to(tmp_path / "nowhere.py")
    result = scan([project], load_config([project]))
    assert [(p.path, p.reason) for p in result.problems] == [
        ("pkg/gone.py", "broken symlink or symlink loop")
    ]


def test_invalid_config_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(
        project,
        {
            "agent.py": WRITE_TOOL,
            "pyproject.toml": '[tool.agentguard]\nfail-on = "sometimes"\n',
        },
    )
    result = runner.invoke(app, ["check", str(project)])
    assert result.exit_code == 2
    assert "pyproject.toml" in result.output
    assert "fail-on" in result.output


def test_unknown_config_key_is_named(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project, {"agentguard.toml": 'selekt = ["AG2"]\n'})
    result = runner.invoke(app, ["check", str(project)])
    assert result.exit_code == 2
    assert "agentguard.toml" in result.output and "selekt" in result.output


def test_broken_toml_exits_2(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project, {"agentguard.toml": "select = [\n"})
    result = runner.invoke(app, ["check", str(project)])
    assert result.exit_code == 2
    assert "invalid TOML" in result.output


def test_missing_path_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "no such file" in result.output


def test_scanned_code_is_never_imported_or_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    payload = (
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n"
        "raise SystemExit('imported')\n"
    )
    project = tmp_path / "project"
    write_project(
        project,
        {
            "agent.py": payload + WRITE_TOOL,
            "conftest.py": payload,
            "tools/__init__.py": payload,
            "setup.py": payload,
        },
    )
    before = set(sys.modules)
    result = scan([project], load_config([project]))
    assert not marker.exists()
    assert not {m for m in set(sys.modules) - before if m in {"agent", "tools", "setup"}}
    assert result.files_scanned == 4


def test_a_path_with_no_file_to_check_is_a_usage_error(tmp_path: Path) -> None:
    # A wrong `paths:` in CI must not pass as a clean scan of nothing.
    (tmp_path / "empty").mkdir()
    write_project(tmp_path / "only-excluded", {"build/agent.py": WRITE_TOOL})
    for folder in ("empty", "only-excluded"):
        done = check_in_a_process(tmp_path, folder)
        assert done.returncode == 2, done.stdout
        assert (
            f"error: {folder}: no Python, TypeScript, JavaScript or tool-schema file to check"
            in done.stderr
        )
        assert "Traceback" not in done.stderr


def test_a_symlink_loop_given_as_the_path_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    loop = check_in_a_process(tmp_path, "a")
    assert loop.returncode == 2
    assert "error: a: symlink loop" in loop.stderr
    assert "Traceback" not in loop.stderr
    broken = check_in_a_process(tmp_path, "gone")
    assert broken.returncode == 2
    assert "error: gone: broken symlink" in broken.stderr


def test_a_folder_symlink_loop_is_named_not_skipped_in_silence(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project, {"agent.py": WRITE_TOOL})
    (project / "pkg").mkdir()
    (project / "pkg" / "again").symlink_to(project / "pkg")
    done = check_in_a_process(project, ".")
    assert done.returncode == 1, done.stderr
    assert "skipped pkg/again: symlink loop, not followed" in done.stdout
    assert "1 skipped" in done.stdout.splitlines()[-1]


def test_a_folder_that_cannot_be_listed_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    write_project(project, {"helpers.py": "VERSION = 1\n", "private/tools.py": WRITE_TOOL})
    original = os.scandir

    def guarded_scandir(path: Any) -> Any:
        # chmod 0 does not stop root (CI runs as root): fail the listing as the OS would.
        if os.fspath(path).endswith("private"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return original(path)

    monkeypatch.setattr(os, "scandir", guarded_scandir)
    result = runner.invoke(app, ["check", str(project), "--no-cache"])
    assert result.exit_code == 1, result.output
    assert "private:1:1: AG000 Could not read this file: folder cannot be listed: " in (
        result.output
    )
    assert "permission denied" in result.output
