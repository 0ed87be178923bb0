"""The shared rules on a TypeScript MCP server, as a user sees them: `agentguard check` and
`agentguard fix` on the fixture project fixtures/ts-rules/orders-mcp."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app

from ..conftest import FIXTURES

PROJECT = FIXTURES / "ts-rules" / "orders-mcp"
runner = CliRunner()


@pytest.fixture(scope="module")
def findings() -> list[dict[str, object]]:
    result = runner.invoke(
        app, ["check", str(PROJECT), "--format", "json", "--exit-zero", "--no-cache"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return list(data["findings"] if isinstance(data, dict) else data)


def found(findings: list[dict[str, object]], code: str, file: str) -> list[int]:
    """The lines of ``code``'s findings in ``src/<file>``."""
    return sorted(
        int(str(f["line"]))
        for f in findings
        if f["code"] == code and str(f["path"]).endswith(f"src/{file}")
    )


def line_of(file: str, fragment: str) -> int:
    lines = (PROJECT / "src" / file).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if fragment in line)


def test_template_error_text_in_an_is_error_result_is_ag601(findings: list) -> None:
    assert found(findings, "AG601", "orders.ts") == [line_of("orders.ts", "Order failed: ${err}")]


def test_a_fixed_failure_message_is_not_ag601(findings: list) -> None:
    # cancel_order answers "Cancelling the order failed, please try again.": no error text
    assert line_of("orders.ts", "Cancelling the order failed") not in found(
        findings, "AG601", "orders.ts"
    )


def test_a_stringified_zod_error_is_ag601(findings: list) -> None:
    assert found(findings, "AG601", "shipping.ts") == [line_of("shipping.ts", "parsed.error")]


def test_error_text_rethrown_in_a_new_error_is_the_frameworks_default(findings: list) -> None:
    assert found(findings, "AG601", "refunds.ts") == []
    # the finding is at the tool's callback, which throws the new Error
    assert line_of("refunds.ts", "async ({ paymentId, cents })") in found(
        findings, "AG603", "refunds.ts"
    )


def test_a_timed_out_post_reported_as_failed_is_ag401(findings: list) -> None:
    lines = found(findings, "AG401", "orders.ts")
    # AbortSignal.timeout on create_order, axios' timeout option on cancel_order
    cancel = line_of("orders.ts", '"cancel_order"')
    assert len(lines) == 2
    assert lines[0] == line_of("orders.ts", "} catch (err) {") and lines[1] > cancel
    messages = [str(f["message"]) for f in findings if f["code"] == "AG401"]
    assert any("AbortSignal.timeout" in m for m in messages)
    assert any("timeout: 5000" in m for m in messages)


def test_a_timed_out_get_is_not_ag401(findings: list) -> None:
    start = line_of("orders.ts", '"order_status"')
    assert all(line < start for line in found(findings, "AG401", "orders.ts"))


def test_p_retry_around_a_post_is_reported(findings: list) -> None:
    retry = line_of("invoices.ts", "await pRetry(")
    assert retry in found(findings, "AG902", "invoices.ts")
    assert retry in found(findings, "AG903", "invoices.ts")


def test_p_retry_around_a_get_is_not(findings: list) -> None:
    read = line_of("invoices.ts", "const response = await pRetry(")
    for code in ("AG901", "AG902", "AG903", "AG904"):
        assert read not in found(findings, code, "invoices.ts")


def test_a_suppression_comment_is_honoured(findings: list) -> None:
    pickup = line_of("shipping.ts", "agentguard: ignore[AG201]")
    assert pickup not in found(findings, "AG201", "shipping.ts")
    assert found(findings, "AG002", "shipping.ts") == []


def test_test_files_are_not_checked_as_tools(findings: list) -> None:
    assert not [f for f in findings if "__tests__" in str(f["path"]) or ".spec." in str(f["path"])]


def test_fix_says_typescript_has_no_fixes_and_changes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "orders-mcp"
    shutil.copytree(PROJECT, project)
    (project / ".git").mkdir()
    before = {p: p.read_bytes() for p in project.rglob("*.ts")}
    result = runner.invoke(app, ["fix", str(project), "--write", "--unsafe-fixes"])
    assert "src/orders.ts: no automatic fix for TypeScript yet" in result.stderr
    assert {p: p.read_bytes() for p in project.rglob("*.ts")} == before
    checked = runner.invoke(app, ["check", str(project), "--no-cache", "--exit-zero"])
    assert "fix available" not in checked.stdout


def test_a_hand_written_retry_loop_around_a_post_is_reported(findings: list) -> None:
    loop = line_of("invoices.ts", "for (let attempt = 0; attempt < 3; attempt++)")
    assert loop in found(findings, "AG902", "invoices.ts")


def test_a_slack_client_retry_setting_is_reported_unless_it_sends_once(findings: list) -> None:
    assert found(findings, "AG902", "notify.ts") == [line_of("notify.ts", "await slack.chat")]


def test_error_text_a_project_helper_returns_is_ag601(findings: list) -> None:
    """``return failure(err)`` where the helper puts ``String(err.message || ...)`` into
    the result: the raw text reaches the model through the helper; a helper answering a
    fixed message does not."""
    assert found(findings, "AG601", "stock.ts") == [line_of("stock.ts", "return failure(err)")]
