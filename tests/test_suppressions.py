"""Inline suppressions, per-file ignores and AG002."""

from __future__ import annotations

from .conftest import ScanFiles

TOOL = (
    "import requests\n"
    "from langchain_core.tools import tool\n\n"
    "@tool{decorator_comment}\n"
    "def create_order(cart_id: str) -> dict:{def_comment}\n"
    '    """Create an order."""\n'
    '    return requests.post("https://shop.example/orders", json={{"cart": cart_id}}).json(){line_comment}\n'
)


def render(decorator_comment: str = "", def_comment: str = "", line_comment: str = "") -> str:
    return TOOL.format(
        decorator_comment=decorator_comment, def_comment=def_comment, line_comment=line_comment
    )


def codes(result: object) -> set[str]:
    return {f.code for f in result.findings}  # type: ignore[attr-defined]


def test_comment_on_the_line_suppresses_that_finding(scan_files: ScanFiles) -> None:
    result = scan_files(
        {"agent.py": render(line_comment="  # agentguard: ignore[AG201] keyed upstream")}
    )
    assert "AG201" not in codes(result)
    assert "AG101" in codes(result)
    assert [f.code for f in result.suppressed] == ["AG201"]


def test_comment_on_the_def_or_decorator_line_covers_the_function(scan_files: ScanFiles) -> None:
    for kwargs in (
        {"def_comment": "  # agentguard: ignore[AG2]"},
        {"decorator_comment": "  # agentguard: ignore[AG201,AG101]"},
    ):
        result = scan_files({"agent.py": render(**kwargs)})
        assert "AG201" not in codes(result), kwargs


def test_bare_ignore_suppresses_every_rule_on_the_line(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": render(line_comment="  # agentguard: ignore")})
    assert "AG201" not in codes(result)


def test_unused_suppression_is_reported(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": render(line_comment="  # agentguard: ignore[AG903]")})
    unused = [f for f in result.findings if f.code == "AG002"]
    assert len(unused) == 1 and unused[0].span.line == 7


def test_per_file_ignores(scan_files: ScanFiles) -> None:
    result = scan_files(
        {"scripts/agent.py": render(), "app/agent.py": render()},
        per_file_ignores={"scripts/*": ["AG2", "AG1"]},
    )
    paths = {f.path for f in result.findings if f.code == "AG201"}
    assert paths == {"app/agent.py"}


def test_suppressed_findings_do_not_fail_but_are_counted(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": render(def_comment="  # agentguard: ignore reviewed")})
    assert result.findings == []
    assert {"AG101", "AG201"} <= {f.code for f in result.suppressed}
