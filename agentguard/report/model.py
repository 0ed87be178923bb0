"""The checklist report's data: one verdict per checklist question, one row per tool.

Built from a finished scan (findings plus the project model); the renderers only format it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from agentguard import __version__
from agentguard.checks.base import QUESTIONS, Rule, all_rules
from agentguard.checks.evals.shared import EvalVerdict, ReplayTests, eval_verdict
from agentguard.diagnostics import Finding, Severity, StepKind
from agentguard.engine.display_paths import PathPresenter
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult

PASS, PARTIAL, FAIL = "pass", "partial", "fail"
NOT_APPLICABLE, NOT_CHECKED = "not applicable", "not checked"
VERDICTS = (PASS, PARTIAL, FAIL, NOT_APPLICABLE, NOT_CHECKED)
# The order questions appear in: the checklist, then retries, then the scan itself.
QUESTION_ORDER = ("Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8", "retry", "meta")
RUNTIME_ANSWERS = {
    "Q1": "declared in @guarded",
    "Q2": "key built by the runtime",
    "Q3": "the runtime writes the ledger before the call",
    "Q4": "the runtime turns a timeout into SIDE_EFFECT_UNCERTAIN",
    "Q5": "the runtime never replays an uncertain call",
    "Q6": "the runtime's observation carries code and retryable",
    "Q7": "the runtime's ledger stores the input hash and key",
}
GOOD, BAD, UNKNOWN, NEUTRAL = "good", "bad", "unknown", "neutral"


@dataclass
class Evidence:
    text: str
    path: str | None = None
    line: int | None = None
    code: str | None = None
    severity: str | None = None
    tool: str | None = None


@dataclass
class QuestionVerdict:
    id: str
    question: str
    verdict: str
    summary: str
    rules: list[str]
    counts: dict[str, int]
    findings: list[Evidence] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)  # what the verdict rests on


@dataclass
class Cell:
    """One table cell: the value, where it comes from, and whether it is good news."""

    value: str
    source: str = ""  # declared (guarded) | inferred | finding | runtime | ...
    status: str = NEUTRAL
    # Where the declaration and the code disagree, the disagreement in words; the value
    # stays a word of the column's vocabulary so that readers of the JSON can compare it.
    note: str = ""


@dataclass
class ToolRow:
    name: str
    framework: str
    path: str
    line: int
    effects: list[str]
    risk: Cell
    idempotency: Cell
    replay: Cell
    key: Cell
    ledger: Cell
    timeout: Cell
    observation: Cell
    eval: Cell
    findings: list[Evidence]

    @property
    def finding_codes(self) -> list[str]:
        """The codes of the tool's findings, each once, in code order."""
        return sorted({f.code for f in self.findings if f.code})

    @property
    def worst(self) -> str:
        ranks = [Severity(f.severity).rank for f in self.findings if f.severity]
        return ["info", "warning", "error"][max(ranks)] if ranks else "none"


@dataclass
class Report:
    version: str
    root_name: str
    files: int
    questions: list[QuestionVerdict]
    tools: list[ToolRow]
    findings: int
    by_severity: dict[str, int]
    problems: list[Evidence]
    link_base: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for row, tool in zip(data["tools"], self.tools, strict=True):
            row["worst"] = tool.worst
        data["schema_version"] = "1.0"
        return data


def _evidence(finding: Finding) -> Evidence:
    return Evidence(
        text=f"{finding.code} {finding.message}",
        path=finding.path,
        line=finding.span.line,
        code=finding.code,
        severity=finding.severity.value,
        tool=finding.tool,
    )


def _rules_by_question() -> dict[str, list[type[Rule]]]:
    grouped: dict[str, list[type[Rule]]] = defaultdict(list)
    for rule in all_rules():
        grouped[rule.question].append(rule)
    return grouped


def _relevant_tools(qid: str, writers: list[ToolFacts]) -> list[ToolFacts]:
    """The tools a question is about: keys matter only for remote non-idempotent writes (a
    local file has nothing downstream to deduplicate); the rest concern every write tool."""
    if qid == "Q2":
        return [
            t
            for t in writers
            if any(e.remote_write for e in t.non_idempotent_writes())
            or (not t.writes() and t.declared_write is not None and not _declared_idempotent(t))
        ]
    return writers


def _declared_idempotent(tool: ToolFacts) -> bool:
    decl = tool.declaration
    return decl is not None and decl.says_idempotent


