"""The runtime stays light: importing it pulls in no analyser or CLI dependency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_runtime_loads_neither_libcst_typer_nor_rich() -> None:
    code = (
        "import json, sys\n"
        "import agentguard.runtime, agentguard.runtime.testing\n"
        "from agentguard.runtime import Runtime, SQLiteLedger, guarded\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('libcst', 'typer', 'rich', 'requests', 'httpx', 'aiohttp', 'urllib3', 'psycopg'))))\n"
        "print(agentguard.runtime.__file__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True
    )
    loaded_line, location = completed.stdout.strip().splitlines()
    assert json.loads(loaded_line) == []
    assert location.startswith(str(ROOT))
