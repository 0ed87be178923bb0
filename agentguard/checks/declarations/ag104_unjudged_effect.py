from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import tool_evidence
from agentguard.diagnostics import Confidence, Finding, Severity
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect

# At most this many calls are named in the message; the evidence names the first.
SHOWN_CALLS = 3


class UnjudgedEffect(Rule):
    """
    ## What it does
    Reports a tool that calls an external client in a way agentguard cannot judge: the
    call leaves the project, no catalogue entry knows it, and its name holds no verb that
    says whether it reads or writes (`slack.users_profile(...)`, `crm.sync(...)`). The tool
    is shown as `unknown` in the report, never as read-only or safe to replay.

    ## Why it matters
    A replay-safety check that says "safe" without evidence is worse than none: the
    unknown call may send, charge or delete. Until it is taught, the tool's other checks
    (keys, ledger, timeouts) cannot tell whether they apply.

    ## Example
    ```python
    @tool
    def sync_contact(contact_id: str) -> dict:
        return crm_client.sync(contact_id)
    ```

    ## Use instead
    Teach agentguard the call, in `pyproject.toml` (`[tool.agentguard.effects]`) or
    `agentguard.toml`: a `reads = ["crm.Client.sync"]` entry when it only reads, a `sinks`
    entry (`match`, `effect`, `idempotent`, `key`) when it writes. Or declare the tool
    (`@guarded(...)`, MCP `ToolAnnotations`, an `agentguard.yaml` entry): the declaration
    then decides.

    ## Fix safety
    No automatic fix: only you know what the service does with the call.
    """

    code, name, question = "AG104", "unjudged-effect", "Q1"
    severity = Severity.INFO
    VALID = (
        Valid(
            "from langchain_core.tools import tool\n"
            "from slack_sdk import WebClient\n\n"
            'slack_client = WebClient(token="xoxb")\n\n'
            "@tool\n"
            "def list_channels() -> list:\n"
            '    """The workspace\'s channels."""\n'
            '    return slack_client.conversations_list()["channels"]\n'
        ),
        Valid(
            "from langchain_core.tools import tool\n"
            "from agentguard.runtime import guarded\n"
            "from app.runtime import runtime\n"
            "from app.crm import crm_client\n\n"
            "@tool\n"
            '@guarded(runtime, risk="read", idempotency="idempotent", replay="auto")\n'
            "def sync_contact(contact_id: str) -> dict:\n"
            '    """Refresh a contact from the CRM."""\n'
            "    return crm_client.sync(contact_id)\n"
        ),
    )
    INVALID = (
        Invalid(
            "from langchain_core.tools import tool\n"
            "from slack_sdk import WebClient\n\n"
            'slack_client = WebClient(token="xoxb")\n\n'
            "@tool\n"
            "def who_is(user_id: str) -> dict:\n"
            '    """A Slack user\'s profile."""\n'
            "    return slack_client.users_profile(user=user_id)\n",
            span=(7, 5, 7, 11),
            message_contains="slack_client.users_profile",
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool in project.tools:
            unjudged = tool.unjudged()
            if not unjudged or tool.declaration is not None:
                continue
            names = list(dict.fromkeys(f"`{e.sink}`" for e in unjudged))
            more = f" and {len(names) - SHOWN_CALLS} more" if len(names) > SHOWN_CALLS else ""
            # why the first one is unknown, as the judgement said it
            why = _reason(unjudged[0]) or "not in the catalogue, no verb in its name"
            yield self.finding(
                tool.anchor,
                f"Tool `{tool.name}` calls {', '.join(names[:SHOWN_CALLS])}{more}, which "
                f"agentguard cannot judge ({why}): its "
                "effects are unknown. Teach it with a `reads` or `sinks` entry under "
                "[tool.agentguard.effects] in config, or declare the tool",
                tool=tool,
                confidence=Confidence.MEDIUM,
                evidence=tool_evidence(tool, unjudged[0]),
                node_text=f"{tool.name}:{tool.framework}",
            )


def _reason(effect: Effect) -> str:
    """Why the judgement left ``effect`` unknown, as its sink step says."""
    return next((step.detail for step in reversed(effect.chain) if step.detail), "")