def _found_writes(tools: list[ToolFacts]) -> int:
    """How many of ``tools`` have a write found in their code: what the rules can check (a
    tool that only declares a write gives them nothing to judge)."""
    return sum(1 for t in tools if t.writes())


def _judge(
    qid: str,
    rules: list[type[Rule]],
    findings: list[Finding],
    writers: list[ToolFacts],
    relevant_count: int,
    paths: PathPresenter,
) -> tuple[str, str, list[Evidence]]:
    """Verdict, one-line summary and supporting evidence for one question."""
    guarded = [t for t in writers if t.guarded is not None]
    support = [
        Evidence(
            f"`{t.name}` is wrapped in agentguard.runtime.guarded",
            paths.show(t.guarded.location.path),
            t.guarded.location.span.line,
            tool=t.name,
        )
        for t in guarded
        if t.guarded is not None
    ]
    if findings:
        flagged = {f.tool for f in findings if f.tool}
        project_wide = [f for f in findings if not f.tool]
        errors = [f for f in findings if f.severity is Severity.ERROR]
        clean = [t.name for t in writers if t.name not in flagged]
        verdict = FAIL if errors and (project_wide or not clean) else PARTIAL
        # tools flagged only because their effects could not be judged (AG104) are no
        # write tools: counted apart, so "1 of 0 write tools flagged" cannot happen
        writer_names = {t.name for t in writers}
        unjudged = {f.tool for f in findings if f.code == "AG104" and f.tool} - writer_names
        unjudged -= {f.tool for f in findings if f.code != "AG104"}
        # "N of M write tools flagged" counts only write tools (N <= M); a rule that also
        # flags tools that only read (Q6: raw errors) has those counted apart.
        flagged_writers = flagged & writer_names
        others = flagged - writer_names - unjudged
        tools_text = (
            f"{len(flagged_writers)} of {relevant_count} {'remote ' if qid == 'Q2' else ''}"
            "write tools flagged"
            if flagged_writers and qid != "retry"
            else ""
        )
        other_text = (
            f"{len(others)} other tool{'s' * (len(others) != 1)} flagged"
            if others and qid != "retry"
            else ""
        )
        wide = f"{len(project_wide)} project-wide" if project_wide else ""
        unknown = f"{len(unjudged)} with effects not judged" if unjudged else ""
        detail = ", ".join(p for p in (tools_text, other_text, wide, unknown) if p)
        noun = "finding" if len(findings) == 1 else "findings"
        return verdict, f"{len(findings)} {noun}" + (f" ({detail})" if detail else ""), support
    if qid == "meta":
        return PASS, "every file was read, every suppression is used", support
    if qid == "retry":
        if relevant_count == 0:
            return NOT_APPLICABLE, "no retry constructs found", support
        return PASS, f"{relevant_count} retry constructs, none unsafe", support
    if not writers:
        if qid == "Q2":
            return NOT_APPLICABLE, "no tool makes a remote non-idempotent write", support
        return NOT_APPLICABLE, "no tool writes anything: every tool is read-only", support
    if not rules:
        if len(guarded) == len(writers) and qid in RUNTIME_ANSWERS:
            return PASS, f"all {len(writers)} write tools: {RUNTIME_ANSWERS[qid]}", support
        return (
            NOT_CHECKED,
            f"no rule in agentguard {__version__} checks this; "
            f"{len(guarded)} of {len(writers)} write tools use the runtime",
            support,
        )
    # Q1 judges declarations, which a declared tool has; the others judge found writes
    checked = len(writers) if qid == "Q1" else _found_writes(writers)
    declared_only = len(writers) - checked
    if checked == 0:
        return (
            NOT_CHECKED,
            f"{declared_only} tools declare a write, but none was found in their code to check",
            support,
        )
    summary = f"{checked} write tools checked, no finding"
    if declared_only:
        summary += f"; {declared_only} more declare a write not found in their code"
    return PASS, summary, support


def _cell_for(
    tool: ToolFacts,
    qid: str,
    findings: list[Finding],
    rules: list[type[Rule]],
    runtime_text: str,
) -> Cell:
    if not tool.writes() and tool.declared_write is None:
        return _not_a_writer(tool)
    mine = sorted({f.code for f in findings if f.tool == tool.name and f.question == qid})
    if mine:
        return Cell(", ".join(mine), "finding", BAD)
    if tool.guarded is not None:
        return Cell(runtime_text, "runtime", GOOD)
    if not tool.writes():
        return _declared_unchecked()
    if rules:
        return Cell("no finding", "checked", GOOD)
    return Cell("not checked", "", UNKNOWN)


