"""The same answer every time: findings, fixes and reports do not depend on the number of
processes, the hash seed, the allocator (object addresses), or the order in which workers
return."""

from __future__ import annotations

import functools
import os
import pickle
import subprocess
import sys
from multiprocessing import pool as multiprocessing_pool
from pathlib import Path
from typing import Any

import pytest

from agentguard.config import load_config
from agentguard.engine import parallel
from agentguard.engine.pipeline import scan
from agentguard.engine.speed import FactOptions

from .conftest import FIXTURES

PROJECT = FIXTURES / "dispatch-desk"
# A second project: locker tools behind a project client whose helper is given two
# timeouts, a Telegram alert, a call to another agent's endpoint.
LOCKERS = FIXTURES / "locker-desk"

# The fixture is small: the pools (and the order in which their workers return) only come
# into play when they are started for any number of files, for facts and for fix edits.
RUN = (
    "import sys\n"
    "import agentguard.engine.parallel as parallel\n"
    "import agentguard.engine.fix_edits as fix_edits\n"
    "parallel.MIN_FILES_FOR_POOL = 1\n"
    "parallel.MAX_CHUNK = 1\n"
    "fix_edits.MIN_LINES_FOR_POOL = 0\n"
    "from agentguard.cli import app\n"
    "app(sys.argv[1:], prog_name='agentguard')\n"
)


# The catalogue's sets walked in sorted order or its reverse: a hash seed picks one order of
# each set, these are every set's two ends.
SETS_IN_ORDER = (
    "import sys\n"
    "import agentguard.knowledge.catalog_keys as keys\n"
    "backwards = sys.argv.pop(1) == 'backwards'\n"
    "class InOrder(frozenset):\n"
    "    def __iter__(self):\n"
    "        return iter(sorted(frozenset.__iter__(self), key=str, reverse=backwards))\n"
    "class MutableInOrder(set):\n"
    "    def __iter__(self):\n"
    "        return iter(sorted(set.__iter__(self), key=str, reverse=backwards))\n"
    "keys.frozen = lambda raw: InOrder(keys.as_list(raw))\n"
    "keys.mutable = lambda raw: MutableInOrder(keys.as_list(raw))\n"
    "from agentguard.cli import app\n"
    "app(sys.argv[1:], prog_name='agentguard')\n"
)


def check(
    output_format: str,
    jobs: int,
    seed: str,
    project: Path = PROJECT,
    allocator: str = "",
    *options: str,
) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    env.pop("PYTHONMALLOC", None)
    if allocator:
        # the C library's malloc instead of Python's: other addresses, in another order
        env["PYTHONMALLOC"] = allocator
    command = [
        sys.executable, "-c", RUN, "check", str(project), "--format", output_format,
        "--exit-zero", "--no-cache", "--jobs", str(jobs), *options,
    ]  # fmt: skip
    done = subprocess.run(
        command,
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


@pytest.mark.parametrize("output_format", ["json", "sarif"])
def test_a_project_gives_byte_identical_output_at_any_job_count_and_hash_seed(
    output_format: str,
) -> None:
    first = check(output_format, 1, "0")
    assert b"AG601" in first
    assert b'"edits"' in first or output_format == "sarif"  # fix edits are compared too
    others = ((2, "0"), (4, "0"), (1, "1234"), (2, "1234"), (4, "1234"))
    if output_format == "sarif":
        others = ((4, "1234"),)  # the same scan as JSON's, rendered once more
    for jobs, seed in others:
        assert check(output_format, jobs, seed) == first, (jobs, seed)


def test_another_project_gives_byte_identical_json_at_any_job_count_seed_and_allocator() -> None:
    first = check("json", 1, "0", LOCKERS)
    assert b"AG401" in first
    for jobs, seed, allocator in ((2, "0", ""), (1, "1234", ""), (2, "1234", "malloc")):
        assert check("json", jobs, seed, LOCKERS, allocator) == first, (jobs, seed, allocator)


def test_a_finding_names_the_timeout_the_code_writes_first_whatever_the_hash_seed() -> None:
    # ``self._post(path, body, timeout=CONNECT_S, read_timeout=READ_S)`` around a catch-all:
    # the catalogue's timeout names are a set, whose order is the hash seed's
    for seed in ("0", "1234", "2", "8"):
        found = check("concise", 1, seed, LOCKERS, "", "--select", "AG401")
        assert b"around a call with `timeout=CONNECT_S`" in found, seed


def test_what_a_worker_task_carries_is_fixed_before_the_pool_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The pool's own thread pickles every task while this process parses files of its
    # own, filling cached values of the objects it reads. A task may carry only values
    # that no parse changes, or that thread reads a dict while it grows ("dictionary
    # changed size during iteration", seen once under load).
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 1)
    sent: list[Any] = []
    original = multiprocessing_pool.Pool.imap_unordered

    def recording(self: Any, func: Any, iterable: Any, chunksize: int = 1) -> Any:
        sent.append(func)
        return original(self, func, iterable, chunksize)

    monkeypatch.setattr(multiprocessing_pool.Pool, "imap_unordered", recording)
    options = FactOptions(jobs=2)
    scan([PROJECT], load_config([PROJECT]), facts=options)
    assert options.stats is not None and options.stats.jobs == 2
    (func,) = sent
    assert isinstance(func, functools.partial)
    assert all(isinstance(arg, (bytes, str, int, float, bool)) for arg in func.args)
    assert not func.keywords
    pickle.dumps(func)  # what the pool's thread does with it


def test_no_finding_depends_on_the_order_the_catalogue_s_sets_are_walked_in() -> None:
    def scan_fixtures(order: str) -> bytes:
        command = [
            sys.executable, "-c", SETS_IN_ORDER, order, "check", str(FIXTURES),
            "--format", "json", "--exit-zero", "--no-cache", "--jobs", "1",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        return done.stdout

    forwards = scan_fixtures("forwards")
    assert b"AG401" in forwards
    assert scan_fixtures("backwards") == forwards
