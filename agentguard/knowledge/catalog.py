"""The YAML catalogues in the top-level ``rules/`` folder (installed as the package
``agentguard.catalogues``): framework tool forms, side-effect sinks and retry constructs,
plus the user's extensions from config.

Each catalogue key is one field of ``Catalog`` (or of an entry in ``catalog_entries``, or of
the checklist's ``Knowledge``), declared once with its place, schema and loader
(``catalog_keys``): the catalogue is loaded from those fields, and the schemas under
``agentguard/data/`` are generated from them (``catalog_schemas``)."""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import yaml

from agentguard.config import ConfigError
from agentguard.knowledge.catalog_entries import (
    TOOL_FORM_NAMES,
    ArgRef,
    AttemptKeys,
    ContextCarriers,
    Framework,
    ResponseStatus,
    RetryConstruct,
    Sink,
    ToolForm,
)
from agentguard.knowledge.catalog_keys import (
    HEADERS,
    IDENTIFIER,
    IDENTIFIERS,
    NONEMPTY_TEXT,
    QUALNAMES,
    REGEX,
    STRINGS,
    VERB_CATEGORIES,
    VERB_TABLE,
    WORDS,
    Placed,
    as_list,
    deferred_entry,
    entries,
    entry,
    entry_schema,
    frozen,
    key,
    listed,
    load_entry,
    load_keys,
    matcher,
    mutable,
    names_pattern,
    ordered,
    pattern,
    phrases_pattern,
    table,
    unique,
)
from agentguard.knowledge.matcher import Matcher, NameIndex, normalise
from agentguard.knowledge.open_world import OpenWorld

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from agentguard.knowledge.checklist import Knowledge

__all__ = [
    "ArgRef",
    "AttemptKeys",
    "Catalog",
    "CatalogError",
    "ContextCarriers",
    "Matcher",
    "NameIndex",
    "ResponseStatus",
    "RetryConstruct",
    "Sink",
    "ToolForm",
    "load_catalog",
    "normalise",
]

USER_MARK = "_user"  # set on entries merged from the user's config (never in YAML files)

SNAKE_WORDS = {"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9_]+$"}}


def _verb_table(raw: Any) -> dict[str, str]:
    """Verb -> category; a word listed under two categories takes the later of
    ``VERB_CATEGORIES`` (a write over a read)."""
    raw = raw or {}
    return {verb: category for category in VERB_CATEGORIES for verb in raw.get(category) or []}


def _word_sets(raw: Any) -> dict[str, frozenset[str]]:
    return {name: frozen(words) for name, words in (raw or {}).items()}


def _name_tuples(raw: Any) -> dict[str, tuple[str, ...]]:
    return {name: ordered(names) for name, names in (raw or {}).items()}


def _named_lists(names: list[str]) -> dict[str, Any]:
    """A table from one of ``names`` to a list of identifiers."""
    return {
        "type": "object",
        "propertyNames": {"enum": names},
        "additionalProperties": {"type": "array", "items": IDENTIFIER},
    }


def _callable_runners(raw: Any) -> Matcher[tuple[int | None, str | None]]:
    found: Matcher[tuple[int | None, str | None]] = Matcher()
    for runner in raw or []:
        found.add(as_list(runner.get("match")), (runner.get("arg"), runner.get("kwarg")))
    return found


def _calls_schema(*, position: bool) -> dict[str, Any]:
    """Calls matched by name, each with the keywords whose values the catalogue follows,
    and when ``position``, the place the value may be passed first at instead (``arg``)."""
    properties: dict[str, Any] = {
        "match": {"type": "array", "minItems": 1, "items": NONEMPTY_TEXT},
        "kwargs": {"type": "array", "minItems": 1, "items": IDENTIFIER},
    }
    if position:
        properties["arg"] = {"type": "integer", "minimum": 0}
    return {
        "type": "array",
        "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["match", "kwargs"],
            "properties": properties,
        },
    }


_KEYWORD_CALLS = _calls_schema(position=False)
_VALUE_CALLS = _calls_schema(position=True)


def _value_calls(raw: Any) -> Matcher[tuple[tuple[str, ...], int | None]]:
    found: Matcher[tuple[tuple[str, ...], int | None]] = Matcher()
    for sink in raw or []:
        found.add(as_list(sink.get("match")), (tuple(as_list(sink.get("kwargs"))), sink.get("arg")))
    return found


def _spec_sinks(raw: Any) -> Matcher[tuple[str, ...]]:
    found: Matcher[tuple[str, ...]] = Matcher()
    for sink in raw or []:
        found.add(as_list(sink.get("match")), tuple(as_list(sink.get("kwargs"))))
    return found


