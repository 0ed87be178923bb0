"""The scan pipeline: discovery -> per-file facts -> project model -> checks -> findings."""

from __future__ import annotations

import dataclasses
import fnmatch
import gc
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentguard.checks.base import Rule, all_rules, selected
from agentguard.config import Config
from agentguard.diagnostics import Confidence, Finding, FixOffer, Location, ScanProblem
from agentguard.engine.baseline import BaselineOutcome
from agentguard.engine.discovery import discover, test_files
from agentguard.engine.fact_cache import FactCache
from agentguard.engine.fix_edits import fix_offer
from agentguard.engine.parallel import (
    ExtractStats,
    Progress,
    SourceFile,
    collector_paused,
    extract_all,
    parse_and_cache,
    read_all,
)
from agentguard.engine.run_memo import (
    OfferKey,
    RunMemo,
    RunRecord,
    offer_key,
    paths_shown,
    run_key,
)
from agentguard.facts.extract import module_name_for
from agentguard.facts.module_facts import LineLayout, ModuleFacts, Suppression, line_layout
from agentguard.knowledge.catalog import Catalog, load_catalog
from agentguard.prefilter import Prefilter, pack_referrals, unpack_referrals
from agentguard.project.project_model import ProjectModel, build_project
from agentguard.project.tool_facts import ToolFacts
from agentguard.python.function_parts import FunctionPart, split_functions

UNUSED_SUPPRESSION = "AG002"
PARSE_ERROR = "AG000"
FREEZE_AFTER_FILES = 500


@dataclass
class ScanResult:
    root: Path
    config: Config
    findings: list[Finding]
    suppressed: list[Finding]
    # None when the result is a recorded run (agentguard.engine.run_memo): nothing was linked.
    project: ProjectModel | None
    files_scanned: int
    problems: list[ScanProblem]
    timings: dict[str, float] = field(default_factory=dict)
    # Set by `check --baseline`: which findings were accepted, which entries went stale.
    baseline: BaselineOutcome | None = None
    # Whether findings carry their fix edits (computed lazily: agentguard.engine.fix_edits.ensure_fixes).
    fixes_attached: bool = False
    # What the outputs show of the project; kept apart so a recorded run can fill them.
    found_tools: list[ToolFacts] = field(default_factory=list)
    python_paths: list[str] = field(default_factory=list)
    schema_paths: list[str] = field(default_factory=list)
    # A recorded run's fix offers (a live run asks the project model).
    offers: dict[OfferKey, FixOffer | None] = field(default_factory=dict)
    # Why a recorded run answered (for --profile).
    record_note: str = ""

    @property
    def from_record(self) -> bool:
        """Whether a recorded run answered (nothing was linked)."""
        return self.project is None

    @property
    def tools(self) -> int:
        return len(self.found_tools)

    @property
    def model(self) -> ProjectModel:
        """The project model, for commands that read more than the findings."""
        if self.project is None:
            raise RuntimeError("a recorded run has no project model")
        return self.project

    def fix_offer(self, finding: Finding) -> FixOffer | None:
        """The fix this finding would get, without building its edits."""
        if self.project is not None:
            return fix_offer(finding, self.project)
        return self.offers.get(offer_key(finding))


@dataclass
class FactOptions:
    """How facts are collected: worker processes and the per-file fact cache."""

    jobs: int = 1
    cache_dir: Path | None = None  # None: no cache
    # Reuse (and record) a whole run when no input changed; needs cache_dir.
    record_runs: bool = False
    progress: Progress | None = None
    stats: ExtractStats | None = None  # filled in by collect_facts
    # Parse only the files that can matter (agentguard.prefilter).
    prefilter: bool = True


