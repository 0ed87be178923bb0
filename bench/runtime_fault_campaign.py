"""Fault campaign: randomized calls against a real order service, with the faults of the incident.

Faults: timeouts after the service committed, timeouts before anything was sent, 503s refused
before commit, worker processes SIGKILLed between ``started`` and the result (before sending and
after the commit), and pairs of workers racing on the same key. Meanwhile the ledger is frozen
again and again (its table locked for longer than the workers' bound), so claims fail with an
observation and outcomes wait in the outbox. The model in each worker is
adversarial: it calls again whenever a call did not succeed, and after the campaign a resumed
agent re-issues every intent. The order service does not deduplicate, so only the runtime stands
between a retry and a second order.

    python bench/runtime_fault_campaign.py --intents 700 --workers 8 --backend sqlite --backend postgres
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import signal
import sqlite3
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from agentguard.runtime import (
    Found,
    NotFound,
    RetryPolicy,
    Runtime,
    Status,
    current_call,
    guarded,
    open_ledger,
)
from agentguard.runtime.context import CallContext
from agentguard.runtime.fake_service import OrderService

CLIENT_TIMEOUT_S = 0.1
FAULTS = {
    "none": 0.30,
    "timeout_after_commit": 0.15,
    "timeout_before_send": 0.10,
    "reject_503": 0.10,
    "kill_before_send": 0.08,
    "kill_after_commit": 0.08,
    "race": 0.19,
}
LEASE_S = 30.0
# The workers wait at most this long for a locked ledger; the freezer holds its lock for longer.
LEDGER_BOUND_S = 0.3
FREEZE_S = 1.0
FREEZE_EVERY_S = 2.0


@dataclass
class CampaignReport:
    backend: str
    intents: int
    calls: int
    resume_calls: int
    orders_created: int
    duplicates: int
    missing: int
    lost_entries: int
    disagreements: int
    uncertain_left: int
    kills: int
    freezes: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    recovered: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not (
            self.duplicates
            or self.missing
            or self.lost_entries
            or self.disagreements
            or self.uncertain_left
        )


class _InjectedFaults:
    """Per-task faults, fired by the tool's own body on the first attempt of the task only:
    a real tool has no fault hooks, so the campaign runs the runtime's path for such tools."""

    def __init__(self) -> None:
        self.current = "none"

    def before_send(self) -> None:
        if self.current == "kill_before_send":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.current == "timeout_before_send":
            self.current = "none"
            raise requests.ConnectTimeout("injected: connect timed out")

    def after_commit(self) -> None:
        if self.current == "kill_after_commit":
            os.kill(os.getpid(), signal.SIGKILL)


def build_tool(
    runtime: Runtime,
    service_url: str,
    faults: _InjectedFaults | None = None,
    *,
    blind_lookup: bool = False,
) -> Any:
    session = requests.Session()

    def find_order(call: CallContext) -> Found | NotFound:
        if blind_lookup:  # a lookup that wrongly says "not found": the campaign must catch it
            return NotFound()
        response = session.get(
            f"{service_url}/orders", params={"idempotency_key": call.idempotency_key}, timeout=5
        )
        response.raise_for_status()
        matches = response.json()
        return Found(matches[0]) if matches else NotFound()

    @guarded(
        runtime,
        risk="write",
        idempotency="non_idempotent",
        replay="auto",
        key=lambda call: f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}",
        reconcile=find_order,
        retry=RetryPolicy(
            max_attempts=4,
            backoff_ms=5,
            max_backoff_ms=20,
            retry_on={"TRANSIENT_NETWORK", "SERVER_ERROR", "RATE_LIMIT"},
        ),
        lease_s=LEASE_S,
    )
    def create_order(cart_id: str) -> dict[str, Any]:
        """Create an order for the cart."""
        headers = {"Idempotency-Key": current_call().idempotency_key}
        if faults:
            faults.before_send()
        fault = faults.current if faults else "none"
        if fault == "timeout_after_commit":
            headers["X-Fault"] = '{"delay_after_commit_s": 0.3}'
        elif fault == "reject_503":
            headers["X-Fault"] = '{"reject_status": 503}'
        if faults and fault in ("timeout_after_commit", "reject_503"):
            faults.current = "none"
        response = session.post(
            f"{service_url}/orders",
            json={"cart_id": cart_id},
            headers=headers,
            timeout=CLIENT_TIMEOUT_S,
        )
        response.raise_for_status()
        if faults:
            faults.after_commit()
        return dict(response.json())

    return create_order


