"""The schema files of a project, read once: the tool definitions and manifest entries they
declare (an MCP ``tools/list`` dump, OpenAI specs, the agentguard manifest), and the AG001
issues and skipped files found on the way. Tool discovery asks for the names they declare;
the schema-tool merge, for everything."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, ScanProblem
from agentguard.facts.extract import is_test_path
from agentguard.facts.schema_files.detect import Detected, SchemaIssue, detect
from agentguard.facts.schema_files.loader import is_manifest_name, read_schema_file
from agentguard.project.passes import Pass, PassResults

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def load_schema_files(
    files: Sequence[tuple[Path, str]], max_size: int
) -> tuple[Detected, list[ScanProblem]]:
    """Every tool definition, manifest entry and AG001 issue of the candidate files."""
    found = Detected()
    skipped: list[ScanProblem] = []
    for path, rel in files:
        if is_test_path(rel):
            continue  # recorded API payloads and test fixtures are not the project's tools
        loaded = read_schema_file(path, rel, max_size)
        if loaded.skipped is not None:
            skipped.append(loaded.skipped)
            continue
        if loaded.syntax is not None:
            problem = loaded.syntax
            found.issues.append(SchemaIssue(Location(problem.path, problem.span), problem.message))
            continue
        if not loaded.documents:
            continue
        try:
            detected = detect(loaded.documents, manifest_name=is_manifest_name(rel))
        except RecursionError:
            skipped.append(ScanProblem(rel, "too deeply nested to check"))
            continue
        found.tools += detected.tools
        found.manifest += detected.manifest
        found.issues += detected.issues
    return found, skipped


# What the schema files declare, and the files skipped on the way.
LoadedSchemas = tuple[Detected, list[ScanProblem]]


class SchemaFiles(Pass["LoadedSchemas | None"]):
    needs = ()
    produces = "the tools and manifest entries the schema files declare (None: no config)"

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> LoadedSchemas | None:
        config = results.inputs.config
        if config is None:
            return None
        return load_schema_files(results.inputs.schema_files, config.max_file_size)
