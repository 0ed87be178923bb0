"""Tools built at run time: a closure made per entry of a list of specs and handed to a
tool factory, and a function nested in the method that registers it."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

SPECS = """\
import httpx
from langchain_core.tools import StructuredTool

ENDPOINTS = [
    {"name": "create_ticket", "path": "/tickets"},
    {"name": "close_ticket", "path": "/tickets/close"},
]


def build_tools(base_url: str) -> list[StructuredTool]:
    tools = []
    for spec in ENDPOINTS:

        def call_endpoint(payload: dict, _path: str = spec["path"]) -> dict:
            return httpx.post(base_url + _path, json=payload).json()

        tools.append(
            StructuredTool.from_function(func=call_endpoint, name=spec["name"], description="")
        )
    return tools
"""


def test_a_closure_made_per_spec_entry_is_a_tool_reaching_its_call() -> None:
    tools = discover({"desk/tools.py": SPECS})
    assert [(t.framework, t.functions, t.anchor.span.line) for t in tools] == [
        (
            "langchain",
            ["desk.tools.build_tools.<locals>.call_endpoint"],
            line_of(SPECS, "def call_endpoint"),
        )
    ]
    assert [e.kind for e in tools[0].effects] == ["network_write"]


def test_a_name_nested_elsewhere_is_not_taken() -> None:
    source = """\
    from langchain_core.tools import StructuredTool


    def helpers():
        def call_endpoint(payload: dict) -> dict:
            return payload
        return call_endpoint


    def build_tools():
        return [StructuredTool.from_function(func=call_endpoint, name="x", description="")]
    """
    assert discover({"desk/tools.py": source}) == []


TOOLKIT = """\
import httpx
from langchain_core.tools import BaseTool, StructuredTool


class CalendarToolkit:
    def __init__(self, token: str) -> None:
        self.token = token

    def create_event(self, title: str, start: str) -> dict:
        return httpx.post("https://cal.example/events", json={"title": title, "start": start}).json()

    def list_events(self, day: str) -> list:
        return httpx.get(f"https://cal.example/events?day={day}").json()

    def get_tools(self) -> list[BaseTool]:
        return [
            StructuredTool.from_function(func=self.create_event, name="create_event"),
            StructuredTool.from_function(func=self.list_events, name="list_events"),
        ]
"""


def test_bound_methods_a_toolkit_hands_to_a_factory_are_tools() -> None:
    tools = discover({"cal/toolkit.py": TOOLKIT})
    found = {t.name: (t.functions, sorted({e.kind for e in t.effects})) for t in tools}
    assert found == {
        "create_event": (["cal.toolkit.CalendarToolkit.create_event"], ["network_write"]),
        "list_events": (["cal.toolkit.CalendarToolkit.list_events"], []),
    }


BUILT_BY_FACTORIES = """\
import httpx
from fastmcp import FastMCP


def _build_pin_page(settings):
    async def pin_page(url: str) -> str:
        \"\"\"Pin a page to the shared board.\"\"\"
        httpx.post(settings.board_url + "/pins", json={"url": url})
        return "pinned"

    return pin_page


def _build_list_pins(settings):
    async def list_pins() -> str:
        \"\"\"The pinned pages.\"\"\"
        return httpx.get(settings.board_url + "/pins").text

    return list_pins


def _build_unused(settings):
    async def never_registered() -> str:
        return "nothing"

    return never_registered


def register_tools(mcp: FastMCP, settings) -> None:
    list_pins = _build_list_pins(settings)
    mcp.tool(list_pins)
    mcp.tool(_build_pin_page(settings))
"""


def test_a_closure_a_project_factory_returns_is_the_tool_it_registers() -> None:
    """``mcp.tool(_build_pin_page(settings))`` and ``list_pins = _build_list_pins(settings);
    mcp.tool(list_pins)``: what is registered is the function each factory writes inside
    itself and returns, a closure over the settings; a factory nothing registers makes no
    tool."""
    tools = discover({"board/tools.py": BUILT_BY_FACTORIES})
    found = {t.name: t for t in tools}
    assert set(found) == {"pin_page", "list_pins"}
    assert found["pin_page"].anchor.span.line == line_of(BUILT_BY_FACTORIES, "async def pin_page")
    assert [e.kind for e in found["pin_page"].effects] == ["network_write"]
    assert found["list_pins"].effects == []