def _declared_unchecked() -> Cell:
    """A tool that declares a write none of its code shows: nothing for a rule to check."""
    return Cell("not checked (declared write, none found in code)", "declared", UNKNOWN)


def _no_writer_summary(tools: list[ToolFacts], summary: str) -> str:
    """Why a question about writes applies to nothing, only as far as it is true: no tools
    found is not "every tool is read-only", nor is a tool whose effects were not judged."""
    if not tools:
        return "no tools found"
    unjudged = [t for t in tools if t.unjudged()]
    if unjudged:
        return (
            f"no write found, but {len(unjudged)} of {len(tools)} tools make calls whose "
            "effects could not be judged"
        )
    return summary


def _not_a_writer(tool: ToolFacts) -> Cell:
    """The cell of a question about writes for a tool with none found: read-only only
    when every call leaving the project was judged."""
    if tool.unjudged():
        return Cell("n/a (effects unknown)", "", UNKNOWN)
    return Cell("n/a (read-only)", "", NEUTRAL)


def _declared_or_inferred(tool: ToolFacts) -> tuple[Cell, Cell, Cell]:
    decl = tool.declaration
    source = f"declared ({decl.source})" if decl else ""
    writes = tool.writes()
    kinds = sorted({e.kind for e in writes})
    non_idempotent = tool.non_idempotent_writes()
    if decl and decl.risk:
        risk = Cell(decl.risk, source, NEUTRAL)
    elif decl and decl.read_only is not None:
        risk = Cell("read" if decl.read_only else "write", source, NEUTRAL)
    else:
        shown = [*kinds, "unknown"] if tool.unjudged() else kinds
        risk = Cell(", ".join(shown) if shown else "read", "inferred", NEUTRAL)
    if decl and decl.idempotency:
        idem = Cell(decl.idempotency, source, NEUTRAL)
    elif decl and decl.idempotent_hint is not None:
        idem = Cell("idempotent" if decl.idempotent_hint else "non-idempotent", source, NEUTRAL)
    elif not writes:
        idem = Cell("unknown" if tool.unjudged() else "idempotent", "inferred", NEUTRAL)
    else:
        idem = Cell("non-idempotent" if non_idempotent else "idempotent", "inferred", NEUTRAL)
    if decl and decl.replay:
        replay = Cell(
            decl.replay, source, BAD if decl.replay == "auto" and non_idempotent else NEUTRAL
        )
    elif not writes and tool.declared_write is not None:
        # the declaration is evidence of a write: never "safe" for want of one found
        if _declared_idempotent(tool):
            replay = Cell("safe: declared idempotent", source, GOOD)
        else:
            replay = Cell("unknown: declared write, none found in code", source, UNKNOWN)
    elif not writes and not tool.unjudged():
        replay = Cell("safe", "inferred", GOOD)
    else:
        unsafe = [e for e in non_idempotent if e.key is None]
        if unjudged := tool.unjudged():
            # safe only with evidence: every reachable effect known to be a read
            replay = Cell(f"unknown: {len(unjudged)} call(s) not judged", "inferred", UNKNOWN)
            if unsafe:
                replay = Cell("unsafe: repeats the write", "inferred", BAD)
        elif not non_idempotent:
            replay = Cell("safe: idempotent", "inferred", GOOD)
        elif unsafe:
            replay = Cell("unsafe: repeats the write", "inferred", BAD)
        else:
            replay = Cell("safe: keyed", "inferred", GOOD)
    return _reconciled(tool, risk, idem, replay)


