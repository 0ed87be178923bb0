"""An order agent on LangGraph's functional API, run as a process the tests kill.

    python langgraph_app.py PHASE GUARD SERVICE_URL STATE_DIR [lookup] [step]

PHASE ``start`` invokes the workflow and kills its own process (SIGKILL) inside the task right
after the order service committed the order; PHASE ``resume`` runs ``invoke(None, config)`` and
prints the task's result as JSON. GUARD ``guarded`` wraps the task with the adapter, ``plain``
uses LangGraph's ``@task`` alone. ``lookup`` gives the guarded tool a lookup by key; ``step``
keys it by the task (``key="step"``).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.func import entrypoint, task
from order_client import lookup_order, place_order

from agentguard.engines.langgraph import guarded_task
from agentguard.runtime import Found, NotFound, Runtime, SQLiteLedger, current_call

phase, guard, service, state = sys.argv[1:5]
with_lookup = "lookup" in sys.argv[5:]
key = "step" if "step" in sys.argv[5:] else None
state_dir = Path(state)
config = {"configurable": {"thread_id": "order-thread-1"}}


def post_order(cart_id: str, key: str | None) -> dict[str, Any]:
    order = place_order(service, cart_id, key)
    if phase == "start":  # the process dies after the effect, before LangGraph records it
        os.kill(os.getpid(), signal.SIGKILL)
    return order


def find_order(call: Any) -> Found | NotFound:
    return lookup_order(service, call)


def create_order(cart_id: str) -> dict[str, Any]:
    """Place the order for the cart."""
    key = current_call().idempotency_key if guard == "guarded" else None
    return post_order(cart_id, key)


if guard == "guarded":
    runtime = Runtime(SQLiteLedger(str(state_dir / "ledger.db")))
    order_task = guarded_task(runtime, reconcile=find_order if with_lookup else None)(create_order)
else:
    order_task = task(create_order)

saver = SqliteSaver(sqlite3.connect(str(state_dir / "checkpoints.db"), check_same_thread=False))


@entrypoint(checkpointer=saver)
def order_agent(request: dict[str, Any]) -> Any:
    return order_task(request["cart_id"]).result()


if phase == "start":
    order_agent.invoke({"cart_id": "cart-7"}, config)
else:
    print(json.dumps(order_agent.invoke(None, config)))
