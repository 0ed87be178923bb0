from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.retries.shared import UNSCOPED_RETRIES, RetriedEffects
from agentguard.diagnostics import Confidence, EvidenceStep, Finding, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class RetryOnAnyError(Rule):
    """
    ## What it does
    Flags a retry that catches every exception (a bare tenacity `@retry`,
    `retry_if_exception_type()`, `backoff.on_exception(expo, Exception)`, `except Exception:`
    in a retry loop) around code with side effects.

    ## Why it matters
    Validation errors, permission errors and "the request may have been applied" timeouts are
    retried like a dropped connection. Retrying a 400 wastes time; retrying a read timeout on
    a write repeats the write.

    ## Example
    ```python
    @backoff.on_exception(backoff.expo, Exception, max_tries=5)
    def send_message(channel, text): ...
    ```

    ## Use instead
    Name the transient errors: `retry_if_exception_type((httpx.ConnectError, RateLimitError))`.

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG903", "retry-on-any-error", "retry"
    reads = (RetriedEffects,)
    severity = Severity.WARNING
    VALID = (
        Valid(
            "import backoff\n"
            "import httpx\n\n"
            "@backoff.on_exception(backoff.expo, httpx.ConnectError, max_tries=5)\n"
            "def send_message(channel: str, text: str) -> None:\n"
            '    httpx.post("https://chat.example/api/messages", json={"channel": channel, "text": text})\n'
        ),
        Valid(
            "from tenacity import retry\n"
            "import requests\n\n"
            "@retry\n"
            "def fetch(url: str) -> str:\n"
            "    return requests.get(url).text\n"
        ),
    )
    INVALID = (
        Invalid(
            "import backoff\n"
            "import httpx\n\n"
            "@backoff.on_exception(backoff.expo, Exception, max_tries=5)\n"
            "def send_message(channel: str, text: str) -> None:\n"
            '    httpx.post("https://chat.example/api/messages", json={"channel": channel, "text": text})\n',
            span=(4, 2, 4, 60),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for use, retried in zip(project.retry_uses(), RetriedEffects.of(project), strict=True):
            if retried is None or use.catches is not None or use.kind in UNSCOPED_RETRIES:
                continue
            effects, tool = retried
            writes = [e for e in effects if e.writes]
            if not writes:
                continue
            effect = writes[0]
            yield self.finding(
                use.location,
                f"Retry ({use.library}) catches every exception around {effect.route()}: name the "
                "transient errors instead",
                tool=tool,
                confidence=Confidence.HIGH if not effect.heuristic else Confidence.MEDIUM,
                evidence=(
                    EvidenceStep(StepKind.RETRY, use.location, detail=use.text),
                    *effect.chain,
                ),
                node_text=use.text,
            )
