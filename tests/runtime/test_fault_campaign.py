"""A small version of bench/runtime_fault_campaign.py: real processes, SIGKILLs, a real service."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agentguard.runtime.fake_service import OrderService

from .conftest import drop_schema, fresh_schema, require_postgres

pytest.importorskip("requests")
BENCH = Path(__file__).resolve().parents[2] / "bench" / "runtime_fault_campaign.py"


@pytest.fixture(scope="module")
def campaign() -> ModuleType:
    spec = importlib.util.spec_from_file_location("runtime_fault_campaign", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["runtime_fault_campaign"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def service() -> Iterator[OrderService]:
    with OrderService() as running:
        yield running


def test_campaign_on_sqlite(campaign: ModuleType, service: OrderService, tmp_path: Path) -> None:
    report = campaign.run_campaign(
        f"sqlite:///{tmp_path / 'c.db'}", service, intents=80, workers=4, seed=11, backend="sqlite"
    )
    assert report.calls >= 80 and report.kills > 0 and report.freezes > 0
    assert (report.duplicates, report.missing, report.lost_entries) == (0, 0, 0)
    assert (report.disagreements, report.uncertain_left) == (0, 0)
    assert report.orders_created == report.intents


def test_campaign_on_postgres(campaign: ModuleType, service: OrderService) -> None:
    dsn = require_postgres()
    schema = fresh_schema()
    try:
        report = campaign.run_campaign(
            f"{dsn}?schema={schema}", service, intents=80, workers=4, seed=12, backend="postgres"
        )
    finally:
        drop_schema(dsn, schema)
    assert report.kills > 0 and report.freezes > 0
    assert (report.duplicates, report.missing, report.lost_entries) == (0, 0, 0)
    assert (report.disagreements, report.uncertain_left) == (0, 0)


def test_campaign_catches_a_lookup_that_lies(
    campaign: ModuleType, service: OrderService, tmp_path: Path
) -> None:
    report = campaign.run_campaign(
        f"sqlite:///{tmp_path / 'c.db'}",
        service,
        intents=60,
        workers=4,
        seed=13,
        backend="sqlite-blind",
        blind_lookup=True,
    )
    assert report.duplicates > 0 and not report.passed
