"""Check that two agentguard source trees give the same TypeScript/JavaScript facts.

    python bench/ts_facts_same.py --baseline SOURCE FOLDER [FOLDER ...]

For a change meant to make the TypeScript front end faster and nothing else: each tree, in a
process of its own (``PYTHONPATH`` set to the tree), reads every ``.ts``/``.tsx``/``.js``...
file of each folder as a check does (discovery, the folder's module map, the function the
engine calls per file) and pickles each file's facts with the fact cache's encoder. The two
sets are then compared file by file: byte-identical, equal once read back, or different
(named, and the exit status is 1). Nothing in the folders is run or imported.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def dump(folders: list[Path], out: Path) -> None:
    """In a worker: every TypeScript/JavaScript file's encoded facts, by folder and path."""
    from agentguard.config import load_config
    from agentguard.engine.discovery import discover, test_files
    from agentguard.engine.fact_cache import encode
    from agentguard.engine.parallel import source_facts
    from agentguard.engine.ts_projects import load_ts_module_map
    from agentguard.facts.typescript.modules import TS_SUFFIXES, ts_module_name
    from agentguard.knowledge.catalog import load_catalog

    carriers = load_catalog().context_carriers
    found: dict[str, bytes] = {}
    spent = 0.0
    for folder in folders:
        root = folder.resolve()
        config = load_config([root])
        files = discover([root], config)
        rels = [rel for _, rel in files.sources if rel.endswith(TS_SUFFIXES)]
        modules, _ = load_ts_module_map(config.root, files.ts_configs, rels)
        is_test = test_files(config)
        for absolute, rel in files.sources:
            if not rel.endswith(TS_SUFFIXES):
                continue
            data = Path(absolute).read_bytes()
            started = time.process_time()
            facts = source_facts(data, rel, carriers, is_test(rel), ts_module_name(rel), modules)
            spent += time.process_time() - started
            found[f"{root}::{rel}"] = encode(facts)
    out.write_bytes(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))
    print(f"{len(found):,} files, {spent:.2f} s of CPU in source_facts", file=sys.stderr)


def facts_of(tree: Path, folders: list[Path], out: Path) -> dict[str, bytes]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--worker", str(out), *map(str, folders)]
    print(f"{tree}: ", end="", file=sys.stderr, flush=True)
    subprocess.run(command, env=env, check=True)
    loaded: dict[str, bytes] = pickle.loads(out.read_bytes())
    return loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folders", type=Path, nargs="+", help="folders to read, each a root")
    parser.add_argument(
        "--baseline", type=Path, help="the other agentguard source tree (a checkout's root)"
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        dump(args.folders, args.worker)
        return 0
    if args.baseline is None:
        parser.error("--baseline is required")
    from agentguard.engine.fact_cache import decode

    with tempfile.TemporaryDirectory(prefix="agentguard-facts-same-") as scratch:
        ours = facts_of(REPO, args.folders, Path(scratch) / "this.pickle")
        theirs = facts_of(args.baseline.resolve(), args.folders, Path(scratch) / "base.pickle")
    if ours.keys() != theirs.keys():
        print(f"the trees read different files: {sorted(ours.keys() ^ theirs.keys())[:10]}")
        return 1
    identical = equal = 0
    different: list[str] = []
    for name, blob in ours.items():
        if blob == theirs[name]:
            identical += 1
        elif decode(blob) == decode(theirs[name]):
            equal += 1
        else:
            different.append(name)
    print(
        f"{len(ours):,} files: {identical:,} byte-identical, {equal:,} equal but pickled "
        f"differently, {len(different):,} different"
    )
    for name in different[:20]:
        print(f"  different: {name}")
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
