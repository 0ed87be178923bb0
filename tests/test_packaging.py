"""The wheel carries everything an installed agentguard reads: the catalogues from the
top-level rules/ folder and the JSON schemas, found without the source tree."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_for_the_wheel() -> None:
    """pyproject.toml lists the packages (the rules/ mapping rules out discovery): a package
    left off would be missing from every installed copy."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"][
            "packages"
        ]
    )
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "agentguard").rglob("__init__.py")
    }
    assert on_disk - listed == set()
    assert "agentguard.catalogues" in listed


@pytest.mark.timeout(180)
def test_installed_wheel_loads_the_catalogues(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    # pip fetches the build backend into an isolated environment: skip where it cannot.
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(wheels)],
        capture_output=True,
        text=True,
        timeout=150,
    )
    if built.returncode != 0:
        pytest.skip(f"cannot build the wheel here: {built.stderr.strip()[-300:]}")
    (wheel,) = wheels.glob("agentguard-*.whl")

    target = tmp_path / "venv"
    venv.create(target, with_pip=False)
    python = target / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # The dependencies come from the running interpreter's site-packages, added as a plain
    # path: its .pth files (an editable agentguard among them) are not run.
    (site / "running_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", "utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        timeout=120,
    )

    probe = textwrap.dedent(
        """
        import importlib.resources, agentguard
        from agentguard.knowledge.catalog import CATALOG_FILES, load_catalog
        from agentguard.config import load_config
        catalog = load_catalog()
        files = importlib.resources.files("agentguard.catalogues")
        print(agentguard.__file__)
        print(sorted(p.name for p in files.iterdir() if p.name.endswith(".yaml")))
        print(bool(catalog.tool_forms["decorator"]("langchain_core.tools.tool")))
        print(catalog.checklist.is_timeout("requests.exceptions.ReadTimeout"))
        """
    )
    shown = subprocess.run(
        [str(python), "-I", "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert shown.returncode == 0, shown.stderr
    where, names, finds_tool, knows_timeouts = shown.stdout.splitlines()
    assert Path(where).is_relative_to(site)
    assert names == str(
        sorted(["checklist.yaml", "effects.yaml", "frameworks.yaml", "retries.yaml"])
    )
    assert finds_tool == "True" and knows_timeouts == "True"