def _dispatch_positions(raw: Any) -> Matcher[int]:
    found: Matcher[int] = Matcher()
    for dispatch, position in (raw or {}).items():
        found.add([dispatch], int(position))
    return found


def _frameworks(raw: Any) -> dict[str, Framework]:
    return {name: load_entry(Framework, spec or {}) for name, spec in (raw or {}).items()}


def _sink_context(patterns: tuple[str, ...], raw: Mapping[str, Any]) -> dict[str, Any]:
    return {"pattern": patterns[0], "user": bool(raw.get(USER_MARK))}


def _constructs(
    at: str, kind: str, variant: str = "construct"
) -> tuple[Placed[RetryConstruct], ...]:
    """The retry constructs of one list of the retry catalogue."""
    return entries(
        at,
        RetryConstruct,
        name=variant,
        variant=variant,
        context=lambda patterns, raw: {"kind": kind},
    )


# Descriptions of the catalogues' tables, by their place in the catalogue data.
SECTIONS = {
    "tool_functions": "What every framework's tools share: parameters the framework fills "
    "in, decorators that declare a tool's policy, MCP annotation names.",
    "effects.schema_verbs": "A tool known only from its schema: the effect kind each "
    "non-idempotent verb of its name names, and the verbs that head a noun unless no read "
    "noun follows.",
    "effects.not_sinks": "Calls that are no sink whatever their method's verb: containers, "
    "loggers, in-process queues.",
    "effects.databases": "SQL drivers: embedded ones write a local file; receivers that run "
    "statements.",
    "effects.read_modify_write": "A write that sends back what it read with something "
    "appended: the methods that append in place, and the calls that only reshape a value "
    "in hand.",
    "effects.read_posts": "POSTs that only read: path words, hosts and body keys that make a "
    "POST a question.",
    "effects.write_guards": "What keeps a create from repeating without a key: precondition "
    "headers, and names that declare a create-or-get.",
    "effects.repeat_safe_posts": "POSTs that repeat safely: an action setting a state on an "
    "existing resource, or a link of existing things.",
    "effects.keys": "Idempotency keys: the keyword and header names a key is passed by (any "
    "case), calls whose result is new on every call or hashes its input, name parts that "
    "scope a key, and body-key parts naming what a write identifies.",
    "effects.sql": "The first word of a SQL statement that writes, and of one that only reads; "
    "what makes a statement an upsert, and the schema objects a `CREATE ... IF NOT EXISTS` "
    "sets up.",
}


