"""Fact extraction for many files: cache look-ups, then a process pool for the misses.

The result lists one entry per input file, in input order, whatever the job count, so the
output of a scan is byte-identical at any ``--jobs``. Workers send pickled facts back as
bytes: the same bytes go into the cache, so each file's facts are pickled exactly once.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing
import os
import pickle
import queue
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agentguard.diagnostics import ScanProblem, Span
from agentguard.engine.discovery import NOT_A_REGULAR_FILE
from agentguard.engine.fact_cache import FactCache, content_key, encode
from agentguard.facts.extract import extract, is_test_path
from agentguard.facts.module_facts import ModuleFacts
from agentguard.facts.python_version import newer_syntax
from agentguard.facts.typescript.extract import extract_typescript
from agentguard.facts.typescript.modules import (
    EMPTY_TS_MODULE_MAP,
    TS_SUFFIXES,
    TsModuleMap,
    ts_module_name,
)
from agentguard.knowledge.catalog import ContextCarriers

# At most this many files make one task for a worker, and this many tasks per worker are
# queued ahead of it.
MAX_CHUNK = 16
TASKS_AHEAD_PER_JOB = 4
# Seconds a thread may hold the GIL while the pool runs (see share_work).
POOL_SWITCH_INTERVAL = 0.0005
# Below this many files to parse, starting worker processes costs more than it saves.
MIN_FILES_FOR_POOL = 24

# Called with (files just finished, files in all) as extraction goes.
Progress = Callable[[int, int], None]


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def read_source(path: str | Path, rel: str, max_size: int) -> bytes | ScanProblem:
    try:
        status = os.stat(path)
        if not stat.S_ISREG(status.st_mode):
            return ScanProblem(rel, NOT_A_REGULAR_FILE)
        size = status.st_size
        if size > max_size:
            return ScanProblem(
                rel, f"file is {size:,} bytes, over the max-file-size of {max_size:,}"
            )
        with open(path, "rb") as source:
            data = source.read()
    except PermissionError:
        return ScanProblem(rel, "permission denied", "unreadable")
    except OSError as exc:
        return ScanProblem(rel, exc.strerror or str(exc), "unreadable")
    if b"\0" in data[:8192]:
        return ScanProblem(rel, "binary file (contains NUL bytes)", "unreadable")
    return data


@dataclass
class SourceFile:
    """One Python file's bytes (or why they could not be read) and its cache key."""

    rel: str
    data: bytes | ScanProblem
    key: str  # content_key of the bytes, or the problem; "" when not keyed


def read_all(
    files: Sequence[tuple[str, str]],
    max_size: int,
    *,
    keyed: bool,
    modules: Mapping[str, str] | None = None,
) -> list[SourceFile]:
    """Read every file once, hashing it when ``keyed`` (for the caches). ``modules``: the
    module names of the files not named from the scan root, by relative path."""
    result = []
    for path, rel in files:
        data = read_source(path, rel, max_size)
        if isinstance(data, ScanProblem):
            key = f"unreadable: {data.reason}" if keyed else ""
        else:
            module = modules.get(rel) if modules else None
            key = content_key(rel, data, module) if keyed else ""
        result.append(SourceFile(rel, data, key))
    return result


def source_facts(
    data: bytes,
    rel: str,
    carriers: ContextCarriers,
    is_test: bool | None = None,
    module: str | None = None,
    ts_modules: TsModuleMap = EMPTY_TS_MODULE_MAP,
    import_heads: Mapping[str, str] | None = None,
) -> ModuleFacts | ScanProblem:
    """Facts for one file's bytes, or why they cannot be parsed. A TypeScript or JavaScript
    file is read by its own front end, its imports resolved through ``ts_modules``; a
    Python file's absolute imports through ``import_heads`` (``extract``)."""
    try:
        if rel.endswith(TS_SUFFIXES):
            language = (
                "typescript" if rel.endswith((".ts", ".tsx", ".mts", ".cts")) else "javascript"
            )
            return extract_typescript(
                data, rel, module or ts_module_name(rel), ts_modules.resolve, is_test, language
            )
        return extract(data, rel, carriers, is_test, module, import_heads)
    except SyntaxError as exc:
        line = exc.lineno or 1
        column = exc.offset or 1
        reason = exc.msg or "invalid syntax"
        if "codec" in reason or "encoding" in reason or "utf-8" in reason.lower():
            return ScanProblem(
                rel, f"not valid UTF-8 or declared encoding: {reason}", "parse-error"
            )
        newer = newer_syntax(reason, exc.text or "")
        if newer is not None:
            reason = f"{reason}: {newer}"
        return ScanProblem(rel, reason, "parse-error", Span.point(line, column))
    except (ValueError, UnicodeDecodeError) as exc:
        return ScanProblem(rel, f"cannot decode: {exc}", "parse-error")
    except RecursionError:
        return ScanProblem(rel, "too deeply nested to parse", "parse-error")


