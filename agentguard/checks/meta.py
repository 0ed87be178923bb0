"""Meta rules: files that could not be parsed, and suppressions that suppress nothing."""

from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.diagnostics import Applicability, Confidence, Finding, Location, Severity
from agentguard.project import ProjectModel


class ParseError(Rule):
    """
    ## What it does
    Reports a Python file that could not be parsed (a syntax error, an undecodable file).

    ## Why it matters
    A file agentguard cannot read is a file whose tools are not checked: a scan that
    silently skipped it would report a clean project that is not. Every Python file of
    the scan is parsed (or its facts read from the cache), so every syntax error is
    reported.

    ## Example
    ```python
    @tool
    def create_order(cart_id: str)
        return orders.create(cart_id)
    ```

    ## Use instead
    Fix the syntax error, or exclude the file (`exclude` in `[tool.agentguard]`) if it is a
    template that is not meant to be Python.

    ## Fix safety
    No fix.
    """

    code, name, question = "AG000", "parse-error", "meta"
    severity = Severity.ERROR
    VALID = (Valid("@tool\ndef create_order(cart_id: str) -> str:\n    return cart_id\n"),)
    INVALID = (Invalid("@tool\ndef create_order(cart_id: str)\n    return cart_id\n", line=2),)

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for problem in project.problems:
            if problem.kind != "parse-error":
                continue
            yield self.finding(
                Location(problem.path, problem.span),
                f"Could not parse this file: {problem.reason}",
                confidence=Confidence.HIGH,
                node_text=problem.reason,
            )


class UnusedSuppression(Rule):
    """
    ## What it does
    Reports an `# agentguard: ignore[...]` comment that suppresses no finding.

    ## Why it matters
    A suppression outlives the code it excused. Left in place it will silently hide the
    next, real finding on that line, for example a retry added around a payment.

    ## Example
    ```python
    def lookup_order(order_id: str) -> dict:  # agentguard: ignore[AG201] legacy
        return db.get(order_id)
    ```

    ## Use instead
    Remove the comment.

    ## Fix safety
    Safe: removing a comment that suppresses nothing changes no behaviour.
    """

    code, name, question = "AG002", "unused-suppression", "meta"
    severity = Severity.WARNING
    fix_applicability = Applicability.SAFE
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> str:  # agentguard: ignore[AG101,AG201] reviewed\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).text\n'
        ),
    )
    INVALID = (
        Invalid(
            "def lookup(order_id: str) -> str:  # agentguard: ignore[AG201] legacy\n"
            "    return order_id\n",
            line=1,
            fixed=("def lookup(order_id: str) -> str:\n    return order_id\n"),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        # Computed by the engine after every other rule has run.
        return iter(())
