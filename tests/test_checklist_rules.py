"""Behaviour of the checklist rules (Q3-Q8) beyond the per-rule examples."""

from __future__ import annotations

from agentguard.diagnostics import Severity

from .conftest import ScanFiles

READ_AND_WRITE = (
    "import httpx\n"
    "from langchain_core.tools import tool\n\n"
    "@tool\n"
    "def order_status(order_id: str) -> str:\n"
    '    """Look an order up."""\n'
    "    try:\n"
    '        return httpx.get(f"https://shop.example/orders/{order_id}").json()["status"]\n'
    "    except httpx.ReadTimeout as exc:\n"
    '        return f"Timed out ({exc}), please retry"\n\n'
    "@tool\n"
    "def create_order(cart_id: str) -> str:\n"
    '    """Create an order."""\n'
    "    try:\n"
    '        return httpx.post("https://shop.example/orders", json={"cart": cart_id}).json()["id"]\n'
    "    except httpx.ReadTimeout as exc:\n"
    '        return f"Timed out ({exc}), please retry"\n'
)


def test_read_only_tools_are_never_blamed_for_timeouts_ledgers_or_evals(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"agent.py": READ_AND_WRITE})
    by_tool = {(f.code, f.tool) for f in result.findings}
    for code in ("AG301", "AG401", "AG601", "AG801"):
        assert (code, "create_order") in by_tool, code
        if code != "AG601":  # raw text is reported for every tool (a warning when it reads)
            assert (code, "order_status") not in by_tool, code


def test_raw_error_text_in_a_read_tool_is_a_warning_and_in_a_write_tool_an_error(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"agent.py": READ_AND_WRITE}, select=("AG601",))
    severities = {f.tool: f.severity for f in result.findings}
    assert severities == {"order_status": Severity.WARNING, "create_order": Severity.ERROR}


def test_timeout_finding_names_the_sink_and_the_exception(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": READ_AND_WRITE}, select=("AG401",))
    (finding,) = result.findings
    assert "httpx.ReadTimeout" in finding.message and "httpx.post" in finding.message
    assert finding.span.line == 17


def test_ledger_functions_from_config_count_as_records(scan_files: ScanFiles) -> None:
    files = {
        "pyproject.toml": '[tool.agentguard]\nledger-functions = ["app.audit.record"]\n',
        "app/__init__.py": "",
        "app/audit.py": "def record(*args: object, **kwargs: object) -> None: ...\n",
        "agent.py": (
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from app.audit import record\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    record("create_order", cart_id)\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
        ),
    }
    codes = {f.code for f in scan_files(files).findings}
    assert "AG301" not in codes
    assert "AG701" in codes  # the record stores neither an input hash nor a key
    files["pyproject.toml"] = "[tool.agentguard]\n"
    assert "AG301" in {f.code for f in scan_files(files).findings}


def test_the_checklist_catalogue_is_checked_against_its_schema() -> None:
    from agentguard.knowledge.catalog import _builtin_file, schema_problems

    assert schema_problems("checklist", _builtin_file("checklist")) == []
    broken = {"version": 1, "timeouts": {"exceptions": "requests.Timeout", "typo": []}}
    keys = {key for key, _ in schema_problems("checklist", broken)}
    assert keys == {"timeouts", "timeouts.exceptions"}
