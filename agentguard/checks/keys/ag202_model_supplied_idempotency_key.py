from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import tool_evidence, via
from agentguard.diagnostics import Applicability, Confidence, Finding, Severity
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import KEY_KWARG_RE


class ModelSuppliedIdempotencyKey(Rule):
    """
    ## What it does
    Flags an idempotency key that is a tool parameter: the model fills it in.

    ## Why it matters
    A model that "retries" writes a fresh call and happily invents a fresh key for it
    (`order-2`), or reuses one across different orders. Either way the key no longer
    identifies the business operation, and the service cannot deduplicate.

    ## Example
    ```python
    @tool
    def create_order(cart_id: str, idempotency_key: str) -> dict:
        return requests.post(URL, json={"cart": cart_id}, headers={"Idempotency-Key": idempotency_key})
    ```

    ## Use instead
    Take the key from the runtime: `current_call().idempotency_key`, built from user, resource,
    run and approval by `@guarded(key=...)`.

    ## Fix safety
    Unsafe: the fix removes the parameter from the tool's signature (and so from its schema)
    and binds the name to `current_call().idempotency_key` at the top of the body, which
    works only when the tool runs under `@guarded(...)` (the AG101 fix adds it). A parameter
    the tool reads besides the key (`cart_id` in `json={"cart": cart_id}` and
    `f"order-{cart_id}"`) carries business data: it gets no fix, since the key would be sent
    in its place.
    """

    code, name, question = "AG202", "model-supplied-idempotency-key", "Q2"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from agentguard.runtime import current_call\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            "    key = current_call().idempotency_key\n"
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers={"Idempotency-Key": key}).json()\n'
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str, idempotency_key: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id},\n'
            '                         headers={"Idempotency-Key": idempotency_key}).json()\n',
            span=(8, 54, 8, 69),
            fixed=(
                "import requests\n"
                "from agentguard.runtime import current_call\n"
                "from langchain_core.tools import tool\n"
                "\n"
                "@tool\n"
                "def create_order(cart_id: str) -> dict:\n"
                '    """Create an order."""\n'
                "    idempotency_key = current_call().idempotency_key\n"
                '    return requests.post("https://shop.example/orders", json={"cart": cart_id},\n'
                '                         headers={"Idempotency-Key": idempotency_key}).json()\n'
            ),
            message_contains="idempotency_key",
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool in project.tools:
            reported = False
            for effect in tool.effects:
                key = effect.key
                if key is None or key.origin != "param" or key.param not in tool.params:
                    continue
                reported = True
                if key.detail.startswith("made from"):
                    # ``f"order-{cart_id}"``: stable across a retry that repeats the id, but
                    # the model's words, unscoped by user, run or approval.
                    message = (
                        f"Tool `{tool.name}` makes the idempotency key of {via(effect)} from the "
                        f"model-supplied parameter `{key.param}` alone: the model, not the "
                        "runtime, decides the key, and nothing scopes it to the user, the run "
                        "or an approval"
                    )
                else:
                    message = (
                        f"Tool `{tool.name}` sends the model-supplied parameter `{key.param}` as "
                        f"the idempotency key of {via(effect)}: the model invents a new one on "
                        "retry"
                    )
                yield self.finding(
                    key.location or effect.site,
                    message,
                    tool=tool,
                    confidence=effect.confidence,
                    evidence=tool_evidence(tool, effect),
                    node_text=f"{tool.name}:{key.param}",
                )
            if reported:
                continue
            for param in tool.params:
                if KEY_KWARG_RE.match(param) and tool.writes():
                    yield self.finding(
                        tool.anchor,
                        f"Tool `{tool.name}` takes its idempotency key `{param}` from the model",
                        tool=tool,
                        confidence=Confidence.MEDIUM,
                        node_text=f"{tool.name}:{param}",
                    )
