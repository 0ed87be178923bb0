"""Every fixture project gives exactly the findings its expected-findings.txt lists."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.engine.scan_result import ScanResult

from .conftest import FIXTURES

EXPECTED = "expected-findings.txt"
PROJECTS = sorted(p.parent for p in FIXTURES.glob(f"*/{EXPECTED}"))


def finding_lines(result: ScanResult) -> list[str]:
    return sorted(f"{f.code} {f.path}:{f.span.line} {f.tool or '-'}" for f in result.findings)


def expected_lines(project: Path) -> list[str]:
    text = (project / EXPECTED).read_text(encoding="utf-8")
    return sorted(
        line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()
    )


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_fixture_gives_exactly_its_expected_findings(project: Path) -> None:
    result = scan([project], load_config([project]))
    assert finding_lines(result) == expected_lines(project)


def test_a_dropped_result_frees_its_project_model_without_the_collector() -> None:
    # A large scan freezes the model (speed.FREEZE_AFTER_FILES): a reference cycle in it
    # would then keep the whole model alive for as long as the process runs.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        result = scan([FIXTURES], load_config([FIXTURES]), with_fixes=True)
        assert result.findings
        model = weakref.ref(result.project)
        del result
        assert model() is None
    finally:
        if was_enabled:
            gc.enable()


def test_shop_agent_reproduces_the_duplicate_order_incident() -> None:
    project = FIXTURES / "shop-agent"
    result = scan([project], load_config([project]))
    codes = {(f.code, f.tool) for f in result.findings}
    # The incident: a create_order POST with no key, behind a global retry.
    assert ("AG201", "create_order") in codes
    assert ("AG101", "create_order") in codes
    assert any(code == "AG901" for code, _ in codes)
    # Read-only tools are never blamed for declarations, keys or retries.
    for code, tool in codes:
        if tool in {"order_status", "orders_for_cart"}:
            assert not code.startswith(("AG1", "AG2", "AG9")), (code, tool)
