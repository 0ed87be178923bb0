"""The YAML catalogues in the top-level ``rules/`` folder (installed as the package
``agentguard.catalogues``): framework tool forms, side-effect sinks and retry constructs,
plus the user's extensions from config."""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.resources
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import yaml

from agentguard.config import ConfigError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from agentguard.knowledge.checklist import Knowledge
    from agentguard.knowledge.open_world import OpenWorld

T = TypeVar("T")


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def normalise(qualname: str) -> str:
    return qualname.replace("()", "")


def _names_pattern(names: Any, template: str) -> re.Pattern[str]:
    """A regex matching any of ``names`` literally, placed in ``template``'s ``{}``; with no
    names, one that matches nothing."""
    words = list(dict.fromkeys(_as_list(names)))
    if not words:
        return re.compile("$^")
    return re.compile(template.format("|".join(re.escape(word) for word in words)))


class NameIndex:
    """Distinct dotted names (callees, many thousands) by their exact form, first part and
    last part, as a ``Matcher`` reads them: a catalogue finds the few names it may match
    through its own keys, without looking at every name."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(names)
        self.by_name: dict[str, list[str]] = {}
        self.by_head: dict[str, list[str]] = {}
        self.by_tail: dict[str, list[str]] = {}
        for written in self.names:
            name = written.replace("()", "") if "()" in written else written
            self.by_name.setdefault(name, []).append(written)
            self.by_head.setdefault(name.split(".", 1)[0], []).append(written)
            self.by_tail.setdefault(name.rsplit(".", 1)[-1], []).append(written)


class Matcher(Generic[T]):
    """Maps qualified names to entries: exact names first, then glob patterns in order."""

    def __init__(self) -> None:
        self._exact: dict[str, T] = {}
        self._globs: list[tuple[re.Pattern[str], T]] = []
        # Globs by the first or last dotted part every name they match must have
        # (``stripe.*.create`` by ``stripe``, ``*.put_item`` by ``put_item``): a name is
        # tried against the few globs that can match it, not against all of them.
        self._by_head: dict[str, list[int]] = {}
        self._by_tail: dict[str, list[int]] = {}
        self._unkeyed: list[int] = []
        self._memo: dict[str | None, T | None] = {}

    def add(self, patterns: Iterable[str], entry: T) -> None:
        for pattern in patterns:
            if any(ch in pattern for ch in "*?["):
                self._index_glob(pattern, len(self._globs))
                self._globs.append((re.compile(fnmatch.translate(pattern)), entry))
            else:
                self._exact.setdefault(pattern, entry)
        self._memo.clear()

    def __bool__(self) -> bool:
        """Whether any name can match (the user's sinks are often none)."""
        return bool(self._exact or self._globs)

    def among(self, index: NameIndex) -> frozenset[str]:
        """The names in ``index`` that match: for a walk over every call site, which then
        tests membership in a set instead of asking the matcher at each site."""
        if self._unkeyed:
            candidates: Iterable[str] = index.names
        else:
            groups = [index.by_name.get(name, ()) for name in self._exact]
            groups += [index.by_head.get(head, ()) for head in self._by_head]
            groups += [index.by_tail.get(tail, ()) for tail in self._by_tail]
            candidates = {name for group in groups for name in group}
        return frozenset(name for name in candidates if self(name) is not None)

    def _index_glob(self, pattern: str, position: int) -> None:
        if "[" in pattern or "]" in pattern:
            self._unkeyed.append(position)
            return
        prefix = re.split(r"[*?]", pattern, maxsplit=1)[0]
        suffix = re.split(r"[*?]", pattern)[-1]
        if "." in prefix:
            self._by_head.setdefault(prefix.split(".", 1)[0], []).append(position)
        elif "." in suffix:
            self._by_tail.setdefault(suffix.rsplit(".", 1)[1], []).append(position)
        else:
            self._unkeyed.append(position)

    def __call__(self, qualname: str | None) -> T | None:
        # One probe of the memo on the hot path: callers ask per call site.
        try:
            return self._memo[qualname]
        except KeyError:
            return self._lookup(qualname)

    def first(self, *qualnames: str) -> T | None:
        """The entry of the first of ``qualnames`` that has one (a call's resolved callee,
        then the callee as written)."""
        for qualname in qualnames:
            found = self(qualname)
            if found is not None:
                return found
        return None

    def _lookup(self, qualname: str | None) -> T | None:
        if not qualname:
            self._memo[qualname] = None
            return None
        memo = self._memo
        name = qualname.replace("()", "") if "()" in qualname else qualname
        found = self._exact.get(name)
        if found is None and self._globs:
            head = self._by_head.get(name.split(".", 1)[0], ())
            tail = self._by_tail.get(name.rsplit(".", 1)[-1], ())
            candidates = sorted((*head, *tail, *self._unkeyed)) if head or tail else self._unkeyed
            for position in candidates:
                regex, entry = self._globs[position]
                if regex.match(name):
                    found = entry
                    break
        memo[qualname] = found
        return found


@dataclass(frozen=True)
class ArgRef:
    """Where a value sits in a call: positional index and/or keyword name."""

    arg: int | None = None
    kwarg: tuple[str, ...] = ()

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> ArgRef | None:
        if not raw:
            return None
        return cls(arg=raw.get("arg"), kwarg=tuple(_as_list(raw.get("kwarg"))))


@dataclass(frozen=True)
class ToolForm:
    framework: str
    form: str  # decorator | factory | base_class | registry
    function: ArgRef | None = None
    also: ArgRef | None = None
    name: ArgRef | None = None
    tools: ArgRef | None = None
    methods: tuple[str, ...] = ()
    methods_from_attribute: str | None = None
    # class attributes a duck-typed base needs (``name``, ``description``) to count
    requires_attributes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sink:
    effect: str
    idempotent: bool | None
    method: str | None = None
    method_from: Mapping[str, Any] | None = None
    key: Mapping[str, Any] = field(default_factory=dict)
    remote: bool | None = None
    confidence: str = "high"
    receiver_hint: str | None = None
    pattern: str = ""
    user: bool = False  # declared in the user's config: wins over following project code
    # A sink only when each of these keyword arguments is written with this literal value
    # (``NamedTemporaryFile(delete=False)`` leaves a file behind; by default it is removed).
    only_with: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AttemptKeys:
    """The keys of a client's retry setting (botocore's ``retries`` dict) that make it send
    once: ``total`` counts every attempt; ``retries`` counts the retries, or every attempt
    when ``mode`` is one of ``counting_modes``."""

    total: str | None = None
    retries: str | None = None
    mode: str | None = None
    counting_modes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RetryConstruct:
    kind: str  # decorator | wrapper | http_retry | global
    library: str
    on: ArgRef | None = None
    default_catches_all: bool = False
    methods_kwarg: tuple[str, ...] = ()
    default_methods: tuple[str, ...] = ()
    scope_kwarg: str | None = None
    requires_kwarg: str | None = None
    what: str = ""
    node: ArgRef | None = None  # node_retry: where the retried node sits in the call
    tool_nodes: tuple[str, ...] = ()  # node_retry: node classes that run every tool
    # client_retry: where the client takes its setting object, the classes of that object,
    # and the method that mounts it (``session.mount``), when mounted.
    setting: ArgRef | None = None
    holders: tuple[str, ...] = ()
    mount: str | None = None
    attempts: AttemptKeys = AttemptKeys()


@dataclass(frozen=True)
class ResponseStatus:
    """How a hand-written retry loop reads a response's HTTP status
    (``retries.response_status``): the attributes holding it, a pattern for the names of
    locals holding one, boolean flags true for a range of statuses (inclusive), and the
    methods that raise for a 4xx or 5xx status."""

    attributes: frozenset[str] = frozenset()
    name_pattern: str = "$^"
    flags: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    raises_on_error: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> ResponseStatus:
        return cls(
            attributes=frozenset(_as_list(raw.get("attributes"))),
            name_pattern=raw.get("name_pattern") or "$^",
            flags={
                name: (int(low), int(high))
                for name, (low, high) in (raw.get("flags") or {}).items()
            },
            raises_on_error=frozenset(_as_list(raw.get("raises_on_error"))),
        )

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

    attributes: Mapping[str, str] = field(default_factory=dict)  # carrier class -> attribute
    packages: frozenset[str] = frozenset()
    status: ResponseStatus = ResponseStatus()

    @cached_property
    def carried(self) -> frozenset[str]:
        """Every attribute a carrier holds the dependencies in."""
        return frozenset(self.attributes.values())


class Catalog:
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.tool_forms: dict[str, Matcher[ToolForm]] = {
            kind: Matcher() for kind in ("decorator", "factory", "base_class", "registry")
        }
        self.metadata_kwargs: dict[str, str] = {}
        self.annotations_kwargs: dict[str, str] = {}
        self.mcp_lowlevel_servers: list[str] = []
        self.mcp_tool_types: list[str] = []
        self.plugin_entry_names: frozenset[str] = frozenset()
        for framework, spec in (data.get("frameworks") or {}).items():
            self._load_framework(framework, spec or {})
        tool_functions = data.get("tool_functions") or {}
        self.injected_params = frozenset(_as_list(tool_functions.get("injected_params")))
        # Validators that run on a model's input before it is built: a value stored under a
        # field's name in the data they are handed becomes that field.
        self.field_validators: Matcher[bool] = Matcher()
        self.field_validators.add(_as_list(tool_functions.get("field_validators")), True)
        self.declaration_decorators: Matcher[bool] = Matcher()
        self.declaration_decorators.add(
            _as_list(tool_functions.get("declaration_decorators")), True
        )
        carriers = tool_functions.get("context_carriers") or {}
        self.context_carriers = ContextCarriers(
            dict(carriers.get("attributes") or {}),
            frozenset(_as_list(carriers.get("packages"))),
            ResponseStatus.parse((data.get("retries") or {}).get("response_status") or {}),
        )
        # Functions that run a function they are handed: where it is (position, keyword).
        self.callable_runners: Matcher[tuple[int | None, str | None]] = Matcher()
        for raw in tool_functions.get("callable_runners") or []:
            self.callable_runners.add(
                _as_list(raw.get("match")), (raw.get("arg"), raw.get("kwarg"))
            )
        # declaration field -> the annotation names that set it, in catalogue order
        self.annotation_hints: dict[str, tuple[str, ...]] = {
            field_name: tuple(_as_list(names))
            for field_name, names in (tool_functions.get("annotation_hints") or {}).items()
        }
        # declaration field (or ``side_effect``) -> the tool-option keywords that set it
        self.option_hints: dict[str, tuple[str, ...]] = {
            field_name: tuple(_as_list(names))
            for field_name, names in (tool_functions.get("option_hints") or {}).items()
        }
        effects = data.get("effects") or {}
        self.sinks: Matcher[Sink] = Matcher()
        self.user_sinks: Matcher[Sink] = Matcher()
        for raw in effects.get("sinks") or []:
            patterns = _as_list(raw["match"])
            sink = Sink(
                effect=raw["effect"],
                idempotent=raw.get("idempotent"),
                method=raw.get("method"),
                method_from=raw.get("method_from"),
                key=raw.get("key") or {},
                remote=raw.get("remote"),
                confidence=raw.get("confidence", "high"),
                receiver_hint=raw.get("receiver_hint"),
                only_with=raw.get("only_with") or {},
                pattern=patterns[0],
                user=bool(raw.get(USER_MARK)),
            )
            self.sinks.add(patterns, sink)
            if sink.user:
                self.user_sinks.add(patterns, sink)
        self.reads: Matcher[bool] = Matcher()
        self.reads.add(_as_list(effects.get("reads")), True)
        verbs = effects.get("verbs") or {}
        self.verbs: dict[str, str] = {}
        for category in ("read", "idempotent_write", "destructive", "non_idempotent"):
            for verb in verbs.get(category) or []:
                self.verbs[verb] = category
        schema_verbs = effects.get("schema_verbs") or {}
        # effect kind -> the verbs that name it, in catalogue order (the first kind wins)
        self.schema_verb_kinds: dict[str, frozenset[str]] = {
            kind: frozenset(_as_list(words))
            for kind, words in (schema_verbs.get("kinds") or {}).items()
        }
        self.noun_like_verbs = frozenset(_as_list(schema_verbs.get("noun_like")))
        self.read_nouns = frozenset(_as_list(schema_verbs.get("read_nouns")))
        self.client_receiver = re.compile(effects.get("client_receiver_pattern") or "$^")
        not_sinks = effects.get("not_sinks") or {}
        self.container_methods = frozenset(_as_list(not_sinks.get("container_methods")))
        self.container_factories = re.compile(not_sinks.get("container_factories") or "$^")
        self.queue_methods = frozenset(_as_list(not_sinks.get("queue_methods")))
        self.item_methods = frozenset(_as_list(not_sinks.get("item_methods")))
        self.logger_receivers = re.compile(not_sinks.get("logger_receivers") or "$^")
        databases = effects.get("databases") or {}
        self.embedded_databases = frozenset(_as_list(databases.get("embedded")))
        self.server_databases = frozenset(_as_list(databases.get("server")))
        self.db_handle_receivers = re.compile(databases.get("handle_receivers") or "$^")
        self.db_handle_factories = frozenset(_as_list(databases.get("handle_factories")))
        # Ordered: the search visits holders in this order, and the last key found counts.
        self.key_holders = tuple(dict.fromkeys(_as_list(effects.get("key_holders"))))
        # Ordered: the first one a call passes is its body.
        self.body_kwargs = tuple(dict.fromkeys(_as_list(effects.get("body_kwargs"))))
        read_modify_write = effects.get("read_modify_write") or {}
        self.append_methods = frozenset(_as_list(read_modify_write.get("append_methods")))
        self.local_shapes = frozenset(_as_list(read_modify_write.get("local_shapes")))
        read_posts = effects.get("read_posts") or {}
        self.post_read_words = frozenset(_as_list(read_posts.get("read_words"))) | frozenset(
            _as_list((effects.get("repeat_safe_posts") or {}).get("session_words"))
        )
        self.post_write_words = frozenset(_as_list(read_posts.get("write_words"))) | {
            verb for verb, category in self.verbs.items() if category != "read"
        }
        self.post_read_hosts = re.compile(read_posts.get("read_hosts") or "$^")
        self.post_id_set_segment = re.compile(read_posts.get("id_set_segment") or "$^")
        self.post_query_keys = frozenset(_as_list(read_posts.get("query_keys")))
        self.post_graphql_keys = frozenset(_as_list(read_posts.get("graphql_keys")))
        self.post_rpc_operation_keys = tuple(_as_list(read_posts.get("rpc_operation_keys")))
        self.post_model_keys = frozenset(_as_list(read_posts.get("model_keys")))
        self.name_read_words = frozenset(_as_list(read_posts.get("name_read_words")))
        self.name_generic_words = frozenset(_as_list(read_posts.get("name_generic_words")))
        self.sql_neutral_words = frozenset(_as_list(read_posts.get("sql_neutral_words")))
        self.http_helper_words = frozenset(_as_list(read_posts.get("http_helper_words")))
        self.rpc_dispatch: Matcher[int] = Matcher()
        for dispatch, position in (effects.get("rpc_dispatch") or {}).items():
            self.rpc_dispatch.add([dispatch], int(position))
        guards = effects.get("write_guards") or {}
        self.precondition_headers = _names_pattern(guards.get("precondition_headers"), "(?i)^({})$")
        # snake_case phrases, as word sequences (``get_or_create`` -> get, or, create)
        self.create_or_get_phrases = tuple(
            tuple(phrase.split("_")) for phrase in _as_list(guards.get("create_or_get"))
        )
        repeat_safe = effects.get("repeat_safe_posts") or {}
        # with the verbs of an idempotent write (``/records/upsert``, ``chat.update``)
        self.post_state_words = frozenset(_as_list(repeat_safe.get("state_words"))) | {
            verb for verb, category in self.verbs.items() if category == "idempotent_write"
        }
        self.post_relation_words = frozenset(_as_list(repeat_safe.get("relation_words")))
        self.link_verbs = frozenset(_as_list(repeat_safe.get("link_verbs")))
        self.post_reference_keys = frozenset(_as_list(repeat_safe.get("reference_keys")))
        keys = effects.get("keys") or {}
        self.key_kwargs = _names_pattern(keys.get("kwargs"), "(?i)^({})$")
        # An `X-` prefix marks a header as not standardised: the same header either way.
        self.key_headers = _names_pattern(keys.get("headers"), "(?i)^(x-)?({})$")
        self.fresh_calls: Matcher[bool] = Matcher()
        self.fresh_calls.add(_as_list(keys.get("fresh_calls")), True)
        self.hash_calls: Matcher[bool] = Matcher()
        self.hash_calls.add(_as_list(keys.get("hash_calls")), True)
        self.scope_words = _names_pattern(keys.get("scope_words"), "(?i)({})")
        self.identity_words = frozenset(_as_list(keys.get("identity_words")))
        self.url_name_words = _names_pattern(effects.get("url_name_words"), "(?i)({})")
        sql = effects.get("sql") or {}
        self.sql_write = _names_pattern(sql.get("write_verbs"), r"(?is)^\s*({})\b")
        # A common table expression whose body is a SELECT reads: SQL syntax, not a word list.
        self.sql_read = _names_pattern(
            sql.get("read_verbs"), r"(?is)^\s*(with\s+\w+\s+as\s*\(\s*select|{})\b"
        )
        # Clauses that write anywhere in a statement starting with another word (Cypher's
        # ``MATCH ... SET``); those of them that add a row or a node each time.
        self.sql_clause_writes = _names_pattern(sql.get("clause_writes"), r"(?i)\b({})\b")
        self.sql_creates = frozenset(sql.get("clause_creates") or [])
        retries = data.get("retries") or {}
        self.retries: Matcher[RetryConstruct] = Matcher()
        for kind in ("decorators", "wrappers", "http_retry", "global", "node_retry"):
            for raw in retries.get(kind) or []:
                construct = RetryConstruct(
                    kind=kind.rstrip("s") if kind in {"decorators", "wrappers"} else kind,
                    library=raw.get("library", ""),
                    on=ArgRef.parse(raw.get("exceptions")),
                    default_catches_all=bool(raw.get("default_catches_all")),
                    methods_kwarg=tuple(_as_list(raw.get("methods_kwarg"))),
                    default_methods=tuple(_as_list(raw.get("default_methods"))),
                    scope_kwarg=raw.get("scope_kwarg"),
                    requires_kwarg=raw.get("requires_kwarg"),
                    what=raw.get("what", ""),
                    node=ArgRef.parse(raw.get("node")),
                    tool_nodes=tuple(_as_list(raw.get("tool_nodes"))),
                )
                self.retries.add(_as_list(raw["match"]), construct)
        self.client_retries: Matcher[RetryConstruct] = Matcher()
        for raw in retries.get("client_retry") or []:
            attempts = raw.get("attempts") or {}
            self.client_retries.add(
                _as_list(raw["match"]),
                RetryConstruct(
                    kind="client",
                    library=raw.get("library", ""),
                    requires_kwarg=raw.get("requires_kwarg"),
                    what=raw.get("what", ""),
                    setting=ArgRef.parse(raw.get("setting")),
                    holders=tuple(_as_list(raw.get("holders"))),
                    mount=raw.get("mount"),
                    attempts=AttemptKeys(
                        attempts.get("total"),
                        attempts.get("retries"),
                        attempts.get("mode"),
                        frozenset(_as_list(attempts.get("counting_modes"))),
                    ),
                ),
            )
        self.transient_exceptions = set(_as_list(retries.get("transient_exceptions")))
        self.transient_statuses = {int(s) for s in _as_list(retries.get("transient_statuses"))}
        self.catch_all_exceptions = set(_as_list(retries.get("catch_all_exceptions")))
        self.policy_default_catches = list(_as_list(retries.get("policy_default_catches")))
        self.ledger_functions: Matcher[bool] = Matcher()
        self.ledger_functions.add(_as_list(data.get("ledger_functions")), True)

    def _load_framework(self, framework: str, spec: Mapping[str, Any]) -> None:
        self.tool_forms["decorator"].add(
            _as_list(spec.get("decorators")), ToolForm(framework, "decorator")
        )
        for raw in spec.get("factories") or []:
            self.tool_forms["factory"].add(
                _as_list(raw["callee"]),
                ToolForm(
                    framework,
                    "factory",
                    function=ArgRef.parse(raw.get("function")),
                    also=ArgRef.parse(raw.get("also")),
                    name=ArgRef.parse(raw.get("name")),
                    methods=tuple(_as_list(raw.get("methods"))),
                ),
            )
        for raw in spec.get("base_classes") or []:
            self.tool_forms["base_class"].add(
                _as_list(raw["qualname"]),
                ToolForm(
                    framework,
                    "base_class",
                    methods=tuple(_as_list(raw.get("methods"))),
                    methods_from_attribute=raw.get("methods_from_attribute"),
                    requires_attributes=tuple(_as_list(raw.get("requires_attributes"))),
                ),
            )
        for raw in spec.get("registries") or []:
            self.tool_forms["registry"].add(
                _as_list(raw["callee"]),
                ToolForm(framework, "registry", tools=ArgRef.parse(raw.get("tools"))),
            )
        if spec.get("metadata_kwarg"):
            self.metadata_kwargs[framework] = spec["metadata_kwarg"]
        if spec.get("annotations_kwarg"):
            self.annotations_kwargs[framework] = spec["annotations_kwarg"]
        self.plugin_entry_names |= frozenset(_as_list(spec.get("plugin_entries")))
        lowlevel = spec.get("lowlevel") or {}
        self.mcp_lowlevel_servers += _as_list(lowlevel.get("server"))
        self.mcp_tool_types += _as_list(lowlevel.get("tool_type"))

    @cached_property
    def checklist(self) -> Knowledge:
        """The checklist knowledge (``rules/checklist.yaml``) of this catalogue."""
        from agentguard.knowledge.checklist import Knowledge

        return Knowledge(self.data.get("checklist") or {})

    @cached_property
    def open_world(self) -> OpenWorld:
        """How a call no sink entry knows is judged (``effects.open_world``)."""
        from agentguard.knowledge.open_world import load_open_world

        return load_open_world(self.data.get("effects") or {}, self.verbs)

    @cached_property
    def digest(self) -> str:
        """Part of every cache key: a catalogue change invalidates cached facts."""
        return hashlib.sha256(json.dumps(self.data, sort_keys=True).encode()).hexdigest()[:16]


CATALOG_FILES = ("frameworks", "effects", "retries", "checklist")
USER_MARK = "_user"  # set on entries merged from the user's config (never in YAML files)
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
    for key, value in user.items():
        existing = builtin.get(key)
        if isinstance(value, list):
            combined[key] = list(value) + list(existing or [])
        elif isinstance(value, dict) and isinstance(existing, dict):
            combined[key] = _merge_table(value, existing)
        else:
            combined[key] = value
    return combined


def merge_extensions(data: dict[str, Any], extensions: Mapping[str, Any]) -> dict[str, Any]:
    """Merge user catalogue entries (from config) into the built-in data."""
    merged = json.loads(json.dumps(data))
    for framework, spec in (extensions.get("frameworks") or {}).items():
        target = merged["frameworks"].setdefault(framework, {})
        for key, value in spec.items():
            if isinstance(value, list):
                target[key] = list(target.get(key) or []) + value
            else:
                target[key] = value
    for section in ("effects", "retries"):
        for key, value in (extensions.get(section) or {}).items():
            existing = merged[section].get(key)
            if isinstance(value, list):
                if key == "sinks":
                    value = [{**entry, USER_MARK: True} for entry in value]
                # User entries come first, so they win over built-in globs.
                merged[section][key] = value + list(existing or [])
            elif isinstance(value, dict) and isinstance(existing, dict):
                # verbs, schema_verbs.kinds: the user's words join the built-in ones
                merged[section][key] = _merge_table(value, existing)
            else:
                merged[section][key] = value
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