def parse_and_cache(
    data: bytes,
    rel: str,
    is_test: bool,
    cache: FactCache | None,
    key: str,
    carriers: ContextCarriers,
    module: str | None = None,
    ts_modules: TsModuleMap = EMPTY_TS_MODULE_MAP,
    import_heads: Mapping[str, str] | None = None,
) -> ModuleFacts | ScanProblem:
    """One file's facts (or parse error), parsed here and stored in the cache under ``key``."""
    result = source_facts(data, rel, carriers, is_test, module, ts_modules, import_heads)
    if cache is not None:
        cache.store(key, encode(result))
    return result


# A file for a worker: its index, bytes, relative path, whether it is a test, its module
# name when not named from the scan root, and its import heads (``extract``).
Task = tuple[int, bytes, str, bool, "str | None", "Mapping[str, str] | None"]


def _work_chunk(carried: bytes, chunk: list[Task]) -> list[tuple[int, bytes]]:
    """In a worker: the pickled facts (or parse error) of each file of a chunk.
    ``carried``: the pickled carriers and TypeScript module map (:func:`_carriers`)."""
    carriers, ts_modules = _carriers(carried)
    return [
        (index, encode(source_facts(data, rel, carriers, test, module, ts_modules, heads)))
        for index, data, rel, test, module, heads in chunk
    ]


@functools.lru_cache(maxsize=4)
def _carriers(carried: bytes) -> tuple[ContextCarriers, TsModuleMap]:
    """The carriers and module map a task names, unpickled once per worker."""
    carriers, ts_modules = pickle.loads(carried)
    assert isinstance(carriers, ContextCarriers) and isinstance(ts_modules, TsModuleMap)
    return carriers, ts_modules


def _worker_start() -> None:
    # Workers only build short-lived trees and acyclic facts: reference counting frees
    # them, and the cyclic collector would only rescan the growing result lists.
    gc.disable()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of acyclic fact objects are made.

    Facts hold no reference cycles, so nothing is lost; with the collector running, each
    full collection rescans every fact made so far, which multiplies extraction time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class ExtractStats:
    files: int = 0
    parsed: int = 0
    cache_hits: int = 0
    jobs: int = 1


def pool_context() -> multiprocessing.context.BaseContext:
    # fork starts workers in milliseconds and shares the imported modules; elsewhere
    # (macOS, Windows) spawn is the safe default.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def extract_all(
    files: Sequence[tuple[str, str]],
    max_size: int,
    *,
    jobs: int = 1,
    cache: FactCache | None = None,
    progress: Progress | None = None,
    sources: Mapping[str, bytes] | None = None,
    contents: Sequence[SourceFile] | None = None,
    is_test: Callable[[str], bool] = is_test_path,
    carriers: ContextCarriers,
    modules: Mapping[str, str] | None = None,
    ts_modules: TsModuleMap = EMPTY_TS_MODULE_MAP,
    import_heads: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[list[ModuleFacts | ScanProblem], ExtractStats]:
    """Facts (or a problem) for every file, at its index in ``files``.

    ``is_test`` tells test files (the config's ``test-paths``) from the rest.
    ``contents`` holds the files already read (and keyed), one per file. Parse errors are
    cached like facts (both follow from the bytes alone); read errors (permissions, size)
    are not. ``modules`` names the files whose package root is not the scan root (by
    relative path; see ``agentguard.engine.module_roots``), ``import_heads`` the files
    whose absolute imports name modules of their own program otherwise named.
    """
    stats = ExtractStats(files=len(files), jobs=max(1, jobs))
    work = _Work(
        files,
        max_size,
        cache,
        sources,
        contents,
        is_test,
        carriers,
        modules,
        ts_modules,
        import_heads,
    )
    with collector_paused():
        work.want(range(len(files)))
        pool_worth_it = stats.jobs > 1
        work.run_here(progress, stop_at=MIN_FILES_FOR_POOL if pool_worth_it else None)
        if work.pending:
            work.run_pool(stats.jobs, progress)
        else:
            stats.jobs = 1
            work.report(progress)
    stats.parsed = work.parsed
    stats.cache_hits = work.cache_hits
    results = [result for result in work.results if result is not None]
    assert len(results) == len(files)  # every file is answered, from the cache or parsed
    return results, stats