def _reconciled(tool: ToolFacts, risk: Cell, idem: Cell, replay: Cell) -> tuple[Cell, Cell, Cell]:
    """One row, one story: where a declaration says one thing and the code shows another,
    the declared cell says so in words, and the replay verdict (from the code) names the
    declaration it disagrees with, so that no two cells of a row seem to contradict."""
    decl = tool.declaration
    writes = tool.writes()
    if decl is None or not writes:
        return risk, idem, replay
    kinds = ", ".join(sorted({e.kind for e in writes}))
    non_idempotent = bool(tool.non_idempotent_writes())
    if risk.source.startswith("declared") and risk.value == "read":
        risk = Cell("read", risk.source, BAD, note=f"the code writes: {kinds}")
    declared_idempotent = idem.value == "idempotent" and idem.source.startswith("declared")
    declared_repeating = idem.value in {
        "non-idempotent",
        "non_idempotent",
    } and idem.source.startswith("declared")
    if declared_idempotent and non_idempotent:
        idem = Cell("idempotent", idem.source, BAD, note="the code makes a non-idempotent write")
    elif declared_repeating and not non_idempotent:
        idem = Cell(idem.value, idem.source, NEUTRAL, note="the code's writes are idempotent")
        if replay.value == "safe: idempotent":
            replay = Cell(
                "safe: idempotent",
                replay.source,
                GOOD,
                note="judged from the code; the declaration says non-idempotent",
            )
    return risk, idem, replay


def _key_cell(tool: ToolFacts, findings: list[Finding]) -> Cell:
    if not tool.writes() and tool.declared_write is None:
        return _not_a_writer(tool)
    mine = sorted({f.code for f in findings if f.tool == tool.name and f.question == "Q2"})
    if not tool.writes() and not (tool.guarded is not None and tool.guarded.has_key):
        if mine:
            return Cell(f"none ({', '.join(mine)})", "declared", BAD)
        if _declared_idempotent(tool):
            return Cell("not needed (declared idempotent)", "declared", GOOD)
        return _declared_unchecked()
    guarded = tool.guarded
    if guarded is not None and guarded.has_key:
        return Cell(
            "runtime key" + (f" ({', '.join(mine)})" if mine else ""),
            "declared (guarded)",
            BAD if mine else GOOD,
        )
    non_idempotent = tool.non_idempotent_writes()
    if not non_idempotent:
        return Cell("not needed (idempotent)", "inferred", GOOD)
    remote = [e for e in non_idempotent if e.remote_write]
    if not remote and not mine:
        return Cell("n/a (local write)", "inferred", NEUTRAL)
    origins = sorted({e.key.origin for e in remote if e.key is not None})
    missing = any(e.key is None for e in remote)
    parts = origins + (["none"] if missing or not origins else [])
    text = ", ".join(dict.fromkeys(parts))
    if mine:
        text += f" ({', '.join(mine)})"
    return Cell(text, "inferred", BAD if mine or missing else GOOD)


# Why AG801 asks no eval of a write tool, in the report's words.
_EVAL_EXEMPT = {
    "declared idempotent": ("not needed (declared idempotent)", "declared", GOOD),
    "no counted write": ("not needed (no non-idempotent write)", "inferred", GOOD),
    "schema only": ("not checked (schema only)", "", UNKNOWN),
}


def _eval_cell(
    tool: ToolFacts,
    verdict: EvalVerdict,
    findings: list[Finding],
    rules: bool,
    paths: PathPresenter,
) -> Cell:
    """AG801's verdict for the tool (the same one the rule reports), in a table cell."""
    if not tool.writes() and tool.declared_write is None:
        return _not_a_writer(tool)
    mine = sorted({f.code for f in findings if f.tool == tool.name and f.question == "Q8"})
    if not tool.writes() and not mine:
        return _declared_unchecked()
    if mine:
        return Cell(", ".join(mine), "finding", BAD)
    if verdict.test is not None:
        kind = "fault-injection" if verdict.test.uses_runtime_testing else "timeout"
        return Cell(f"{kind} test: {paths.show(verdict.test.location.path)}", "checked", GOOD)
    if verdict.exempt == "runtime":
        return Cell("runtime fault-injection suite", "runtime", GOOD)
    if verdict.exempt:
        return Cell(*_EVAL_EXEMPT[verdict.exempt])
    return Cell("no test found", "inferred", BAD if rules else UNKNOWN)


def _found_in(finding: Finding, tool: ToolFacts, paths: PathPresenter) -> bool:
    """Whether ``finding`` is about ``tool`` rather than another tool of the same name: the
    tool its evidence starts from is at the tool's place (else, it is in the tool's file)."""
    anchor = paths.show(tool.anchor.path), tool.anchor.span.line
    for step in finding.evidence:
        if step.kind is StepKind.TOOL and step.location is not None:
            return (step.location.path, step.location.span.line) == anchor
    return finding.path == anchor[0]


