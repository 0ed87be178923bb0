"""What the key rules' fixes share: where a guarded tool takes its idempotency key from."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentguard.knowledge.words import words

if TYPE_CHECKING:
    from agentguard.facts.module_facts import Value
    from agentguard.knowledge.catalog import Catalog
    from agentguard.project.project_model import ProjectModel
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


_COPULAS = frozenset({"is", "are", "be", "stays", "remains"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


def describes_dedupe(project: ProjectModel, tool: ToolFacts) -> str | None:
    """The sentence of what the model is told about the tool (its description, the
    registration's ``description`` option, its function's docstring) that says the service
    deduplicates what it makes ("The record is idempotent per search ID"), or None. A
    sentence that negates it before the word ("not idempotent", "non-idempotent") says the
    opposite."""
    catalog = project.catalog
    texts = [tool.description, _literal_text(tool.options.get("description"))]
    entry = project.functions.get(tool.functions[0]) if tool.functions else None
    if entry is not None:
        texts.append(entry[0].docstring or "")
    for text in texts:
        for sentence in _SENTENCE_END.split(text):
            named = words(sentence)
            for index, word in enumerate(named):
                if word in catalog.dedupe_claims:
                    # said of the whole call ("the record is idempotent"), not of one of
                    # its operations ("ensure (idempotent)"), and not negated
                    stated = set(named[max(0, index - 2) : index]) & _COPULAS
                    if stated and not set(named[:index]) & catalog.dedupe_negations:
                        return sentence.strip()
                    break
    return None


def _literal_text(value: Value | None) -> str:
    """The text a string, or the literal parts of a template or f-string, spell."""
    if value is None:
        return ""
    if value.kind == "fstring":
        return "".join(part.string() or " " for part in value.parts)
    return value.string() or ""
