from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.resume.shared import ResumeReplays
from agentguard.diagnostics import Confidence, EvidenceStep, Finding, Location, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class ResumeReplaysWrites(Rule):
    """
    ## What it does
    Flags resume or recovery code (a function or module named resume/recover/replay/retry
    pending...) that selects calls by status (`status != "succeeded"`, `status in
    ("started", "failed")`) and runs them again, without telling `started`/`uncertain`
    calls apart from calls that definitely did not happen.

    ## Why it matters
    A call left `started` by a crash may have committed. Re-running "everything not
    succeeded" repeats exactly the calls whose outcome is unknown.

    ## Example
    ```python
    def resume_run(run_id):
        for entry in ledger.entries(run_id=run_id):
            if entry.status != "succeeded":
                run_tool(entry.tool_name, entry.args)
    ```

    ## Use instead
    Re-run only `failed` entries whose error happened before sending; mark `started` ones
    `uncertain` and reconcile them (agentguard's `runtime.recover()` does this).

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG501", "resume-replays-writes", "Q5"
    reads = (ResumeReplays,)
    severity = Severity.ERROR
    _EXECUTOR = (
        "from typing import Any\n"
        "from app.tools import TOOLS\n\n"
        "def run_tool(name: str, args: dict[str, Any]) -> Any:\n"
        "    return TOOLS[name](**args)\n"
    )
    VALID = (
        Valid(
            "from app.ledger import ledger\n"
            "from app.executor import run_tool\n\n"
            "def resume_run(run_id: str) -> None:\n"
            "    for entry in ledger.entries(run_id=run_id):\n"
            '        if entry.status in ("started", "uncertain"):\n'
            '            ledger.mark(entry.call_id, "uncertain")\n'
            '        elif entry.status == "failed":\n'
            "            run_tool(entry.tool_name, entry.args)\n",
            files={"app/executor.py": _EXECUTOR},
        ),
    )
    INVALID = (
        Invalid(
            "from app.ledger import ledger\n"
            "from app.executor import run_tool\n\n"
            "def resume_run(run_id: str) -> None:\n"
            "    for entry in ledger.entries(run_id=run_id):\n"
            '        if entry.status != "succeeded":\n'
            "            run_tool(entry.tool_name, entry.args)\n",
            span=(6, 12, 6, 39),
            files={"app/executor.py": _EXECUTOR},
        ),
        Invalid(
            "import json\n"
            "import sqlite3\n"
            "from app.executor import run_tool\n\n"
            "def recover_pending_calls(db: sqlite3.Connection) -> None:\n"
            "    rows = db.execute(\n"
            "        \"SELECT tool, args FROM tool_calls WHERE status IN ('pending', 'started')\"\n"
            "    ).fetchall()\n"
            "    for tool, args in rows:\n"
            "        run_tool(tool, json.loads(args))\n",
            span=(6, 12, 8, 6),
            files={"app/executor.py": _EXECUTOR},
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for replay in ResumeReplays.of(project):
            location = Location(replay.facts.path, replay.check.span)
            rerun = Location(replay.facts.path, replay.rerun.span)
            yield self.finding(
                location,
                f"`{replay.function.name}` {replay.why} (`{replay.check.subject}`) and runs "
                f"them again (`{replay.rerun.text}`) without setting `started`/`uncertain` "
                "calls apart: a call that may have committed is repeated",
                confidence=Confidence.MEDIUM,
                evidence=(
                    EvidenceStep(StepKind.STATUS_CHECK, location),
                    EvidenceStep(StepKind.RERUN, rerun),
                ),
                symbol=replay.function.qualname,
                node_text=f"{replay.function.qualname}:{replay.check.subject}",
            )
