"""An order agent on DBOS, run as a process the tests kill.

    python dbos_app.py PHASE GUARD SERVICE_URL DSN SYSTEM_SCHEMA LEDGER_SCHEMA [lookup] [auto]

PHASE ``start`` launches DBOS and runs the workflow, whose step kills its own process
(SIGKILL) right after the order service committed the order (``start-before``: before it
sends anything); PHASE ``resume`` launches DBOS
again (which recovers the pending workflow) and prints the workflow's result as JSON; PHASE
``timeout`` runs the workflow once against a service that answers after the client's read
timeout, with DBOS step retries on; ``poll`` runs it while the same call is in flight in
another thread for 3 s. GUARD ``guarded`` wraps the step with the adapter,
``plain`` uses ``@DBOS.step(retries_allowed=True)`` alone. ``lookup`` gives the guarded tool a
lookup by key; ``auto`` lets it run again when the lookup finds nothing (``replay="auto"``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

from dbos import DBOS, DBOSConfig, SetWorkflowID
from order_client import lookup_order, place_order

from agentguard.engines.dbos import guarded_step
from agentguard.runtime import Found, NotFound, PostgresLedger, Runtime, current_call

phase, guard, service, dsn, system_schema, ledger_schema = sys.argv[1:7]
with_lookup = "lookup" in sys.argv[7:]
replay = "auto" if "auto" in sys.argv[7:] else "never"
WORKFLOW_ID = "order-workflow-1"

config: DBOSConfig = {
    "name": "order-agent",
    "system_database_url": dsn,
    "dbos_system_schema": system_schema,
    "executor_id": "local",
    "application_version": "engines-test",
}
DBOS(config=config)


def post_order(cart_id: str, key: str | None) -> dict[str, Any]:
    order = place_order(service, cart_id, key, timeout=1.0)
    if phase == "start":  # the process dies after the effect, before DBOS records the step
        os.kill(os.getpid(), signal.SIGKILL)
    if threading.current_thread().name == "holder":
        time.sleep(3)  # still in flight when the workflow's step makes the same call
    return order


def find_order(call: Any) -> Found | NotFound:
    return lookup_order(service, call)


def create_order(cart_id: str) -> dict[str, Any]:
    """Place the order for the cart."""
    key = current_call().idempotency_key if guard == "guarded" else None
    if phase == "start-before":  # the process dies before anything was sent
        os.kill(os.getpid(), signal.SIGKILL)
    return post_order(cart_id, key)


if guard == "guarded":
    runtime = Runtime(PostgresLedger(dsn, schema=ledger_schema))
    order_step = guarded_step(
        runtime, replay=replay, reconcile=find_order if with_lookup else None
    )(create_order)
else:
    order_step = DBOS.step(retries_allowed=True, interval_seconds=0.1)(create_order)


@DBOS.workflow()
def order_workflow(cart_id: str) -> Any:
    return order_step(cart_id)


def hold_the_call() -> None:
    """The same request made elsewhere (the model's retry, another executor) and still in
    flight: under the adapter it runs in the workflow's run."""
    if guard == "guarded":
        with runtime.run(f"dbos:{WORKFLOW_ID}"):
            order_step("cart-7")
    else:
        order_step("cart-7")


DBOS.launch()
if phase == "poll":
    holder = threading.Thread(target=hold_the_call, name="holder")
    holder.start()
    time.sleep(1)
try:
    if phase == "resume":  # launch recovered the pending workflow: wait for its result
        result = DBOS.retrieve_workflow(WORKFLOW_ID).get_result()
    else:
        with SetWorkflowID(WORKFLOW_ID):
            result = order_workflow("cart-7")
    print(json.dumps(result), flush=True)
except Exception as exc:
    print(json.dumps({"raised": f"{type(exc).__name__}: {exc}"}), flush=True)
os._exit(0)
