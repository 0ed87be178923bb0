from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.observations.shared import UnstructuredErrors
from agentguard.diagnostics import Confidence, EvidenceStep, Finding, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class UnstructuredErrorObservation(Rule):
    """
    ## What it does
    Flags an error result a write tool returns from an `except` handler around its side
    effect with no machine-readable code and no retryable flag: `"Error: could not create the
    order"` strings, `{"error": "..."}` dicts. Results that already carry a code and a
    retryable flag, or that tell the model the outcome is unknown and not to retry, are fine.

    ## Why it matters
    The model decides whether to call the tool again from the observation alone. Free text
    that says "error" reads as "failed, try again", including after a timeout that may
    have committed.

    ## Example
    ```python
    except OrdersError:
        return {"error": "could not create the order"}
    ```

    ## Use instead
    ```python
    except OrdersError as e:
        return {"ok": False, "code": "SERVER_ERROR", "retryable": e.retryable,
                "content": "The order service refused the order."}
    ```

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG602", "unstructured-error-observation", "Q6"
    reads = (UnstructuredErrors,)
    severity = Severity.WARNING
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            "    try:\n"
            '        return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            "    except requests.HTTPError:\n"
            '        return {"ok": False, "code": "SERVER_ERROR", "retryable": False, "content": "Refused."}\n'
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def find_orders(cart_id: str) -> list | str:\n"
            '    """List orders."""\n'
            "    try:\n"
            '        return requests.get("https://shop.example/orders", params={"cart": cart_id}).json()\n'
            "    except requests.HTTPError:\n"
            '        return "Error: the order service is down"\n'
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            "    try:\n"
            '        return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            "    except requests.HTTPError:\n"
            '        return {"error": "could not create the order"}\n',
            span=(10, 16, 10, 55),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for error in UnstructuredErrors.of(project):
            tool = error.site.tool
            assert tool is not None
            yield self.finding(
                error.location,
                f"Tool `{tool.name}` returns an error result (`{error.value.text[:60]}`) with no "
                f"{' and no '.join(m.removeprefix('a ') for m in error.missing)}: the model "
                "cannot tell whether calling it again is safe",
                tool=tool,
                confidence=Confidence.MEDIUM,
                evidence=(EvidenceStep(StepKind.ERROR_RESULT, error.location),),
                symbol=error.site.function.qualname,
                node_text=f"{error.site.function.qualname}:{error.value.text[:80]}",
            )
