"""LangGraph's functional API with its SQLite checkpointer: a task killed after its effect runs
again on ``invoke(None, config)``. Each test runs both ways, so the duplicate is shown, not
assumed: LangGraph's ``@task`` alone places two orders, the adapter one."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.func", reason="LangGraph is not installed (extra: langgraph)")
pytest.importorskip(
    "langgraph.checkpoint.sqlite",
    reason="LangGraph's SQLite checkpointer is not installed (langgraph-checkpoint-sqlite)",
)

from agentguard.runtime import SQLiteLedger, Status
from agentguard.runtime.fake_service import OrderService

APP = Path(__file__).with_name("langgraph_app.py")


@pytest.fixture
def service() -> Iterator[OrderService]:
    with OrderService() as running:
        yield running


def run_app(phase: str, guard: str, service: OrderService, state: Path, *extra: str) -> Any:
    done = subprocess.run(
        [sys.executable, str(APP), phase, guard, service.url, str(state), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if phase == "start":
        assert done.returncode == -signal.SIGKILL, done.stderr
        return None
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_plain_task_killed_after_its_effect_places_a_second_order_on_resume(
    service: OrderService, tmp_path: Path
) -> None:
    run_app("start", "plain", service, tmp_path)
    assert len(service.orders()) == 1
    result = run_app("resume", "plain", service, tmp_path)
    assert result["cart_id"] == "cart-7"
    assert len(service.orders()) == 2  # LangGraph re-ran the task: the duplicate


@pytest.mark.parametrize("key", ["default", "step"])
def test_a_guarded_task_killed_after_its_effect_is_reconciled_on_resume(
    key: str, service: OrderService, tmp_path: Path
) -> None:
    # keyed by the task too (key="step"): the task's checkpoint_ns is the same on resume
    options = ("lookup", "step") if key == "step" else ("lookup",)
    run_app("start", "guarded", service, tmp_path, *options)
    assert len(service.orders()) == 1
    observation = run_app("resume", "guarded", service, tmp_path, *options)
    assert len(service.orders()) == 1
    assert observation["ok"] is True
    assert observation["result"]["order_id"] == service.orders()[0]["order_id"]
    assert observation["metadata"]["run_id"] == "langgraph:order-thread-1"
    (entry,) = SQLiteLedger(str(tmp_path / "ledger.db")).entries()
    assert entry.status is Status.SUCCEEDED
    ledger = SQLiteLedger(str(tmp_path / "ledger.db"))
    statuses = [event.to_status for event in ledger.events(entry.call_id)]
    assert statuses[-3:] == ["started", "uncertain", "succeeded"]


def test_a_guarded_task_without_a_lookup_is_not_run_again_and_says_uncertain(
    service: OrderService, tmp_path: Path
) -> None:
    run_app("start", "guarded", service, tmp_path)
    observation = run_app("resume", "guarded", service, tmp_path)
    assert len(service.orders()) == 1
    assert observation["ok"] is False
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"


def approval_graph(tool: Any, checkpoints: Path) -> Any:
    """A node that places the order, then asks a person to confirm the delivery slot: on
    resume, LangGraph runs the node again from its first line."""
    import sqlite3
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    class State(TypedDict, total=False):
        cart_id: str
        order: Any
        slot: str

    def place_order(state: State) -> State:
        order = tool(state["cart_id"])
        slot = interrupt({"question": "which delivery slot?"})
        return {"order": order, "slot": slot}

    graph = StateGraph(State)
    graph.add_node("place_order", place_order)
    graph.add_edge(START, "place_order")
    graph.add_edge("place_order", END)
    connection = sqlite3.connect(str(checkpoints), check_same_thread=False)
    return graph.compile(checkpointer=SqliteSaver(connection))


@pytest.mark.parametrize("guard", ["plain", "guarded"])
def test_a_write_before_interrupt_is_sent_once_only_when_guarded(
    guard: str, service: OrderService, tmp_path: Path
) -> None:
    import urllib.request

    from langgraph.types import Command

    from agentguard.engines.langgraph import guarded_step
    from agentguard.runtime import Runtime

    def create_order(cart_id: str) -> Any:
        """Place the order for the cart."""
        request = urllib.request.Request(
            service.url + "/orders",
            data=json.dumps({"cart_id": cart_id}).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    tool = create_order
    if guard == "guarded":
        runtime = Runtime(SQLiteLedger(str(tmp_path / "ledger.db")))
        tool = guarded_step(runtime)(create_order)
    graph = approval_graph(tool, tmp_path / "checkpoints.db")
    config = {"configurable": {"thread_id": "approval-thread"}}
    graph.invoke({"cart_id": "cart-9"}, config)
    assert len(service.orders()) == 1
    final = graph.invoke(Command(resume="morning"), config)
    assert final["slot"] == "morning"
    if guard == "plain":
        assert len(service.orders()) == 2  # the node re-ran its write on resume
    else:
        assert len(service.orders()) == 1
        assert final["order"]["metadata"]["replayed"] is True
        assert final["order"]["result"]["order_id"] == "ord_1"
