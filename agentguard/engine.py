"""The scan pipeline: discovery -> per-file facts -> project model -> checks -> findings."""

from __future__ import annotations

import fnmatch
import gc
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentguard.baseline import BaselineOutcome
from agentguard.cache import FactCache
from agentguard.catalog import Catalog, load_catalog
from agentguard.checks.base import Rule, all_rules, selected
from agentguard.config import Config
from agentguard.diagnostics import Confidence, Finding, Location, ScanProblem
from agentguard.discovery import discover
from agentguard.parallel import (
    ExtractStats,
    Progress,
    collector_paused,
    extract_all,
    read_source,
    source_facts,
)
from agentguard.project import ProjectModel
from agentguard.python.facts import ModuleFacts, Suppression
from agentguard.schemas import add_schema_tools

UNUSED_SUPPRESSION = "AG002"
PARSE_ERROR = "AG000"
FREEZE_AFTER_FILES = 500


@dataclass
class ScanResult:
    root: Path
    config: Config
    findings: list[Finding]
    suppressed: list[Finding]
    project: ProjectModel
    files_scanned: int
    problems: list[ScanProblem]
    timings: dict[str, float] = field(default_factory=dict)
    # Set by `check --baseline`: which findings were accepted, which entries went stale.
    baseline: BaselineOutcome | None = None
    # Whether findings carry their fix edits (computed lazily: agentguard.fixes.ensure_fixes).
    fixes_attached: bool = False

    @property
    def tools(self) -> int:
        return len(self.project.tools)


def python_facts(
    path: Path, rel: str, max_size: int, data: bytes | ScanProblem | None = None
) -> ModuleFacts | ScanProblem:
    """Facts for one Python file, or the reason it could not be read or parsed.

    ``data`` is the file's content when the caller holds it in memory (the fixer does).
    """
    if data is None:
        data = read_source(path, rel, max_size)
    if isinstance(data, ScanProblem):
        return data
    return source_facts(data, rel)


@dataclass
class FactOptions:
    """How facts are collected: worker processes and the per-file fact cache."""

    jobs: int = 1
    cache_dir: Path | None = None  # None: no cache
    progress: Progress | None = None
    stats: ExtractStats | None = None  # filled in by collect_facts


def collect_facts(
    files: Sequence[tuple[Path, str]],
    config: Config,
    sources: Mapping[str, bytes] | None = None,
    options: FactOptions | None = None,
    catalog: Catalog | None = None,
) -> tuple[list[ModuleFacts], list[ScanProblem]]:
    options = options or FactOptions()
    cache = None
    if options.cache_dir is not None:
        digest = (catalog or load_catalog(config.catalog_extensions, source=config.source)).digest
        cache = FactCache(options.cache_dir, config.digest, digest)
    results, stats = extract_all(
        files,
        config.max_file_size,
        jobs=options.jobs,
        cache=cache,
        progress=options.progress,
        sources=sources,
    )
    options.stats = stats
    modules: list[ModuleFacts] = []
    problems: list[ScanProblem] = []
    for result in results:
        if isinstance(result, ScanProblem):
            problems.append(result)
        else:
            modules.append(result)
    if len(modules) >= FREEZE_AFTER_FILES:
        # The facts live until the process ends: move them out of the collector's sight,
        # so that every later full collection does not rescan millions of them.
        gc.freeze()
    return modules, problems


def _covers(suppression: Suppression, finding: Finding, facts: ModuleFacts | None) -> bool:
    if suppression.codes and not any(finding.code.startswith(c) for c in suppression.codes):
        return False
    span = finding.span
    if span.line <= suppression.line <= span.end_line:
        return True
    if facts is None:
        return False
    # A comment on a decorator or def line covers the whole definition.
    for fn in facts.functions.values():
        if fn.span.line <= suppression.line <= fn.name_span.line:
            if fn.span.line <= span.line <= fn.span.end_line:
                return True
    for cls in facts.classes.values():
        if cls.span.line <= suppression.line <= cls.name_span.line:
            if cls.span.line <= span.line <= cls.span.end_line:
                return True
    return False


def _per_file_ignored(finding: Finding, per_file: dict[str, list[str]]) -> bool:
    for pattern, codes in per_file.items():
        if fnmatch.fnmatch(finding.path, pattern) or fnmatch.fnmatch(
            finding.path.rsplit("/", 1)[-1], pattern
        ):
            if any(c == "ALL" or finding.code.startswith(c) for c in codes):
                return True
    return False


