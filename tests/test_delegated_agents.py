"""Agents as tools: an agent offered to another agent's model as a tool is a tool, and a
tool running an agent the project builds does what that agent's tools do."""

from __future__ import annotations

from .conftest import ScanFiles, tool_verdicts

PYDANTIC_WORKERS = {
    "billing/tools.py": """\
import sqlite3

import httpx
from pydantic_ai import RunContext


def find_invoice(ctx: RunContext[dict], invoice_id: str) -> str:
    con = sqlite3.connect("billing.db")
    row = con.execute("SELECT total FROM invoices WHERE id = ?", (invoice_id,)).fetchone()
    return str(row)


def issue_credit(ctx: RunContext[dict], invoice_id: str, amount: float) -> str:
    response = httpx.post("https://billing.example.com/credits", json={"invoice": invoice_id, "amount": amount})
    return response.text
""",
    "billing/agents.py": """\
from pydantic_ai import Agent
from pydantic_ai.common_tools.duckduckgo import duckduckgo_search_tool

from billing.tools import find_invoice, issue_credit

lookup_agent = Agent("openai:gpt-4o", deps_type=dict)
lookup_agent.tool(find_invoice)

credit_agent = Agent("openai:gpt-4o", deps_type=dict, tools=[find_invoice])
credit_agent.tool(issue_credit)

summary_agent = Agent("openai:gpt-4o", system_prompt="Summarise the customer's request.")

research_agent = Agent("openai:gpt-4o", tools=[duckduckgo_search_tool()])


@lookup_agent.tool_plain
def currency() -> str:
    return "EUR"
""",
    "desk.py": """\
from pydantic_ai import Agent, RunContext

from billing.agents import credit_agent, lookup_agent, research_agent, summary_agent

desk = Agent("openai:gpt-4o", deps_type=dict)


@desk.tool
async def ask_lookup(ctx: RunContext[dict], question: str) -> str:
    result = await lookup_agent.run(question, deps=ctx.deps)
    return result.output


@desk.tool
async def ask_credit(ctx: RunContext[dict], request: str) -> str:
    result = await credit_agent.run(request, deps=ctx.deps)
    return result.output


@desk.tool
def summarise(ctx: RunContext[dict], text: str) -> str:
    return summary_agent.run_sync(text).output


@desk.tool
async def research(ctx: RunContext[dict], topic: str) -> str:
    result = await research_agent.run(topic)
    return result.output
""",
}


def test_a_tool_running_a_pydantic_ai_agent_does_what_its_tools_do(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, PYDANTIC_WORKERS)
    # the lookup worker's tools (registered by call and by decorator) only read
    assert verdicts["ask_lookup"][0] == "read"
    assert "AG104" not in verdicts["ask_lookup"][1]
    # the credit worker is given a tool that posts a credit
    assert verdicts["ask_credit"][0] == "network_write"
    # an agent with no tool only answers
    assert verdicts["summarise"][0] == "read"
    # a library's tool is out of sight: never judged safe
    assert "unknown" in verdicts["research"][0]


SMOLAGENTS_TEAM = {
    "crm/tools.py": """\
import requests
from smolagents import tool


@tool
def lookup_contact(email: str) -> dict:
    \"\"\"Look up a contact by email.

    Args:
        email: the contact's email address
    \"\"\"
    return requests.get("https://crm.example.com/contacts", params={"email": email}, timeout=10).json()


@tool
def log_call(contact_id: str, summary: str) -> dict:
    \"\"\"Log a call with a contact.

    Args:
        contact_id: the contact
        summary: what was said
    \"\"\"
    return requests.post(
        "https://crm.example.com/calls", json={"contact": contact_id, "summary": summary}, timeout=10
    ).json()
""",
    "crm/team.py": """\
from smolagents import CodeAgent, DuckDuckGoSearchTool, InferenceClientModel, ToolCallingAgent

from crm.tools import log_call, lookup_contact


def build_caller(model):
    caller = ToolCallingAgent(
        tools=[lookup_contact, log_call],
        model=model,
        name="call_logger",
        description="Looks up contacts and logs calls with them.",
    )
    return caller


def build_team(model):
    directory = ToolCallingAgent(
        tools=[lookup_contact],
        model=model,
        name="directory",
        description="Finds contacts.",
    )
    web = ToolCallingAgent(
        tools=[DuckDuckGoSearchTool()], model=model, name="web_search", description="Searches the web."
    )
    return CodeAgent(tools=[], model=model, managed_agents=[build_caller(model), directory, web])


team = build_team(InferenceClientModel())
""",
}


