"""The open-world knowledge of the effect catalogue (``rules/effects.yaml: open_world``):
the verb table a call no catalogue entry knows is judged by, and its precision guards."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentguard.knowledge.matcher import Matcher
from agentguard.knowledge.words import words


@dataclass(frozen=True)
class OpenWorld:
    """The ``open_world`` section of the effect catalogue, with the verb table."""

    verbs: dict[str, str]
    nouns_alone: frozenset[str]
    terminals: frozenset[str]
    object_writes: frozenset[str]
    reads: Matcher[bool]
    client_roots: re.Pattern[str]
    credential_words: frozenset[str]
    credential_holders: frozenset[str]
    cache_words: frozenset[str]
    log_words: frozenset[str]
    read_commands: dict[str, frozenset[str]]
    no_effect: frozenset[str]
    derived_writes: frozenset[str]
    object_factories: frozenset[str]
    # first words of longer method names that write on a handed-out object
    derived_write_prefixes: frozenset[str] = frozenset()
    memory_buffers: frozenset[str] = frozenset()
    buffer_saves: frozenset[str] = frozenset()
    # methods that only convert what a call answered (``response.to_dict()``)
    answer_conversions: frozenset[str] = frozenset()
    # HTTP method words an operation name may start with before its own verb
    method_prefixes: frozenset[str] = frozenset()
    # packages whose objects live in the process (``pandas``: a data frame)
    in_process_packages: frozenset[str] = frozenset()
    # keys of a batch request's body listing its operations, one key per item
    batch_request_keys: tuple[str, ...] = ()
    # functions of a module named after the operation they run (``messages_send.sync``)
    operation_module_calls: frozenset[str] = frozenset()
    # verbs that, on an imported module itself, configure the library (``set_lang``)
    module_settings: frozenset[str] = frozenset()
    # words after which a name says what the call is about (``weather_at_place``)
    prepositions: frozenset[str] = frozenset()

    def verb_class(self, name: str) -> str | None:
        """The class of the first real verb of ``name``: read, non_idempotent,
        idempotent_write, destructive, or None. A word that is also a noun counts only
        with an object after it (``place_order`` places); alone it names what is looked up
        (``maps.place(id)``, ``jira.issue(key)``); before another verb it names what that
        verb acts on (``issue_update`` updates an issue, ``order_status`` reads one). Words
        after a preposition name what the call is about (``weather_at_place``), no verb."""
        if name in self.no_effect:
            return "read"  # ``client.close()``, ``conn.commit()``: plumbing, no effect
        parts = words(name, identifier=True)
        head = parts[0] if parts else ""
        if head not in self.verbs and head.startswith("a") and head[1:] in self.verbs:
            # the async twin of a method (``apredict``, ``asend``, ``aadd_texts``), as
            # LangChain names them: the verb after the ``a``
            parts = [head[1:], *parts[1:]]
        if len(parts) > 1 and parts[0] in self.method_prefixes and parts[1] in self.verbs:
            # ``post_set_task_state``: an operation named after its HTTP method, then its verb
            parts = parts[1:]
        if len(parts) == 1 and parts[0] in self.nouns_alone:
            return "read"  # a thing looked up by its name: ``jira.issue(key)``
        for index, part in enumerate(parts):
            if index and part in self.prepositions:
                return None  # ``weather_at_place``: what follows names a thing, not a verb
            found = self.verbs.get(part)
            if found is None:
                continue
            if part in self.nouns_alone and any(p in self.verbs for p in parts[index + 1 :]):
                continue  # ``issue_delete``: the object, then the verb
            return found
        return None


def load_open_world(effects: dict[str, Any], base_verbs: dict[str, str]) -> OpenWorld:
    """The ``open_world`` section of the effect catalogue, over the base verb table."""
    section = effects.get("open_world") or {}
    verbs = dict(base_verbs)
    for category, listed in (section.get("verbs") or {}).items():
        for verb in listed or []:
            verbs[verb] = category
    reads: Matcher[bool] = Matcher()
    reads.add(list(section.get("reads") or []), True)
    commands = {
        program: frozenset(subcommands or [])
        for program, subcommands in (section.get("read_commands") or {}).items()
    }
    return OpenWorld(
        verbs=verbs,
        nouns_alone=frozenset(section.get("nouns_alone") or []),
        terminals=frozenset(section.get("builder_terminals") or []),
        object_writes=frozenset(section.get("object_writes") or []),
        reads=reads,
        client_roots=re.compile(section.get("client_roots") or "$^"),
        credential_words=frozenset(section.get("credential_words") or []),
        credential_holders=frozenset(section.get("credential_holders") or []),
        cache_words=frozenset(section.get("cache_words") or []),
        log_words=frozenset(section.get("log_words") or []),
        read_commands=commands,
        no_effect=frozenset(section.get("no_effect") or []),
        derived_writes=frozenset(section.get("derived_writes") or []),
        derived_write_prefixes=frozenset(section.get("derived_write_prefixes") or []),
        object_factories=frozenset(section.get("object_factories") or []),
        memory_buffers=frozenset(section.get("memory_buffers") or []),
        buffer_saves=frozenset(section.get("buffer_saves") or []),
        answer_conversions=frozenset(section.get("answer_conversions") or []),
        method_prefixes=frozenset(section.get("method_prefixes") or []),
        in_process_packages=frozenset(section.get("in_process_packages") or []),
        batch_request_keys=tuple(section.get("batch_request_keys") or []),
        operation_module_calls=frozenset(section.get("operation_module_calls") or []),
        module_settings=frozenset(section.get("module_settings") or []),
        prepositions=frozenset(section.get("prepositions") or []),
    )
