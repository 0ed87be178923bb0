"""Provisional: replaced by the tsconfig and package.json reader of the ts-modules branch."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from agentguard.diagnostics import ScanProblem
from agentguard.facts.typescript.modules import EMPTY_TS_MODULE_MAP, TsModuleMap


def load_ts_module_map(
    root: Path, files: Sequence[tuple[str, str]], source_rels: Collection[str]
) -> tuple[TsModuleMap, list[ScanProblem]]:
    return EMPTY_TS_MODULE_MAP, []
