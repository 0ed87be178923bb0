"""The run a framework's own context names, for a guarded tool called with no run open.

A framework that calls the tool itself knows which conversation the call belongs to:
LangChain and LangGraph carry the invocation's config (``configurable.thread_id``) in a
contextvar, the OpenAI Agents SDK its current trace (``group_id``, else the run's trace id),
Pydantic AI its current ``RunContext`` (``conversation_id``). An MCP server hands a tool that
asks for it (``ctx: Context``) the request's context, whose transport session names the run
(mcp 1.x also keeps it in a contextvar). That names the run, so the model's retry within it
lands on the same key, without a ``runtime.run`` written around the framework.

Nothing is imported here: a framework is read only if the agent already imported it.
"""

from __future__ import annotations

import inspect
import sys
import typing
import uuid
import weakref
from collections.abc import Callable, Iterable
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


def _pydantic_ai_run() -> RunContext | None:
    run_context = sys.modules.get("pydantic_ai._run_context")
    current = getattr(run_context, "get_current_run_context", None)
    return None if current is None else _pydantic_ai_run_from(current())


def _pydantic_ai_run_from(context: Any) -> RunContext | None:
    # the conversation spans the agent runs that share its history: the model's retry in a
    # later run of it is still the same request
    name = _text(getattr(context, "conversation_id", None)) or _text(
        getattr(context, "run_id", None)
    )
    return None if name is None else RunContext(run_id=f"pydantic-ai:{name}")


def _mcp_v1_run() -> RunContext | None:
    lowlevel = sys.modules.get("mcp.server.lowlevel.server")
    variable = getattr(lowlevel, "request_ctx", None)  # mcp 1.x; 2.x passes it to handlers
    return None if variable is None else _mcp_run_from(variable.get(None))


# A name for each MCP session object the transport gives no id: one per client connection
# where the SDK keeps a session per connection (1.x), one per request where it builds one per
# request (2.x, whose protocol is stateless), so no two clients ever share a run.
_SESSION_RUNS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _mcp_run_from(context: Any) -> RunContext | None:
    if context is None:
        return None
    try:  # a tool's Context wraps the request's; outside a request it has none and raises
        request_context = getattr(context, "request_context", context)
    except Exception:
        return None
    session = getattr(request_context, "session", None)
    headers = getattr(getattr(request_context, "request", None), "headers", None)
    session_id = _text(headers.get("mcp-session-id")) if headers is not None else None
    if session_id is not None:
        name = session_id
    elif session is not None:
        try:
            name = _SESSION_RUNS.setdefault(session, "session_" + uuid.uuid4().hex)
        except TypeError:  # a session that cannot be referenced weakly: a run of its own
            name = "session_" + uuid.uuid4().hex
    else:
        return None
    return RunContext(run_id=f"mcp:{name}", user_id=_mcp_client())


def _mcp_client() -> str | None:
    """The authenticated client of this MCP request, when the server checks tokens."""
    auth_context = sys.modules.get("mcp.server.auth.middleware.auth_context")
    access_token = getattr(auth_context, "get_access_token", None)
    token = None if access_token is None else access_token()
    return _text(getattr(token, "client_id", None))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_SOURCES: tuple[Callable[[], RunContext | None], ...] = (
    _langchain_run,
    _openai_agents_run,
    _pydantic_ai_run,
    _mcp_v1_run,
)


def framework_run(contexts: Iterable[Any] = ()) -> RunContext | None:
    """The run named by the context of a framework calling the tool now, if any: first the
    context objects the framework passed the tool (``contexts``), then ambient ones."""
    for context in contexts:
        run = _run_from_argument(context)
        if run is not None:
            return run
    for source in _SOURCES:
        run = source()
        if run is not None:
            return run
    return None


# ---- context parameters: filled by the framework, not by the model ------------------------

# MCP's Context (a tool's), ServerRequestContext (2.x's handlers') and RequestContext (1.x's),
# Pydantic AI's RunContext
_CONTEXT_CLASSES = frozenset({"Context", "ServerRequestContext", "RequestContext", "RunContext"})
_CONTEXT_PACKAGES = {"mcp": _mcp_run_from, "pydantic_ai": _pydantic_ai_run_from}


def context_parameters(signature: inspect.Signature) -> frozenset[str]:
    """Parameters whose annotation names a framework's context class: the framework fills them
    with its context object, which is no argument of the request (never hashed nor stored).
    A string annotation is judged by its name; each call checks the value is the framework's."""
    return frozenset(
        name
        for name, parameter in signature.parameters.items()
        if _names_a_context(parameter.annotation)
    )


def _names_a_context(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.split("[", 1)[0].rsplit(".", 1)[-1].strip() in _CONTEXT_CLASSES
    for candidate in (annotation, *typing.get_args(annotation)):
        kind = typing.get_origin(candidate) or candidate
        if getattr(kind, "__name__", None) in _CONTEXT_CLASSES and _package(kind) is not None:
            return True
    return False


def is_framework_context(value: Any) -> bool:
    kind = type(value)
    return kind.__name__ in _CONTEXT_CLASSES and _package(kind) is not None


def _package(kind: Any) -> str | None:
    package = str(getattr(kind, "__module__", "")).partition(".")[0]
    return package if package in _CONTEXT_PACKAGES else None


def _run_from_argument(context: Any) -> RunContext | None:
    package = _package(type(context))
    return None if package is None else _CONTEXT_PACKAGES[package](context)
