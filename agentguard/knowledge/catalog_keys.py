"""One definition per catalogue key.

Each key of a YAML catalogue is one field of a typed class (``Catalog``, ``Knowledge``, or an
entry such as ``Sink``), declared once by a helper here: where the key sits in the catalogue,
its JSON Schema, and how its YAML value becomes the field's value. Loading reads the fields
(``load_keys``, ``load_entry``); the catalogue schemas under ``agentguard/data/`` are generated
from the same fields (``file_schema``), and a test keeps the shipped files equal to them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from typing import Any, TypeVar, cast

from agentguard.knowledge.matcher import Matcher

T = TypeVar("T")
E = TypeVar("E")

_METADATA = "agentguard.catalog_key"


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


# ------------------------------------------------------------------ value schemas

WORDS = {"$ref": "#/$defs/words"}
IDENTIFIERS = {"$ref": "#/$defs/identifiers"}
QUALNAMES = {"$ref": "#/$defs/qualnames"}
STRINGS = {"$ref": "#/$defs/strings"}
NAMES = {"$ref": "#/$defs/names"}
REGEX = {"type": "string", "format": "regex"}
TEXT = {"type": "string"}
NONEMPTY_TEXT = {"type": "string", "minLength": 1}
IDENTIFIER = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
HEADERS = {"type": "array", "items": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]*$"}}
BOOLEAN = {"type": "boolean"}
VERB_CATEGORIES = ("read", "idempotent_write", "destructive", "non_idempotent")
# a verb table: category -> its words
VERB_TABLE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {category: WORDS for category in reversed(VERB_CATEGORIES)},
}

# Named schemas a catalogue key may refer to (``#/$defs/words``), with those of the entries
# the keys declare; a generated schema holds the ones it uses.
NAMED_DEFS: dict[str, Mapping[str, Any]] = {
    "identifiers": {
        "type": "array",
        "items": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
    },
    "words": {"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9]+$"}},
    "qualnames": {
        "description": "Qualified names after import resolution; fnmatch globs allowed.",
        "type": "array",
        "items": {"type": "string", "minLength": 1},
    },
    "strings": {"type": "array", "items": {"type": "string", "minLength": 1}},
    "names": {
        "oneOf": [
            {"type": "string", "minLength": 1},
            {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        ]
    },
}


# ------------------------------------------------------------------ loaders (YAML -> typed)


def frozen(raw: Any) -> frozenset[str]:
    return frozenset(as_list(raw))


def mutable(raw: Any) -> set[str]:
    return set(as_list(raw))


def ordered(raw: Any) -> tuple[str, ...]:
    return tuple(as_list(raw))


def unique(raw: Any) -> tuple[str, ...]:
    """In catalogue order, each once (an order some search depends on)."""
    return tuple(dict.fromkeys(as_list(raw)))


def listed(raw: Any) -> list[Any]:
    return as_list(raw)


def pattern(raw: Any) -> re.Pattern[str]:
    """A regex; with none, one that matches nothing."""
    return re.compile(raw or "$^")


def matcher(raw: Any) -> Matcher[bool]:
    found: Matcher[bool] = Matcher()
    found.add(as_list(raw), True)
    return found


def text(raw: Any) -> str | None:
    return raw


def text_or_empty(raw: Any) -> str:
    return "" if raw is None else str(raw)


def flag(raw: Any) -> bool:
    return bool(raw)


def maybe_flag(raw: Any) -> bool | None:
    return raw


def default_to(value: str) -> Callable[[Any], str]:
    """A loader of a text key that is ``value`` when absent."""

    def load(raw: Any) -> str:
        return value if raw is None else str(raw)

    return load


def table(raw: Any) -> dict[str, Any]:
    return dict(raw or {})


def names_pattern(template: str) -> Callable[[Any], re.Pattern[str]]:
    """A loader making a regex that matches any of the listed names literally, placed in
    ``template``'s ``{}``; with no names, one that matches nothing."""

    def load(raw: Any) -> re.Pattern[str]:
        words = list(dict.fromkeys(as_list(raw)))
        if not words:
            return re.compile("$^")
        return re.compile(template.format("|".join(re.escape(word) for word in words)))

    return load


