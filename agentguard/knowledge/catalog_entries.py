# ruff: noqa: RUF009  (catalogue keys are declared by helpers returning dataclass fields)
"""The entries of the catalogues (a framework's tool forms, a side-effect sink, a retry
construct...), each key declared once on its field (see ``catalog_keys``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from agentguard.knowledge.catalog_keys import (
    BOOLEAN,
    IDENTIFIER,
    NAMES,
    NONEMPTY_TEXT,
    REGEX,
    STRINGS,
    TEXT,
    default_to,
    entry,
    entry_schema,
    flag,
    frozen,
    key,
    maybe_flag,
    ordered,
    record,
    table,
    text,
    text_or_empty,
)
from agentguard.knowledge.catalog_keys import key as catalog_key

# where a sink's or retry's setting sits in a call: a position and/or a keyword
ARGREF = "argref"


@dataclass(frozen=True)
class ArgRef:
    """Where a value sits in a call: positional index (negative from the last argument, as
    a callback written last) and/or keyword name; ``field`` then names a field of the
    options object found there (TypeScript's ``tool({execute})``, Stripe's
    ``{idempotencyKey}``)."""

    arg: int | None = key("arg", {"type": "integer"}, lambda raw: raw)
    kwarg: tuple[str, ...] = key("kwarg", NAMES, ordered)
    field: str | None = key("field", TEXT, text)


@dataclass(frozen=True)
class ToolForm:
    framework: str
    form: str  # decorator | factory | base_class | registry | agent_tool | agent_runner
    # | retrieval_tool
    function: ArgRef | None = entry(
        "function", ArgRef, name=ARGREF, optional=True, only_in=("factory",)
    )
    also: ArgRef | None = entry("also", ArgRef, name=ARGREF, optional=True, only_in=("factory",))
    name: ArgRef | None = entry(
        "name",
        ArgRef,
        name=ARGREF,
        optional=True,
        only_in=("factory", "agent_tool", "retrieval_tool"),
    )
    tools: ArgRef | None = entry("tools", ArgRef, name=ARGREF, optional=True, only_in=("registry",))
    # The agents a call hands over (a manager's ``managed_agents=[...]``, the agent an
    # ``AgentTool(agent=...)`` wraps or a runner runs); without it, the agent whose method
    # is called (``research.as_tool(...)``).
    agents: ArgRef | None = entry(
        "agents",
        ArgRef,
        name=ARGREF,
        optional=True,
        only_in=("registry", "agent_tool", "agent_runner"),
    )
    # The keyword naming the agent a registry builds: a manager's model calls it so.
    agent_name: ArgRef | None = entry(
        "agent_name", ArgRef, name=ARGREF, optional=True, only_in=("registry",)
    )
    # The methods of the agent a registry builds that run it: its model, then its tools.
    runs: tuple[str, ...] = key("runs", NAMES, ordered, only_in=("registry",))
    # A TypeScript registration's options object (``registerTool(name, {annotations,
    # description}, cb)``): its fields count as the registration's keywords.
    options: ArgRef | None = entry(
        "options", ArgRef, name=ARGREF, optional=True, only_in=("factory",)
    )
    # Where MCP annotations are handed when not inside the options (``server.tool(name,
    # description, schema, annotations, cb)``): the argument before the callback.
    annotations: ArgRef | None = entry(
        "annotations", ArgRef, name=ARGREF, optional=True, only_in=("factory",)
    )
    methods: tuple[str, ...] = key("methods", NAMES, ordered, only_in=("factory", "base_class"))
    methods_from_attribute: str | None = key(
        "methods_from_attribute", TEXT, text, only_in=("base_class",)
    )
    # class attributes a duck-typed base needs (``name``, ``description``) to count
    requires_attributes: tuple[str, ...] = key(
        "requires_attributes", NAMES, ordered, only_in=("base_class",)
    )


@record
class Lowlevel:
    """An MCP SDK's low-level server: its classes, the tool type its handlers list, and the
    methods registering a handler."""

    server: tuple[str, ...] = key("server", NAMES, ordered)
    tool_type: tuple[str, ...] = key("tool_type", NAMES, ordered)
    handlers: tuple[str, ...] = key("handlers", NAMES, ordered)


# a tool form -> the key of its entries naming the callables or classes it applies to
TOOL_FORM_NAMES = {
    "factory": "callee",
    "base_class": "qualname",
    "registry": "callee",
    "agent_tool": "callee",
    "agent_runner": "callee",
    "retrieval_tool": "callee",
}


def _tool_forms(at: str, form: str) -> tuple[Mapping[str, Any], ...]:
    """A framework's entries of one tool form, as written: the catalogue makes each a
    ``ToolForm`` of its framework when it is built."""
    item = entry_schema(ToolForm, form, match=TOOL_FORM_NAMES[form], closed=False)
    return key(at, {"type": "array", "items": item}, lambda raw: tuple(raw or ()))


@record
class Framework:
    """How one agent framework declares tools (``rules/frameworks.yaml: frameworks``). Its
    tool forms are named by the framework when the catalogue is built."""

    decorators: tuple[str, ...] = key(
        "decorators", {"type": "array", "items": NONEMPTY_TEXT}, ordered
    )
    factories: tuple[Mapping[str, Any], ...] = _tool_forms("factories", "factory")
    base_classes: tuple[Mapping[str, Any], ...] = _tool_forms("base_classes", "base_class")
    registries: tuple[Mapping[str, Any], ...] = _tool_forms("registries", "registry")
    # calls that offer an agent to another agent's model as a tool
    agent_tools: tuple[Mapping[str, Any], ...] = _tool_forms("agent_tools", "agent_tool")
    # functions that run the agent they are handed (``Runner.run(agent, input)``)
    agent_runners: tuple[Mapping[str, Any], ...] = _tool_forms("agent_runners", "agent_runner")
    # calls that make a tool of a retriever or a query engine: a search over an index
    retrieval_tools: tuple[Mapping[str, Any], ...] = _tool_forms(
        "retrieval_tools", "retrieval_tool"
    )
    # read from the catalogue's data by the structural discovery
    structural_bases: Mapping[str, Any] | None = key(
        "structural_bases",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "name_attributes": NAMES,
                "declaration_attributes": NAMES,
                "schema_attributes": NAMES,
                "schema_builders": NAMES,
                "action_lists": NAMES,
                "min_subclasses": {"type": "integer", "minimum": 1},
            },
        },
        lambda raw: raw,
    )
    metadata_kwarg: str | None = key("metadata_kwarg", TEXT, text)
    annotations_kwarg: str | None = key("annotations_kwarg", TEXT, text)
    plugin_entries: frozenset[str] = key(
        "plugin_entries",
        {"type": "array", "items": IDENTIFIER},
        frozen,
        description="Names of the one module-level function that is the tool of a plugin "
        "module (a module-level MANIFEST dict next to it).",
    )
    decorated_calls: frozenset[str] = key(
        "decorated_calls",
        {"type": "array", "items": IDENTIFIER},
        frozen,
        description="Members of the tool object the framework's decorator returns in place of "
        "the function that run the function (``search.invoke({...})``, ``send.fn(...)``).",
    )
    lowlevel: Lowlevel = entry("lowlevel", Lowlevel, closed=False)


SINK_EFFECTS = [
    "write", "network_write", "destructive", "exec", "payment", "message", "unknown",
    "http", "sql", "file_open", "graphql",
]  # fmt: skip


@dataclass(frozen=True)
class Sink:
    # ``catalog_key``: the field ``key`` hides the helper's usual name in this class body
    effect: str = catalog_key(
        "effect",
        {"enum": SINK_EFFECTS},
        text_or_empty,
        required=True,
        description="http/sql/file_open/graphql are judged from the call's arguments "
        "(method, statement, mode, document).",
    )
    idempotent: bool | None = catalog_key("idempotent", {"type": ["boolean", "null"]}, maybe_flag)
    method: str | None = catalog_key("method", TEXT, text)
    method_from: Mapping[str, Any] | None = catalog_key(
        "method_from",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "arg": {"type": "integer"},
                "kwarg": NAMES,
                "field": NONEMPTY_TEXT,
                "request_data": BOOLEAN,
                "route": BOOLEAN,
                "tagged": BOOLEAN,
            },
        },
        lambda raw: raw,
        description="Where the call names its method: a position (negative from the last "
        "argument) and/or keyword, a field of the options object there (`fetch(url, "
        '{method})`); `route`: the method starts the route string (`"POST /repos"`); '
        "`tagged`: a sink only when called as a tagged template (sql`...`), a factory "
        "otherwise.",
    )
    key: Mapping[str, Any] = catalog_key(
        "key",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "header": NONEMPTY_TEXT,
                "kwarg": NAMES,
                "option": NONEMPTY_TEXT,
                "arg": {"type": "integer"},
                "field": NONEMPTY_TEXT,
                "sql_conflict": BOOLEAN,
            },
        },
        table,
        description="How the sink accepts an idempotency key.",
    )
    remote: bool | None = catalog_key("remote", BOOLEAN, maybe_flag)
    confidence: str = catalog_key(
        "confidence", {"enum": ["high", "medium", "low"]}, default_to("high")
    )
    receiver_hint: str | None = catalog_key("receiver_hint", {"enum": ["task", "sql"]}, text)
    ecosystem: str = catalog_key(
        "ecosystem",
        {"enum": ["python", "npm"]},
        default_to("python"),
        description="The language whose calls the entry judges: Python (the default), or "
        "JavaScript and TypeScript (`npm`: npm packages, Node built-ins and the globals), so "
        "that a Python glob (`*.delay`) never judges a JavaScript call, nor the reverse.",
    )
    pattern: str = ""
    user: bool = False  # declared in the user's config: wins over following project code
    # A sink only when each of these keyword arguments is written with this literal value
    # (``NamedTemporaryFile(delete=False)`` leaves a file behind; by default it is removed).
    only_with: Mapping[str, Any] = catalog_key(
        "only_with",
        {
            "type": "object",
            "additionalProperties": {"type": ["boolean", "string", "number", "null"]},
        },
        table,
        description="A sink only when each keyword argument is written with this literal "
        "value (NamedTemporaryFile(delete=False)).",
    )


@dataclass(frozen=True)
class AttemptKeys:
    """The keys of a client's retry setting (botocore's ``retries`` dict) that make it send
    once: ``total`` counts every attempt; ``retries`` counts the retries, or every attempt
    when ``mode`` is one of ``counting_modes``."""

    total: str | None = key("total", TEXT, text)
    retries: str | None = key("retries", TEXT, text)
    mode: str | None = key("mode", TEXT, text)
    counting_modes: frozenset[str] = key("counting_modes", STRINGS, frozen)


CONSTRUCT = ("construct",)  # a decorator, wrapper, HTTP retry, global or node retry
CLIENT = ("client",)  # a client's retry setting


@dataclass(frozen=True)
class RetryConstruct:
    kind: str  # decorator | wrapper | http_retry | global | node_retry | client
    library: str = key("library", TEXT, text_or_empty)
    on: ArgRef | None = entry("exceptions", ArgRef, name=ARGREF, optional=True, only_in=CONSTRUCT)
    default_catches_all: bool = key("default_catches_all", BOOLEAN, flag, only_in=CONSTRUCT)
    methods_kwarg: tuple[str, ...] = key("methods_kwarg", NAMES, ordered, only_in=CONSTRUCT)
    default_methods: tuple[str, ...] = key("default_methods", NAMES, ordered, only_in=CONSTRUCT)
    scope_kwarg: str | None = key("scope_kwarg", TEXT, text, only_in=CONSTRUCT)
    # client_retry: where the client takes its setting object, the classes of that object,
    # and the method that mounts it (``session.mount``), when mounted.
    setting: ArgRef | None = entry(
        "setting", ArgRef, name=ARGREF, optional=True, only_in=CLIENT, required=CLIENT
    )
    holders: tuple[str, ...] = key("holders", STRINGS, ordered, only_in=CLIENT, required=CLIENT)
    requires_kwarg: str | None = key("requires_kwarg", TEXT, text, required=CLIENT)
    mount: str | None = key("mount", TEXT, text, only_in=CLIENT)
    attempts: AttemptKeys = entry(
        "attempts",
        AttemptKeys,
        only_in=CLIENT,
        description="The keys of the setting that make it send once: the total attempts, "
        "the retries (every attempt in the counting modes), and the mode key.",
    )
    # node_retry: where the retried node sits in the call; node classes that run every tool
    node: ArgRef | None = entry("node", ArgRef, name=ARGREF, optional=True, only_in=CONSTRUCT)
    tool_nodes: tuple[str, ...] = key("tool_nodes", STRINGS, ordered, only_in=CONSTRUCT)
    what: str = key("what", TEXT, text_or_empty)


def _status_flags(raw: Any) -> dict[str, tuple[int, int]]:
    return {name: (int(low), int(high)) for name, (low, high) in (raw or {}).items()}


@dataclass(frozen=True)
class ResponseStatus:
    """How a hand-written retry loop reads a response's HTTP status
    (``retries.response_status``): the attributes holding it, a pattern for the names of
    locals holding one, boolean flags true for a range of statuses (inclusive), and the
    methods that raise for a 4xx or 5xx status."""

    attributes: frozenset[str] = key("attributes", STRINGS, frozen)
    name_pattern: str = key("name_pattern", REGEX, lambda raw: raw or "$^")
    flags: Mapping[str, tuple[int, int]] = key(
        "flags",
        {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {"type": "integer", "minimum": 100, "maximum": 599},
                "minItems": 2,
                "maxItems": 2,
            },
        },
        _status_flags,
    )
    raises_on_error: frozenset[str] = key("raises_on_error", STRINGS, frozen)

    @cached_property
    def names(self) -> re.Pattern[str]:
        return re.compile(self.name_pattern)

    @cached_property
    def read_attributes(self) -> frozenset[str]:
        """Every attribute that reads a status: the status, a flag, a raising method."""
        return self.attributes | frozenset(self.flags) | self.raises_on_error


@dataclass(frozen=True)
class ContextCarriers:
    """The part of the catalogue the per-file extractor reads (``RunContext[Deps]`` makes
    ``ctx.deps`` a ``Deps``; how a response's status is read): small, so that it travels
    to the parse workers with each task."""

    # carrier class -> attribute
    attributes: Mapping[str, str] = key(
        "attributes",
        {
            "type": "object",
            "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
            "additionalProperties": IDENTIFIER,
        },
        table,
    )
    packages: frozenset[str] = key("packages", {"type": "array", "items": IDENTIFIER}, frozen)
    # ``retries.response_status``, set when the catalogue is built
    status: ResponseStatus = ResponseStatus()

    @cached_property
    def carried(self) -> frozenset[str]:
        """Every attribute a carrier holds the dependencies in."""
        return frozenset(self.attributes.values())
