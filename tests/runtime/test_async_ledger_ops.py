"""An async guarded call never stalls its event loop on a ledger that waits on a disk or a
server, and does not pay a thread hop per ledger write on one that never waits."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from agentguard.runtime import MemoryLedger, Runtime, guarded


class _RecordingLedger(MemoryLedger):
    """The in-memory ledger, noting which thread performs each claim; ``delay_s`` per claim."""

    def __init__(self, *, blocks: bool, delay_s: float = 0.0) -> None:
        super().__init__()
        self.blocks = blocks
        self.delay_s = delay_s
        self.claim_threads: list[int] = []

    def claim(self, *args: Any, **kwargs: Any) -> Any:
        self.claim_threads.append(threading.get_ident())
        time.sleep(self.delay_s)
        return super().claim(*args, **kwargs)


def _ticks_during_one_call(ledger: _RecordingLedger) -> tuple[int, dict[str, Any]]:
    runtime = Runtime(ledger=ledger)

    @guarded(runtime, risk="write")
    async def send_note(text: str) -> str:
        return text

    async def agent() -> tuple[int, dict[str, Any]]:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.ensure_future(ticker())
        await asyncio.sleep(0)
        async with runtime.run(run_id="r1"):
            observation = await send_note(text="hello")
        stop.set()
        await task
        return ticks, observation

    return asyncio.run(agent())


def test_a_ledger_that_waits_is_written_off_the_event_loop() -> None:
    ledger = _RecordingLedger(blocks=True, delay_s=0.3)
    ticks, observation = _ticks_during_one_call(ledger)
    assert observation["ok"], observation
    assert ticks >= 10, f"the event loop stalled during the claim ({ticks} ticks in 0.3 s)"
    assert ledger.claim_threads and ledger.claim_threads[0] != threading.main_thread().ident


def test_a_ledger_that_never_waits_is_written_on_the_event_loop_thread() -> None:
    ledger = _RecordingLedger(blocks=False)
    _, observation = _ticks_during_one_call(ledger)
    assert observation["ok"], observation
    assert ledger.claim_threads == [threading.main_thread().ident]
