# ruff: noqa: RUF009  (catalogue keys are declared by helpers returning dataclass fields)
"""The open-world knowledge of the effect catalogue (``rules/effects.yaml: open_world``):
the verb table a call no catalogue entry knows is judged by, and its precision guards. Each
key of the section is one field of ``OpenWorld``, declared once (``catalog_keys``)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from agentguard.knowledge.catalog_keys import (
    IDENTIFIERS,
    REGEX,
    STRINGS,
    VERB_TABLE,
    WORDS,
    frozen,
    key,
    matcher,
    ordered,
    pattern,
)
from agentguard.knowledge.matcher import Matcher
from agentguard.knowledge.words import words


def _verbs_as_listed(raw: Any) -> dict[str, str]:
    """Verb -> category; a word listed twice takes the category listed later in the table
    (the user's extension merged into the built-in one keeps the built-in order)."""
    return {verb: category for category, listed in (raw or {}).items() for verb in listed or []}


def _counts(raw: Any) -> dict[str, int]:
    return dict(raw or {})


def _read_commands(raw: Any) -> dict[str, frozenset[str]]:
    return {program: frozen(subcommands) for program, subcommands in (raw or {}).items()}


@dataclass(frozen=True)
class OpenWorld:
    """The ``open_world`` section of the effect catalogue, with the verb table. Its schema
    lists the keys in the order of their fields."""

    # the effect catalogue's verbs (``effects.verbs``), which this section's verbs join
    base_verbs: dict[str, str] = field(repr=False)
    added_verbs: dict[str, str] = key("verbs", VERB_TABLE, _verbs_as_listed)
    nouns_alone: frozenset[str] = key("nouns_alone", WORDS, frozen)
    # words after which a name says what the call is about (``weather_at_place``)
    prepositions: frozenset[str] = key("prepositions", WORDS, frozen)
    terminals: frozenset[str] = key("builder_terminals", IDENTIFIERS, frozen)
    # functions of a module named after the operation they run (``messages_send.sync``)
    operation_module_calls: frozenset[str] = key("operation_module_calls", IDENTIFIERS, frozen)
    # verbs that, on an imported module itself, configure the library (``set_lang``)
    module_settings: frozenset[str] = key("module_settings", WORDS, frozen)
    object_writes: frozenset[str] = key("object_writes", IDENTIFIERS, frozen)
    no_effect: frozenset[str] = key("no_effect", IDENTIFIERS, frozen)
    derived_writes: frozenset[str] = key("derived_writes", IDENTIFIERS, frozen)
    # container methods that take the item they add or remove: with no positional argument
    # they are some other object's method
    item_taking_methods: frozenset[str] = key("item_taking_methods", IDENTIFIERS, frozen)
    # first words of longer method names that write on a handed-out object
    derived_write_prefixes: frozenset[str] = key("derived_write_prefixes", WORDS, frozen)
    # keys of a batch request's body listing its operations, one key per item
    batch_request_keys: tuple[str, ...] = key("batch_request_keys", IDENTIFIERS, ordered)
    object_factories: frozenset[str] = key("object_factories", WORDS, frozen)
    memory_buffers: frozenset[str] = key(
        "memory_buffers",
        STRINGS,
        frozen,
        description="Classes of in-memory files: a save() into one writes nothing outside "
        "the process.",
    )
    buffer_saves: frozenset[str] = key("buffer_saves", IDENTIFIERS, frozen)
    # methods that only convert what a call answered (``response.to_dict()``)
    answer_conversions: frozenset[str] = key("answer_conversions", IDENTIFIERS, frozen)
    # HTTP method words an operation name may start with before its own verb
    method_prefixes: frozenset[str] = key("method_prefixes", WORDS, frozen)
    # packages whose objects live in the process (``pandas``: a data frame)
    in_process_packages: frozenset[str] = key(
        "in_process_packages",
        STRINGS,
        frozen,
        description="Packages whose objects live in the process: a write verb on what one "
        "of their calls returned changes nothing outside it.",
    )
    # classes whose objects keep their data in the process or in local files (a FAISS index)
    local_stores: frozenset[str] = key(
        "local_stores",
        STRINGS,
        frozen,
        description="Classes whose objects keep their data in the process or in local "
        "files (a FAISS vector index, an in-memory store): a write to one, or to an object "
        "of a project class built on one, is a local write, not a remote one.",
    )
    client_roots: re.Pattern[str] = key("client_roots", REGEX, pattern)
    reads: Matcher[bool] = key("reads", STRINGS, matcher)
    credential_words: frozenset[str] = key("credential_words", WORDS, frozen)
    credential_phrases: frozenset[tuple[str, ...]] = key(
        "credential_phrases",
        STRINGS,
        lambda raw: frozenset(tuple(str(phrase).split()) for phrase in raw or []),
        description="Words that together name a credential though neither does alone "
        "('api key'): a function or path so named writing locally is credential plumbing.",
    )
    credential_holders: frozenset[str] = key("credential_holders", WORDS, frozen)
    cache_words: frozenset[str] = key("cache_words", WORDS, frozen)
    log_words: frozenset[str] = key("log_words", WORDS, frozen)
    temp_file_makers: frozenset[str] = key(
        "temp_file_makers",
        STRINGS,
        frozen,
        description="Calls that make a new temporary file or folder: removing what one made "
        "in the same function is its clean-up, nothing the tool deletes.",
    )
    discard_files: frozenset[str] = key(
        "discard_files",
        STRINGS,
        frozen,
        description="Files that discard what is written to them (`os.devnull`, as a name or "
        "its path): opening one to write changes nothing.",
    )
    telemetry_words: frozenset[str] = key("telemetry_words", WORDS, frozen)
    lease_set_methods: frozenset[str] = key("lease_set_methods", IDENTIFIERS, frozen)
    lease_if_absent_options: frozenset[str] = key("lease_if_absent_options", IDENTIFIERS, frozen)
    expiry_options: frozenset[str] = key(
        "expiry_options",
        IDENTIFIERS,
        frozen,
        description="Options that make a key-value write expire: set only if absent and "
        "expiring, the write claims a lease, not a side effect.",
    )
    js_value_methods: frozenset[str] = key(
        "js_value_methods",
        IDENTIFIERS,
        frozen,
        description="Methods JavaScript's own strings, numbers, arrays and dates have that "
        "compute a new value: called on anything in TypeScript or JavaScript, they stay in "
        "the process.",
    )
    python_value_methods: frozenset[str] = key(
        "python_value_methods",
        IDENTIFIERS,
        frozen,
        description="Methods only Python's own strings have, computing a new value or "
        "answering a question about it: called on anything in Python, they stay in the "
        "process.",
    )
    python_string_literal_methods: dict[str, int] = key(
        "python_string_literal_methods",
        {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
        _counts,
        description="Methods Python's strings share with clients and containers, with how "
        "many string literals the string's own method takes at least: called with string "
        "literals only (a trailing count aside), they stay in the process.",
    )
    read_commands: dict[str, frozenset[str]] = key(
        "read_commands",
        {"type": "object", "additionalProperties": STRINGS},
        _read_commands,
        description="Programs whose literal subcommand only reads (kubectl: [get, describe]).",
    )
    read_programs: frozenset[str] = key(
        "read_programs",
        STRINGS,
        frozen,
        description="Programs that only read whatever options they are given (grep, ls): "
        "run literally, with no shell redirection, they change nothing.",
    )
    read_unless: dict[str, frozenset[str]] = key(
        "read_unless",
        {"type": "object", "additionalProperties": STRINGS},
        _read_commands,
        description="Programs that only read unless given one of their options listed here, "
        "the ones their manual says change something (dmesg: [--clear, -C]).",
    )
    output_format_options: frozenset[str] = key(
        "output_format_options",
        STRINGS,
        frozen,
        description="Command-line options that choose the format a command prints its "
        "answer in (--format, -o): given one of output_formats, the command is run to be read.",
    )
    output_formats: frozenset[str] = key(
        "output_formats",
        STRINGS,
        frozen,
        description="Machine-readable formats a command prints (json, yaml, csv), named after "
        "an output_format_options option or as a flag of their own (--json).",
    )
    # methods that send one message over a channel (a socket, a websocket, a queue)
    channel_sends: frozenset[str] = key("channel_sends", IDENTIFIERS, frozen)
    # channel sends that also write a file or fill the process's own queue: a value a
    # caller hands them is no command message
    channel_shared_sends: frozenset[str] = key("channel_shared_sends", IDENTIFIERS, frozen)
    # keys of a message sent over a channel that name the operation it asks for
    channel_operation_keys: tuple[str, ...] = key("channel_operation_keys", IDENTIFIERS, ordered)
    # decorators that keep a function's answer: a function of no arguments so decorated
    # runs once, what it does is set-up
    setup_decorators: frozenset[str] = key("setup_decorators", STRINGS, frozen)
    # keys naming a kind of message, an operation only when a verb and its object
    channel_kind_keys: tuple[str, ...] = key("channel_kind_keys", IDENTIFIERS, ordered)
    # operations that run what they name (``run_cell``): unknown, never a read
    channel_run_verbs: frozenset[str] = key("channel_run_verbs", IDENTIFIERS, frozen)
    # text naming an endpoint on this machine (localhost, a unix socket, a child's stdin)
    local_endpoints: re.Pattern[str] = key("local_endpoints", REGEX, pattern)
    # every verb: the effect catalogue's, with this section's over them
    verbs: dict[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "verbs", {**self.base_verbs, **self.added_verbs})

    def runs_what_it_names(self, operation: str) -> bool:
        """Whether an operation's first word runs code or a command chosen elsewhere
        (``run_cell``, ``exec_script``): its effect is unknown, never a read."""
        parts = words(operation, identifier=True)
        return bool(parts) and parts[0] in self.channel_run_verbs

    def names_a_credential(self, parts: list[str]) -> bool:
        """Whether words in order name a credential: one of ``credential_words``
        (``token``), or two that together do (``api key`` of ``getApiKey``)."""
        if set(parts) & self.credential_words:
            return True
        said = {(word,) for word in parts} | set(itertools.pairwise(parts))
        return bool(said & self.credential_phrases)

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
