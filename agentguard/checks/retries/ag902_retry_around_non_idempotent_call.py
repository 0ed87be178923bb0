from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid, mcp_tool_ts
from agentguard.checks.common import tool_evidence
from agentguard.checks.retries.shared import (
    UNSCOPED_RETRIES,
    RetriedEffects,
    only_transient,
    retried_through_tools,
)
from agentguard.diagnostics import EvidenceStep, Finding, Severity, StepKind
from agentguard.project.project_model import ProjectModel
from agentguard.project.retries import status_text
from agentguard.project.tool_facts import Effect, RetryUse, ToolFacts


class RetryAroundNonIdempotentCall(Rule):
    """
    ## What it does
    Flags a retry (tenacity, backoff, stamina, `with_retry`, a hand-written loop) around a
    non-idempotent side effect that carries no stable idempotency key. Retries limited to
    errors raised before the request was sent (connection refused) or to rate limits are fine.

    A hand-written loop may decide on the response's status instead of an exception
    (`if resp.status_code >= 500: sleep(); continue`, a helper such as `_should_retry(code)`,
    `resp.ok`, `raise_for_status()`, an `except` clause that retries one status and raises on
    the others): it is a retry when some error status sends the request again, and fine when
    only 429 or 423 ("not processed") do. A retry inside a shared helper, such as a client's
    `request` method that re-sends any method on 5xx, and a client's own retry setting
    (a botocore `Config(retries=...)`, a requests adapter whose urllib3 `Retry` allows POST)
    are reported in each tool whose write goes through them, with the retry as evidence.
    In TypeScript and JavaScript: `pRetry(() => send(), {retries})` (p-retry), async-retry's
    `retry(fn, {...})`, and hand-written `for (let attempt = 0; attempt < n; attempt++)
    { try { ...; return } catch {} }` loops.

    ## Why it matters
    A read timeout or a 5xx answer comes after the request was sent: the service may have
    committed. The retry sends it again, and without a key the service performs it again.

    ## Example
    ```python
    @retry(stop=stop_after_attempt(3))
    def place(order):
        return requests.post(ORDERS_URL, json=order)
    ```

    ## Use instead
    Pass a stable key (`Idempotency-Key`), or retry only `ConnectError`/429, or move the retry
    into `@guarded(retry=RetryPolicy(...))`, which never re-sends after a possible send.

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG902", "retry-around-non-idempotent-call", "retry"
    reads = (RetriedEffects,)
    severity = Severity.ERROR
    VALID = (
        Valid(
            "import httpx\n"
            "from tenacity import retry, retry_if_exception_type, stop_after_attempt\n\n"
            "@retry(retry=retry_if_exception_type(httpx.ConnectError), stop=stop_after_attempt(3))\n"
            "def place(order: dict) -> dict:\n"
            '    return httpx.post("https://shop.example/orders", json=order).json()\n'
        ),
        Valid(
            "import requests\n"
            "from tenacity import retry, stop_after_attempt\n\n"
            "@retry(stop=stop_after_attempt(3))\n"
            "def fetch(order_id: str) -> dict:\n"
            '    return requests.get(f"https://shop.example/orders/{order_id}").json()\n'
        ),
        Valid(
            "import time\n"
            "import httpx\n\n"
            "def place(order: dict) -> dict:\n"
            "    while True:\n"
            '        response = httpx.post("https://shop.example/orders", json=order)\n'
            "        if response.status_code == 429:\n"
            '            time.sleep(float(response.headers.get("Retry-After", "1")))\n'
            "            continue\n"
            "        response.raise_for_status()\n"
            "        return response.json()\n"
        ),
        Valid(
            mcp_tool_ts(
                "    const response = await pRetry(() => axios.get(`https://shop.example/orders/${orderId}`), { retries: 3 });\n"
                '    return { content: [{ type: "text", text: response.data.status }] };\n',
                'axios from "axios"',
                'pRetry from "p-retry"',
                tool="order_status",
                description="Look an order up",
                param="orderId",
            ),
            filename="server.ts",
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from tenacity import retry, stop_after_attempt\n\n"
            "@retry(stop=stop_after_attempt(3))\n"
            "def place(order: dict) -> dict:\n"
            '    return requests.post("https://shop.example/orders", json=order).json()\n',
            span=(4, 2, 4, 35),
        ),
        Invalid(
            "import time\n"
            "import requests\n\n"
            "def place(order: dict) -> dict:\n"
            "    for attempt in range(3):\n"
            "        try:\n"
            '            return requests.post("https://shop.example/orders", json=order, timeout=10).json()\n'
            "        except requests.Timeout:\n"
            "            time.sleep(2 ** attempt)\n"
            '    raise RuntimeError("order service unavailable")\n',
            span=(5, 5, 9, 37),
        ),
        Invalid(
            "import time\n"
            "import httpx\n\n"
            "def place(order: dict) -> dict:\n"
            "    for attempt in range(3):\n"
            '        response = httpx.post("https://shop.example/orders", json=order)\n'
            "        if response.status_code < 400:\n"
            "            return response.json()\n"
            "        if response.status_code not in (429, 502, 503) or attempt == 2:\n"
            "            response.raise_for_status()\n"
            "        time.sleep(2 ** attempt)\n"
            '    raise RuntimeError("order service unavailable")\n',
            span=(5, 5, 11, 33),
            message_contains="5xx",
        ),
        Invalid(
            mcp_tool_ts(
                '    const response = await pRetry(() => axios.post("https://shop.example/orders", { cartId }), { retries: 3 });\n'
                '    return { content: [{ type: "text", text: `Order ${response.data.id} placed` }] };\n',
                'axios from "axios"',
                'pRetry from "p-retry"',
            ),
            filename="server.ts",
            span=(12, 28, 12, 111),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for use, retried in zip(project.retry_uses(), RetriedEffects.of(project), strict=True):
            if retried is None or use.kind in UNSCOPED_RETRIES or only_transient(project, use):
                continue
            effects, tool = retried
            if use.kind == "client" and tool is not None:
                # a client's retry setting, set where the client is built: report it in the tool
                through = [(tool, e) for e in effects if _risky(e)]
                yield from self._through_tools(project, use, through)
                continue
            if tool is None:
                through = [(t, e) for t, e in retried_through_tools(project, use) if _risky(e)]
                if through:
                    yield from self._through_tools(project, use, through)
                    continue
            risky = [e for e in effects if _risky(e)]
            if tool is not None and tool.guarded is not None and tool.guarded.has_key:
                continue
            if not risky:
                continue
            effect = risky[0]
            yield self.finding(
                use.location,
                f"Retry ({use.library}, on {_retried_on(use)}) repeats {effect.route()}, which "
                "is not idempotent and has no stable idempotency key",
                tool=tool,
                confidence=effect.confidence,
                evidence=(
                    EvidenceStep(StepKind.RETRY, use.location, detail=use.text),
                    *effect.chain,
                ),
                node_text=use.text,
            )

    def _through_tools(
        self, project: ProjectModel, use: RetryUse, through: list[tuple[ToolFacts, Effect]]
    ) -> Iterator[Finding]:
        """A retry in a shared helper or a client's setting: one finding per tool whose write
        it re-sends, in the tool's own code (where its call chain starts), with the retry
        as evidence."""
        helper = project.function(use.function or "")
        if use.kind == "client":
            what = use.construct.what if use.construct is not None else ""
            by = f"the client's retry setting `{use.text}` sends it again" + (
                f" ({what})" if what else ""
            )
        elif helper is not None:
            owner = f"{helper.class_name.rsplit('.', 1)[-1]}." if helper.class_name else ""
            by = f"`{owner}{helper.name}` retries it ({use.library}, on {_retried_on(use)})"
        else:
            by = f"a retry ({use.library}, on {_retried_on(use)}) repeats it"
        seen: set[str] = set()
        for tool, effect in through:
            if tool.name in seen or (tool.guarded is not None and tool.guarded.has_key):
                continue
            seen.add(tool.name)
            start = effect.chain[0].location if effect.chain else None
            yield self.finding(
                start or tool.site,
                f"Tool `{tool.name}` makes {effect.route()}, which is not idempotent and has no "
                f"stable idempotency key; {by}",
                tool=tool,
                confidence=effect.confidence,
                evidence=(
                    *tool_evidence(tool, effect),
                    EvidenceStep(StepKind.RETRY, use.location, detail=use.text),
                ),
                node_text=f"{tool.name}:{use.text}",
                related=(use.location,),
            )


def _risky(effect: Effect) -> bool:
    return effect.non_idempotent and (effect.key is None or effect.key.origin in {"fresh", "param"})


def _retried_on(use: RetryUse) -> str:
    if use.statuses is not None:
        return f"HTTP {status_text(use.statuses)}"
    return "every exception" if use.catches is None else ", ".join(use.catches)
