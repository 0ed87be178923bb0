"""LlamaIndex tool specs: ``spec_functions`` with (sync, async) pairs, and tools a spec
builds at run time (a nested function attached with ``setattr`` and appended to
``spec_functions``)."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

PAIRS = """\
import httpx
from llama_index.core.tools.tool_spec.base import BaseToolSpec


class WeatherToolSpec(BaseToolSpec):
    spec_functions = [("forecast", "aforecast"), "alerts"]

    def forecast(self, city: str) -> dict:
        return httpx.get(f"https://weather.example/forecast/{city}").json()

    async def aforecast(self, city: str) -> dict:
        async with httpx.AsyncClient() as client:
            return (await client.get(f"https://weather.example/forecast/{city}")).json()

    def alerts(self, region: str) -> list:
        return httpx.get(f"https://weather.example/alerts/{region}").json()
"""


def test_spec_function_pairs_name_one_tool_each() -> None:
    tools = discover({"weather/spec.py": PAIRS})
    assert {t.name: t.anchor.span.line for t in tools} == {
        "forecast": line_of(PAIRS, "def forecast"),
        "alerts": line_of(PAIRS, "def alerts"),
    }


RUNTIME = """\
import requests
from llama_index.core.tools.tool_spec.base import BaseToolSpec


class HooksToolSpec(BaseToolSpec):
    spec_functions = []

    def __init__(self, hooks: list[dict]) -> None:
        for hook in hooks:

            def trigger(hook_id=hook["id"], **payload):
                return self.fire(hook_id, payload)

            setattr(self, hook["name"], trigger)
            self.spec_functions.append(hook["name"])

    def fire(self, hook_id: str, payload: dict) -> str:
        return requests.post(f"https://hooks.example/{hook_id}", json=payload).text
"""


def test_functions_a_spec_attaches_at_run_time_are_tools() -> None:
    tools = discover({"hooks/spec.py": RUNTIME})
    assert [(t.functions, t.anchor.span.line) for t in tools] == [
        (["hooks.spec.HooksToolSpec.__init__.<locals>.trigger"], line_of(RUNTIME, "def trigger"))
    ]


def test_self_in_a_function_nested_in_a_method_is_the_method_self() -> None:
    (tool,) = discover({"hooks/spec.py": RUNTIME})
    assert [(e.kind, e.sink) for e in tool.effects] == [("network_write", "requests.post")]


def test_a_nested_function_never_attached_is_no_tool() -> None:
    source = RUNTIME.replace('            setattr(self, hook["name"], trigger)\n', "")
    assert discover({"hooks/spec.py": source}) == []
