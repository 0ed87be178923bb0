"""The project's passes run in the order their declarations give, read only what they
declare (the rules too), and are listed in docs/architecture.md as they are declared."""

from __future__ import annotations

from typing import Any

import pytest

from agentguard.checks.base import Invalid, Rule, all_rules, passes_read
from agentguard.project.built_agents import AgentConstruction
from agentguard.project.declared_schemas import SchemaFiles
from agentguard.project.effects import EffectInference
from agentguard.project.index import ProjectIndex
from agentguard.project.ledger_writes import LedgerWrites
from agentguard.project.passes import (
    Pass,
    PassOrderError,
    PassResults,
    ScanInputs,
    order_passes,
    pass_table,
    run_passes,
)
from agentguard.project.project_model import PROJECT_PASSES, build_project
from agentguard.project.retries import RetryDetection
from agentguard.project.schema_tools import SchemaTools
from agentguard.project.tool_discovery import ToolDiscovery

from .conftest import ROOT, ScanFiles

AGENT = '''
import requests
from langchain_core.tools import tool

@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    return requests.post("https://pay.example/refunds", json={"id": order_id}).text
'''


def test_each_pass_runs_after_the_passes_it_needs() -> None:
    order = order_passes(PROJECT_PASSES)
    assert set(order) == set(PROJECT_PASSES)
    for position, step in enumerate(order):
        assert all(order.index(need) < position for need in step.needs), step.__name__


def test_asking_for_one_pass_brings_what_it_needs() -> None:
    assert order_passes([LedgerWrites]) == (
        AgentConstruction,
        SchemaFiles,
        ToolDiscovery,
        EffectInference,
        SchemaTools,
        LedgerWrites,
    )


class _First(Pass[int]):
    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> int:
        return 1


class _Second(Pass[int]):
    needs: tuple[type[Pass[Any]], ...] = (_First,)

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> int:
        return results[_First] + 1


class _Sneaky(Pass[int]):
    needs: tuple[type[Pass[Any]], ...] = (_First,)

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> int:
        return results[_Second]  # read without being declared


def test_a_pass_reads_the_results_it_needs(scan_files: ScanFiles) -> None:
    index = scan_files({"agent.py": AGENT}).project
    results = run_passes(index, [_Second], ScanInputs())
    assert results.passes() == (_First, _Second)
    assert results[_Second] == 2


def test_a_pass_cannot_read_a_result_it_did_not_declare(scan_files: ScanFiles) -> None:
    index = scan_files({"agent.py": AGENT}).project
    with pytest.raises(KeyError, match="_Sneaky reads _Second without needing it"):
        run_passes(index, [_Second, _Sneaky], ScanInputs())


def test_passes_that_need_each_other_are_refused() -> None:
    class Loop(Pass[int]):
        @classmethod
        def run(cls, index: ProjectIndex, results: PassResults) -> int:
            return 0

    class Back(Pass[int]):
        needs: tuple[type[Pass[Any]], ...] = (Loop,)

        @classmethod
        def run(cls, index: ProjectIndex, results: PassResults) -> int:
            return 0

    Loop.needs = (Back,)
    with pytest.raises(PassOrderError, match="Loop -> Back -> Loop"):
        order_passes([Loop])


def test_the_built_model_holds_every_pass_result(scan_files: ScanFiles) -> None:
    project = scan_files({"agent.py": AGENT}).project
    assert project.results.passes() == order_passes((*PROJECT_PASSES, *passes_read(all_rules())))
    (tool,) = project.tools
    assert tool.name == "refund" and tool.writes()
    assert project.results[SchemaTools].tools == (tool,)
    assert project.results[RetryDetection].uses == project.retries


def test_the_architecture_doc_lists_the_passes_as_declared() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    every = (*PROJECT_PASSES, *passes_read(all_rules()))
    assert pass_table(every) in doc, "update docs/architecture.md's pass table"


INVALID_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-{index}")
    for rule in all_rules()
    for index, example in enumerate(rule.INVALID)
]


@pytest.mark.parametrize(("rule", "example"), INVALID_CASES)
def test_a_rule_declares_every_judgement_it_reads(
    rule: type[Rule], example: Invalid, scan_files: ScanFiles
) -> None:
    """Built with only the passes the rule declares, the model gives the rule the same
    answer: a judgement read without being declared fails here."""
    scanned = scan_files({example.filename: example.code, **example.files}, **example.config)
    full = scanned.project
    minimal = build_project(
        full.modules.values(),
        full.catalog,
        config=full.config,
        problems=full.problems,
        schema_files=full.schema_files,
        passes=rule.reads,
    )
    assert set(minimal.results.passes()) == set(order_passes((*PROJECT_PASSES, *rule.reads)))
    assert list(rule().check(minimal)) == list(rule().check(full))
