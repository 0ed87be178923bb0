from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import effect_phrase, tool_evidence
from agentguard.checks.evals.shared import ReplayTests, eval_verdict
from agentguard.diagnostics import Confidence, Finding, Severity
from agentguard.project.project_model import ProjectModel


class NoReplaySafetyEval(Rule):
    """
    ## What it does
    Flags a non-idempotent tool that no test in the project drives through a timeout while
    asserting that it is not executed twice. A test counts when it names the tool, injects a
    timeout (agentguard's `agentguard.runtime.testing` fault injection, `side_effect=
    requests.Timeout`, a fake client raising `httpx.ReadTimeout`, `respx`/`responses`
    timeouts) and asserts a call count (`call_count == 1`, `assert_called_once()`) or the
    ledger state (`uncertain`). The finding sits on the tool. Tools wrapped in agentguard's
    `@guarded` are compliant: the runtime's timeout and replay handling is tested by agentguard.

    ## Why it matters
    Replay safety regresses silently: a refactor adds a retry, a framework upgrade changes
    the default error text. Only a test that times the tool out and counts executions keeps
    "one order, never two" true.

    ## Example
    A `create_order` tool with tests for the happy path only.

    ## Use instead
    ```python
    def test_create_order_timeout_is_not_replayed(monkeypatch):
        fake = Mock(side_effect=requests.ReadTimeout())
        monkeypatch.setattr(orders, "create", fake)
        result = create_order.invoke({"cart_id": "c1"})
        assert result["code"] == "SIDE_EFFECT_UNCERTAIN"
        assert fake.call_count == 1
    ```

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG801", "no-replay-safety-eval", "Q8"
    reads = (ReplayTests,)
    severity = Severity.WARNING
    _TOOL = (
        "import requests\n"
        "from langchain_core.tools import tool\n\n"
        "@tool\n"
        "def create_order(cart_id: str) -> dict:\n"
        '    """Create an order."""\n'
        '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
    )
    VALID = (
        Valid(
            _TOOL,
            files={
                "tests/test_orders.py": (
                    "from unittest import mock\n"
                    "import requests\n"
                    "from agent import create_order\n\n"
                    "def test_create_order_timeout_is_not_replayed():\n"
                    '    with mock.patch("agent.requests.post", side_effect=requests.ReadTimeout) as post:\n'
                    '        create_order.invoke({"cart_id": "c1"})\n'
                    "    assert post.call_count == 1\n"
                )
            },
        ),
        Valid(
            _TOOL,
            files={
                "tests/conftest.py": 'pytest_plugins = ["agentguard.runtime.testing"]\n',
                "tests/test_replay.py": (
                    "from agent import create_order\n\n"
                    "def test_create_order_is_not_replayed(guard_runtime, fault_injector):\n"
                    '    fault_injector.timeout_after_apply("create_order")\n'
                    '    with guard_runtime.run(run_id="r1", user_id="u1"):\n'
                    '        first = create_order.invoke({"cart_id": "c1"})\n'
                    '        create_order.invoke({"cart_id": "c1"})\n'
                    '    assert first["code"] == "SIDE_EFFECT_UNCERTAIN"\n'
                    '    assert fault_injector.applied["create_order"] == 1\n'
                ),
            },
        ),
        Valid(
            _TOOL,
            files={
                "tests/test_timeouts.py": (
                    "import requests\n"
                    "import agent\n\n"
                    "def test_create_order_times_out_once(monkeypatch):\n"
                    "    calls = []\n\n"
                    "    def slow_post(*args, **kwargs):\n"
                    "        calls.append(args)\n"
                    '        raise requests.exceptions.ReadTimeout("read timed out")\n\n'
                    '    monkeypatch.setattr(agent.requests, "post", slow_post)\n'
                    '    agent.create_order.invoke({"cart_id": "c1"})\n'
                    "    assert len(calls) == 1\n"
                )
            },
        ),
    )
    INVALID = (
        Invalid(
            _TOOL,
            span=(5, 5, 5, 17),
            files={
                "tests/test_orders.py": (
                    "from unittest import mock\n"
                    "from agent import create_order\n\n"
                    "def test_create_order_happy_path():\n"
                    '    with mock.patch("agent.requests.post") as post:\n'
                    '        create_order.invoke({"cart_id": "c1"})\n'
                    "    assert post.call_count == 1\n"
                )
            },
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        tests = ReplayTests.of(project)
        for tool in project.tools:
            verdict = eval_verdict(project, tool, tests)
            if not verdict.missing:
                continue
            effect = verdict.writes[0]
            yield self.finding(
                tool.anchor,
                f"Tool `{tool.name}` makes {effect_phrase(effect)} but no test "
                "times it out and asserts it is not executed twice",
                tool=tool,
                confidence=Confidence.MEDIUM if effect.heuristic else Confidence.HIGH,
                evidence=tool_evidence(tool, effect),
                node_text=f"{tool.name}:no-eval",
            )
