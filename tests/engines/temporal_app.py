"""A Temporal worker for the order workflow, run as a process the tests kill.

    python temporal_app.py ADDRESS TASK_QUEUE GUARD MODE SERVICE_URL STATE_DIR [lookup]

MODE ``crash``: the activity kills its own process (SIGKILL) right after the order service
committed the order. ``slow``: the first attempt waits 5 s after the send, longer than the
activity's ``start_to_close_timeout``, so Temporal starts attempt 2 while it still runs.
``steady``: the activity just sends. GUARD ``guarded`` wraps the activity with the adapter,
``plain`` uses ``@activity.defn`` alone. ``lookup`` gives the guarded tool a lookup by key.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from order_client import lookup_order, place_order

from agentguard.engines.temporal import guarded_activity
from agentguard.runtime import Found, NotFound, Runtime, SQLiteLedger, current_call
from tests.engines.temporal_workflow import OrderWorkflow

address, queue, guard, mode, service, state = sys.argv[1:7]
with_lookup = sys.argv[7:] == ["lookup"]


def post_order(cart_id: str, key: str | None) -> dict[str, Any]:
    order = place_order(service, cart_id, key)
    if mode == "crash":  # the worker dies after the effect, before Temporal hears of it
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "slow" and activity.info().attempt == 1:
        time.sleep(5)  # still running when Temporal gives attempt 2 to this worker
    return order


def find_order(call: Any) -> Found | NotFound:
    return lookup_order(service, call)


def create_order(cart_id: str) -> dict[str, Any]:
    """Place the order for the cart."""
    key = current_call().idempotency_key if guard == "guarded" else None
    return post_order(cart_id, key)


if guard == "guarded":
    runtime = Runtime(SQLiteLedger(str(Path(state) / "ledger.db")))
    order_activity = guarded_activity(runtime, reconcile=find_order if with_lookup else None)(
        create_order
    )
else:
    order_activity = activity.defn(create_order)


async def main() -> None:
    client = await Client.connect(address)
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as executor:
        worker = Worker(
            client,
            task_queue=queue,
            workflows=[OrderWorkflow],
            activities=[order_activity],
            activity_executor=executor,
            workflow_runner=UnsandboxedWorkflowRunner(),
        )
        print("WORKER READY", flush=True)
        await worker.run()


asyncio.run(main())
