"""DBOS on the local PostgreSQL: a step killed after its effect is re-run by recovery, and a
step retried after a read timeout sends again. Each test runs both ways, so the duplicate is
shown, not assumed: ``@DBOS.step`` alone places two orders, the adapter one. Every test has a
fresh DBOS system schema and ledger schema, dropped after."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="DBOS is not installed (extra: dbos)")

from agentguard.runtime import PostgresLedger, Status
from agentguard.runtime.fake_service import OrderService
from tests.runtime.conftest import drop_schema, fresh_schema, require_postgres

APP = Path(__file__).with_name("dbos_app.py")


@pytest.fixture
def service() -> Iterator[OrderService]:
    with OrderService() as running:
        yield running


@pytest.fixture
def database() -> Iterator[tuple[str, str, str]]:
    dsn = require_postgres()
    system_schema, ledger_schema = fresh_schema(), fresh_schema()
    yield dsn, system_schema, ledger_schema
    drop_schema(dsn, system_schema)
    drop_schema(dsn, ledger_schema)


def run_app(
    phase: str, guard: str, service: OrderService, database: tuple[str, str, str], *extra: str
) -> Any:
    done = subprocess.run(
        [sys.executable, str(APP), phase, guard, service.url, *database, *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if phase.startswith("start"):
        assert done.returncode == -signal.SIGKILL, done.stderr
        return None
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def ledger_statuses(database: tuple[str, str, str]) -> list[str]:
    dsn, _system, schema = database
    ledger = PostgresLedger(dsn, schema=schema)
    (entry,) = ledger.entries()
    return [event.to_status for event in ledger.events(entry.call_id)]


def test_a_plain_step_killed_after_its_effect_places_a_second_order_on_recovery(
    service: OrderService, database: tuple[str, str, str]
) -> None:
    run_app("start", "plain", service, database)
    assert len(service.orders()) == 1
    result = run_app("resume", "plain", service, database)
    assert result["cart_id"] == "cart-7"
    assert len(service.orders()) == 2  # recovery re-ran the step: the duplicate


def test_a_guarded_step_killed_after_its_effect_is_reconciled_on_recovery(
    service: OrderService, database: tuple[str, str, str]
) -> None:
    run_app("start", "guarded", service, database, "lookup")
    observation = run_app("resume", "guarded", service, database, "lookup")
    assert len(service.orders()) == 1
    assert observation["ok"] is True
    assert observation["result"]["order_id"] == service.orders()[0]["order_id"]
    assert observation["metadata"]["run_id"] == "dbos:order-workflow-1"
    assert ledger_statuses(database)[-3:] == ["started", "uncertain", "succeeded"]


def test_a_guarded_step_without_a_lookup_is_not_run_again_and_says_uncertain(
    service: OrderService, database: tuple[str, str, str]
) -> None:
    run_app("start", "guarded", service, database)
    observation = run_app("resume", "guarded", service, database)
    assert len(service.orders()) == 1
    assert observation["code"] == "SIDE_EFFECT_UNCERTAIN"
    assert ledger_statuses(database)[-1] == Status.UNCERTAIN.value


@pytest.mark.parametrize("guard", ["plain", "guarded"])
def test_a_read_timeout_after_the_send_with_step_retries_on(
    guard: str, service: OrderService, database: tuple[str, str, str]
) -> None:
    service.queue_faults({"delay_after_commit_s": 3})
    result = run_app("timeout", guard, service, database, "lookup")
    if guard == "plain":
        assert len(service.orders()) == 2  # DBOS retried the step, which sent again
        assert result["cart_id"] == "cart-7"
    else:
        assert len(service.orders()) == 1
        assert result["ok"] is True
        assert result["metadata"]["reconciled"] is True


@pytest.mark.parametrize("replay", ["auto", "never"])
def test_a_guarded_step_killed_before_the_send_is_settled_by_its_replay_policy(
    replay: str, service: OrderService, database: tuple[str, str, str]
) -> None:
    options = ("lookup", "auto") if replay == "auto" else ("lookup",)
    run_app("start-before", "guarded", service, database, *options)
    assert service.orders() == []
    observation = run_app("resume", "guarded", service, database, *options)
    if replay == "auto":  # the lookup found nothing: the order is placed, once
        assert len(service.orders()) == 1
        assert observation["ok"] is True
    else:  # found nothing, may not replay: the agent is told it was not placed
        assert service.orders() == []
        assert observation["ok"] is False
        assert observation["metadata"]["status"] == "failed"


@pytest.mark.parametrize("guard", ["plain", "guarded"])
def test_a_step_meeting_the_same_call_in_flight(
    guard: str, service: OrderService, database: tuple[str, str, str]
) -> None:
    result = run_app("poll", guard, service, database, "lookup")
    if guard == "plain":
        assert len(service.orders()) == 2  # both sent
    else:  # the step raised CallInFlight; DBOS's retries polled until the first call ended
        assert len(service.orders()) == 1
        assert result["ok"] is True and result["metadata"]["replayed"] is True