def test_smolagents_managed_agents_are_tools_doing_what_their_tools_do(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, SMOLAGENTS_TEAM)
    assert verdicts["call_logger"][0] == "network_write"
    assert verdicts["directory"][0] == "read"
    assert "unknown" in verdicts["web_search"][0]
    # each of the managed agents' own tools is still a tool
    assert verdicts["log_call"][0] == "network_write"


OPENAI_AGENTS = {
    "shop/desk.py": """\
import requests
import stripe
from agents import Agent, Runner, function_tool


@function_tool
def refund_order(order_id: str) -> str:
    \"\"\"Refund an order.\"\"\"
    refund = stripe.Refund.create(payment_intent=order_id)
    return refund.id


@function_tool
def order_status(order_id: str) -> str:
    \"\"\"The status of an order.\"\"\"
    return requests.get(f"https://shop.example.com/orders/{order_id}", timeout=10).text


billing_agent = Agent(name="billing", instructions="Handle refunds.", tools=[refund_order, order_status])
status_agent = Agent(name="status", instructions="Answer order questions.", tools=[order_status])

triage = Agent(
    name="triage",
    instructions="Route the customer.",
    tools=[
        billing_agent.as_tool(tool_name="billing_desk", tool_description="Refunds and billing."),
        status_agent.as_tool(tool_name="status_desk", tool_description="Order status."),
    ],
)


@function_tool
async def escalate(question: str) -> str:
    \"\"\"Hand a hard question to the billing team.\"\"\"
    result = await Runner.run(billing_agent, question)
    return result.final_output
""",
}


def test_openai_agents_as_tools_and_runs(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, OPENAI_AGENTS)
    assert verdicts["billing_desk"][0] not in {"read", "unknown"}
    assert verdicts["status_desk"][0] == "read"
    assert verdicts["escalate"][0] not in {"read", "unknown"}


ADK_AGENTS = {
    "notes/agent.py": """\
from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool


def save_note(title: str, body: str) -> dict:
    \"\"\"Save a note.\"\"\"
    with open(f"notes/{title}.md", "w") as handle:
        handle.write(body)
    return {"status": "saved"}


def read_note(title: str) -> dict:
    \"\"\"Read a note.\"\"\"
    with open(f"notes/{title}.md") as handle:
        return {"body": handle.read()}


writer = LlmAgent(name="note_writer", model="gemini-2.0-flash", tools=[save_note])
reader = LlmAgent(name="note_reader", model="gemini-2.0-flash", tools=[read_note])

root_agent = LlmAgent(
    name="notes_assistant",
    model="gemini-2.0-flash",
    tools=[AgentTool(agent=writer), AgentTool(reader)],
)
""",
}


def test_adk_agent_tools_are_named_after_their_agents(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, ADK_AGENTS)
    assert verdicts["note_writer"][0] not in {"read", "unknown"}
    assert verdicts["note_reader"][0] == "read"


LANGGRAPH_RUN = {
    "support/graph.py": """\
import requests
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent


@tool
def open_ticket(title: str) -> str:
    \"\"\"Open a support ticket.\"\"\"
    return requests.post("https://desk.example.com/tickets", json={"title": title}, timeout=10).text


@tool
def search_docs(query: str) -> str:
    \"\"\"Search the docs.\"\"\"
    return requests.get("https://docs.example.com/search", params={"q": query}, timeout=10).text


ticket_graph = create_react_agent("openai:gpt-4o", [open_ticket])
docs_graph = create_react_agent("openai:gpt-4o", tools=[search_docs])


@tool
def file_issue(report: str) -> str:
    \"\"\"File an issue through the ticket assistant.\"\"\"
    state = ticket_graph.invoke({"messages": [("user", report)]})
    return state["messages"][-1].content


@tool
def ask_docs(question: str) -> str:
    \"\"\"Ask the docs assistant.\"\"\"
    state = docs_graph.invoke({"messages": [("user", question)]})
    return state["messages"][-1].content
""",
}


def test_a_tool_invoking_a_langgraph_agent_does_what_its_tools_do(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, LANGGRAPH_RUN)
    assert verdicts["file_issue"][0] == "network_write"
    assert verdicts["ask_docs"][0] == "read"