class Catalog:
    """The catalogues, one typed field per key (its place in the catalogue data first)."""

    # ---- rules/frameworks.yaml
    frameworks: dict[str, Framework] = key(
        "frameworks",
        {"type": "object", "additionalProperties": {"$ref": "#/$defs/framework"}},
        _frameworks,
        defs={"framework": entry_schema(Framework)},
    )
    injected_params: frozenset[str] = key(
        "tool_functions.injected_params", {"type": "array", "items": IDENTIFIER}, frozen
    )
    # The attribute of an injected run context holding the session's state, a mapping that
    # lives in the process (Google ADK's ``tool_context.state``).
    context_state: frozenset[str] = key(
        "tool_functions.context_state", {"type": "array", "items": IDENTIFIER}, frozen
    )
    # MCP servers whose ``lifespan=`` function yields what every tool's context hands back
    # at one of ``lifespan_attributes`` (``ctx.request_context.lifespan_context``).
    lifespan_servers: Matcher[bool] = key("tool_functions.lifespan_servers", STRINGS, matcher)
    lifespan_attributes: frozenset[str] = key("tool_functions.lifespan_attributes", STRINGS, frozen)
    declaration_decorators: Matcher[bool] = key(
        "tool_functions.declaration_decorators", STRINGS, matcher
    )
    # Validators that run on a model's input before it is built: a value stored under a
    # field's name in the data they are handed becomes that field.
    field_validators: Matcher[bool] = key(
        "tool_functions.field_validators",
        STRINGS,
        matcher,
        description="Validators a model runs on its input data before it is built: a value "
        "stored under a field's name there types that field.",
    )
    context_carriers: ContextCarriers = entry(
        "tool_functions.context_carriers",
        ContextCarriers,
        description="Generic classes a framework hands a tool whose attribute holds the "
        "dependencies typed by the first type argument (RunContext[Deps] -> .deps), and the "
        "packages they are imported from.",
    )
    # declaration field -> the annotation names that set it, in catalogue order
    annotation_hints: dict[str, tuple[str, ...]] = key(
        "tool_functions.annotation_hints",
        _named_lists(["read_only", "destructive", "idempotent_hint", "open_world"]),
        _name_tuples,
    )
    # declaration field (or ``side_effect``) -> the tool-option keywords that set it
    option_hints: dict[str, tuple[str, ...]] = key(
        "tool_functions.option_hints",
        _named_lists(["side_effect", "read_only", "destructive", "idempotent_hint"]),
        _name_tuples,
    )
    # Functions that run a function they are handed: where it is (position, keyword).
    callable_runners: Matcher[tuple[int | None, str | None]] = key(
        "tool_functions.callable_runners",
        {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["match"],
                "properties": {
                    "match": {"type": "array", "minItems": 1, "items": NONEMPTY_TEXT},
                    "arg": {"type": "integer", "minimum": 0},
                    "kwarg": IDENTIFIER,
                },
            },
        },
        _callable_runners,
        description="Functions that run a function they are handed (asyncio.to_thread(f, "
        "...), executor.submit(f, ...), functools.partial(f, ...), threading.Thread("
        "target=f)): such a call is a call edge to that function. arg: the function's "
        "position, kwarg: its keyword.",
    )
    # LLM API calls a project hands its tool specs to: where its own tools enter a model.
    spec_sinks: Matcher[tuple[str, ...]] = key(
        "tool_functions.spec_sinks",
        _KEYWORD_CALLS,
        _spec_sinks,
        description="Model API calls that take tool specs (messages.create(tools=...), "
        "converse(toolConfig=...)): the keywords holding them. The specs are followed back "
        "through the project's code to the classes that write them.",
    )
    # LLM API calls a project hands the schema of the model's answer to: an answer that
    # picks one member of a tagged union is the choice of a tool.
    answer_schemas: Matcher[tuple[tuple[str, ...], int | None]] = key(
        "tool_functions.answer_schemas",
        _VALUE_CALLS,
        _value_calls,
        description="Model API calls that take the schema the model's answer must fit "
        "(chat.completions.parse(response_format=Model), Ollama's chat(format="
        "Model.model_json_schema()), LangChain's with_structured_output(Model)): the keywords "
        "holding it, and its position when it may be passed first (arg). A field of that model typed "
        "as a union of models, each tagged by a Literal string, is the model's choice of a "
        "tool: each member is a tool named by its tag, run where the project branches on it.",
    )
    # Library calls that make a tool spec of a class or a function they are handed.
    spec_builders: Matcher[tuple[tuple[str, ...], int | None]] = key(
        "tool_functions.spec_builders",
        _VALUE_CALLS,
        _value_calls,
        description="Library calls that make a tool spec of the class or function they are "
        "handed, named after it unless given name= (openai.pydantic_function_tool(Model), "
        "LangChain's convert_to_openai_tool(obj)): the keywords holding it, and its position "
        "(arg). A project class handed to one whose spec reaches a model is a tool.",
    )
    # HTTP sends whose JSON body may carry tool specs to a model's REST API.
    request_bodies: Matcher[tuple[str, ...]] = key(
        "tool_functions.request_bodies",
        _KEYWORD_CALLS,
        _spec_sinks,
        description="HTTP sends whose body (the keywords listed: json=, data=) may be a "
        "model's REST request: the body's tool-spec keys (those of spec_sinks) are followed "
        "back as from a model API call (an Ollama or OpenAI-compatible endpoint called "
        "with httpx).",
    )
    module_scans: frozenset[str] = key(
        "tool_functions.module_scans",
        STRINGS,
        frozen,
        description="Calls that import a module chosen at run time or list its members "
        "(importlib.import_module, inspect.getmembers): a function making one and testing "
        "issubclass against a parameter loads classes by module scan.",
    )
    # ---- rules/effects.yaml
    sink_entries: tuple[Placed[Sink], ...] = entries(
        "effects.sinks",
        Sink,
        name="sink",
        match_schema={
            "description": "Qualified names after import and receiver-type resolution; "
            "fnmatch globs allowed.",
            "$ref": "#/$defs/names",
        },
        context=_sink_context,
    )
    reads: Matcher[bool] = key("effects.reads", STRINGS, matcher)
    verbs: dict[str, str] = key("effects.verbs", VERB_TABLE, _verb_table)
    # effect kind -> the verbs that name it, in catalogue order (the first kind wins)
    schema_verb_kinds: dict[str, frozenset[str]] = key(
        "effects.schema_verbs.kinds",
        {
            "type": "object",
            "propertyNames": {"enum": ["message", "payment", "exec"]},
            "additionalProperties": WORDS,
        },
        _word_sets,
    )
    noun_like_verbs: frozenset[str] = key("effects.schema_verbs.noun_like", WORDS, frozen)
    read_nouns: frozenset[str] = key("effects.schema_verbs.read_nouns", WORDS, frozen)
    client_receiver: re.Pattern[str] = key("effects.client_receiver_pattern", REGEX, pattern)
    client_factories: dict[str, str] = key(
        "effects.client_factories",
        {"type": "object", "additionalProperties": NONEMPTY_TEXT},
        table,
        description="A package's functions that build a client of it, by the class they "
        "return (supabase.create_client gives a supabase.Client): a variable bound to one's "
        "call holds that class, as a constructor's call types it.",
    )
    callable_factories: dict[str, str] = key(
        "effects.callable_factories",
        {"type": "object", "additionalProperties": NONEMPTY_TEXT},
        table,
        description="A package's functions that build a factory object whose call builds a "
        "client, by the class that call makes (sqlalchemy.orm.sessionmaker(...)() gives a "
        "sqlalchemy.orm.Session): a variable bound to a call of the factory object holds "
        "that class.",
    )
    container_methods: frozenset[str] = key(
        "effects.not_sinks.container_methods", IDENTIFIERS, frozen
    )
    container_factories: re.Pattern[str] = key(
        "effects.not_sinks.container_factories", REGEX, pattern
    )
    queue_methods: frozenset[str] = key("effects.not_sinks.queue_methods", IDENTIFIERS, frozen)
    item_methods: frozenset[str] = key("effects.not_sinks.item_methods", IDENTIFIERS, frozen)
    logger_receivers: re.Pattern[str] = key("effects.not_sinks.logger_receivers", REGEX, pattern)
    embedded_databases: frozenset[str] = key("effects.databases.embedded", IDENTIFIERS, frozen)
    server_databases: frozenset[str] = key("effects.databases.server", IDENTIFIERS, frozen)
    db_handle_receivers: re.Pattern[str] = key("effects.databases.handle_receivers", REGEX, pattern)
    db_handle_factories: frozenset[str] = key(
        "effects.databases.handle_factories", IDENTIFIERS, frozen
    )
    # Ordered: the search visits holders in this order, and the last key found counts.
    key_holders: tuple[str, ...] = key(
        "effects.key_holders",
        IDENTIFIERS,
        unique,
        description="Keyword arguments and dict keys an idempotency key may be passed "
        "inside, searched in order.",
    )
    # Ordered: the first one a call passes is its body.
    body_kwargs: tuple[str, ...] = key(
        "effects.body_kwargs",
        IDENTIFIERS,
        unique,
        description="Keyword arguments a write call takes its request body in, looked for "
        "in order.",
    )
    append_methods: frozenset[str] = key(
        "effects.read_modify_write.append_methods", IDENTIFIERS, frozen
    )
    store_methods: frozenset[str] = key(
        "effects.read_modify_write.store_methods", IDENTIFIERS, frozen
    )
    store_factories: frozenset[str] = key(
        "effects.read_modify_write.store_factories", IDENTIFIERS, frozen
    )
    local_shapes: frozenset[str] = key("effects.read_modify_write.local_shapes", QUALNAMES, frozen)
    read_post_words: frozenset[str] = key("effects.read_posts.read_words", WORDS, frozen)
    write_post_words: frozenset[str] = key("effects.read_posts.write_words", WORDS, frozen)
    name_read_words: frozenset[str] = key("effects.read_posts.name_read_words", WORDS, frozen)
    name_generic_words: frozenset[str] = key("effects.read_posts.name_generic_words", WORDS, frozen)
    sql_neutral_words: frozenset[str] = key("effects.read_posts.sql_neutral_words", WORDS, frozen)
    http_helper_words: frozenset[str] = key("effects.read_posts.http_helper_words", WORDS, frozen)
    post_read_hosts: re.Pattern[str] = key("effects.read_posts.read_hosts", REGEX, pattern)
    post_id_set_segment: re.Pattern[str] = key("effects.read_posts.id_set_segment", REGEX, pattern)
    post_query_keys: frozenset[str] = key("effects.read_posts.query_keys", STRINGS, frozen)
    post_graphql_keys: frozenset[str] = key("effects.read_posts.graphql_keys", STRINGS, frozen)
    post_rpc_operation_keys: tuple[str, ...] = key(
        "effects.read_posts.rpc_operation_keys", STRINGS, ordered
    )
    post_model_keys: frozenset[str] = key("effects.read_posts.model_keys", STRINGS, frozen)
    rpc_dispatch: Matcher[int] = key(
        "effects.rpc_dispatch",
        {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        _dispatch_positions,
        description="Generic RPC calls naming the remote operation in a string argument: "
        "name -> position of that argument.",
    )
    rpc_proxies: frozenset[str] = key(
        "effects.rpc_proxies",
        STRINGS,
        frozen,
        description="Remote-procedure proxies: each method called on an instance is a remote "
        "operation named by the method (`proxy.create_object(...)`).",
    )
    rpc_stub_methods: frozenset[str] = key(
        "effects.rpc_stub_methods",
        IDENTIFIERS,
        frozen,
        description="Calls that make a callable sending one remote call, named by the path "
        'their first argument gives (`channel.unary_unary("/shop.Cart/AddItem")`): an '
        "attribute bound to one runs that remote operation.",
    )
    precondition_headers: re.Pattern[str] = key(
        "effects.write_guards.precondition_headers", HEADERS, names_pattern("(?i)^({})$")
    )
    # snake_case phrases, as word sequences (``get_or_create`` -> get, or, create)
    create_or_get_phrases: tuple[tuple[str, ...], ...] = key(
        "effects.write_guards.create_or_get",
        {"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9]+(_[a-z0-9]+)*$"}},
        lambda raw: tuple(tuple(phrase.split("_")) for phrase in as_list(raw)),
    )
    dedupe_claims: frozenset[str] = key("effects.write_guards.dedupe_claims", WORDS, frozen)
    dedupe_negations: frozenset[str] = key("effects.write_guards.dedupe_negations", WORDS, frozen)
    computing_verbs: frozenset[str] = key(
        "effects.write_guards.computing_verbs",
        WORDS,
        frozen,
        description="Read verbs of a function that computes from its arguments (`parse`, "
        "`validate`): a check on what it answers cannot see what an earlier run made.",
    )
    state_words: frozenset[str] = key("effects.repeat_safe_posts.state_words", WORDS, frozen)
    post_relation_words: frozenset[str] = key(
        "effects.repeat_safe_posts.relation_words", WORDS, frozen
    )
    link_verbs: frozenset[str] = key("effects.repeat_safe_posts.link_verbs", WORDS, frozen)
    post_reference_keys: frozenset[str] = key(
        "effects.repeat_safe_posts.reference_keys", WORDS, frozen
    )
    session_words: frozenset[str] = key("effects.repeat_safe_posts.session_words", WORDS, frozen)
    # loaded where first read (``open_world`` below)
    open_world_table: dict[str, Any] = deferred_entry(
        "effects.open_world",
        OpenWorld,
        description="Open-world effects: how a call no entry knows is judged by its verb, "
        "and the precision guards.",
    )
    key_kwargs: re.Pattern[str] = key(
        "effects.keys.kwargs", IDENTIFIERS, names_pattern("(?i)^({})$")
    )
    # An `X-` prefix marks a header as not standardised: the same header either way.
    key_headers: re.Pattern[str] = key(
        "effects.keys.headers", HEADERS, names_pattern("(?i)^(x-)?({})$")
    )
    fresh_calls: Matcher[bool] = key("effects.keys.fresh_calls", QUALNAMES, matcher)
    hash_calls: Matcher[bool] = key("effects.keys.hash_calls", QUALNAMES, matcher)
    scope_words: re.Pattern[str] = key(
        "effects.keys.scope_words", SNAKE_WORDS, names_pattern("(?i)({})")
    )
    identity_words: frozenset[str] = key("effects.keys.identity_words", SNAKE_WORDS, frozen)
    url_name_words: re.Pattern[str] = key(
        "effects.url_name_words",
        WORDS,
        names_pattern("(?i)({})"),
        description="Parts of a name (any case) that say it holds a URL: an unresolved name "
        "in a POST's URL counts only then.",
    )
    sql_write: re.Pattern[str] = key(
        "effects.sql.write_verbs", WORDS, names_pattern(r"(?is)^\s*({})\b")
    )
    # A common table expression whose body is a SELECT reads: SQL syntax, not a word list.
    sql_read: re.Pattern[str] = key(
        "effects.sql.read_verbs",
        WORDS,
        names_pattern(r"(?is)^\s*(with\s+\w+\s+as\s*\(\s*select|{})\b"),
    )
    # Clauses that write anywhere in a statement starting with another word (Cypher's
    # ``MATCH ... SET``); those of them that add a row or a node each time.
    sql_clause_writes: re.Pattern[str] = key(
        "effects.sql.clause_writes", WORDS, names_pattern(r"(?i)\b({})\b")
    )
    sql_creates: frozenset[str] = key("effects.sql.clause_creates", WORDS, frozen)
    # What a conflict on the natural key does, written in the statement: an upsert.
    sql_upserts: re.Pattern[str] = key(
        "effects.sql.upserts", STRINGS, phrases_pattern(r"(?is)\b({})\b")
    )
    # A literal ``CREATE <object> IF NOT EXISTS``: the fixed schema, set up on first use.
    sql_setup: re.Pattern[str] = key(
        "effects.sql.setup_objects",
        STRINGS,
        phrases_pattern(
            r"(?is)^\s*create\s+(?:or\s+replace\s+)?(?:temp\w*\s+)?({})\s+if\s+not\s+exists\b"
        ),
    )
    # ---- rules/retries.yaml
    retry_decorators: tuple[Placed[RetryConstruct], ...] = _constructs(
        "retries.decorators", "decorator"
    )
    retry_wrappers: tuple[Placed[RetryConstruct], ...] = _constructs("retries.wrappers", "wrapper")
    http_retries: tuple[Placed[RetryConstruct], ...] = _constructs(
        "retries.http_retry", "http_retry"
    )
    global_retries: tuple[Placed[RetryConstruct], ...] = _constructs("retries.global", "global")
    node_retries: tuple[Placed[RetryConstruct], ...] = _constructs(
        "retries.node_retry", "node_retry"
    )
    client_retry_entries: tuple[Placed[RetryConstruct], ...] = _constructs(
        "retries.client_retry", "client", "client"
    )
    transient_exceptions: set[str] = key("retries.transient_exceptions", STRINGS, mutable)
    transient_statuses: set[int] = key(
        "retries.transient_statuses",
        {"type": "array", "items": {"type": "integer"}},
        lambda raw: {int(status) for status in as_list(raw)},
    )
    response_status: ResponseStatus = entry(
        "retries.response_status",
        ResponseStatus,
        description="How a retry loop reads a response's HTTP status: the attributes holding "
        "it, a pattern for locals named for it, boolean flags true for a range of statuses, "
        "and the methods raising for 4xx/5xx.",
    )
    catch_all_exceptions: set[str] = key("retries.catch_all_exceptions", STRINGS, mutable)
    policy_default_catches: list[str] = key("retries.policy_default_catches", STRINGS, listed)
    # ---- the runtime's own functions, and the user's (``ledger-functions`` in config)
    ledger_functions: Matcher[bool] = key("ledger_functions", STRINGS, matcher)

    # ---- computed from the keys
    tool_forms: dict[str, Matcher[ToolForm]]
    metadata_kwargs: dict[str, str]
    annotations_kwargs: dict[str, str]
    mcp_lowlevel_servers: list[str]
    mcp_tool_types: list[str]
    plugin_entry_names: frozenset[str]
    # by framework: the members of a decorated tool object that run the function
    decorated_calls: dict[str, frozenset[str]]
    sinks: Matcher[Sink]  # Python's
    npm_sinks: Matcher[Sink]  # JavaScript's and TypeScript's
    user_sinks: Matcher[Sink]  # declared in config: win over project code
    retries: Matcher[RetryConstruct]
    client_retries: Matcher[RetryConstruct]
    post_read_words: frozenset[str]
    post_write_words: frozenset[str]
    post_state_words: frozenset[str]

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        load_keys(self, data)
        self._add_tool_forms()
        self.sinks = Matcher()
        self.npm_sinks = Matcher()
        self.user_sinks = Matcher()
        for patterns, sink in self.sink_entries:
            if sink.user:  # the user's own names, whatever the language
                self.sinks.add(patterns, sink)
                self.npm_sinks.add(patterns, sink)
            else:
                (self.npm_sinks if sink.ecosystem == "npm" else self.sinks).add(patterns, sink)
            if sink.user:
                self.user_sinks.add(patterns, sink)
        self.retries = Matcher()
        for constructs in (
            self.retry_decorators,
            self.retry_wrappers,
            self.http_retries,
            self.global_retries,
            self.node_retries,
        ):
            for patterns, construct in constructs:
                self.retries.add(patterns, construct)
        self.client_retries = Matcher()
        for patterns, construct in self.client_retry_entries:
            self.client_retries.add(patterns, construct)
        self.context_carriers = replace(self.context_carriers, status=self.response_status)
        self.post_read_words = self.read_post_words | self.session_words
        self.post_write_words = self.write_post_words | {
            verb for verb, category in self.verbs.items() if category != "read"
        }
        # with the verbs of an idempotent write (``/records/upsert``, ``chat.update``)
        self.post_state_words = self.state_words | {
            verb for verb, category in self.verbs.items() if category == "idempotent_write"
        }

    def _add_tool_forms(self) -> None:
        """Each framework's tool forms, by form, named by the framework."""
        self.tool_forms = {
            form: Matcher()
            for form in (
                "decorator",
                "factory",
                "base_class",
                "registry",
                "agent_tool",
                "agent_runner",
                "retrieval_tool",
            )
        }
        self.metadata_kwargs = {}
        self.annotations_kwargs = {}
        self.mcp_lowlevel_servers = []
        self.mcp_tool_types = []
        self.plugin_entry_names = frozenset()
        self.decorated_calls = {}
        for name, framework in self.frameworks.items():
            self.tool_forms["decorator"].add(framework.decorators, ToolForm(name, "decorator"))
            for form, written in (
                ("factory", framework.factories),
                ("base_class", framework.base_classes),
                ("registry", framework.registries),
                ("agent_tool", framework.agent_tools),
                ("agent_runner", framework.agent_runners),
                ("retrieval_tool", framework.retrieval_tools),
            ):
                names = TOOL_FORM_NAMES[form]
                for raw in written:
                    tool_form = load_entry(ToolForm, raw, form, framework=name, form=form)
                    self.tool_forms[form].add(as_list(raw[names]), tool_form)
            if framework.metadata_kwarg:
                self.metadata_kwargs[name] = framework.metadata_kwarg
            if framework.annotations_kwarg:
                self.annotations_kwargs[name] = framework.annotations_kwarg
            self.plugin_entry_names |= framework.plugin_entries
            if framework.decorated_calls:
                self.decorated_calls[name] = framework.decorated_calls
            self.mcp_lowlevel_servers += framework.lowlevel.server
            self.mcp_tool_types += framework.lowlevel.tool_type

    @cached_property
    def checklist(self) -> Knowledge:
        """The checklist knowledge (``rules/checklist.yaml``) of this catalogue."""
        from agentguard.knowledge.checklist import Knowledge

        return Knowledge(self.data.get("checklist") or {})

    @cached_property
    def open_world(self) -> OpenWorld:
        """How a call no sink entry knows is judged (``effects.open_world``)."""
        return load_entry(OpenWorld, self.open_world_table, base_verbs=self.verbs)

    @cached_property
    def service_packages(self) -> frozenset[str]:
        """The packages the catalogue knows as a remote service's SDK (``stripe``,
        ``twilio.rest``): the literal module path before the class or wildcard of each sink
        entry that pays or sends a message. A call into one that no entry knows still goes
        to the service."""
        found: set[str] = set()
        for patterns, sink in self.sink_entries:
            if sink.effect not in {"payment", "message"}:
                continue
            for glob in patterns:
                parts = glob.split(".")
                prefix: list[str] = []
                for part in parts[:-1]:
                    if not part.isidentifier() or not part.islower():
                        break
                    prefix.append(part)
                if prefix:
                    found.add(".".join(prefix))
        return frozenset(found)

    @cached_property
    def digest(self) -> str:
        """Part of every cache key: a catalogue change invalidates cached facts."""
        return hashlib.sha256(json.dumps(self.data, sort_keys=True).encode()).hexdigest()[:16]


