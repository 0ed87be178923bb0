"""What the key rules' fixes share: where a guarded tool takes its idempotency key from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.knowledge.words import words

if TYPE_CHECKING:
    from agentguard.knowledge.catalog import Catalog
    from agentguard.project.tool_facts import Effect, ToolFacts

# The key the runtime builds for the call being made (agentguard.runtime.current_call).
KEY_FROM_RUNTIME = "current_call().idempotency_key"


def declares_create_or_get(catalog: Catalog, tool: ToolFacts, effect: Effect) -> str | None:
    """The name (the tool's, or a function's between it and the sink) that declares a
    create-or-get (``get_or_create_label``, ``ensure_list``): it returns what exists instead
    of making it again, so a repeat makes nothing new. None when no name says so."""
    functions = [effect.function.rsplit(".", 1)[-1]] if effect.function else []
    for name in (tool.name, *(h.rsplit(".", 1)[-1] for h in effect.helpers), *functions):
        named = words(name)
        for phrase in catalog.create_or_get_phrases:
            size = len(phrase)
            if any(tuple(named[i : i + size]) == phrase for i in range(len(named) - size + 1)):
                return name
    return None
