"""The catalogues: built-in YAML valid against the shipped JSON Schemas, and the user's
extensions from config honoured or reported as configuration errors."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.knowledge.catalog import (
    CATALOG_FILES,
    CatalogError,
    builtin_data,
    catalog_schema,
    load_catalog,
    schema_problems,
)

from .conftest import ScanFiles, write_project

RULES = Path(__file__).resolve().parent.parent / "rules"


@pytest.mark.parametrize("name", CATALOG_FILES)
def test_builtin_catalogue_matches_its_schema(name: str) -> None:
    import yaml

    document = yaml.safe_load((RULES / f"{name}.yaml").read_text(encoding="utf-8"))
    assert schema_problems(name, document) == []
    # the schema itself is a valid JSON Schema
    schema = catalog_schema(name)
    assert schema["$schema"].endswith("2020-12/schema")
    json.dumps(schema)


def test_schema_rejects_a_misspelt_sink_field() -> None:
    document = {"sinks": [{"match": "x.create", "effect": "network_write", "idempotnet": False}]}
    problems = schema_problems("effects", document)
    assert problems and problems[0][0] == "sinks.0"
    assert "idempotnet" in problems[0][1]


def test_builtin_data_has_every_catalogue() -> None:
    data = builtin_data()
    assert data["frameworks"] and data["effects"]["sinks"] and data["retries"]["decorators"]


ORDERS_SDK_TOOL = textwrap.dedent(
    '''
    from langchain_core.tools import tool
    from orders_sdk import OrdersClient

    orders_client = OrdersClient(token="t")

    @tool
    def create_order(cart_id: str, run_id: str) -> dict:
        """Create an order."""
        return orders_client.create(cart_id, idem_key=f"order:{run_id}:{cart_id}")

    @tool
    def create_order_unkeyed(cart_id: str) -> dict:
        """Create an order without a key."""
        return orders_client.create(cart_id)
    '''
)

USER_SINK = textwrap.dedent(
    """
    [tool.agentguard.effects]
    sinks = [
      {match = "orders_client.create", effect = "network_write", idempotent = false, key = {kwarg = "idem_key"}},
    ]
    """
)


def test_user_sink_with_its_key_keyword_is_honoured(scan_files: ScanFiles) -> None:
    files = {"pyproject.toml": USER_SINK, "agent.py": ORDERS_SDK_TOOL}
    result = scan_files(files)
    tools = {t.name: t for t in result.project.tools}
    keyed = tools["create_order"].effects
    assert [(e.kind, e.idempotent, e.heuristic) for e in keyed] == [("network_write", False, False)]
    assert keyed[0].key is not None and keyed[0].key.origin == "scoped"
    ag201 = [(f.tool, f.confidence.value) for f in result.findings if f.code == "AG201"]
    assert ag201 == [("create_order_unkeyed", "high")]


def test_user_sink_key_keyword_with_an_unusual_name(scan_files: ScanFiles) -> None:
    config = USER_SINK.replace('"idem_key"', '"op_ref"')
    source = ORDERS_SDK_TOOL.replace("idem_key=", "op_ref=")
    result = scan_files({"pyproject.toml": config, "agent.py": source})
    assert [f.tool for f in result.findings if f.code == "AG201"] == ["create_order_unkeyed"]


def test_without_the_user_sink_the_call_is_only_a_guess(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": ORDERS_SDK_TOOL})
    effects = next(t for t in result.project.tools if t.name == "create_order_unkeyed").effects
    assert [e.heuristic for e in effects] == [True]


def test_user_sink_wins_over_following_project_code(scan_files: ScanFiles) -> None:
    client = textwrap.dedent(
        """
        class OrdersClient:
            def create(self, cart_id: str, idem_key: str | None = None) -> dict:
                return self._transport("POST", "/orders", {"cart": cart_id}, idem_key)

            def _transport(self, *args: object) -> dict:
                return {}
        """
    )
    source = ORDERS_SDK_TOOL.replace("from orders_sdk import", "from shop.client import")
    files = {
        "pyproject.toml": USER_SINK,
        "shop/__init__.py": "",
        "shop/client.py": client,
        "agent.py": source,
    }
    result = scan_files(files)
    assert [f.tool for f in result.findings if f.code == "AG201"] == ["create_order_unkeyed"]


def test_user_reads_silence_the_heuristic(scan_files: ScanFiles) -> None:
    config = '[tool.agentguard.effects]\nreads = ["orders_sdk.OrdersClient.create"]\n'
    result = scan_files({"pyproject.toml": config, "agent.py": ORDERS_SDK_TOOL})
    assert [f.code for f in result.findings] == []


def test_user_retry_decorator(scan_files: ScanFiles) -> None:
    config = textwrap.dedent(
        """
        [tool.agentguard.retries]
        decorators = [{match = "app.resilience.retrying", library = "in-house", default_catches_all = true}]
        """
    )
    source = textwrap.dedent(
        """
        import requests
        from app.resilience import retrying

        @retrying
        def place(order: dict) -> dict:
            return requests.post("https://shop.example/orders", json=order).json()
        """
    )
    result = scan_files({"pyproject.toml": config, "agent.py": source})
    assert sorted(f.code for f in result.findings) == ["AG902", "AG903"]


def test_user_verbs_extend_the_heuristic(scan_files: ScanFiles) -> None:
    config = '[tool.agentguard.effects.verbs]\nnon_idempotent = ["enrol"]\n'
    source = textwrap.dedent(
        '''
        from langchain_core.tools import tool
        from lms_sdk import LmsClient

        lms_client = LmsClient()

        @tool
        def enrol_student(student_id: str) -> dict:
            """Enrol."""
            return lms_client.enrol_student(student_id)
        '''
    )
    result = scan_files({"pyproject.toml": config, "agent.py": source})
    assert "AG201" in {f.code for f in result.findings}
    # the built-in verbs are still there
    assert load_catalog({"effects": {"verbs": {"non_idempotent": ["enrol"]}}}).verbs["create"]


BAD_EXTENSIONS = [
    (
        '[tool.agentguard.effects]\nsinks = [{match = "x.create", effect = "writes"}]\n',
        "effects.sinks.0.effect",
    ),
    (
        '[tool.agentguard.effects]\nsinks = [{match = "x.create", effect = "write", key = {kwargs = "k"}}]\n',
        "effects.sinks.0.key",
    ),
    ('[tool.agentguard.retries]\ndecorators = [{library = "x"}]\n', "retries.decorators.0"),
    (
        '[tool.agentguard.frameworks.inhouse]\ndecorators = "not-a-list"\n',
        "frameworks.inhouse.decorators",
    ),
    ('[tool.agentguard.effects.verbs]\nwrite = ["x"]\n', "effects.verbs"),
    ('[tool.agentguard.effects.open_world]\nnoun_alone = ["widget"]\n', "effects.open_world"),
    (
        '[tool.agentguard.effects.open_world.read_commands]\nkubectl = "get"\n',
        "effects.open_world.read_commands.kubectl",
    ),
]


@pytest.mark.parametrize(("config", "key"), BAD_EXTENSIONS)
def test_bad_extension_is_a_config_error_naming_file_and_key(
    tmp_path: Path, config: str, key: str
) -> None:
    project = tmp_path / "proj"
    write_project(project, {"pyproject.toml": config, "agent.py": "x = 1\n"})
    (project / ".git").mkdir()
    result = CliRunner().invoke(app, ["check", str(project)])
    assert result.exit_code == 2, result.output
    output = "".join(result.output.split())  # the console wraps long lines
    assert "pyproject.toml" in output
    assert f"`{key}`" in output


def test_validate_extensions_raises_catalog_error() -> None:
    with pytest.raises(CatalogError, match=r"agentguard.toml: invalid configuration at `effects"):
        load_catalog({"effects": {"sinks": [{"match": 3, "effect": "write"}]}}, "agentguard.toml")


def test_user_key_holders_are_searched_for_the_key(scan_files: ScanFiles) -> None:
    # A client SDK that takes its options in an ``envelope`` dict: the key inside it counts
    # once the configuration names the holder (and only then).
    source = ORDERS_SDK_TOOL.replace(
        'idem_key=f"order:{run_id}:{cart_id}"',
        'envelope={"idempotency_key": f"order:{run_id}:{cart_id}"}',
    )
    plain = scan_files({"pyproject.toml": USER_SINK, "agent.py": source})
    assert sorted(f.tool for f in plain.findings if f.code == "AG201") == [
        "create_order",
        "create_order_unkeyed",
    ]
    config = USER_SINK + 'key_holders = ["envelope"]\n'
    extended = scan_files({"pyproject.toml": config, "agent.py": source})
    assert [f.tool for f in extended.findings if f.code == "AG201"] == ["create_order_unkeyed"]


def test_user_schema_verb_kinds_reach_the_schema_judgement(scan_files: ScanFiles) -> None:
    """``effects.schema_verbs`` in config: the user's verb names the effect a schema-only
    tool is blamed for, and the built-in kinds stay."""
    manifest = json.dumps(
        [
            {"name": "wire_funds", "inputSchema": {"type": "object"}},
            {"name": "refund_order", "inputSchema": {"type": "object"}},
        ]
    )
    config = (
        '[tool.agentguard.effects.verbs]\nnon_idempotent = ["wire"]\n'
        '[tool.agentguard.effects.schema_verbs.kinds]\npayment = ["wire"]\n'
    )
    result = scan_files({"pyproject.toml": config, "tools.json": manifest})
    messages = {f.tool: f.message for f in result.findings if f.code == "AG101"}
    assert "makes a payment" in messages["wire_funds"]
    assert "makes a payment" in messages["refund_order"]


def test_user_noun_like_verbs_keep_a_status_tool_quiet(scan_files: ScanFiles) -> None:
    manifest = json.dumps([{"name": "dispatch_status", "inputSchema": {"type": "object"}}])
    assert scan_files({"tools.json": manifest}).findings, "a dispatch verb heads the name"
    config = '[tool.agentguard.effects.schema_verbs]\nnoun_like = ["dispatch"]\n'
    result = scan_files({"pyproject.toml": config, "tools.json": manifest})
    assert result.findings == []


def test_user_generic_name_words_reach_the_post_judgement(scan_files: ScanFiles) -> None:
    """``effects.read_posts`` word lists in config: a word the user calls generic no longer
    makes a tool's name say it writes, so its neutral POST is judged by the rest (a search)."""
    source = textwrap.dedent(
        '''
        import requests
        from langchain_core.tools import tool

        @tool
        def dispatch_search(query: str) -> dict:
            """Search the catalogue."""
            return requests.post("https://internal.example/api", json={"q": query}).json()
        '''
    )
    flagged = scan_files({"agent.py": source}).findings
    assert "AG201" in {f.code for f in flagged}
    config = '[tool.agentguard.effects.read_posts]\nname_generic_words = ["dispatch"]\n'
    quiet = scan_files({"pyproject.toml": config, "agent.py": source}).findings
    assert "AG201" not in {f.code for f in quiet}
