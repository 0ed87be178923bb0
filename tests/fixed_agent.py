"""Running a fixed fixture agent: in a process of its own, with only the project on its path,
so what the fix wrote is what runs (never the network: the scripts patch the HTTP call)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_in_agent(script: str, project: Path, workdir: Path) -> Any:
    """Run ``script`` with ``project`` importable and ``workdir`` as the working directory;
    the JSON its last printed line holds."""
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=workdir,
        env={"PYTHONPATH": str(project), "PATH": "", "HOME": str(workdir)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])
