"""The ledger index works out call edges only for the functions that may reach a record
writer: it must find the recording helpers that every function's edges find."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.project.ledger_writes import propagate_recording
from agentguard.project.project_model import ProjectModel

from .conftest import FIXTURES, ScanFiles

PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def recording_over_every_edge(project: ProjectModel) -> dict[str, str]:
    """The propagation with every function a candidate, not only those that may reach a
    recording one."""
    recording: dict[str, str] = {}
    for write in project.ledger_index().writes:
        if write.function:
            recording.setdefault(write.function, write.how)
    propagate_recording(project, recording, project.functions)
    return recording


@pytest.mark.parametrize("root", PROJECTS, ids=[p.name for p in PROJECTS])
def test_recording_helpers_are_those_every_edge_gives(root: Path) -> None:
    project = scan([root], load_config([root])).project
    assert project.ledger_index().recording == recording_over_every_edge(project)


def test_a_chain_of_helpers_and_a_name_two_modules_define(scan_files: ScanFiles) -> None:
    # ``app.jobs.Runner.go`` is both a method in app/jobs/__init__.py and a function in
    # app/jobs/Runner.py: the calls of both are resolved for one of the two modules.
    files = {
        "pyproject.toml": '[tool.agentguard]\nledger-functions = ["app.audit.record"]\n',
        "app/__init__.py": "",
        "app/audit.py": "def record(*args: object) -> None: ...\n",
        "app/helpers.py": (
            "from app.audit import record\n\n"
            "def log_call(name: str) -> None:\n"
            "    record(name)\n\n"
            "def start(name: str) -> None:\n"
            "    log_call(name)\n"
        ),
        "app/jobs/__init__.py": (
            "class Runner:\n    def go(self, name: str) -> None:\n        print(name)\n"
        ),
        "app/jobs/Runner.py": (
            "from app.helpers import start\n\ndef go(name: str) -> None:\n    start(name)\n"
        ),
        "agent.py": (
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from app.jobs.Runner import go\n\n"
            "def prepare(cart_id: str) -> None:\n"
            "    go(cart_id)\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            "    prepare(cart_id)\n"
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
        ),
    }
    project = scan_files(files).project
    recording = project.ledger_index().recording
    assert recording == recording_over_every_edge(project)
    assert project.functions["app.jobs.Runner.go"][1].path == "app/jobs/__init__.py"
    assert {"app.helpers.start", "app.jobs.Runner.go", "agent.prepare"} <= set(recording)
