"""Tool-schema files as input: detection by content, positions, AG001, merging with code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.engine.scan_result import ScanResult
from agentguard.facts.schema_files.detect import detect
from agentguard.facts.schema_files.loader import parse_text
from agentguard.output import RenderOptions
from agentguard.output.json_format import render

from .conftest import FIXTURES, ScanFiles

MCP_LIST = """{
  "tools": [
    {
      "name": "get_order",
      "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
      "annotations": {"readOnlyHint": true}
    },
    {
      "name": "create_order",
      "description": "Place an order for a cart.",
      "inputSchema": {"type": "object", "properties": {"cart_id": {"type": "string"}}}
    }
  ]
}
"""

LANGCHAIN_CODE = """\
import requests
from langchain_core.tools import tool


@tool
def create_order(cart_id: str) -> dict:
    \"\"\"Create an order.\"\"\"
    headers = {"Idempotency-Key": f"order:{cart_id}"}
    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers=headers).json()
"""


def tools_of(result: ScanResult) -> dict[str, tuple[str, bool]]:
    return {t.name: (t.framework, t.schema_only) for t in result.project.tools}


def codes(result: ScanResult) -> list[tuple[str, str, int, str | None]]:
    return sorted((f.code, f.path, f.span.line, f.tool) for f in result.findings)


def detected_formats(name: str, text: str) -> list[tuple[str, str]]:
    loaded = parse_text(name, text.encode(), force=name.startswith("agentguard."))
    found = detect(loaded.documents, manifest_name=name.startswith("agentguard."))
    return [(t.format, t.name) for t in found.tools] + [
        ("manifest", e.name) for e in found.manifest
    ]


# ------------------------------------------------------------------ detection by content


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("dump.json", MCP_LIST, [("mcp", "get_order"), ("mcp", "create_order")]),
        (
            "rpc.json",
            '{"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "send_sms",'
            ' "inputSchema": {"type": "object"}}], "nextCursor": "abc"}}',
            [("mcp", "send_sms")],
        ),
        (
            "one-tool.yaml",
            "name: delete_file\ninputSchema:\n  type: object\nannotations:\n  destructiveHint: true\n",
            [("mcp", "delete_file")],
        ),
        (
            "chat.json",
            '{"type": "function", "function": {"name": "refund", "parameters": {"type": "object"}}}',
            [("openai-chat", "refund")],
        ),
        (
            "chat-list.yaml",
            "- type: function\n  function:\n    name: a\n- type: function\n  function:\n    name: b\n",
            [("openai-chat", "a"), ("openai-chat", "b")],
        ),
        (
            "responses.yaml",
            "tools:\n  - type: function\n    name: book_room\n    parameters: {type: object}\n"
            "  - type: web_search\n",
            [("openai-responses", "book_room")],
        ),
        (
            "legacy.json",
            '{"functions": [{"name": "charge_card", "parameters": {"type": "object"}}]}',
            [("openai-functions", "charge_card")],
        ),
        (
            "claude.yaml",
            "- name: send_email\n  input_schema: {type: object}\n"
            "- type: bash_20250124\n  name: bash\n",
            [("anthropic", "send_email")],
        ),
        (
            "anything.yaml",
            "agentguard: 1\ntools:\n  create_order: {risk: write}\n",
            [("manifest", "create_order")],
        ),
        ("agentguard.yaml", "tools:\n  refund: {replay: never}\n", [("manifest", "refund")]),
    ],
)
def test_tool_formats_are_detected_by_content(
    name: str, text: str, expected: list[tuple[str, str]]
) -> None:
    assert detected_formats(name, text) == expected


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "package.json",
            '{"name": "x", "scripts": {"lint": "eslint --rule func-style:function"},'
            ' "dependencies": {"openai": "^5"}}',
        ),
        (
            "ci.yml",
            "on:\n  workflow_dispatch:\n    inputs:\n      parameters: {required: false}\n"
            "jobs:\n  t:\n    runs-on: ubuntu-latest\n    steps: [{run: pytest}]\n",
        ),
        (
            "compose.yaml",
            "services:\n  fn:\n    image: x\n    environment: {FUNCTION_NAME: a}\n",
        ),
        (
            "k8s.yaml",
            "kind: ConfigMap\ndata: {parameters: a}\n---\nkind: Deployment\nspec: {replicas: 2}\n",
        ),
        (
            "template.yaml",
            "Resources:\n  Fn:\n    Type: AWS::Lambda::Function\n"
            "    Properties: {Role: !GetAtt Role.Arn, parameters: !Ref P}\n",
        ),
        (
            "openapi.yaml",
            "paths:\n  /orders:\n    post:\n      parameters: [{name: id, in: query}]\n",
        ),
        ("mcp.json", '{"mcpServers": {"fs": {"command": "npx", "args": ["function"]}}}'),
        ("tools.yaml", "tools:\n  - ruff\n  - mypy\nparameters: {}\n"),
    ],
)
def test_other_json_and_yaml_are_skipped_silently(
    name: str, text: str, scan_files: ScanFiles
) -> None:
    assert detected_formats(name, text) == []
    result = scan_files({name: text})
    assert result.findings == []
    assert result.problems == []
    assert result.project.tools == []


def test_files_without_markers_are_not_even_parsed() -> None:
    # Broken YAML that never mentions a tool format: no AG001, not our business.
    loaded = parse_text("chart/templates/deploy.yaml", b"replicas: {{ .Values.replicas }\n")
    assert loaded.documents == [] and loaded.syntax is None and loaded.skipped is None


# ------------------------------------------------------------------ AG001 and positions


def test_yaml_syntax_error_gives_ag001_at_the_parser_position(scan_files: ScanFiles) -> None:
    text = "- name: create_order\n  input_schema: {type: object\n- name: b\n"
    result = scan_files({"tools.yaml": text})
    (finding,) = result.findings
    assert finding.code == "AG001"
    assert finding.span.line == 3  # where the flow mapping should have been closed
    assert "invalid YAML" in finding.message


def test_json_syntax_error_gives_ag001_at_the_parser_position(scan_files: ScanFiles) -> None:
    text = '{"tools": [\n  {"name": "a", "inputSchema": {"type": "object"}}\n  {"name": "b"}\n]}'
    result = scan_files({"tools.json": text})
    (finding,) = result.findings
    assert (finding.code, finding.span.line, finding.span.column) == ("AG001", 3, 3)
    assert "invalid JSON" in finding.message


def test_wrong_shape_points_at_the_offending_value(scan_files: ScanFiles) -> None:
    text = (
        '{"tools": [\n'
        '  {"name": "get_order", "inputSchema": {"type": "object"}},\n'
        '  {"name": "cancel_order",\n'
        '   "inputSchema": {"type": "object"},\n'
        '   "annotations": {"readOnlyHint": "no"}}\n'
        "]}\n"
    )
    result = scan_files({"dump.json": text}, select=("AG001",))
    (finding,) = result.findings
    assert (finding.span.line, finding.span.column) == (5, 36)
    assert "tools[1].annotations.readOnlyHint" in finding.message
    assert "expected a boolean" in finding.message


def test_missing_required_field_points_at_the_definition(scan_files: ScanFiles) -> None:
    text = "tools:\n  - name: ok\n    inputSchema: {type: object}\n  - name: broken\n"
    result = scan_files({"server-tools.yaml": text}, select=("AG001",))
    (finding,) = result.findings
    assert finding.span.line == 4
    assert "inputSchema" in finding.message and "required" in finding.message


def test_manifest_typo_points_at_the_key_and_keeps_the_rest(scan_files: ScanFiles) -> None:
    manifest = (
        "agentguard: 1\n"
        "tools:\n"
        "  create_order:\n"
        "    risk: write\n"
        "    idempotncy: non_idempotent\n"
        "    replay: never\n"
    )
    result = scan_files(
        {"agent.py": LANGCHAIN_CODE, "agentguard.yaml": manifest}, select=("AG0", "AG1")
    )
    assert [(f.code, f.span.line, f.span.column) for f in result.findings] == [("AG001", 5, 5)]
    assert "idempotncy" in result.findings[0].message
    # The valid fields still declare the tool: no AG101 on top of the typo.
    (tool,) = result.project.tools
    assert tool.declaration is not None and tool.declaration.replay == "never"


def test_huge_and_binary_schema_files_are_skipped_with_a_reason(scan_files: ScanFiles) -> None:
    big = (
        '{"tools": [' + ",".join(['{"name": "a", "inputSchema": {"type": "object"}}'] * 400) + "]}"
    )
    result = scan_files(
        {"big.json": big, "blob.yaml": "name: x\x00\x01inputSchema\n"}, max_file_size=10_000
    )
    reasons = {p.path: p.reason for p in result.problems}
    assert "max-file-size" in reasons["big.json"]
    assert "binary" in reasons["blob.yaml"]
    assert result.findings == []


def test_pathological_inputs_never_crash(scan_files: ScanFiles) -> None:
    files = {
        "deep.json": '{"inputSchema": ' + "[" * 5000 + "]" * 5000 + "}",
        "deep.yaml": "inputSchema: " + "[" * 5000 + "]" * 5000 + "\n",
        "keys.yaml": "? [inputSchema]\n: 1\n",
        "alias.yaml": "a: &x {inputSchema: {type: object}, name: t}\nb: *x\ntools: [*x, *x]\n",
        "empty.json": "",
        "bom.json": '\ufeff{"name": "send_fax", "inputSchema": {"type": "object"}}',
    }
    result = scan_files(files)
    assert {f.code for f in result.findings} <= {"AG001", "AG101"}
    assert "send_fax" in tools_of(result)
    reasons = {p.path: p.reason for p in result.problems}
    assert "deeply nested" in reasons["deep.json"] and "deeply nested" in reasons["deep.yaml"]


def test_undecodable_schema_file_is_skipped_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tools.yaml").write_bytes(b"name: caf\xe9\ninputSchema: {type: object}\n")
    result = scan([tmp_path], load_config([tmp_path]))
    assert [(p.path, p.reason.split(":")[0]) for p in result.problems] == [
        ("tools.yaml", "not valid UTF-8")
    ]


# ------------------------------------------------------------------ schema-only judgements


def test_schema_only_tools_are_judged_from_their_schema(scan_files: ScanFiles) -> None:
    result = scan_files({"dump.json": MCP_LIST})
    assert tools_of(result) == {"get_order": ("mcp", True), "create_order": ("mcp", True)}
    (finding,) = result.findings
    assert (finding.code, finding.tool, finding.span.line) == ("AG101", "create_order", 9)
    assert "from its schema" in finding.message
    assert finding.confidence.value == "medium"


@pytest.mark.parametrize(
    "name", ["order_status", "get_invoice", "list_refunds", "email_templates", "lookup"]
)
def test_read_and_noun_names_are_not_blamed(name: str, scan_files: ScanFiles) -> None:
    text = json.dumps({"name": name, "inputSchema": {"type": "object"}})
    result = scan_files({"tool.json": text})
    assert result.findings == []


def test_description_verb_gives_a_low_confidence_judgement(scan_files: ScanFiles) -> None:
    text = "- name: tickets\n  description: Creates a support ticket.\n  input_schema: {type: object}\n"
    (finding,) = scan_files({"claude.yaml": text}).findings
    assert (finding.code, finding.confidence.value) == ("AG101", "low")


def test_contradictory_annotations_are_ag102(scan_files: ScanFiles) -> None:
    text = (
        "tools:\n"
        "  - name: purge_cache\n"
        "    inputSchema: {type: object}\n"
        "    annotations: {readOnlyHint: true, destructiveHint: true}\n"
        "  - name: delete_user\n"
        "    inputSchema: {type: object}\n"
        "    annotations:\n"
        "      readOnlyHint: true\n"
    )
    result = scan_files({"tools.yaml": text})
    assert codes(result) == [
        ("AG102", "tools.yaml", 4, "purge_cache"),
        ("AG102", "tools.yaml", 8, "delete_user"),
    ]


def test_key_rules_stay_silent_but_a_model_supplied_key_is_visible(
    scan_files: ScanFiles,
) -> None:
    text = json.dumps(
        {
            "type": "function",
            "function": {
                "name": "create_payment",
                "parameters": {
                    "type": "object",
                    "properties": {"amount": {"type": "integer"}, "idempotency_key": {}},
                },
            },
        }
    )
    found = {f.code for f in scan_files({"openai.json": text}).findings}
    assert "AG201" not in found  # a schema cannot show whether a key is sent
    assert "AG202" in found  # but it shows the model is asked to make one up


def test_manifest_replay_auto_on_a_schema_tool_is_ag103(scan_files: ScanFiles) -> None:
    files = {
        "tools.yaml": "- name: refund_payment\n  input_schema: {type: object}\n",
        "agentguard.yaml": "agentguard: 1\ntools:\n  refund_payment:\n    replay: auto\n",
    }
    result = scan_files(files)
    (finding,) = result.findings
    assert (finding.code, finding.path, finding.span.line) == ("AG103", "agentguard.yaml", 4)
    assert "judging from its schema" in finding.message
    assert finding.confidence.value == "medium"


# ------------------------------------------------------------------ code and schema together


def test_manifest_declaration_satisfies_ag101_for_a_code_tool(scan_files: ScanFiles) -> None:
    undeclared = scan_files({"agent.py": LANGCHAIN_CODE}, select=("AG1",))
    assert [f.code for f in undeclared.findings] == ["AG101"]
    manifest = "agentguard: 1\ntools:\n  create_order:\n    risk: write\n    replay: never\n"
    declared = scan_files(
        {"agent.py": LANGCHAIN_CODE, "agentguard.yaml": manifest}, select=("AG0", "AG1")
    )
    assert declared.findings == []
    (tool,) = declared.project.tools
    assert not tool.schema_only and tool.path == "agent.py"
    assert [str(s) for s in tool.sources] == ["agentguard.yaml:3:3"]


def test_code_and_schema_disagreeing_is_ag102_naming_both(scan_files: ScanFiles) -> None:
    code = (
        "import requests\n"
        "from mcp.server.fastmcp import FastMCP\n"
        "from mcp.types import ToolAnnotations\n\n"
        'mcp = FastMCP("shop")\n\n'
        "@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))\n"
        "def cancel_order(order_id: str) -> str:\n"
        '    return requests.delete(f"https://shop.example/orders/{order_id}").text\n'
    )
    manifest = (
        "agentguard: 1\ntools:\n  cancel_order:\n    risk: destructive\n"
        "    idempotency: non_idempotent\n    replay: never\n"
    )
    result = scan_files({"server.py": code, "agentguard.yaml": manifest})
    (finding,) = [f for f in result.findings if f.code == "AG102"]
    assert (finding.path, finding.span.line) == ("agentguard.yaml", 5)
    assert [(r.path, r.span.line) for r in finding.related] == [("server.py", 7)]
    assert "server.py:7" in finding.message


def test_agreeing_or_silent_declarations_do_not_disagree(scan_files: ScanFiles) -> None:
    code = (
        "from mcp.server.fastmcp import FastMCP\n"
        "from mcp.types import ToolAnnotations\n\n"
        'mcp = FastMCP("shop")\n\n'
        "@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))\n"
        "def set_address(order_id: str, address: str) -> str:\n"
        "    return address\n"
    )
    manifest = "agentguard: 1\ntools:\n  set_address:\n    replay: never\n"
    result = scan_files({"server.py": code, "agentguard.yaml": manifest})
    assert [f for f in result.findings if f.code == "AG102"] == []


def test_one_tool_defined_in_several_schemas_is_one_tool(scan_files: ScanFiles) -> None:
    files = {
        "mcp.json": MCP_LIST,
        "openai.yaml": "tools:\n  - type: function\n    function: {name: create_order}\n",
        "claude.yaml": "- name: create_order\n  input_schema: {type: object}\n",
    }
    result = scan_files(files)
    names = [t.name for t in result.project.tools]
    assert sorted(names) == ["create_order", "get_order"]
    assert [(f.code, f.tool) for f in result.findings] == [("AG101", "create_order")]


def test_schema_files_under_tests_are_not_project_tools(scan_files: ScanFiles) -> None:
    result = scan_files({"tests/cassettes/openai.json": MCP_LIST})
    assert result.project.tools == [] and result.findings == []


def test_mixed_fixture_json_output_lists_one_coherent_set_of_tools(tmp_path: Path) -> None:
    # A copy that is a repository of its own: paths are shown relative to its root.
    project = tmp_path / "mixed-schemas"
    shutil.copytree(FIXTURES / "mixed-schemas", project)
    (project / ".git").mkdir()
    result = scan([project], load_config([project]))
    import io

    stream = io.StringIO()
    render(result, stream, RenderOptions(color=False, statistics=False, show_source=False))
    tools = {t["name"]: t for t in json.loads(stream.getvalue())["tools"]}
    assert len(tools) == len(result.project.tools)  # no name twice
    invoice = tools["create_invoice"]
    assert invoice["schema_only"] is False and invoice["path"] == "billing_agent/server.py"
    assert {s.split(":")[0] for s in invoice["sources"]} == {
        "billing_agent/server.py",
        "mcp/crm-tools.json",
        "openai/tools.yaml",
        "agentguard.yaml",
    }
    assert "web_search" not in tools
    assert tools["transfer_funds"]["declared"] is True


def test_cli_reads_schema_files(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agentguard.cli import app

    (tmp_path / ".git").mkdir()
    (tmp_path / "tools.json").write_text(MCP_LIST, encoding="utf-8")
    outcome = CliRunner().invoke(app, ["check", str(tmp_path), "--format", "json"])
    assert outcome.exit_code == 1, outcome.output
    document = json.loads(outcome.output)
    assert [f["code"] for f in document["findings"]] == ["AG101"]
    assert document["findings"][0]["line"] == 9


PANTRY_SPECS = """[
  {"type": "function", "function": {"name": "pantry_items", "description": "What is in the pantry",
   "parameters": {"type": "object", "properties": {}}}},
  {"type": "function", "function": {"name": "order_groceries", "description": "Order groceries",
   "parameters": {"type": "object", "properties": {"items": {"type": "array"}}}}}
]
"""

PANTRY_LOOP = """\
import json
from pathlib import Path

