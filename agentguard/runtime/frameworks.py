"""The run a framework's own context names, for a guarded tool called with no run open.

A framework that calls the tool itself knows which conversation the call belongs to:
LangChain and LangGraph carry the invocation's config (``configurable.thread_id``) in a
contextvar, the OpenAI Agents SDK its current trace (``group_id``, else the run's trace id).
That names the run, so the model's retry within it lands on the same key, without a
``runtime.run`` written around the framework.

Nothing is imported here: a framework is read only if the agent already imported it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from agentguard.runtime.context import RunContext


def _langchain_run() -> RunContext | None:
    config_module = sys.modules.get("langchain_core.runnables.config")
    variable = getattr(config_module, "var_child_runnable_config", None)
    if variable is None:
        return None
    config = variable.get() or {}
    configurable = config.get("configurable") or {}
    thread = configurable.get("thread_id")
    if thread is None or thread == "":
        return None
    user = configurable.get("user_id")
    return RunContext(
        run_id=f"langgraph:{thread}",
        user_id=None if user is None else str(user),
        step_id=_text(configurable.get("checkpoint_ns")),
    )


def _openai_agents_run() -> RunContext | None:
    tracing = sys.modules.get("agents.tracing")
    current_trace = getattr(tracing, "get_current_trace", None)
    if current_trace is None:
        return None
    try:
        trace = current_trace()
    except Exception:  # a tracing set-up we cannot read: no run named
        return None
    if trace is None:
        return None
    group = getattr(trace, "group_id", None)
    trace_id = getattr(trace, "trace_id", None)
    # tracing switched off gives a no-op trace whose id is the same for every run
    if isinstance(group, str) and group:
        return RunContext(run_id=f"openai-agents:{group}")
    if isinstance(trace_id, str) and trace_id.startswith("trace_"):
        return RunContext(run_id=f"openai-agents:{trace_id}")
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_SOURCES: tuple[Callable[[], RunContext | None], ...] = (_langchain_run, _openai_agents_run)


def framework_run() -> RunContext | None:
    """The run named by the context of a framework calling the tool now, if any."""
    for source in _SOURCES:
        run = source()
        if run is not None:
            return run
    return None
