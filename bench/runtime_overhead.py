"""Overhead of a guarded call, against the bare function and against the physical floor.

The floor is what a write-ahead ledger cannot avoid, measured in the same run on the same disk
and server: two durable commits per call (SQLite WAL with synchronous=FULL; two PostgreSQL
commits). The goal is a guarded call costing at most 1.5x that floor, in every round.

``--async`` also measures async guarded calls against sync ones, interleaved in one event loop:
on PostgreSQL through the ledger's native async driver (psycopg's AsyncConnection, pooled)
and, for comparison in the same run, through a thread per ledger operation (the earlier path),
beside the floor's two commits sent through psycopg's AsyncConnection (the async floor); on
SQLite, whose async calls write from a thread.

    python bench/runtime_overhead.py --calls 2000 --rounds 4 --backend sqlite --backend postgres --async
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import agentguard.runtime as runtime_api


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def timed(operation: Callable[[int], Any], calls: int, offset: int = 0) -> list[float]:
    samples = []
    for index in range(calls):
        began = time.perf_counter()
        operation(offset + index)
        samples.append(time.perf_counter() - began)
    return samples


def throughput(operation: Callable[[int], Any], workers: int, calls_per_worker: int) -> float:
    barrier = threading.Barrier(workers + 1)
    counter = itertools.count(10_000_000)

    def work() -> None:
        barrier.wait()
        for _ in range(calls_per_worker):
            operation(next(counter))

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    return workers * calls_per_worker / (time.perf_counter() - began)


def sqlite_floor(directory: Path) -> Callable[[int], None]:
    path = directory / "floor.db"
    local = threading.local()

    def connection() -> sqlite3.Connection:
        if not hasattr(local, "connection"):
            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("CREATE TABLE IF NOT EXISTS t (id TEXT PRIMARY KEY, status TEXT)")
            local.connection = conn
        return local.connection  # type: ignore[no-any-return]

    connection()

    def two_commits(index: int) -> None:
        conn = connection()
        key = f"{uuid.uuid4().hex}"
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES (?, 'started')", (key,))
        conn.execute("COMMIT")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE t SET status = 'succeeded' WHERE id = ?", (key,))
        conn.execute("COMMIT")

    return two_commits


def postgres_floor(dsn: str, schema: str) -> Callable[[int], None]:
    import psycopg

    local = threading.local()
    with psycopg.connect(dsn, autocommit=True) as setup:
        setup.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        setup.execute(f'CREATE TABLE IF NOT EXISTS "{schema}".t (id text PRIMARY KEY, status text)')

    def two_commits(index: int) -> None:
        if not hasattr(local, "connection"):
            local.connection = psycopg.connect(dsn, autocommit=True)
        conn = local.connection
        key = uuid.uuid4().hex
        conn.execute(f'INSERT INTO "{schema}".t VALUES (%s, %s)', (key, "started"))
        conn.execute(f'UPDATE "{schema}".t SET status = %s WHERE id = %s', ("succeeded", key))

    return two_commits


def postgres_async_floor(dsn: str, schema: str) -> Callable[[int], Coroutine[Any, Any, None]]:
    """The floor's two commits through psycopg's AsyncConnection (one kept connection and
    cursor, on the event loop): what an async call's two statements cost before any runtime."""
    import psycopg

    held: list[Any] = []

    async def two_commits(index: int) -> None:
        if not held:
            connection = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
            held.extend((connection, connection.cursor()))
        cursor = held[1]
        key = uuid.uuid4().hex
        await cursor.execute(f'INSERT INTO "{schema}".t VALUES (%s, %s)', (key, "started"))
        await cursor.execute(
            f'UPDATE "{schema}".t SET status = %s WHERE id = %s', ("succeeded", key)
        )

    return two_commits


