"""Fault injection for replay-safety evals (checklist question 8).

    faults = FaultInjector(runtime)
    faults.timeout_after_apply("create_order")     # the order is placed, the answer is lost
    with runtime.run(run_id="r1", user_id="u1"):
        first = create_order(cart_id="c1")
        second = create_order(cart_id="c1")          # the model tries again
    assert first["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert faults.applied["create_order"] == 1       # the body ran once

With pytest, ``pytest_plugins = ["agentguard.runtime.testing"]`` provides the fixtures
``guard_runtime`` (a Runtime over a fresh SQLite ledger) and ``fault_injector``.
"""

from __future__ import annotations

import contextvars
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agentguard.runtime.context import CallContext
from agentguard.runtime.core import Runtime, SimulatedCrash
from agentguard.runtime.errors import ErrorCode, ToolError

__all__ = ["FaultInjector", "SimulatedCrash", "fault_injector", "guard_runtime"]


@dataclass
class _Rule:
    tool_name: str
    point: str  # "before" (after the started record, before the body) or "after" (body applied)
    action: Callable[[CallContext], None]
    remaining: int


@dataclass
class FaultInjector:
    """Injects faults around guarded tool bodies and counts how often each body ran."""

    runtime: Runtime
    entered: Counter[str] = field(default_factory=Counter)
    applied: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self.runtime.fault_hooks.append(self)

    # ---- faults -------------------------------------------------------------------------

    def timeout_after_apply(self, tool_name: str, *, times: int = 1) -> FaultInjector:
        """The body ran (the service applied the change), then the answer is lost to a timeout."""

        def lose_answer(call: CallContext) -> None:
            raise TimeoutError(
                f"injected: {call.tool_name} timed out after the request was applied"
            )

        return self._add(tool_name, "after", lose_answer, times)

    def timeout_before_send(self, tool_name: str, *, times: int = 1) -> FaultInjector:
        """The attempt times out before anything is sent: provably not applied."""

        def connect_timeout(call: CallContext) -> None:
            raise ToolError(
                ErrorCode.TRANSIENT_NETWORK,
                f"injected: {call.tool_name} could not connect",
                sent="no",
            )

        return self._add(tool_name, "before", connect_timeout, times)

    def crash_after_started(
        self, tool_name: str, *, times: int = 1, kill: bool = False
    ) -> FaultInjector:
        """The worker dies after ``started`` is durable, before the body runs."""
        return self._add(tool_name, "before", _crash(kill), times)

    def crash_after_apply(
        self, tool_name: str, *, times: int = 1, kill: bool = False
    ) -> FaultInjector:
        """The worker dies after the body applied the change, before the outcome is recorded."""
        return self._add(tool_name, "after", _crash(kill), times)

    def concurrent(
        self, tool: Callable[..., Any], copies: int, *args: Any, **kwargs: Any
    ) -> list[Any]:
        """Call ``tool`` from ``copies`` threads released at the same instant (one run context)."""
        barrier = threading.Barrier(copies)
        results: list[Any] = [None] * copies
        context = contextvars.copy_context()

        def worker(index: int) -> None:
            barrier.wait()
            results[index] = tool(*args, **kwargs)

        threads = [
            threading.Thread(target=context.copy().run, args=(worker, index))
            for index in range(copies)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def remove(self) -> None:
        self.clear()
        if self in self.runtime.fault_hooks:
            self.runtime.fault_hooks.remove(self)

    # ---- hooks called by the runtime ----------------------------------------------------

    def before_body(self, call: CallContext) -> None:
        with self._lock:
            self.entered[call.tool_name] += 1
        self._fire(call, "before")

    def after_body(self, call: CallContext, value: Any) -> Any:
        with self._lock:
            self.applied[call.tool_name] += 1
        self._fire(call, "after")
        return value

    def _add(
        self, tool_name: str, point: str, action: Callable[[CallContext], None], times: int
    ) -> FaultInjector:
        with self._lock:
            self._rules.append(_Rule(tool_name, point, action, times))
        return self

    def _fire(self, call: CallContext, point: str) -> None:
        with self._lock:
            rule = next(
                (
                    r
                    for r in self._rules
                    if r.tool_name == call.tool_name and r.point == point and r.remaining > 0
                ),
                None,
            )
            if rule is not None:
                rule.remaining -= 1
        if rule is not None:
            rule.action(call)


def _crash(kill: bool) -> Callable[[CallContext], None]:
    def crash(call: CallContext) -> None:
        if kill:
            os.kill(os.getpid(), signal.SIGKILL)
        raise SimulatedCrash(f"injected crash in {call.tool_name}")

    return crash


try:
    import pytest
except ImportError:  # pragma: no cover - the fixtures are only for pytest users
    pass
else:

    @pytest.fixture
    def guard_runtime(tmp_path: Any) -> Iterator[Runtime]:
        from agentguard.runtime.ledger.sqlite import SQLiteLedger

        ledger = SQLiteLedger(tmp_path / "agentguard-ledger.db")
        runtime = Runtime(ledger=ledger)
        runtime.sleep = lambda seconds: None
        yield runtime
        ledger.close()

    @pytest.fixture
    def fault_injector(guard_runtime: Runtime) -> Iterator[FaultInjector]:
        injector = FaultInjector(guard_runtime)
        yield injector
        injector.remove()
