"""Side-by-side benchmark: agentguard cold, warm and after one change, against peers.

    python bench/run.py [--scratch DIR] [--corpus DIR] [--baseline SOURCE] [--runs 3]
                        [--ci-only] [--skip-bandit] [--skip-semgrep]

What CI runs is measured first, in the same rounds as its peers: a cold check in text, in
JSON, in SARIF and as the GitHub Action runs it (``--format github`` with SARIF, markdown
and JSON written too), and the Action's run again after a fresh copy of the tree with its
cache restored; against ruff ``--select ALL`` (version RUFF_VERSION) and the floor of
``ast.parse`` on every file in two processes, with the facts phase of a cold run (from
``--profile``) and the peak memory. ``--baseline`` names another agentguard source tree
(a checkout of the commit to compare with): its runs alternate with this one's, so that
both see the same load. ``--corpus`` checks a folder of ``.py`` files of your own instead
of the one ``bench/corpus.py`` builds. ``--ci-only`` stops there.

Builds or reuses the corpus (``bench/corpus.py``) and a venv with ruff, bandit and semgrep
under the scratch folder (default: ``$TMPDIR/agentguard-bench``, outside the repository),
compiles agentguard's bytecode as an install would (the peers' is compiled by pip), then
times every command as a whole process, start-up included: median wall seconds of
``--runs`` runs (bandit once: it takes minutes), files per second, and the peak RSS of the
largest single process (GNU time). Every number and ratio comes from this one run on this
machine; nothing is compared with figures measured elsewhere.

agentguard runs are checked to agree: cold, warm, --jobs 1 and after each change print the
same findings (after a tool's function changed: those of a fresh run).

A cold run on every other file of the corpus (``bench/corpus.py``: the same code, half as
much) shows how the cost grows with the number of files.

The warm run after a fresh clone (same bytes, new modification times) is answered by the
run memo. Three "one file changed" cases are checked in full from the cached facts (the
project linked again): a comment added to the middle file of the corpus, a function added
to it (nothing calls it), and a statement added to the function of a tool the first run
found (the rules read it: the findings are checked against a fresh run's).
"""

from __future__ import annotations

import argparse
import ast
import compileall
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import build_corpus, half_corpus, python_files

