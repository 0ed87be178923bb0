"""The engine adapter's outcomes, in process: in flight raises, uncertain returns or raises,
the key is the runtime's own unless ``key="step"``, and LangGraph's retries only poll."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from agentguard.engines import CallInFlight, OutcomeUncertain, guard_step
from agentguard.runtime import MemoryLedger, Runtime, Status


def held_call(runtime: Runtime, release: threading.Event, effects: list[str]) -> Any:
    """A guarded order tool whose body waits for ``release``: a call held in flight."""

    @guard_step(runtime)
    def create_order(cart_id: str) -> dict[str, str]:
        """Place the order for the cart."""
        effects.append(cart_id)
        release.wait(10)
        return {"order_id": f"ord_{len(effects)}"}

    return create_order


def test_a_call_in_flight_raises_call_in_flight_and_is_never_returned() -> None:
    runtime = Runtime(MemoryLedger())
    release, effects = threading.Event(), []
    create_order = held_call(runtime, release, effects)

    def first() -> None:
        with runtime.run("dbos:wf-1"):
            create_order("cart-1")

    holder = threading.Thread(target=first)
    holder.start()
    while not runtime.ledger.entries(status=Status.STARTED):
        time.sleep(0.01)
    with runtime.run("dbos:wf-1"), pytest.raises(CallInFlight) as raised:
        create_order("cart-1")
    assert raised.value.observation["code"] == "DUPLICATE_IN_PROGRESS"
    release.set()
    holder.join()
    with runtime.run("dbos:wf-1"):
        replayed = create_order("cart-1")
    assert replayed["ok"] is True and replayed["metadata"]["replayed"] is True
    assert effects == ["cart-1"]


@pytest.mark.parametrize("on_uncertain", ["return", "raise"])
def test_an_uncertain_outcome_is_returned_or_raised_as_asked(on_uncertain: str) -> None:
    runtime = Runtime(MemoryLedger())

    @guard_step(runtime, on_uncertain=on_uncertain)  # type: ignore[arg-type]
    def create_order(cart_id: str) -> dict[str, str]:
        """Place the order for the cart."""
        raise TimeoutError("the service did not answer in time")

    with runtime.run("dbos:wf-2"):
        if on_uncertain == "raise":
            with pytest.raises(OutcomeUncertain) as raised:
                create_order("cart-2")
            observation = raised.value.observation
        else:
            observation = create_order("cart-2")
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
    (entry,) = runtime.ledger.entries()
    assert entry.status is Status.UNCERTAIN


def test_the_adapter_imports_no_engine() -> None:
    code = (
        "import sys, agentguard.engines, agentguard.runtime;"
        "print(sorted(m for m in ('dbos', 'langgraph', 'temporalio') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def langgraph_func() -> Any:
    return pytest.importorskip("langgraph.func", reason="LangGraph is not installed")


def order_workflow(tool: Any) -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    @langgraph_func().entrypoint(checkpointer=InMemorySaver())
    def workflow(cart_id: str) -> list[Any]:
        return [tool(cart_id).result(), tool(cart_id).result()]

    return workflow


@pytest.mark.parametrize(("key", "orders"), [(None, 1), ("step", 2)])
def test_the_same_call_in_two_tasks_is_one_request_unless_keyed_by_step(
    key: str | None, orders: int
) -> None:
    langgraph_func()
    from agentguard.engines.langgraph import guarded_task

    runtime = Runtime(MemoryLedger())
    effects: list[str] = []

    @guarded_task(runtime, key=key)
    def create_order(cart_id: str) -> dict[str, str]:
        """Place the order for the cart."""
        effects.append(cart_id)
        return {"order_id": f"ord_{len(effects)}"}

    first, second = order_workflow(create_order).invoke(
        "cart-3", {"configurable": {"thread_id": f"thread-{key}"}}
    )
    assert len(effects) == orders
    assert first["metadata"]["run_id"] == f"langgraph:thread-{key}"
    assert second["metadata"]["replayed"] is (key is None)


def test_a_langgraph_task_meeting_a_call_in_flight_polls_until_its_outcome() -> None:
    func = langgraph_func()
    from agentguard.engines.langgraph import in_flight_retry_policy

    runtime = Runtime(MemoryLedger())
    release, effects = threading.Event(), []
    create_order = held_call(runtime, release, effects)

    def other_worker() -> None:  # the same request, still running elsewhere in the thread
        with runtime.run("langgraph:thread-poll"):
            create_order("cart-4")

    holder = threading.Thread(target=other_worker)
    holder.start()
    while not runtime.ledger.entries(status=Status.STARTED):
        time.sleep(0.01)
    threading.Timer(1.5, release.set).start()
    task = func.task(retry_policy=in_flight_retry_policy(initial_interval=0.2))(create_order)

    @func.entrypoint()
    def workflow(cart_id: str) -> Any:
        return task(cart_id).result()

    observation = workflow.invoke("cart-4", {"configurable": {"thread_id": "thread-poll"}})
    holder.join()
    assert observation["ok"] is True and observation["metadata"]["replayed"] is True
    assert effects == ["cart-4"]


def test_an_async_task_is_guarded_with_the_thread_as_its_run() -> None:
    import asyncio

    func = langgraph_func()
    from langgraph.checkpoint.memory import InMemorySaver

    from agentguard.engines.langgraph import guarded_task

    runtime = Runtime(MemoryLedger())
    effects: list[str] = []

    @guarded_task(runtime)
    async def create_order(cart_id: str) -> dict[str, str]:
        """Place the order for the cart."""
        effects.append(cart_id)
        await asyncio.sleep(0)
        return {"order_id": f"ord_{len(effects)}"}

    @func.entrypoint(checkpointer=InMemorySaver())
    async def workflow(cart_id: str) -> list[Any]:
        return [await create_order(cart_id), await create_order(cart_id)]

    config = {"configurable": {"thread_id": "async-thread"}}
    first, second = asyncio.run(workflow.ainvoke("cart-5", config))
    assert effects == ["cart-5"]
    assert first["metadata"]["run_id"] == "langgraph:async-thread"
    assert second["metadata"]["replayed"] is True


def test_an_async_call_in_flight_raises_call_in_flight() -> None:
    import asyncio

    runtime = Runtime(MemoryLedger())
    effects: list[str] = []

    @guard_step(runtime)
    async def create_order(cart_id: str) -> dict[str, str]:
        """Place the order for the cart."""
        effects.append(cart_id)
        await asyncio.sleep(0.5)
        return {"order_id": "ord_1"}

    async def two_calls() -> BaseException | None:
        async with runtime.run("temporal:wf-6"):
            first = asyncio.ensure_future(create_order("cart-6"))
            await asyncio.sleep(0.1)
            try:
                await create_order("cart-6")
            except CallInFlight as raised:
                await first
                return raised
            return None

    raised = asyncio.run(two_calls())
    assert isinstance(raised, CallInFlight)
    assert effects == ["cart-6"]


def test_each_engine_module_needs_only_its_extra() -> None:
    """``pip install "agentguard[dbos]"`` (``[temporal]``, ``[langgraph]``) installs every
    package its module imports; the core install names none of them."""
    import ast
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"])
    for engine in ("dbos", "temporal", "langgraph"):
        source = (root / "agentguard" / "engines" / f"{engine}.py").read_text(encoding="utf-8")
        imported = {
            (node.module or "").split(".")[0]
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.level == 0
        } - {"__future__", "agentguard", "collections", "typing", "datetime", "functools"}
        imported -= set(sys.stdlib_module_names)
        extra = " ".join(project["optional-dependencies"][engine])
        assert imported and all(package in extra for package in imported), (engine, imported)
        assert not any(package in core for package in imported)


def test_an_attempt_past_its_timeout_that_may_still_send_is_in_flight() -> None:
    runtime = Runtime(MemoryLedger())
    effects: list[str] = []
    finished = threading.Event()

    @guard_step(runtime, timeout_s=0.2)
    def create_order(cart_id: str) -> dict[str, str]:
        """Place the order for the cart."""
        effects.append(cart_id)
        time.sleep(1.0)  # a sync body runs on past its deadline, in its thread
        finished.set()
        return {"order_id": "ord_1"}

    with runtime.run("dbos:wf-7"):
        with pytest.raises(CallInFlight) as raised:
            create_order("cart-7")
        assert raised.value.observation["metadata"]["still_running"] is True
        finished.wait(5)
        deadline = time.monotonic() + 5
        while runtime.ledger.entries()[0].status is not Status.SUCCEEDED:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        replayed = create_order("cart-7")  # the engine's retry, once the attempt ended
    assert replayed["ok"] is True and replayed["metadata"]["replayed"] is True
    assert effects == ["cart-7"]