def apply_suppressions(
    findings: list[Finding], project: ProjectModel, config: Config, unused_rule: Rule | None
) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """Split findings into kept and suppressed; report suppressions that matched nothing."""
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    used: set[tuple[str, int]] = set()
    for finding in findings:
        facts = project.modules.get(finding.path)
        hit = False
        for suppression in facts.suppressions if facts else []:
            if _covers(suppression, finding, facts):
                used.add((finding.path, suppression.line))
                hit = True
        if hit or _per_file_ignored(finding, config.per_file_ignores):
            suppressed.append(finding)
        else:
            kept.append(finding)
    unused: list[Finding] = []
    if unused_rule is not None:
        for facts in project.modules.values():
            for suppression in facts.suppressions:
                if (facts.path, suppression.line) in used:
                    continue
                codes = ", ".join(suppression.codes) or "every rule"
                unused.append(
                    unused_rule.finding(
                        Location(facts.path, suppression.span),
                        f"Unused suppression: nothing here is reported for {codes}",
                        confidence=Confidence.HIGH,
                        node_text=f"ignore[{codes}]@{suppression.line}",
                    )
                )
    return kept, suppressed, unused


def scan(
    paths: Sequence[Path],
    config: Config,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    catalog: Catalog | None = None,
    sources: Mapping[str, bytes] | None = None,
    with_fixes: bool = False,
    facts: FactOptions | None = None,
) -> ScanResult:
    """Scan ``paths``. ``sources`` overrides file contents by relative path (the fixer's
    in-memory texts); ``with_fixes`` attaches each fixable finding's Fix now (they cost a
    LibCST parse per file, so by default only the outputs that print edits compute them)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    catalog = catalog or load_catalog(config.catalog_extensions, source=config.source)
    files = discover(list(paths), config)
    timings["discovery"] = time.perf_counter() - started

    mark = time.perf_counter()
    modules, problems = collect_facts(files.python, config, sources, facts, catalog)
    problems = files.problems + problems
    timings["facts"] = time.perf_counter() - mark

    mark = time.perf_counter()
    # The model adds hundreds of thousands of acyclic objects (resolved callees, effects):
    # the cyclic collector would only rescan them.
    with collector_paused():
        project = ProjectModel(modules, catalog)
    project.problems = problems
    project.config = config
    project.schema_files = files.schemas
    problems += add_schema_tools(project, files.schemas, config)
    timings["project"] = time.perf_counter() - mark

    select = list(select) or config.select or ["ALL"]
    ignore = list(ignore) + config.ignore
    findings: list[Finding] = []
    unused_rule: Rule | None = None
    # Every rule runs, so that a suppression counts as used whatever is selected; the
    # selection filters what is reported.
    for rule_cls in all_rules():
        rule = rule_cls()
        if rule_cls.code == UNUSED_SUPPRESSION:
            unused_rule = rule
            continue
        mark = time.perf_counter()
        findings.extend(rule.check(project))
        timings[f"rule {rule_cls.code}"] = time.perf_counter() - mark

    minimum = Confidence(config.min_confidence).rank
    findings = [f for f in findings if f.confidence.rank >= minimum]
    findings = _dedupe(findings)
    kept, suppressed, unused = apply_suppressions(findings, project, config, unused_rule)
    kept.extend(unused)
    kept = [f for f in kept if selected(f.code, select, ignore)]
    suppressed = [f for f in suppressed if selected(f.code, select, ignore)]
    if with_fixes:
        from agentguard.fixes import attach_fixes

        kept = attach_fixes(kept, project, config.root, sources)
    kept.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    timings["total"] = time.perf_counter() - started
    return ScanResult(
        root=config.root,
        config=config,
        findings=kept,
        suppressed=suppressed,
        project=project,
        files_scanned=len(modules) + len(files.schemas),
        problems=problems,
        timings=timings,
        fixes_attached=with_fixes,
    )


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, str, int, int, str | None]] = set()
    result = []
    for finding in sorted(findings, key=Finding.sort_key):
        key = (finding.code, finding.path, finding.span.line, finding.span.column, finding.tool)
        if key in seen:
            continue
        seen.add(key)
        result.append(finding)
    return result
