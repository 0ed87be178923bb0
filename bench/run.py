"""Side-by-side benchmark: agentguard cold, warm and after one change, against peers.

    python bench/run.py [--scratch DIR] [--runs 3] [--skip-bandit] [--skip-semgrep]

Builds or reuses the corpus (``bench/corpus.py``) and a venv with ruff, bandit and semgrep
under the scratch folder (default: ``$TMPDIR/agentguard-bench``, outside the repository),
then times every command as a whole process, start-up included: median wall seconds of
``--runs`` runs (bandit once: it takes minutes), files per second, and the peak RSS of the
largest single process (GNU time). Every number and ratio comes from this one run on this
machine; nothing is compared with figures measured elsewhere.

agentguard runs are checked to agree: cold, warm and --jobs 1 print the same findings.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import build_corpus, python_files

REPO = Path(__file__).resolve().parent.parent
SEMGREP_RULE = """rules:
  - id: no-eval
    languages: [python]
    severity: WARNING
    message: eval() call
    pattern: eval(...)
"""


@dataclass
class Row:
    name: str
    walls: list[float] = field(default_factory=list)
    peak_kib: int = 0
    note: str = ""

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB) and stdout of one whole process."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        wrapped = ["/usr/bin/time", "-f", "%M", "-o", report.name, *command]
        use_time = Path("/usr/bin/time").exists()
        started = time.perf_counter()
        done = subprocess.run(
            wrapped if use_time else command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        peak = 0
        if use_time:
            lines = [ln for ln in report.read().splitlines() if ln.strip().isdigit()]
            peak = int(lines[-1]) if lines else 0
    return wall, peak, done.stdout


def measure(
    name: str,
    command: list[str],
    runs: int,
    env: dict[str, str] | None = None,
    before: object = None,
) -> tuple[Row, str]:
    row = Row(name)
    output = ""
    for _ in range(runs):
        if callable(before):
            before()
        wall, peak, output = timed(command, env)
        row.walls.append(wall)
        row.peak_kib = max(row.peak_kib, peak)
    return row, output


def peers_venv(scratch: Path, skip_semgrep: bool) -> Path:
    venv = scratch / "peers"
    bin_dir = venv / "bin"
    if not (bin_dir / "ruff").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        packages = ["ruff", "bandit"] + ([] if skip_semgrep else ["semgrep"])
        subprocess.run([str(bin_dir / "pip"), "install", "--quiet", *packages], check=True)
    return bin_dir


def touch_all(files: list[Path]) -> None:
    """A fresh clone: the same bytes, every modification time new."""
    now = time.time()
    for path in files:
        os.utime(path, (now, now))


def findings_of(output: str) -> list[object]:
    data = json.loads(output)
    return [data["findings"], data["tools"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "agentguard-bench"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-bandit", action="store_true")
    parser.add_argument("--skip-semgrep", action="store_true")
    args = parser.parse_args()
    scratch: Path = args.scratch.resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    corpus = build_corpus(scratch)
    files = python_files(corpus)
    size = sum(p.stat().st_size for p in files)
    peers = peers_venv(scratch, args.skip_semgrep)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cache_dir = scratch / "cache"
    agentguard = [
        sys.executable,
        "-m",
        "agentguard",
        "check",
        str(corpus),
        "--exit-zero",
        "--format",
        "json",
    ]
    rows: list[Row] = []
    runs = args.runs
    print(
        f"corpus: {len(files):,} .py files, {size / 1e6:.1f} MB; {os.cpu_count()} cores; "
        f"Python {platform.python_version()}; {time.strftime('%Y-%m-%d')}",
        flush=True,
    )

    # Floor: read and sha256 every file (what a warm run cannot avoid).
    floor = Row("floor: read + sha256 every file")
    for _ in range(max(runs, 3)):
        started = time.perf_counter()
        for path in files:
            hashlib.sha256(path.read_bytes()).digest()
        floor.walls.append(time.perf_counter() - started)
    rows.append(floor)

    cold, cold_out = measure(
        "agentguard cold (--no-cache, --jobs 2)",
        [*agentguard, "--no-cache", "--jobs", "2"],
        runs,
        env,
    )
    rows.append(cold)
    single, single_out = measure(
        "agentguard cold (--no-cache, --jobs 1)", [*agentguard, "--no-cache", "--jobs", "1"], 1, env
    )
    rows.append(single)
    shutil.rmtree(cache_dir, ignore_errors=True)
    fill, _ = measure(
        "agentguard first run, writing the cache (--jobs 2)",
        [*agentguard, "--cache-dir", str(cache_dir), "--jobs", "2"],
        1,
        env,
    )
    rows.append(fill)
    warm, warm_out = measure(
        "agentguard warm, fresh clone (cache restored, new mtimes)",
        [*agentguard, "--cache-dir", str(cache_dir), "--jobs", "2"],
        runs,
        env,
        before=lambda: touch_all(files),
    )
    rows.append(warm)
    changed_file = files[len(files) // 2]
    original = changed_file.read_bytes()
    counter = [0]

    def change_one() -> None:
        counter[0] += 1
        changed_file.write_bytes(original + f"\n# bench change {counter[0]}\n".encode())

    try:
        one, _ = measure(
            "agentguard warm, one file changed",
            [*agentguard, "--cache-dir", str(cache_dir), "--jobs", "2"],
            runs,
            env,
            before=change_one,
        )
    finally:
        changed_file.write_bytes(original)
    rows.append(one)

    agree = findings_of(cold_out) == findings_of(single_out) == findings_of(warm_out)
    ruff, _ = measure(
        "ruff check --select ALL --no-cache",
        [
            str(peers / "ruff"),
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            "ALL",
            "--exit-zero",
            "--output-format",
            "concise",
            str(corpus),
        ],
        runs,
    )
    rows.append(ruff)
    semgrep = None
    if not args.skip_semgrep and (peers / "semgrep").exists():
        rule = scratch / "semgrep-rule.yaml"
        rule.write_text(SEMGREP_RULE, encoding="utf-8")
        (corpus / ".semgrepignore").write_text("", encoding="utf-8")  # scan tests/ too
        semgrep, _ = measure(
            "semgrep, one local rule",
            [
                str(peers / "semgrep"),
                "scan",
                "--config",
                str(rule),
                "--metrics=off",
                "--disable-version-check",
                "--max-target-bytes",
                "0",
                "--project-root",
                str(corpus),
                str(corpus),
            ],
            1,
        )
        rows.append(semgrep)
    bandit = None
    if not args.skip_bandit:
        bandit, _ = measure(
            "bandit -r (all plugins)", [str(peers / "bandit"), "-r", "-q", str(corpus)], 1
        )
        rows.append(bandit)

    print()
    print("| what | runs | wall s (median) | files/s | peak MiB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        peak = f"{row.peak_kib / 1024:.0f}" if row.peak_kib else "-"
        print(
            f"| {row.name} | {len(row.walls)} | {row.wall:.2f} | "
            f"{len(files) / row.wall:,.0f} | {peak} |"
        )
    print()
    ratios = [
        ("cold ÷ ruff ALL", cold.wall / ruff.wall, "target ≤ 2"),
        ("warm ÷ ruff ALL cold", warm.wall / ruff.wall, "goal < 1"),
        ("warm ÷ sha256 floor", warm.wall / floor.wall, "goal: a few"),
        ("one change ÷ warm", one.wall / warm.wall, "goal ≈ 1"),
    ]
    if semgrep is not None:
        ratios.insert(0, ("cold ÷ semgrep (1 rule)", cold.wall / semgrep.wall, "goal ≤ 1"))
    if bandit is not None:
        ratios.insert(0, ("cold ÷ bandit", cold.wall / bandit.wall, "goal ≤ 0.1"))
    for name, value, goal in ratios:
        print(f"{name}: {value:.3f}  ({goal})")
    print(
        f"peak memory of agentguard: {max(cold.peak_kib, warm.peak_kib) / 1024:.0f} MiB "
        "(goal < 1024)"
    )
    print(
        f"findings identical cold --jobs 2 / --jobs 1 / warm: {agree} "
        f"({len(findings_of(cold_out)[0])} findings)"
    )
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
