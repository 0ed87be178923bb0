"""Tools of agent frameworks whose registration a project reaches through its own classes or
less common SDKs: the functions handed to an mcp-agent ``Agent`` subclass (calling a service
through gRPC stubs generated into the project: each stub method an attribute bound to
``channel.unary_unary(path)``), and the Claude Agent SDK's ``@tool`` functions."""

from __future__ import annotations

from tests.conftest import ScanFiles, tool_verdicts

STUBS = """\
import grpc


class BasketServiceStub(object):
    \"\"\"The basket service.\"\"\"

    def __init__(self, channel):
        self.AddLine = channel.unary_unary(
            "/bakery.BasketService/AddLine",
            request_serializer=None,
            response_deserializer=None,
        )
        self.GetBasket = channel.unary_unary("/bakery.BasketService/GetBasket")
        self.EmptyBasket = channel.unary_unary("/bakery.BasketService/EmptyBasket")


class BasketServiceServicer(object):
    def AddLine(self, request, context):
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        raise NotImplementedError("Method not implemented!")
"""

BASKET_CLIENT = """\
import grpc

from protos import bakery_pb2_grpc


def _stub():
    channel = grpc.insecure_channel("basket:7070")
    return bakery_pb2_grpc.BasketServiceStub(channel)


def add_line(basket_id: str, bread: str, count: int) -> str:
    \"\"\"Add loaves of a bread to a basket.\"\"\"
    stub = _stub()
    return str(stub.AddLine({"basket": basket_id, "bread": bread, "count": count}))


def show_basket(basket_id: str) -> str:
    \"\"\"Show what a basket holds.\"\"\"
    stub = _stub()
    return str(stub.GetBasket({"basket": basket_id}))


def empty_basket(basket_id: str) -> str:
    \"\"\"Empty a basket.\"\"\"
    stub = _stub()
    return str(stub.EmptyBasket({"basket": basket_id}))
"""

AGENTS = """\
from mcp_agent.agents.agent import Agent

from clients.basket import add_line, empty_basket, show_basket


class BakeryAgent(Agent):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seen = []


basket_agent = BakeryAgent(
    name="basket",
    instruction="Manage the customer's basket.",
    functions=[add_line, show_basket, empty_basket],
)
"""


def test_grpc_stub_calls_are_judged_by_the_remote_method_they_send(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(
        scan_files,
        {
            "protos/__init__.py": "",
            "protos/bakery_pb2_grpc.py": STUBS,
            "clients/__init__.py": "",
            "clients/basket.py": BASKET_CLIENT,
            "agents/__init__.py": "",
            "agents/basket_agent.py": AGENTS,
        },
    )
    # the functions an mcp-agent Agent subclass is built with are its tools
    assert {"add_line", "show_basket", "empty_basket"} <= set(verdicts)
    risk, codes = verdicts["add_line"]
    assert "AG101" in codes and "AG201" in codes, (risk, codes)
    risk, codes = verdicts["empty_basket"]
    assert "destructive" in risk and "AG101" in codes, (risk, codes)
    risk, codes = verdicts["show_basket"]
    assert risk == "read" and not codes, (risk, codes)


CLAUDE_SDK_TOOLS = """\
from typing import Any

import httpx
from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, tool


@tool("list_dogs", "List the dogs staying at the kennel.", {})
async def list_dogs(args: dict[str, Any]) -> dict[str, Any]:
    dogs = httpx.get("https://kennel.example/api/dogs").json()
    return {"content": [{"type": "text", "text": str(dogs)}]}


@tool("book_walk", "Book a walk for a dog.", {"dog_id": str, "slot": str})
async def book_walk(args: dict[str, Any]) -> dict[str, Any]:
    walk = httpx.post("https://kennel.example/api/walks", json=args).json()
    return {"content": [{"type": "text", "text": str(walk)}]}


kennel = create_sdk_mcp_server("kennel", "1.0.0", tools=[list_dogs, book_walk])
options = ClaudeAgentOptions(mcp_servers={"kennel": kennel})
"""


def test_claude_agent_sdk_tools_are_found_and_judged(scan_files: ScanFiles) -> None:
    """``@tool(name, description, schema)`` of the Claude Agent SDK, served by
    ``create_sdk_mcp_server(..., tools=[...])``."""
    verdicts = tool_verdicts(scan_files, {"kennel_agent.py": CLAUDE_SDK_TOOLS})
    assert verdicts["list_dogs"] == ("read", set())
    assert "AG201" in verdicts["book_walk"][1]
