"""What a tool's registration declares about it: the ``@guarded`` decorator's fields, MCP
``ToolAnnotations``, a framework's metadata dict, and the catalogue's ``option_hints``
(``read_only=True``, ``side_effect="write"``) written as the registration's own keywords."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import ModuleFacts, Value
from agentguard.project.tool_facts import SELF_NAMES, Declaration

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def guarded_declaration(kwargs: dict[str, Value], span: Span, facts: ModuleFacts) -> Declaration:
    """What ``@guarded(risk=..., key=...)`` declares."""
    decl = Declaration(source="guarded", location=Location(facts.path, span))
    for field_name in ("risk", "idempotency", "replay"):
        value = kwargs.get(field_name)
        if value is not None:
            setattr(decl, field_name, value.string() or value.text.split(".")[-1].lower())
            decl.fields[field_name] = Location(facts.path, value.span or span)
    decl.has_key = "key" in kwargs
    decl.key = kwargs.get("key")
    decl.has_reconcile = "reconcile" in kwargs
    decl.retry = kwargs.get("retry")
    return decl


def declarations_from_options(
    project: ProjectIndex,
    framework: str,
    options: dict[str, Value],
    site: Location,
    facts: ModuleFacts,
) -> list[Declaration]:
    result: list[Declaration] = []
    # READ_ONLY = ToolAnnotations(readOnlyHint=True)  ...  @mcp.tool(annotations=READ_ONLY)
    annotations, annotations_path = _written_value(project, options.get("annotations"), site, facts)
    if annotations is not None:
        decl = annotations_declaration(project, annotations, annotations_path)
        if decl is not None:
            result.append(decl)
    metadata_key = project.catalog.metadata_kwargs.get(framework)
    metadata, metadata_path = _written_value(
        project, options.get(metadata_key) if metadata_key else None, site, facts
    )
    if metadata is not None and metadata.kind == "dict":
        decl = annotations_declaration(
            project, metadata, metadata_path, source="langchain-metadata"
        )
        if decl is not None and decl.declares_anything:
            result.append(decl)
    flagged = _option_declaration(project, options, site)
    if flagged is not None:
        result.append(flagged)
    return result


def _option_declaration(
    project: ProjectIndex, options: dict[str, Value], site: Location
) -> Declaration | None:
    """Semantics a tool's registration declares in its own keywords (``side_effect=False``,
    ``read_only=True``, ``side_effect="write"``), the catalogue's ``option_hints``."""
    decl = Declaration(source="registry", location=site)
    for attr, keys in project.catalog.option_hints.items():
        for key in keys:
            value = options.get(key)
            if value is None or value.kind != "const":
                continue
            where = Location(site.path, value.span or site.span)
            if attr == "side_effect" and isinstance(value.const, str):
                decl.risk = "read" if value.const.lower() in {"read", "none"} else value.const
                decl.fields["risk"] = where
            elif attr == "side_effect" and isinstance(value.const, bool):
                decl.read_only = not value.const
                decl.fields["read_only"] = where
            elif isinstance(value.const, bool):
                setattr(decl, attr, value.const)
                decl.fields[attr] = where
    return decl if decl.declares_anything else None


def _written_value(
    project: ProjectIndex, value: Value | None, site: Location, facts: ModuleFacts
) -> tuple[Value | None, str]:
    """An option's value, or the module variable it names, with the file it is written in
    (a variable imported from another module is written there)."""
    if value is not None and value.kind in {"name", "attr"}:
        held = project.module_variable_in(value.qualname)
        if held is None and value.kind == "name":
            # a variable of this module: its qualname is the type of what it holds
            # (``MUTATION = ToolAnnotations(...)`` names ``ToolAnnotations``)
            held = project.module_variable_in(f"{facts.module}.{value.text}")
        if held is not None:
            return held
    if value is not None and value.kind == "call":
        built = _built_by_helper(project, value)
        if built is not None:
            return built, site.path
    return value, site.path


def _built_by_helper(project: ProjectIndex, value: Value) -> Value | None:
    """``annotations=writes(destructive=False)``: a project function whose one returned
    value is a call or dict literal (``return ToolAnnotations(destructiveHint=destructive)``)
    stands for that value, each entry naming a parameter bound to the call's argument. It
    is located at the helper's call (the registration), where the tool's hints are chosen."""
    entry = project.functions.get(value.qualname or "")
    if entry is None:
        return None
    fn, _ = entry
    if len(fn.returns) != 1 or fn.returns[0].kind not in {"call", "dict"}:
        return None
    returned = fn.returns[0]
    params = [p for p in fn.params if p not in SELF_NAMES]
    bound: dict[str, Value] = dict(zip(params, value.call_args, strict=False))
    bound.update(value.call_kwargs)

    def substituted(entries: dict[str, Value]) -> dict[str, Value]:
        return {
            key: bound[item.text]
            if item.kind == "name" and item.text in bound
            else replace(item, span=value.span)
            for key, item in entries.items()
        }

    if returned.kind == "call":
        return replace(returned, span=value.span, call_kwargs=substituted(returned.call_kwargs))
    return replace(returned, span=value.span, items=substituted(returned.items))


def annotations_declaration(
    project: ProjectIndex, value: Value, path: str, source: str = "mcp-annotations"
) -> Declaration | None:
    """MCP ToolAnnotations (call or dict, camelCase or snake_case)."""
    if value.kind == "call":
        fields = value.call_kwargs
    elif value.kind == "dict":
        fields = value.items
    else:
        return None
    span = value.span or Span.point(1)
    decl = Declaration(source=source, location=Location(path, span))
    for attr, keys in project.catalog.annotation_hints.items():
        for key in keys:
            if key in fields and fields[key].kind == "const":
                const = fields[key].const
                if isinstance(const, bool):
                    setattr(decl, attr, const)
                    decl.fields[attr] = Location(path, fields[key].span or span)
    for key in ("risk", "idempotency", "replay"):
        if key in fields and fields[key].string():
            setattr(decl, key, fields[key].string())
            decl.fields[key] = Location(path, fields[key].span or span)
    if source == "mcp-annotations" and decl.declares_anything:
        decl.assume_mcp_defaults()
    return decl if decl.declares_anything else None
