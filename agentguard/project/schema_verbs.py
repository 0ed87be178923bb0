"""What a tool known only from its schema probably does, from the verb of its name or
description (the catalogue's ``verbs`` and ``schema_verbs``). A guess, so effects made here are ``heuristic``,
at medium confidence at best, and carry an "unknown" key: a schema cannot show whether an
idempotency key is sent, so key rules (Q2) stay silent on them.
"""

from __future__ import annotations

from agentguard.diagnostics import Confidence, EvidenceStep, Location, StepKind
from agentguard.facts.module_facts import Call, Value
from agentguard.knowledge.catalog import Catalog
from agentguard.knowledge.words import words
from agentguard.project.tool_facts import Effect, KeyEvidence


def _verb(catalog: Catalog, word: str) -> tuple[str, str] | None:
    """(verb, category) for a word, allowing third-person `Creates`/`Sends`/`Pushes`."""
    for candidate in (
        word,
        word[:-1] if word.endswith("s") else "",
        word[:-2] if word.endswith("es") else "",
    ):
        if candidate and candidate in catalog.verbs:
            return candidate, catalog.verbs[candidate]
    return None


def name_verb(catalog: Catalog, name: str) -> tuple[str, str] | None:
    """The verb a tool name starts with (after an optional namespace: `github_create_issue`)."""
    parts = words(name)
    for index, word in enumerate(parts[:2]):
        found = _verb(catalog, word)
        if found is None:
            continue
        verb, category = found
        rest = set(parts[index + 1 :])
        if (
            category != "read"
            and verb in catalog.noun_like_verbs
            and (not rest or rest & catalog.read_nouns)
        ):
            return None  # `order_status`, `email`: a noun
        return found
    return None


def description_verb(catalog: Catalog, description: str) -> tuple[str, str] | None:
    parts = words(description.split(".", 1)[0])[:1]
    return _verb(catalog, parts[0]) if parts else None


def _kind(catalog: Catalog, verb: str, category: str) -> tuple[str, bool | None]:
    if category == "destructive":
        return "destructive", True
    if category == "idempotent_write":
        return "write", True
    for kind, verbs in catalog.schema_verb_kinds.items():
        if verb in verbs:
            return kind, False
    return "network_write", False


def schema_effects(catalog: Catalog, name: str, description: str, anchor: Location) -> list[Effect]:
    """The side effect a schema-only tool's name (or else description) says it has."""
    by_name = name_verb(catalog, name)
    by_description = description_verb(catalog, description) if description else None
    if by_name is not None and by_name[1] == "read":
        return []
    if by_description is not None and by_description[1] == "read" and by_name is None:
        return []
    if by_name is not None:
        verb, category = by_name
        source = f"its name `{name}`"
        confidence = Confidence.LOW if category == "idempotent_write" else Confidence.MEDIUM
    elif by_description is not None:
        verb, category = by_description
        source = f'its description "{description.split(".", 1)[0][:60]}"'
        confidence = Confidence.LOW
    else:
        return []
    kind, idempotent = _kind(catalog, verb, category)
    call = Call(callee=f"schema:{name}", text=name, method=name, receiver=None, span=anchor.span)
    return [
        Effect(
            kind=kind,
            idempotent=idempotent,
            remote=True,
            sink=source,
            site=anchor,
            call=call,
            chain=(EvidenceStep(StepKind.DECLARATION, anchor, subject=source, detail=verb),),
            confidence=confidence,
            method=None,
            key=KeyEvidence(Value(kind="other", text=""), "unknown", "not visible in a schema"),
            heuristic=True,
            function="",
        )
    ]
