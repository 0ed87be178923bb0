"""Meta rules: files that could not be parsed, and suppressions that suppress nothing."""

from __future__ import annotations

import re
import tokenize
from collections.abc import Iterator
from io import StringIO
from typing import TYPE_CHECKING

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.diagnostics import Applicability, Confidence, Finding, FixOffer, Location, Severity
from agentguard.project.project_model import ProjectModel

if TYPE_CHECKING:
    from agentguard.fixes.context import FixContext


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
    INVALID = (
        Invalid("@tool\ndef create_order(cart_id: str)\n    return cart_id\n", span=(2, 31, 2, 31)),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for problem in project.problems:
            if not problem.reported:
                continue
            yield self.finding(
                Location(problem.path, problem.span),
                (
                    f"Could not parse this file: {problem.reason}"
                    if problem.kind == "parse-error"
                    else f"Could not read this file: {problem.reason}"
                ),
                confidence=Confidence.HIGH,
                node_text=problem.reason,
            )


# In AG002's flagged text: marks a comment that is not understood, which has no fix
# (removing it would drop what its author meant to suppress) ...
MALFORMED = "malformed:"
# ... and separates the comment from the codes its fix removes, when others stay.
REMOVE = " -"


class UnusedSuppression(Rule):
    """
    ## What it does
    Reports an `# agentguard: ignore[...]` comment that suppresses no finding, and each
    code in its brackets that suppresses nothing or that no rule has (a typo such as
    `AG2O1`). The bare form, `# agentguard: ignore`, suppresses every rule and is reported
    when nothing is left for it to suppress. Codes written without brackets
    (`# agentguard: ignore AG201`) are not understood: that comment suppresses nothing,
    and is reported so that it can be written `# agentguard: ignore[AG201]`.

    ## Why it matters
    A suppression outlives the code it excused. Left in place it will silently hide the
    next, real finding on that line, for example a retry added around a payment. A
    mistyped code suppresses nothing while looking as though it does.

    ## Example
    ```python
    def lookup_order(order_id: str) -> dict:  # agentguard: ignore[AG201] legacy
        return db.get(order_id)
    ```

    ## Use instead
    Remove the comment.

    ## Fix safety
    Safe: removing a comment, or codes of it, that suppress nothing changes no behaviour.
    A comment that is not understood has no fix: what it meant to suppress is for you to
    write in brackets.
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
            span=(1, 36, 1, 70),
            fixed=("def lookup(order_id: str) -> str:\n    return order_id\n"),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        # Computed by the engine after every other rule has run.
        return iter(())

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        if finding.node_text.startswith(MALFORMED):
            return None
        if REMOVE in finding.node_text:
            removed = finding.node_text.rpartition(REMOVE)[2].replace(",", ", ")
            return FixOffer(Applicability.SAFE, f"Remove {removed} from the suppression comment")
        return FixOffer(Applicability.SAFE, "Remove the unused suppression comment")

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        if finding.node_text.startswith(MALFORMED):
            return None
        lines = ctx.text.splitlines(keepends=True)
        number = finding.span.line
        if not 0 < number <= len(lines):
            return None
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        comment_start = _comment_start(body)
        if comment_start is None:
            return None
        comment = body[comment_start:]
        match = SUPPRESSION_RE.search(comment)
        if match is None:
            return None
        if REMOVE in finding.node_text:
            removed = set(finding.node_text.rpartition(REMOVE)[2].split(","))
            brackets = CODES_RE.search(comment, match.start(), match.end())
            if brackets is None:
                return None
            kept = [
                code
                for code in brackets.group(1).split(",")
                if code.strip() and code.strip().upper() not in removed
            ]
            codes = ",".join(code.strip() for code in kept)
            new_body = (
                body[: comment_start + brackets.start(1)]
                + codes
                + body[comment_start + brackets.end(1) :]
            )
            lines[number - 1] = new_body + ending
            return "".join(lines)
        before = comment[: match.start()].rstrip()
        after = comment[match.end() :].strip()
        new_comment = "  ".join(part for part in (before, after) if part)
        code = body[:comment_start].rstrip()
        if not code and not new_comment:
            lines[number - 1] = ""
        else:
            indent = body[: len(body) - len(body.lstrip())]
            joined = (
                f"{code}  {new_comment}" if code and new_comment else code or indent + new_comment
            )
            lines[number - 1] = joined + ending
        return "".join(lines)


# --------------------------------------------------------------------------- fix


SUPPRESSION_RE = re.compile(r"#\s*agentguard:\s*ignore(?:\[[A-Za-z0-9_,\s-]*\])?[^#]*")
CODES_RE = re.compile(r"\[([A-Za-z0-9_,\s-]*)\]")


def _comment_start(line: str) -> int | None:
    """Column of the line's comment, by tokens (a ``#`` inside a string is not one)."""
    tokens = tokenize.generate_tokens(StringIO(line + "\n").readline)
    try:
        for token in tokens:
            if token.type == tokenize.COMMENT:
                return token.start[1]
    except (tokenize.TokenError, SyntaxError):
        pass  # a line inside an open bracket: the tokens before the error were seen
    return None
