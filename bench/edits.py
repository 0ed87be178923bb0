"""Random one-file edits of the corpus: a cached check must print what a fresh run prints.

    python bench/edits.py [--scratch DIR] [--seed 1] [--edits 12]

Works on a copy of the corpus (``bench/corpus.py``) under the scratch folder. Each round
makes one edit to a random file, checks with the cache, and puts the file back:

- a new module-level function appended to the file: one that returns ``json.dumps`` of
  its argument, or one that posts and reports a timeout as a plain failure (AG401 judges
  it wherever it is), or
- a statement inserted at the top of one of its module-level functions or methods: an
  assignment, or an HTTP POST (a new write for every tool that reaches the function).

The edited tree is checked from the cached facts (the run memo has no record of it) and
again with ``--no-cache``: the two outputs (findings, tools, problems, summary) must be
equal. Once the file is put back, the run memo must answer with the first run's output.
Prints each round's outcome and the counts; exits 1 if any output differs.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import build_corpus, python_files

COMPARED = ("findings", "tools", "problems", "summary")
BENCH_URL = "https://bench.example/orders"
REUSED = "its findings were reused"  # what --profile says when the run memo answered


def check(tree: Path, *options: str) -> tuple[dict[str, Any], str]:
    """The JSON output of a check of ``tree``, and what --profile printed."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "agentguard", "check", "."),
            *("--jobs", "2", "--exit-zero", "--format", "json", "--profile"),
            *options,
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    output: dict[str, Any] = json.loads(done.stdout)
    return {key: output[key] for key in COMPARED}, done.stderr


def edited(
    source: str, round_number: int, rng: random.Random, in_place: bool
) -> tuple[str, str] | None:
    """The file's text after one edit (``in_place``: inside a function or method it has,
    if it has one), and what the edit was; None for a file that does not parse."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    functions = [node for node in module.body if isinstance(node, kinds)]
    functions += [
        node
        for owner in module.body
        if isinstance(owner, ast.ClassDef)
        for node in owner.body
        if isinstance(node, kinds)
    ]
    # Dunder methods are run by their names alone: an edit to one is never answered.
    functions = [node for node in functions if not node.name.startswith("__")]
    lines = source.split("\n")
    if functions and in_place:
        function = rng.choice(functions)
        body = function.body
        # After a docstring, not in place of it.
        first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) else body[0]
        indent = " " * first.col_offset
        statement, what = rng.choice(
            [
                (f"_bench_edit = {round_number}", "an assignment"),
                (f'__import__("requests").post("{BENCH_URL}", json={{}})', "a POST"),
            ]
        )
        lines.insert(first.lineno - 1, indent + statement)
        return "\n".join(lines), f"{what} added to {function.name}"
    name = f"_bench_added_{round_number}"
    added, what = rng.choice(
        [
            ("    return json.dumps(value)\n", "a function added"),
            (
                "    try:\n"
                f'        __import__("requests").post("{BENCH_URL}", json=value, timeout=5)\n'
                "    except TimeoutError:\n"
                '        return "failed"\n'
                '    return "sent"\n',
                "a function handling a timeout added",
            ),
        ]
    )
    return f"{source}\n\ndef {name}(value):\n{added}", what


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "agentguard-bench"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--edits", type=int, default=12)
    args = parser.parse_args()
    corpus = build_corpus(args.scratch)
    tree = args.scratch / "edited-corpus"
    cache = args.scratch / "edits-cache"
    for folder in (tree, cache):
        if folder.exists():
            shutil.rmtree(folder)
    shutil.copytree(corpus, tree)
    files = python_files(tree)
    rng = random.Random(args.seed)
    first, _ = check(tree, "--cache-dir", str(cache))
    rounds = differing = 0
    for round_number in range(args.edits):
        # Half the edits inside functions: most files of the corpus hold none (data
        # classes, re-exports), so a file is drawn until one has some.
        in_place = rng.random() < 0.5
        for _ in range(50):
            path = rng.choice(files)
            original = path.read_bytes()
            edit = edited(original.decode("utf-8", "replace"), round_number, rng, in_place)
            if edit is not None and (not in_place or "added to" in edit[1]):
                break
        if edit is None:
            continue
        text, what = edit
        path.write_text(text, encoding="utf-8")
        try:
            output, profile = check(tree, "--cache-dir", str(cache))
            relinked = REUSED not in profile
            same = relinked and output == check(tree, "--no-cache")[0]
        finally:
            path.write_bytes(original)
        back, profile = check(tree, "--cache-dir", str(cache))
        recalled = REUSED in profile and back == first
        rounds += 1
        differing += not (same and recalled)
        print(
            f"{round_number:>3} {path.relative_to(tree)}: {what}: "
            f"{'same as a fresh run' if same else 'DIFFERENT from a fresh run'}; put back: "
            f"{'answered by the run memo' if recalled else 'NOT answered by the run memo'}"
        )
        sys.stdout.flush()
    print(f"edits: {rounds}, outputs different or not answered: {differing}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
