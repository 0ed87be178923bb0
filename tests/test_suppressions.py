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


def ag002(result: object) -> list[tuple[int, str]]:
    return [
        (f.span.line, f.message)
        for f in result.findings  # type: ignore[attr-defined]
        if f.code == "AG002"
    ]


def test_each_unknown_or_unused_code_of_a_comment_is_named(scan_files: ScanFiles) -> None:
    comment = "  # agentguard: ignore[AG201,AG999,AG202] keyed upstream"
    result = scan_files({"agent.py": render(line_comment=comment)})
    assert "AG201" not in codes(result)  # the code that is used still suppresses
    assert ag002(result) == [
        (
            7,
            "Suppression partly unused: nothing here is reported for AG202; "
            "unknown code AG999 (no rule has it)",
        )
    ]


def test_a_mistyped_code_is_called_unknown_not_unused(scan_files: ScanFiles) -> None:
    result = scan_files({"agent.py": render(line_comment="  # agentguard: ignore[AG2O1]")})
    assert "AG201" in codes(result)
    assert ag002(result) == [
        (7, "Suppression of an unknown code: unknown code AG2O1 (no rule has it)")
    ]


def test_codes_without_brackets_suppress_nothing_and_are_reported(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"agent.py": render(def_comment="  # agentguard: ignore AG201")})
    assert {"AG101", "AG201"} <= codes(result)
    assert result.suppressed == []
    assert ag002(result) == [
        (
            5,
            "Suppression not understood: rule codes go in brackets, "
            "`# agentguard: ignore[AG201]`; this comment suppresses nothing",
        )
    ]


def test_an_unused_bare_comment_is_reported_as_covering_every_rule(
    scan_files: ScanFiles,
) -> None:
    result = scan_files(
        {
            "agent.py": render()
            + "\n\ndef lookup() -> None:  # agentguard: ignore legacy\n    pass\n"
        }
    )
    assert (10, "Unused suppression: nothing here is reported for every rule") in ag002(result)


def test_the_fix_removes_only_the_unused_and_unknown_codes(scan_files: ScanFiles) -> None:
    from typer.testing import CliRunner

    from agentguard.cli import app

    comment = "  # agentguard: ignore[AG201,AG999,AG202] keyed upstream"
    result = scan_files({"agent.py": render(line_comment=comment)})
    done = CliRunner().invoke(app, ["fix", str(result.root), "--select", "AG002"])
    assert done.exit_code == 1
    assert "+    return requests.post(" in done.stdout
    assert "# agentguard: ignore[AG201] keyed upstream\n" in done.stdout


def test_a_comment_in_the_body_covers_its_own_line_only(scan_files: ScanFiles) -> None:
    # The tool's AG101 sits on the def line; a comment on the line below it, inside the body,
    # must not cover the whole function the way a comment on the def line does.
    tool = render().replace(
        '    """Create an order."""\n', '    """Create an order."""  # agentguard: ignore\n'
    )
    result = scan_files({"agent.py": tool})
    assert {"AG101", "AG201"} <= codes(result)
    assert ag002(result) == [(6, "Unused suppression: nothing here is reported for every rule")]
    on_the_body_line = render(line_comment="  # agentguard: ignore[AG101,AG201] reviewed")
    result = scan_files({"agent.py": on_the_body_line})
    assert "AG101" in codes(result) and "AG201" not in codes(result)