CATALOG_FILES = ("frameworks", "effects", "retries", "checklist")
_PACKAGE = Path(__file__).resolve().parent.parent
# The top-level rules/ folder, mapped to this package by pyproject.toml (wheel and editable).
CATALOG_PACKAGE = "agentguard.catalogues"


class CatalogError(ConfigError):
    """A catalogue (built-in YAML or the user's extension) that breaks its schema."""


@cache
def catalog_schema(name: str) -> dict[str, Any]:
    text = (_PACKAGE / "data" / f"{name}.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def schema_problems(name: str, document: Any) -> list[tuple[str, str]]:
    """(dotted key, message) for each place ``document`` breaks the ``name`` schema."""
    import jsonschema  # slow to import, and only user extensions and tests validate

    validator = jsonschema.Draft202012Validator(
        catalog_schema(name), format_checker=jsonschema.FormatChecker()
    )
    problems = []
    for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path)):
        key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        message = error.message.replace("Additional properties are not allowed", "unknown key")
        problems.append((key, message))
    return problems


def _catalogue_folder() -> Traversable:
    """Where the built-in catalogues are: the package ``agentguard.catalogues`` of an install
    (wheel or editable). Run from a clone's source tree instead (``python -m pytest`` or
    ``python -m agentguard`` at its root), ``agentguard`` is the tree's own folder, which has
    no such package: the tree's ``rules/`` folder, which the package is built from."""
    try:
        return importlib.resources.files(CATALOG_PACKAGE)
    except ModuleNotFoundError:
        return _PACKAGE.parent / "rules"


