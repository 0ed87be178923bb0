"""The type a guarded tool declares it returns: the observation, field by field.

A framework that derives a tool's output schema from its return annotation (an MCP server's
``outputSchema``) so advertises what the model really receives, and validates each observation
against it, instead of the bare function's return type, which the guarded tool never returns
as such (its value travels in ``result``).
"""

from typing import Any

try:  # pydantic reads a TypedDict's fields only from typing_extensions' before Python 3.12
    from typing_extensions import TypedDict
except ImportError:  # pragma: no cover - typing_extensions comes with the CLI's dependencies
    from typing import TypedDict


class Observation(TypedDict):
    ok: bool
    code: str | None
    content: str
    result: Any
    metadata: dict[str, Any]


# One paragraph without line breaks: frameworks show it as the schema's description.
Observation.__doc__ = (
    "What a guarded tool returns (agentguard.observation/v1). `ok`: the call took effect. "
    "`code`: the error code otherwise. `content`: plain words on what happened and whether to "
    "call again. `result`: the tool's return value on success. `metadata`: the call's status, "
    "key, attempts and next action."
)
