"""TypeScript benchmark: agentguard's facts and cold check against tree-sitter and ESLint.

    python bench/ts_run.py [--scratch DIR] [--mirrors DIR] [--runs 3] [--json FILE]
                           [--baseline SOURCE] [--facts-only]

On the TypeScript corpus (``bench/ts_corpus.py``; built from local mirrors of its
repositories on first use), one run measures, each as a whole process, in rounds that
alternate the commands (so a shared machine's drifting load falls on each alike):

- tree-sitter's bare parse of every file, in one process (the TSX grammar for ``.tsx``);
- agentguard's facts extraction alone, in one process: the function the engine calls per
  file (``--facts-function``), on bytes read beforehand, the cyclic collector paused
  and what was kept frozen after, as the engine's facts phase does (the parse is timed
  the same way);
- a cold ``agentguard check --no-cache --exit-zero -q`` at ``-j 1`` and ``-j 2``;
- ESLint with typescript-eslint's ``recommended`` rules (not type-aware), from a flat
  config in a temporary folder, single-threaded and with ``--concurrency 2``. ESLint,
  typescript-eslint and typescript are installed at pinned versions with npm into
  ``$XDG_CACHE_HOME/agentguard-bench/eslint``, outside the repository.

``--baseline`` names another agentguard source tree whose facts are timed too, in the
same rounds (the facts row only); ``--facts-only`` leaves out ESLint and the checks.

It prints the median wall and CPU seconds (user + sys, children included) of ``--runs``
rounds, the parse and facts loops' own seconds (without interpreter start-up and imports),
and the ratios the TypeScript front end is held to: the cold check within twice ESLint's time,
facts within twice the bare parse's. Every figure and ratio comes from this one run.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ts_corpus import build_ts_corpus, default_scratch, mirrors_argument, typescript_files

REPO = Path(__file__).resolve().parent.parent
NPM_PACKAGES = ("eslint@10.16.0", "typescript-eslint@8.74.0", "typescript@6.0.3")
DEFAULT_FACTS_FUNCTION = "agentguard.engine.parallel:source_facts"

# The flat config: typescript-eslint's recommended (not type-checked) rules on every .ts
# and .tsx file. It lives outside the corpus, and loads typescript-eslint from the npm
# folder, which is not an ancestor of the config.
ESLINT_CONFIG = """import {{ createRequire }} from "node:module";
const require = createRequire({package_json});
const tseslint = require("typescript-eslint");
export default [
  ...tseslint.configs.recommended,
  {{ files: ["**/*.ts", "**/*.tsx"] }},
];
"""
# A formatter that prints only counts: the files ESLint linted (to check it saw the whole
# corpus) and its messages by rule, without the cost of printing ten thousand messages.
ESLINT_FORMATTER = """module.exports = (results) => {
  const rules = {};
  let fatal = 0;
  for (const result of results) {
    fatal += result.fatalErrorCount;
    for (const message of result.messages) {
      const rule = message.ruleId || "(no rule: an unused disable directive, a parse error)";
      rules[rule] = (rules[rule] || 0) + 1;
    }
  }
  return JSON.stringify({ files: results.length, fatal, rules });
};
"""


@dataclass
class Row:
    name: str
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    loop_walls: list[float] = field(default_factory=list)
    loop_cpus: list[float] = field(default_factory=list)
    peak_kib: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)

    @property
    def loop_wall(self) -> float:
        return statistics.median(self.loop_walls)

    @property
    def loop_cpu(self) -> float:
        return statistics.median(self.loop_cpus)


@dataclass
class Case:
    """One command, run once per round; ``reports_loop``: it prints its loop's seconds as
    JSON (the parse and facts workers)."""

    row: Row
    command: list[str]
    cwd: Path | None = None
    env: dict[str, str] | None = None
    reports_loop: bool = False
    output: str = ""

    def run(self) -> None:
        wall, cpu, peak, code, self.output, error = timed(self.command, self.cwd, self.env)
        if code != 0:
            last = (error.strip().splitlines() or ["(no message)"])[-1]
            self.row.failures.append(f"exit {code}: {last}")
            return
        self.row.walls.append(wall)
        self.row.cpus.append(cpu)
        self.row.peak_kib = max(self.row.peak_kib, peak)
        if self.reports_loop:
            report = json.loads(self.output)
            self.row.loop_walls.append(report["wall"])
            self.row.loop_cpus.append(report["cpu"])


def timed(
    command: list[str], cwd: Path | None, env: dict[str, str] | None
) -> tuple[float, float, int, int, str, str]:
    """Wall seconds, CPU seconds (user + sys, children included), peak RSS (KiB), exit
    code, stdout and stderr of one whole process."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        use_time = Path("/usr/bin/time").exists()
        wrapped = ["/usr/bin/time", "-f", "%M %U %S", "-o", report.name, *command]
        started = time.perf_counter()
        before = os.times()
        done = subprocess.run(
            wrapped if use_time else command,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        after = os.times()
        peak = 0
        cpu = (after.children_user - before.children_user) + (
            after.children_system - before.children_system
        )
        if use_time:
            last = report.read().strip().splitlines()[-1:] or ["0 0 0"]
            fields = last[0].split()
            if len(fields) == 3:
                peak, cpu = int(fields[0]), float(fields[1]) + float(fields[2])
    return wall, cpu, peak, done.returncode, done.stdout, done.stderr


# Workers: run in a process of their own by the rounds, print one JSON object.


@contextmanager
def engine_collector() -> Iterator[None]:
    """The cyclic collector as the engine's facts phase handles it (``Speed.facts``), for
    both workers alike: paused while the files are read, then what was kept frozen, so
    that no collection of every fact made falls inside the timed loop (the engine never
    runs one either)."""
    from agentguard.engine.parallel import collector_paused

    with collector_paused():
        yield
        gc.freeze()


def read_corpus(corpus: Path) -> list[tuple[str, bytes]]:
    return [
        (path.relative_to(corpus).as_posix(), path.read_bytes())
        for path in typescript_files(corpus)
    ]


def parse_worker(corpus: Path) -> dict[str, Any]:
    """tree-sitter's parse of every file, nothing else done with the trees."""
    import tree_sitter
    import tree_sitter_typescript

    parsers = {
        ".ts": tree_sitter.Parser(
            tree_sitter.Language(tree_sitter_typescript.language_typescript())
        ),
        ".tsx": tree_sitter.Parser(tree_sitter.Language(tree_sitter_typescript.language_tsx())),
    }
    sources = read_corpus(corpus)
    with_errors: list[str] = []
    started_cpu, started = time.process_time(), time.perf_counter()
    with engine_collector():
        for rel, data in sources:
            tree = parsers[Path(rel).suffix].parse(data)
            if tree.root_node.has_error:
                with_errors.append(rel)
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    return {"files": len(sources), "wall": wall, "cpu": cpu, "with_errors": with_errors}


def facts_worker(corpus: Path, function_name: str) -> dict[str, Any]:
    """agentguard's per-file facts of every file, as the engine asks for them."""
    from agentguard.facts.module_facts import ModuleFacts
    from agentguard.knowledge.catalog import load_catalog

    module_name, _, attribute = function_name.partition(":")
    source_facts = getattr(importlib.import_module(module_name), attribute)
    carriers = load_catalog().context_carriers
    sources = read_corpus(corpus)
    results: list[object] = []
    started_cpu, started = time.process_time(), time.perf_counter()
    with engine_collector():
        for rel, data in sources:
            results.append(source_facts(data, rel, carriers))
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    facts = [result for result in results if isinstance(result, ModuleFacts)]
    reasons = Counter(
        str(getattr(result, "reason", result))
        for result in results
        if not isinstance(result, ModuleFacts)
    )
    return {
        "files": len(sources),
        "wall": wall,
        "cpu": cpu,
        "facts": len(facts),
        "with_functions": sum(1 for result in facts if result.functions),
        "problems": sum(reasons.values()),
        "top_problems": reasons.most_common(3),
    }


# The ESLint install and config.


def npm_folder() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agentguard-bench" / "eslint"


def install_eslint() -> Path:
    """The ESLint entry point, installed with its plugins at the pinned versions."""
    folder = npm_folder()
    stamp = folder / ".installed"
    if not stamp.exists() or stamp.read_text() != " ".join(NPM_PACKAGES):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"private": true}\n', encoding="utf-8")
        print(f"installing {', '.join(NPM_PACKAGES)} into {folder} ...", file=sys.stderr)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--save-exact", *NPM_PACKAGES],
            cwd=folder,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        stamp.write_text(" ".join(NPM_PACKAGES))
    return folder / "node_modules" / "eslint" / "bin" / "eslint.js"