def collect_facts(
    files: Sequence[tuple[str, str]],
    config: Config,
    sources: Mapping[str, bytes] | None = None,
    options: FactOptions | None = None,
    catalog: Catalog | None = None,
    contents: Sequence[SourceFile] | None = None,
    prefilter: Prefilter | None = None,
) -> tuple[list[ModuleFacts], list[ScanProblem]]:
    """``contents``: the files already read and keyed (one per file, in order).

    With ``options.prefilter`` only the files that can matter are parsed
    (agentguard.prefilter); the others are left out of the facts.
    """
    options = options or FactOptions()
    catalog = catalog or load_catalog(config.catalog_extensions, source=config.source)
    is_test = prefilter.is_test if prefilter is not None else test_files(config)
    cache = None
    if options.cache_dir is not None:
        cache = FactCache(options.cache_dir, config.digest, catalog.digest)
    wanted: list[int] | None = None
    follow = None
    if options.prefilter:
        if contents is None:
            contents = read_all(files, config.max_file_size, keyed=False)
        prefilter = prefilter or Prefilter(catalog, [rel for _, rel in files], is_test)
        wanted = [
            index
            for index, content in enumerate(contents)
            if isinstance(content.data, ScanProblem)
            or prefilter.is_seed(content.rel, (sources or {}).get(content.rel, content.data))
        ]
        follow = prefilter.follow
    with collector_paused():
        results, stats = extract_all(
            files,
            config.max_file_size,
            jobs=options.jobs,
            cache=cache,
            progress=options.progress,
            sources=sources,
            contents=contents,
            wanted=wanted,
            follow=follow,
            is_test=is_test,
        )
        if sum(1 for result in results if result is not None) >= FREEZE_AFTER_FILES:
            # The facts live until the process ends: move them out of the collector's
            # sight before it runs again, or its first collection (and every later full
            # one) would rescan millions of them.
            gc.freeze()
    modules: list[ModuleFacts] = []
    problems: list[ScanProblem] = []
    for (_, rel), result in zip(files, results, strict=True):
        if result is None:
            stats.skipped.append(rel)
        elif isinstance(result, ScanProblem):
            problems.append(result)
        else:
            modules.append(result)
    if stats.skipped and options.progress is not None:
        options.progress(len(stats.skipped), len(files))
    if wanted is not None:
        stats.seeds = [files[index][1] for index in wanted]
    options.stats = stats
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

    facts = facts or FactOptions(prefilter=config.prefilter)
    prefilter = None
    named: list[str] = []
    if facts.prefilter:
        given = {path.resolve() for path in paths if path.is_file()}
        named = [rel for path, rel in files.python if given and Path(path).resolve() in given]
        prefilter = Prefilter(
            catalog, [rel for _, rel in files.python], test_files(config), named=named
        )
    contents: list[SourceFile] | None = None
    memo: tuple[RunMemo, FactCache, str, str] | None = None
    if facts.record_runs and facts.cache_dir is not None and not sources:
        mark = time.perf_counter()
        contents = read_all(files.python, config.max_file_size, keyed=True)
        runs = RunMemo(facts.cache_dir, config.digest, catalog.digest)
        key = run_key(
            config,
            catalog.digest,
            # Files named one by one are always checked: part of what the run answers.
            [*select, "\x1e", *ignore, "\x1e", "prefilter" if prefilter else "every file", *named],
            with_fixes,
            [rel for _, rel in files.python],
            files.schemas,
        )
        cache = FactCache(facts.cache_dir, config.digest, catalog.digest)
        cache.mark_used()
        changes = _Changes(contents, prefilter, catalog, files.schemas)
        # Newest first, each loaded only if no newer one answers (a MB or more apiece).
        records: list[RunRecord] = []
        record = None
        for candidate in runs.load(key):
            records.append(candidate)
            if changes.since(candidate) == []:
                record = candidate
                break
        note = "no input changed since a recorded run: its findings were reused"
        timings["read and hash, look up the recorded run"] = time.perf_counter() - mark
        if record is None:
            mark = time.perf_counter()
            is_test = prefilter.is_test if prefilter is not None else test_files(config)
            note = "no run was recorded with these paths, config and selection: a full run"
            # Why not, told of the record the fewest files changed since (the newest of
            # those): after an edit undone, not of the file put back.
            closest = len(contents) + 1
            for candidate in records:
                answer = _record_still_answering(candidate, changes, cache, is_test)
                if isinstance(answer, RunRecord):
                    record = answer
                    runs.store(key, record)
                    moved = len(record.inputs.items() - candidate.inputs.items())
                    note = (
                        f"{moved} changed file(s) differ from a recorded run only in line "
                        "numbers, or in functions no rule starts from or reads, in files "
                        "no output names: its findings were reused"
                    )
                    break
                since = changes.since(candidate)
                distance = len(contents) if since is None else len(since)
                if distance < closest:
                    closest = distance
                    newest = (
                        "the newest recorded run" if candidate is records[0] else "a recorded run"
                    )
                    note = f"linked again: since {newest}, {answer}"
            if record is None:
                changes.reuse_seeds(records)
            timings["compare changed files with the recorded run"] = time.perf_counter() - mark
        if record is not None:
            timings["total"] = time.perf_counter() - started
            return _recorded_result(record, config, timings, note)
        memo = (runs, cache, key, note)

    mark = time.perf_counter()
    modules, problems = collect_facts(
        files.python, config, sources, facts, catalog, contents, prefilter
    )
    skipped = facts.stats.skipped if facts.stats is not None else []
    problems = files.problems + problems
    timings["facts"] = time.perf_counter() - mark

    mark = time.perf_counter()
    # The model adds hundreds of thousands of acyclic objects (resolved callees, effects):
    # the cyclic collector would only rescan them.
    with collector_paused():
        project = build_project(
            modules,
            catalog,
            other_modules=[module_name_for(rel) for rel in skipped],
            config=config,
            problems=problems,
            schema_files=files.schemas,
        )
        if len(modules) >= FREEZE_AFTER_FILES:
            # As with the facts: the model lives as long as the scan's result, and the
            # collector's first runs under the rules would rescan all of it (1.1 s of CPU
            # in a relink of 5,551 modules, 0.16 s frozen). It holds no reference cycle,
            # so dropping the result still frees it.
            gc.freeze()
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
        from agentguard.engine.fix_edits import attach_fixes

        mark = time.perf_counter()
        kept = attach_fixes(kept, project, config.root, sources)
        timings["fix edits"] = time.perf_counter() - mark
    kept.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    result = ScanResult(
        root=config.root,
        config=config,
        findings=kept,
        suppressed=suppressed,
        project=project,
        files_scanned=len(modules) + len(skipped) + len(files.schemas),
        problems=problems,
        timings=timings,
        fixes_attached=with_fixes,
        found_tools=project.tools,
        python_paths=_checked_paths(files.python, project, skipped),
        schema_paths=[rel for _, rel in files.schemas],
    )
    if memo is not None:
        mark = time.perf_counter()
        runs, cache, key, note = memo
        result.record_note = note
        assert contents is not None  # read (and keyed) with the memo
        stats = facts.stats if prefilter is not None else None
        runs.store(key, _record_of(result, project, contents, skipped, stats, prefilter))
        timings["record the run"] = time.perf_counter() - mark
        # Only after a linked run: a run answered by a record adds a few entries at most.
        mark = time.perf_counter()
        cache.prune(runs.inputs_named())
        timings["prune the cache"] = time.perf_counter() - mark
    timings["total"] = time.perf_counter() - started
    return result


