"""A tool wrapped by one of agentguard's durable-engine adapters (a LangGraph task or node, a
DBOS step, a Temporal activity) is guarded exactly as under ``@guarded``: no AG101 for its declared policy, no AG301
for a missing ledger, and the adapter alone makes a tool as ``@guarded`` does."""

from __future__ import annotations

import pytest

from tests.conftest import ScanFiles

HEADER = """\
import requests
from langchain_core.tools import tool

from agentguard.runtime import Found, NotFound, Runtime, SQLiteLedger, current_call
{imports}

ORDERS = "https://shop.example.com/api/orders"
runtime = Runtime(SQLiteLedger("ledger.db"))


def find_order(call):
    found = requests.get(ORDERS, params={{"key": call.idempotency_key}}, timeout=10).json()
    return Found(found[0]) if found else NotFound()

"""

TOOL = """
{decorators}
def create_order(cart_id: str) -> dict:
    \"\"\"Place the order for the cart.\"\"\"
    headers = {{"Idempotency-Key": current_call().idempotency_key}}
    return requests.post(ORDERS, json={{"cart_id": cart_id}}, headers=headers, timeout=10).json()
"""

ADAPTERS = {
    "langgraph node under @tool": (
        "from agentguard.engines.langgraph import guarded_step",
        "@tool\n@guarded_step(runtime, risk='write', reconcile=find_order)",
    ),
    "langgraph task": (
        "from agentguard.engines.langgraph import guarded_task",
        "@guarded_task(runtime, risk='write', key='step', reconcile=find_order)",
    ),
    "dbos step": (
        "from agentguard.engines import dbos as engine",
        "@engine.guarded_step(runtime, risk='write', reconcile=find_order)",
    ),
    "temporal activity": (
        "from agentguard.engines.temporal import guarded_activity",
        "@guarded_activity(runtime, risk='write', reconcile=find_order)",
    ),
    "generic form": (
        "from agentguard.engines import guard_step",
        "@tool\n@guard_step(runtime, risk='write', reconcile=find_order)",
    ),
}


def codes_for(scan_files: ScanFiles, imports: str, decorators: str) -> tuple[list[str], set[str]]:
    source = HEADER.format(imports=imports) + TOOL.format(decorators=decorators)
    result = scan_files({"agent.py": source})
    tools = [tool.name for tool in result.project.tools]
    return tools, {finding.code for finding in result.findings if finding.tool == "create_order"}


def test_an_unwrapped_order_tool_is_reported_undeclared_and_unledgered(
    scan_files: ScanFiles,
) -> None:
    tools, codes = codes_for(scan_files, "", "@tool")
    assert tools == ["create_order"]
    assert {"AG101", "AG301"} <= codes


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_a_tool_wrapped_by_an_engine_adapter_counts_as_guarded(
    adapter: str, scan_files: ScanFiles
) -> None:
    imports, decorators = ADAPTERS[adapter]
    tools, codes = codes_for(scan_files, imports, decorators)
    assert tools == ["create_order"]
    assert not codes & {"AG101", "AG301"}, codes
