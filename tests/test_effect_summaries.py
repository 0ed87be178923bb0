"""Effect summaries: worked out during the build for the tools and for what the rules'
judgements ask (a function no tool reaches included), each the summary a run over the whole
project would give; once the build is over, no rule asks for a new one."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.project.built_agents import AgentTable
from agentguard.project.effects import EffectSummaries
from agentguard.report.model import build_report

from .conftest import FIXTURES, ScanFiles

# A tool and a retried function, each reaching a POST through two helpers. No tool
# reaches ``sync_orders``: its summary is asked for by the retry rules, after the model is
# built.
HELPERS = textwrap.dedent(
    '''
    import requests
    from langchain_core.tools import tool
    from tenacity import retry

    def _send(order: dict) -> dict:
        return requests.post("https://shop.example/orders", json=order).json()

    def _submit(order: dict) -> dict:
        return _send(order)

    @tool
    def place_order(order: dict) -> dict:
        """Place an order."""
        return _submit(order)

    def _push(order: dict) -> dict:
        return requests.post("https://shop.example/sync", json=order).json()

    def _forward(order: dict) -> dict:
        return _push(order)

    @retry
    def sync_orders(order: dict) -> dict:
        return _forward(order)
    '''
)


def test_a_helper_of_a_helper_is_found_for_a_tool_and_for_a_retried_function(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"agent.py": HELPERS})
    (tool,) = [t for t in result.project.tools if t.name == "place_order"]
    assert [(e.kind, e.sink) for e in tool.effects] == [("network_write", "requests.post")]
    assert [step.label for step in tool.effects[0].chain] == [
        "place_order calls _submit",
        "_submit calls _send",
        "calls requests.post",
    ]
    retried = [f for f in result.findings if f.code == "AG902"]
    assert [f.span.line for f in retried] == [HELPERS.splitlines().index("@retry") + 1]
    assert "_forward calls _push" in [step.label for step in retried[0].evidence]


# Two paths of the same length from ``b_retried`` to one POST. In the run over every
# function (sorted order), ``b_retried`` is visited before ``c_shared`` has found the POST,
# so the path through ``a_first`` is kept, whatever a tool reaches.
TIE = textwrap.dedent(
    '''
    import requests
    from langchain_core.tools import tool
    from tenacity import retry

    def z_send(order: dict) -> dict:
        return requests.post("https://shop.example/orders", json=order).json()

    def c_shared(order: dict) -> dict:
        return z_send(order)

    def a_first(order: dict) -> dict:
        return z_send(order)

    @tool
    def place_order(order: dict) -> dict:
        """Place an order."""
        return c_shared(order)

    @retry
    def b_retried(order: dict) -> dict:
        c_shared(order)
        return a_first(order)
    '''
)


def test_a_tie_between_two_chains_falls_the_same_way_every_run(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": TIE})
    (finding,) = [f for f in result.findings if f.code == "AG902"]
    assert [step.label for step in finding.evidence[-3:]] == [
        "b_retried calls a_first",
        "a_first calls z_send",
        "calls requests.post",
    ]
    whole = EffectSummaries(result.project, AgentTable(result.project))
    whole.cover(result.project.functions)
    assert result.project.effects_of("agent.b_retried") == whole.of("agent.b_retried")


def test_a_function_no_tool_reaches_has_its_summary_when_the_model_is_built(
    scan_files: ScanFiles,
) -> None:
    project = scan_files({"agent.py": HELPERS}).project
    (effect,) = project.effect_summaries.of("agent.sync_orders")
    assert (effect.kind, effect.sink) == ("network_write", "requests.post")
    assert project.effect_summaries.of("agent.not_a_function") == []
    assert project.effect_summaries.asked_after_build == []


@pytest.mark.parametrize("fixture", sorted(p for p in FIXTURES.iterdir() if p.is_dir()))
def test_no_rule_or_report_asks_for_a_summary_after_the_build(fixture: Path) -> None:
    result = scan([fixture], load_config([fixture]), with_fixes=True)
    build_report(result)
    assert result.project.effect_summaries.asked_after_build == []