def _checked_paths(
    python: Sequence[tuple[str, str]], project: ProjectModel, skipped: list[str]
) -> list[str]:
    """The Python files checked (parsed, or left out by the prefilter), in scan order."""
    if not skipped:
        return list(project.modules)
    left_out = set(skipped)
    return [rel for _, rel in python if rel in project.modules or rel in left_out]


# More changed files than this are parsed by the pool, not compared one by one.
MOST_FILES_COMPARED = 64


class _Changes:
    """How the files read now differ from a recorded run's (same paths, config and
    selection)."""

    def __init__(
        self,
        contents: Sequence[SourceFile],
        prefilter: Prefilter | None,
        catalog: Catalog,
        schemas: Sequence[tuple[Path, str]] = (),
    ) -> None:
        self.contents = contents
        self.rels = [content.rel for content in contents]  # by file index, as the prefilter's
        self.prefilter = prefilter
        self.catalog = catalog
        self.schemas = schemas
        self._facts: dict[str, ModuleFacts | None] = {}
        self._layouts: dict[str, LineLayout] = {}
        self._parts: dict[str, tuple[LineLayout, dict[str, FunctionPart]]] = {}
        self._named: dict[tuple[str, str], str | None] = {}
        self._since: dict[int, list[SourceFile] | None] = {}

    def is_seed(self, content: SourceFile) -> bool:
        # The prefilter remembers each answer: asked again for every record compared.
        assert self.prefilter is not None and not isinstance(content.data, ScanProblem)
        return self.prefilter.is_seed(content.rel, content.data)

    def facts(
        self,
        key: str,
        cache: FactCache,
        content: SourceFile | None = None,
        is_test: Callable[[str], bool] | None = None,
    ) -> ModuleFacts | None:
        """The facts cached under ``key`` (parsed from ``content`` when not cached); None
        for a parse error or facts no longer cached. Read once per key, however many
        records are compared."""
        if key not in self._facts:
            facts = cache.load(key)
            if facts is None and content is not None and is_test is not None:
                assert not isinstance(content.data, ScanProblem)
                facts = parse_and_cache(content.data, content.rel, is_test(content.rel), cache, key)
            self._facts[key] = facts if isinstance(facts, ModuleFacts) else None
        return self._facts[key]

    def layout(self, key: str) -> LineLayout:
        """The line layout of facts already read by ``facts``."""
        if key not in self._layouts:
            facts = self._facts[key]
            assert facts is not None
            self._layouts[key] = line_layout(facts)
        return self._layouts[key]

    def parts(self, key: str) -> tuple[LineLayout, dict[str, FunctionPart]]:
        """The facts read by ``facts``, cut into functions and the rest."""
        if key not in self._parts:
            facts = self._facts[key]
            assert facts is not None
            self._parts[key] = split_functions(facts, self.catalog)
        return self._parts[key]

    def named_elsewhere(self, name: str, rel: str, kept: bytes) -> str | None:
        """A file, other than ``rel`` (whose bytes outside the edited functions are
        ``kept``), whose bytes hold ``name``: the first found, or None."""
        needle = name.encode()
        if needle in kept:
            return rel
        # The other files are the same for every record compared: searched once a name.
        key = (name, rel)
        if key not in self._named:
            self._named[key] = self._search_others(needle, rel)
        return self._named[key]

    def _search_others(self, needle: bytes, rel: str) -> str | None:
        for content in self.contents:
            if content.rel != rel and isinstance(content.data, bytes) and needle in content.data:
                return content.rel
        for path, schema_rel in self.schemas:
            try:
                if needle in path.read_bytes():
                    return schema_rel
            except OSError:
                return schema_rel
        return None

    def reuse_seeds(self, records: Sequence[RunRecord]) -> None:
        """Tell the prefilter which files were seeds in the newest record, and what they
        referred to, for each file whose bytes are the same: a re-link after an edit
        searches only the changed files for seed words and walks only their facts for the
        files they refer to."""
        if self.prefilter is None:
            return
        record = next((r for r in records if r.seeds is not None), None)
        if record is None or record.seeds is None:
            return
        inputs, seeds = record.inputs, record.seeds
        same: set[str] = set()
        for content in self.contents:
            if inputs.get(content.rel) == content.key:
                self.prefilter.remember(content.rel, content.rel in seeds)
                same.add(content.rel)
        self.prefilter.remember_referrals(record.referrals, same.__contains__)

    def since(self, record: RunRecord) -> list[SourceFile] | None:
        """The files the run parsed whose bytes changed since; None when a file it left out
        would be parsed now, or more than MOST_FILES_COMPARED changed.

        A file the run left out may have changed in any way that keeps it out: no seed
        word, and (the parsed files being the same, or the same but for line numbers)
        still referred to by none of them. Worked out once per record (the records asked
        about live as long as this object).
        """
        if id(record) in self._since:
            return self._since[id(record)]
        self._since[id(record)] = changed = self._changed_since(record)
        return changed

    def _changed_since(self, record: RunRecord) -> list[SourceFile] | None:
        inputs = record.inputs
        changed: list[SourceFile] = []
        left_out: list[SourceFile] = []
        for content in self.contents:
            known = inputs.get(content.rel)
            if known is None:
                if self.prefilter is None or isinstance(content.data, ScanProblem):
                    return None
                left_out.append(content)
            elif known != content.key:
                changed.append(content)
                if len(changed) > MOST_FILES_COMPARED:
                    return None
        if any(self.is_seed(content) for content in left_out):
            return None
        return changed