SHOP_TOOLS = """\
import requests
import stripe
from agents import function_tool


@function_tool
def order_status(order_id: str) -> str:
    \"\"\"The status of an order.\"\"\"
    return requests.get(f"https://shop.example.com/orders/{order_id}", timeout=10).text


@function_tool
def refund_order(order_id: str) -> str:
    \"\"\"Refund an order.\"\"\"
    return stripe.Refund.create(payment_intent=order_id).id


def extra_tools() -> list:
    return [refund_order]
"""

OPENAI_AGENTS_EXTRA_TOOLS = {
    "shop/tools.py": SHOP_TOOLS,
    "shop/desk.py": """\
from agents import Agent, Runner, function_tool

from shop.tools import extra_tools, order_status

status_agent = Agent(name="status", instructions="Answer.", tools=[order_status, *extra_tools()])


def build_helper(base_tools: list) -> Agent:
    return Agent(name="helper", instructions="Help.", tools=[order_status] + base_tools)


helper_agent = build_helper([])


@function_tool
async def ask_status(question: str) -> str:
    \"\"\"Ask the status desk.\"\"\"
    result = await Runner.run(status_agent, question)
    return result.final_output


@function_tool
async def ask_helper(question: str) -> str:
    \"\"\"Ask the helper.\"\"\"
    result = await Runner.run(helper_agent, question)
    return result.final_output
""",
}


def test_an_agent_given_tools_computed_at_run_time_is_never_judged_to_read(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, OPENAI_AGENTS_EXTRA_TOOLS)
    # ``*extra_tools()`` and a parameter's list are out of sight: what the agent runs is unknown
    assert verdicts["ask_status"][0] != "read"
    assert verdicts["ask_helper"][0] != "read"


PYDANTIC_NESTED_TOOLS = {
    "payments/agents.py": """\
import httpx
from pydantic_ai import Agent, RunContext


def build_payer() -> Agent:
    payer = Agent("openai:gpt-4o", deps_type=dict)

    def pay(ctx: RunContext[dict], invoice_id: str, amount: float) -> str:
        response = httpx.post("https://pay.example.com/payments", json={"invoice": invoice_id, "amount": amount})
        return response.text

    payer.tool(pay)
    return payer


def build_refunder() -> Agent:
    refunder = Agent("openai:gpt-4o", deps_type=dict)

    @refunder.tool_plain
    def refund(payment_id: str) -> str:
        return httpx.post("https://pay.example.com/refunds", json={"payment": payment_id}).text

    return refunder


def build_lister() -> Agent:
    lister = Agent("openai:gpt-4o")
    lister.tool_plain(httpx.get)
    return lister


payer_agent = build_payer()
refund_agent = build_refunder()
list_agent = build_lister()
desk = Agent("openai:gpt-4o", deps_type=dict)


@desk.tool
async def settle(ctx: RunContext[dict], request: str) -> str:
    result = await payer_agent.run(request, deps=ctx.deps)
    return result.output


@desk.tool
async def take_back(ctx: RunContext[dict], request: str) -> str:
    result = await refund_agent.run(request, deps=ctx.deps)
    return result.output


@desk.tool
async def browse(ctx: RunContext[dict], request: str) -> str:
    result = await list_agent.run(request)
    return result.output
""",
}


def test_tools_nested_in_the_function_building_an_agent_are_its_tools(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, PYDANTIC_NESTED_TOOLS)
    # registered by call and by decorator inside the builder
    assert verdicts["settle"][0] == "network_write"
    assert verdicts["take_back"][0] == "network_write"
    # a library's function registered as a tool: out of sight, never judged to read
    assert verdicts["browse"][0] != "read"


OPENAI_AGENTS_CHOSEN_TOOLS = {
    "shop/tools.py": SHOP_TOOLS,
    "shop/desk.py": """\
import os

from agents import Agent, Runner, function_tool

from shop.tools import order_status, refund_order

ALLOW_REFUNDS = os.environ.get("ALLOW_REFUNDS") == "1"
desk_agent = Agent(
    name="desk",
    instructions="Help the customer.",
    tools=[order_status, refund_order] if ALLOW_REFUNDS else [order_status],
)


@function_tool
async def ask_desk(question: str) -> str:
    \"\"\"Ask the desk.\"\"\"
    result = await Runner.run(desk_agent, question)
    return result.final_output
""",
}


def test_an_agent_given_one_of_two_tool_lists_does_what_either_does(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, OPENAI_AGENTS_CHOSEN_TOOLS)
    assert verdicts["ask_desk"][0] not in {"read", "unknown"}