def phrases_pattern(template: str) -> Callable[[Any], re.Pattern[str]]:
    """``names_pattern`` for phrases: the words of each listed phrase in order, any
    whitespace between them (``on conflict`` matches ``ON\n  CONFLICT``)."""

    def load(raw: Any) -> re.Pattern[str]:
        phrases = list(dict.fromkeys(as_list(raw)))
        if not phrases:
            return re.compile("$^")
        alternatives = (r"\s+".join(re.escape(w) for w in p.split()) for p in phrases)
        return re.compile(template.format("|".join(alternatives)))

    return load


# ------------------------------------------------------------------ declaring keys


class KeySpec:
    """A catalogue key: its dotted place (in the catalogue data for a section's key, in the
    entry for an entry's key), its JSON Schema, and its loader (handed None when absent).
    Entry keys only: the variants of the entry that require the key, and those that have
    it at all (empty: every variant). A plain class: a run makes some two hundred of them
    when it imports the catalogue."""

    __slots__ = ("at", "load", "only_in", "path", "required_in", "schema")

    def __init__(
        self,
        at: str,
        schema: Mapping[str, Any],
        load: Callable[[Any], Any],
        required_in: tuple[str, ...] = (),
        only_in: tuple[str, ...] = (),
    ) -> None:
        self.at = at
        self.path = tuple(at.split("."))
        self.schema = schema
        self.load = load
        self.required_in = required_in
        self.only_in = only_in

    def placed(self, at: str) -> KeySpec:
        """The same key, at another place (relative to its catalogue file)."""
        return KeySpec(at, self.schema, self.load, self.required_in, self.only_in)


_IMMUTABLE = (str, int, bool, float, frozenset, tuple, re.Pattern, type(None))


def key(
    at: str,
    schema: Mapping[str, Any],
    load: Callable[[Any], T],
    *,
    description: str | None = None,
    required: bool | tuple[str, ...] = False,
    only_in: tuple[str, ...] = (),
    defs: Mapping[str, Mapping[str, Any]] | None = None,
) -> T:
    """A field holding catalogue key ``at``. Its default is what an absent key loads to,
    except for a key required everywhere (``required=True``), which has none."""
    if description:
        schema = {"description": description, **schema}
    required_in = ("*",) if required is True else () if required is False else required
    spec = KeySpec(at, schema, load, required_in, only_in)
    for name, named in (defs or {}).items():
        if NAMED_DEFS.setdefault(name, named) != named:
            raise ValueError(f"two catalogue schemas named {name!r}")
    metadata = {_METADATA: spec}
    if required is True:
        return cast(T, field(metadata=metadata))
    empty = load(None)
    if isinstance(empty, _IMMUTABLE) or dataclasses.is_dataclass(empty):
        return cast(T, field(default=empty, metadata=metadata))
    made: T = field(default_factory=lambda: load(None), metadata=metadata)
    return made


def entry_schema(
    cls: type,
    variant: str = "",
    *,
    match: str | None = None,
    match_schema: Mapping[str, Any] = NAMES,
    closed: bool = True,
) -> dict[str, Any]:
    """The JSON Schema of one entry of ``cls`` (the ``variant`` of it a list holds), with
    the key listing the names it applies to first (``match``)."""
    properties: dict[str, Any] = {match: dict(match_schema)} if match else {}
    required = [match] if match else []
    for spec in entry_keys(cls, variant):
        properties[spec.at] = dict(spec.schema)
        if "*" in spec.required_in or variant in spec.required_in:
            required.append(spec.at)
    schema: dict[str, Any] = {"type": "object"}
    if required:
        schema["required"] = required
    if closed:
        schema["additionalProperties"] = False
    schema["properties"] = properties
    return schema


