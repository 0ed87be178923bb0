"""The JSON Schemas of the catalogues (``agentguard/data/<name>.schema.json``), generated
from the typed fields that load them: a key's place, schema and loader are declared once,
on its field. ``python -m agentguard.knowledge.catalog_schemas`` writes the files again after
a key is added or changed; a test fails while a shipped file differs from what this makes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agentguard.knowledge.catalog import SECTIONS, Catalog
from agentguard.knowledge.catalog_keys import KeySpec, file_schema, section_keys
from agentguard.knowledge.checklist import Knowledge

DATA = Path(__file__).resolve().parent.parent / "data"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

# name -> the file's heading
_HEADS: dict[str, dict[str, Any]] = {
    "frameworks": {
        "$schema": DRAFT,
        "$id": "https://agentguard.dev/schemas/catalog/frameworks.json",
        "title": "agentguard framework catalogue: how each agent framework declares tools",
    },
    "effects": {
        "$schema": DRAFT,
        "$id": "https://agentguard.dev/schemas/catalog/effects.json",
        "title": "agentguard effect catalogue: side-effect sinks, read-only calls, write verbs",
    },
    "retries": {
        "$schema": DRAFT,
        "$id": "https://agentguard.dev/schemas/catalog/retries.json",
        "title": "agentguard retry catalogue: constructs that re-run code",
    },
    "checklist": {
        "$schema": DRAFT,
        "title": "agentguard checklist catalogue (Q3-Q8 knowledge)",
        "required": ["version"],
    },
}


def catalogue_keys(name: str) -> list[KeySpec]:
    """The keys of catalogue file ``name``, each placed relative to the file."""
    if name == "frameworks":
        # the file's two tables, ``frameworks`` and ``tool_functions``, sit at the top of
        # the catalogue data as they are
        return [
            spec
            for spec in section_keys(Catalog)
            if spec.path[0] in {"frameworks", "tool_functions"}
        ]
    if name == "checklist":
        return section_keys(Knowledge)
    return section_keys(Catalog, name)


def generated_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of catalogue file ``name`` (``effects``...), from its typed fields."""
    prefix = "" if name in {"frameworks", "checklist"} else f"{name}."
    sections = {
        place.removeprefix(prefix): text
        for place, text in SECTIONS.items()
        if place.startswith(prefix)
    }
    return file_schema(_HEADS[name], catalogue_keys(name), sections)


def schema_text(name: str) -> str:
    return json.dumps(generated_schema(name), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    for name in _HEADS:
        path = DATA / f"{name}.schema.json"
        path.write_text(schema_text(name), encoding="utf-8")
        print(f"wrote {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