# libyaml's loader reads the catalogues about ten times faster than the pure-Python one.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _builtin_file(name: str) -> dict[str, Any]:
    """A built-in catalogue. It is not validated here, on every run: the test suite checks
    each one against its schema (user extensions are validated when loaded)."""
    path = _catalogue_folder() / f"{name}.yaml"
    try:
        loaded = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path}: cannot load the built-in catalogue: {exc}") from exc
    return cast(dict[str, Any], loaded)


def builtin_data() -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name in CATALOG_FILES:
        loaded = json.loads(json.dumps(_builtin_file(name)))
        if name == "frameworks":
            data["frameworks"] = loaded.get("frameworks") or {}
            data["tool_functions"] = loaded.get("tool_functions") or {}
        else:
            data[name] = loaded
    data["ledger_functions"] = [
        "agentguard.runtime.guarded",
        "agentguard.guarded",
        "agentguard.runtime.Runtime.ledger.*",
    ]
    return data


def validate_extensions(extensions: Mapping[str, Any], source: Path | str | None) -> None:
    """Check the user's catalogue extensions against the catalogue schemas; a problem is a
    configuration error naming the config file and the key (``effects.sinks.0.effect``)."""
    where = str(source) if source is not None else "configuration"
    documents = {
        "frameworks": {"frameworks": extensions["frameworks"]}
        if "frameworks" in extensions
        else None,
        "effects": extensions.get("effects"),
        "retries": extensions.get("retries"),
        "checklist": extensions.get("checklist"),
        "tool-functions": extensions.get("tool_functions"),
    }
    for name, document in documents.items():
        if document is None:
            continue
        if not isinstance(document, Mapping):
            raise CatalogError(f"{where}: invalid configuration at `{name}`: must be a table")
        if name == "tool-functions":
            # a section of the frameworks catalogue, beside its `frameworks` table
            problems = schema_problems("frameworks", {"tool_functions": document})
        elif name == "checklist":
            problems = schema_problems(name, {"version": 1, **document})
        else:
            problems = schema_problems(name, document)
        if problems:
            key, message = problems[0]
            if name == "tool-functions":
                key = name + key.removeprefix("tool_functions")
            elif name != "frameworks":
                key = f"{name}.{key}" if key != "(top level)" else name
            raise CatalogError(f"{where}: invalid configuration at `{key}`: {message}")
    ledger = extensions.get("ledger_functions")
    if ledger is not None and not (
        isinstance(ledger, list) and all(isinstance(x, str) and x for x in ledger)
    ):
        raise CatalogError(
            f"{where}: invalid configuration at `ledger-functions`: must be a list of names"
        )