def _record_still_answering(
    record: RunRecord,
    changes: _Changes,
    cache: FactCache,
    is_test: Callable[[str], bool],
) -> RunRecord | str:
    """The recorded run, brought up to date, when it still answers although files changed;
    otherwise why not (for ``--profile``).

    It does when no output names a changed file (so none of its positions is shown), the
    file is still parsed for the same reason (a seed stays a seed; a file parsed because
    another refers to it still is, that one's facts being the same), and its facts are the
    old ones but for

    - line numbers, kept in the same order (a comment or a blank line added or removed: see
      ``line_layout``), and
    - functions added, removed or edited that no rule starts from and that the rules did
      not read or nothing refers to (``_why_function_edits_matter``).

    The project model and the rules then work out the same result from the facts.
    """
    changed = changes.since(record)
    if changed is None:
        return (
            f"more than {MOST_FILES_COMPARED} parsed files changed, or a file left out "
            "now names a seed word"
        )
    if changes.prefilter is not None and record.seeds is None:
        return "the recorded run does not say which files were seeds"
    seeds = set(record.seeds) if record.seeds is not None else None
    inputs = dict(record.inputs)
    for content in changed:
        rel = content.rel
        if rel in record.shown_paths:
            return f"{rel} changed, and an output names it (a finding, evidence, a tool)"
        if isinstance(content.data, ScanProblem):
            return f"{rel} cannot be read"
        old_key = record.inputs[rel]
        if changes.facts(old_key, cache) is None:
            return f"the facts {rel} had then are no longer cached"
        new_facts = changes.facts(content.key, cache, content, is_test)
        if new_facts is None:
            return f"{rel} does not parse"
        if changes.layout(old_key) != changes.layout(content.key):
            why = _why_function_edits_matter(
                record, changes, content, old_key, new_facts, {c.rel for c in changed}
            )
            if why:
                return f"{rel} changed in more than line numbers: {why}"
        if seeds is not None:
            if changes.is_seed(content):
                seeds.add(rel)
            elif rel in seeds:
                return f"{rel} no longer names a seed word"
        inputs[rel] = content.key
    # What a changed file refers to may have changed: a later re-link walks its facts.
    edited_rels = {content.rel for content in changed}
    edited = {index for index, rel in enumerate(changes.rels) if rel in edited_rels}
    kept = unpack_referrals(record.referrals)
    referrals = pack_referrals({i: found for i, found in kept.items() if i not in edited})
    return dataclasses.replace(
        record,
        inputs=inputs,
        seeds=None if seeds is None else frozenset(seeds),
        referrals=referrals,
    )


