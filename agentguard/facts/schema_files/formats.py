"""JSON Schemas of the tool-definition formats agentguard reads, and their validators.

Each schema checks what the provider or the MCP spec requires and what agentguard relies
on; fields a format may add later (``cache_control``, ``icons``, ``defer_loading``...) are
allowed, so a newer spec does not make a valid file look broken.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

MCP = "mcp"
OPENAI_CHAT = "openai-chat"
OPENAI_RESPONSES = "openai-responses"
OPENAI_FUNCTIONS = "openai-functions"  # legacy chat-completions `functions=[...]`
ANTHROPIC = "anthropic"
MANIFEST = "manifest"

FORMAT_TITLES = {
    MCP: "MCP Tool",
    OPENAI_CHAT: "OpenAI chat-completions tool",
    OPENAI_RESPONSES: "OpenAI Responses function tool",
    OPENAI_FUNCTIONS: "OpenAI legacy function",
    ANTHROPIC: "Anthropic tool",
    MANIFEST: "agentguard manifest",
}
FRAMEWORKS = {
    MCP: "mcp",
    OPENAI_CHAT: "openai",
    OPENAI_RESPONSES: "openai",
    OPENAI_FUNCTIONS: "openai",
    ANTHROPIC: "anthropic",
    MANIFEST: "agentguard",
}

_OBJECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"const": "object"},
        "properties": {"type": "object"},
        "required": {"type": "array", "items": {"type": "string"}},
    },
}
# Both providers reject names outside this alphabet; the Anthropic length is kept lenient.
_OPENAI_NAME: dict[str, Any] = {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}
_ANTHROPIC_NAME: dict[str, Any] = {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,128}$"}
_OPENAI_PARAMETERS: dict[str, Any] = {
    "anyOf": [
        {"type": "null"},
        {"type": "object", "properties": {"type": {"const": "object"}}},
    ]
}
_OPENAI_FUNCTION: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": _OPENAI_NAME,
        "description": {"type": "string"},
        "parameters": _OPENAI_PARAMETERS,
        "strict": {"type": ["boolean", "null"]},
    },
}

SCHEMAS: dict[str, dict[str, Any]] = {
    MCP: {
        "type": "object",
        "required": ["name", "inputSchema"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "inputSchema": _OBJECT_SCHEMA,
            "outputSchema": _OBJECT_SCHEMA,
            "annotations": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "readOnlyHint": {"type": "boolean"},
                    "destructiveHint": {"type": "boolean"},
                    "idempotentHint": {"type": "boolean"},
                    "openWorldHint": {"type": "boolean"},
                },
            },
            "icons": {"type": "array"},
            "_meta": {"type": "object"},
        },
    },
    OPENAI_CHAT: {
        "type": "object",
        "required": ["type", "function"],
        "properties": {"type": {"const": "function"}, "function": _OPENAI_FUNCTION},
    },
    OPENAI_RESPONSES: {
        "type": "object",
        "required": ["type", "name"],
        "properties": {
            "type": {"const": "function"},
            "name": _OPENAI_NAME,
            "description": {"type": ["string", "null"]},
            "parameters": _OPENAI_PARAMETERS,
            "strict": {"type": ["boolean", "null"]},
        },
    },
    OPENAI_FUNCTIONS: _OPENAI_FUNCTION,
    ANTHROPIC: {
        "type": "object",
        "required": ["name", "input_schema"],
        "properties": {
            "name": _ANTHROPIC_NAME,
            "description": {"type": "string"},
            "input_schema": _OBJECT_SCHEMA,
            "type": {"const": "custom"},
            "cache_control": {"type": ["object", "null"]},
            "strict": {"type": "boolean"},
        },
    },
}


def manifest_schema() -> dict[str, Any]:
    path = Path(__file__).resolve().parents[2] / "data" / "manifest.schema.json"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@cache
def validator(fmt: str) -> jsonschema.protocols.Validator:
    schema = manifest_schema() if fmt == MANIFEST else SCHEMAS[fmt]
    return jsonschema.Draft202012Validator(schema)
