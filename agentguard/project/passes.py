"""Passes over the project index, each declaring the passes whose results it reads.

A pass is a class with ``needs`` (the passes it reads), ``produces`` (one line saying
what its result holds) and ``run(index, results)``, which returns one frozen result. As
LibCST's metadata providers and Fixit's rules declare their dependencies, nothing runs a
pass in a hand-written order: ``order_passes`` sorts the passes asked for, with every pass
they need, so that each runs after its needs, and ``run_passes`` runs them once each. A
pass reads only the results it declared (``PassResults`` refuses any other).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from agentguard.diagnostics import ScanProblem

if TYPE_CHECKING:
    from agentguard.config import Config
    from agentguard.project.index import ProjectIndex

Result = TypeVar("Result", covariant=True)
Read = TypeVar("Read")


class Pass(ABC, Generic[Result]):
    """One pass over the project index."""

    needs: ClassVar[tuple[type[Pass[Any]], ...]] = ()
    produces: ClassVar[str] = ""

    @classmethod
    @abstractmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> Result:
        """The pass's frozen result, from the index and the results of ``needs``."""


@dataclass(frozen=True)
class ScanInputs:
    """What a scan hands the passes besides the per-file facts: its configuration (None
    for a bare model, as tests build one), the tool-schema files found, and the problems
    met so far."""

    config: Config | None = None
    schema_files: tuple[tuple[Path, str], ...] = ()
    problems: tuple[ScanProblem, ...] = ()


class PassOrderError(ValueError):
    """The passes' declarations cannot be ordered: a pass needs itself, through others."""


class PassResults:
    """The results of the passes run so far, read by the pass they are handed to: only the
    results of the passes it declared in ``needs`` (and, once the build is over, of all)."""

    def __init__(
        self,
        inputs: ScanInputs,
        done: Mapping[type[Pass[Any]], Any],
        reader: type[Pass[Any]] | None = None,
    ) -> None:
        self.inputs = inputs
        self._done = done
        self._reader = reader

    def __getitem__(self, step: type[Pass[Read]]) -> Read:
        if self._reader is not None and step not in self._reader.needs:
            raise KeyError(f"{self._reader.__name__} reads {step.__name__} without needing it")
        if step not in self._done:
            raise KeyError(f"{step.__name__} has not run")
        result: Read = self._done[step]
        return result

    def __contains__(self, step: object) -> bool:
        return step in self._done

    def passes(self) -> tuple[type[Pass[Any]], ...]:
        """The passes whose results these are, in the order they ran."""
        return tuple(self._done)


def order_passes(wanted: Iterable[type[Pass[Any]]]) -> tuple[type[Pass[Any]], ...]:
    """``wanted`` and every pass they need, each after its needs: a depth-first walk in
    the order given (so the order is the same on every run), failing on a cycle."""
    ordered: dict[type[Pass[Any]], None] = {}
    walking: list[type[Pass[Any]]] = []

    def visit(step: type[Pass[Any]]) -> None:
        if step in ordered:
            return
        if step in walking:
            cycle = " -> ".join(p.__name__ for p in [*walking[walking.index(step) :], step])
            raise PassOrderError(f"passes need each other: {cycle}")
        walking.append(step)
        for need in step.needs:
            visit(need)
        walking.pop()
        ordered[step] = None

    for step in wanted:
        visit(step)
    return tuple(ordered)


def run_passes(
    index: ProjectIndex, wanted: Sequence[type[Pass[Any]]], inputs: ScanInputs
) -> PassResults:
    """Every pass of ``wanted`` (and what they need) run once over ``index``, in order."""
    done: dict[type[Pass[Any]], Any] = {}
    for step in order_passes(wanted):
        done[step] = step.run(index, PassResults(inputs, dict(done), reader=step))
    return PassResults(inputs, done)


def pass_table(passes: Iterable[type[Pass[Any]]]) -> str:
    """A Markdown table of ``passes`` in the order they run: each with its module, the
    passes it needs (those another need brings left out) and what it produces
    (docs/architecture.md holds it, checked by a test)."""
    rows = [
        "| pass | module | needs | produces |",
        "| --- | --- | --- | --- |",
    ]
    for step in order_passes(passes):
        direct = _direct_needs(step)
        needs = ", ".join(f"`{need.__name__}`" for need in direct) or "the index"
        rows.append(f"| `{step.__name__}` | `{step.__module__}` | {needs} | {step.produces} |")
    return "\n".join(rows) + "\n"


def _direct_needs(step: type[Pass[Any]]) -> list[type[Pass[Any]]]:
    """``step.needs`` without those another of its needs already brings."""
    brought = {further for need in step.needs for further in order_passes(need.needs)}
    return [need for need in step.needs if need not in brought]
