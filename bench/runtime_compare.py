"""A guarded call of an earlier commit against this tree's, interleaved in one process.

The earlier commit's ``agentguard`` package is exported (``git archive``) into a temporary
directory under another name, so both runtimes load side by side; the floor (two durable
commits, as in ``runtime_overhead.py``), the earlier call and this tree's call then take turns,
one call each, so that a noisy neighbour or a slow disk phase hits all three alike. Besides the
wall-clock medians it reports each call's CPU time (``time.thread_time``): on a shared machine
the CPU time of the calling thread says what the runtime costs when the wall clock mostly says
how loaded the machine is.

    python -m bench.runtime_compare --before 6085e15 --backend memory --backend sqlite

``--async`` compares async guarded calls instead (before, after, and this tree's sync call, in
one event loop; see ``runtime_overhead.bench_async``).
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.runtime_overhead import (
    add_pg_dsn_option,
    bare_noop,
    bench_async,
    drop_schemas,
    guarded_async_noop,
    guarded_noop,
    postgres_floor,
    print_async_result,
    sqlite_floor,
)

REPO = Path(__file__).resolve().parents[1]
BEFORE = "agentguard_before"


def export_before(revision: str, directory: Path) -> Any:
    """The runtime of ``revision``, imported as ``agentguard_before.runtime``."""
    archive = subprocess.run(
        ["git", "archive", revision, "agentguard"], cwd=REPO, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(directory, filter="data")
        else:  # pragma: no cover - Python before 3.10.12: our own archive, extracted as is
            tar.extractall(directory)
    (directory / "agentguard").rename(directory / BEFORE)
    pattern = re.compile(r"\bagentguard(?=[.\s])")
    for path in (directory / BEFORE).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        lines = [
            pattern.sub(BEFORE, line) if line.lstrip().startswith(("from ", "import ")) else line
            for line in text.splitlines(keepends=True)
        ]
        path.write_text("".join(lines), encoding="utf-8")
    sys.path.insert(0, str(directory))
    return importlib.import_module(f"{BEFORE}.runtime")


def compare(
    label: str,
    floor: Callable[[int], Any],
    before: Callable[[int], Any],
    after: Callable[[int], Any],
    calls: int,
) -> None:
    operations = {"floor": floor, "before": before, "after": after}
    for operation in operations.values():
        for index in range(100):  # warm up connections, pages, caches
            operation(50_000_000 + index)
    wall: dict[str, list[float]] = {name: [] for name in operations}
    cpu: dict[str, list[float]] = {name: [] for name in operations}
    for index in range(calls):
        for offset, (name, operation) in enumerate(operations.items()):
            began_cpu, began = time.thread_time(), time.perf_counter()
            operation(offset * 10_000_000 + index)
            wall[name].append(time.perf_counter() - began)
            cpu[name].append(time.thread_time() - began_cpu)
    median = {name: statistics.median(samples) * 1e6 for name, samples in wall.items()}
    median_cpu = {name: statistics.median(samples) * 1e6 for name, samples in cpu.items()}
    print(f"== {label} ({calls} calls each, interleaved) ==")
    for name in operations:
        ratio = f"  {median[name] / median['floor']:.2f}x the floor" if name != "floor" else ""
        print(f"  {name:<7} wall {median[name]:9.1f} us   cpu {median_cpu[name]:9.1f} us{ratio}")
    print(
        f"  after / before: wall {median['after'] / median['before']:.2f}, "
        f"cpu {median_cpu['after'] / median_cpu['before']:.2f}"
    )


def compare_async(
    backend: str, before_module: Any, options: argparse.Namespace, directory: Path
) -> None:
    """Async guarded calls of the earlier commit and of this tree, beside this tree's sync call
    and the floor, in one event loop."""
    if backend == "memory":
        floor: Callable[[int], Any] = bare_noop
        urls = {name: "memory://" for name in ("sync", "before", "after")}
    elif backend == "sqlite":
        floor = sqlite_floor(directory)
        urls = {
            name: f"sqlite:///{directory / f'async_{name}.db'}"
            for name in ("sync", "before", "after")
        }
    else:
        schema = f"agentguard_compare_async_{os.getpid()}"
        floor = postgres_floor(options.pg_dsn, f"{schema}_floor")
        urls = {
            name: f"{options.pg_dsn}?schema={schema}_{name}" for name in ("sync", "before", "after")
        }
    try:
        print_async_result(
            bench_async(
                backend,
                floor,
                guarded_noop(urls["sync"]),
                {
                    "before async": guarded_async_noop(urls["before"], before_module),
                    "after async": guarded_async_noop(urls["after"]),
                },
                options.calls,
            )
        )
    finally:
        if backend == "postgres":
            drop_schemas(
                options.pg_dsn,
                *(f"{schema}_{part}" for part in ("floor", "sync", "before", "after")),
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--backend", action="append", choices=["memory", "sqlite", "postgres"])
    parser.add_argument(
        "--async", dest="async_calls", action="store_true", help="compare async guarded calls"
    )
    add_pg_dsn_option(parser)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            before_module = export_before(options.before, Path(tmp) / "before")
        except (subprocess.CalledProcessError, OSError) as exc:
            print(f"cannot export {options.before}: {exc}", file=sys.stderr)
            return 2
        for backend in options.backend or ["memory"]:
            if options.async_calls:
                compare_async(backend, before_module, options, Path(tmp))
            elif backend == "memory":
                urls = ("memory://", "memory://")
                compare(
                    "memory (the floor is the bare call)",
                    bare_noop,
                    guarded_noop(urls[0], before_module),
                    guarded_noop(urls[1]),
                    options.calls,
                )
            elif backend == "sqlite":
                compare(
                    "sqlite (WAL, synchronous=FULL)",
                    sqlite_floor(Path(tmp)),
                    guarded_noop(f"sqlite:///{Path(tmp) / 'before.db'}", before_module),
                    guarded_noop(f"sqlite:///{Path(tmp) / 'after.db'}"),
                    options.calls,
                )
            else:
                schema = f"agentguard_compare_{os.getpid()}"
                try:
                    compare(
                        "postgresql",
                        postgres_floor(options.pg_dsn, f"{schema}_floor"),
                        guarded_noop(f"{options.pg_dsn}?schema={schema}_before", before_module),
                        guarded_noop(f"{options.pg_dsn}?schema={schema}_after"),
                        options.calls,
                    )
                finally:
                    drop_schemas(
                        options.pg_dsn,
                        *(f"{schema}_{part}" for part in ("floor", "before", "after")),
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
