from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import effect_words
from agentguard.checks.resume.shared import InterruptReplays
from agentguard.diagnostics import EvidenceStep, Finding, Location, Severity, StepKind
from agentguard.project.project_model import ProjectModel


class SideEffectBeforeInterrupt(Rule):
    """
    ## What it does
    Flags a non-idempotent side effect in a LangGraph node (or entrypoint) that runs before
    `interrupt(...)` in the same node. Writes after the interrupt, and writes isolated in a
    `@task` (whose result is read back from the checkpoint) are fine. The same shape in other
    frameworks whose resume re-runs the step: a LlamaIndex workflow step that writes before
    `await ctx.wait_for_event(...)`, a Google ADK tool that writes before
    `tool_context.request_confirmation()`.

    ## Why it matters
    `interrupt()` stops the node; `Command(resume=...)` restarts the node **from its first
    line**. Everything before the interrupt runs again: the refund is issued once when the
    node asks for approval and again when the human approves.

    ## Example
    ```python
    def refund_node(state):
        refund = payments.refund(state["charge_id"])
        approved = interrupt({"refund": refund["id"]})
        ...
    ```

    ## Use instead
    Ask first and write after the interrupt, or move the write into its own node or `@task`.

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG502", "side-effect-before-interrupt", "Q5"
    reads = (InterruptReplays,)
    severity = Severity.ERROR
    VALID = (
        Valid(
            "import stripe\n"
            "from langgraph.types import interrupt\n\n"
            "def refund_node(state: dict) -> dict:\n"
            '    decision = interrupt({"question": f"Refund {state[\'charge_id\']}?"})\n'
            '    if decision != "yes":\n'
            '        return {"refund": None}\n'
            '    refund = stripe.Refund.create(charge=state["charge_id"], idempotency_key=state["run_id"])\n'
            '    return {"refund": refund.id}\n'
        ),
        Valid(
            "import stripe\n"
            "from langgraph.func import entrypoint, task\n"
            "from langgraph.types import interrupt\n\n"
            "@task\n"
            "def issue_refund(charge_id: str) -> str:\n"
            "    return stripe.Refund.create(charge=charge_id).id\n\n"
            "@entrypoint()\n"
            "def refund_flow(charge_id: str) -> dict:\n"
            "    refund_id = issue_refund(charge_id).result()\n"
            '    interrupt({"notify": refund_id})\n'
            '    return {"refund": refund_id}\n'
        ),
    )
    INVALID = (
        Invalid(
            "import stripe\n"
            "from langgraph.types import interrupt\n\n"
            "def refund_node(state: dict) -> dict:\n"
            '    refund = stripe.Refund.create(charge=state["charge_id"])\n'
            '    approved = interrupt({"refund": refund.id, "question": "Notify the customer?"})\n'
            '    return {"refund": refund.id, "notify": approved}\n',
            span=(5, 14, 5, 61),
        ),
        Invalid(
            "import httpx\n"
            "from llama_index.core.workflow import Context, StartEvent, StopEvent, Workflow, step\n"
            "from llama_index.core.workflow import HumanResponseEvent, InputRequiredEvent\n\n"
            "class PayoutFlow(Workflow):\n"
            "    @step\n"
            "    async def pay(self, ctx: Context, ev: StartEvent) -> StopEvent:\n"
            "        async with httpx.AsyncClient() as client:\n"
            '            payout = (await client.post("https://pay.example/payouts", json={"to": ev.to})).json()\n'
            '        ctx.write_event_to_stream(InputRequiredEvent(prefix="Payout sent. Notify?"))\n'
            "        answer = await ctx.wait_for_event(HumanResponseEvent)\n"
            "        return StopEvent(result=answer.response)\n",
            span=(9, 29, 9, 91),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for replay in InterruptReplays.of(project):
            interrupt_at = Location(replay.facts.path, replay.interrupt.span)
            tool = project.tool_for_function(replay.function.qualname)
            yield self.finding(
                replay.site,
                f"`{replay.function.name}` makes {effect_words(replay.effect)} "
                f"({replay.effect.route()}) before `interrupt()` on line "
                f"{replay.interrupt.span.line}: on resume the node restarts from the top and "
                "repeats it",
                tool=tool,
                confidence=replay.effect.confidence,
                evidence=(*replay.effect.chain, EvidenceStep(StepKind.INTERRUPT, interrupt_at)),
                symbol=replay.function.qualname,
                node_text=f"{replay.function.qualname}:{replay.effect.call.text}",
            )