class _Freezer:
    """Holds the ledger's table locked for ``FREEZE_S`` every ``FREEZE_EVERY_S``: a migration,
    a long transaction, a stuck session. A worker's ledger operation gives up after
    ``LEDGER_BOUND_S``."""

    def __init__(self, ledger_url: str) -> None:
        self.url = ledger_url
        self.freezes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> _Freezer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        pause = 0.5  # the first freeze comes early: a short campaign meets it too
        while not self._stop.wait(pause):
            self._freeze()
            self.freezes += 1
            pause = FREEZE_EVERY_S

    def _freeze(self) -> None:
        if self.url.startswith("sqlite:///"):
            connection = sqlite3.connect(self.url[len("sqlite:///") :], isolation_level=None)
            try:
                connection.execute("BEGIN IMMEDIATE")  # every writer waits
                time.sleep(FREEZE_S)
                connection.execute("ROLLBACK")
            finally:
                connection.close()
            return
        import psycopg

        parts = urllib.parse.urlsplit(self.url)
        query = dict(urllib.parse.parse_qsl(parts.query))
        schema = query.pop("schema", "agentguard")
        dsn = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
        with psycopg.connect(dsn) as connection:  # readers and writers wait
            connection.execute(f'LOCK TABLE "{schema}".agentguard_calls IN ACCESS EXCLUSIVE MODE')
            time.sleep(FREEZE_S)
            connection.rollback()


def _bounded_ledger_options(ledger_url: str) -> dict[str, float]:
    if ledger_url.startswith("sqlite:///"):
        return {"busy_timeout_s": LEDGER_BOUND_S}
    return {"lock_timeout_s": LEDGER_BOUND_S}


def _worker(ledger_url: str, service_url: str, tasks: Any, calls: Any, blind_lookup: bool) -> None:
    runtime = Runtime(ledger=open_ledger(ledger_url, **_bounded_ledger_options(ledger_url)))
    faults = _InjectedFaults()
    create_order = build_tool(runtime, service_url, faults, blind_lookup=blind_lookup)
    while True:
        task = tasks.get()
        if task is None:
            break
        cart_id, fault = task
        faults.current = fault
        with runtime.run(run_id="campaign", user_id="u1"):
            for _ in range(3):  # the model calls again whenever a call did not succeed
                with calls.get_lock():
                    calls.value += 1
                observation = create_order(cart_id=cart_id)
                faults.current = "none"
                if observation["ok"]:
                    break
    runtime.ledger.close()