import httpx

from pantry.shop import order_groceries, pantry_items

TOOL_SPECS = json.loads(Path("tools.json").read_text())
TOOL_HANDLERS = {"pantry_items": pantry_items, "order_groceries": order_groceries}
ROUTES = {"/health": pantry_items}


def turn(messages: list) -> list:
    answer = httpx.post(
        "https://models.example.com/v1/chat/completions",
        json={"model": "small", "messages": messages, "tools": TOOL_SPECS},
        timeout=60,
    ).json()
    for call in answer["choices"][0]["message"].get("tool_calls", []):
        handler = TOOL_HANDLERS.get(call["function"]["name"])
        messages.append({"role": "tool", "content": str(handler(**json.loads(call["function"]["arguments"])))})
    return messages
"""

PANTRY_SHOP = """\
import httpx


def pantry_items() -> list:
    return httpx.get("https://pantry.example.com/items", timeout=10).json()


def order_groceries(items: list) -> dict:
    return httpx.post("https://grocer.example.com/orders", json={"items": items}, timeout=10).json()
"""


def test_a_schema_files_tools_run_through_a_table_of_handlers_in_code(
    scan_files: ScanFiles,
) -> None:
    """Specs kept in ``tools.json`` and sent as they are; the calls run through a table keyed
    by the names the file declares: each name is one tool, run by the function the table
    holds, judged by what that function does (not guessed from its name)."""
    files = {
        "tools.json": PANTRY_SPECS,
        "pantry/loop.py": PANTRY_LOOP,
        "pantry/shop.py": PANTRY_SHOP,
        "pantry/__init__.py": "",
    }
    result = scan_files(files)
    tools = {t.name: t for t in result.project.tools}
    assert set(tools) == {"pantry_items", "order_groceries"}
    assert tools["pantry_items"].functions == ["pantry.shop.pantry_items"]
    assert not tools["pantry_items"].schema_only
    assert [e.kind for e in tools["pantry_items"].effects] == []
    assert [e.kind for e in tools["order_groceries"].effects] == ["network_write"]


PANTRY_NAMESPACE = """\
import inspect
import sys