def guarded_noop(ledger_url: str, runtime_module: Any = None) -> Callable[[int], Any]:
    """A guarded no-op on ``ledger_url``; ``runtime_module``: another ``agentguard.runtime``."""
    api = runtime_module if runtime_module is not None else runtime_api
    runtime = api.Runtime(ledger=api.open_ledger(ledger_url))

    @api.guarded(runtime, risk="write")
    def noop(value: int) -> int:
        return value

    run_id = f"bench-{uuid.uuid4().hex}"

    def call(index: int) -> Any:
        with runtime.run(run_id=run_id, user_id="bench"):
            observation = noop(value=index)
        assert observation["ok"], observation
        return observation

    return call


def guarded_async_noop(
    ledger_url: str, runtime_module: Any = None, *, native: bool = True
) -> Callable[[int], Coroutine[Any, Any, Any]]:
    """An async guarded no-op on ``ledger_url``; ``native=False`` sets the ledger's async
    driver aside, so that its operations go through a thread each (the path before it)."""
    api = runtime_module if runtime_module is not None else runtime_api
    ledger = api.open_ledger(ledger_url)
    if not native:
        ledger.aio = None
    runtime = api.Runtime(ledger=ledger)

    @api.guarded(runtime, risk="write")
    async def noop(value: int) -> int:
        return value

    run_id = f"bench-{uuid.uuid4().hex}"

    async def call(index: int) -> Any:
        async with runtime.run(run_id=run_id, user_id="bench"):
            observation = await noop(value=index)
        assert observation["ok"], observation
        return observation

    return call


def profile_guarded(calls: int) -> None:
    """Where a guarded call's Python time goes: cProfile over fresh calls on the memory ledger."""
    import cProfile
    import pstats

    call = guarded_noop("memory://")
    timed(call, 200, offset=90_000_000)  # warm up
    profiler = cProfile.Profile()
    profiler.enable()
    timed(call, calls)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


def bare_noop(index: int) -> int:
    return index


def describe(name: str, samples: list[float]) -> dict[str, float]:
    return {
        "median_us": statistics.median(samples) * 1e6,
        "p99_us": percentile(samples, 0.99) * 1e6,
    }


