"""`agentguard ledger list|show|find|resolve` against a real ledger file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.ledger_cli import ledger_app
from agentguard.runtime import Runtime, SQLiteLedger, guarded
from agentguard.runtime.testing import FaultInjector

runner = CliRunner()


@pytest.fixture
def populated(tmp_path: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    ledger = SQLiteLedger(tmp_path / "ledger.db")
    runtime = Runtime(ledger=ledger)

    @guarded(runtime, risk="write", key=("user_id", "cart_id"))
    def create_order(cart_id: str, card_token: str) -> str:
        return f"order-{cart_id}"

    FaultInjector(runtime).timeout_after_apply("create_order")
    with runtime.run(run_id="run-1", user_id="u1"):
        uncertain = create_order(cart_id="c1", card_token="tok_secret")
        done = create_order(cart_id="c2", card_token="tok_secret")
    ledger.close()
    return f"sqlite:///{tmp_path / 'ledger.db'}", uncertain, done


def test_list_filters_by_status_in_json(populated: Any) -> None:
    url, uncertain, _ = populated
    result = runner.invoke(
        ledger_app, ["list", "--ledger", url, "--status", "uncertain", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [row["call_id"] for row in rows] == [uncertain["metadata"]["call_id"]]
    assert rows[0]["args"]["card_token"] == "[REDACTED]"


def test_list_renders_a_table(populated: Any) -> None:
    url, _, _ = populated
    result = runner.invoke(
        ledger_app, ["list", "--ledger", url, "--run", "run-1"], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0
    assert "uncertain" in result.output and "succeeded" in result.output


def test_show_prints_the_transitions(populated: Any) -> None:
    url, uncertain, _ = populated
    call_id = uncertain["metadata"]["call_id"]
    result = runner.invoke(ledger_app, ["show", call_id, "--ledger", url, "--format", "json"])
    assert result.exit_code == 0
    shown = json.loads(result.output)
    assert shown["entry"]["status"] == "uncertain"
    assert [e["to_status"] for e in shown["events"]] == ["planned", "started", "uncertain"]
    missing = runner.invoke(ledger_app, ["show", "call_nope", "--ledger", url])
    assert missing.exit_code == 1


def test_find_by_input_hash_and_key(populated: Any) -> None:
    url, uncertain, done = populated
    by_hash = runner.invoke(
        ledger_app,
        ["find", "--input-hash", done["metadata"]["input_hash"], "-l", url, "-f", "json"],
    )
    assert [row["call_id"] for row in json.loads(by_hash.output)] == [done["metadata"]["call_id"]]
    by_key = runner.invoke(
        ledger_app,
        ["find", "--key", uncertain["metadata"]["idempotency_key"], "-l", url, "-f", "json"],
    )
    assert json.loads(by_key.output)[0]["status"] == "uncertain"
    assert runner.invoke(ledger_app, ["find", "-l", url]).exit_code == 2


def test_resolve_records_a_human_decision(populated: Any) -> None:
    url, uncertain, done = populated
    call_id = uncertain["metadata"]["call_id"]
    result = runner.invoke(
        ledger_app,
        ["resolve", call_id, "--as", "succeeded", "--note", "order 991 seen in admin", "-l", url],
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(runner.invoke(ledger_app, ["show", call_id, "-l", url, "-f", "json"]).output)
    assert shown["entry"]["status"] == "succeeded"
    assert shown["events"][-1]["actor"] == "human"
    assert shown["events"][-1]["detail"] == "order 991 seen in admin"
    again = runner.invoke(
        ledger_app,
        ["resolve", done["metadata"]["call_id"], "--as", "failed", "--note", "x", "-l", url],
    )
    assert again.exit_code == 1
    assert "only uncertain" in again.output


@pytest.mark.parametrize("command", [["list"], ["show", "call-1"]])
def test_a_missing_ledger_file_is_an_error_and_is_not_created(
    tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "elsewhere" / "ledger.db"
    result = runner.invoke(ledger_app, [*command, "--ledger", f"sqlite:///{missing}"])
    assert result.exit_code == 2
    assert f"no ledger at {missing}" in result.output
    assert not missing.exists() and not missing.parent.exists()


def test_an_unknown_status_lists_the_valid_ones(populated: Any) -> None:
    url, _, _ = populated
    result = runner.invoke(ledger_app, ["list", "--ledger", url, "--status", "bogus"])
    assert result.exit_code == 2
    for status in ("planned", "approved", "started", "succeeded", "failed", "uncertain"):
        assert status in result.output


@pytest.mark.parametrize("command", [["list"], ["show", "call-1"], ["find", "--key", "k1"]])
def test_a_file_without_a_ledger_is_an_error_and_is_left_as_it_was(
    tmp_path: Path, command: list[str]
) -> None:
    import sqlite3

    other = tmp_path / "app.db"  # the wrong file: the application's own database
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    before = other.read_bytes()
    result = runner.invoke(ledger_app, [*command, "--ledger", f"sqlite:///{other}"])
    assert result.exit_code == 2, result.output
    assert str(other) in result.output and "no ledger" in result.output
    assert "postgresql" not in result.output  # the hint names the SQLite form
    assert other.read_bytes() == before
    with sqlite3.connect(other) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert tables == {"users"}


def test_a_sqlite_ledger_opened_read_only_refuses_a_write(populated: Any) -> None:
    from agentguard.runtime import open_ledger

    url, uncertain, _ = populated
    ledger = open_ledger(url, read_only=True)
    entry = ledger.get(uncertain["metadata"]["call_id"])
    assert entry is not None
    with pytest.raises(Exception, match="readonly"):
        ledger.note(entry, "someone", "a note")
    ledger.close()
    again = open_ledger(url)
    assert again.events(entry.call_id)[-1].actor != "someone"
    again.close()
