from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import CodeTools, finding_tool, tool_evidence
from agentguard.checks.keys.shared import KEY_FROM_RUNTIME
from agentguard.diagnostics import Applicability, Confidence, Finding, FixOffer, Severity
from agentguard.fixes.context import RUNTIME_MODULE
from agentguard.project.project_model import ProjectModel

if TYPE_CHECKING:
    from agentguard.fixes.context import FixContext
    from agentguard.project.tool_facts import ToolFacts


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
    reads = (CodeTools,)
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
                        f"Tool `{tool.name}` makes the idempotency key of {effect.route()} from the "
                        f"model-supplied parameter `{key.param}` alone: the model, not the "
                        "runtime, decides the key, and nothing scopes it to the user, the run "
                        "or an approval"
                    )
                else:
                    message = (
                        f"Tool `{tool.name}` sends the model-supplied parameter `{key.param}` as "
                        f"the idempotency key of {effect.route()}: the model invents a new one on "
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
                if project.catalog.key_kwargs.match(param) and tool.writes():
                    yield self.finding(
                        tool.anchor,
                        f"Tool `{tool.name}` takes its idempotency key `{param}` from the model",
                        tool=tool,
                        confidence=Confidence.MEDIUM,
                        node_text=f"{tool.name}:{param}",
                    )

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        param = finding.node_text.rsplit(":", 1)[-1]
        tool = finding_tool(project, finding) if param.isidentifier() else None
        if tool is None or _reads_of(project, tool, param) > 1:
            # A parameter read beside the key (``json={"cart": cart_id}``) carries business
            # data: binding it to the runtime's key would send the key in its place.
            return None
        return FixOffer(
            Applicability.UNSAFE,
            f"Drop the `{param}` parameter and take the key from `{KEY_FROM_RUNTIME}`",
        )

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        import libcst as cst

        from agentguard.fixes.cst_tools import (
            add_import,
            is_docstring_statement,
            name_is_used,
            name_uses,
            without_items,
        )

        tool = finding_tool(ctx.project, finding)
        if tool is None:
            return None
        param = finding.node_text.rsplit(":", 1)[-1]
        function = ctx.tool_function(tool)
        if function is None or not param.isidentifier():
            return None
        params = function.params
        if not any(p.name.value == param for p in (*params.params, *params.kwonly_params)):
            return None
        if name_uses(function.body, param, enough=2) > 1:
            # ``json={"cart": cart_id}`` beside ``f"order-{cart_id}"``: the parameter carries the
            # business data too, and binding it to the key would send the key as the cart.
            return None

        def drop(p: cst.Param) -> bool:
            return p.name.value == param

        new_params = params.with_changes(
            params=without_items(list(params.params), drop),
            kwonly_params=without_items(list(params.kwonly_params), drop),
        )
        if not new_params.kwonly_params and isinstance(new_params.star_arg, cst.ParamStar):
            new_params = new_params.with_changes(star_arg=cst.MaybeSentinel.DEFAULT)
        new_function = function.with_changes(params=new_params)
        if name_is_used(function.body, param) and isinstance(function.body, cst.IndentedBlock):
            body = list(function.body.body)
            index = 1 if body and is_docstring_statement(body[0]) else 0
            binding = cst.parse_statement(
                f"{param} = {KEY_FROM_RUNTIME}", config=ctx.parsed.module.config_for_parsing
            )
            body.insert(index, binding)
            new_function = new_function.with_changes(body=function.body.with_changes(body=body))
        module = ctx.parsed.replace(function, new_function)
        module = add_import(module, RUNTIME_MODULE, ["current_call"], ctx.first_party)
        return ctx.parsed.code(module)


# --------------------------------------------------------------------------- fix


def _reads_of(project: ProjectModel, tool: ToolFacts, name: str) -> int:
    """How many of the tool's call arguments, assigned and returned values read ``name``
    (a call's arguments count again in a call around it: more reads, never fewer)."""
    reads = 0
    for qualname in tool.functions:
        entry = project.functions.get(qualname)
        if entry is None:
            continue
        fn, facts = entry
        values = [
            v for call in project.calls_in(qualname) for v in (*call.args, *call.kwargs.values())
        ]
        # An assigned or returned call is counted by its arguments above.
        bound = [a.value for a in facts.assignments if a.function == qualname]
        values += [value for value in (*bound, *fn.returns) if value.kind != "call"]
        reads += sum(value.names.count(name) for value in values)
    return reads
