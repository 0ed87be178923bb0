from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import effect_phrase, tool_evidence
from agentguard.checks.ledger.shared import (
    RecordingExecutor,
    ToolLedgerVerdicts,
)
from agentguard.diagnostics import EvidenceStep, Finding, Location, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class LedgerAfterCallOnly(Rule):
    """
    ## What it does
    Flags a tool-call record that is written only after the side effect returns: in the tool
    body (the record follows the write) or in an executor that records the result of
    `tools[name](**args)` but not its start.

    ## Why it matters
    A crash, a kill or a timeout between the call and the record leaves no trace of a call
    that may have committed. Recovery sees no entry and runs it again.

    ## Example
    ```python
    def run_tool(name, args):
        result = TOOLS[name](**args)
        audit_log.append({"tool": name, "args": args, "result": result})
        return result
    ```

    ## Use instead
    Write `started` before the call and the outcome after it (agentguard's `@guarded` does
    both):
    ```python
    def run_tool(name, args):
        entry = audit_log.append({"tool": name, "input_hash": digest(args), "status": "started"})
        result = TOOLS[name](**args)
        audit_log.update(entry, status="succeeded", result=result)
        return result
    ```

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG302", "ledger-after-call-only", "Q3"
    reads = (ToolLedgerVerdicts, RecordingExecutor)
    severity = Severity.ERROR
    VALID = (
        Valid(
            "from typing import Any\n"
            "from app.tools import TOOLS\n"
            "from app.audit import audit_log\n\n"
            "def run_tool(name: str, args: dict[str, Any]) -> Any:\n"
            '    entry = audit_log.append({"tool": name, "status": "started"})\n'
            "    result = TOOLS[name](**args)\n"
            '    audit_log.append({"entry": entry, "status": "succeeded"})\n'
            "    return result\n"
        ),
    )
    INVALID = (
        Invalid(
            "from typing import Any\n"
            "from app.tools import TOOLS\n"
            "from app.audit import audit_log\n\n"
            "def run_tool(name: str, args: dict[str, Any]) -> Any:\n"
            "    result = TOOLS[name](**args)\n"
            '    audit_log.append({"tool": name, "args": args, "result": result})\n'
            "    return result\n",
            span=(7, 5, 7, 69),
        ),
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from app.audit import ledger\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    order = requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            '    ledger.record("create_order", cart_id, order)\n'
            "    return order\n",
            span=(9, 5, 9, 50),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for verdict in ToolLedgerVerdicts.of(project):
            if verdict.status != "after" or not verdict.records_after:
                continue
            tool = verdict.tool
            effect = tool.effects[verdict.effect_index]
            record, how = verdict.records_after[0]
            location = Location(verdict.call_site.path, record.span)
            yield self.finding(
                location,
                f"Tool `{tool.name}` writes its record ({how}) only after "
                f"{effect_phrase(effect)} returns: a crash in between leaves "
                "no trace of a call that may have committed",
                tool=tool,
                confidence=effect.confidence,
                evidence=(
                    *tool_evidence(tool, effect),
                    EvidenceStep(StepKind.RECORD_AFTER, location),
                ),
                node_text=f"{tool.name}:{record.text}",
            )
        index = project.ledger_index()
        if RecordingExecutor.of(project) is not None:
            return
        for executor in index.executors:
            records = index.record_calls(project, executor.function)
            after = [(c, how) for c, how in records if c.order > executor.dispatch_order]
            if not after or len(after) != len(records):
                continue
            record, how = after[0]
            location = Location(executor.path, record.span)
            yield self.finding(
                location,
                f"The executor `{executor.function.rsplit('.', 1)[-1]}` records tool calls "
                f"({how}) only after the tool returns "
                f"(`{executor.dispatch.text if executor.dispatch else 'dispatch'}`): a crash "
                "in between leaves no trace of a call that may have committed",
                evidence=(
                    EvidenceStep(StepKind.DISPATCH, executor.location),
                    EvidenceStep(StepKind.RECORD_AFTER, location),
                ),
                node_text=f"{executor.function}:{record.text}",
            )
