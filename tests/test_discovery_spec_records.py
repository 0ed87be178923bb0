"""A registry of records, each naming a tool and holding the function that runs it
(``ToolSpec(name="restart_service", description=..., input_model=..., handler=restart)``),
whose entries a method writes out as tool specs (``{"name": spec.name, "description":
spec.description, "input_schema": ...} for spec in self._tools.values()``) for a planner
model: each record so constructed is a tool, run by the function it holds."""

from __future__ import annotations

from tests.test_tool_discovery import discover

REGISTRY = """\
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import BaseModel

from ops.actions import DiskInput, ServiceInput, disk_usage, restart_service


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_model: type[BaseModel]
    handler: Callable[[BaseModel], Any]
    timeout_seconds: float = 5.0


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}

    def register(self, spec: ToolSpec) -> None:
        self._tools[spec.name] = spec

    def list_tools(self) -> list[dict[str, Any]]:
        return [
            {
                "name": spec.name,
                "description": spec.description,
                "input_schema": spec.input_model.model_json_schema(),
            }
            for spec in self._tools.values()
        ]

    def execute(self, name: str, args: dict) -> Any:
        spec = self._tools[name]
        validated = spec.input_model.model_validate(args)
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(spec.handler, validated).result(timeout=spec.timeout_seconds)


def default_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(
        ToolSpec(
            name="disk_usage",
            description="How full each disk is.",
            input_model=DiskInput,
            handler=disk_usage,
        )
    )
    registry.register(
        ToolSpec(
            name="restart_service",
            description="Restart a systemd service.",
            input_model=ServiceInput,
            handler=restart_service,
        )
    )
    return registry
"""

ACTIONS = """\
import shutil
import subprocess

from pydantic import BaseModel


class DiskInput(BaseModel):
    path: str = "/"


class ServiceInput(BaseModel):
    service: str


def disk_usage(args: DiskInput) -> dict:
    total, used, free = shutil.disk_usage(args.path)
    return {"total": total, "used": used, "free": free}


def restart_service(args: ServiceInput) -> str:
    return subprocess.run(["systemctl", "restart", args.service], check=True).stdout
"""

PLANNER = """\
import json

from openai import OpenAI

from ops.registry import default_registry

client = OpenAI()
registry = default_registry()


def plan_and_run(question: str) -> list:
    catalog = json.dumps(registry.list_tools())
    reply = client.chat.completions.create(
        model="gpt-4o",
        messages=[
            {"role": "system", "content": f"Tools:\\n{catalog}\\nAnswer with a JSON list of steps."},
            {"role": "user", "content": question},
        ],
        response_format={"type": "json_object"},
    )
    steps = json.loads(reply.choices[0].message.content)["steps"]
    return [registry.execute(step["tool"], step["args"]) for step in steps]
"""


def test_each_record_a_registry_writes_out_as_a_spec_is_a_tool_run_by_its_handler() -> None:
    tools = discover(
        {
            "ops/__init__.py": "",
            "ops/registry.py": REGISTRY,
            "ops/actions.py": ACTIONS,
            "ops/planner.py": PLANNER,
        }
    )
    assert sorted((t.name, t.functions[0]) for t in tools) == [
        ("disk_usage", "ops.actions.disk_usage"),
        ("restart_service", "ops.actions.restart_service"),
    ]