def _merge_table(user: Mapping[str, Any], builtin: Mapping[str, Any]) -> dict[str, Any]:
    """A user's table over a built-in one: lists join (the user's first), tables merge the
    same way, and any other value replaces the built-in one."""
    combined = dict(builtin)
    for name, value in user.items():
        existing = builtin.get(name)
        if isinstance(value, list):
            combined[name] = list(value) + list(existing or [])
        elif isinstance(value, dict) and isinstance(existing, dict):
            combined[name] = _merge_table(value, existing)
        else:
            combined[name] = value
    return combined


def merge_extensions(data: dict[str, Any], extensions: Mapping[str, Any]) -> dict[str, Any]:
    """Merge user catalogue entries (from config) into the built-in data."""
    merged = json.loads(json.dumps(data))
    for framework, spec in (extensions.get("frameworks") or {}).items():
        target = merged["frameworks"].setdefault(framework, {})
        for name, value in spec.items():
            if isinstance(value, list):
                target[name] = list(target.get(name) or []) + value
            else:
                target[name] = value
    for section in ("effects", "retries"):
        for name, value in (extensions.get(section) or {}).items():
            existing = merged[section].get(name)
            if isinstance(value, list):
                if name == "sinks":
                    value = [{**entry, USER_MARK: True} for entry in value]
                # User entries come first, so they win over built-in globs.
                merged[section][name] = value + list(existing or [])
            elif isinstance(value, dict) and isinstance(existing, dict):
                # verbs, schema_verbs.kinds: the user's words join the built-in ones
                merged[section][name] = _merge_table(value, existing)
            else:
                merged[section][name] = value
    if extensions.get("checklist"):
        # lists join, tables merge (``timeouts.transport_errors``), a pattern replaces
        merged["checklist"] = _merge_table(extensions["checklist"], merged.get("checklist") or {})
    if extensions.get("tool_functions"):
        merged["tool_functions"] = _merge_table(
            extensions["tool_functions"], merged.get("tool_functions") or {}
        )
    merged["ledger_functions"] = list(merged.get("ledger_functions") or []) + list(
        extensions.get("ledger_functions") or []
    )
    return merged


def load_catalog(
    extensions: Mapping[str, Any] | None = None, source: Path | str | None = None
) -> Catalog:
    data = builtin_data()
    if extensions:
        validate_extensions(extensions, source)
        data = merge_extensions(data, extensions)
    return Catalog(data)
