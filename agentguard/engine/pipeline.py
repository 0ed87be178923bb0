"""The scan pipeline: discovery -> per-file facts -> project model -> checks -> findings.

Everything that makes it fast (the fact cache, the process pool, the run memo) sits behind
:class:`agentguard.engine.speed.Speed`; the pipeline's result never depends on it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentguard.checks.base import Rule, all_rules, passes_read, selected
from agentguard.config import Config
from agentguard.diagnostics import PARTLY_READ, Confidence, Finding, ScanProblem
from agentguard.engine.discovery import discover, test_files
from agentguard.engine.fix_edits import attach_fixes, fix_offer
from agentguard.engine.module_roots import (
    evidence_names,
    evidence_of,
    import_heads,
    module_names,
    text_evidence,
)
from agentguard.engine.run_memo import offer_key
from agentguard.engine.scan_result import ScanResult
from agentguard.engine.selection import check_selection
from agentguard.engine.speed import FactOptions, Speed
from agentguard.engine.suppressions import apply_suppressions
from agentguard.engine.ts_projects import load_ts_module_map
from agentguard.facts.module_facts import ModuleFacts
from agentguard.facts.python_version import running_version
from agentguard.facts.syntax_walk import module_name_for
from agentguard.facts.typescript.modules import EMPTY_TS_MODULE_MAP, TS_SUFFIXES, ts_module_name
from agentguard.knowledge.catalog import Catalog, load_catalog
from agentguard.project.project_model import ProjectModel, build_project

UNUSED_SUPPRESSION = "AG002"
PARSE_ERROR = "AG000"


def unread_parts(modules: Sequence[ModuleFacts]) -> list[ScanProblem]:
    """A notice for each place a file's parser could not read and went on after: the rest
    of the file was checked, so it is named, not reported as AG000."""
    return [
        ScanProblem(
            facts.path,
            _unread_reason(facts),
            PARTLY_READ,
            facts.unread[0],
        )
        for facts in modules
        if facts.unread
    ]


def _unread_reason(facts: ModuleFacts) -> str:
    line = facts.unread[0].line
    if facts.language == "python":
        # what the Python front end reads around: PEP 701 f-strings (facts/extract.py)
        return (
            f"line {line}: an f-string nesting quotes or comments (PEP 701) needs Python 3.12 "
            f"or newer; agentguard runs on Python {running_version()} and read it as plain "
            "text; the rest of the file was checked"
        )
    return (
        f"line {line} could not be parsed (syntax this parser does not know); the rest of "
        "the file was checked"
    )


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
    LibCST parse per file, so by default only the outputs that print edits compute them);
    ``facts`` says how to speed the scan up (agentguard.engine.speed)."""
    check_selection(config, select, ignore)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    catalog = catalog or load_catalog(config.catalog_extensions, source=config.source)
    files = discover(list(paths), config)
    timings["discovery"] = time.perf_counter() - started

    options = facts or FactOptions()
    python_rels = [rel for _, rel in files.sources if not rel.endswith(TS_SUFFIXES)]
    ts_rels = [rel for _, rel in files.sources if rel.endswith(TS_SUFFIXES)]
    ts_modules = EMPTY_TS_MODULE_MAP
    if ts_rels:
        # a Python project's package.json (its web front end's) is not read for nothing
        ts_modules, ts_problems = load_ts_module_map(config.root, files.ts_configs, ts_rels)
        files.problems.extend(ts_problems)
    speed = Speed(options, config, catalog, ts_modules)
    mark = time.perf_counter()
    question = [*select, "\x1e", *ignore, "\x1e", "fixes" if with_fixes else "offers"]
    named = module_names(config.root, files.package_configs, python_rels)
    # A TypeScript file's module is its path: imports name files, not packages.
    named.update((rel, ts_module_name(rel)) for rel in ts_rels)
    recalled = speed.recall(files, question, sources, named)
    if options.record_runs:
        timings["read and hash, look up the run memo"] = time.perf_counter() - mark
    if recalled is not None:

        def link() -> ProjectModel:
            again = FactOptions(jobs=options.jobs, cache_dir=options.cache_dir)
            return scan(
                paths, config, select=select, ignore=ignore, catalog=catalog, facts=again
            ).project

        timings["total"] = time.perf_counter() - started
        return ScanResult(
            **vars(recalled),
            root=config.root,
            config=config,
            timings=timings,
            from_memo=True,
            _link=link,
        )

    mark = time.perf_counter()
    is_test = test_files(config)
    # Files are parsed under the names the project's imports are guessed to give them (from
    # their texts), then named by the evidence of their facts; only the files guessed wrong
    # are parsed again (a name is in every qualified name the facts hold).
    shown = text_evidence(speed.texts(files, sources), named)
    guessed = {**named, **evidence_names(shown, python_rels)}
    guessed_heads = import_heads(shown, guessed, python_rels)
    modules, problems = speed.facts(files.sources, is_test, sources, guessed, guessed_heads)
    evidence = evidence_of(modules, named)
    renamed = evidence_names(evidence, python_rels)
    final = {**named, **renamed}
    heads = import_heads(evidence, final, python_rels)
    parsed = {facts.path for facts in modules}
    again = [
        entry
        for entry in files.sources
        if (
            _name(final, entry[1]) != _name(guessed, entry[1])
            or heads.get(entry[1]) != guessed_heads.get(entry[1])
            if entry[1] in parsed
            else entry[1] in renamed
        )
    ]
    if again:
        # The first facts of these files are let go before they are made again, so that
        # the new ones take the memory the old ones held.
        redo = {rel for _, rel in again}
        order = [facts.path for facts in modules]
        by_path = {facts.path: facts for facts in modules if facts.path not in redo}
        modules = []
        refacts, lost = speed.facts(again, is_test, sources, final, heads, again=True)
        by_path.update((facts.path, facts) for facts in refacts)
        modules = [by_path[path] for path in order if path in by_path]
        # Unreadable on the second read (changed or removed since the first): said so.
        problems.extend(lost)
    problems = files.problems + problems + unread_parts(modules)
    timings["facts"] = time.perf_counter() - mark

    mark = time.perf_counter()
    with speed.building(len(modules)):
        project = build_project(
            modules,
            catalog,
            config=config,
            problems=problems,
            schema_files=files.schemas,
            passes=passes_read(all_rules()),
        )
    problems = project.problems  # with the schema files skipped
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
        mark = time.perf_counter()
        kept = attach_fixes(kept, project, config.root, sources, jobs=options.jobs)
        timings["fix edits"] = time.perf_counter() - mark
    kept.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    result = ScanResult(
        root=config.root,
        config=config,
        findings=kept,
        suppressed=suppressed,
        files_scanned=len(modules) + len(files.schemas),
        problems=problems,
        timings=timings,
        fixes_attached=with_fixes,
        found_tools=project.tools,
        python_paths=list(project.modules),
        schema_paths=[rel for _, rel in files.schemas],
        offers={offer_key(f): fix_offer(f, project) for f in kept},
        _project=project,
    )
    if options.record_runs:
        mark = time.perf_counter()
        speed.remember(result)
        timings["record the run, prune the cache"] = time.perf_counter() - mark
    timings["total"] = time.perf_counter() - started
    return result


def _name(names: Mapping[str, str], rel: str) -> str:
    """The module name ``names`` gives ``rel``, else its path's."""
    return names.get(rel) or module_name_for(rel)


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
