"""Which files a scan reads: excludes, .gitignore files and include patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.discovery import discover


def tree(root: Path, files: list[str], pyproject: str = "") -> Path:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n", encoding="utf-8")
    if pyproject:
        (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return root


def scanned(root: Path) -> list[str]:
    return [rel for _, rel in discover([root], load_config([root])).sources]


def test_default_excludes_skip_virtualenvs_and_caches_at_any_depth(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        [
            "agent/tools.py",
            ".venv/lib/site.py",
            "services/billing/venv/lib/pkg.py",
            "web/node_modules/pkg/setup.py",
            "agent/__pycache__/tools.py",
        ],
    )
    assert scanned(root) == ["agent/tools.py"]


def test_exclude_patterns_keep_gitignore_meaning(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        [
            "agent/tools.py",
            "agent/build/generated.py",  # a folder named build: excluded by "build/"
            "agent/build.py",  # a file named build.py: kept
            "proto/orders_pb2.py",  # matched by a glob
            "scripts/migrate.py",  # anchored pattern
            "tools/scripts/run.py",  # not anchored at the root: kept
            "vendored.py",  # a plain name matches a file too
        ],
        '[tool.agentguard]\nexclude = ["build/", "*_pb2.py", "/scripts", "vendored.py"]\n',
    )
    assert scanned(root) == ["agent/build.py", "agent/tools.py", "tools/scripts/run.py"]


def test_a_negated_pattern_re_includes_what_an_earlier_one_excluded(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        ["gen/a.py", "gen/keep.py", "agent/tools.py"],
        '[tool.agentguard]\nexclude = ["gen/*.py", "!gen/keep.py"]\n',
    )
    assert scanned(root) == ["agent/tools.py", "gen/keep.py"]


@pytest.mark.parametrize("respect", [True, False])
def test_a_nested_gitignore_applies_to_its_own_folder(tmp_path: Path, respect: bool) -> None:
    root = tree(
        tmp_path,
        ["agent/tools.py", "agent/scratch.py", "other/scratch.py"],
        "" if respect else "[tool.agentguard]\nrespect-gitignore = false\n",
    )
    (root / "agent" / ".gitignore").write_text("scratch.py\n", encoding="utf-8")
    expected = ["agent/tools.py", "other/scratch.py"]
    if not respect:
        expected = ["agent/scratch.py", *expected]
    assert scanned(root) == expected


def test_include_narrows_the_scan(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        ["agent/tools.py", "agent/prompts.py", "tests/test_tools.py"],
        '[tool.agentguard]\ninclude = ["agent/tools.py", "tests/"]\n',
    )
    assert scanned(root) == ["agent/tools.py", "tests/test_tools.py"]
