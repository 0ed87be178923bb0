"""Speed without a change to any result: the one interface the scan pipeline calls.

Three things make a check fast, and none of them decides what it finds:

- the per-file fact cache (:mod:`agentguard.engine.fact_cache`): a file's facts by the hash of its path
  and bytes, so a warm run parses nothing;
- the process pool (:mod:`agentguard.engine.parallel`): the files not cached are parsed on every
  core;
- the run memo (:mod:`agentguard.engine.run_memo`): a check whose inputs are exactly those of a
  recorded run (agentguard's code, the config, the catalogue, the selection, every file's
  path and bytes) returns the recorded outcome without linking anything, so the CI re-run
  after a fresh clone costs little more than hashing the files.

Every file is parsed (or read from the cache) on every other run, and the project linked
again from its facts: what a check finds never depends on what an earlier one found.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentguard.config import Config
from agentguard.diagnostics import ScanProblem
from agentguard.engine.discovery import FileSet
from agentguard.engine.fact_cache import FactCache
from agentguard.engine.parallel import (
    ExtractStats,
    Progress,
    SourceFile,
    collector_paused,
    extract_all,
    read_all,
)
from agentguard.engine.run_memo import RunMemo, RunRecord, ScanOutcome, run_key
from agentguard.facts.module_facts import ModuleFacts
from agentguard.facts.typescript.modules import EMPTY_TS_MODULE_MAP, TS_SUFFIXES, TsModuleMap
from agentguard.knowledge.catalog import Catalog

# From this many files on, what is built to last the whole run (the facts, the project
# model) is moved out of the cyclic collector's sight (``gc.freeze``).
FREEZE_AFTER_FILES = 500


@dataclass
class FactOptions:
    """How a scan is sped up: worker processes, the fact cache and the run memo."""

    jobs: int = 1
    cache_dir: Path | None = None  # None: no cache
    # Answer an unchanged tree from a recorded run (and record this one); needs cache_dir.
    record_runs: bool = False
    progress: Progress | None = None
    stats: ExtractStats | None = None  # filled in when facts are collected


class Speed:
    """The caches and the pool of one scan.

    The pipeline asks, in order: ``recall`` (a recorded outcome for exactly these inputs,
    or None), then ``facts`` and ``building`` (the files' facts, and a context to link the
    project in), then ``remember`` (record the outcome for the next run).
    """

    def __init__(
        self,
        options: FactOptions,
        config: Config,
        catalog: Catalog,
        ts_modules: TsModuleMap = EMPTY_TS_MODULE_MAP,
    ) -> None:
        self.options = options
        self.config = config
        self.catalog = catalog
        self.ts_modules = ts_modules
        # Where a TypeScript import leads is part of that file's facts: another tsconfig
        # or workspace reads the same bytes otherwise.
        inputs = config.digest
        if ts_modules.fingerprint():
            inputs = f"{inputs}:{ts_modules.fingerprint()}"
        self.cache: FactCache | None = None
        if options.cache_dir is not None:
            self.cache = FactCache(options.cache_dir, inputs, catalog.digest)
        self.memo: RunMemo | None = None
        if options.record_runs and options.cache_dir is not None:
            self.memo = RunMemo(options.cache_dir, inputs, catalog.digest)
        self._contents: list[SourceFile] | None = None  # read by ``recall`` or ``texts``
        self._keyed: Mapping[str, str] | None = None  # the names ``recall`` keyed them under
        self._inputs: tuple[str, ...] | None = None  # their keys, for ``remember``
        self._key: str | None = None

    def recall(
        self,
        files: FileSet,
        question: Sequence[str],
        sources: Mapping[str, bytes] | None = None,
        modules: Mapping[str, str] | None = None,
    ) -> ScanOutcome | None:
        """The outcome recorded for exactly these files (read and hashed here, once for the
        whole scan) and ``question`` (what the command asks: selection, fix edits); None
        when no run recorded it, or the memo is off. Texts held in memory (``sources``:
        the fixer's) are never recorded. ``modules``: the files not named from the scan
        root (``agentguard.engine.module_roots``), whose names are part of their keys."""
        if self.memo is None or sources:
            return None
        self._contents = read_all(
            files.sources, self.config.max_file_size, keyed=True, modules=modules
        )
        self._keyed = dict(modules or {})
        self._inputs = tuple(content.key for content in self._contents)
        self._key = run_key(
            self.config.digest,
            self.catalog.digest,
            question,
            [(content.rel, content.key) for content in self._contents],
            files.schemas,
            files.problems,
        )
        if self.cache is not None:
            self.cache.mark_used()
        record = self.memo.load(self._key)
        return None if record is None else record.outcome

    def texts(
        self, files: FileSet, sources: Mapping[str, bytes] | None = None
    ) -> list[tuple[str, bytes]]:
        """The bytes of every Python file that can be read (``sources`` first), by relative
        path: read once for the whole scan (here, unless ``recall`` has), and parsed by
        ``facts``."""
        if self._contents is None:
            self._contents = read_all(files.sources, self.config.max_file_size, keyed=False)
        known = sources or {}
        texts = []
        for content in self._contents:
            if content.rel.endswith(TS_SUFFIXES):
                continue
            data = known.get(content.rel, content.data)
            if not isinstance(data, ScanProblem):
                texts.append((content.rel, data))
        return texts

    def facts(
        self,
        files: Sequence[tuple[str, str]],
        is_test: Callable[[str], bool],
        sources: Mapping[str, bytes] | None = None,
        modules: Mapping[str, str] | None = None,
        import_heads: Mapping[str, Mapping[str, str]] | None = None,
        *,
        again: bool = False,
    ) -> tuple[list[ModuleFacts], list[ScanProblem]]:
        """Every file's facts, from the cache or parsed (by the pool when worth it); the
        files that cannot be read or parsed as problems. ``sources`` overrides file
        contents by relative path; ``modules`` names the files not named from the scan
        root, ``import_heads`` says which absolute imports of a file name modules of its
        own program (``module_roots.import_heads``). ``again``: these are some files of the
        scan named anew, read again."""
        options = self.options
        contents = None if again else self._contents
        if contents is not None and self._keyed is not None:
            # keyed under the names ``recall`` was given: a file named otherwise, or with
            # import heads, is keyed again under its name and heads
            keyed, named, heads = self._keyed, modules or {}, import_heads or {}
            contents = [
                content
                if named.get(content.rel) == keyed.get(content.rel) and content.rel not in heads
                else SourceFile(content.rel, content.data, "")
                for content in contents
            ]
        with collector_paused():
            results, stats = extract_all(
                files,
                self.config.max_file_size,
                jobs=options.jobs,
                cache=self.cache,
                progress=options.progress,
                sources=sources,
                contents=contents,
                is_test=is_test,
                carriers=self.catalog.context_carriers,
                modules=modules,
                ts_modules=self.ts_modules,
                import_heads=import_heads,
            )
            if not again:
                # Every file's bytes, read once for the whole scan, are not needed past its
                # facts: ``remember`` records their keys only.
                self._contents = None
            if len(results) >= FREEZE_AFTER_FILES:
                # The facts live until the process ends: move them out of the collector's
                # sight before it runs again, or its first collection (and every later full
                # one) would rescan millions of them.
                gc.freeze()
        if again and options.stats is not None:
            options.stats.parsed += stats.parsed
            options.stats.cache_hits += stats.cache_hits
        else:
            options.stats = stats
        parsed = [result for result in results if isinstance(result, ModuleFacts)]
        problems = [result for result in results if isinstance(result, ScanProblem)]
        return parsed, problems

    @contextmanager
    def building(self, modules: int) -> Iterator[None]:
        """A context to link a project of ``modules`` files in."""
        # The model adds hundreds of thousands of acyclic objects (resolved callees,
        # effects): the cyclic collector would only rescan them.
        with collector_paused():
            yield
            if modules >= FREEZE_AFTER_FILES:
                # As with the facts: the model lives as long as the scan's result, and the
                # collector's first runs under the rules would rescan all of it (1.1 s of
                # CPU in a relink of 5,551 modules, 0.16 s frozen). It holds no reference
                # cycle, so dropping the result still frees it.
                gc.freeze()

    def remember(self, outcome: ScanOutcome) -> None:
        """Record the outcome of the inputs ``recall`` hashed, then keep the fact cache to
        the entries the kept records name (and recent ones)."""
        if self.memo is None or self._key is None or self._inputs is None:
            return
        self.memo.store(self._key, RunRecord(outcome.outcome(), self._inputs))
        if self.cache is not None:
            # Only after a linked run: a run answered by its record writes nothing new.
            self.cache.prune(self.memo.inputs_named())
