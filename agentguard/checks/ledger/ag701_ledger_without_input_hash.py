from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.ledger.shared import ToolCallRecords
from agentguard.diagnostics import Confidence, EvidenceStep, Finding, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class LedgerWithoutInputHash(Rule):
    """
    ## What it does
    Flags a tool-call record (a ledger, journal or audit write reached from a tool or from
    the executor that dispatches tools) that stores neither an input hash nor an idempotency
    key: no `input_hash`/`args_hash`/`fingerprint`/`idempotency_key` field, no `hashlib`
    digest among its arguments, no such column in its SQL.

    ## Why it matters
    After a timeout, recovery (or a human) must answer "did this exact call already run?".
    A record of tool name and time cannot tell two identical calls from two different ones,
    so the safe answer is never reachable.

    ## Example
    ```python
    audit_log.append({"tool": name, "at": time.time()})
    ```

    ## Use instead
    ```python
    audit_log.append({"tool": name, "input_hash": sha256(canonical_json(args)).hexdigest(),
                      "idempotency_key": key, "status": "started"})
    ```

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG701", "ledger-without-input-hash", "Q7"
    reads = (ToolCallRecords,)
    severity = Severity.WARNING
    VALID = (
        Valid(
            "import hashlib\n"
            "import json\n"
            "from typing import Any\n"
            "from app.tools import TOOLS\n"
            "from app.audit import audit_log\n\n"
            "def run_tool(name: str, args: dict[str, Any]) -> Any:\n"
            "    digest = hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()\n"
            '    audit_log.append({"tool": name, "input_hash": digest, "status": "started"})\n'
            "    return TOOLS[name](**args)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import time\n"
            "from typing import Any\n"
            "from app.tools import TOOLS\n"
            "from app.audit import audit_log\n\n"
            "def run_tool(name: str, args: dict[str, Any]) -> Any:\n"
            '    audit_log.append({"tool": name, "at": time.time(), "status": "started"})\n'
            "    return TOOLS[name](**args)\n",
            span=(7, 5, 7, 77),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for write in ToolCallRecords.of(project):
            if write.stores_identity:
                continue
            tool = project.tool_for_function(write.function) if write.function else None
            yield self.finding(
                write.location,
                f"Tool-call record {write.how} stores neither an input hash nor an idempotency "
                "key: the trace cannot tell whether the same input already ran",
                tool=tool,
                confidence=Confidence.MEDIUM,
                evidence=(EvidenceStep(StepKind.RECORD, write.location),),
                symbol=write.function,
                node_text=write.call.text,
            )