def eslint_files(config_dir: Path) -> tuple[Path, Path]:
    """The flat config and the counting formatter, written into ``config_dir``."""
    config = config_dir / "eslint.config.mjs"
    package_json = json.dumps(str(npm_folder() / "package.json"))
    config.write_text(ESLINT_CONFIG.format(package_json=package_json), encoding="utf-8")
    formatter = config_dir / "count-formatter.cjs"
    formatter.write_text(ESLINT_FORMATTER, encoding="utf-8")
    return config, formatter


def node_version() -> str:
    done = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "node not found"


# The run.


def run_rounds(cases: list[Case], runs: int) -> None:
    for _ in range(runs):
        for case in cases:
            case.run()


def ratio(numerator: Row, denominator: Row, attribute: str) -> float | None:
    if not (numerator.walls and denominator.walls):
        return None
    return float(getattr(numerator, attribute)) / float(getattr(denominator, attribute))


def shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def check_details(case: Case) -> dict[str, Any]:
    """One more ``check`` run (untimed): what it scanned and found, and its phases."""
    command = [part for part in case.command if part != "-q"]
    done = subprocess.run(
        [*command, "--format", "json", "--profile"],
        cwd=case.cwd,
        env=case.env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    summary = json.loads(done.stdout)["summary"]
    phases: dict[str, float] = {}
    for line in done.stderr.splitlines():
        cells = [cell.strip() for cell in line.replace("│", "|").split("|")]
        if len(cells) == 2 and cells[1].replace(".", "", 1).isdigit():
            name = "rules" if cells[0].startswith("rule ") else cells[0]
            phases[name] = round(phases.get(name, 0.0) + float(cells[1]), 3)
    return {"summary": summary, "phases": phases}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scratch", type=Path, default=default_scratch())
    mirrors_argument(parser)
    parser.add_argument("--runs", type=int, default=3, help="rounds (medians are reported)")
    parser.add_argument(
        "--facts-function",
        default=DEFAULT_FACTS_FUNCTION,
        help=f"module:function the engine calls per file (default: {DEFAULT_FACTS_FUNCTION})",
    )
    parser.add_argument(
        "--skip-eslint-concurrency", action="store_true", help="no ESLint --concurrency 2 row"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another agentguard source tree (a checkout's root): its facts timed in the same "
        "rounds",
    )
    parser.add_argument("--facts-only", action="store_true", help="only the parse and facts rows")
    parser.add_argument("--worker", choices=("parse", "facts"), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        report = (
            parse_worker(args.corpus)
            if args.worker == "parse"
            else facts_worker(args.corpus, args.facts_function)
        )
        print(json.dumps(report))
        return 0

    scratch: Path = args.scratch.resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    corpus = build_ts_corpus(scratch, args.mirrors)
    files = typescript_files(corpus)
    size = sum(path.stat().st_size for path in files)
    eslint = None if args.facts_only else install_eslint()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    this = [sys.executable, str(Path(__file__).resolve())]

    def agentguard_check(jobs: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "agentguard",
            "check",
            "--no-cache",
            "--exit-zero",
            "-q",
            "-j",
            str(jobs),
            str(corpus),
        ]

    print(
        f"corpus: {len(files):,} .ts/.tsx files, {size / 1e6:.1f} MB; {os.cpu_count()} cores; "
        f"Python {platform.python_version()}; node {node_version()}; "
        f"{', '.join(NPM_PACKAGES)}; {time.strftime('%Y-%m-%d %H:%M')}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="agentguard-eslint-") as config_folder:
        config, formatter = eslint_files(Path(config_folder))
        eslint_command = [
            "node",
            str(eslint or "eslint"),
            "--config",
            str(config),
            "--format",
            str(formatter),
            "--no-warn-ignored",
            ".",
        ]
        parse = Case(
            Row("tree-sitter parse, one process"),
            [*this, "--worker", "parse", "--corpus", str(corpus)],
            reports_loop=True,
        )
        facts_command = [
            *this,
            "--worker",
            "facts",
            "--corpus",
            str(corpus),
            "--facts-function",
            args.facts_function,
        ]
        facts = Case(
            Row(f"agentguard facts ({args.facts_function}), one process"),
            facts_command,
            env=env,
            reports_loop=True,
        )
        baseline = (
            Case(
                Row(f"baseline {args.baseline.resolve().name}: facts, one process"),
                facts_command,
                env={**os.environ, "PYTHONPATH": str(args.baseline.resolve())},
                reports_loop=True,
            )
            if args.baseline is not None
            else None
        )
        check_1 = Case(Row("agentguard check, cold, -j 1"), agentguard_check(1), env=env)
        check_2 = Case(Row("agentguard check, cold, -j 2"), agentguard_check(2), env=env)
        # ESLint exits 1 when it reports errors: only its output tells a failure.
        eslint_1 = Case(
            Row("ESLint + typescript-eslint recommended"),
            ["sh", "-c", '"$@"; [ $? -le 1 ]', "eslint", *eslint_command],
            cwd=corpus,
        )
        eslint_2 = Case(
            Row("ESLint + typescript-eslint recommended, --concurrency 2"),
            ["sh", "-c", '"$@"; [ $? -le 1 ]', "eslint", *eslint_command, "--concurrency", "2"],
            cwd=corpus,
        )
        cases = [parse, facts]
        if baseline is not None:
            cases.append(baseline)
        if not args.facts_only:
            cases += [check_1, eslint_1, check_2]
            if not args.skip_eslint_concurrency:
                cases.append(eslint_2)
        load_before = os.getloadavg()
        run_rounds(cases, args.runs)
        load_after = os.getloadavg()
        details = {} if args.facts_only else check_details(check_2)

    print()
    print(f"load average (1 min) before / after: {load_before[0]:.1f} / {load_after[0]:.1f}")
    print()
    print("| what | runs | wall s | cpu s | loop wall s | loop cpu s | files/s (wall) | peak MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in cases:
        row = case.row
        if not row.walls:
            print(f"| {row.name} | 0 | failed: {row.failures[0]} | | | | | |")
            continue
        loop_wall = f"{row.loop_wall:.2f}" if row.loop_walls else "-"
        loop_cpu = f"{row.loop_cpu:.2f}" if row.loop_cpus else "-"
        print(
            f"| {row.name} | {len(row.walls)} | {row.wall:.2f} | {row.cpu:.2f} | {loop_wall} | "
            f"{loop_cpu} | {len(files) / row.wall:,.0f} | {row.peak_kib / 1024:.0f} |"
        )
    print()
    ratios = {
        "check -j 1 ÷ ESLint, wall": ratio(check_1.row, eslint_1.row, "wall"),
        "check -j 1 ÷ ESLint, cpu": ratio(check_1.row, eslint_1.row, "cpu"),
        "check -j 2 ÷ ESLint, wall": ratio(check_2.row, eslint_1.row, "wall"),
        "check -j 2 ÷ ESLint, cpu": ratio(check_2.row, eslint_1.row, "cpu"),
        "facts ÷ parse, loop cpu": ratio(facts.row, parse.row, "loop_cpu"),
        "facts ÷ parse, loop wall": ratio(facts.row, parse.row, "loop_wall"),
        "facts ÷ parse, whole process cpu": ratio(facts.row, parse.row, "cpu"),
    }
    if baseline is not None:
        ratios["baseline facts ÷ parse, loop cpu"] = ratio(baseline.row, parse.row, "loop_cpu")
        ratios["facts ÷ baseline facts, loop cpu"] = ratio(facts.row, baseline.row, "loop_cpu")
    if facts.output and json.loads(facts.output)["facts"] == 0:
        # Timing Python's parser failing on TypeScript says nothing about extraction.
        for name in [name for name in ratios if name.startswith("facts")]:
            ratios[name] = None
    if not (args.skip_eslint_concurrency or args.facts_only):
        ratios["check -j 2 ÷ ESLint --concurrency 2, wall"] = ratio(
            check_2.row, eslint_2.row, "wall"
        )
    print("ratios (target ≤ 2 for check ÷ ESLint and for facts ÷ parse):")
    for name, value in ratios.items():
        print(f"- {name}: {shown(value)}")
    print()
    worker_reports = {
        "parse": json.loads(parse.output) if parse.output else None,
        "facts": json.loads(facts.output) if facts.output else None,
    }
    parse_report, facts_report = worker_reports["parse"], worker_reports["facts"]
    if parse_report:
        print(f"tree-sitter: {len(parse_report['with_errors'])} files parse with error nodes")
    if facts_report:
        if facts_report["facts"] == 0:
            print(
                f"agentguard facts: NO .ts/.tsx file yields facts yet "
                f"({facts_report['problems']:,} problems, e.g. {facts_report['top_problems']}); "
                "the facts timing measures no TypeScript extraction"
            )
        else:
            print(
                f"agentguard facts: {facts_report['facts']:,} files with facts "
                f"({facts_report['with_functions']:,} with functions), "
                f"{facts_report['problems']:,} problems {facts_report['top_problems']}"
            )
    eslint_report = json.loads(eslint_1.output) if eslint_1.output else None
    if eslint_report:
        top = Counter(eslint_report["rules"]).most_common(5)
        print(
            f"ESLint: {eslint_report['files']:,} files linted, {eslint_report['fatal']} fatal, "
            f"{sum(eslint_report['rules'].values()):,} messages (top: {top})"
        )
    if not details:
        pass
    elif "error" in details:
        print(f"agentguard check: {details['error']}")
    else:
        print(f"agentguard check -j 2 (one more run): {details['summary']}; {details['phases']}")
    if args.json is not None:
        figures = {
            "corpus": {"files": len(files), "bytes": size},
            "load": [load_before[0], load_after[0]],
            "rows": [
                {
                    "name": case.row.name,
                    "walls": case.row.walls,
                    "cpus": case.row.cpus,
                    "loop_walls": case.row.loop_walls,
                    "loop_cpus": case.row.loop_cpus,
                    "peak_kib": case.row.peak_kib,
                    "failures": case.row.failures,
                }
                for case in cases
            ],
            "ratios": ratios,
            "workers": worker_reports,
            "eslint": eslint_report,
            "check": details,
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