def _why_function_edits_matter(
    record: RunRecord,
    changes: _Changes,
    content: SourceFile,
    old_key: str,
    new_facts: ModuleFacts,
    changed: set[str],
) -> str:
    """Why the edit of ``content`` since ``record`` may change the findings, or "" when it
    only touches functions (``agentguard.python.function_parts``) that no rule starts from,
    each of them

    - changed in place, with the same nested functions, and not read by the rules in the
      recorded run (its callers, unchanged, would not lead a rule to it now either), or
    - a module-level function added or removed that no file's bytes name (this file's
      outside the edited functions, a schema's),

    and the files they refer to are parsed as before."""
    assert isinstance(content.data, bytes)
    old_rest, old_parts = changes.parts(old_key)
    new_rest, new_parts = changes.parts(content.key)
    if old_rest != new_rest:
        return "outside its functions"
    edited = sorted(
        qualname
        for qualname in old_parts.keys() | new_parts.keys()
        if qualname not in old_parts
        or qualname not in new_parts
        or old_parts[qualname].layout != new_parts[qualname].layout
    )
    names: set[str] = set()
    for qualname in edited:
        old_part, new_part = old_parts.get(qualname), new_parts.get(qualname)
        short = qualname.rsplit(".", 1)[-1]
        for part in (old_part, new_part):
            if part is not None and part.rule_entry:
                return f"`{short}` may matter to a rule: {part.rule_entry}"
        if old_part is not None and new_part is not None and record.functions_read is not None:
            # Changed in place: its callers, which decide whether a rule reads it, are as
            # they were; the rules read neither version if they did not read the old one.
            if old_part.names != new_part.names:
                return f"`{short}` defines other nested functions"
            read = (old_part.qualnames | new_part.qualnames) & record.functions_read
            if read:
                return f"`{short}` is read by the rules (a tool or a retry reaches it)"
            continue
        either = old_part or new_part
        assert either is not None  # an edited qualname is in one of them
        if either.is_method:
            return f"`{short}` is a method, and the recorded run does not say what it read"
        for part in (old_part, new_part):
            if part is not None:
                names |= part.names
    lines = content.data.split(b"\n")
    for qualname in edited:
        part = new_parts.get(qualname)
        if part is not None:
            lines[part.span.line - 1 : part.span.end_line] = [b""] * (
                part.span.end_line - part.span.line + 1
            )
    kept = b"\n".join(lines)
    for name in sorted(names):
        where = changes.named_elsewhere(name, content.rel, kept)
        if where is not None:
            return f"`{name}` of an edited function is named in {where}"
    prefilter = changes.prefilter
    if prefilter is not None:
        parsed = record.inputs.keys()
        rels = changes.rels
        still_referred = {rels[i] for i in prefilter.referred_files(new_facts)}
        for qualname in edited:
            new_part = new_parts.get(qualname)
            for index in prefilter.referred_files(new_part.facts) if new_part else ():
                if rels[index] not in parsed:
                    return f"an edited function refers to {rels[index]}, which was left out"
            old_part = old_parts.get(qualname)
            for index in prefilter.referred_files(old_part.facts) if old_part else ():
                if not _still_parsed(rels[index], record, content.rel, still_referred, changed):
                    return f"{rels[index]} may have been parsed only for an edited function"
    return ""


