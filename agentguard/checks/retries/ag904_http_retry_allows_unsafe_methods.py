from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.diagnostics import Applicability, Confidence, Finding, FixOffer, Location, Severity
from agentguard.facts.module_facts import Value
from agentguard.project.project_model import ProjectModel

if TYPE_CHECKING:
    import libcst as cst

    from agentguard.fixes.context import FixContext

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

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        return FixOffer(
            Applicability.SAFE, "Retry only idempotent methods after the request may have been sent"
        )

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        import libcst as cst

        from agentguard.fixes.cst_tools import string_quote, without_items

        span = finding.span
        value = ctx.node_at(span.line, span.column, (cst.BaseExpression,))
        if value is None:
            return None
        parent = ctx.parsed.parent(value)
        if not isinstance(parent, cst.Arg):
            return None
        quote = string_quote(ctx.parsed.module, ctx.parsed.parent(parent) or parent)
        default = cst.parse_expression(
            "[" + ", ".join(f"{quote}{m}{quote}" for m in IDEMPOTENT_METHODS) + "]"
        )
        if isinstance(value, cst.Name) and value.value in ("None", "False"):
            module = ctx.parsed.replace(value, default)
        else:
            collection = _innermost_collection(value)
            if collection is None:
                return None

            def unsafe(element: cst.BaseElement) -> bool:
                item = element.value
                return (
                    isinstance(item, cst.SimpleString)
                    and str(item.evaluated_value).upper() in UNSAFE_METHODS
                )

            kept = without_items(list(collection.elements), unsafe)
            if len(kept) == len(collection.elements):
                return None
            if kept:
                module = ctx.parsed.replace(collection, collection.with_changes(elements=kept))
            else:
                module = ctx.parsed.replace(value, default)
        return ctx.parsed.code(module)


def _inner_elements(value: Value) -> list[Value]:
    if value.kind == "call":
        for arg in value.call_args:
            if arg.kind == "list":
                return list(arg.elements)
            if arg.kind == "other" and arg.text.startswith("{"):
                return []
    return []


# --------------------------------------------------------------------------- fix


IDEMPOTENT_METHODS = ("HEAD", "GET", "PUT", "DELETE", "OPTIONS", "TRACE")
UNSAFE_METHODS = {"POST", "PATCH"}


def _innermost_collection(node: cst.CSTNode) -> cst.List | cst.Set | cst.Tuple | None:
    import libcst as cst

    if isinstance(node, (cst.List, cst.Set, cst.Tuple)):
        return node
    if isinstance(node, cst.Call) and len(node.args) == 1:
        return _innermost_collection(node.args[0].value)
    return None
