"""Opt-ins that let a module build its Runtime at import time and call tools outside a run:
what `agentguard fix` emits for a tool it wraps in @guarded."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentguard.runtime import MemoryLedger, Runtime, SQLiteLedger, guarded


def make_tool(runtime: Runtime, sent: list[str]) -> object:
    @guarded(
        runtime,
        risk="write",
        idempotency="non_idempotent",
        replay="never",
        key=lambda call: f"order:{call.args['cart_id']}:{call.run_id}",
    )
    def create_order(cart_id: str) -> str:
        sent.append(cart_id)
        return f"order for {cart_id}"

    return create_order


def test_a_call_outside_a_run_runs_in_a_run_of_its_own_with_implicit_runs() -> None:
    sent: list[str] = []
    runtime = Runtime(ledger=MemoryLedger(), implicit_runs=True)
    create_order = make_tool(runtime, sent)
    first = create_order(cart_id="c1")  # type: ignore[operator]
    second = create_order(cart_id="c1")  # type: ignore[operator]
    assert first["ok"] and second["ok"]
    assert first["result"] == "order for c1"
    entries = runtime.ledger.entries(tool_name="create_order")
    assert len(entries) == 2 and len({e.run_id for e in entries}) == 2
    # Inside an explicit run the key names that run: the repeat is recognised.
    with runtime.run(run_id="r1"):
        create_order(cart_id="c2")  # type: ignore[operator]
        assert create_order(cart_id="c2")["metadata"]["replayed"] is True  # type: ignore[operator]
    assert sent == ["c1", "c1", "c2"]


def test_a_call_outside_a_run_still_raises_without_implicit_runs() -> None:
    runtime = Runtime(ledger=MemoryLedger())
    create_order = make_tool(runtime, [])
    with pytest.raises(RuntimeError, match="implicit_runs=True"):
        create_order(cart_id="c1")  # type: ignore[operator]


def test_a_lazy_sqlite_ledger_creates_its_file_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "ledgers" / "agentguard-ledger.db"
    runtime = Runtime(ledger=SQLiteLedger(path, lazy=True), implicit_runs=True)
    create_order = make_tool(runtime, [])
    assert not (tmp_path / "ledgers").exists()
    assert create_order(cart_id="c1")["ok"] is True  # type: ignore[operator]
    assert path.exists()
    reopened = SQLiteLedger(path)
    assert [e.status.value for e in reopened.entries(tool_name="create_order")] == ["succeeded"]


def test_threads_that_first_use_a_lazy_ledger_together_all_find_its_schema(
    tmp_path: Path,
) -> None:
    runtime = Runtime(ledger=SQLiteLedger(tmp_path / "ledger.db", lazy=True), implicit_runs=True)
    create_order = make_tool(runtime, [])
    start = threading.Barrier(8)

    def call(index: int) -> bool:
        start.wait()
        return bool(create_order(cart_id=f"c{index}")["ok"])  # type: ignore[operator]

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(call, range(8)))
    assert len(runtime.ledger.entries(tool_name="create_order")) == 8


def test_an_eager_sqlite_ledger_still_creates_its_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "agentguard-ledger.db"
    SQLiteLedger(path)
    assert path.exists()