def run_campaign(
    ledger_url: str,
    service: OrderService,
    *,
    intents: int,
    workers: int,
    seed: int,
    backend: str,
    blind_lookup: bool = False,
) -> CampaignReport:
    began = time.monotonic()
    rng = random.Random(seed)
    open_ledger(ledger_url).close()  # migrate before forking; the parent holds no connection
    context = multiprocessing.get_context("fork")
    tasks = context.Queue()
    calls = context.Value("i", 0)
    plan: list[tuple[str, str]] = []
    for index in range(intents):
        fault = rng.choices(list(FAULTS), weights=list(FAULTS.values()))[0]
        plan.append((f"cart-{backend}-{seed}-{index}", fault))
    fault_counts = Counter(fault for _, fault in plan)
    for cart_id, fault in plan:
        copies = 2 if fault == "race" else 1  # two workers pick the same intent at once
        for _ in range(copies):
            tasks.put((cart_id, fault))
    for _ in range(workers):
        tasks.put(None)

    def spawn() -> Any:
        process = context.Process(
            target=_worker, args=(ledger_url, service.url, tasks, calls, blind_lookup)
        )
        process.start()
        return process

    running = [spawn() for _ in range(workers)]
    kills = 0
    with _Freezer(ledger_url) as freezer:
        while running:
            still = []
            for process in running:
                process.join(0.01)
                if process.exitcode is None:
                    still.append(process)
                elif process.exitcode == -signal.SIGKILL:
                    kills += 1
                    still.append(spawn())  # the dead worker's place and sentinel are taken over
                elif process.exitcode != 0:
                    raise RuntimeError(f"worker failed with exit code {process.exitcode}")
            running = still
    tasks.close()

    time.sleep(0.3)  # requests of killed workers still in flight reach the service
    runtime = Runtime(ledger=open_ledger(ledger_url))
    create_order = build_tool(runtime, service.url, blind_lookup=blind_lookup)
    report = runtime.recover(now=time.time() + LEASE_S + 1)
    resume_calls = 0
    with runtime.run(run_id="campaign", user_id="u1"):
        for cart_id, _ in plan:  # a resumed agent re-issues every intent
            resume_calls += 1
            create_order(cart_id=cart_id)
    runtime.recover()

    orders = [
        order
        for order in service.orders()
        if order["cart_id"].startswith(f"cart-{backend}-{seed}-")
    ]
    per_cart = Counter(order["cart_id"] for order in orders)
    ledger = runtime.ledger
    entries = {entry.idempotency_key: entry for entry in ledger.entries(tool_name="create_order")}
    keys_with_orders = {order["idempotency_key"] for order in orders}
    lost = sum(1 for key in keys_with_orders if key not in entries)
    disagreements = sum(
        1
        for key, entry in entries.items()
        if (entry.status is Status.SUCCEEDED) != (key in keys_with_orders)
    )
    unsettled = len(ledger.entries(status=[Status.UNCERTAIN, Status.STARTED]))
    ledger.close()
    return CampaignReport(
        backend=backend,
        intents=intents,
        calls=calls.value,
        resume_calls=resume_calls,
        orders_created=len(orders),
        duplicates=sum(count - 1 for count in per_cart.values() if count > 1),
        missing=sum(1 for cart_id, _ in plan if per_cart[cart_id] == 0),
        lost_entries=lost,
        disagreements=disagreements,
        uncertain_left=unsettled,
        kills=kills,
        freezes=freezer.freezes,
        faults=dict(fault_counts),
        recovered={
            "expired": report.expired,
            "succeeded": report.succeeded,
            "failed": report.failed,
            "uncertain": report.uncertain,
            "re-run (replay=auto, NotFound)": report.replayed,
        },
        seconds=round(time.monotonic() - began, 2),
    )


def print_report(report: CampaignReport) -> None:
    print(f"== fault campaign on {report.backend} ({report.seconds} s) ==")
    print(f"  calls (during campaign / on resume): {report.calls} / {report.resume_calls}")
    print(f"  intents (orders intended):           {report.intents}")
    print(f"  orders created:                      {report.orders_created}")
    print(f"  duplicates (must be 0):              {report.duplicates}")
    print(f"  intents without an order:            {report.missing}")
    print(f"  ledger entries lost (must be 0):     {report.lost_entries}")
    print(f"  ledger/service disagreements:        {report.disagreements}")
    print(f"  uncertain left after recover:        {report.uncertain_left}")
    print(f"  workers SIGKILLed:                   {report.kills}")
    print(f"  ledger frozen (lock > bound):        {report.freezes}")
    print(f"  faults planned:                      {report.faults}")
    print(f"  first recover():                     {report.recovered}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--intents",
        type=int,
        default=700,
        help="orders to place (each takes 1-3 calls, ~1.5 on average)",
    )
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--backend", action="append", choices=["sqlite", "postgres"])
    parser.add_argument(
        "--pg-dsn",
        default=os.environ.get(
            "AGENTGUARD_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    options = parser.parse_args(argv)
    backends = options.backend or ["sqlite"]
    ok = True
    with OrderService() as service, tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            if backend == "sqlite":
                url = f"sqlite:///{Path(tmp) / 'campaign.db'}"
                schema = None
            else:
                schema = f"agentguard_campaign_{os.getpid()}"
                url = _with_schema(options.pg_dsn, schema)
            try:
                report = run_campaign(
                    url,
                    service,
                    intents=options.intents,
                    workers=options.workers,
                    seed=options.seed,
                    backend=backend,
                )
            finally:
                if schema:
                    _drop_schema(options.pg_dsn, schema)
            print_report(report)
            ok = ok and report.passed
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def _with_schema(dsn: str, schema: str) -> str:
    separator = "&" if "?" in dsn else "?"
    return f"{dsn}{separator}schema={schema}"


def _drop_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    sys.exit(main())