SMOLAGENTS_CYCLE = {
    "ops/team.py": """\
import requests
from smolagents import ToolCallingAgent, tool


@tool
def read_runbook(topic: str) -> str:
    \"\"\"Read a runbook.

    Args:
        topic: what the runbook is about
    \"\"\"
    return requests.get("https://ops.example.com/runbooks", params={"topic": topic}, timeout=10).text


@tool
def restart_service(service: str) -> str:
    \"\"\"Restart a service.

    Args:
        service: the service to restart
    \"\"\"
    return requests.post(f"https://ops.example.com/services/{service}/restart", timeout=10).text


def build_reader(model, rounds: int):
    return ToolCallingAgent(
        tools=[read_runbook],
        model=model,
        managed_agents=[build_operator(model, rounds - 1)] if rounds else [],
        name="runbook_reader",
        description="Reads runbooks.",
    )


def build_operator(model, rounds: int):
    return ToolCallingAgent(
        tools=[restart_service],
        model=model,
        managed_agents=[build_reader(model, rounds - 1)],
        name="operator",
        description="Restarts services.",
    )
""",
}


def test_agents_managing_each_other_are_never_judged_to_read(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, SMOLAGENTS_CYCLE)
    # each manages the other: whichever is asked about first, neither only reads
    assert verdicts["runbook_reader"][0] != "read"
    assert verdicts["operator"][0] != "read"


ADK_PARTIAL_TOOL = {
    "crm/agent.py": """\
from functools import partial

import requests
from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool
from google.adk.tools.agent_tool import AgentTool


def call_crm(method: str, path: str, payload: dict) -> dict:
    \"\"\"Call the CRM with the HTTP method the model picks.\"\"\"
    response = requests.request(method, f"https://crm.example.com/{path}", json=payload, timeout=10)
    return response.json()


keeper = LlmAgent(
    name="contact_keeper",
    model="gemini-2.0-flash",
    tools=[FunctionTool(func=partial(call_crm, path="contacts"))],
)
root_agent = LlmAgent(name="assistant", model="gemini-2.0-flash", tools=[AgentTool(agent=keeper)])
""",
}


def test_an_agent_tool_whose_function_lets_the_model_pick_the_http_method_may_write(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, ADK_PARTIAL_TOOL)
    assert verdicts["contact_keeper"][0] == "network_write"


LANGCHAIN_TOOL_CALLING = {
    "orders/agent.py": """\
import requests
from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI


def cancel_order(order_id: str) -> str:
    \"\"\"Cancel an order.\"\"\"
    return requests.post(f"https://shop.example.com/orders/{order_id}/cancel", timeout=10).text


llm = ChatOpenAI(model="gpt-4o")
prompt = ChatPromptTemplate.from_messages([("system", "Help with orders."), ("placeholder", "{agent_scratchpad}")])
agent = create_tool_calling_agent(llm, [cancel_order], prompt)
""",
}


def test_langchain_tool_calling_agent_tools_are_its_second_argument(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, LANGCHAIN_TOOL_CALLING)
    assert verdicts["cancel_order"][0] == "network_write"


OPENAI_AGENTS_NESTED_DESKS = {
    "shop/tools.py": SHOP_TOOLS,
    "shop/desk.py": """\
from agents import Agent, Runner, function_tool

from shop.tools import order_status, refund_order

status_agent = Agent(name="status", instructions="Answer order questions.", tools=[order_status])
billing_agent = Agent(name="billing", instructions="Handle refunds.", tools=[refund_order])
front_desk = Agent(
    name="front",
    instructions="Answer the customer.",
    tools=[status_agent.as_tool(tool_name="status_desk", tool_description="Order status.")],
)
back_office = Agent(
    name="back",
    instructions="Handle money.",
    tools=[billing_agent.as_tool(tool_name="billing_desk", tool_description="Refunds.")],
)


@function_tool
async def ask_front(question: str) -> str:
    \"\"\"Ask the front desk.\"\"\"
    result = await Runner.run(front_desk, question)
    return result.final_output


@function_tool
async def ask_back(question: str) -> str:
    \"\"\"Ask the back office.\"\"\"
    result = await Runner.run(back_office, question)
    return result.final_output
""",
}


def test_an_agent_given_another_agent_as_a_tool_does_what_that_agent_does(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, OPENAI_AGENTS_NESTED_DESKS)
    assert verdicts["ask_front"][0] == "read"
    assert verdicts["ask_back"][0] not in {"read", "unknown"}
