"""Tools a framework makes of a retriever or a query engine: LangChain's
``create_retriever_tool`` and LlamaIndex's ``QueryEngineTool`` / ``RetrieverTool``. They have
no function of the project's; each is found where the call makes it, under the name the call
gives, and reads (a search over an index)."""

from __future__ import annotations

from tests.conftest import ScanFiles, tool_verdicts
from tests.test_tool_discovery import discover, line_of

HANDBOOK_AGENT = """\
from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain.tools.retriever import create_retriever_tool
from langchain_core.tools import tool

from store import handbook_index, policy_index

handbook = create_retriever_tool(
    handbook_index.as_retriever(),
    "search_handbook",
    "Search the employee handbook.",
)
policies = create_retriever_tool(
    retriever=policy_index.as_retriever(), name="search_policies", description="Policies."
)


@tool
def file_leave_request(days: int) -> str:
    \"\"\"File a leave request.\"\"\"
    with open("leave.txt", "a") as out:
        out.write(f"{days}\\n")
    return "filed"


tools = [handbook, policies, file_leave_request]
agent = create_tool_calling_agent(llm=None, tools=tools, prompt=None)
executor = AgentExecutor(agent=agent, tools=tools)
"""

CITY_AGENT = """\
from llama_index.core.agent import ReActAgent
from llama_index.core.tools import QueryEngineTool, RetrieverTool, ToolMetadata

from indexes import census_index, guide_index, names

census = QueryEngineTool(
    query_engine=census_index.as_query_engine(),
    metadata=ToolMetadata(name="census_data", description="Population figures."),
)
guide = QueryEngineTool.from_defaults(
    guide_index.as_query_engine(), name="city_guide", description="Places to visit."
)
streets = RetrieverTool(guide_index.as_retriever(), ToolMetadata(name="street_names"))
dynamic = [
    QueryEngineTool(query_engine=guide_index.as_query_engine(), metadata=ToolMetadata(name=n))
    for n in names
]

agent = ReActAgent.from_tools([census, guide, streets, *dynamic])
"""


def test_langchain_retriever_tools_are_found_where_they_are_made_and_read(
    scan_files: ScanFiles,
) -> None:
    tools = {t.name: t for t in discover({"agent.py": HANDBOOK_AGENT})}
    assert tools["search_handbook"].anchor.span.line == line_of(HANDBOOK_AGENT, "handbook =")
    assert tools["search_policies"].anchor.span.line == line_of(HANDBOOK_AGENT, "policies =")
    assert tools["search_handbook"].functions == []
    verdicts = tool_verdicts(scan_files, {"agent.py": HANDBOOK_AGENT})
    assert verdicts["search_handbook"] == ("read", set())
    assert verdicts["search_policies"] == ("read", set())
    assert verdicts["file_leave_request"][0] == "write"


def test_llamaindex_query_engine_and_retriever_tools_are_named_by_their_metadata() -> None:
    tools = {t.name: t.anchor.span.line for t in discover({"agent.py": CITY_AGENT})}
    # a name given at run time (``ToolMetadata(name=n)``) names no tool to report
    assert tools == {
        "census_data": line_of(CITY_AGENT, "census ="),
        "city_guide": line_of(CITY_AGENT, "guide ="),
        "street_names": line_of(CITY_AGENT, "streets ="),
    }