def _still_parsed(
    rel: str, record: RunRecord, edited: str, still_referred: set[str], changed: set[str]
) -> bool:
    """Whether ``rel`` is still parsed once ``edited`` refers only to ``still_referred``:
    it is a seed, or the chain of files that led the recorded run to it starts at a seed,
    leaves ``edited`` only for a file it still refers to, and passes through no other
    changed file."""
    seeds = record.seeds or frozenset()
    seen: set[str] = set()
    while rel not in seeds:
        referrer = record.referrers.get(rel)
        if referrer is None or rel in seen or (referrer != edited and referrer in changed):
            return False
        if referrer == edited and rel not in still_referred:
            return False
        seen.add(rel)
        rel = referrer
    return True


def _record_of(
    result: ScanResult,
    project: ProjectModel,
    contents: Sequence[SourceFile],
    skipped: list[str],
    stats: ExtractStats | None,
    prefilter: Prefilter | None,
) -> RunRecord:
    left_out = set(skipped)
    offers = {offer_key(f): fix_offer(f, project) for f in result.findings}
    return RunRecord(
        inputs={c.rel: c.key for c in contents if c.rel not in left_out},
        findings=result.findings,
        suppressed=result.suppressed,
        problems=result.problems,
        files_scanned=result.files_scanned,
        tools=result.found_tools,
        python_paths=result.python_paths,
        schema_paths=result.schema_paths,
        fixes_attached=result.fixes_attached,
        offers=offers,
        shown_paths=paths_shown(result.findings, result.suppressed, result.problems, project.tools),
        seeds=None if stats is None else frozenset(stats.seeds),
        referrers={} if stats is None else stats.referrers,
        referrals=b"" if prefilter is None else prefilter.referral_table(),
        # Last: the fix offers above read functions too.
        functions_read=project.functions_read(),
    )


def _recorded_result(
    record: RunRecord, config: Config, timings: dict[str, float], note: str
) -> ScanResult:
    return ScanResult(
        root=config.root,
        config=config,
        findings=record.findings,
        suppressed=record.suppressed,
        project=None,
        files_scanned=record.files_scanned,
        problems=record.problems,
        timings=timings,
        fixes_attached=record.fixes_attached,
        found_tools=record.tools,
        python_paths=record.python_paths,
        schema_paths=record.schema_paths,
        offers=record.offers,
        record_note=note,
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
