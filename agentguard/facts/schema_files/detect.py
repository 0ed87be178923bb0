"""Which documents hold tool definitions, in which format, decided by content.

A document is a tool schema when its shape says so (an MCP ``inputSchema``, an Anthropic
``input_schema``, an OpenAI ``"type": "function"``, an agentguard manifest marker); any
other JSON or YAML (package.json, CI workflows, compose files, Kubernetes objects) yields
nothing. Detected definitions are validated against the format's JSON Schema; each error
becomes an issue at the position of the offending value.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.diagnostics import Location, Span
from agentguard.facts.schema_files.formats import (
    ANTHROPIC,
    FORMAT_TITLES,
    MANIFEST,
    MCP,
    OPENAI_CHAT,
    OPENAI_FUNCTIONS,
    OPENAI_RESPONSES,
    validator,
)
from agentguard.facts.schema_files.loader import Document, key_of, node_at, node_span, path_text

Path_ = tuple[str | int, ...]
MAX_ISSUES_PER_FILE = 50


@dataclass
class SchemaIssue:
    """A tool-schema file that does not validate (reported as AG001)."""

    location: Location
    message: str
    format: str | None = None


@dataclass
class SchemaTool:
    """One tool definition read from a schema file."""

    name: str
    format: str
    location: Location  # where the name is written
    site: Location  # the whole definition
    description: str = ""
    params: list[str] = field(default_factory=list)
    annotations: dict[str, Any] | None = None
    annotation_locations: dict[str, Location] = field(default_factory=dict)


@dataclass
class ManifestEntry:
    """One tool of an agentguard manifest."""

    name: str
    location: Location
    fields: dict[str, Any]
    field_locations: dict[str, Location] = field(default_factory=dict)


@dataclass
class Detected:
    tools: list[SchemaTool] = field(default_factory=list)
    manifest: list[ManifestEntry] = field(default_factory=list)
    issues: list[SchemaIssue] = field(default_factory=list)


def classify(item: Any) -> str | None:
    """The format of one tool definition, or None when it is not one we can read.

    Provider built-in tools (``{"type": "web_search"}``, Anthropic server tools with a
    dated ``type``) are definitions too, but carry nothing to judge: None.
    """
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if "inputSchema" in item:
        return MCP
    if "input_schema" in item:
        return ANTHROPIC
    if kind == "function":
        return OPENAI_CHAT if "function" in item else OPENAI_RESPONSES
    if kind is None and isinstance(item.get("function"), dict) and "name" in item["function"]:
        return OPENAI_CHAT  # a chat-completions tool that forgot its "type"
    return None


def _list_format(items: list[Any]) -> str | None:
    """The format of a list of tool definitions: that of its recognisable items."""
    formats = [f for f in (classify(i) for i in items) if f is not None]
    if not formats:
        return None
    return max(sorted(set(formats)), key=formats.count)


def _is_builtin(item: Any) -> bool:
    kind = item.get("type") if isinstance(item, dict) else None
    return isinstance(kind, str) and kind not in {"function", "custom"}


def _candidates(document: Document, manifest_name: bool) -> Iterator[tuple[str, Path_]]:
    """(format, path) of every tool definition (or manifest) in a document."""
    data = document.data
    if isinstance(data, dict):
        if "agentguard" in data or (manifest_name and "tools" in data):
            yield MANIFEST, ()
            return
        result = data.get("result")
        if data.get("jsonrpc") is not None and isinstance(result, dict):
            tools = result.get("tools")
            if isinstance(tools, list):
                yield from _list_candidates(tools, ("result", "tools"))
            return
        tools = data.get("tools")
        if isinstance(tools, list):
            yield from _list_candidates(tools, ("tools",))
            return
        functions = data.get("functions")
        if isinstance(functions, list) and any(
            isinstance(f, dict) and "name" in f and "parameters" in f for f in functions
        ):
            for index in range(len(functions)):
                yield OPENAI_FUNCTIONS, ("functions", index)
            return
        fmt = classify(data)
        if fmt is not None:
            yield fmt, ()
    elif isinstance(data, list):
        yield from _list_candidates(data, ())


def _list_candidates(items: list[Any], base: Path_) -> Iterator[tuple[str, Path_]]:
    fmt = _list_format(items)
    if fmt is None:
        return
    for index, item in enumerate(items):
        if _is_builtin(item):
            continue
        yield classify(item) or fmt, (*base, index)


def _value_at(data: Any, path: Sequence[str | int]) -> Any:
    for part in path:
        data = data[part]
    return data


def _locate(document: Document, path: Sequence[str | int]) -> Location:
    node = node_at(document.root, path)
    return Location(document.path, node_span(node) if node is not None else Span.point(1))


def _key_location(document: Document, path: Sequence[str | int], key: str) -> Location:
    node = key_of(node_at(document.root, path), key)
    if node is None:
        return _locate(document, (*path, key))
    return Location(document.path, node_span(node))


def _errors(
    document: Document, fmt: str, value: Any, base: Path_
) -> Iterator[tuple[SchemaIssue, Path_]]:
    title = FORMAT_TITLES[fmt]
    errors = sorted(
        validator(fmt).iter_errors(value),
        key=lambda e: (list(map(str, e.absolute_path)), e.message),
    )
    for error in errors:
        path = (*base, *error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set((error.schema or {}).get("properties", {}))  # type: ignore[union-attr]
            extra = sorted(k for k in error.instance if k not in allowed)
            if extra:
                location = _key_location(document, path, str(extra[0]))
                issue = SchemaIssue(
                    location,
                    f"{title}: unknown field `{extra[0]}` in `{path_text(path)}`"
                    + (f" (allowed: {', '.join(sorted(allowed))})" if allowed else ""),
                    fmt,
                )
                yield issue, (*path, str(extra[0]))
                continue
        detail = error.message
        if error.validator == "type":
            detail = (
                f"expected {_type_words(error.validator_value)}, found {_json_type(error.instance)}"
            )
            if isinstance(error.instance, (str, int, float)):
                detail += f" {error.instance!r}"
        message = f"{title}: `{path_text(path)}`: {detail}"
        yield SchemaIssue(_locate(document, path), message, fmt), path


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
               (list, "array"), (dict, "object"), (type(None), "null"))  # fmt: skip


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "value")


def _type_words(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join(f"an {n}" if str(n)[0] in "aeiou" else f"a {n}" for n in names)


def _input_params(schema: Any) -> list[str]:
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        return [str(k) for k in schema["properties"]]
    return []


def _tool(document: Document, fmt: str, path: Path_) -> SchemaTool | None:
    item = _value_at(document.data, path)
    body_path = path
    if fmt == OPENAI_CHAT:
        body_path = (*path, "function")
        item = item.get("function")
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
        return None
    if fmt == MCP:
        params = _input_params(item.get("inputSchema"))
    elif fmt == ANTHROPIC:
        params = _input_params(item.get("input_schema"))
    else:
        params = _input_params(item.get("parameters"))
    description = item.get("description")
    tool = SchemaTool(
        name=item["name"],
        format=fmt,
        location=_locate(document, (*body_path, "name")),
        site=_locate(document, path),
        description=description.strip() if isinstance(description, str) else "",
        params=params,
    )
    annotations = item.get("annotations") if fmt == MCP else None
    if isinstance(annotations, dict):
        tool.annotations = annotations
        for key in annotations:
            tool.annotation_locations[str(key)] = _locate(
                document, (*path, "annotations", str(key))
            )
    return tool


def _manifest(document: Document, bad: set[Path_]) -> Iterator[ManifestEntry]:
    """Manifest entries; a field that failed validation is left out (and reported), so
    one typo does not discard the whole manifest."""
    data = document.data
    defaults = data.get("defaults") if isinstance(data.get("defaults"), dict) else {}
    tools = data.get("tools")
    if not isinstance(tools, dict):
        return
    for name, spec in tools.items():
        if not isinstance(spec, dict):
            spec = {}
        fields: dict[str, Any] = {}
        locations: dict[str, Location] = {}
        for base, values in ((("defaults",), defaults), (("tools", str(name)), spec)):
            for key, value in values.items():
                where = (*base, str(key))
                if any(p[: len(where)] == where or p == where[:-1] for p in bad):
                    continue
                fields[str(key)] = value
                locations[str(key)] = _locate(document, where)
        yield ManifestEntry(
            name=str(name),
            location=_key_location(document, ("tools",), str(name)),
            fields=fields,
            field_locations=locations,
        )


def detect(documents: Sequence[Document], manifest_name: bool = False) -> Detected:
    """Tool definitions, manifest entries and validation issues of one file's documents."""
    result = Detected()
    for document in documents:
        for fmt, path in _candidates(document, manifest_name):
            value = _value_at(document.data, path)
            found = list(_errors(document, fmt, value, path))
            result.issues.extend(issue for issue, _ in found)
            if fmt == MANIFEST:
                result.manifest.extend(_manifest(document, {p for _, p in found}))
                continue
            tool = _tool(document, fmt, path)
            if tool is not None:
                result.tools.append(tool)
    if len(result.issues) > MAX_ISSUES_PER_FILE:
        dropped = len(result.issues) - MAX_ISSUES_PER_FILE
        result.issues = result.issues[:MAX_ISSUES_PER_FILE]
        last = result.issues[-1]
        result.issues[-1] = SchemaIssue(
            last.location, f"{last.message} (and {dropped} more problems in this file)", None
        )
    return result
