"""The project model: the project index with the results of the passes over it (tools,
their declarations and effect summaries, retries, the ledger-write index).

Built from per-file facts (``agentguard.facts``) and schema documents by ``build_project``,
whose passes run in order (index the modules, discover tools, infer effects, merge schema
tools, find retries) and then freeze the model; checks read it and never walk syntax
themselves. The index is ``agentguard.project.index``; the passes live in
``agentguard.project.tools``, ``.effects``, ``.schema_tools`` and ``.retries``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from agentguard.diagnostics import ScanProblem
from agentguard.facts.module_facts import ModuleFacts
from agentguard.knowledge.catalog import Catalog
from agentguard.project.index import CallSite, ProjectIndex
from agentguard.project.tool_facts import Effect, RetryUse, ToolFacts

if TYPE_CHECKING:
    from agentguard.config import Config
    from agentguard.facts.schema_files.detect import SchemaIssue
    from agentguard.project.effects import EffectSummaries
    from agentguard.project.ledger_writes import LedgerIndex

__all__ = ["CallSite", "FrozenProjectError", "ProjectModel", "build_project"]

Derived = TypeVar("Derived")


class FrozenProjectError(AttributeError):
    """An attribute of a built project model was assigned: the passes are over."""


class ProjectModel(ProjectIndex):
    """The project's facts, built by ``build_project``'s passes and frozen after them.

    The constructor runs the first pass only (indexing the modules); discovery, effect
    inference, schema tools and retries are passes of their own, run by ``build_project``.
    """

    def __init__(self, modules: Iterable[ModuleFacts], catalog: Catalog) -> None:
        super().__init__(modules, catalog)
        self.tools: list[ToolFacts] = []
        self.problems: list[ScanProblem] = []
        self.config: Config | None = None
        self.schema_files: list[tuple[Path, str]] = []
        self.schema_issues: list[
            SchemaIssue
        ] = []  # filled by agentguard.project.schema_tools (AG001)
        # Set by the passes of ``build_project``:
        self.effect_summaries: EffectSummaries | None = None
        self.retries: tuple[RetryUse, ...] = ()
        self.ledger: LedgerIndex | None = None
        self._frozen = False

    def __setattr__(self, name: str, value: object) -> None:
        if getattr(self, "_frozen", False):
            raise FrozenProjectError(f"the project model is frozen after build: cannot set {name}")
        super().__setattr__(name, value)

    def freeze(self) -> None:
        """End of build: no attribute may be assigned from now on."""
        self._frozen = True

    def once(self, derive: Callable[[ProjectModel], Derived]) -> Derived:
        """``derive(self)``, computed on the first call after the build and reused after:
        for a whole-project answer that several rules, or one rule per tool or per finding,
        ask for (the answer must not be changed by whoever reads it). Before the build is
        over the model still changes, so nothing is kept."""
        if not self._frozen:
            return derive(self)
        derived = self._memo.derived
        if derive not in derived:
            derived[derive] = derive(self)
        return cast("Derived", derived[derive])

    def effects_of(self, qualname: str) -> list[Effect]:
        """The effects ``qualname`` has or reaches through its calls (worked out on first
        demand for a function no tool reaches)."""
        summaries = self.effect_summaries
        return summaries.of(qualname) if summaries is not None else []

    def tool_for_function(self, qualname: str) -> ToolFacts | None:
        return next((t for t in self.tools if qualname in t.functions), None)

    def retry_uses(self) -> Iterator[RetryUse]:
        """The constructs that re-run code (the retries pass of ``build_project``)."""
        return iter(self.retries)

    def ledger_index(self) -> LedgerIndex:
        """The ledger pass's facts (record writes, recording functions, executors)."""
        if self.ledger is None:
            raise RuntimeError("the ledger pass runs in build_project")
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
) -> ProjectModel:
    """The project model, built by its passes in order and frozen: index the modules (the
    constructor), discover the tools, infer their effects (call sites are resolved as these
    ask), merge the schema files' tools, find the retry constructs, index the ledger writes. The schema files
    skipped (too big, binary, unreadable) join ``problems``."""
    from agentguard.project.effects import infer_effects
    from agentguard.project.ledger_writes import build_ledger_index
    from agentguard.project.retries import retry_uses
    from agentguard.project.tools import discover_tools

    project = ProjectModel(modules, catalog)
    discover_tools(project)
    project.effect_summaries = infer_effects(project)
    project.problems = list(problems)
    project.config = config
    project.schema_files = list(schema_files)
    if config is not None:
        # Imported here: jsonschema is slow to import, and most runs have no schema file.
        from agentguard.project.schema_tools import add_schema_tools

        project.problems += add_schema_tools(project, schema_files, config)
    project.retries = tuple(retry_uses(project))
    project.ledger = build_ledger_index(project)
    project.freeze()
    return project
