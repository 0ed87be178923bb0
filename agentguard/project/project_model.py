"""The project model: the project index with the frozen results of the passes over it.

``build_project`` indexes the per-file facts (``agentguard.project.index``) and runs the
passes, each declaring the passes it reads (``agentguard.project.passes``), in the order
those declarations give: tool discovery, effect inference, the schema files' tools, the
retry constructs and the ledger index. Checks read the model and never walk syntax.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard.diagnostics import ScanProblem
from agentguard.facts.module_facts import ModuleFacts
from agentguard.knowledge.catalog import Catalog
from agentguard.project.built_agents import AgentConstruction
from agentguard.project.declared_schemas import SchemaFiles
from agentguard.project.effects import EffectInference, EffectSummaries
from agentguard.project.index import CallSite, ProjectIndex
from agentguard.project.ledger_writes import LedgerIndex, LedgerWrites
from agentguard.project.passes import Pass, PassResults, ScanInputs, run_passes
from agentguard.project.retries import RetryDetection
from agentguard.project.schema_tools import SchemaTools
from agentguard.project.tool_discovery import ToolDiscovery
from agentguard.project.tool_facts import Effect, RetryUse
from agentguard.project.tool_index import ToolIndex

if TYPE_CHECKING:
    from agentguard.config import Config
    from agentguard.facts.schema_files.detect import SchemaIssue

__all__ = ["PROJECT_PASSES", "CallSite", "FrozenProjectError", "ProjectModel", "build_project"]

# The passes whose results the model holds (each brings the passes it needs).
PROJECT_PASSES: tuple[type[Pass[Any]], ...] = (
    AgentConstruction,
    SchemaFiles,
    ToolDiscovery,
    EffectInference,
    SchemaTools,
    RetryDetection,
    LedgerWrites,
)


class FrozenProjectError(AttributeError):
    """An attribute of a built project model was assigned: the passes are over."""


class ProjectModel(ToolIndex):
    """The project as the rules read it: the index, every tool (its effects and the schema
    files' declarations included) and the results of the passes, frozen."""

    results: PassResults
    problems: list[ScanProblem]
    config: Config | None
    schema_files: list[tuple[Path, str]]
    schema_issues: list[SchemaIssue]
    effect_summaries: EffectSummaries
    retries: tuple[RetryUse, ...]
    ledger: LedgerIndex

    @classmethod
    def built(cls, index: ProjectIndex, results: PassResults) -> ProjectModel:
        """The model of ``index`` holding ``results`` (which hold ``PROJECT_PASSES``')."""
        merged = results[SchemaTools]
        model = cls.over(index, merged.tools)
        inputs = results.inputs
        model.__dict__.update(
            results=results,
            problems=[*inputs.problems, *merged.skipped],
            config=inputs.config,
            schema_files=list(inputs.schema_files),
            schema_issues=list(merged.issues),
            effect_summaries=results[EffectInference].summaries,
            retries=results[RetryDetection].uses,
            ledger=results[LedgerWrites],
            _frozen=True,
        )
        return model

    def __setattr__(self, name: str, value: object) -> None:
        if getattr(self, "_frozen", False):
            raise FrozenProjectError(f"the project model is frozen after build: cannot set {name}")
        super().__setattr__(name, value)

    def effects_of(self, qualname: str) -> list[Effect]:
        """The effects ``qualname`` has or reaches through its calls (worked out on first
        demand for a function no tool reaches)."""
        return self.effect_summaries.of(qualname)

    def retry_uses(self) -> Iterator[RetryUse]:
        """The constructs that re-run code (the retry pass)."""
        return iter(self.retries)

    def ledger_index(self) -> LedgerIndex:
        """The ledger pass's facts (record writes, recording functions, executors)."""
        return self.ledger

    def effects_in_orders(self, qualname: str, orders: tuple[int, int]) -> list[Effect]:
        """Effects reached from the calls of ``qualname`` whose order is within ``orders``."""
        start, end = orders
        result = []
        for effect in self.effects_of(qualname):
            first = effect.chain[0]
            if first.location is None:
                continue
            for call in self.calls_in(qualname):
                if start <= call.order < end and call.span == first.location.span:
                    result.append(effect)
                    break
        return result


def build_project(
    modules: Iterable[ModuleFacts],
    catalog: Catalog,
    *,
    config: Config | None = None,
    problems: Sequence[ScanProblem] = (),
    schema_files: Sequence[tuple[Path, str]] = (),
    passes: Sequence[type[Pass[Any]]] = (),
) -> ProjectModel:
    """The project model: the modules indexed, then ``PROJECT_PASSES`` and ``passes`` (the
    rules' judgements), with the passes they need, run over the index in the order their
    declarations give. The schema files skipped (too big, binary, unreadable) join
    ``problems``."""
    index = ProjectIndex(modules, catalog)
    inputs = ScanInputs(config, tuple(schema_files), tuple(problems))
    results = run_passes(index, (*PROJECT_PASSES, *passes), inputs)
    # every pass has run: the effect summaries it asked for are all there is
    results[EffectInference].summaries.seal()
    return ProjectModel.built(index, results)
