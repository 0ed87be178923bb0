from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.diagnostics import Applicability, Confidence, Finding, Location, Severity
from agentguard.facts.module_facts import Value
from agentguard.project.project_model import ProjectModel

UNSAFE_METHODS = {"POST", "PATCH"}


class HttpRetryAllowsUnsafeMethods(Rule):
    """
    ## What it does
    Flags an HTTP-client retry configuration that re-sends POST or PATCH after a read error:
    urllib3 `Retry(allowed_methods=None)` (any verb), `allowed_methods` including POST/PATCH,
    or the pre-2.0 `method_whitelist=False`.

    ## Why it matters
    urllib3 retries read errors only for the allowed methods because a read error means the
    request was sent. Allowing POST re-sends a request the server may already have executed.

    ## Example
    ```python
    adapter = HTTPAdapter(max_retries=Retry(total=5, allowed_methods=None))
    ```

    ## Use instead
    Keep urllib3's default (`Retry.DEFAULT_ALLOWED_METHODS`), or list idempotent verbs only.

    ## Fix safety
    Safe: the fix restricts `allowed_methods` to idempotent verbs; only retries of POST/PATCH
    after a possible send stop.
    """

    code, name, question = "AG904", "http-retry-allows-unsafe-methods", "retry"
    severity = Severity.ERROR
    fix_applicability = Applicability.SAFE
    VALID = (
        Valid(
            "from urllib3.util.retry import Retry\n\n"
            "retry = Retry(total=5, backoff_factor=0.5, status_forcelist=[502, 503])\n"
        ),
        Valid(
            "from urllib3.util.retry import Retry\n\n"
            'retry = Retry(total=5, allowed_methods=["GET", "PUT", "DELETE"])\n'
        ),
    )
    INVALID = (
        Invalid(
            "from urllib3.util.retry import Retry\n\n"
            "retry = Retry(total=5, allowed_methods=None)\n",
            span=(3, 40, 3, 44),
            fixed=(
                "from urllib3.util.retry import Retry\n"
                "\n"
                'retry = Retry(total=5, allowed_methods=["HEAD", "GET", "PUT", "DELETE", "OPTIONS", "TRACE"])\n'
            ),
        ),
        Invalid(
            "from requests.adapters import HTTPAdapter\n"
            "from urllib3.util.retry import Retry\n\n"
            'adapter = HTTPAdapter(max_retries=Retry(total=3, allowed_methods=frozenset({"GET", "POST"})))\n',
            span=(4, 66, 4, 92),
            fixed=(
                "from requests.adapters import HTTPAdapter\n"
                "from urllib3.util.retry import Retry\n"
                "\n"
                'adapter = HTTPAdapter(max_retries=Retry(total=3, allowed_methods=frozenset({"GET"})))\n'
            ),
            message_contains="POST",
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for use in project.retry_uses():
            if use.kind != "http_retry" or use.call is None or use.construct is None:
                continue
            for name in use.construct.methods_kwarg:
                value = use.call.kwargs.get(name)
                if value is None:
                    continue
                if value.kind == "const" and not value.const:
                    yield self.finding(
                        Location(use.location.path, value.span or use.location.span),
                        f"`{use.call.text}({name}={value.text})` retries every HTTP method, "
                        "POST and PATCH included, after the request may have been sent",
                        confidence=Confidence.HIGH,
                        node_text=f"{use.call.text}:{name}",
                    )
                    continue
                methods = {
                    (e.string() or "").upper() for e in (value.elements or _inner_elements(value))
                }
                unsafe = sorted(methods & UNSAFE_METHODS)
                if unsafe:
                    yield self.finding(
                        Location(use.location.path, value.span or use.location.span),
                        f"`{use.call.text}` retries {', '.join(unsafe)} after the request may "
                        "have been sent",
                        confidence=Confidence.HIGH,
                        node_text=f"{use.call.text}:{name}:{','.join(unsafe)}",
                    )


def _inner_elements(value: Value) -> list[Value]:
    if value.kind == "call":
        for arg in value.call_args:
            if arg.kind == "list":
                return list(arg.elements)
            if arg.kind == "other" and arg.text.startswith("{"):
                return []
    return []