def bench_backend(
    backend: str,
    floor: Callable[[int], None],
    guarded_call: Callable[[int], Any],
    calls: int,
    workers: int,
) -> dict[str, Any]:
    for operation in (floor, guarded_call):  # warm up connections, pages, caches
        timed(operation, 50, offset=50_000_000)
    # Interleaved, so that a noisy neighbour or a checkpoint hits floor and guarded alike.
    floor_samples: list[float] = []
    guarded_samples: list[float] = []
    bare_samples: list[float] = []
    # CPU time of the calling thread: on a shared machine the wall clock mostly tells how
    # loaded it is, while the CPU time tells what the call itself costs
    cpu: dict[str, list[float]] = {"floor": [], "guarded": []}
    for index in range(calls):
        began = time.thread_time()
        floor_samples += timed(floor, 1, offset=index)
        middle = time.thread_time()
        guarded_samples += timed(guarded_call, 1, offset=1_000_000 + index)
        cpu["floor"].append(middle - began)
        cpu["guarded"].append(time.thread_time() - middle)
        bare_samples += timed(bare_noop, 1, offset=index)
    result = {
        "backend": backend,
        "bare": describe("bare", bare_samples),
        "floor": describe("floor", floor_samples),
        "guarded": describe("guarded", guarded_samples),
        "cpu_median_us": {name: statistics.median(samples) * 1e6 for name, samples in cpu.items()},
        "overhead_median_us": (statistics.median(guarded_samples) - statistics.median(bare_samples))
        * 1e6,
        "overhead_p99_us": (percentile(guarded_samples, 0.99) - percentile(bare_samples, 0.99))
        * 1e6,
        "ratio_to_floor": statistics.median(guarded_samples) / statistics.median(floor_samples),
        "calls_per_s": {},
    }
    per_worker = max(50, calls // 4)
    for count in (1, workers) if workers else ():
        result["calls_per_s"][count] = {
            "floor": throughput(floor, count, per_worker),
            "guarded": throughput(guarded_call, count, per_worker),
        }
    return result


def bench_async(
    backend: str,
    floor: Callable[[int], None],
    sync_call: Callable[[int], Any],
    async_calls: dict[str, Callable[[int], Coroutine[Any, Any, Any]]],
    calls: int,
) -> dict[str, Any]:
    """Sync and async guarded calls and the floor, one call each in turn, in one event loop.

    Each async call is awaited from the coroutine that times it, as an agent's loop awaits a
    tool; the sync call and the floor run in the same loop's thread between them. The order
    is shuffled from one round to the next.
    """

    async def measure() -> dict[str, Any]:
        operations: dict[str, Callable[[int], Any]] = {"floor": floor, "sync": sync_call}
        wall: dict[str, list[float]] = {name: [] for name in (*operations, *async_calls)}
        cpu: dict[str, list[float]] = {name: [] for name in wall}
        names = list(wall)
        order = random.Random(31)
        for index in range(-50, calls):  # the first 50 warm up connections, pages, caches
            # in a new order each round, so that every path follows every other equally often:
            # in a fixed order, the path run right after the sync call measured 10 % more CPU
            # than the same code run one place later
            order.shuffle(names)
            for name in names:
                offset = list(wall).index(name)
                began_cpu, began = time.thread_time(), time.perf_counter()
                if name in operations:
                    operations[name](offset * 10_000_000 + 60_000_000 + index)
                else:
                    await async_calls[name](offset * 10_000_000 + 60_000_000 + index)
                if index >= 0:
                    wall[name].append(time.perf_counter() - began)
                    cpu[name].append(time.thread_time() - began_cpu)
        return {
            "backend": backend,
            "median_us": {name: statistics.median(samples) * 1e6 for name, samples in wall.items()},
            "cpu_median_us": {
                name: statistics.median(samples) * 1e6 for name, samples in cpu.items()
            },
        }

    return asyncio.run(measure())


def print_async_result(result: dict[str, Any]) -> None:
    print(f"== {result['backend']}: async against sync (interleaved in one event loop) ==")
    wall, cpu = result["median_us"], result["cpu_median_us"]
    for name in wall:
        ratios = "" if name == "floor" else f"   {wall[name] / wall['floor']:.2f}x the floor"
        if name == "floor (async)":
            ratios += f", cpu {cpu[name] / cpu['floor']:.2f}x the sync floor's"
        elif name not in ("floor", "sync"):
            ratios += (
                f", {wall[name] / wall['sync']:.2f}x sync (cpu {cpu[name] / cpu['sync']:.2f}x)"
            )
        print(f"  {name:<14} wall {wall[name]:9.1f} us   cpu {cpu[name]:9.1f} us{ratios}")


def print_result(result: dict[str, Any]) -> None:
    print(f"== {result['backend']} ==")
    for name in ("bare", "floor", "guarded"):
        figures = result[name]
        print(
            f"  {name:<8} median {figures['median_us']:9.1f} us   p99 {figures['p99_us']:9.1f} us"
        )
    print(
        f"  overhead vs bare: median {result['overhead_median_us']:.1f} us, "
        f"p99 {result['overhead_p99_us']:.1f} us"
    )
    print(f"  guarded / floor (median): {result['ratio_to_floor']:.2f}x  (goal <= 1.5x)")
    cpu = result["cpu_median_us"]
    print(
        f"  CPU time of the calling thread (median): floor {cpu['floor']:.1f} us, "
        f"guarded {cpu['guarded']:.1f} us"
    )
    for workers, figures in result["calls_per_s"].items():
        print(
            f"  {workers} worker(s): guarded {figures['guarded']:8.0f} calls/s, "
            f"floor {figures['floor']:8.0f} pairs/s"
        )


def add_pg_dsn_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pg-dsn",
        default=os.environ.get(
            "AGENTGUARD_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )


def drop_schemas(dsn: str, *schemas: str) -> None:
    """Drop the PostgreSQL schemas a benchmark made."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        for schema in schemas:
            connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every backend this many times, each round reported on its own",
    )
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--backend", action="append", choices=["sqlite", "postgres", "memory"])
    parser.add_argument(
        "--async",
        dest="async_calls",
        action="store_true",
        help="also measure async guarded calls against sync ones (SQLite and PostgreSQL)",
    )
    parser.add_argument(
        "--no-throughput", action="store_true", help="skip the calls-per-second figures"
    )
    add_pg_dsn_option(parser)
    parser.add_argument("--dir", help="directory for the SQLite files (default: a temporary one)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile --calls guarded calls on the in-memory ledger and print where time went",
    )
    options = parser.parse_args(argv)
    if options.profile:
        profile_guarded(options.calls)
        return 0
    backends = options.backend or ["sqlite"]
    ratios: dict[str, list[float]] = {}
    schemas: list[str] = []
    try:
        with tempfile.TemporaryDirectory(dir=options.dir) as tmp:
            for round_number in range(1, options.rounds + 1):
                if options.rounds > 1:
                    print(f"#### round {round_number} of {options.rounds} (load {load()})")
                for backend in backends:
                    workers = 0 if options.no_throughput else options.workers
                    directory = Path(tmp) / f"round{round_number}-{backend}"
                    directory.mkdir()
                    schema = f"agentguard_bench_{os.getpid()}_{round_number}_{backend}"
                    if backend == "postgres":
                        schemas += [schema, f"{schema}_async", f"{schema}_thread"]
                    result = run_backend(backend, options, directory, schema, workers)
                    print_result(result)
                    ratios.setdefault(result["backend"], []).append(result["ratio_to_floor"])
                    if options.async_calls and backend != "memory":
                        print_async_result(run_async(backend, options, directory, schema))
    finally:
        if schemas:
            drop_schemas(options.pg_dsn, *schemas)
    if options.rounds > 1:
        print("#### guarded / floor (median) in each round")
        for backend, values in ratios.items():
            if backend.startswith("memory"):
                continue
            listed = ", ".join(f"{value:.2f}x" for value in values)
            verdict = "yes" if max(values) <= 1.5 else "NO"
            print(f"  {backend}: {listed}; every round <= 1.5x: {verdict}")
    return 0


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def run_backend(
    backend: str, options: argparse.Namespace, directory: Path, schema: str, workers: int
) -> dict[str, Any]:
    if backend == "memory":
        # no durable commit to compare with: the floor is the bare call itself
        return bench_backend(
            "memory (no durability)",
            bare_noop,
            guarded_noop("memory://"),
            options.calls,
            workers,
        )
    if backend == "sqlite":
        return bench_backend(
            "sqlite (WAL, synchronous=FULL)",
            sqlite_floor(directory),
            guarded_noop(f"sqlite:///{directory / 'ledger.db'}"),
            options.calls,
            workers,
        )
    return bench_backend(
        "postgresql",
        postgres_floor(options.pg_dsn, schema),
        guarded_noop(f"{options.pg_dsn}?schema={schema}"),
        options.calls,
        workers,
    )


def run_async(
    backend: str, options: argparse.Namespace, directory: Path, schema: str
) -> dict[str, Any]:
    if backend == "sqlite":
        return bench_async(
            "sqlite",
            sqlite_floor(directory),
            guarded_noop(f"sqlite:///{directory / 'sync.db'}"),
            {"async (thread)": guarded_async_noop(f"sqlite:///{directory / 'async.db'}")},
            options.calls,
        )
    base = f"{options.pg_dsn}?schema={schema}"
    return bench_async(
        "postgresql",
        postgres_floor(options.pg_dsn, schema),
        guarded_noop(base),
        {
            # the floor's statements on psycopg's async connection: the least an async call costs
            "floor (async)": postgres_async_floor(options.pg_dsn, schema),
            "async (native)": guarded_async_noop(f"{base}_async"),
            "async (thread)": guarded_async_noop(f"{base}_thread", native=False),
        },
        options.calls,
    )


if __name__ == "__main__":
    sys.exit(main())
