"""One definition per catalogue key: the typed fields that load the catalogues also make
their JSON Schemas, so a key added in one place is both loaded and validated, and a shipped
schema that drifts from the fields fails here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from agentguard.knowledge.catalog import CATALOG_FILES, load_catalog
from agentguard.knowledge.catalog_keys import (
    WORDS,
    KeySpec,
    entry_keys,
    file_schema,
    frozen,
    key,
    load_keys,
    pattern,
    section_keys,
)
from agentguard.knowledge.catalog_schemas import catalogue_keys, generated_schema, schema_text
from agentguard.knowledge.open_world import OpenWorld

DATA = Path(__file__).resolve().parent.parent / "agentguard" / "data"
RULES = Path(__file__).resolve().parent.parent / "rules"


@pytest.mark.parametrize("name", CATALOG_FILES)
def test_shipped_schema_is_the_one_the_typed_fields_generate(name: str) -> None:
    shipped = (DATA / f"{name}.schema.json").read_text(encoding="utf-8")
    assert shipped == schema_text(name), (
        f"agentguard/data/{name}.schema.json differs from the catalogue's typed fields: "
        "run `python -m agentguard.knowledge.catalog_schemas` to write it again"
    )


def _leaf_keys(node: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The dotted keys of a catalogue's tables (a list's entries are not walked into)."""
    if not isinstance(node, dict):
        return {prefix}
    found: set[tuple[str, ...]] = set()
    for name, value in node.items():
        if name == "version":
            continue
        if isinstance(value, dict) and len(prefix) < 1 and name not in _TABLES:
            found |= _leaf_keys(value, (*prefix, name))
        else:
            found.add((*prefix, name))
    return found


# tables whose keys are data (a framework's name, an RPC call's name), not catalogue keys
_TABLES = {"frameworks", "rpc_dispatch", "framework_errors"}


@pytest.mark.parametrize("name", CATALOG_FILES)
def test_every_key_of_a_builtin_catalogue_is_a_typed_field(name: str) -> None:
    document = yaml.safe_load((RULES / f"{name}.yaml").read_text(encoding="utf-8"))
    declared = {spec.path for spec in catalogue_keys(name)}
    for path in _leaf_keys(document):
        assert any(path[: len(d)] == d for d in declared), f"{name}.yaml: {'.'.join(path)}"


def test_every_open_world_key_is_a_typed_field_and_every_field_a_key() -> None:
    # ``effects.open_world`` is one entry of ``OpenWorld``: its keys are the entry's fields
    section = yaml.safe_load((RULES / "effects.yaml").read_text(encoding="utf-8"))["open_world"]
    fields = [spec.at for spec in entry_keys(OpenWorld)]
    assert sorted(set(section) - set(fields)) == [], "open_world keys with no field of OpenWorld"
    assert sorted(set(fields) - set(section)) == [], "OpenWorld fields with no key in effects.yaml"
    generated = generated_schema("effects")["properties"]["open_world"]
    assert list(generated["properties"]) == fields
    assert generated["additionalProperties"] is False


class _Extended:
    """A catalogue grown by one word list and one pattern: each declared once, here."""

    log_words: frozenset[str] = key("effects.open_world_guards.log_words", WORDS, frozen)
    log_names: re.Pattern[str] = key(
        "effects.open_world_guards.log_names", {"type": "string", "format": "regex"}, pattern
    )

    def __init__(self, data: dict[str, Any]) -> None:
        load_keys(self, data)


def _extended_schema() -> dict[str, Any]:
    keys: list[KeySpec] = section_keys(_Extended, "effects")
    return file_schema({"title": "test"}, keys, {"open_world_guards": "Logs."})


def test_a_word_list_declared_once_is_loaded_and_validated() -> None:
    loaded = _Extended({"effects": {"open_world_guards": {"log_words": ["log", "journal"]}}})
    assert loaded.log_words == frozenset({"log", "journal"})
    assert not loaded.log_names.search("server.log")  # absent: matches nothing

    schema = _extended_schema()
    guards = schema["properties"]["open_world_guards"]
    assert guards["description"] == "Logs."
    assert set(guards["properties"]) == {"log_words", "log_names"}
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors({"open_world_guards": {"log_words": ["journal"]}}))
    errors = list(validator.iter_errors({"open_world_guards": {"log_words": ["Journal"]}}))
    assert [list(e.absolute_path) for e in errors] == [["open_world_guards", "log_words", 0]]
    misspelt = list(validator.iter_errors({"open_world_guards": {"log_word": ["journal"]}}))
    assert misspelt and "log_word" in misspelt[0].message


def test_catalogue_fields_load_what_the_yaml_says() -> None:
    catalog = load_catalog()
    effects = yaml.safe_load((RULES / "effects.yaml").read_text(encoding="utf-8"))
    assert catalog.post_query_keys == frozenset(effects["read_posts"]["query_keys"])
    assert catalog.key_holders == tuple(dict.fromkeys(effects["key_holders"]))
    assert catalog.verbs["delete"] == "destructive"
    checklist = yaml.safe_load((RULES / "checklist.yaml").read_text(encoding="utf-8"))
    assert catalog.checklist.timeout_kwargs == set(checklist["timeouts"]["timeout_kwargs"])
    assert [s.kwarg for s in catalog.checklist.error_settings] == [
        raw["kwarg"] for raw in checklist["error_settings"]
    ]


def test_open_world_fields_load_what_the_yaml_says() -> None:
    effects = yaml.safe_load((RULES / "effects.yaml").read_text(encoding="utf-8"))
    section = effects["open_world"]
    world = load_catalog().open_world
    assert world.terminals == frozenset(section["builder_terminals"])
    assert world.batch_request_keys == tuple(section["batch_request_keys"])
    assert world.read_commands["kubectl"] == frozenset(section["read_commands"]["kubectl"])
    assert world.client_roots.search("stripe_client")
    assert world.reads(section["reads"][-1])
    # the section's verbs join the effect catalogue's
    assert world.verb_class("archive_thread") == "idempotent_write"  # open_world.verbs
    assert world.verb_class("delete_thread") == "destructive"  # effects.verbs
    # a noun alone is looked up; before a verb, it is what the verb acts on
    assert world.verb_class("issue") == "read"
    assert world.verb_class("issue_update") == "idempotent_write"


def test_a_user_open_world_verb_takes_the_category_listed_later() -> None:
    # a verb the built-in section lists as a write, listed again by the user as a read: the
    # read table comes later in the section, so the read wins (and the other way round)
    moved = load_catalog({"effects": {"open_world": {"verbs": {"read": ["archive"]}}}})
    assert moved.open_world.verb_class("archive_thread") == "read"
    back = load_catalog({"effects": {"open_world": {"verbs": {"non_idempotent": ["export"]}}}})
    assert back.open_world.verb_class("export_report") == "read"
