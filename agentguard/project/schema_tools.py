"""Schema tools into the project model: one tool per name, whatever declares it.

A tool defined in code and listed in an MCP ``tools/list`` dump, an OpenAI spec or the
agentguard manifest is ONE tool: the code stays its anchor and its source of effects, and
each schema or manifest entry adds a declaration (with its own location) and a source.
Tools known only from schemas become ``schema_only`` tools whose effects are guessed from
their names (``schemas.verbs``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agentguard.diagnostics import Location, ScanProblem
from agentguard.facts.schema_files.detect import (
    Detected,
    ManifestEntry,
    SchemaIssue,
    SchemaTool,
)
from agentguard.facts.schema_files.formats import FRAMEWORKS, MANIFEST
from agentguard.project.declared_schemas import SchemaFiles
from agentguard.project.effects import EffectInference
from agentguard.project.passes import Pass, PassResults
from agentguard.project.schema_verbs import schema_effects
from agentguard.project.tool_facts import Declaration, ToolFacts

if TYPE_CHECKING:
    from agentguard.knowledge.catalog import Catalog
    from agentguard.project.index import ProjectIndex


def annotations_declaration(catalog: Catalog, tool: SchemaTool) -> Declaration | None:
    """MCP annotations of a schema tool, with the spec's pessimistic defaults."""
    annotations = tool.annotations or {}
    decl = Declaration(source="mcp-annotations", location=tool.site)
    for attr, keys in catalog.annotation_hints.items():
        for key in keys:
            if isinstance(annotations.get(key), bool):
                setattr(decl, attr, annotations[key])
                decl.fields[attr] = tool.annotation_locations.get(key, tool.site)
    if not decl.declares_anything:
        return None
    decl.assume_mcp_defaults()
    return decl


def manifest_declaration(entry: ManifestEntry) -> Declaration:
    fields: dict[str, Any] = entry.fields
    decl = Declaration(source="manifest", location=entry.location)
    for key in ("risk", "idempotency", "replay"):
        if isinstance(fields.get(key), str):
            setattr(decl, key, fields[key])
            decl.fields[key] = entry.field_locations.get(key, entry.location)
    decl.has_key = "key" in fields
    decl.has_reconcile = "reconcile" in fields
    for key in ("key", "reconcile"):
        if key in fields:
            decl.fields[key] = entry.field_locations.get(key, entry.location)
    return decl


def _schema_only_tool(
    name: str, framework: str, form: str, anchor: Location, site: Location
) -> ToolFacts:
    return ToolFacts(
        name=name,
        framework=framework,
        form=form,
        path=anchor.path,
        anchor=anchor,
        functions=[],
        symbol=name,
        site=site,
        schema_only=True,
    )


def merge_into(catalog: Catalog, tools: list[ToolFacts], detected: Detected) -> None:
    """Merge the schema files' tools and manifest entries into ``tools`` (changed in
    place, sorted again)."""
    by_name: dict[str, list[ToolFacts]] = {}
    for tool in tools:
        by_name.setdefault(tool.name, []).append(tool)
    for schema_tool in detected.tools:
        targets = by_name.get(schema_tool.name)
        if not targets:
            fmt = schema_tool.format
            created = _schema_only_tool(
                schema_tool.name, FRAMEWORKS[fmt], fmt, schema_tool.location, schema_tool.site
            )
            created.params = list(schema_tool.params)
            tools.append(created)
            targets = by_name[schema_tool.name] = [created]
        else:
            for target in targets:
                target.sources.append(schema_tool.location)
        decl = annotations_declaration(catalog, schema_tool)
        for target in targets:
            if decl is not None:
                target.declarations.append(decl)
            if not target.description and schema_tool.description:
                target.description = schema_tool.description
            for param in schema_tool.params:
                if target.schema_only and param not in target.params:
                    target.params.append(param)
    for entry in detected.manifest:
        function = entry.fields.get("function")
        if isinstance(function, str):
            targets = [t for t in tools if function in t.functions or t.symbol == function]
        else:
            targets = by_name.get(entry.name, [])
        if not targets:
            created = _schema_only_tool(
                entry.name, FRAMEWORKS[MANIFEST], MANIFEST, entry.location, entry.location
            )
            tools.append(created)
            targets = by_name[entry.name] = [created]
        else:
            for target in targets:
                target.sources.append(entry.location)
        description = entry.fields.get("description")
        for target in targets:
            target.declarations.append(manifest_declaration(entry))
            if not target.description and isinstance(description, str):
                target.description = description
    for tool in tools:
        if tool.schema_only and not tool.effects:
            tool.effects = schema_effects(catalog, tool.name, tool.description, tool.anchor)
    tools.sort(key=lambda t: (t.path, t.anchor.span.line, t.name))


@dataclass(frozen=True)
class MergedTools:
    """The tools of the source and of the schema files, one per name; the AG001 issues of
    the schema files; the schema files skipped (too big, binary, unreadable)."""

    tools: tuple[ToolFacts, ...]
    issues: tuple[SchemaIssue, ...] = ()
    skipped: tuple[ScanProblem, ...] = ()


class SchemaTools(Pass[MergedTools]):
    needs = (EffectInference, SchemaFiles)
    produces = "every tool, the schema files' and the manifest's merged in; AG001's issues"

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> MergedTools:
        tools = results[EffectInference].tools
        loaded = results[SchemaFiles]
        if loaded is None:
            return MergedTools(tools)
        detected, skipped = loaded
        # copies: a merge adds declarations and sources to the tools effect inference gave
        merged = [_copied(tool) for tool in tools]
        merge_into(index.catalog, merged, detected)
        return MergedTools(tuple(merged), tuple(detected.issues), tuple(skipped))


def _copied(tool: ToolFacts) -> ToolFacts:
    """``tool`` with lists of its own, for a merge to extend."""
    return replace(
        tool,
        functions=list(tool.functions),
        params=list(tool.params),
        options=dict(tool.options),
        declarations=list(tool.declarations),
        effects=list(tool.effects),
        sources=list(tool.sources),
    )