class _Work:
    """The extraction work list: cache hits are answered at once, misses are parsed."""

    def __init__(
        self,
        files: Sequence[tuple[str, str]],
        max_size: int,
        cache: FactCache | None,
        sources: Mapping[str, bytes] | None,
        contents: Sequence[SourceFile] | None,
        is_test: Callable[[str], bool],
        carriers: ContextCarriers,
        modules: Mapping[str, str] | None = None,
        ts_modules: TsModuleMap = EMPTY_TS_MODULE_MAP,
        import_heads: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.files = files
        self.modules = modules or {}
        self.import_heads = import_heads or {}
        self.ts_modules = ts_modules
        self.carriers = carriers
        self.max_size = max_size
        self.cache = cache
        self.sources = sources
        self.contents = contents
        self.is_test = is_test
        self.results: list[ModuleFacts | ScanProblem | None] = [None] * len(files)
        self.pending: list[tuple[int, bytes, str, str]] = []  # index, bytes, rel, cache key
        self.parsed = 0
        self.cache_hits = 0
        self.done = 0  # finished since the last progress report

    def want(self, indices: Iterable[int]) -> None:
        """Answer these files from the cache, or queue them to be parsed."""
        for index in indices:
            path, rel = self.files[index]
            known_key = ""
            # ``sources`` holds contents the caller has in memory (the fixer's edits).
            known = self.sources.get(rel) if self.sources is not None else None
            if known is not None:
                data: bytes | ScanProblem = known
            elif self.contents is not None:
                data, known_key = self.contents[index].data, self.contents[index].key
            else:
                data = read_source(path, rel, self.max_size)
            if isinstance(data, ScanProblem):
                self.record(index, data)
                continue
            key = (
                ""
                if self.cache is None
                else known_key
                or content_key(rel, data, self.modules.get(rel), self.import_heads.get(rel))
            )
            cached = self.cache.load(key) if self.cache is not None else None
            if cached is None:
                self.pending.append((index, data, rel, key))
                continue
            self.cache_hits += 1
            self.record(index, cached)

    def record(self, index: int, result: ModuleFacts | ScanProblem) -> None:
        self.results[index] = result
        self.done += 1

    def report(self, progress: Progress | None) -> None:
        if progress is not None and self.done:
            progress(self.done, len(self.results))
            self.done = 0

    def run_here(self, progress: Progress | None, stop_at: int | None = None) -> None:
        """Parse in this process, unless ``stop_at`` files or more are waiting (then the
        pool is worth starting)."""
        # While a pool may still be started, progress waits: the bar's drawing thread
        # must not run when the workers are forked.
        if stop_at is not None:
            if len(self.pending) >= stop_at:
                return
            progress = None
        self.report(progress)
        while self.pending:
            self.extract_here(self.pending.pop())
            self.report(progress)

    def extract_here(self, item: tuple[int, bytes, str, str]) -> None:
        """Parse one file in this process: its facts need no pickling to arrive here
        (only to be cached)."""
        index, data, rel, key = item
        result = parse_and_cache(
            data,
            rel,
            self.is_test(rel),
            self.cache,
            key,
            self.carriers,
            self.modules.get(rel),
            self.ts_modules,
            self.import_heads.get(rel),
        )
        self.parsed += 1
        self.record(index, result)

    def run_pool(self, jobs: int, progress: Progress | None) -> None:
        """Parse with ``jobs`` processes: this one and ``jobs - 1`` workers.

        This process takes a file whenever no worker's result is waiting. A file parsed
        here skips the pickling a worker's file costs on both sides (about a quarter of
        its extraction time), and the work left between results (unpickling, caching) is
        too little to keep a core busy on its own.
        """
        keys: dict[int, str] = {}
        # Large files first, so that no process is left with one big file at the end;
        # results land at their own index, so order never depends on timing.
        backlog = sorted(self.pending, key=lambda item: len(item[1]))
        self.pending = []

        def send(chunk: list[tuple[int, bytes, str, str]]) -> list[Task]:
            for index, _, _, key in chunk:
                keys[index] = key
            return [
                (
                    index,
                    data,
                    rel,
                    self.is_test(rel),
                    self.modules.get(rel),
                    self.import_heads.get(rel),
                )
                for index, data, rel, _ in chunk
            ]

        def receive(outputs: list[tuple[int, bytes]]) -> None:
            for index, output in outputs:
                if self.cache is not None:
                    self.cache.store(keys[index], output)
                self.parsed += 1
                self.record(index, pickle.loads(output))

        # The carriers (a few names) travel with each chunk: no worker-global state. They
        # are pickled here, once, before any chunk is sent: the pool's own thread pickles
        # each task while this one parses, and this one fills the carriers' cached
        # properties on first use; pickling the object there could read its ``__dict__``
        # as it grows ("dictionary changed size during iteration", from a timing only a
        # loaded machine gives).
        work_chunk = functools.partial(_work_chunk, pickle.dumps((self.carriers, self.ts_modules)))
        share_work(
            backlog,
            jobs,
            chunk_size=max(1, min(MAX_CHUNK, len(backlog) // (jobs * 16))),
            send=send,
            worker=work_chunk,
            here=self.extract_here,
            receive=receive,
            # Only once the workers are forked may the progress bar start its drawing
            # thread: forking while another thread holds a lock can leave it held in the
            # child.
            step=lambda: self.report(progress),
        )


Item = TypeVar("Item")
Sent = TypeVar("Sent")
Returned = TypeVar("Returned")


def share_work(
    backlog: list[Item],
    jobs: int,
    *,
    chunk_size: int,
    send: Callable[[list[Item]], Sent],
    worker: Callable[[Sent], Returned],
    here: Callable[[Item], None],
    receive: Callable[[Returned], None],
    step: Callable[[], None] | None = None,
) -> None:
    """Do the ``backlog`` with ``jobs`` processes: this one and ``jobs - 1`` forked workers,
    the last item first. ``send`` makes a worker's task of a chunk of items, ``worker`` (a
    module-level function, pickled by reference) does it there, ``receive`` takes its
    result here; ``here`` does one item in this process, whenever no worker's result is
    waiting. ``step`` is called once the workers are started and after each result."""
    # The pool reads tasks from a queue that this process keeps a few chunks ahead of the
    # workers, so that the items left are shared between this process and the workers to
    # the end. None ends the feed.
    feed: queue.SimpleQueue[Sent | None] = queue.SimpleQueue()
    ahead = (jobs - 1) * TASKS_AHEAD_PER_JOB
    queued = 0

    def top_up() -> None:
        nonlocal queued
        while queued < ahead and backlog:
            feed.put(send([backlog.pop() for _ in range(min(chunk_size, len(backlog)))]))
            queued += 1

    def tasks() -> Iterator[Sent]:
        while (task := feed.get()) is not None:
            yield task

    top_up()
    # The pool's threads here pass tasks to the workers and read their results from
    # pipes, a few KiB per hold of the GIL, while this thread works. At the default 5 ms
    # switch interval a worker waited on its full result pipe for about a fifth of its
    # time (facts of the corpus 18.6 s; 17.0 s at 0.5 ms).
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(POOL_SWITCH_INTERVAL)
    try:
        with pool_context().Pool(jobs - 1, initializer=_worker_start) as pool:
            if step is not None:
                step()
            results = pool.imap_unordered(worker, tasks())
            while queued or backlog:
                try:
                    # Waiting only when this process has nothing of its own to do.
                    returned = results.next(timeout=None if not backlog else 0)
                except multiprocessing.TimeoutError:
                    here(backlog.pop())
                else:
                    queued -= 1
                    receive(returned)
                top_up()
                if step is not None:
                    step()
            feed.put(None)
    finally:
        sys.setswitchinterval(switch_interval)
