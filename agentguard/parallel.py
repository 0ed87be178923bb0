"""Fact extraction for many files: cache look-ups, then a process pool for the misses.

The result lists one entry per input file, in input order, whatever the job count, so the
output of a scan is byte-identical at any ``--jobs``. Workers send pickled facts back as
bytes: the same bytes go into the cache, so each file's facts are pickled exactly once.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agentguard.cache import FactCache, content_key, encode
from agentguard.diagnostics import ScanProblem, Span
from agentguard.python.extract import extract
from agentguard.python.facts import ModuleFacts

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


def read_source(path: Path, rel: str, max_size: int) -> bytes | ScanProblem:
    try:
        size = path.stat().st_size
        if size > max_size:
            return ScanProblem(
                rel, f"file is {size:,} bytes, over the max-file-size of {max_size:,}"
            )
        data = path.read_bytes()
    except PermissionError:
        return ScanProblem(rel, "permission denied")
    except OSError as exc:
        return ScanProblem(rel, exc.strerror or str(exc))
    if b"\0" in data[:8192]:
        return ScanProblem(rel, "binary file (contains NUL bytes)")
    return data


@dataclass
class SourceFile:
    """One Python file's bytes (or why they could not be read) and its cache key."""

    rel: str
    data: bytes | ScanProblem
    key: str  # content_key of the bytes, or the problem; "" when not keyed


def read_all(files: Sequence[tuple[Path, str]], max_size: int, *, keyed: bool) -> list[SourceFile]:
    """Read every file once, hashing it when ``keyed`` (for the caches)."""
    result = []
    for path, rel in files:
        data = read_source(path, rel, max_size)
        if isinstance(data, ScanProblem):
            key = f"unreadable: {data.reason}" if keyed else ""
        else:
            key = content_key(rel, data) if keyed else ""
        result.append(SourceFile(rel, data, key))
    return result


def source_facts(data: bytes, rel: str) -> ModuleFacts | ScanProblem:
    """Facts for one file's bytes, or why they cannot be parsed."""
    try:
        return extract(data, rel)
    except SyntaxError as exc:
        line = exc.lineno or 1
        column = exc.offset or 1
        reason = exc.msg or "invalid syntax"
        if "codec" in reason or "encoding" in reason or "utf-8" in reason.lower():
            return ScanProblem(
                rel, f"not valid UTF-8 or declared encoding: {reason}", "parse-error"
            )
        return ScanProblem(rel, reason, "parse-error", Span.point(line, column))
    except (ValueError, UnicodeDecodeError) as exc:
        return ScanProblem(rel, f"cannot decode: {exc}", "parse-error")
    except RecursionError:
        return ScanProblem(rel, "too deeply nested to parse", "parse-error")


def _work(item: tuple[bytes, str]) -> bytes:
    """In a worker: the pickled facts of one file, or of its parse error."""
    data, rel = item
    return encode(source_facts(data, rel))


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
    problems: list[ScanProblem] = field(default_factory=list)


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork starts workers in milliseconds and shares the imported modules; elsewhere
    # (macOS, Windows) spawn is the safe default.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def extract_all(
    files: Sequence[tuple[Path, str]],
    max_size: int,
    *,
    jobs: int = 1,
    cache: FactCache | None = None,
    progress: Progress | None = None,
    sources: Mapping[str, bytes] | None = None,
    contents: Sequence[SourceFile] | None = None,
) -> tuple[list[ModuleFacts | ScanProblem], ExtractStats]:
    """Facts (or a problem) for every file, in the order given.

    ``contents`` holds the files already read (and keyed), one per file. Parse errors are
    cached like facts (both follow from the bytes alone); read errors (permissions, size)
    are not.
    """
    stats = ExtractStats(files=len(files), jobs=max(1, jobs))
    results: list[ModuleFacts | ScanProblem | None] = [None] * len(files)
    pending: list[tuple[int, bytes, str, str]] = []  # index, bytes, rel, cache key
    with collector_paused():
        for index, (path, rel) in enumerate(files):
            known_key = ""
            # ``sources`` holds contents the caller has in memory (the fixer's edits).
            known = sources.get(rel) if sources is not None else None
            if known is not None:
                data: bytes | ScanProblem = known
            elif contents is not None:
                data, known_key = contents[index].data, contents[index].key
            else:
                data = read_source(path, rel, max_size)
            if isinstance(data, ScanProblem):
                results[index] = data
                continue
            key = "" if cache is None else known_key or content_key(rel, data)
            cached = cache.load(key) if cache is not None else None
            if cached is not None:
                results[index] = cached
                stats.cache_hits += 1
            else:
                pending.append((index, data, rel, key))
        stats.parsed = len(pending)
        done = len(files) - len(pending)
        if stats.jobs > 1 and len(pending) >= MIN_FILES_FOR_POOL:
            _extract_in_pool(pending, results, stats.jobs, cache, progress, done)
        else:
            stats.jobs = 1
            if progress is not None:
                progress(done, len(results))
            for index, data, rel, key in pending:
                result = source_facts(data, rel)
                if cache is not None:
                    cache.store(key, encode(result))
                results[index] = result
                if progress is not None:
                    progress(1, len(results))
    return [r for r in results if r is not None], stats


def _extract_in_pool(
    pending: list[tuple[int, bytes, str, str]],
    results: list[ModuleFacts | ScanProblem | None],
    jobs: int,
    cache: FactCache | None,
    progress: Progress | None,
    done: int,
) -> None:
    # Large files first, so that no worker is left with one big file at the end; the
    # results still land at their own index, so the order never depends on scheduling.
    order = sorted(range(len(pending)), key=lambda i: -len(pending[i][1]))
    chunksize = max(1, min(16, len(pending) // (jobs * 16)))
    context = _pool_context()
    with context.Pool(jobs, initializer=_worker_start) as pool:
        # Only now may the progress bar start its drawing thread: forking a process
        # while another thread holds a lock can leave that lock held in the child.
        if progress is not None:
            progress(done, len(results))
        outputs = pool.imap(_work, ((pending[i][1], pending[i][2]) for i in order), chunksize)
        for position, output in zip(order, outputs, strict=True):
            index, _, _, key = pending[position]
            if cache is not None:
                cache.store(key, output)
            results[index] = pickle.loads(output)
            if progress is not None:
                progress(1, len(results))
