"""agentguard on durable execution engines: steps that never send an effect twice.

``guard_step`` is the generic form (it finds the engine at call time); each engine has a module
of its own that composes the engine's decorator with it: :mod:`agentguard.engines.langgraph`
(``guarded_task``), :mod:`agentguard.engines.dbos` (``guarded_step``),
:mod:`agentguard.engines.temporal` (``guarded_activity``). The engines are optional extras
(``pip install "agentguard[dbos]"``, ``[temporal]``, ``[langgraph]``); this package imports
none of them.
"""

from __future__ import annotations

from agentguard.engines.base import (
    DEFAULT_ENGINE_LEASE_S,
    CallInFlight,
    EngineRun,
    OutcomeUncertain,
    engine_run,
    guard_step,
    is_in_flight,
)

__all__ = [
    "DEFAULT_ENGINE_LEASE_S",
    "CallInFlight",
    "EngineRun",
    "OutcomeUncertain",
    "engine_run",
    "guard_step",
    "is_in_flight",
]