def entry(
    at: str,
    cls: type[E],
    *,
    description: str | None = None,
    name: str | None = None,
    optional: bool = False,
    only_in: tuple[str, ...] = (),
    required: tuple[str, ...] = (),
    closed: bool = True,
) -> E:
    """A key holding one entry of ``cls`` (a table); ``optional``: None when absent or
    empty. ``name``: its schema is shared in ``$defs`` under that name."""

    def load(raw: Any) -> Any:
        if optional and not raw:
            return None
        return load_entry(cls, raw or {})

    schema = entry_schema(cls, closed=closed)
    if name is None:
        return key(at, schema, load, description=description, only_in=only_in, required=required)
    reference = {"$ref": f"#/$defs/{name}"}
    return key(
        at,
        reference,
        load,
        description=description,
        only_in=only_in,
        required=required,
        defs={name: schema},
    )


def deferred_entry(at: str, cls: type, *, description: str | None = None) -> dict[str, Any]:
    """A key holding one entry of ``cls``, kept as its table (empty when absent) until its
    reader loads it with ``load_entry``: for a section a run may never read (a run its memo
    answers reads none of ``effects.open_world``), so loading the catalogue stays cheap."""
    return key(at, entry_schema(cls), table, description=description)


Placed = tuple[tuple[str, ...], E]  # an entry, with the names it applies to


def entries(
    at: str,
    cls: type[E],
    *,
    name: str,
    variant: str = "",
    match: str = "match",
    match_schema: Mapping[str, Any] = NAMES,
    context: Callable[[tuple[str, ...], Mapping[str, Any]], Mapping[str, Any]] | None = None,
) -> tuple[Placed[E], ...]:
    """A key listing entries of ``cls`` (of one ``variant``), each applying to the names
    under its ``match`` key; ``context`` gives each the fields that are no catalogue key.
    The entry's schema is shared in ``$defs`` under ``name``."""
    item = entry_schema(cls, variant, match=match, match_schema=match_schema)

    def load(raw: Any) -> tuple[Placed[E], ...]:
        placed = []
        for listed_entry in raw or ():
            patterns = ordered(listed_entry[match])
            extra = context(patterns, listed_entry) if context else {}
            placed.append((patterns, load_entry(cls, listed_entry, variant, **extra)))
        return tuple(placed)

    schema = {"type": "array", "items": {"$ref": f"#/$defs/{name}"}}
    return key(at, schema, load, defs={name: item})


def entry_list(at: str, cls: type[E]) -> list[E]:
    """A key listing entries of ``cls``."""

    def load(raw: Any) -> list[E]:
        return [load_entry(cls, listed_entry) for listed_entry in raw or ()]

    return key(at, {"type": "array", "items": entry_schema(cls)}, load)


def entry_keys(cls: type, variant: str = "") -> list[KeySpec]:
    """The catalogue keys of an entry class (of one variant), in declaration order."""
    return [
        spec
        for spec in _declared(cls)
        if not variant or not spec.only_in or variant in spec.only_in
    ]


def _declared(cls: type) -> tuple[KeySpec, ...]:
    return tuple(spec for _, spec in _fields(cls))


_FIELDS: dict[type, tuple[tuple[str, KeySpec], ...]] = {}


def _fields(cls: type) -> tuple[tuple[str, KeySpec], ...]:
    """(field name, key) of each catalogue-key field of ``cls``, in declaration order: an
    entry is a data class; a catalogue (``Catalog``) is a plain class holding the fields as
    class attributes, as making a data class of a hundred fields costs each run's start."""
    found = _FIELDS.get(cls)
    if found is None:
        if dataclasses.is_dataclass(cls):
            declared = [(f.name, f) for f in dataclasses.fields(cls)]
        else:
            declared = [
                (name, value)
                for owner in reversed(cls.__mro__)
                for name, value in vars(owner).items()
                if isinstance(value, dataclasses.Field)
            ]
        found = _FIELDS[cls] = tuple(
            (name, f.metadata[_METADATA]) for name, f in declared if _METADATA in f.metadata
        )
    return found