REPO = Path(__file__).resolve().parent.parent
# The peer every ratio is taken against, pinned so that figures of different days compare.
RUFF_VERSION = "0.17.6"
# ``ast.parse`` of every file in two processes (as agentguard's ``--jobs 2``): the least a
# checker that parses every file does. Files no parser reads are skipped, as by ruff.
PARSE_FLOOR = """
import ast, multiprocessing, sys
from pathlib import Path

def parse(path):
    try:
        ast.parse(Path(path).read_bytes())
    except (SyntaxError, ValueError, RecursionError):
        pass
    return 0

if __name__ == "__main__":
    files = sorted(str(p) for p in Path(sys.argv[1]).rglob("*.py"))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        sum(pool.imap_unordered(parse, files, chunksize=8))
"""
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
    cpus: list[float] = field(default_factory=list)
    peak_kib: int = 0
    note: str = ""

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
    """Wall seconds, cpu seconds (user + sys, children included), peak RSS (KiB) and stdout
    of one whole process."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        wrapped = ["/usr/bin/time", "-f", "%M %U %S", "-o", report.name, *command]
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
        peak, cpu = 0, 0.0
        if use_time:
            last = report.read().strip().splitlines()[-1:] or ["0 0 0"]
            fields = last[0].split()
            if len(fields) == 3:
                peak, cpu = int(fields[0]), float(fields[1]) + float(fields[2])
    return wall, cpu, peak, done.stdout


@dataclass
class Case:
    """One command, run once per round; rounds interleave the commands, so that the
    load of a shared machine drifting over minutes falls on every command alike."""

    row: Row
    command: list[str]
    env: dict[str, str] | None = None
    before: Callable[[], None] | None = None
    rounds: int = 3
    output: str = ""

    def run(self) -> None:
        if self.before is not None:
            self.before()
        wall, cpu, peak, self.output = timed(self.command, self.env)
        self.row.walls.append(wall)
        self.row.cpus.append(cpu)
        self.row.peak_kib = max(self.row.peak_kib, peak)


PROFILE_ROW = re.compile(r"^\s*(?P<name>\S.*?)\s+│\s+(?P<seconds>\d+\.\d+)\s*$")


def phase_seconds(case: Case) -> tuple[dict[str, float], str]:
    """Where one more run of ``case`` spends its time, from agentguard's ``--profile``
    (printed on stderr): seconds by phase, the rules summed into one figure; and what it
    says of the run memo."""
    if case.before is not None:
        case.before()
    done = subprocess.run(
        [*case.command, "--profile"],
        env=case.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    seconds: dict[str, float] = {}
    note = ""
    for line in done.stderr.splitlines():
        match = PROFILE_ROW.match(line)
        if match:
            name = "rules" if match["name"].startswith("rule ") else match["name"]
            seconds[name] = seconds.get(name, 0.0) + float(match["seconds"])
        elif line.startswith("run memo:"):
            note = f" ({line.strip()})"
    return seconds, note


def phases(case: Case) -> str:
    """:func:`phase_seconds` as one line."""
    seconds, note = phase_seconds(case)
    return ", ".join(f"{name} {value:.2f}" for name, value in seconds.items()) + note


def run_rounds(cases: list[Case]) -> None:
    for round_number in range(max(case.rounds for case in cases)):
        for case in cases:
            if round_number < case.rounds:
                case.run()


def compile_bytecode(package: Path) -> None:
    """Write agentguard's bytecode, as ``pip install`` does for the peers' packages. Run from
    a source checkout with PYTHONDONTWRITEBYTECODE set (as some CI images and containers
    set it), every agentguard run would compile its own modules again: about 0.07 s of a
    warm run, which no installed copy pays."""
    compileall.compile_dir(package, quiet=1)


def peers_venv(scratch: Path, skip_semgrep: bool) -> Path:
    venv = scratch / "peers"
    bin_dir = venv / "bin"
    if not (bin_dir / "ruff").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        packages = [f"ruff=={RUFF_VERSION}", "bandit"] + ([] if skip_semgrep else ["semgrep"])
        subprocess.run([str(bin_dir / "pip"), "install", "--quiet", *packages], check=True)
    version = subprocess.run(
        [str(bin_dir / "ruff"), "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    if version != RUFF_VERSION:  # a scratch folder from before the pin
        subprocess.run(
            [str(bin_dir / "pip"), "install", "--quiet", f"ruff=={RUFF_VERSION}"], check=True
        )
    return bin_dir


def ruff_case(peers: Path, corpus: Path, runs: int) -> Case:
    return Case(
        Row(f"ruff {RUFF_VERSION} check --select ALL --no-cache"),
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
        rounds=runs,
    )


@dataclass
class Side:
    """What CI runs, from one agentguard source tree (cold in each output, and the GitHub
    Action's run cold and again after a fresh copy with its cache restored)."""

    label: str
    cold_text: Case
    cold_json: Case
    cold_sarif: Case
    action: Case
    fill: Case
    warm: Case
    written: Path  # the Action's files: cold/ and warm/

    @property
    def timed(self) -> list[Case]:
        return [self.cold_text, self.cold_json, self.cold_sarif, self.action, self.warm]

    def action_json(self, run: str) -> str:
        return (self.written / run / "agentguard.json").read_text(encoding="utf-8")


def ci_side(label: str, source: Path, corpus: Path, scratch: Path, runs: int) -> Side:
    """The cases of what CI runs for the agentguard of ``source`` (its bytecode compiled
    first, as an install would have it)."""
    compile_bytecode(source / "agentguard")
    # PYTHONSAFEPATH: ``python -m`` would otherwise put the working directory first on the
    # path, and a bench started in one agentguard checkout would run it on both sides.
    env = {**os.environ, "PYTHONPATH": str(source), "PYTHONSAFEPATH": "1"}
    files = python_files(corpus)
    check = [sys.executable, "-m", "agentguard", "check", str(corpus), "--exit-zero", "--jobs", "2"]
    written = scratch / f"outputs-{label}-{os.getpid()}"

    def action(folder: str) -> list[str]:
        """As action.yml runs it: annotations on stdout; SARIF, the summary and JSON into
        ``folder``."""
        (written / folder).mkdir(parents=True, exist_ok=True)
        return [
            *check,
            "--format",
            "github",
            "--output",
            f"sarif:{written / folder / 'agentguard.sarif'}",
            "--output",
            f"markdown:{written / folder / 'summary.md'}",
            "--output",
            f"json:{written / folder / 'agentguard.json'}",
        ]

    cache_dir = scratch / f"cache-{label}-{os.getpid()}"

    def case(name: str, command: list[str], before: Callable[[], None] | None = None) -> Case:
        return Case(Row(f"{label}: {name}"), command, env, before=before, rounds=runs)

    return Side(
        label,
        cold_text=case("cold, text (--no-cache)", [*check, "--no-cache"]),
        cold_json=case(
            "cold, --format json (--no-cache)", [*check, "--no-cache", "--format", "json"]
        ),
        cold_sarif=case(
            "cold, --format sarif (--no-cache)", [*check, "--no-cache", "--format", "sarif"]
        ),
        action=case(
            "cold, the Action's run (github; sarif, markdown, json files)",
            [*action("cold"), "--no-cache"],
        ),
        fill=Case(
            Row(f"{label}: the Action's run, writing its cache"),
            [*action("warm"), "--cache-dir", str(cache_dir)],
            env,
            rounds=1,
        ),
        warm=case(
            "warm, the Action's run after a fresh copy (cache restored, new mtimes)",
            [*action("warm"), "--cache-dir", str(cache_dir)],
            before=lambda: touch_all(files),
        ),
        written=written,
    )


def ci_table(corpus: Path, scratch: Path, peers: Path, runs: int, baseline: Path | None) -> bool:
    """Time what CI runs against ruff and the parse floor, for this checkout and the
    baseline's, their runs alternating; print the table and the ratios to the goals.
    True when every output of a side reports the same findings."""
    sides = [ci_side("this", REPO, corpus, scratch, runs)]
    if baseline is not None:
        sides.append(ci_side("baseline", baseline.resolve(), corpus, scratch, runs))
    ruff = ruff_case(peers, corpus, runs)
    floor = Case(
        Row("floor: ast.parse of every file, 2 processes"),
        [sys.executable, "-c", PARSE_FLOOR, str(corpus)],
        rounds=runs,
    )
    load_before = os.getloadavg()
    for side in sides:
        side.fill.run()
    cases: list[Case] = [ruff, floor]
    for timed_cases in zip(*(side.timed for side in sides), strict=True):
        cases.extend(timed_cases)  # one side's run, then the other's: the same load
    run_rounds(cases)
    facts = {side.label: phase_seconds(side.cold_json)[0] for side in sides}
    load_after = os.getloadavg()
    print()
    print(
        f"What CI runs (--jobs 2); load average (1 min) before / after: "
        f"{load_before[0]:.1f} / {load_after[0]:.1f}"
    )
    print()
    print("| what | runs | wall s (median) | cpu s (median) | peak MiB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for case in [ruff, floor, *(c for side in sides for c in [side.fill, *side.timed])]:
        row = case.row
        peak = f"{row.peak_kib / 1024:.0f}" if row.peak_kib else "-"
        print(
            f"| {row.name} | {len(row.walls)} | {row.wall:.2f} | "
            f"{statistics.median(row.cpus):.2f} | {peak} |"
        )
    print()

    def ratio(case: Case) -> str:
        """Wall time to ruff's, and CPU time (what a shared machine's load changes less)."""
        ruff_cpu = statistics.median(ruff.row.cpus)
        cpu = f"{statistics.median(case.row.cpus) / ruff_cpu:.2f}" if ruff_cpu else "-"
        return f"{case.row.wall / ruff.row.wall:.2f} (cpu {cpu})"

    agree = True
    for side in sides:
        seconds = facts[side.label]
        peak_mib = max(case.row.peak_kib for case in side.timed) / 1024
        print(f"{side.label}:")
        print(f"  cold json ÷ ruff: {ratio(side.cold_json)}  (target ≤ 2.0)")
        print(f"  cold text ÷ ruff: {ratio(side.cold_text)}  (target ≤ 1.5)")
        print(f"  cold sarif ÷ ruff: {ratio(side.cold_sarif)}")
        print(f"  the Action's cold run ÷ ruff: {ratio(side.action)}")
        print(f"  warm after a fresh copy ÷ ruff: {ratio(side.warm)}  (target ≤ 0.1)")
        if "facts" in seconds:
            print(
                f"  facts phase ÷ parse floor: {seconds['facts'] / floor.row.wall:.2f}"
                f" ({seconds['facts']:.2f} s of one more cold json run)  (target ≤ 2)"
            )
        print(f"  peak memory: {peak_mib:.0f} MiB  (target < 1024)")
        print(
            "  one more cold json run, seconds by phase (--profile): "
            + ", ".join(f"{name} {value:.2f}" for name, value in seconds.items())
        )
        same = (
            findings_of(side.cold_json.output)
            == findings_of(side.action_json("cold"))
            == findings_of(side.action_json("warm"))
        )
        print(f"  cold json and the Action's json, cold and warm, report the same findings: {same}")
        agree = agree and same
    if len(sides) == 2:
        same = findings_of(sides[0].cold_json.output) == findings_of(sides[1].cold_json.output)
        print(f"this and the baseline report the same findings and tools: {same}")
    return agree


def touch_all(files: list[Path]) -> None:
    """A fresh clone: the same bytes, every modification time new."""
    now = time.time()
    for path in files:
        os.utime(path, (now, now))


_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.With,
    ast.AsyncWith,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Match,
)


def reached_function(corpus: Path, output: dict[str, Any]) -> tuple[Path, str, int]:
    """A function of a tool the first run found, to edit: its file, the file's text, and
    the line of a statement in it that ends its line (one more statement can be put after
    it without moving any other line)."""
    for tool in output["tools"]:
        path = corpus / tool["path"]
        source = path.read_text(encoding="utf-8")
        lines = source.split("\n")
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if not start <= tool["line"] <= (node.end_lineno or node.lineno):
                continue
            for statement in node.body:
                if (
                    not isinstance(statement, _COMPOUND)
                    and not (isinstance(statement, ast.Expr) and statement is node.body[0])
                    and statement.lineno == statement.end_lineno
                    and statement.end_col_offset == len(lines[statement.lineno - 1].rstrip())
                ):
                    return path, source, statement.lineno
    raise SystemExit("no tool function of the corpus has a one-line statement to edit")


def append_statement(source: str, line: int, statement: str) -> str:
    """``source`` with ``statement`` after the last one on ``line`` (no line moves)."""
    lines = source.split("\n")
    lines[line - 1] = f"{lines[line - 1].rstrip()}; {statement}"
    return "\n".join(lines)


def findings_of(output: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The findings and the tools of a ``--format json`` output."""
    data = json.loads(output)
    return data["findings"], data["tools"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "agentguard-bench"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-bandit", action="store_true")
    parser.add_argument("--skip-semgrep", action="store_true")
    parser.add_argument(
        "--corpus", type=Path, help="check this folder of .py files, not bench/corpus.py's"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another agentguard source tree (a checkout of the commit to compare with), "
        "whose runs of what CI runs alternate with this one's",
    )
    parser.add_argument("--ci-only", action="store_true", help="time only what CI runs, then stop")
    args = parser.parse_args()
    scratch: Path = args.scratch.resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus.resolve() if args.corpus else build_corpus(scratch)
    files = python_files(corpus)
    size = sum(p.stat().st_size for p in files)
    peers = peers_venv(scratch, args.skip_semgrep or args.ci_only)
    print(
        f"corpus: {len(files):,} .py files, {size / 1e6:.1f} MB; {os.cpu_count()} cores; "
        f"Python {platform.python_version()}; {time.strftime('%Y-%m-%d')}",
        flush=True,
    )
    ci_agrees = ci_table(corpus, scratch, peers, args.runs, args.baseline)
    if args.ci_only:
        for old_cache in scratch.glob("cache*"):
            shutil.rmtree(old_cache, ignore_errors=True)
        return 0 if ci_agrees else 1
    compile_bytecode(REPO / "agentguard")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # A new folder each run, and the old ones removed only once the timing is done: on a
    # file system that discards freed blocks, writing thousands of files right after
    # deleting thousands more took seconds longer than into a fresh folder.
    cache_dir = scratch / f"cache-{os.getpid()}"

    def agentguard_on(folder: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "agentguard",
            "check",
            str(folder),
            "--exit-zero",
            "--format",
            "json",
        ]

    agentguard = agentguard_on(corpus)
    rows: list[Row] = []
    runs = args.runs

    # Floor: read and sha256 every file (what a warm run cannot avoid).
    floor = Row("floor: read + sha256 every file")
    for _ in range(max(runs, 3)):
        started = time.perf_counter()
        for path in files:
            hashlib.sha256(path.read_bytes()).digest()
        floor.walls.append(time.perf_counter() - started)
    rows.append(floor)

    fill = Case(
        Row("agentguard first run, writing the cache (--jobs 2)"),
        [*agentguard, "--cache-dir", str(cache_dir), "--jobs", "2"],
        env,
        rounds=1,
    )
    fill.run()
    changed_file = files[len(files) // 2]
    original = changed_file.read_bytes()
    counter = [0]
    tool_file, tool_source = changed_file, ""

    def restore() -> None:
        changed_file.write_bytes(original)
        if tool_source:
            tool_file.write_text(tool_source, encoding="utf-8")

    def change_one() -> None:
        restore()
        counter[0] += 1
        changed_file.write_bytes(original + f"\n# bench change {counter[0]}\n".encode())

    def change_code() -> None:
        restore()
        counter[0] += 1
        added = f"\n\ndef bench_change_{counter[0]}() -> int:\n    return {counter[0]}\n"
        changed_file.write_bytes(original + added.encode())

    tool_file, tool_source, tool_line = reached_function(corpus, json.loads(fill.output))

    def change_reached() -> None:
        restore()
        counter[0] += 1
        tool_file.write_text(
            append_statement(tool_source, tool_line, f"_bench_change = {counter[0]}"),
            encoding="utf-8",
        )

    def fresh_clone() -> None:
        restore()
        touch_all(files)

    cold = Case(
        Row("agentguard cold (--no-cache, --jobs 2)"),
        [*agentguard, "--no-cache", "--jobs", "2"],
        env,
        rounds=runs,
    )
    # Every other file of a corpus of your own goes in a folder of its own.
    half_scratch = scratch
    if args.corpus is not None:
        half_scratch = scratch / f"corpus-{hashlib.sha256(bytes(corpus)).hexdigest()[:12]}"
    half = half_corpus(half_scratch, corpus)
    half_files = len(python_files(half))
    cold_half = Case(
        Row(f"agentguard cold on every other file ({half_files:,} files; --no-cache, --jobs 2)"),
        [*agentguard_on(half), "--no-cache", "--jobs", "2"],
        env,
        rounds=runs,
    )
    single = Case(
        Row("agentguard cold (--no-cache, --jobs 1)"),
        [*agentguard, "--no-cache", "--jobs", "1"],
        env,
        rounds=1,
    )
    warm_command = [*agentguard, "--cache-dir", str(cache_dir), "--jobs", "2"]
    warm = Case(
        Row("agentguard warm, fresh clone (cache restored, new mtimes)"),
        warm_command,
        env,
        before=fresh_clone,
        rounds=runs,
    )
    one = Case(
        Row("agentguard warm, a comment added to one file"),
        warm_command,
        env,
        before=change_one,
        rounds=runs,
    )
    one_code = Case(
        Row("agentguard warm, a function added to one file"),
        warm_command,
        env,
        before=change_code,
        rounds=runs,
    )
    one_reached = Case(
        Row("agentguard warm, a statement added to a tool's function"),
        warm_command,
        env,
        before=change_reached,
        rounds=runs,
    )
    ruff = ruff_case(peers, corpus, runs)
    cases = [
        cold,
        cold_half,
        ruff,
        warm,
        one,
        one_code,
        one_reached,
        single,
    ]
    semgrep = bandit = None
    if not args.skip_semgrep and (peers / "semgrep").exists():
        rule = scratch / "semgrep-rule.yaml"
        rule.write_text(SEMGREP_RULE, encoding="utf-8")
        (corpus / ".semgrepignore").write_text("", encoding="utf-8")  # scan tests/ too
        semgrep = Case(
            Row("semgrep, one local rule"),
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
            # As many rounds as agentguard's cold run: the goal is their ratio.
            rounds=runs,
        )
        cases.append(semgrep)
    if not args.skip_bandit:
        # bandit takes minutes: once.
        bandit = Case(
            Row("bandit -r (all plugins)"),
            [str(peers / "bandit"), "-r", "-q", str(corpus)],
            rounds=1,
        )
        cases.append(bandit)
    load_before = os.getloadavg()
    try:
        run_rounds(cases)
        cold_phases = phases(cold)
        relink_phases = phases(one_code)
        reached_phases = phases(one_reached)
        # The re-link after the tool's edit must print what a fresh run prints.
        change_reached()
        fresh = Case(Row("fresh"), [*agentguard, "--no-cache", "--jobs", "2"], env, rounds=1)
        fresh.run()
        reached_agrees = findings_of(fresh.output) == findings_of(one_reached.output)
    finally:
        restore()
    load_after = os.getloadavg()
    for old_cache in scratch.glob("cache*"):
        shutil.rmtree(old_cache, ignore_errors=True)
    rows += [fill.row] + [case.row for case in cases]
    agree = (
        findings_of(cold.output)
        == findings_of(single.output)
        == findings_of(warm.output)
        == findings_of(one.output)
        == findings_of(one_code.output)
    )

    print()
    print(f"load average (1 min) before / after: {load_before[0]:.1f} / {load_after[0]:.1f}")
    print()
    print("| what | runs | wall s (median) | cpu s (median) | files/s | peak MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        peak = f"{row.peak_kib / 1024:.0f}" if row.peak_kib else "-"
        cpu = f"{statistics.median(row.cpus):.2f}" if row.cpus else "-"
        print(
            f"| {row.name} | {len(row.walls)} | {row.wall:.2f} | {cpu} | "
            f"{len(files) / row.wall:,.0f} | {peak} |"
        )
    print()
    ratios = [
        ("cold ÷ ruff ALL", cold.row.wall / ruff.row.wall, "target ≤ 2"),
        ("warm ÷ ruff ALL cold", warm.row.wall / ruff.row.wall, "goal < 0.2"),
        ("warm ÷ sha256 floor", warm.row.wall / floor.wall, "goal: a few"),
        (
            "one comment added ÷ cold",
            one.row.wall / cold.row.wall,
            "a re-link from the cached facts: < 1",
        ),
        ("one function added ÷ cold", one_code.row.wall / cold.row.wall, "< 1"),
        (
            "one statement added to a tool's function ÷ cold",
            one_reached.row.wall / cold.row.wall,
            "< 1",
        ),
        (
            f"cold, all files ÷ every other file ({len(files) / half_files:.2f} times the files)",
            cold.row.wall / cold_half.row.wall,
            "linear: the same as the files' ratio",
        ),
        ("cold --jobs 2 ÷ cold --jobs 1", cold.row.wall / single.row.wall, "2 cores: ≈ 0.5"),
    ]
    if semgrep is not None:
        ratios.insert(0, ("cold ÷ semgrep (1 rule)", cold.row.wall / semgrep.row.wall, "goal ≤ 1"))
    if bandit is not None:
        ratios.insert(0, ("cold ÷ bandit", cold.row.wall / bandit.row.wall, "goal ≤ 0.1"))
    for name, value, goal in ratios:
        print(f"{name}: {value:.3f}  ({goal})")
    peak_mib = max(cold.row.peak_kib, warm.row.peak_kib) / 1024
    print(f"peak memory of agentguard: {peak_mib:.0f} MiB (goal < 1024)")
    print(f"one more cold run, seconds by phase (--profile): {cold_phases}")
    print(f"one more run after a function added, seconds by phase: {relink_phases}")
    print(f"one more run after a tool's function changed, seconds by phase: {reached_phases}")
    print(f"findings after a tool's function changed identical to a fresh run's: {reached_agrees}")
    print(
        f"findings identical cold --jobs 2 / --jobs 1 / warm / after a comment or a function "
        f"added: {agree} "
        f"({len(findings_of(cold.output)[0])} findings)"
    )
    return 0 if agree and reached_agrees and ci_agrees else 1


if __name__ == "__main__":
    raise SystemExit(main())
