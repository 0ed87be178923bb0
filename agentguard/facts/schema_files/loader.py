"""Reading JSON and YAML files with positions: every value keeps the line and column where
it was written, so findings point into the file.

PyYAML's composer (libyaml when available) gives node marks for YAML, and JSON is read
through it too (YAML 1.1 flow syntax accepts the JSON documents tools write); JSON syntax
errors are reported by the standard ``json`` parser, whose positions follow JSON's grammar.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentguard.diagnostics import ScanProblem, Span

try:  # libyaml is 10x faster; the pure-Python loader gives the same nodes and marks
    _BaseLoader: type[Any] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader

# Only files mentioning one of these are parsed at all: every tool format names its
# input schema, its `function` type, or (for the manifest) agentguard itself.
MARKERS = (b"inputSchema", b"input_schema", b"function", b"parameters", b"agentguard")
# Stronger evidence, used to decide whether a file that does not even parse was meant to
# hold tools (then it is AG001) or is some other broken file (then it is not our business).
STRONG_MARKERS = (b"inputSchema", b"input_schema", b'"function"', b"type: function", b"agentguard")
MANIFEST_NAMES = ("agentguard.yaml", "agentguard.yml", "agentguard.json")
# Generated files that are big and never hold tool definitions.
NEVER_SCHEMAS = ("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "composer.lock")


class _Loader(_BaseLoader):
    """SafeLoader that reads unknown tags (`!Ref`, `!include`) as plain values instead of
    failing: a CloudFormation or Home Assistant file is then simply not a tool schema."""


def _construct_unknown(loader: Any, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


_Loader.add_multi_constructor("", _construct_unknown)
_Loader.add_multi_constructor("!", _construct_unknown)


@dataclass
class Document:
    """One parsed document of a file (YAML files may hold several)."""

    path: str
    data: Any
    node: yaml.Node | None
    index: int = 0
    text: str | None = None  # JSON: positions are composed only when a finding needs them

    @property
    def root(self) -> yaml.Node | None:
        if self.node is None and self.text is not None:
            try:
                nodes = _compose_all(self.text)
                self.node = nodes[0] if len(nodes) == 1 else None
            except (yaml.YAMLError, RecursionError, ValueError, TypeError):
                pass  # valid JSON that YAML 1.1 rejects: findings fall back to line 1
            self.text = None
        return self.node


@dataclass
class SyntaxProblem:
    path: str
    message: str
    span: Span


@dataclass
class Loaded:
    documents: list[Document] = field(default_factory=list)
    syntax: SyntaxProblem | None = None
    skipped: ScanProblem | None = None  # too big, binary, unreadable


def is_manifest_name(rel: str) -> bool:
    return rel.rsplit("/", 1)[-1] in MANIFEST_NAMES


def _mark_span(mark: Any, end: Any | None = None) -> Span:
    line, column = mark.line + 1, mark.column + 1
    if end is None:
        return Span(line, column, line, column + 1)
    return Span(line, column, end.line + 1, end.column + 1)


def _compose_all(text: str) -> list[yaml.Node]:
    loader = _Loader(text)
    try:
        nodes = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                nodes.append(node)
        return nodes
    finally:
        loader.dispose()


def _construct(node: yaml.Node) -> Any:
    loader = _Loader("")
    try:
        return loader.construct_document(node)
    finally:
        loader.dispose()


def parse_text(rel: str, data: bytes, force: bool = False) -> Loaded:
    """Parse a JSON or YAML file's bytes into positioned documents.

    ``force`` skips the cheap marker test (for files named like the manifest).
    """
    if not force and not any(marker in data for marker in MARKERS):
        return Loaded()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Loaded(skipped=ScanProblem(rel, f"not valid UTF-8: {exc.reason}"))
    likely_tools = force or any(marker in data for marker in STRONG_MARKERS)
    if rel.endswith(".json"):
        return _parse_json(rel, text, likely_tools)
    try:
        nodes = _compose_all(text)
        documents = [
            Document(rel, _construct(node), node, index) for index, node in enumerate(nodes)
        ]
    except yaml.MarkedYAMLError as exc:
        if "nesting depth" in (exc.problem or ""):
            # libyaml >= 0.2.5 refuses deep nesting itself; the pure-Python parser recurses.
            return Loaded(skipped=ScanProblem(rel, "too deeply nested to parse"))
        if not likely_tools:
            return Loaded()
        mark = exc.problem_mark or exc.context_mark
        span = _mark_span(mark) if mark is not None else Span.point(1)
        problem = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid syntax"
        kind = "JSON" if rel.endswith(".json") else "YAML"
        return Loaded(syntax=SyntaxProblem(rel, f"invalid {kind}: {problem}", span))
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        # Includes unhashable keys ({[1]: 2}) and nesting deep enough to exhaust the stack.
        if not likely_tools:
            return Loaded()
        return Loaded(syntax=SyntaxProblem(rel, f"cannot read: {exc}", Span.point(1)))
    return Loaded(documents=documents)


def _parse_json(rel: str, text: str, likely_tools: bool) -> Loaded:
    """JSON values come from the JSON parser (exact JSON semantics and error positions);
    the YAML composer only supplies the positions of the nodes."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if not likely_tools:
            return Loaded()
        span = Span(exc.lineno, exc.colno, exc.lineno, exc.colno + 1)
        return Loaded(syntax=SyntaxProblem(rel, f"invalid JSON: {exc.msg}", span))
    except RecursionError:
        return Loaded(skipped=ScanProblem(rel, "too deeply nested to parse"))
    return Loaded(documents=[Document(rel, value, None, text=text)])


def read_schema_file(path: Path, rel: str, max_size: int) -> Loaded:
    """Read and parse one candidate schema file; never raises."""
    name = rel.rsplit("/", 1)[-1]
    if name in NEVER_SCHEMAS:
        return Loaded()
    try:
        size = path.stat().st_size
        if size > max_size:
            return Loaded(
                skipped=ScanProblem(
                    rel, f"file is {size:,} bytes, over the max-file-size of {max_size:,}"
                )
            )
        data = path.read_bytes()
    except PermissionError:
        return Loaded(skipped=ScanProblem(rel, "permission denied"))
    except OSError as exc:
        return Loaded(skipped=ScanProblem(rel, exc.strerror or str(exc)))
    if b"\0" in data[:8192]:
        return Loaded(skipped=ScanProblem(rel, "binary file (contains NUL bytes)"))
    return parse_text(rel, data, force=is_manifest_name(rel))


# ---------------------------------------------------------------------------- positions


def node_span(node: yaml.Node) -> Span:
    return _mark_span(node.start_mark, node.end_mark)


def child(node: yaml.Node | None, key: str | int) -> yaml.Node | None:
    """The node of ``key`` in a mapping node, or of index ``key`` in a sequence node."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return value_node
    elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
        if 0 <= key < len(node.value):
            value: yaml.Node = node.value[key]
            return value
    return None


def key_of(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The node of the key itself (where `riks:` is written), in a mapping node."""
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return key_node
    return None


def node_at(root: yaml.Node | None, path: Sequence[str | int]) -> yaml.Node | None:
    """The deepest node along ``path`` (so a bad path still lands near the problem)."""
    current = root
    for part in path:
        nxt = child(current, part)
        if nxt is None:
            break
        current = nxt
    return current


def span_at(root: yaml.Node | None, path: Sequence[str | int]) -> Span:
    node = node_at(root, path)
    return node_span(node) if node is not None else Span.point(1)


def path_text(path: Sequence[str | int]) -> str:
    """`tools[1].inputSchema` for ("tools", 1, "inputSchema")."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"