from .shop import *

_here = sys.modules[__name__]
TOOL_FUNCS = {name: func for name, func in vars(_here).items() if inspect.isfunction(func)}
"""

PANTRY_NAMESPACE_LOOP = (
    PANTRY_LOOP.replace(
        "from pantry.shop import order_groceries, pantry_items", "from pantry import TOOL_FUNCS"
    )
    .replace(
        'TOOL_HANDLERS = {"pantry_items": pantry_items, "order_groceries": order_groceries}\n'
        'ROUTES = {"/health": pantry_items}\n',
        "",
    )
    .replace("TOOL_HANDLERS.get(", "TOOL_FUNCS.get(")
)


def test_a_schema_files_tools_run_through_a_table_of_a_modules_namespace(
    scan_files: ScanFiles,
) -> None:
    """The table is the package's own namespace (``{n: f for n, f in vars(sys.modules[
    __name__]).items() if inspect.isfunction(f)}``, the functions it star-imports): each
    name the schema file declares runs the function of that name there."""
    files = {
        "tools.json": PANTRY_SPECS,
        "pantry/loop.py": PANTRY_NAMESPACE_LOOP,
        "pantry/shop.py": PANTRY_SHOP,
        "pantry/__init__.py": PANTRY_NAMESPACE,
    }
    assert "TOOL_FUNCS.get(" in PANTRY_NAMESPACE_LOOP
    tools = {t.name: t for t in scan_files(files).project.tools}
    assert tools["pantry_items"].functions == ["pantry.shop.pantry_items"]
    assert [e.kind for e in tools["order_groceries"].effects] == ["network_write"]