# (class, variant) -> (field name, key, loader) of each key the entry has: loading runs per
# entry on every run, so the keys are looked up once
_ENTRY_PLANS: dict[tuple[type, str], tuple[tuple[str, str, Callable[[Any], Any]], ...]] = {}


def load_entry(cls: type[E], raw: Mapping[str, Any], variant: str = "", **context: Any) -> E:
    """An entry of ``cls`` from its YAML table; ``context`` fills the fields that are no
    catalogue key (the framework of a tool form, the kind of a retry construct)."""
    plan = _ENTRY_PLANS.get((cls, variant))
    if plan is None:
        plan = _ENTRY_PLANS[cls, variant] = tuple(
            (name, spec.at, spec.load)
            for name, spec in _fields(cls)
            if not variant or not spec.only_in or variant in spec.only_in
        )
    get = raw.get
    values = {name: load(get(at)) for name, at, load in plan}
    if context:
        values.update(context)
    if cls in _RECORDS:
        record: E = object.__new__(cls)
        record.__dict__.update(values)
        return record
    return cls(**values)


_RECORDS: set[type] = set()


def record(cls: type[E]) -> type[E]:
    """Marks a plain class whose instances are entries read once from the catalogue and
    never made elsewhere: loaded by setting its fields, without the cost of making a data
    class (some milliseconds of every run's start for a few of them)."""
    _RECORDS.add(cls)
    return cls


def load_keys(target: object, data: Mapping[str, Any]) -> None:
    """Set each catalogue-key field of ``target`` from ``data``."""
    for name, spec in _fields(type(target)):
        value: Any = data
        for part in spec.path:
            # the catalogue data is plain dicts (YAML, JSON, merged config)
            value = value.get(part) if isinstance(value, dict) else None
        setattr(target, name, spec.load(value))


# ------------------------------------------------------------------ generating schemas


def section_keys(cls: type, root: str = "") -> list[KeySpec]:
    """The keys of ``cls`` under ``root`` (every key when empty), their place relative to
    it."""
    prefix = f"{root}." if root else ""
    return [
        spec.placed(spec.at.removeprefix(prefix))
        for spec in _declared(cls)
        if not root or spec.at.startswith(prefix) or spec.at == root
    ]


def file_schema(
    head: Mapping[str, Any], keys: Iterable[KeySpec], sections: Mapping[str, str]
) -> dict[str, Any]:
    """The JSON Schema of a catalogue file: ``head`` (``$schema``, title...), then a closed
    object of ``keys``, nested at their dots; ``sections`` describes the nested tables."""
    schema: dict[str, Any] = {**head, "type": "object", "additionalProperties": False}
    properties: dict[str, Any] = {"version": {"const": 1}}
    for spec in keys:
        place, parts = properties, spec.path
        for depth, part in enumerate(parts[:-1]):
            if part not in place:
                section: dict[str, Any] = {}
                description = sections.get(".".join(parts[: depth + 1]))
                if description:
                    section["description"] = description
                section.update(type="object", additionalProperties=False, properties={})
                place[part] = section
            place = place[part]["properties"]
        place[parts[-1]] = dict(spec.schema)
    schema["properties"] = properties
    used = _referenced(properties)
    if used:
        schema["$defs"] = {name: NAMED_DEFS[name] for name in used}
    return schema


def _referenced(schema: Any) -> list[str]:
    """The named schemas ``schema`` refers to, directly or through another, in the order
    first met."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name not in found:
                    found.append(name)
                    walk(NAMED_DEFS[name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found
