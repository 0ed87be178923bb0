"""Frameworks whose registration lives in an installed package: griptape's ``@activity``
methods on a ``BaseTool`` subclass, and phidata's and agno's ``Toolkit`` subclasses that
register their own methods with ``self.register(self.fn)``."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

GRIPTAPE = """\
import httpx
from griptape.artifacts import TextArtifact
from griptape.tools import BaseTool
from griptape.utils.decorators import activity
from schema import Literal, Schema


class TicketTool(BaseTool):
    @activity(
        config={
            "description": "Open a support ticket",
            "schema": Schema({Literal("title"): str}),
        }
    )
    def open_ticket(self, params: dict) -> TextArtifact:
        title = params["values"]["title"]
        return TextArtifact(httpx.post("https://desk.example/tickets", json={"t": title}).text)

    def _headers(self) -> dict:
        return {}
"""


def test_griptape_activities_are_tools() -> None:
    tools = discover({"desk/tool.py": GRIPTAPE})
    assert [(t.name, t.framework, t.anchor.span.line) for t in tools] == [
        ("open_ticket", "griptape", line_of(GRIPTAPE, "def open_ticket"))
    ]


PHIDATA = """\
import smtplib

from phi.tools import Toolkit


class MailTools(Toolkit):
    def __init__(self, host: str):
        super().__init__(name="mail_tools")
        self.host = host
        self.register(self.send_email)

    def send_email(self, to: str, body: str) -> str:
        with smtplib.SMTP(self.host) as smtp:
            smtp.sendmail("bot@example.com", [to], body)
        return "sent"

    def _unused(self) -> None:
        return None
"""

AGNO = PHIDATA.replace("from phi.tools import Toolkit", "from agno.tools import Toolkit")


def test_toolkit_methods_registered_with_self_register_are_tools() -> None:
    for source, framework in ((PHIDATA, "phidata"), (AGNO, "agno")):
        tools = discover({"mail/tools.py": source})
        assert [(t.name, t.framework, t.anchor.span.line) for t in tools] == [
            ("send_email", framework, line_of(source, "def send_email"))
        ]


# Frameworks added from their documented tool forms (DSPy, Atomic Agents, Langroid, Letta,
# Mirascope, Marvin and ControlFlow): each small project hands one write tool to the
# framework and keeps one helper that is not a tool.

DSPY = """\
import dspy
import httpx


def book_room(room: str, hour: int) -> str:
    return httpx.post("https://rooms.example/bookings", json={"r": room, "h": hour}).text


def _format(text: str) -> str:
    return text.strip()


def cancel_booking(booking_id: str) -> str:
    return httpx.delete(f"https://rooms.example/bookings/{booking_id}").text


agent = dspy.ReAct("request -> answer", tools=[book_room, dspy.Tool(cancel_booking)])
"""


def test_dspy_react_tools_and_dspy_tool_are_tools() -> None:
    tools = discover({"rooms/agent.py": DSPY})
    assert sorted((t.name, t.framework) for t in tools) == [
        ("book_room", "dspy"),
        ("cancel_booking", "dspy"),
    ]


ATOMIC = """\
import httpx
from atomic_agents import BaseIOSchema, BaseTool


class RefundInput(BaseIOSchema):
    '''Refund an order.'''

    order_id: str


class RefundOutput(BaseIOSchema):
    '''The refund's id.'''

    refund_id: str


class RefundTool(BaseTool[RefundInput, RefundOutput]):
    def run(self, params: RefundInput) -> RefundOutput:
        reply = httpx.post("https://shop.example/refunds", json={"o": params.order_id})
        return RefundOutput(refund_id=reply.json()["id"])
"""


def test_atomic_agents_tool_classes_are_tools() -> None:
    tools = discover({"shop/refund_tool.py": ATOMIC})
    assert [(t.framework, t.anchor.span.line) for t in tools] == [
        ("atomic-agents", line_of(ATOMIC, "class RefundTool"))
    ]


LANGROID = """\
import httpx
from langroid.agent.tool_message import ToolMessage


