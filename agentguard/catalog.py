"""The YAML catalogues under ``agentguard/rules/``: framework tool forms, side-effect sinks
and retry constructs, plus the user's extensions from config."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml

T = TypeVar("T")


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def normalise(qualname: str) -> str:
    return qualname.replace("()", "")


class Matcher(Generic[T]):
    """Maps qualified names to entries: exact names first, then glob patterns in order."""

    def __init__(self) -> None:
        self._exact: dict[str, T] = {}
        self._globs: list[tuple[re.Pattern[str], T]] = []
        self._memo: dict[str, T | None] = {}

    def add(self, patterns: Iterable[str], entry: T) -> None:
        for pattern in patterns:
            if any(ch in pattern for ch in "*?["):
                self._globs.append((re.compile(fnmatch.translate(pattern)), entry))
            else:
                self._exact.setdefault(pattern, entry)
        self._memo.clear()

    def __call__(self, qualname: str | None) -> T | None:
        if not qualname:
            return None
        if qualname in self._memo:
            return self._memo[qualname]
        name = normalise(qualname)
        found = self._exact.get(name)
        if found is None:
            for regex, entry in self._globs:
                if regex.match(name):
                    found = entry
                    break
        self._memo[qualname] = found
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
        for framework, spec in (data.get("frameworks") or {}).items():
            self._load_framework(framework, spec or {})
        effects = data.get("effects") or {}
        self.sinks: Matcher[Sink] = Matcher()
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
                pattern=patterns[0],
            )
            self.sinks.add(patterns, sink)
        self.reads: Matcher[bool] = Matcher()
        self.reads.add(_as_list(effects.get("reads")), True)
        verbs = effects.get("verbs") or {}
        self.verbs: dict[str, str] = {}
        for category in ("read", "idempotent_write", "destructive", "non_idempotent"):
            for verb in verbs.get(category) or []:
                self.verbs[verb] = category
        self.client_receiver = re.compile(effects.get("client_receiver_pattern") or "$^")
        retries = data.get("retries") or {}
        self.retries: Matcher[RetryConstruct] = Matcher()
        for kind in ("decorators", "wrappers", "http_retry", "global"):
            for raw in retries.get(kind) or []:
                construct = RetryConstruct(
                    kind=kind.rstrip("s") if kind != "http_retry" else kind,
                    library=raw.get("library", ""),
                    on=ArgRef.parse(raw.get("exceptions")),
                    default_catches_all=bool(raw.get("default_catches_all")),
                    methods_kwarg=tuple(_as_list(raw.get("methods_kwarg"))),
                    default_methods=tuple(_as_list(raw.get("default_methods"))),
                    scope_kwarg=raw.get("scope_kwarg"),
                    requires_kwarg=raw.get("requires_kwarg"),
                    what=raw.get("what", ""),
                )
                self.retries.add(_as_list(raw["match"]), construct)
        self.transient_exceptions = set(_as_list(retries.get("transient_exceptions")))
        self.catch_all_exceptions = set(_as_list(retries.get("catch_all_exceptions")))
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
        lowlevel = spec.get("lowlevel") or {}
        self.mcp_lowlevel_servers += _as_list(lowlevel.get("server"))
        self.mcp_tool_types += _as_list(lowlevel.get("tool_type"))

    @cached_property
    def digest(self) -> str:
        """Part of every cache key: a catalogue change invalidates cached facts."""
        return hashlib.sha256(json.dumps(self.data, sort_keys=True).encode()).hexdigest()[:16]


CATALOG_FILES = ("frameworks", "effects", "retries")


def builtin_data() -> dict[str, Any]:
    data: dict[str, Any] = {}
    package = Path(__file__).resolve().parent / "rules"
    for name in CATALOG_FILES:
        text = (package / f"{name}.yaml").read_text(encoding="utf-8")
        # libyaml's loader when present: the pure-Python one costs ~0.1 s on every run.
        loaded = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
        if name == "frameworks":
            data["frameworks"] = loaded.get("frameworks") or {}
        else:
            data[name] = loaded
    data["ledger_functions"] = [
        "agentguard.runtime.guarded",
        "agentguard.guarded",
        "agentguard.runtime.Runtime.ledger.*",
    ]
    return data


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
                # User entries come first, so they win over built-in globs.
                merged[section][key] = value + list(existing or [])
            else:
                merged[section][key] = value
    merged["ledger_functions"] = list(merged.get("ledger_functions") or []) + list(
        extensions.get("ledger_functions") or []
    )
    return merged


def load_catalog(extensions: Mapping[str, Any] | None = None) -> Catalog:
    data = builtin_data()
    if extensions:
        data = merge_extensions(data, extensions)
    return Catalog(data)
