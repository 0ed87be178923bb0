"""The project model: tools, their declarations and effect summaries, the call graph.

Built from per-file facts (``python.facts``) and schema documents; checks read it and
never walk syntax themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.catalog import Catalog, RetryConstruct, Sink, ToolForm
from agentguard.diagnostics import Confidence, EvidenceStep, Location, ScanProblem, Span
from agentguard.python.facts import Call, ClassDef, Function, ModuleFacts, Value

if TYPE_CHECKING:
    from agentguard.config import Config

GUARDED_NAMES = (
    "agentguard.runtime.guarded",
    "agentguard.guarded",
    "agentguard.runtime.api.guarded",
)
SELF_NAMES = {"self", "cls"}
INJECTED_PARAMS = {"self", "cls", "ctx", "context", "run_context", "config", "callbacks", "runtime"}
REMOTE_EFFECTS = {"network_write", "payment", "message"}
WRITE_EFFECTS = {"network_write", "payment", "message", "write", "destructive", "exec", "unknown"}
KEY_KWARG_RE = re.compile(
    r"(?i)^(idempotency_?key|idem_?key|idempotency_?token|dedupe?_?(id|key)|deduplication_?id|"
    r"client_?token|client_?request_?(id|token)|request_?token|messagededuplicationid|clienttoken|"
    r"idempotencytoken|clientrequesttoken)$"
)
KEY_HEADER_RE = re.compile(r"(?i)^(x-)?idempotency[-_]?key$|^x-request-id$|^x-idempotency-token$")
FRESH_CALLS = re.compile(
    r"^(uuid\.uuid[14]|uuid\.uuid4\(\)\.hex|time\.time(_ns)?|time\.monotonic(_ns)?|"
    r"datetime\.(datetime\.)?(now|utcnow|today)|random\..*|secrets\..*|os\.urandom|ulid\..*|"
    r"nanoid\..*|shortuuid\..*)$"
)
HASH_CALLS = re.compile(r"^(hashlib\..*|hash|uuid\.uuid[35]|zlib\.crc32|xxhash\..*|mmh3\..*)$")
SCOPE_NAMES = re.compile(
    r"(?i)(user|tenant|account|customer|run|session|thread|approval|approved|call_?id|"
    r"tool_call|step|conversation|workflow|request_id|trace)"
)
SQL_WRITE_RE = re.compile(
    r"(?is)^\s*(insert|update|delete|merge|upsert|replace|create|drop|alter|truncate)\b"
)
SQL_READ_RE = re.compile(
    r"(?is)^\s*(select|with\s+\w+\s+as\s*\(\s*select|show|explain|pragma|describe)\b"
)


@dataclass
class Declaration:
    """What a tool says about itself: risk, idempotency, replay (and MCP hints)."""

    source: str  # guarded | mcp-annotations | langchain-metadata | manifest | schema
    location: Location
    risk: str | None = None
    idempotency: str | None = None
    replay: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent_hint: bool | None = None
    has_key: bool = False
    has_reconcile: bool = False
    key: Value | None = None
    retry: Value | None = None
    fields: dict[str, Location] = field(default_factory=dict)  # where each field is written

    @property
    def declares_anything(self) -> bool:
        return any(
            v is not None
            for v in (
                self.risk,
                self.idempotency,
                self.replay,
                self.read_only,
                self.destructive,
                self.idempotent_hint,
            )
        )

    @property
    def says_read_only(self) -> bool:
        return self.risk == "read" or self.read_only is True

    @property
    def says_idempotent(self) -> bool:
        return self.idempotency == "idempotent" or (
            self.idempotent_hint is True and self.read_only is not True
        )


@dataclass
class KeyEvidence:
    """The idempotency key that reaches a sink and where it comes from."""

    value: Value
    origin: str  # runtime | param | fresh | args_hash | scoped | unknown
    detail: str = ""
    param: str | None = None
    location: Location | None = None


@dataclass
class Effect:
    kind: str
    idempotent: bool | None
    remote: bool
    sink: str
    site: Location
    call: Call
    chain: tuple[EvidenceStep, ...]
    confidence: Confidence
    method: str | None = None
    key: KeyEvidence | None = None
    heuristic: bool = False
    function: str = ""  # qualname of the function holding the sink call

    @property
    def writes(self) -> bool:
        return self.kind in WRITE_EFFECTS

    @property
    def non_idempotent(self) -> bool:
        return self.writes and self.idempotent is not True

    @property
    def remote_write(self) -> bool:
        return self.kind in REMOTE_EFFECTS or (self.kind == "write" and self.remote)

    def describe(self) -> str:
        verb = f"{self.method} " if self.method else ""
        return f"{verb}{self.sink}".strip()


@dataclass
class ToolFacts:
    name: str
    framework: str
    form: str
    path: str
    anchor: Location
    functions: list[str]
    symbol: str
    site: Location
    params: list[str] = field(default_factory=list)
    options: dict[str, Value] = field(default_factory=dict)
    declarations: list[Declaration] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    schema_only: bool = False
    description: str = ""

    @property
    def guarded(self) -> Declaration | None:
        return next((d for d in self.declarations if d.source == "guarded"), None)

    @property
    def declaration(self) -> Declaration | None:
        return next((d for d in self.declarations if d.declares_anything), None)

    def writes(self) -> list[Effect]:
        return [e for e in self.effects if e.writes]

    def non_idempotent_writes(self) -> list[Effect]:
        return [e for e in self.effects if e.non_idempotent]

    @property
    def is_read_only(self) -> bool:
        return not self.writes()


@dataclass
class RetryUse:
    """A construct that re-runs code: a decorator, a wrapper call or a hand-written loop."""

    kind: str  # decorator | wrapper | loop | with_retry | global | http_retry
    library: str
    location: Location
    function: str | None  # the function whose body is retried (None: module level)
    catches: list[str] | None  # named exceptions; None: every exception
    construct: RetryConstruct | None = None
    call: Call | None = None
    covered_orders: tuple[int, int] | None = None  # for loops: call orders retried
    text: str = ""


def _first_word(method: str) -> str:
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", method).lower().lstrip("_")
    return snake.split("_", 1)[0]


def _arg(call_args: list[Value], call_kwargs: dict[str, Value], ref: object) -> Value | None:
    kwargs = getattr(ref, "kwarg", ()) or ()
    for name in kwargs:
        if name in call_kwargs:
            return call_kwargs[name]
    index = getattr(ref, "arg", None)
    if index is not None and index < len(call_args):
        return call_args[index]
    return None


class ProjectModel:
    def __init__(self, modules: Iterable[ModuleFacts], catalog: Catalog) -> None:
        self.catalog = catalog
        self.modules: dict[str, ModuleFacts] = {m.path: m for m in modules}
        self.functions: dict[str, tuple[Function, ModuleFacts]] = {}
        self.classes: dict[str, tuple[ClassDef, ModuleFacts]] = {}
        self.by_name: dict[str, list[str]] = {}
        self.module_types: dict[str, dict[str, str]] = {}
        self.calls_by_function: dict[str | None, list[Call]] = {}
        for facts in self.modules.values():
            for fn in facts.functions.values():
                self.functions[fn.qualname] = (fn, facts)
                self.by_name.setdefault(fn.name, []).append(fn.qualname)
            for cls in facts.classes.values():
                self.classes[cls.qualname] = (cls, facts)
            types: dict[str, str] = {}
            for assignment in facts.assignments:
                value = assignment.value
                if assignment.function is None and value.kind == "call" and value.qualname:
                    last = value.qualname.rsplit(".", 1)[-1]
                    if last[:1].isupper():
                        types.setdefault(assignment.target, value.qualname)
            self.module_types[facts.module] = types
            for call in facts.calls:
                key = f"{facts.path}::{call.function}" if call.function is None else call.function
                self.calls_by_function.setdefault(key, []).append(call)
        self.tools: list[ToolFacts] = []
        self.problems: list[ScanProblem] = []
        self.config: Config | None = None
        self.schema_files: list[tuple[Path, str]] = []
        self._summaries: dict[str, list[Effect]] = {}
        self.discover_tools()
        self.infer_effects()

    # ------------------------------------------------------------------ lookups
    def function(self, qualname: str) -> Function | None:
        entry = self.functions.get(qualname)
        return entry[0] if entry else None

    def module_of(self, qualname: str) -> ModuleFacts | None:
        entry = self.functions.get(qualname)
        return entry[1] if entry else None

    def calls_in(self, qualname: str) -> list[Call]:
        return self.calls_by_function.get(qualname, [])

    def location(self, facts: ModuleFacts, span: Span) -> Location:
        return Location(facts.path, span)

    def resolve_callee(self, call: Call, caller: Function | None, facts: ModuleFacts) -> str:
        """Resolve self.x.y and module-level instances into a qualified callee name."""
        callee = call.callee.replace("()", "")
        parts = callee.split(".")
        if parts[0] in SELF_NAMES and caller is not None and caller.class_name:
            cls_qual = caller.class_name
            if len(parts) == 2:
                method = self.find_method(cls_qual, parts[1])
                return method or f"{cls_qual}.{parts[1]}"
            attr_type = self.self_type(cls_qual, parts[1])
            if attr_type:
                return ".".join([attr_type, *parts[2:]])
            return callee
        types = self.module_types.get(facts.module, {})
        if parts[0] in types:
            return ".".join([types[parts[0]], *parts[1:]])
        if parts[0] in self.classes or callee in self.functions:
            return callee
        if len(parts) >= 2:
            owner = ".".join(parts[:-1])
            if owner in self.classes:
                method = self.find_method(owner, parts[-1])
                if method:
                    return method
            # An instance of a project class whose method is called: Cls.method
        return callee

    def self_type(self, cls_qual: str, attr: str) -> str | None:
        seen: set[str] = set()
        queue = [cls_qual]
        while queue:
            current = queue.pop(0)
            if current in seen or current not in self.classes:
                continue
            seen.add(current)
            cls = self.classes[current][0]
            if attr in cls.self_types:
                return cls.self_types[attr]
            queue.extend(cls.bases)
        return None

    def find_method(self, cls_qual: str, name: str) -> str | None:
        seen: set[str] = set()
        queue = [cls_qual]
        while queue:
            current = queue.pop(0)
            if current in seen:
                continue
            seen.add(current)
            candidate = f"{current}.{name}"
            if candidate in self.functions:
                return candidate
            if current in self.classes:
                queue.extend(self.classes[current][0].bases)
        return None

    def project_function(self, qualname: str | None, facts: ModuleFacts) -> str | None:
        """The project function a name refers to, if any."""
        if not qualname:
            return None
        if qualname in self.functions:
            return qualname
        local = f"{facts.module}.{qualname}"
        if local in self.functions:
            return local
        # from pkg import mod; mod.fn  or  package re-exports
        tail = qualname.rsplit(".", 1)[-1]
        candidates = self.by_name.get(tail, [])
        module_prefix = qualname.rsplit(".", 1)[0] if "." in qualname else ""
        for candidate in candidates:
            if module_prefix and candidate.startswith(module_prefix + "."):
                return candidate
        return None

    def class_bases(self, cls: ClassDef) -> list[str]:
        """All base names, following project classes transitively."""
        result: list[str] = []
        queue = list(cls.bases)
        seen: set[str] = set()
        while queue:
            base = queue.pop(0)
            if base in seen:
                continue
            seen.add(base)
            result.append(base)
            if base in self.classes:
                queue.extend(self.classes[base][0].bases)
            else:
                # a base written as a bare name imported from a sibling module
                for qual, (other, _) in self.classes.items():
                    if qual.endswith("." + base) and qual not in seen:
                        queue.extend(other.bases)
        return result

    # ------------------------------------------------------------------ tool discovery
    def _model_params(self, fn: Function) -> list[str]:
        return [p for p in fn.params if p not in INJECTED_PARAMS and not p.startswith("_")]

    def _add_tool(self, tool: ToolFacts) -> None:
        for existing in self.tools:
            if existing.functions == tool.functions and existing.functions:
                # The same function registered twice (decorated and listed): keep one tool,
                # gather every declaration and option.
                existing.declarations += tool.declarations
                for key, value in tool.options.items():
                    existing.options.setdefault(key, value)
                return
        self.tools.append(tool)

    def _tool_from_function(
        self,
        qualname: str,
        form: ToolForm,
        site: Location,
        name: str | None,
        options: dict[str, Value],
        extra: list[str] | None = None,
    ) -> ToolFacts | None:
        entry = self.functions.get(qualname)
        if entry is None:
            return None
        fn, facts = entry
        functions = [qualname, *(extra or [])]
        tool = ToolFacts(
            name=name or fn.name,
            framework=form.framework,
            form=form.form,
            path=facts.path,
            anchor=Location(facts.path, fn.name_span),
            functions=functions,
            symbol=qualname,
            site=site,
            params=self._model_params(fn),
            options=options,
            description=(fn.docstring or "").strip().split("\n", 1)[0],
        )
        tool.declarations += self._declarations_from_options(form.framework, options, site, facts)
        for dec in fn.decorators:
            if dec.qualname in GUARDED_NAMES or dec.qualname.endswith("agentguard.runtime.guarded"):
                tool.declarations.append(self._guarded_declaration(dec.kwargs, dec.span, facts))
        return tool

    def _guarded_declaration(
        self, kwargs: dict[str, Value], span: Span, facts: ModuleFacts
    ) -> Declaration:
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

    def _declarations_from_options(
        self, framework: str, options: dict[str, Value], site: Location, facts: ModuleFacts
    ) -> list[Declaration]:
        result: list[Declaration] = []
        annotations = options.get("annotations")
        if annotations is not None:
            decl = self.annotations_declaration(annotations, site.path)
            if decl is not None:
                result.append(decl)
        metadata_key = self.catalog.metadata_kwargs.get(framework)
        metadata = options.get(metadata_key) if metadata_key else None
        if metadata is not None and metadata.kind == "dict":
            decl = self.annotations_declaration(metadata, site.path, source="langchain-metadata")
            if decl is not None and decl.declares_anything:
                result.append(decl)
        return result

    def annotations_declaration(
        self, value: Value, path: str, source: str = "mcp-annotations"
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
        names = {
            "read_only": ("readOnlyHint", "read_only_hint"),
            "destructive": ("destructiveHint", "destructive_hint"),
            "idempotent_hint": ("idempotentHint", "idempotent_hint"),
        }
        for attr, keys in names.items():
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
            # The spec's pessimistic defaults for hints left out.
            if decl.read_only is None:
                decl.read_only = False
            if decl.read_only is False and decl.destructive is None:
                decl.destructive = True
            if decl.read_only is False and decl.idempotent_hint is None:
                decl.idempotent_hint = False
        return decl if decl.declares_anything else None

    def discover_tools(self) -> None:
        forms = self.catalog.tool_forms
        for facts in self.modules.values():
            if facts.is_test:
                continue
            for fn in facts.functions.values():
                for dec in fn.decorators:
                    form = forms["decorator"](dec.qualname)
                    if form is None:
                        continue
                    name = dec.kwargs.get("name") or dec.kwargs.get("name_override")
                    name_text = name.string() if name else None
                    if name_text is None and dec.args and dec.args[0].string():
                        name_text = dec.args[0].string()
                    tool = self._tool_from_function(
                        fn.qualname,
                        form,
                        Location(facts.path, dec.span),
                        name_text,
                        dict(dec.kwargs),
                    )
                    if tool:
                        self._add_tool(tool)
                    break
            for cls in facts.classes.values():
                self._discover_class_tool(cls, facts)
            for call in facts.calls:
                self._discover_from_call(call, facts)
        self._discover_lowlevel_mcp()
        self._discover_raw_schemas()
        self.tools.sort(key=lambda t: (t.path, t.anchor.span.line, t.name))

    def _discover_class_tool(self, cls: ClassDef, facts: ModuleFacts) -> None:
        for base in self.class_bases(cls):
            form = self.catalog.tool_forms["base_class"](base)
            if form is None:
                continue
            methods: list[str] = []
            if form.methods_from_attribute:
                attr = cls.attributes.get(form.methods_from_attribute)
                names = [e.string() for e in attr.elements] if attr else []
                methods = [f"{cls.qualname}.{n}" for n in names if n]
            else:
                methods = [
                    m for m in (self.find_method(cls.qualname, n) for n in form.methods) if m
                ]
            methods = [m for m in methods if m in self.functions]
            if not methods:
                return
            if form.methods_from_attribute:
                for method in methods:
                    fn = self.functions[method][0]
                    self._add_tool(
                        ToolFacts(
                            name=fn.name,
                            framework=form.framework,
                            form=form.form,
                            path=facts.path,
                            anchor=Location(facts.path, fn.name_span),
                            functions=[method],
                            symbol=method,
                            site=Location(facts.path, cls.name_span),
                            params=self._model_params(fn),
                        )
                    )
                return
            name_value = cls.attributes.get("name")
            name = (name_value.string() if name_value else None) or cls.name
            description = cls.attributes.get("description")
            options = dict(cls.attributes)
            tool = ToolFacts(
                name=name,
                framework=form.framework,
                form=form.form,
                path=facts.path,
                anchor=Location(facts.path, cls.name_span),
                functions=methods,
                symbol=cls.qualname,
                site=Location(facts.path, cls.name_span),
                params=self._model_params(self.functions[methods[0]][0]),
                options=options,
                description=(description.string() if description else "") or "",
            )
            tool.declarations += self._declarations_from_options(
                form.framework, options, tool.site, facts
            )
            for method in methods:
                for dec in self.functions[method][0].decorators:
                    if dec.qualname in GUARDED_NAMES:
                        tool.declarations.append(
                            self._guarded_declaration(dec.kwargs, dec.span, facts)
                        )
            self._add_tool(tool)
            return

    def _discover_from_call(self, call: Call, facts: ModuleFacts) -> None:
        forms = self.catalog.tool_forms
        callee = self._resolved_call_name(call, facts)
        factory = forms["factory"](callee)
        decorator_as_function = forms["decorator"](callee)
        site = Location(facts.path, call.span)
        if factory is not None:
            target = _arg(call.args, call.kwargs, factory.function)
            also = _arg(call.args, call.kwargs, factory.also) if factory.also else None
            name_value = _arg(call.args, call.kwargs, factory.name) if factory.name else None
            qual = self.project_function(target.qualname if target else None, facts)
            also_qual = self.project_function(also.qualname if also else None, facts)
            if qual is None and also_qual is not None:
                qual, also_qual = also_qual, None
            if qual:
                tool = self._tool_from_function(
                    qual,
                    factory,
                    site,
                    name_value.string() if name_value else None,
                    dict(call.kwargs),
                    [also_qual] if also_qual else None,
                )
                if tool:
                    self._add_tool(tool)
            return
        if decorator_as_function is not None and call.args:
            # create_order = tool(_create_order)  /  tool("name", fn)
            for arg in call.args[:2]:
                qual = self.project_function(arg.qualname, facts) if arg.kind == "name" else None
                if qual:
                    name = call.args[0].string() if call.args[0].kind == "const" else None
                    tool = self._tool_from_function(
                        qual, decorator_as_function, site, name, dict(call.kwargs)
                    )
                    if tool:
                        self._add_tool(tool)
                    return
        registry = forms["registry"](callee)
        if registry is not None and registry.tools is not None:
            listed = _arg(call.args, call.kwargs, registry.tools)
            if listed is None or listed.kind != "list":
                return
            for element in listed.elements:
                qual = self.project_function(element.qualname, facts)
                if qual and not any(qual in t.functions for t in self.tools):
                    tool = self._tool_from_function(
                        qual, registry, Location(facts.path, element.span or call.span), None, {}
                    )
                    if tool:
                        self._add_tool(tool)

    def _resolved_call_name(self, call: Call, facts: ModuleFacts) -> str:
        caller = self.function(call.function) if call.function else None
        return self.resolve_callee(call, caller, facts)

    def _discover_lowlevel_mcp(self) -> None:
        """Low-level MCP servers: Tool(name=...) objects listed, dispatched by name."""
        tool_types = set(self.catalog.mcp_tool_types)
        for facts in self.modules.values():
            if facts.is_test:
                continue
            for call in facts.calls:
                if call.callee.replace("()", "") not in tool_types:
                    continue
                name_value = call.kwargs.get("name") or (call.args[0] if call.args else None)
                name = name_value.string() if name_value else None
                if not name:
                    continue
                target = self._dispatch_target(name, facts)
                options = dict(call.kwargs)
                site = Location(facts.path, call.span)
                if target is None:
                    continue
                tool = self._tool_from_function(target, ToolForm("mcp", "lowlevel"), site, name, {})
                if tool is None:
                    continue
                tool.declarations += self._declarations_from_options("mcp", options, site, facts)
                tool.options.update(options)
                self._add_tool(tool)

    def _dispatch_target(self, name: str, facts: ModuleFacts) -> str | None:
        """The project function that a name-to-function dispatch runs for ``name``."""
        # 1. a dict literal {"name": fn}
        for assignment in facts.assignments:
            value = assignment.value
            if value.kind == "dict" and name in value.items:
                target = value.items[name]
                qual = self.project_function(target.qualname, facts)
                if qual:
                    return qual
        # 2. if name == "create_order": ... the calls in that branch
        for function, string, span in facts.comparisons:
            if string != name or function is None:
                continue
            for call in self.calls_in(function):
                if call.span.line > span.line and call.span.line <= span.end_line + 6:
                    qual = self.project_function(call.callee, facts)
                    if qual and qual != function:
                        return qual
        # 3. a function of the same name
        qual = self.project_function(name, facts)
        if qual:
            return qual
        candidates = self.by_name.get(name, [])
        return candidates[0] if len(candidates) == 1 else None

    def _discover_raw_schemas(self) -> None:
        """OpenAI/Anthropic tool dicts in code, linked to the function the dispatch calls."""
        for facts in self.modules.values():
            if facts.is_test:
                continue
            for schema in facts.dicts:
                items = schema.items
                if "function" in items and items["function"].kind == "dict":
                    body = items["function"].items
                    framework = "openai"
                elif "input_schema" in items:
                    body, framework = items, "anthropic"
                elif "parameters" in items and (
                    items.get("type") is None or items["type"].string() == "function"
                ):
                    body, framework = items, "openai"
                else:
                    continue
                name_value = body.get("name")
                name = name_value.string() if name_value else None
                if not name:
                    continue
                target = self._dispatch_target(name, facts)
                if target is None or any(target in t.functions for t in self.tools):
                    continue
                site = Location(facts.path, schema.span or Span.point(1))
                tool = self._tool_from_function(
                    target, ToolForm(framework, "schema-dict"), site, name, {}
                )
                if tool:
                    self._add_tool(tool)

    # ------------------------------------------------------------------ effects
    def _http_method(self, call: Call, sink: Sink) -> str | None:
        if sink.method:
            return sink.method
        spec = sink.method_from or {}
        if spec.get("request_data"):
            first = call.args[0] if call.args else None
            if first and first.kind == "call":
                method = first.call_kwargs.get("method")
                method_text = method.string() if method else None
                if method_text:
                    return method_text.upper()
                if "data" in first.call_kwargs or len(first.call_args) > 1:
                    return "POST"
            return "POST" if ("data" in call.kwargs or len(call.args) > 1) else "GET"
        value = _arg(call.args, call.kwargs, _Ref(spec.get("arg"), spec.get("kwarg")))
        if value is not None and value.string():
            return value.string().upper()  # type: ignore[union-attr]
        return None

    def _classify_sink(
        self, call: Call, callee: str, fn: Function, facts: ModuleFacts
    ) -> Effect | None:
        sink = self.catalog.sinks(callee)
        if sink is None and callee != call.callee:
            sink = self.catalog.sinks(call.callee)
        site = Location(facts.path, call.span)
        if sink is not None:
            kind, idempotent, method = sink.effect, sink.idempotent, None
            confidence = Confidence(sink.confidence)
            remote = sink.remote if sink.remote is not None else True
            if kind in {"http"}:
                method = self._http_method(call, sink)
                if method in {None, "GET", "HEAD", "OPTIONS"}:
                    if method is None and call.kwargs.get("method") is not None:
                        kind, idempotent, confidence = "network_write", False, Confidence.LOW
                    else:
                        return None
                elif method in {"PUT"}:
                    kind, idempotent = "network_write", True
                elif method == "DELETE":
                    kind, idempotent = "destructive", True
                else:
                    kind, idempotent = "network_write", False
            elif kind == "network_write" or kind in {"payment", "message", "destructive"}:
                method = sink.method
            elif kind == "sql":
                statement = call.args[0] if call.args else call.kwargs.get("sql")
                if statement is None:
                    return None
                text = statement.string()
                receiver = (call.receiver or "").lower()
                if not re.search(r"(cur|conn|db|session|engine|cx|sql|tx|transaction)", receiver):
                    return None
                if text is not None:
                    if SQL_READ_RE.match(text) or not SQL_WRITE_RE.match(text):
                        return None
                    upsert = bool(
                        re.search(
                            r"(?i)on\s+conflict|on\s+duplicate\s+key|insert\s+or\s+ignore", text
                        )
                    )
                    idempotent = upsert or not re.match(r"(?is)^\s*insert", text)
                    kind = "write"
                elif (
                    statement.kind == "call"
                    and statement.qualname
                    and statement.qualname.rsplit(".", 1)[-1] in {"insert", "update", "delete"}
                ):
                    kind = "write"
                    idempotent = statement.qualname.rsplit(".", 1)[-1] != "insert"
                else:
                    kind, idempotent, confidence = "write", None, Confidence.LOW
                remote = True
            elif kind == "file_open":
                mode = call.args[1] if len(call.args) > 1 else call.kwargs.get("mode")
                mode_text = mode.string() if mode else "r"
                if not mode_text or not any(ch in mode_text for ch in "wax+"):
                    return None
                kind, idempotent, remote = "write", "a" not in mode_text, False
            if sink.receiver_hint == "task" and not (call.receiver or "").strip():
                return None
            return Effect(
                kind=kind,
                idempotent=idempotent,
                remote=remote,
                sink=self._display_sink(callee, call),
                site=site,
                call=call,
                chain=(EvidenceStep(f"calls {self._display_sink(callee, call)}", site),),
                confidence=confidence,
                method=method,
                key=self._key_for(call, sink, fn, facts),
                function=fn.qualname,
            )
        return self._heuristic_sink(call, callee, fn, facts)

    def _display_sink(self, callee: str, call: Call) -> str:
        if callee.startswith(("self.", "cls.")) or "." not in callee:
            return call.text
        return callee.replace("()", "")

    def _heuristic_sink(
        self, call: Call, callee: str, fn: Function, facts: ModuleFacts
    ) -> Effect | None:
        if self.catalog.reads(callee):
            return None
        verb_class = self.catalog.verbs.get(_first_word(call.method))
        if verb_class in {None, "read"}:
            return None
        receiver = call.receiver or ""
        head = callee.split(".", 1)[0]
        external = head in facts.imports.values() or callee.split(".")[0] in {
            v.split(".")[0] for v in facts.imports.values()
        }
        trusted_receiver = bool(receiver) and bool(self.catalog.client_receiver.search(receiver))
        if not (trusted_receiver or (external and "." in callee)):
            return None
        if receiver and receiver.split(".")[-1] in {"self", "cls", "logger", "log", "logging"}:
            return None
        kind = {
            "non_idempotent": "network_write",
            "destructive": "destructive",
            "idempotent_write": "write",
        }[verb_class]
        idempotent = verb_class != "non_idempotent"
        site = Location(facts.path, call.span)
        sink = Sink(effect=kind, idempotent=idempotent, key={})
        return Effect(
            kind=kind,
            idempotent=idempotent,
            remote=True,
            sink=call.text,
            site=site,
            call=call,
            chain=(EvidenceStep(f"calls {call.text} (write verb, not resolved)", site),),
            confidence=Confidence.LOW if not trusted_receiver else Confidence.MEDIUM,
            key=self._key_for(call, sink, fn, facts),
            heuristic=True,
            function=fn.qualname,
        )

    def _local_value(
        self, name: str, fn: Function, facts: ModuleFacts, before: int
    ) -> Value | None:
        found: Value | None = None
        for assignment in facts.assignments:
            if assignment.function == fn.qualname and assignment.target == name:
                if assignment.order <= before:
                    found = assignment.value
        return found

    def _key_for(
        self, call: Call, sink: Sink, fn: Function, facts: ModuleFacts
    ) -> KeyEvidence | None:
        key_spec = sink.key or {}
        candidates: list[Value] = []
        kwarg_names = key_spec.get("kwarg")
        names = (
            kwarg_names if isinstance(kwarg_names, list) else [kwarg_names] if kwarg_names else []
        )
        for name, value in call.kwargs.items():
            if name in names or KEY_KWARG_RE.match(name):
                candidates.append(value)
        option = key_spec.get("option")
        for holder in (
            "options",
            "request_options",
            "extra_headers",
            "headers",
            "params",
            "json",
            "data",
        ):
            holder_value = call.kwargs.get(holder)
            if holder_value is None:
                continue
            if holder_value.kind == "name":
                holder_value = (
                    self._local_value(holder_value.text, fn, facts, call.order) or holder_value
                )
            if holder_value.kind == "dict":
                for item_key, item in holder_value.items.items():
                    if (
                        KEY_HEADER_RE.match(item_key)
                        or (option and item_key == option)
                        or KEY_KWARG_RE.match(item_key)
                    ):
                        candidates.append(item)
            elif holder_value.kind == "name":
                # headers built up by subscript: headers["Idempotency-Key"] = ...
                for assignment in facts.assignments:
                    if assignment.function == fn.qualname and assignment.target.startswith(
                        holder_value.text + "["
                    ):
                        header = assignment.target[len(holder_value.text) + 1 : -1]
                        if KEY_HEADER_RE.match(header):
                            candidates.append(assignment.value)
        if key_spec.get("sql_conflict"):
            return None
        if not candidates:
            # An SDK object built with a key outside the call (client with default headers).
            return None
        value = candidates[0]
        return self._classify_key(value, fn, facts, call.order)

    def _classify_key(
        self, value: Value, fn: Function, facts: ModuleFacts, before: int, depth: int = 0
    ) -> KeyEvidence:
        location = Location(facts.path, value.span) if value.span else None
        if value.kind == "name" and depth < 3:
            if value.text in fn.params and value.text not in INJECTED_PARAMS:
                return KeyEvidence(
                    value, "param", f"parameter `{value.text}`", value.text, location
                )
            local = self._local_value(value.text, fn, facts, before)
            if local is not None:
                return self._classify_key(local, fn, facts, before, depth + 1)
        text = value.text
        calls = [c.replace("()", "") for c in value.calls]
        if (
            "current_call" in text
            or any(c.endswith("current_call") for c in calls)
            or (
                "idempotency_key" in value.attrs
                and any(n in {"call", "ctx", "context", "tool_call"} for n in value.names)
            )
        ):
            return KeyEvidence(value, "runtime", "built by the runtime", None, location)
        fresh = [c for c in calls if FRESH_CALLS.match(c)]
        if fresh:
            return KeyEvidence(
                value, "fresh", f"`{fresh[0]}()` is new on every call", None, location
            )
        params_used = [n for n in value.names if n in fn.params and n not in INJECTED_PARAMS]
        if value.kind in {"attr", "fstring", "other", "call"} and params_used and not fresh:
            only_params = all(
                n in fn.params
                or n in {"json", "hashlib", "str", "repr", "sorted", "dict", "uuid", "hash"}
                for n in value.names
            )
            hashed = any(HASH_CALLS.match(c) for c in calls)
            scoped = any(SCOPE_NAMES.search(n) for n in value.names) or any(
                SCOPE_NAMES.search(a) for a in value.attrs
            )
            if hashed and only_params and not scoped:
                return KeyEvidence(
                    value, "args_hash", "a hash of the arguments only", None, location
                )
            if (
                value.kind == "fstring"
                and only_params
                and not scoped
                and len(params_used) == len(set(value.names))
            ):
                return KeyEvidence(
                    value,
                    "param",
                    f"made from parameter `{params_used[0]}`",
                    params_used[0],
                    location,
                )
        if any(HASH_CALLS.match(c) for c in calls) and not any(
            SCOPE_NAMES.search(n) for n in value.names + value.attrs
        ):
            if all(
                n in fn.params
                or n
                in {
                    "json",
                    "hashlib",
                    "str",
                    "repr",
                    "sorted",
                    "uuid",
                    "hash",
                    "args",
                    "kwargs",
                    "arguments",
                    "payload",
                    "params",
                }
                for n in value.names
            ):
                return KeyEvidence(
                    value, "args_hash", "a hash of the arguments only", None, location
                )
        return KeyEvidence(value, "scoped", "", None, location)

    def _map_key_through_call(
        self,
        key: KeyEvidence | None,
        callee_fn: Function,
        call: Call,
        caller: Function,
        facts: ModuleFacts,
    ) -> KeyEvidence | None:
        """A key that is a helper's parameter takes the caller's argument's origin."""
        if key is None or key.origin != "param" or key.param is None:
            return key
        params = [p for p in callee_fn.params if p not in SELF_NAMES]
        argument: Value | None = call.kwargs.get(key.param)
        if argument is None and key.param in params:
            index = params.index(key.param)
            if index < len(call.args):
                argument = call.args[index]
        if argument is None:
            return KeyEvidence(key.value, "scoped", "", None, key.location)
        return self._classify_key(argument, caller, facts, call.order)

    def infer_effects(self) -> None:
        direct: dict[str, list[Effect]] = {}
        edges: dict[str, list[tuple[Call, str]]] = {}
        for qualname, (fn, facts) in self.functions.items():
            effects: list[Effect] = []
            out: list[tuple[Call, str]] = []
            for call in self.calls_in(qualname):
                callee = self.resolve_callee(call, fn, facts)
                target = self.project_function(callee, facts) if callee else None
                if target is None and callee in self.classes:
                    target = self.find_method(callee, "__init__")
                if target and target != qualname:
                    out.append((call, target))
                    continue
                effect = self._classify_sink(call, callee, fn, facts)
                if effect is not None:
                    effects.append(effect)
            direct[qualname] = effects
            edges[qualname] = out
        summaries: dict[str, dict[tuple[str, int, int], Effect]] = {
            q: {(e.site.path, e.site.span.line, e.site.span.column): e for e in effects}
            for q, effects in direct.items()
        }
        changed = True
        rounds = 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            for qualname in sorted(edges):
                fn, facts = self.functions[qualname]
                mine = summaries[qualname]
                for call, target in edges[qualname]:
                    target_fn = self.functions[target][0]
                    for key, effect in list(summaries.get(target, {}).items()):
                        if key in mine and len(mine[key].chain) <= len(effect.chain) + 1:
                            continue
                        step = EvidenceStep(
                            f"{fn.name} calls {target_fn.name}", Location(facts.path, call.span)
                        )
                        mine[key] = replace(
                            effect,
                            chain=(step, *effect.chain),
                            key=self._map_key_through_call(effect.key, target_fn, call, fn, facts),
                        )
                        changed = True
        self._summaries = {
            q: sorted(s.values(), key=lambda e: (e.site.path, e.site.span))
            for q, s in summaries.items()
        }
        for tool in self.tools:
            seen: set[tuple[str, int, int]] = set()
            gathered: list[Effect] = []
            for qualname in tool.functions:
                for effect in self._summaries.get(qualname, []):
                    key = (effect.site.path, effect.site.span.line, effect.site.span.column)
                    if key not in seen:
                        seen.add(key)
                        gathered.append(effect)
            tool.effects = gathered

    def effects_of(self, qualname: str) -> list[Effect]:
        return self._summaries.get(qualname, [])

    def tool_for_function(self, qualname: str) -> ToolFacts | None:
        return next((t for t in self.tools if qualname in t.functions), None)

    # ------------------------------------------------------------------ retries
    def retry_uses(self) -> Iterator[RetryUse]:
        """Every retry construct in the project, with the code it re-runs."""
        for qualname, (fn, facts) in sorted(self.functions.items()):
            for dec in fn.decorators:
                construct = self.catalog.retries(dec.qualname)
                if construct is None or construct.kind != "decorator":
                    continue
                yield RetryUse(
                    kind="decorator",
                    library=construct.library,
                    location=Location(facts.path, dec.span),
                    function=qualname,
                    catches=self._catches(construct, dec.args, dec.kwargs, dec.called),
                    construct=construct,
                    text=dec.text,
                )
            yield from self._loop_retries(fn, facts)
        for facts in self.modules.values():
            for call in facts.calls:
                construct = self.catalog.retries(call.callee)
                if construct is None:
                    continue
                location = Location(facts.path, call.span)
                if construct.kind == "wrapper":
                    function = call.function
                    if construct.library == "langchain":
                        function = None
                    yield RetryUse(
                        kind="with_retry" if construct.library == "langchain" else "wrapper",
                        library=construct.library,
                        location=location,
                        function=function,
                        catches=self._catches(construct, call.args, call.kwargs, True),
                        construct=construct,
                        call=call,
                        text=call.text,
                    )
                elif construct.kind in {"http_retry", "global"}:
                    yield RetryUse(
                        kind=construct.kind,
                        library=construct.library,
                        location=location,
                        function=call.function,
                        catches=None,
                        construct=construct,
                        call=call,
                        text=call.text,
                    )

    def _catches(
        self, construct: RetryConstruct, args: list[Value], kwargs: dict[str, Value], called: bool
    ) -> list[str] | None:
        if not called:
            return None if construct.default_catches_all else []
        value = _arg(args, kwargs, construct.on) if construct.on else None
        if value is None:
            return None if construct.default_catches_all else []
        names: list[str] = []
        if value.kind == "call":
            inner = [*value.call_args, *value.call_kwargs.values()]
            if not inner:
                return None  # retry_if_exception_type() defaults to Exception
            for item in inner:
                names += (
                    [e.qualname or e.text for e in item.elements]
                    if item.kind == "list"
                    else [item.qualname or item.text]
                )
        elif value.kind == "list":
            names = [e.qualname or e.text for e in value.elements]
        else:
            names = [value.qualname or value.text]
        if any(n in self.catalog.catch_all_exceptions for n in names):
            return None
        return names

    def _loop_retries(self, fn: Function, facts: ModuleFacts) -> Iterator[RetryUse]:
        """for attempt in range(n): try: ... except E: continue / sleep."""
        for loop in fn.loops:
            if not loop.is_retry_shape:
                continue
            for try_block in fn.tries:
                if loop.loop_id not in try_block.loop_ids:
                    continue
                handlers = [h for h in fn.handlers if h.try_id == try_block.try_id]
                retrying = [
                    h
                    for h in handlers
                    if (not h.reraises and not h.returns and not h.raises)
                    or (h.continues)
                    or (any(c.endswith("sleep") for c in h.calls) and not h.returns)
                ]
                if not retrying:
                    continue
                catches: list[str] | None = []
                for handler in retrying:
                    if not handler.caught or any(
                        c in self.catalog.catch_all_exceptions for c in handler.caught
                    ):
                        catches = None
                        break
                    assert catches is not None
                    catches += handler.caught
                yield RetryUse(
                    kind="loop",
                    library="hand-written",
                    location=Location(facts.path, loop.span),
                    function=fn.qualname,
                    catches=catches,
                    covered_orders=try_block.body_order,
                    text="retry loop",
                )
                break

    def effects_in_orders(self, qualname: str, orders: tuple[int, int]) -> list[Effect]:
        """Effects reached from the calls of ``qualname`` whose order is within ``orders``."""
        start, end = orders
        result = []
        for effect in self.effects_of(qualname):
            first = effect.chain[0]
            if first.location is None:
                continue
            for call in self.calls_in(qualname):
                if start <= call.order < end and call.span == first.location.span:
                    result.append(effect)
                    break
        return result


@dataclass
class _Ref:
    arg: int | None
    kwarg: object

    def __post_init__(self) -> None:
        if isinstance(self.kwarg, str):
            self.kwarg = (self.kwarg,)
        elif self.kwarg is None:
            self.kwarg = ()
