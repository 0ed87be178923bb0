"""Evidence chains are structured: each step names its kind, caller, callee and location,
and the text every output prints is rendered from those fields."""

from __future__ import annotations

import textwrap

import pytest

from agentguard.output.json_format import document
from agentguard.project.project_model import FrozenProjectError
from tests.conftest import ScanFiles

AGENT = textwrap.dedent(
    '''
    import requests
    from langchain_core.tools import tool


    class Orders:
        def place(self, cart_id: str) -> dict:
            return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()


    def submit(cart_id: str) -> dict:
        return Orders().place(cart_id)


    @tool
    def create_order(cart_id: str) -> dict:
        """Create an order."""
        return submit(cart_id)
    '''
)


def test_json_evidence_names_caller_and_callee_of_each_step(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT}, select=("AG201",))
    [finding] = document(result)["findings"]
    steps = [(s["kind"], s["caller"], s["callee"], s["line"]) for s in finding["evidence"]]
    assert steps == [
        ("tool", None, None, 16),
        ("call", "create_order", "submit", 18),
        ("call", "submit", "Orders.place", 12),
        ("sink", None, "requests.post", 8),
    ]
    assert [s["label"] for s in finding["evidence"]][1:] == [
        "create_order calls submit",
        "submit calls Orders.place",
        "calls requests.post",
    ]
    assert "via `submit` -> `Orders.place`" in finding["message"]


def test_the_built_project_model_is_frozen(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": AGENT})
    assert [t.name for t in result.project.tools] == ["create_order"]
    with pytest.raises(FrozenProjectError):
        result.project.tools = []