def build_report(result: ScanResult, link_base: str | None = None) -> Report:
    """The report of a scan; every path in it (and so every ``link_base`` link) is relative
    to the repository root, as in every output of ``check``."""
    by_question = _rules_by_question()
    paths = result.paths
    findings = paths.findings(result.findings)
    problems_shown = paths.problems(result.problems)
    # a tool declaring a write is a write tool even where inference finds none
    writers = [t for t in result.project.tools if t.writes() or t.declared_write is not None]
    retry_count = sum(1 for _ in result.project.retry_uses())
    replay_safety_tests = ReplayTests.of(result.project)
    questions: list[QuestionVerdict] = []
    ids = [q for q in QUESTION_ORDER if q in QUESTIONS] + [
        q for q in QUESTIONS if q not in QUESTION_ORDER
    ]
    for qid in ids:
        rules = by_question.get(qid, [])
        mine = [f for f in findings if f.question == qid]
        scope = _relevant_tools(qid, writers)
        flagged = {f.tool for f in mine if f.tool}
        # a tool flagged for the question is one it concerns: "N of M flagged" has N <= M
        scope += [
            t for t in result.project.tools if t.name in flagged and t not in scope and t.writes()
        ]
        relevant = retry_count if qid == "retry" else len(scope)
        verdict, summary, support = _judge(qid, rules, mine, scope, relevant, paths)
        if not writers and verdict == NOT_APPLICABLE and qid not in {"retry", "meta"}:
            summary = _no_writer_summary(result.project.tools, summary)
        skipped = [p for p in problems_shown if not p.reported]
        if qid == "meta" and skipped:
            verdict = PARTIAL if verdict == PASS else verdict
            if summary.startswith("every file was read, "):
                summary = summary[len("every file was read, ") :]
            summary = f"{len(skipped)} files could not be read; " + summary
            support += [Evidence(f"skipped: {p.reason}", p.path, p.span.line) for p in skipped]
        counts = {
            "findings": len(mine),
            "error": sum(1 for f in mine if f.severity is Severity.ERROR),
            "warning": sum(1 for f in mine if f.severity is Severity.WARNING),
            "info": sum(1 for f in mine if f.severity is Severity.INFO),
            "tools_flagged": len({f.tool for f in mine if f.tool}),
            "relevant": relevant,
        }
        questions.append(
            QuestionVerdict(
                id=qid,
                question=QUESTIONS[qid],
                verdict=verdict,
                summary=summary,
                rules=[r.code for r in rules],
                counts=counts,
                findings=[_evidence(f) for f in mine],
                evidence=support,
            )
        )
    rows = []
    named = Counter(tool.name for tool in result.project.tools)
    for tool in result.project.tools:
        # two toolkits may both have a ``delete_file``: each row keeps tool_findings own tool's
        tool_findings = (
            findings
            if named[tool.name] == 1
            else [f for f in findings if f.tool != tool.name or _found_in(f, tool, paths)]
        )
        risk, idem, replay = _declared_or_inferred(tool)
        rows.append(
            ToolRow(
                name=tool.name,
                framework=tool.framework,
                path=paths.show(tool.path),
                line=tool.anchor.span.line,
                effects=sorted({e.kind for e in tool.effects}),
                risk=risk,
                idempotency=idem,
                replay=replay,
                key=_key_cell(tool, tool_findings),
                ledger=_cell_for(
                    tool, "Q3", tool_findings, by_question.get("Q3", []), "runtime ledger"
                ),
                timeout=_cell_for(
                    tool, "Q4", tool_findings, by_question.get("Q4", []), "runtime: uncertain"
                ),
                observation=_cell_for(
                    tool, "Q6", tool_findings, by_question.get("Q6", []), "runtime observation"
                ),
                eval=_eval_cell(
                    tool,
                    eval_verdict(result.project, tool, replay_safety_tests),
                    tool_findings,
                    bool(by_question.get("Q8")),
                    paths,
                ),
                findings=[_evidence(f) for f in tool_findings if f.tool == tool.name],
            )
        )
    by_severity = {s.value: sum(1 for f in findings if f.severity is s) for s in Severity}
    problems = [Evidence(f"{p.kind}: {p.reason}", p.path, p.span.line) for p in problems_shown]
    return Report(
        version=__version__,
        root_name=result.root.name,
        files=result.files_scanned,
        questions=questions,
        tools=rows,
        findings=len(findings),
        by_severity=by_severity,
        problems=problems,
        link_base=link_base,
    )