class SendInvite(ToolMessage):
    request: str = "send_invite"
    purpose: str = "Invite <email> to the workspace"
    email: str

    def handle(self) -> str:
        return httpx.post("https://team.example/invites", json={"e": self.email}).text
"""


def test_langroid_tool_messages_with_a_handler_are_tools() -> None:
    tools = discover({"team/tools.py": LANGROID})
    assert [(t.framework, t.anchor.span.line) for t in tools] == [
        ("langroid", line_of(LANGROID, "class SendInvite"))
    ]


LETTA = """\
from letta_client import Letta


def file_ticket(title: str) -> str:
    '''Open a ticket in the tracker.'''
    import requests

    return requests.post("https://desk.example/tickets", json={"t": title}).text


client = Letta(token="...")
tool = client.tools.upsert_from_function(func=file_ticket)
"""


def test_letta_functions_uploaded_as_tools_are_tools() -> None:
    tools = discover({"desk/setup_tools.py": LETTA})
    assert [(t.name, t.framework) for t in tools] == [("file_ticket", "letta")]


MIRASCOPE = """\
import httpx
from mirascope import llm


def order_pizza(size: str) -> str:
    return httpx.post("https://pizza.example/orders", json={"s": size}).text


@llm.call(provider="openai", model="gpt-4o-mini", tools=[order_pizza])
def assistant(query: str) -> str:
    return query
"""


def test_mirascope_call_tools_are_tools() -> None:
    tools = discover({"pizza/assistant.py": MIRASCOPE})
    assert [(t.name, t.framework) for t in tools] == [("order_pizza", "mirascope")]


CONTROLFLOW = """\
import controlflow as cf
import httpx
import marvin


def post_update(text: str) -> str:
    return httpx.post("https://status.example/updates", json={"t": text}).text


def page_oncall(reason: str) -> str:
    return httpx.post("https://pager.example/pages", json={"r": reason}).text


def run() -> None:
    cf.Task("Announce the outage", tools=[post_update]).run()
    marvin.run("Page whoever is on call", tools=[page_oncall])
"""


def test_marvin_and_controlflow_task_tools_are_tools() -> None:
    tools = discover({"ops/flow.py": CONTROLFLOW})
    assert sorted((t.name, t.framework) for t in tools) == [
        ("page_oncall", "marvin"),
        ("post_update", "marvin"),
    ]


AGENTSCOPE = """\
import httpx
from agentscope.agent import ReActAgent
from agentscope.tool import Toolkit, ToolResponse


def send_sms(number: str, text: str) -> ToolResponse:
    httpx.post("https://sms.example/messages", json={"n": number, "t": text})
    return ToolResponse(content=[])


def build_agent(model, formatter) -> ReActAgent:
    toolkit = Toolkit()
    toolkit.register_tool_function(send_sms)
    return ReActAgent(name="Ops", sys_prompt="", model=model, formatter=formatter, toolkit=toolkit)
"""


def test_agentscope_toolkit_functions_are_tools() -> None:
    tools = discover({"ops/agent.py": AGENTSCOPE})
    assert [(t.name, t.framework) for t in tools] == [("send_sms", "agentscope")]


def test_openai_swarm_agent_functions_are_tools() -> None:
    """OpenAI Swarm, installed: ``Agent(functions=[...])`` hands each function to the model
    (Swarm turns it into a Chat Completions tool spec)."""
    source = """\
import httpx
from swarm import Agent, Swarm


def refund_order(order_id: str) -> str:
    \"\"\"Refund an order.\"\"\"
    return httpx.post(f"https://shop.example/orders/{order_id}/refunds").text


def order_status(order_id: str) -> str:
    \"\"\"Status of an order.\"\"\"
    return httpx.get(f"https://shop.example/orders/{order_id}").text


def shipping_days() -> int:
    return 3


support = Agent(name="Support", instructions="Help.", functions=[refund_order, order_status])
Swarm().run(agent=support, messages=[{"role": "user", "content": "refund 42"}])
"""
    tools = discover({"support.py": source})
    assert {tool.name: tool.functions for tool in tools} == {
        "refund_order": ["support.refund_order"],
        "order_status": ["support.order_status"],
    }
