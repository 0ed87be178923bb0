"""Extract :class:`ModuleFacts` from TypeScript and JavaScript: one tree-sitter parse, one
traversal, the same facts the Python front end gives (``ModuleFacts.language`` says which).

How the languages meet in the facts:

- ``this`` is written ``self``, a constructor is the method ``__init__``, and a method's
  parameters start with ``self`` as a Python method's do, so the project model reads a class
  the same way in either language.
- An import names a qualified module (``agentguard.facts.typescript.modules``): a project
  file by its dotted path, a package as ``npm:<specifier>``, a Node built-in as ``node:fs``.
  ``import Stripe from "stripe"`` binds ``Stripe`` to ``npm:stripe``.
- ``new X(...)`` is a call of ``X``, and the name it is assigned to holds an ``X``.
- An object literal is a ``dict`` Value; an options object's fields are its items, and
  those of an options object written last are the call's keywords as well. What it
  spreads (``{...init, method}``) is an item too, keyed ``...`` and the spread's text
  (``...init``): no property can be named so.
- A function written as an expression (an arrow or ``function () {}``) is a function of its
  own when it is named by what holds it: a constant (``const send = async () => ...``), an
  object's property (``handlers.create``), a class field, or a registration call it is
  handed to as its last argument or inside an options object (``server.tool("create_issue",
  schema, async (args) => ...)`` is ``tool:create_issue``). The argument's Value is then a
  name of that function. Handed to anything else first (``items.map(x => ...)``,
  ``pRetry(() => send(), ...)``), its calls are the enclosing function's, as the calls of a
  Python lambda are.
- ``catch (error)`` catches everything: a handler with nothing named caught.

Nothing here runs or imports the scanned code.
"""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Callable, Iterator

from tree_sitter import Language, Node

from agentguard.diagnostics import Span
from agentguard.facts.extract_flow import tool_schema_shaped
from agentguard.facts.extract_values import Scope, leaf_value
from agentguard.facts.module_facts import (
    CALL_STEP,
    JS_RAW_ERROR_ATTRIBUTES,
    LOADED_EMPTY_DICT,
    LOADED_EMPTY_LIST,
    SPREAD,
    Assignment,
    Branch,
    Call,
    Chain,
    ClassDef,
    Decorator,
    Function,
    Handler,
    Loop,
    ModuleFacts,
    RawErrorUse,
    Step,
    Suppression,
    TryBlock,
    Value,
)
from agentguard.facts.static_strings import ENUM_MEMBER
from agentguard.facts.typescript.parser import parse

TEXT_LIMIT = 240
PARTS_LIMIT = 64
SUPPRESSION_RE = re.compile(
    r"//\s*agentguard:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s-]*)\])?(?P<reason>.*)"
)
# Methods of the language's own arrays and promises that run the function they are handed
# while the caller waits: its calls are the caller's.
_INLINE_RUNNERS = frozenset(
    {
        "map",
        "forEach",
        "filter",
        "reduce",
        "reduceRight",
        "some",
        "every",
        "find",
        "findIndex",
        "findLast",
        "flatMap",
        "sort",
        "then",
        "catch",
        "finally",
        "all",
        "allSettled",
        "race",
        "any",
        "from",
        "replace",
        "replaceAll",
    }
)
# The array methods that run the function they are handed once per element, in order.
_ELEMENT_RUNNERS = frozenset({"forEach", "map", "flatMap"})
# How a method with no body is marked, as the Python front end reads the same declarations: an
# interface is a ``Protocol``, an ``abstract`` method an ``abstractmethod``.
PROTOCOL = "typing.Protocol"
ABSTRACT = "abc.abstractmethod"
# Object properties that name what an options object declares (``{name: "scrape", ...}``).
_NAME_FIELDS = ("name", "id", "toolName")
_COMPARISONS = {
    "===": "==",
    "==": "==",
    "!==": "!=",
    "!=": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
    "in": "in",
    "instanceof": "is",
}
_TRANSPARENT = frozenset(
    {
        "parenthesized_expression",
        "as_expression",
        "satisfies_expression",
        "non_null_expression",
        "type_assertion",
        "await_expression",
    }
)
_FUNCTION_EXPRESSIONS = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_FUNCTION_DECLARATIONS = frozenset({"function_declaration", "generator_function_declaration"})
# Node kinds that hold no call, definition or name a fact records: never walked.
_NO_FACTS = frozenset(
    {
        "comment",
        "string",
        "number",
        "property_identifier",
        "type_annotation",
        "type_arguments",
        "type_parameters",
        "predefined_type",
        "regex",
        "true",
        "false",
        "null",
        "undefined",
        # markup: a component's handlers are no tool's work
        "jsx_element",
        "jsx_self_closing_element",
        "jsx_fragment",
        "abstract_method_signature",
        "ambient_declaration",
        "enum_declaration_never",
    }
)
_NO_READS = frozenset(
    {
        "property_identifier",
        "type_annotation",
        "type_arguments",
        "comment",
        "string",
        "number",
        "jsx_element",
        "jsx_self_closing_element",
        "jsx_fragment",
    }
)
_NO_READS_OR_FUNCTIONS = _NO_READS | _FUNCTION_EXPRESSIONS
_CLASS_DECLARATIONS = frozenset({"class_declaration", "abstract_class_declaration"})
_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})
_EXITS = frozenset({"return_statement", "throw_statement", "break_statement", "continue_statement"})
# Generic wrappers whose first type argument is the type held (``Promise<Client>``).
# Containers whose type arguments name the class of their entries (the last one).
_ITEM_CONTAINERS = frozenset(
    {"Map", "Record", "Array", "ReadonlyArray", "Set", "ReadonlyMap", "ReadonlySet", "WeakMap"}
)
_TYPE_WRAPPERS = frozenset({"Promise", "Readonly", "Partial", "Required", "NonNullable", "Awaited"})
# Generic types that work a type out of another (zod's ``z.infer<typeof S>``, TypeScript's
# ``ReturnType<typeof f>``): they name no class.
_TYPE_OPERATORS = frozenset(
    {"infer", "input", "output", "TypeOf", "ReturnType", "Parameters", "InstanceType"}
)

_new_span = tuple.__new__

# Values made here hold the one shared, read-only empty list or dict (the ones facts read
# back from a pickle hold) for each empty field: most of a Value's containers stay empty,
# and each made anew is one more object for the cyclic collector to scan in a caller that
# keeps the facts.
NO_NAMES: list[str] = LOADED_EMPTY_LIST
NO_VALUES: list[Value] = LOADED_EMPTY_LIST
NO_ITEMS: dict[str, Value] = LOADED_EMPTY_DICT
NO_IDS: list[int] = LOADED_EMPTY_LIST


def is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        ".test." in name
        or ".spec." in name
        or "/__tests__/" in f"/{path}"
        or "/tests/" in f"/{path}"
        or "/test/" in f"/{path}"
    )


# Node's ``util.promisify(fn)``: the function it returns calls ``fn``.
_PROMISIFY = "node:util.promisify"


def extract_typescript(
    source: bytes,
    path: str,
    module: str,
    resolve_import: Callable[[str, str], str],
    is_test: bool | None = None,
    language: str = "typescript",
) -> ModuleFacts:
    """The facts of one TypeScript or JavaScript file. ``resolve_import(path, specifier)``
    names the module an import specifier leads to (``TsModuleMap.resolve``)."""
    # A file's tree nodes and facts are many objects and no reference cycle: the cyclic
    # collector, left running, would rescan every fact made so far again and again (half
    # the time when a caller keeps the facts). Reference counting frees each one.
    collecting = gc.isenabled()
    gc.disable()
    try:
        tree = parse(source, path)
        test = is_test_path(path) if is_test is None else is_test
        extractor = _Extractor(
            source, path, module, resolve_import, test, language, _grammar(tree.language)
        )
        extractor.run(tree.root_node)
        return extractor.facts
    finally:
        if collecting:
            gc.enable()


class _Extractor:
    def __init__(
        self,
        source: bytes,
        path: str,
        module: str,
        resolve_import: Callable[[str, str], str],
        is_test: bool,
        language: str,
        grammar: _Grammar,
    ) -> None:
        self.source = source
        self.grammar = grammar
        self.visits = grammar.visits
        self.path = path
        self.module = module
        self.resolve_import = resolve_import
        self.facts = ModuleFacts(path=path, module=module, is_test=is_test)
        self.facts.language = language
        self.module_scope = Scope(None)
        self.scopes = [self.module_scope]
        self.class_stack: list[ClassDef] = []
        # (kind, qualname) of the enclosing definitions: "def" or "class"
        self.containers: list[tuple[str, str]] = []
        self.top_level: set[str] = set()
        self._next_id = 0
        self._labels: dict[str, int] = {}
        # Values and reads by node id: a nested call's arguments are asked for at every
        # level (the outer call's Value, then the inner call's own), which would make
        # building them quadratic in nesting depth. Forgotten when a name's type changes.
        self._values: dict[int, Value] = {}
        # each function expression made a function of, by its node: a value naming it
        # (``{ name: "send", fn: async (args) => ... }`` holds the function ``fn``)
        self._function_nodes: dict[int, str] = {}
        self._reads_memo: dict[int, tuple[list[str], list[str], list[str]]] = {}
        self._resolved: dict[int, str | None] = {}
        # the string members of the module's enums and constant objects, by their name
        self._constants: dict[str, dict[str, str]] = {}
        # the registration label a call written where the registration takes its callback
        # hands on to the functions it is handed (``server.registerTool("x", {...},
        # wrap(async (a) => ...))``), taken by that call alone
        self._callback_label: str | None = None
        # (class, field) whose type so far is only its declared one (``private http:
        # AxiosInstance``): what the class's code builds into it is more telling
        self._declared_only: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ basics
    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    def text(self, node: Node, limit: int = TEXT_LIMIT) -> str:
        start, end = node.start_byte, node.end_byte
        if end - start <= limit:
            return self.source[start:end].decode("utf-8", "replace")
        text = self.source[start : start + limit * 4].decode("utf-8", "replace")
        return text[:limit] + "..."

    def span(self, node: Node) -> Span:
        (line, col), (end_line, end_col) = node.start_point, node.end_point
        # ``Span(...)`` goes through its metaclass's Python ``__call__``: built directly, as
        # that call does, since a file makes a span for most of its expressions.
        return _new_span(Span, (line + 1, col + 1, end_line + 1, end_col + 1))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def run(self, root: Node) -> None:
        self.facts.lines = root.end_point[0] + 1
        self._collect_top_level(root)
        for child in root.named_children:
            self.visit(child)
        if b"agentguard:" in self.source:
            self.facts.suppressions = list(self._suppressions(root))
        if root.has_error:
            self.facts.unread = list(_unread(root, self.span))

    def _collect_top_level(self, root: Node) -> None:
        for child in root.named_children:
            node = child
            if node.type == "export_statement":
                inner = node.child_by_field_name("declaration")
                if inner is None:
                    continue
                node = inner
            if (
                node.type in _FUNCTION_DECLARATIONS
                or node.type in _CLASS_DECLARATIONS
                or node.type == "enum_declaration"
                or node.type == "interface_declaration"
                or node.type == "type_alias_declaration"
            ):
                name = node.child_by_field_name("name")
                if name is not None:
                    self.top_level.add(self.text(name))
                if name is not None and node.type == "enum_declaration":
                    self._constants[self.text(name)] = self._enum_strings(node)
            elif node.type in ("lexical_declaration", "variable_declaration"):
                for declarator in node.named_children:
                    if declarator.type == "variable_declarator":
                        name = declarator.child_by_field_name("name")
                        if name is not None and name.type == "identifier":
                            self.top_level.add(self.text(name))
                            value = declarator.child_by_field_name("value")
                            if value is not None and _unwrap(value).type == "object":
                                strings = self._object_strings(_unwrap(value))
                                if strings:
                                    self._constants[self.text(name)] = strings

    def _enum_strings(self, node: Node) -> dict[str, str]:
        """``enum ToolName { QUERY = "query" }``: each member's string."""
        body = node.child_by_field_name("body")
        found: dict[str, str] = {}
        for member in body.named_children if body is not None else []:
            if member.type == "enum_assignment":
                key = _property_key(member.child_by_field_name("name"), self.source)
                value = _string_of(member.child_by_field_name("value"), self.source)
                if key is not None and value is not None:
                    found[key] = value
        return found

    def _object_strings(self, node: Node) -> dict[str, str]:
        """``const ToolName = { QUERY: "query" } as const``: each string property."""
        found: dict[str, str] = {}
        for pair in node.named_children:
            if pair.type == "pair":
                key = _property_key(pair.child_by_field_name("key"), self.source)
                value = _string_of(pair.child_by_field_name("value"), self.source)
                if key is not None and value is not None:
                    found[key] = value
        return found

    def _static_string(self, node: Node | None) -> str | None:
        """A string literal, or a member of a module's enum or constant object naming one
        (``ToolName.QUERY``): dispatch compares tool names against either."""
        if node is None:
            return None
        literal = _string_of(node, self.source)
        if literal is not None:
            return literal
        bare = _unwrap(node)
        if bare.type == "member_expression":
            owner = bare.child_by_field_name("object")
            prop = bare.child_by_field_name("property")
            if owner is not None and prop is not None and owner.type == "identifier":
                written = self.text(owner)
                if written in self._constants:
                    return self._constants[written].get(self.text(prop))
                imported = self.facts.imports.get(written)
                if imported:
                    # ``case ToolNames.CREATE_EVENT:`` with ``ToolNames`` imported: the
                    # project model looks the member's string up in that module
                    return f"{ENUM_MEMBER}{imported}.{self.text(prop)}"
        return None

    def visit_interface_declaration(self, node: Node) -> None:
        """An interface is a protocol: its methods have no body here, and a call of one runs
        whatever class implements it (``adapter.run(sql)`` on a ``DbAdapter``)."""
        name = node.child_by_field_name("name")
        if name is None:
            return
        qualname = self._qualname(self.text(name))
        bases = [
            self._type_name(base) or self.text(base)
            for clause in node.named_children
            if clause.type == "extends_type_clause"
            for base in clause.named_children
        ]
        self._protocol(node, name, qualname, bases, node.child_by_field_name("body"))

    def visit_type_alias_declaration(self, node: Node) -> None:
        """``type CmsClient = AcmeCms<...>``: another name of a class; an object type, an
        interface; any other alias holds no fact."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None or value is None:
            return
        if value.type in ("type_identifier", "generic_type", "nested_type_identifier"):
            # ``type CmsClient = AcmeCms<...>``: another name of that class
            aliased = self._type_name(value)
            # (an imported or project class only: ``Map<K, V>`` is the language's own)
            if aliased and "." in aliased and aliased.rsplit(".", 1)[-1] != self.text(name):
                self.facts.imports.setdefault(self.text(name), aliased)
            return
        if value.type == "object_type":
            # ``type AgentContext = {cms: CmsClient; desk: string}``: read as the
            # interface it could have been written as
            self._protocol(node, name, self._qualname(self.text(name)), [], value)

    def _protocol(
        self, node: Node, name: Node, qualname: str, bases: list[str], body: Node | None
    ) -> None:
        cls = ClassDef(
            qualname=qualname,
            name=self.text(name),
            module=self.module,
            span=self.span(node),
            name_span=self.span(name),
            bases=[*bases, PROTOCOL],
            methods=[],
        )
        self.facts.classes[qualname] = cls
        for member in body.named_children if body is not None else []:
            key = _property_key(member.child_by_field_name("name"), self.source)
            if key is None:
                continue
            if member.type == "method_signature":
                self._signature(member, key, cls)
            elif member.type == "property_signature":
                typed = self._type_name(member.child_by_field_name("type"))
                if typed:
                    cls.self_types[key] = typed

    def _signature(self, node: Node, name: str, cls: ClassDef, *, abstract: bool = False) -> None:
        """A method declared with no body (an interface's, an abstract class's)."""
        params, _ = self._parameters(node.child_by_field_name("parameters"))
        qualname = f"{cls.qualname}.{name}"
        where = node.child_by_field_name("name") or node
        function = Function(
            qualname=qualname,
            name=name,
            module=self.module,
            class_name=cls.qualname,
            span=self.span(node),
            name_span=self.span(where),
            params=["self", *params],
            is_async=False,
            is_test=self.facts.is_test,
            decorators=[Decorator(ABSTRACT, "abstract", False, span=self.span(node))]
            if abstract
            else [],
            return_type=self._type_name(node.child_by_field_name("return_type")),
        )
        self.facts.functions.setdefault(qualname, function)
        cls.methods.append(qualname)

    def visit_enum_declaration(self, node: Node) -> None:
        """A TypeScript enum is a class of constants, as Python's ``Enum`` is: a tool named
        ``ToolName.QUERY`` is named by the member's string."""
        name = node.child_by_field_name("name")
        if name is None:
            return
        qualname = self._qualname(self.text(name))
        self.facts.classes[qualname] = ClassDef(
            qualname=qualname,
            name=self.text(name),
            module=self.module,
            span=self.span(node),
            name_span=self.span(name),
            bases=[],
            methods=[],
            attributes={
                member: leaf_value("const", f'"{text}"', text)
                for member, text in self._enum_strings(node).items()
            },
        )

    def _suppressions(self, root: Node) -> Iterator[Suppression]:
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type == "comment":
                match = SUPPRESSION_RE.search(self.text(node, 400))
                if match:
                    codes_text = match.group("codes")
                    codes = [c.strip().upper() for c in (codes_text or "").split(",") if c.strip()]
                    yield Suppression(
                        line=node.start_point[0] + 1,
                        codes=codes,
                        reason=match.group("reason").strip().rstrip("*/").strip(),
                        span=self.span(node),
                    )
                continue
            stack.extend(node.children)

    # ------------------------------------------------------------------ names
    def resolve_name(self, name: str) -> str:
        if name == "this":
            return "self"
        for scope in reversed(self.scopes):
            typed = scope.types.get(name)
            if typed is not None:
                return typed
        imported = self.facts.imports.get(name)
        if imported is not None:
            return imported
        if name in self.top_level:
            return sys.intern(f"{self.module}.{name}")
        return name

    def resolve(self, node: Node) -> str | None:
        """Dotted, import-resolved name of an identifier or member chain (None otherwise)."""
        key = node.id
        if key in self._resolved:
            return self._resolved[key]
        found = self._resolved[key] = self._resolve(node)
        return found

    def _resolve(self, node: Node) -> str | None:
        grammar = self.grammar
        kind = node.kind_id
        if kind in grammar.identifier_or_this:
            return self.resolve_name(self.text(node))
        if kind in grammar.member:
            obj = node.child_by_field_id(grammar.field_object)
            prop = node.child_by_field_id(grammar.field_property)
            if obj is None or prop is None:
                return None
            base = self.resolve(obj)
            if base is None:
                if obj.kind_id in grammar.calls:
                    made = self.callee_node(obj)
                    inner = self.resolve(made) if made is not None else None
                    return f"{inner}().{self.text(prop)}" if inner else None
                return None
            return sys.intern(f"{base}.{self.text(prop)}")
        if kind in grammar.transparent and kind not in grammar.await_:
            wrapped = _inner(node)
            return self.resolve(wrapped) if wrapped is not None else None
        if kind in grammar.super_:
            return "super"
        return None

    def _names_elsewhere(self, resolved: str) -> bool:
        """Whether a name, as resolved, is something other than a local of this file: an
        import's or another module's (dotted), or, at module level, a global of the runtime
        (``fetch``), which no declaration of the file binds."""
        if "." in resolved:
            return True
        return not self.scope.function and resolved not in self.top_level

    def _queried(self, annotation: Node | None) -> str | None:
        """What ``typeof fetch`` (``typeof fetch | null``) names, resolved: a variable so
        declared holds that function."""
        node = annotation
        if node is not None and node.type == "type_annotation" and node.named_children:
            node = node.named_children[0]
        if node is not None and node.type == "union_type":
            queries = [child for child in node.named_children if child.type == "type_query"]
            node = queries[0] if len(queries) == 1 else None
        if node is None or node.type != "type_query" or not node.named_children:
            return None
        target = node.named_children[0]
        if target.type not in ("identifier", "member_expression"):
            return None
        resolved = self.resolve(target)
        return resolved if resolved and self._names_elsewhere(resolved) else None

    def _returned_type(self, node: Node) -> str | None:
        """``ReturnType<typeof makeApi>``: what a call of the function returns, written
        ``pkg.client.makeApi()``; None for any other argument."""
        args = node.child_by_field_name("type_arguments")
        query = args.named_children[0] if args is not None and args.named_children else None
        if query is None or query.type != "type_query" or not query.named_children:
            return None
        target = query.named_children[0]
        if target.type != "identifier":
            return None
        written = self.text(target)
        resolved = self.resolve_name(written)
        if resolved == written:
            resolved = f"{self.module}.{written}"
        return f"{resolved}()"

    def _type_name(self, node: Node | None) -> str | None:
        """The class a type annotation names: ``Octokit``, ``Promise<WebClient>``,
        ``WebClient | null``; None for anything else."""
        if node is None:
            return None
        kind = node.type
        if kind == "type_annotation":
            inner = node.named_children[0] if node.named_children else None
            return self._type_name(inner)
        if kind in ("type_identifier", "identifier"):
            resolved = self.resolve_name(self.text(node))
            return (
                resolved
                if resolved != self.text(node) or resolved in self.top_level
                else (f"{self.module}.{resolved}" if resolved in self.top_level else resolved)
            )
        if kind == "nested_type_identifier":
            parts = self.text(node).split(".")
            head = self.resolve_name(parts[0])
            return ".".join([head, *parts[1:]])
        if kind == "generic_type":
            name = node.child_by_field_name("name") or (
                node.named_children[0] if node.named_children else None
            )
            if name is None:
                return None
            written = self.text(name)
            if written == "ReturnType":
                # ``ReturnType<typeof makeApi>``: the object the function returns
                return self._returned_type(node)
            if written.rsplit(".", 1)[-1] in _TYPE_OPERATORS:
                return None  # ``z.infer<typeof Schema>``: a type worked out, no class
            if written in _TYPE_WRAPPERS:
                args = node.child_by_field_name("type_arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                return self._type_name(first)
            return self._type_name(name)
        if kind == "union_type":
            typed = [self._type_name(child) for child in node.named_children]
            kept = [t for t in typed if t and t not in ("null", "undefined")]
            return kept[0] if len(kept) == 1 else None
        if kind == "parenthesized_type" and node.named_children:
            return self._type_name(node.named_children[0])
        return None

    def _item_type(self, annotation: Node | None, value: Node | None = None) -> str | None:
        """The class of an entry of a container a declaration names: ``Map<string,
        Adapter>``, ``Record<string, Adapter>``, ``Adapter[]``, ``Array<Adapter>``, ``{
        [name: string]: Adapter }``, or the type arguments of ``new Map<string,
        Adapter>()`` it is given."""
        node = annotation
        if node is not None and node.type == "type_annotation":
            node = node.named_children[0] if node.named_children else None
        if node is None and value is not None and value.type == "new_expression":
            made = value.child_by_field_name("constructor")
            if made is not None and self.text(made) in _ITEM_CONTAINERS:
                node = value
        if node is None:
            return None
        if node.type == "array_type" and node.named_children:
            return self._type_name(node.named_children[0])
        if node.type == "object_type":
            for member in node.named_children:
                if member.type == "index_signature":
                    return self._type_name(member.child_by_field_name("type"))
            return None
        name = node.child_by_field_name("name") or node.child_by_field_name("constructor")
        arguments = node.child_by_field_name("type_arguments")
        if name is None or arguments is None or not arguments.named_children:
            return None
        if self.text(name) not in _ITEM_CONTAINERS:
            return None
        return self._type_name(arguments.named_children[-1])

    # ------------------------------------------------------------------ values
    def value(self, node: Node | None) -> Value:
        if node is None:
            return leaf_value("const", "undefined")
        key = node.id
        known = self._values.get(key)
        if known is None:
            known = self._values[key] = self._value(node)
        return known

    def _forget_values(self) -> None:
        if self._values or self._resolved:
            self._values.clear()
            self._reads_memo.clear()
            self._resolved.clear()

    def _value(self, node: Node) -> Value:
        grammar = self.grammar
        kind_id = node.kind_id
        if kind_id in grammar.transparent:
            inner = _inner(node)
            if inner is not None:
                return self.value(inner)
        # ``text`` and ``span`` inlined: a file makes a Value for most of its expressions.
        start, end = node.start_byte, node.end_byte
        text = (
            self.source[start:end].decode("utf-8", "replace")
            if end - start <= TEXT_LIMIT
            else self.text(node)
        )
        (line, col), (end_line, end_col) = node.start_point, node.end_point
        span = _new_span(Span, (line + 1, col + 1, end_line + 1, end_col + 1))
        if kind_id in grammar.literals:
            kind = node.type
            if kind == "string":
                return leaf_value("const", text, _string_of(node, self.source), span=span)
            if kind == "regex":
                # a literal, as a string is: what is called on it stays in the process
                return leaf_value("const", text, text, span=span)
            if kind == "number":
                return leaf_value("const", text, _number(text), span=span)
            if kind in ("true", "false"):
                return leaf_value("const", text, kind == "true", span=span)
            return leaf_value("const", text, None, span=span)  # null, undefined
        if kind_id in grammar.names:
            name = "self" if kind_id in grammar.this else text
            return leaf_value(
                "name", text, None, self.resolve_name(name), [name], span=span, chain=Chain(name)
            )
        names, calls, attrs = self._reads(node)
        # Each field below that stays empty holds the shared empty list or dict.
        value = Value(
            "other",
            text,
            None,
            None,
            names,
            calls,
            attrs,
            NO_ITEMS,
            NO_VALUES,
            span,
            NO_ITEMS,
            NO_VALUES,
            NO_VALUES,
        )
        if kind_id in grammar.member:
            value.kind, value.qualname = "attr", self.resolve(node)
            value.chain = self.chain(node)
            return value
        if kind_id in grammar.calls:
            func = self.callee_node(node)
            value.kind = "call"
            value.qualname = self.resolve(func) if func is not None else None
            value.call_args = [self.value(a) for a in self._arguments(node)[:6]]
            value.chain = self.chain(node)
            return value
        if kind_id in grammar.object:
            value.kind = "dict"
            value.items = self._object_items(node)
            return value
        kind = node.type
        if kind == "subscript_expression":
            value.chain = self.chain(node)
        elif kind == "array":
            value.kind = "list"
            value.elements = [self.value(e) for e in node.named_children[:64]]
        elif kind == "template_string":
            value.kind = "fstring"
            value.parts = self._template_parts(node)
            parent = node.parent
            if (
                parent is not None
                and parent.type == "call_expression"
                and node == parent.child_by_field_name("arguments")
            ):
                value.op = "tag"  # a tagged template's text: sql`SELECT ...`
        elif kind == "ternary_expression":
            value.op = "if"
            value.parts = [
                self.value(node.child_by_field_name("consequence")),
                self.value(node.child_by_field_name("alternative")),
            ]
        elif kind == "binary_expression":
            operator = node.child_by_field_name("operator")
            op = self.text(operator) if operator is not None else ""
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op == "+":
                value.op, value.parts = "+", [self.value(p) for p in _concatenated(node)]
            elif op in _COMPARISONS:
                value.op, value.parts = _COMPARISONS[op], [self.value(left), self.value(right)]
            elif op == "||" or op == "??":
                value.op, value.parts = "if", [self.value(left), self.value(right)]
        elif kind == "unary_expression":
            operator = node.child_by_field_name("operator")
            if operator is not None and self.text(operator) == "!":
                value.op, value.parts = "not", [self.value(node.child_by_field_name("argument"))]
        elif kind in _FUNCTION_EXPRESSIONS:
            made = self._function_nodes.get(node.id)
            if made is not None:
                return _function_value(made, text, span)
            value.kind = "lambda"
        return value

    def _object_items(self, node: Node) -> dict[str, Value]:
        items: dict[str, Value] = {}
        grammar = self.grammar
        for child in node.named_children:
            if child.kind_id in grammar.pair:
                key = self._pair_key(child.child_by_field_id(grammar.field_key))
                if key is not None:
                    items[key] = self.value(child.child_by_field_id(grammar.field_value))
                continue
            kind = child.type
            if kind == "shorthand_property_identifier":
                items[self.text(child)] = self.value(child)
            elif kind == "method_definition":
                key = _property_key(child.child_by_field_name("name"), self.source)
                if key is not None:
                    items[key] = leaf_value("lambda", self.text(child), span=self.span(child))
            elif kind == "spread_element" and child.named_children:
                spread = child.named_children[0]
                items[SPREAD + self.text(spread)] = self.value(spread)
        return items

    def _pair_key(self, key_node: Node | None) -> str | None:
        """An object literal's key: a name or string, or a computed key naming a constant's
        string (``[createInvoiceTool.name]: handler``, ``[ToolNames.SEND]: send``)."""
        key = _property_key(key_node, self.source)
        if key is None and key_node is not None and key_node.type == "computed_property_name":
            inner = key_node.named_children[0] if key_node.named_children else None
            return self._static_string(inner)
        return key

    def _template_parts(self, node: Node) -> list[Value]:
        parts: list[Value] = []
        for child in node.named_children:
            if child.type == "template_substitution":
                inner = child.named_children[0] if child.named_children else None
                parts.append(self.value(inner))
            elif child.type in ("string_fragment", "escape_sequence"):
                literal = self.text(child, 2000)
                parts.append(leaf_value("const", literal, literal, op="text"))
        return parts

    def chain(self, node: Node) -> Chain | None:
        steps: list[Step] = []
        current: Node | None = node
        grammar = self.grammar
        while current is not None:
            kind = current.kind_id
            if kind in grammar.member:
                prop = current.child_by_field_id(grammar.field_property)
                steps.append(("attr", self.text(prop) if prop is not None else ""))
                current = current.child_by_field_id(grammar.field_object)
            elif kind in grammar.calls:
                steps.append(CALL_STEP)
                current = current.child_by_field_id(
                    grammar.field_function
                ) or current.child_by_field_id(grammar.field_constructor)
            elif kind in grammar.transparent:
                current = _inner(current)
            elif kind in grammar.subscript:
                index = current.child_by_field_name("index")
                literal: str | int | None = None
                if index is not None and index.type == "string":
                    literal = _string_of(index, self.source)
                elif index is not None and index.type == "number":
                    number = _number(self.text(index))
                    literal = number if isinstance(number, int) else None
                steps.append(("item", literal))
                current = current.child_by_field_name("object")
            else:
                break
        steps.reverse()
        if current is not None and current.kind_id in grammar.identifier_or_this:
            return Chain(
                "self" if current.kind_id in grammar.this else self.text(current), tuple(steps)
            )
        if not steps:
            return None
        return Chain("", tuple(steps), self.value(current) if current is not None else None)

    def _reads(self, node: Node) -> tuple[list[str], list[str], list[str]]:
        """The names, callees and attribute names read under ``node`` (not inside a nested
        function), each list built once per node from its children's."""
        key = node.id
        known = self._reads_memo.get(key)
        if known is not None:
            return known
        names: list[str] = []
        calls: list[str] = []
        attrs: list[str] = []
        source = self.source
        grammar = self.grammar
        plain_names, this = grammar.plain_names, grammar.this
        kind = node.kind_id
        if kind in plain_names:
            names.append(source[node.start_byte : node.end_byte].decode("utf-8", "replace"))
        elif kind in this:
            names.append("self")
        else:
            if kind in grammar.calls:
                func = self.callee_node(node)
                callee = self.resolve(func) if func is not None else None
                if callee:
                    calls.append(callee)
            elif kind in grammar.member:
                prop = node.child_by_field_id(grammar.field_property)
                if prop is not None:
                    attrs.append(self.text(prop))
            unread = grammar.no_reads_or_functions
            for child in node.named_children:
                child_kind = child.kind_id
                # The leaves read here, not through a memoised call of their own: no
                # Value asks for a name's reads (``_value`` answers a name itself).
                if child_kind in plain_names:
                    names.append(
                        source[child.start_byte : child.end_byte].decode("utf-8", "replace")
                    )
                elif child_kind in this:
                    names.append("self")
                elif child_kind not in unread and child.named_child_count:
                    child_names, child_calls, child_attrs = self._reads(child)
                    names += child_names
                    calls += child_calls
                    attrs += child_attrs
        found = self._reads_memo[key] = (names or NO_NAMES, calls or NO_NAMES, attrs or NO_NAMES)
        return found

    def _arguments(self, node: Node) -> list[Node]:
        grammar = self.grammar
        args = node.child_by_field_id(grammar.field_arguments)
        if args is None:
            return []
        if args.kind_id in grammar.template_string:  # a tagged template
            return [args]
        comment = grammar.comment
        return [a for a in args.named_children if a.kind_id not in comment]

    # ------------------------------------------------------------------ traversal
    def visit(self, node: Node) -> None:
        handler = self.visits.get(node.kind_id, _VISIT_CHILDREN)
        if handler is _VISIT_CHILDREN:
            self.visit_children(node)
        elif handler is not None:
            handler(self, node)

    def visit_children(self, node: Node) -> None:
        # ``visit`` inlined: most nodes are leaves or kinds with no visit of their own.
        visits = self.visits
        for child in node.named_children:
            handler = visits.get(child.kind_id, _VISIT_CHILDREN)
            if handler is _VISIT_CHILDREN:
                if child.named_child_count:
                    self.visit_children(child)
            elif handler is not None:
                handler(self, child)

    def visit_comment(self, node: Node) -> None:
        return

    # -------------------------------------------------------------- imports and exports
    def visit_import_statement(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        if source is None:
            return
        specifier = _string_of(source, self.source) or ""
        module = self.resolve_import(self.path, specifier)
        project = not module.startswith(("npm:", "node:"))
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":  # default import
                    name = self.text(part)
                    self.facts.imports[name] = f"{module}.default" if project else module
                elif part.type == "namespace_import":
                    ident = _first_of(part, "identifier")
                    if ident is not None:
                        self.facts.imports[self.text(ident)] = module
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type != "import_specifier":
                            continue
                        name_node = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias")
                        if name_node is None:
                            continue
                        name = _property_key(name_node, self.source) or self.text(name_node)
                        local = self.text(alias) if alias is not None else name
                        self.facts.imports[local] = f"{module}.{name}"

    def visit_export_statement(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        if source is not None:
            specifier = _string_of(source, self.source) or ""
            module = self.resolve_import(self.path, specifier)
            if not any(
                c.type in ("export_clause", "namespace_export") for c in node.named_children
            ):
                # ``export * from "./agent"``: a barrel, whose names are that module's
                self.facts.star_imports.append(module)
            for child in node.named_children:
                if child.type == "export_clause":
                    for spec in child.named_children:
                        name_node = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias")
                        if name_node is None:
                            continue
                        name = self.text(name_node)
                        local = self.text(alias) if alias is not None else name
                        self.facts.imports.setdefault(local, f"{module}.{name}")
                elif child.type == "namespace_export":
                    ident = _first_of(child, "identifier")
                    if ident is not None:
                        self.facts.imports.setdefault(self.text(ident), module)
            return
        declaration = node.child_by_field_name("declaration")
        is_default = any(c.type == "default" for c in node.children)
        if declaration is not None:
            self.visit(declaration)
            declared = declaration.child_by_field_name("name")
            if is_default and declared is not None:
                # ``export default async function desyncedAgentCall(...)``
                self.facts.imports.setdefault("default", f"{self.module}.{self.text(declared)}")
            return
        value = node.child_by_field_name("value")
        for child in node.named_children:
            if child.type in _FUNCTION_DECLARATIONS or child.type in _CLASS_DECLARATIONS:
                self.visit(child)
                declared = child.child_by_field_name("name")
                if declared is not None and is_default:
                    self.facts.imports.setdefault("default", f"{self.module}.{self.text(declared)}")
                return
        if value is not None:
            if value.type in _FUNCTION_EXPRESSIONS:
                self._function(value, "default")
            elif value.type == "identifier" and is_default:
                # the name itself (an import, or this module's own constant or function),
                # never the type a constant is annotated with
                name = self.text(value)
                own = self.facts.imports.get(name) or f"{self.module}.{name}"
                self.facts.imports.setdefault("default", own)
                return
            elif value.type in ("call_expression", "new_expression", "object"):
                self._assign("default", value, node)  # visits the value once
            else:
                self.visit(value)

    # ------------------------------------------------------------------ definitions
    def _qualname(self, name: str) -> str:
        if not self.containers:
            return f"{self.module}.{name}"
        kind, outer = self.containers[-1]
        return f"{outer}.{name}" if kind in ("class", "object") else f"{outer}.<locals>.{name}"

    def _unique(self, qualname: str) -> str:
        seen = self._labels.get(qualname, 0)
        self._labels[qualname] = seen + 1
        if seen == 0 and qualname not in self.facts.functions:
            return qualname
        return f"{qualname}#{seen + 1}"

    def visit_function_declaration(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        self._function(node, self.text(name) if name is not None else "<anonymous>")

    visit_generator_function_declaration = visit_function_declaration

    def _function(
        self,
        node: Node,
        name: str,
        *,
        method_of: ClassDef | None = None,
        static: bool = False,
        qualname: str | None = None,
        anchor: Node | None = None,
    ) -> str:
        """Record a function (a declaration, a method or a named function expression) and
        visit its body in a scope of its own; its qualified name."""
        qual = self._unique(qualname or self._qualname(name))
        self._function_nodes[node.id] = qual
        is_async = any(c.type == "async" for c in node.children)
        params_node = node.child_by_field_name("parameters") or node.child_by_field_name(
            "parameter"
        )
        params, types = self._parameters(params_node)
        if method_of is not None and not static:
            params.insert(0, "self")
        name_node = node.child_by_field_name("name")
        where = anchor if anchor is not None else (name_node if name_node is not None else node)
        span = self.span(anchor if anchor is not None else node)
        function = Function(
            qualname=qual,
            name=name,
            module=self.module,
            class_name=method_of.qualname if method_of is not None else None,
            span=Span(span.line, span.column, *self.span(node)[2:]),
            name_span=self.span(where)
            if anchor is None or where.id != anchor.id
            else Span.point(span.line, span.column),
            params=params,
            is_async=is_async,
            is_test=self.facts.is_test,
            decorators=self._decorators(node),
        )
        returns = node.child_by_field_name("return_type")
        if returns is not None:
            function.return_type = self._type_name(returns)
        if self.scope.function is not None:
            self.scope.function.nested.append(qual)
        self.facts.functions[qual] = function
        if method_of is not None:
            method_of.methods.append(qual)
        scope = Scope(function)
        scope.types.update(types)
        self.scopes.append(scope)
        self._forget_values()
        self.containers.append(("def", qual))
        body = node.child_by_field_name("body")
        if body is not None:
            if body.type == "statement_block":
                self._bind_local_functions(body, qual)
                self.visit_children(body)
            else:  # an arrow's expression body is what it returns
                self.visit(body)
                function.returns.append(self.value(body))
        self.containers.pop()
        self.scopes.pop()
        self._forget_values()
        return qual

    def _bind_local_functions(self, body: Node, qual: str) -> None:
        """A function's own function declarations and function constants are callable by
        name anywhere in it (declarations are hoisted): ``handle(args)`` calls
        ``outer.<locals>.handle``."""
        for statement in body.named_children:
            if statement.type in _FUNCTION_DECLARATIONS:
                name = statement.child_by_field_name("name")
                if name is not None:
                    self.scope.types[self.text(name)] = f"{qual}.<locals>.{self.text(name)}"
            elif statement.type in ("lexical_declaration", "variable_declaration"):
                for declarator in statement.named_children:
                    name = declarator.child_by_field_name("name")
                    value = declarator.child_by_field_name("value")
                    if (
                        name is not None
                        and name.type == "identifier"
                        and value is not None
                        and _unwrap(value).type in _FUNCTION_EXPRESSIONS
                    ):
                        self.scope.types[self.text(name)] = f"{qual}.<locals>.{self.text(name)}"

    def _parameters(self, node: Node | None) -> tuple[list[str], dict[str, str]]:
        """Parameter names (a destructured object's fields flattened) and the types a
        parameter's annotation gives (``client: Octokit``)."""
        names: list[str] = []
        types: dict[str, str] = {}
        if node is None:
            return names, types
        if node.type == "identifier":  # ``x => ...``
            return [self.text(node)], types
        for param in node.named_children:
            if param.type not in ("required_parameter", "optional_parameter"):
                if param.type == "identifier":
                    names.append(self.text(param))
                continue
            pattern = param.child_by_field_name("pattern")
            annotation = param.child_by_field_name("type")
            if pattern is None:
                continue
            if pattern.type == "identifier":
                name = self.text(pattern)
                names.append(name)
                typed = self._type_name(annotation)
                if typed and typed != name:
                    types[name] = typed
            elif pattern.type == "rest_pattern":
                ident = _first_of(pattern, "identifier")
                if ident is not None:
                    names.append(self.text(ident))
            else:
                names.extend(_pattern_names(pattern, self.source))
                # ``{ client }: { client: WebClient }``: each field's declared type
                if annotation is not None:
                    for field_name, field_type in self._object_type_fields(annotation):
                        types.setdefault(field_name, field_type)
            for modifier in param.named_children:
                # ``constructor(private client: Octokit)``: a field of the instance
                if modifier.type == "accessibility_modifier" and self.class_stack:
                    if pattern.type == "identifier":
                        typed = self._type_name(annotation)
                        if typed:
                            self.class_stack[-1].self_types.setdefault(self.text(pattern), typed)
        return names, types

    def _object_type_fields(self, node: Node) -> Iterator[tuple[str, str]]:
        inner = (
            node.named_children[0]
            if node.type == "type_annotation" and node.named_children
            else node
        )
        if inner is None or inner.type != "object_type":
            return
        for member in inner.named_children:
            if member.type == "property_signature":
                key = member.child_by_field_name("name")
                typed = self._type_name(member.child_by_field_name("type"))
                if key is not None and typed:
                    yield self.text(key), typed

    def _decorators(self, node: Node) -> list[Decorator]:
        found: list[Decorator] = []
        for child in node.children:
            if child.type != "decorator":
                continue
            expression = child.named_children[0] if child.named_children else None
            if expression is None:
                continue
            if expression.type == "call_expression":
                func = expression.child_by_field_name("function")
                found.append(
                    Decorator(
                        qualname=(self.resolve(func) if func is not None else None)
                        or self.text(expression),
                        text=self.text(child),
                        called=True,
                        args=[self.value(a) for a in self._arguments(expression)],
                        span=self.span(child),
                    )
                )
            else:
                found.append(
                    Decorator(
                        qualname=self.resolve(expression) or self.text(expression),
                        text=self.text(child),
                        called=False,
                        span=self.span(child),
                    )
                )
        return found

    def visit_class_declaration(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        self._class(node, self.text(name) if name is not None else "<anonymous>")

    visit_abstract_class_declaration = visit_class_declaration
    visit_class = visit_class_declaration

    def _class(self, node: Node, name: str) -> str:
        qualname = self._qualname(name)
        bases: list[str] = []
        for child in node.named_children:
            if child.type != "class_heritage":
                continue
            for clause in child.named_children:
                for base in clause.named_children:
                    if base.type in ("type_arguments", "arguments"):
                        continue
                    target = (
                        base.child_by_field_name("function")
                        if base.type == "call_expression"
                        else base
                    )
                    if base.type == "generic_type":
                        target = base.child_by_field_name("name") or base.named_children[0]
                    if target is None:
                        continue
                    resolved = self.resolve(target) if target.type != "type_identifier" else None
                    bases.append(resolved or self._type_name(target) or self.text(target))
        name_node = node.child_by_field_name("name")
        cls = ClassDef(
            qualname=qualname,
            name=name,
            module=self.module,
            span=self.span(node),
            name_span=self.span(name_node) if name_node is not None else self.span(node),
            bases=bases,
            methods=[],
            decorators=self._decorators(node),
        )
        self.facts.classes[qualname] = cls
        self.class_stack.append(cls)
        self.containers.append(("class", qualname))
        body = node.child_by_field_name("body")
        members = body.named_children if body is not None else []
        for member in members:
            if member.type in ("public_field_definition", "field_definition"):
                self._field(member, cls)
        for member in members:
            if member.type in ("method_definition", "abstract_method_signature"):
                key = member.child_by_field_name("name")
                method = self.text(key) if key is not None else "<anonymous>"
                if method == "constructor":
                    method = "__init__"
                static = any(c.type == "static" for c in member.children)
                if member.type == "abstract_method_signature":
                    self._signature(member, method, cls, abstract=True)
                    continue
                self._function(member, method, method_of=cls, static=static)
            elif member.type in ("public_field_definition", "field_definition"):
                value = member.child_by_field_name("value")
                key = member.child_by_field_name("name") or member.child_by_field_name("property")
                if value is not None and key is not None and value.type in _FUNCTION_EXPRESSIONS:
                    static = any(c.type == "static" for c in member.children)
                    self._function(
                        value, self.text(key), method_of=cls, static=static, anchor=member
                    )
                elif value is not None:
                    self.visit(value)
            elif member.type == "class_static_block":
                self.visit_children(member)
        self.containers.pop()
        self.class_stack.pop()
        return qualname

    def _field(self, member: Node, cls: ClassDef) -> None:
        key = member.child_by_field_name("name") or member.child_by_field_name("property")
        if key is None:
            return
        name = _property_key(key, self.source) or self.text(key)
        value = member.child_by_field_name("value")
        annotation = member.child_by_field_name("type")
        item = self._item_type(annotation, _unwrap(value) if value is not None else None)
        if item is not None:
            cls.item_types[name] = item
        typed = self._type_name(annotation)
        if typed:
            if name not in cls.self_types:
                cls.self_types[name] = typed
                self._declared_only.add((cls.qualname, name))
        elif annotation is not None and self.text(annotation).strip(": ") in ("any", "unknown"):
            cls.opaque.append(name)
        if value is not None:
            held = self.value(value)
            cls.attributes[name] = held
            if value.type == "new_expression" and held.qualname:
                self._bind(f"self.{name}", held.qualname)

    # ------------------------------------------------------------------ statements
    def visit_lexical_declaration(self, node: Node) -> None:
        for declarator in node.named_children:
            if declarator.type == "variable_declarator":
                self._declarator(declarator)

    visit_variable_declaration = visit_lexical_declaration

    def _declarator(self, node: Node) -> None:
        target = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if target is None:
            return
        if value is not None and not self.scope.function and self._required(target, value):
            return
        annotation = node.child_by_field_name("type")
        if target.type != "identifier":
            if value is not None:
                self.visit(value)
                # ``const { data } = await client.get(...)``: each name holds a field
                made = self.value(value)
                held = None
                if target.type == "object_pattern" and value.type == "identifier":
                    held = self.scope.types.get(self.text(value))
                elif target.type == "object_pattern" and value.type == "as_expression":
                    held = self._type_name(value.named_children[-1])
                for name in _pattern_names(target, self.source):
                    self._record(name, made, node)
                    if held and name not in self.scope.types:
                        # ``const { sdk } = context`` with ``context: ToolContext``: the
                        # field the type declares
                        self.scope.types[name] = f"{held}.{name}"
                        self._forget_values()
            return
        name = self.text(target)
        queried = self._queried(annotation)
        if queried is not None and name not in self.scope.types:
            # ``let paidFetch: typeof fetch | null = null``, set later: calling it fetches
            self.scope.types[name] = queried
            self._forget_values()
        if not self.scope.function:
            item = self._item_type(annotation, _unwrap(value) if value is not None else None)
            if item is not None:
                self.facts.item_types[name] = item
        typed = self._type_name(annotation)
        if not typed and value is not None and value.type == "as_expression":
            # ``const context = experimental_context as ToolContext``: the local holds what
            # the assertion names
            typed = self._type_name(value.named_children[-1] if value.named_children else None)
        if typed:
            self.scope.types[name] = typed
            self._forget_values()
        if value is None:
            return
        bare = _unwrap(value)
        if bare.type in _FUNCTION_EXPRESSIONS:
            qual = self._function(bare, name, anchor=node)
            self._record(name, _function_value(qual, self.text(bare), self.span(bare)), node)
            return
        if bare.type == "class":
            self._class(bare, name)
            return
        if bare.type == "object" and not self.scope.function:
            self._namespace(bare, name, node)
            return
        self._assign(name, value, node)

    def _required(self, target: Node, value: Node) -> bool:
        """CommonJS at module level: ``const handlers = require("./handlers")`` binds the
        module as a namespace import does; ``const { Server } = require("...")`` binds its
        names (``{ a: b }`` binds ``b`` to ``a``), as named imports do."""
        call = _unwrap(value)
        if call.type != "call_expression":
            return False
        function = call.child_by_field_name("function")
        arguments = call.child_by_field_name("arguments")
        if function is None or self.text(function) != "require" or arguments is None:
            return False
        strings = [a for a in arguments.named_children if a.type == "string"]
        if len(strings) != 1 or len(arguments.named_children) != 1:
            return False
        module = self.resolve_import(self.path, _string_of(strings[0], self.source) or "")
        if target.type == "identifier":
            self.facts.imports[self.text(target)] = module
            return True
        if target.type != "object_pattern":
            return False
        for part in target.named_children:
            if part.type == "shorthand_property_identifier_pattern":
                self.facts.imports[self.text(part)] = f"{module}.{self.text(part)}"
            elif part.type == "pair_pattern":
                key = _property_key(part.child_by_field_name("key"), self.source)
                local = part.child_by_field_name("value")
                if key is not None and local is not None and local.type == "identifier":
                    self.facts.imports[self.text(local)] = f"{module}.{key}"
        return True

    def _namespace(self, node: Node, name: str, statement: Node) -> None:
        """``const handlers = { create: async () => ..., list() {...} }`` at module level:
        each function property is the function ``handlers.create``."""
        self.containers.append(("object", self._qualname(name)))
        value = self._object_value(node)
        self.containers.pop()
        self._record(name, value, statement)

    def _object_members(self, node: Node, label: str | None = None) -> dict[str, Value]:
        """Visit an object literal's members, making each function property a function;
        the items that name those functions."""
        items: dict[str, Value] = {}
        for child in node.named_children:
            if child.type == "pair":
                key_node = child.child_by_field_name("key")
                key = self._pair_key(key_node)
                value = child.child_by_field_name("value")
                written = key
                if (
                    key is not None
                    and key_node is not None
                    and key_node.type == "computed_property_name"
                ):
                    written = re.sub(r"\W", "_", self.text(key_node)[1:-1].strip())
                if key is None or written is None or value is None:
                    if value is not None:
                        self.visit(value)
                    continue
                bare = _unwrap(value)
                if bare.type in _FUNCTION_EXPRESSIONS:
                    qual = self._function(
                        bare, f"{label}:{written}" if label else written, anchor=child
                    )
                    items[key] = _function_value(qual, self.text(bare), self.span(bare))
                elif bare.type == "object" and not label:
                    self.containers.append(("object", self._qualname(key)))
                    self._object_members(bare)
                    self.containers.pop()
                else:
                    self.visit(value)
            elif child.type == "method_definition":
                key = _property_key(child.child_by_field_name("name"), self.source)
                if key is None:
                    continue
                qual = self._function(child, f"{label}:{key}" if label else key)
                items[key] = _function_value(qual, self.text(child), self.span(child))
            else:
                self.visit(child)
        return items

    def _assign(self, name: str, value_node: Node, statement: Node) -> None:
        self.visit(value_node)
        self._record(name, self.value(value_node), statement)
        bare = _unwrap(value_node)
        if bare.type == "new_expression":
            made = self.value(bare)
            if made.qualname:
                self._bind(name, made.qualname)
        elif bare.type == "call_expression":
            made = self.value(bare)
            last = (made.qualname or "").rsplit(".", 1)[-1]
            wrapped = made.call_args[0].qualname if made.call_args else None
            if made.qualname == _PROMISIFY and wrapped:
                # ``const execAsync = promisify(exec)``: calling it calls ``exec``
                self._bind(name, wrapped)
            elif made.qualname and (last[:1].isupper() or last in ("createClient", "client")):
                self._bind(name, made.qualname)
            elif (
                made.qualname
                and made.qualname.startswith("npm:")
                and "()" not in made.qualname
                and _inner_type(value_node) != "await_expression"
            ):
                # what a package's factory hands back at once (``axios.create()``,
                # ``google.gmail({...})``, ``postgres(url)``): a client, named after the call.
                # What is awaited is the answer to a request, data and not a client.
                self._bind(name, f"{made.qualname}()")
        elif bare.type in ("identifier", "member_expression") and not name.startswith("self."):
            resolved = self.resolve(bare)
            if resolved and self._names_elsewhere(resolved) and name not in self.scope.types:
                self.scope.types[name] = resolved
                self._forget_values()
        elif bare.type == "binary_expression" and not name.startswith("self."):
            self._bind_default(name, bare)

    def _bind_default(self, name: str, node: Node) -> None:
        """``const f = cfg.fetchImpl ?? fetch``: a value a caller may hand in, else the
        default named last; calling the local calls that default (an injected one is a
        test's double)."""
        operator = node.child_by_field_name("operator")
        fallback = node.child_by_field_name("right")
        if operator is None or self.text(operator) not in ("??", "||") or fallback is None:
            return
        fallback = _unwrap(fallback)
        if fallback.type not in ("identifier", "member_expression"):
            return
        resolved = self.resolve(fallback)
        if resolved and resolved != "self" and name not in self.scope.types:
            self.scope.types[name] = resolved
            self._forget_values()

    def _bind(self, name: str, typed: str) -> None:
        if name.startswith("self."):
            if self.class_stack:
                # what the code builds into a field says more than the type it declares
                # (``this.http = axios.create(...)`` into ``http: AxiosInstance``)
                cls, attribute = self.class_stack[-1], name[5:]
                if (cls.qualname, attribute) in self._declared_only:
                    self._declared_only.discard((cls.qualname, attribute))
                    cls.self_types[attribute] = typed
                else:
                    cls.self_types.setdefault(attribute, typed)
        elif self.scope.types.get(name) != typed:
            self.scope.types[name] = typed
            self._forget_values()

    def _record(self, name: str, value: Value, statement: Node) -> None:
        function = self.scope.function
        self.facts.assignments.append(
            Assignment(
                name,
                value,
                self.span(statement),
                function.qualname if function else None,
                self.scope.order,
            )
        )

    def visit_expression_statement(self, node: Node) -> None:
        self.visit_children(node)

    def visit_assignment_expression(self, node: Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if left is None or right is None:
            self.visit_children(node)
            return
        bare = _unwrap(right)
        target = self._target_name(left)
        if target is not None and bare.type in _FUNCTION_EXPRESSIONS:
            method = target.split(".")[-1]
            qual = self._function(bare, method, anchor=node)
            self._record(target, _function_value(qual, self.text(bare), self.span(bare)), node)
            return
        if target is not None:
            self._assign(target, right, node)
            return
        self.visit(right)
        function = self.scope.function
        if left.type == "subscript_expression":
            obj = left.child_by_field_name("object")
            if obj is not None:
                self.facts.stores.append(
                    Assignment(
                        self.text(obj, 120).replace("this.", "self."),
                        self.value(right),
                        self.span(node),
                        function.qualname if function else None,
                        self.scope.order,
                    )
                )
        elif left.type == "member_expression":
            self.facts.attribute_sets.append(
                Assignment(
                    self.text(left, 120),
                    self.value(right),
                    self.span(node),
                    function.qualname if function else None,
                    self.scope.order,
                )
            )
        self.visit(left)

    def _target_name(self, node: Node) -> str | None:
        if node.type == "identifier":
            return self.text(node)
        if node.type == "member_expression":
            obj = node.child_by_field_name("object")
            prop = node.child_by_field_name("property")
            if obj is not None and prop is not None and obj.type == "this":
                return f"self.{self.text(prop)}"
        if node.type == "subscript_expression":
            obj = node.child_by_field_name("object")
            index = node.child_by_field_name("index")
            if (
                obj is not None
                and obj.type == "identifier"
                and index is not None
                and index.type == "string"
            ):
                return f"{self.text(obj)}[{_string_of(index, self.source)}]"
        return None

    def visit_return_statement(self, node: Node) -> None:
        self.visit_children(node)
        value = node.named_children[0] if node.named_children else None
        if value is not None and self.scope.function is not None:
            self.scope.function.returns.append(self.value(value))

    def visit_throw_statement(self, node: Node) -> None:
        self.visit_children(node)
        value = node.named_children[0] if node.named_children else None
        if value is not None and self.scope.function is not None:
            self.scope.function.raises.append(self.value(value))

    # ------------------------------------------------------------------ calls
    def callee_node(self, call: Node) -> Node | None:
        """What a call or ``new`` calls. The grammar reads ``await api.get<T>(url)`` (a call
        with type arguments after ``await``) as a call of ``await api.get``: the callee is
        what is awaited, and the whole call is the awaited one (``_inner_type``)."""
        grammar = self.grammar
        func = call.child_by_field_id(grammar.field_function) or call.child_by_field_id(
            grammar.field_constructor
        )
        if func is not None and func.kind_id in grammar.await_:
            return _inner(func)
        return func

    def visit_call_expression(self, node: Node) -> None:
        grammar = self.grammar
        func = self.callee_node(node)
        if func is None:
            self.visit_children(node)
            return
        resolved = self.resolve(func)
        text = self.text(func, 120)
        func_kind = func.kind_id
        if func_kind in grammar.member:
            prop = func.child_by_field_id(grammar.field_property)
            obj = func.child_by_field_id(grammar.field_object)
            method = self.text(prop) if prop is not None else text
            receiver = (self.resolve(obj) if obj is not None else None) or (
                self.text(obj, 120) if obj is not None else None
            )
        else:
            method = resolved.rsplit(".", 1)[-1] if resolved else text
            receiver = None
            obj = None
        arguments = self._arguments(node)
        scope = self.scope
        function = scope.function
        if func_kind in grammar.member and method in _ELEMENT_RUNNERS and arguments and obj:
            self._callback_loop(obj, arguments[0])
        handed_label, self._callback_label = self._callback_label, None
        label = handed_label or self._registration_label(method, arguments)
        args = [
            self._argument(a, method, index, len(arguments), label, handed_label is not None)
            for index, a in enumerate(arguments[:8])
        ]
        call = Call(
            resolved or text,
            text,
            method,
            receiver,
            self.span(node),
            args,
            # An options object written last is how a JavaScript API takes keyword
            # arguments (``fetch(url, {method: "POST"})``, ``axios.post(url, body,
            # {timeout})``): its fields are the call's keywords, as Python's would be.
            dict(args[-1].items) if args and args[-1].kind == "dict" else NO_ITEMS,
            NO_VALUES,
            function.qualname if function else None,
            list(scope.loops) if scope.loops else NO_IDS,
            scope.order,
            self.chain(func),
        )
        scope.order += 1
        self.facts.calls.append(call)
        if func_kind not in grammar.identifier:
            self.visit(func)
        for argument in arguments[8:]:
            self.visit(argument)

    visit_new_expression = visit_call_expression

    def _callback_loop(self, walked: Node, callback: Node) -> None:
        """``tools.forEach(({ name, handler }) => server.registerTool(name, ...))``: the
        callback runs once per element, in its caller (its calls are the caller's), so it
        is a loop of the caller's over ``walked`` binding the callback's first parameter."""
        bare = _unwrap(callback)
        if bare.type not in _FUNCTION_EXPRESSIONS:
            return
        params = bare.child_by_field_name("parameters") or bare.child_by_field_name("parameter")
        first = params if params is not None and params.type == "identifier" else None
        if first is None and params is not None:
            first = next(iter(params.named_children), None)
            if first is not None and first.type in ("required_parameter", "optional_parameter"):
                first = first.child_by_field_name("pattern")
        if first is None:
            return
        loop = Loop(loop_id=self.new_id(), kind="for", span=self.span(bare))
        if first.type == "identifier":
            loop.targets = [self.text(first)]
        else:
            loop.targets = _pattern_names(first, self.source)
            loop.fields = first.type == "object_pattern"
            loop.renamed = _renamed_fields(first, self.source)
        loop.iterable = self.value(walked)
        self._keep_loop(loop)

    def _keep_loop(self, loop: Loop) -> None:
        """A loop is its function's, or the module's when written at module level."""
        fn = self.scope.function
        if fn is not None:
            fn.loops.append(loop)
        elif self.scope is self.module_scope:
            self.facts.loops.append(loop)

    def _registration_label(self, method: str, arguments: list[Node]) -> str:
        """What a function handed to a call is named after: ``tool:create_issue`` for
        ``server.tool("create_issue", ..., cb)``; the options object's ``name`` or the
        constant the call is assigned to otherwise."""
        for argument in arguments[:1]:
            if argument.type == "string":
                return f"{method}:{_string_of(argument, self.source)}"
        for argument in arguments:
            if argument.type == "object":
                for child in argument.named_children:
                    if child.type == "pair":
                        key = _property_key(child.child_by_field_name("key"), self.source)
                        value = child.child_by_field_name("value")
                        if key in _NAME_FIELDS and value is not None and value.type == "string":
                            return f"{method}:{_string_of(value, self.source)}"
        return method

    def _argument(
        self, node: Node, method: str, index: int, count: int, label: str, wrapping: bool = False
    ) -> Value:
        """An argument's Value, visiting what it holds; a function handed to a registration
        (last of two or more arguments, or inside an options object) becomes a function of
        its own, named by ``label``, and so does one handed to a call written in that place
        (``wrapping``: ``registerTool("x", {...}, wrap(async (a) => ...))``, a wrapper that
        returns the callback)."""
        bare = _unwrap(node)
        callback = method not in _INLINE_RUNNERS and count >= 2 and index == count - 1
        if bare.type in _FUNCTION_EXPRESSIONS:
            own = callback or (
                method not in _INLINE_RUNNERS and (wrapping or self.scope.function is None)
            )
            if own:
                qual = self._function(bare, label)
                return _function_value(qual, self.text(bare), self.span(bare))
            self._inline(bare)
            return self.value(bare)
        if bare.type == "object" and method not in _INLINE_RUNNERS:
            return self._object_value(bare, label)
        if callback and bare.kind_id in self.grammar.calls:
            self._callback_label = label
        self.visit(node)
        self._callback_label = None
        return self.value(node)

    def _inline(self, node: Node) -> None:
        """A function expression whose calls are its enclosing function's."""
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit(body)

    def visit_arrow_function(self, node: Node) -> None:
        self._inline(node)

    visit_function_expression = visit_arrow_function
    visit_function = visit_arrow_function
    visit_generator_function = visit_arrow_function

    def visit_object(self, node: Node) -> None:
        # An object literal anywhere else: its function properties are functions of their
        # own (``return { execute: async () => ... }``).
        self._object_value(node)

    def _object_value(self, node: Node, label: str | None = None) -> Value:
        """An object literal's Value, its function properties made functions of their own
        (named after ``label``); kept among the module's dicts when shaped like a tool spec."""
        items = self._object_members(node, label)
        value = self.value(node)
        if items:
            value.items.update(items)
        if tool_schema_shaped(value.items) or _tool_record_shaped(value.items):
            self.facts.dicts.append(value)
        return value

    # ------------------------------------------------------------------ control flow
    def visit_if_statement(self, node: Node) -> None:
        condition = node.child_by_field_name("condition")
        consequence = node.child_by_field_name("consequence")
        test = _inner(condition) if condition is not None else None
        if test is not None and test.type == "binary_expression":
            operator = test.child_by_field_name("operator")
            if operator is not None and self.text(operator) in ("===", "=="):
                for side in (test.child_by_field_name("left"), test.child_by_field_name("right")):
                    string = self._static_string(side)
                    if string is not None and consequence is not None:
                        self._branch(string, consequence)
        if condition is not None:
            self.visit(condition)
        scope = self.scope
        start = scope.order
        if consequence is not None:
            self.visit(consequence)
        if scope.function is not None and test is not None:
            scope.function.branches.append(
                Branch(
                    test=self.value(test),
                    span=self.span(node),
                    body_order=(start, scope.order),
                    exits=consequence is not None and _ends_in_exit(consequence),
                )
            )
        alternative = node.child_by_field_name("alternative")
        if alternative is not None:
            self.visit(alternative)

    def _branch(self, string: str, body: Node) -> None:
        fn = self.scope.function
        self.facts.branches.append((fn.qualname if fn else None, string, self.span(body)))

    def visit_switch_statement(self, node: Node) -> None:
        value = node.child_by_field_name("value")
        if value is not None:
            self.visit(value)
        body = node.child_by_field_name("body")
        if body is None:
            return
        pending: list[str] = []
        for case in body.named_children:
            if case.type == "switch_case":
                test = case.child_by_field_name("value")
                string = self._static_string(test)
                if string is not None:
                    pending.append(string)
                statements = [c for c in case.named_children if test is None or c.id != test.id]
                if statements and pending:
                    first, last = self.span(statements[0]), self.span(statements[-1])
                    where = Span(first.line, first.column, last.end_line, last.end_column)
                    fn = self.scope.function
                    for name in pending:
                        self.facts.branches.append((fn.qualname if fn else None, name, where))
                    pending = []
                for statement in statements:
                    self.visit(statement)
            else:
                self.visit(case)

    def _loop(self, node: Node) -> None:
        loop_id = self.new_id()
        kind = "while" if node.type in ("while_statement", "do_statement") else "for"
        body = node.child_by_field_name("body")
        loop = Loop(loop_id=loop_id, kind=kind, span=self.span(node))
        loop.is_retry_shape = _retry_shaped(node, body, self.source)
        if node.type == "for_in_statement":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is not None:
                loop.targets = (
                    _pattern_names(left, self.source)
                    if left.type != "identifier"
                    else [self.text(left)]
                )
                loop.fields = left.type == "object_pattern"
                loop.renamed = _renamed_fields(left, self.source)
            if right is not None:
                self.visit(right)
                loop.iterable = self.value(right)
        else:
            for field in ("initializer", "condition", "increment"):
                part = node.child_by_field_name(field)
                if part is not None:
                    self.visit(part)
        self._keep_loop(loop)
        self.scope.loops.append(loop_id)
        if body is not None:
            self.visit(body)
        if node.type == "do_statement":
            condition = node.child_by_field_name("condition")
            if condition is not None:
                self.visit(condition)
        self.scope.loops.pop()

    def visit_for_statement(self, node: Node) -> None:
        self._loop(node)

    visit_for_in_statement = visit_for_statement
    visit_while_statement = visit_for_statement
    visit_do_statement = visit_for_statement

    def visit_try_statement(self, node: Node) -> None:
        try_id = self.new_id()
        scope = self.scope
        start = scope.order
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit(body)
        end = scope.order
        fn = scope.function
        if fn is not None:
            fn.tries.append(
                TryBlock(
                    try_id=try_id,
                    span=self.span(node),
                    loop_ids=list(scope.loops),
                    body_order=(start, end),
                )
            )
        handler = node.child_by_field_name("handler")
        if handler is not None:
            self._handler(handler, try_id)
        finalizer = node.child_by_field_name("finalizer")
        if finalizer is not None:
            self.visit(finalizer)

    def _handler(self, node: Node, try_id: int) -> None:
        parameter = node.child_by_field_name("parameter")
        name = (
            self.text(parameter)
            if parameter is not None and parameter.type == "identifier"
            else None
        )
        body = node.child_by_field_name("body")
        record = Handler(try_id=try_id, caught=[], span=self.span(node), name=name)
        statements = list(_walk_own(body)) if body is not None else []
        for sub in statements:
            kind = sub.type
            if kind == "throw_statement":
                thrown = sub.named_children[0] if sub.named_children else None
                if thrown is not None and thrown.type == "identifier" and self.text(thrown) == name:
                    record.reraises = True
                elif thrown is not None:
                    record.raises.append(self.value(thrown))
            elif kind == "return_statement" and sub.named_children:
                record.returns.append(self.value(sub.named_children[0]))
            elif kind == "continue_statement":
                record.continues = True
            elif kind in ("call_expression", "new_expression"):
                func = sub.child_by_field_name("function") or sub.child_by_field_name("constructor")
                callee = self.resolve(func) if func is not None else None
                if callee:
                    record.calls.append(callee)
            elif kind == "string":
                literal = _string_of(sub, self.source)
                if literal:
                    record.strings.append(literal[:200])
            elif (
                kind == "string_fragment"
                and sub.parent is not None
                and sub.parent.type == "template_string"
            ):
                record.strings.append(self.text(sub, 200))
        record.breaks = body is not None and any(
            s.type == "break_statement" for s in _walk_own(body, into_loops=False)
        )
        record.raw_error_uses, record.tainted_names = self._raw_error_uses(statements, name)
        fn = self.scope.function
        if fn is not None:
            fn.handlers.append(record)
        if body is not None:
            self.visit(body)

    def _raw_text(self, node: Node, name: str | None, tainted: set[str]) -> str | None:
        """How an expression carries the caught error's text, if it does."""
        if name is None and not tainted:
            return None
        for sub in _walk_expression(node):
            kind = sub.type
            if kind == "identifier":
                written = self.text(sub)
                if written in tainted:
                    return f"`{written}` (holds the error text)"
                if written == name and _carries_whole_error(sub):
                    return written
            elif kind == "shorthand_property_identifier" and self.text(sub) in tainted:
                # ``{ error: "Failed", message }``: the property holds the local's text
                return f"`{self.text(sub)}` (holds the error text)"
            elif kind == "member_expression":
                obj = sub.child_by_field_name("object")
                prop = sub.child_by_field_name("property")
                if (
                    obj is not None
                    and prop is not None
                    and obj.type == "identifier"
                    and self.text(obj) == name
                    and self.text(prop) in JS_RAW_ERROR_ATTRIBUTES
                ):
                    return f"{name}.{self.text(prop)}"
            elif kind == "call_expression":
                func = sub.child_by_field_name("function")
                args = self._arguments(sub)
                first = args[0] if args else None
                if (
                    func is not None
                    and first is not None
                    and first.type == "identifier"
                    and self.text(first) == name
                    and self.text(func) in ("String", "JSON.stringify", "util.inspect", "inspect")
                ):
                    return f"{self.text(func)}({name})"
                if func is not None and func.type == "member_expression":
                    obj = func.child_by_field_name("object")
                    prop = func.child_by_field_name("property")
                    if (
                        obj is not None
                        and prop is not None
                        and obj.type == "identifier"
                        and self.text(obj) == name
                        and self.text(prop) == "toString"
                    ):
                        return f"{name}.toString()"
            elif kind == "template_substitution":
                inner = sub.named_children[0] if sub.named_children else None
                if inner is not None and inner.type == "identifier" and self.text(inner) == name:
                    return f"`${{{name}}}`"
        return None

    def _raw_error_uses(
        self, statements: list[Node], name: str | None
    ) -> tuple[list[RawErrorUse], list[str]]:
        tainted: set[str] = set()
        uses: list[RawErrorUse] = []
        if name is None:
            return uses, []
        for node in statements:
            kind = node.type
            if kind == "variable_declarator":
                target = node.child_by_field_name("name")
                value = node.child_by_field_name("value")
                if target is not None and value is not None and target.type == "identifier":
                    if self._raw_text(value, name, tainted):
                        tainted.add(self.text(target))
            elif kind == "assignment_expression":
                # ``cleanupError = (error as Error).message`` into a local declared before
                target = node.child_by_field_name("left")
                value = node.child_by_field_name("right")
                if target is not None and value is not None and target.type == "identifier":
                    if self._raw_text(value, name, tainted):
                        tainted.add(self.text(target))
            elif kind == "return_statement" and node.named_children:
                how = self._raw_text(node.named_children[0], name, tainted)
                if how:
                    uses.append(RawErrorUse(how, "return", self.span(node), None, self.text(node)))
            elif kind == "throw_statement" and node.named_children:
                thrown = node.named_children[0]
                if thrown.type == "new_expression":
                    how = next(
                        (
                            h
                            for h in (
                                self._raw_text(a, name, tainted) for a in self._arguments(thrown)
                            )
                            if h
                        ),
                        None,
                    )
                    if how:
                        ctor = thrown.child_by_field_name("constructor")
                        uses.append(
                            RawErrorUse(
                                how,
                                "raise",
                                self.span(node),
                                self.resolve(ctor) if ctor is not None else None,
                                self.text(node),
                            )
                        )
            elif kind == "call_expression" and not _inside(node, "throw_statement"):
                func = node.child_by_field_name("function")
                callee = (self.resolve(func) if func is not None else None) or (
                    self.text(func, 120) if func is not None else ""
                )
                if callee.startswith("console.") or callee.split(".")[-1] in (
                    "log",
                    "error",
                    "warn",
                    "info",
                    "debug",
                ):
                    continue
                args = self._arguments(node)
                how = next((h for h in (self._raw_text(a, name, tainted) for a in args) if h), None)
                if not how:
                    continue
                keys: list[str] = []
                strings: list[str] = []
                for arg in args:
                    if arg.type == "object":
                        for child in arg.named_children:
                            if child.type == "pair":
                                key = _property_key(child.child_by_field_name("key"), self.source)
                                if key:
                                    keys.append(key)
                                value = child.child_by_field_name("value")
                                if value is not None and value.type == "string":
                                    strings.append(_string_of(value, self.source) or "")
                uses.append(
                    RawErrorUse(
                        how, "call", self.span(node), callee, self.text(node), keys, strings
                    )
                )
        return uses, sorted(tainted)


# ---------------------------------------------------------------------- helpers
# The fields of a tool record a project builds for itself (``{name: "archive_page",
# description, schema, handler: async (args) => ...}``): a name, a parameter schema and a
# function that does the work.
_RECORD_SCHEMA_KEYS = frozenset({"schema", "argsSchema", "zodSchema", "inputSchema"})


def _tool_record_shaped(items: dict[str, Value]) -> bool:
    name = items.get("name")
    return (
        name is not None
        and name.string() is not None
        and not _RECORD_SCHEMA_KEYS.isdisjoint(items)
        and any(value.kind == "name" for key, value in items.items() if key != "name")
    )


def _unread(root: Node, span: Callable[[Node], Span], limit: int = 5) -> Iterator[Span]:
    """The first places the parser could not read (an ``ERROR`` node, or a token it had
    to assume missing), outermost first."""
    found = 0
    stack = [root]
    while stack and found < limit:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found += 1
            yield span(node)
            continue
        if node.has_error:
            stack.extend(reversed(node.children))


def _inner(node: Node) -> Node | None:
    for child in node.named_children:
        if child.type not in ("type_annotation", "comment") and not child.type.endswith("_type"):
            return child
    return None


def _inner_type(node: Node) -> str:
    """The type of the expression inside parentheses and type assertions (an ``await``
    stays: it says the value is a request's answer)."""
    while (
        node.type
        in (
            "parenthesized_expression",
            "as_expression",
            "satisfies_expression",
            "non_null_expression",
        )
        and node.named_children
    ):
        node = node.named_children[0]
    if node.type == "call_expression":
        func = node.child_by_field_name("function")
        if func is not None and func.type == "await_expression":
            return func.type  # ``await api.get<T>(url)``, as the grammar reads it
    return node.type


def _unwrap(node: Node) -> Node:
    current = node
    while current.type in _TRANSPARENT:
        inner = _inner(current)
        if inner is None:
            break
        current = inner
    return current


def _first_of(node: Node, kind: str) -> Node | None:
    for child in node.named_children:
        if child.type == kind:
            return child
    return None


def _string_of(node: Node | None, source: bytes) -> str | None:
    if node is None:
        return None
    node = _unwrap(node)
    if node.type == "string":
        raw = source[node.start_byte + 1 : node.end_byte - 1]
        return raw.decode("utf-8", "replace")
    if node.type == "template_string" and not any(
        c.type == "template_substitution" for c in node.named_children
    ):
        raw = source[node.start_byte + 1 : node.end_byte - 1]
        return raw.decode("utf-8", "replace")
    return None


def _number(text: str) -> int | float | str:
    cleaned = text.replace("_", "")
    try:
        return int(cleaned, 0)
    except ValueError:
        try:
            return float(cleaned)
        except ValueError:
            return text


def _property_key(node: Node | None, source: bytes) -> str | None:
    if node is None:
        return None
    if node.type in ("property_identifier", "identifier", "private_property_identifier"):
        return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
    if node.type == "string":
        return _string_of(node, source)
    if node.type == "number":
        return source[node.start_byte : node.end_byte].decode()
    return None


def _renamed_fields(node: Node, source: bytes) -> dict[str, str]:
    """The fields an object pattern binds to locals of other names (``{ name: toolName }``):
    local -> field."""
    renamed: dict[str, str] = {}
    if node.type != "object_pattern":
        return renamed
    for part in node.named_children:
        if part.type != "pair_pattern":
            continue
        key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
        if key is not None and value is not None and value.type == "identifier":
            local = source[value.start_byte : value.end_byte].decode("utf-8", "replace")
            renamed[local] = _property_key(key, source) or source[
                key.start_byte : key.end_byte
            ].decode("utf-8", "replace")
    return renamed


def _pattern_names(node: Node, source: bytes) -> list[str]:
    names: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            names.append(source[current.start_byte : current.end_byte].decode("utf-8", "replace"))
        elif kind == "pair_pattern":
            value = current.child_by_field_name("value")
            if value is not None:
                stack.append(value)
        elif kind == "object_assignment_pattern" or kind == "assignment_pattern":
            left = current.child_by_field_name("left")
            if left is not None:
                stack.append(left)
        else:
            stack.extend(reversed(current.named_children))
    return names


def _function_value(qualname: str, text: str, span: Span) -> Value:
    short = text if len(text) <= 80 else text[:80] + "..."
    return leaf_value("name", short, None, qualname, span=span)


def _concatenated(node: Node) -> list[Node]:
    operands: list[Node] = []
    current = node
    while current.type == "binary_expression":
        operator = current.child_by_field_name("operator")
        if operator is None or operator.type != "+":
            break
        right = current.child_by_field_name("right")
        left = current.child_by_field_name("left")
        if right is None or left is None:
            break
        operands.append(right)
        current = left
    operands.append(current)
    operands.reverse()
    return operands[:PARTS_LIMIT]


def _walk_own(node: Node, into_loops: bool = True) -> Iterator[Node]:
    """Every node under ``node`` in source order, not entering nested functions (nor, when
    ``into_loops`` is false, nested loops and switches: a ``break`` there is theirs)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in reversed(current.named_children):
            if child.type in _FUNCTION_EXPRESSIONS or child.type in _FUNCTION_DECLARATIONS:
                continue
            if not into_loops and (child.type in _LOOPS or child.type == "switch_statement"):
                continue
            stack.append(child)


def _walk_expression(node: Node) -> Iterator[Node]:
    yield from _walk_own(node)


def _carries_whole_error(node: Node) -> bool:
    """Whether the caught error itself is what an expression holds at this identifier:
    ``{ error }``, ``[error]``, ``error`` as a value (not ``error.code`` compared)."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "member_expression":
        return False
    if parent.type == "binary_expression":
        return False
    if parent.type in ("arguments",):
        grand = parent.parent
        func = grand.child_by_field_name("function") if grand is not None else None
        # ``formatError(error)``: a helper of the project's: its text is not known here
        return func is None
    return True


def _inside(node: Node, kind: str) -> bool:
    current = node.parent
    while current is not None:
        if current.type == kind:
            return True
        if current.type in _FUNCTION_EXPRESSIONS or current.type == "statement_block":
            if current.type != "statement_block":
                return False
        current = current.parent
    return False


def _ends_in_exit(node: Node) -> bool:
    if node.type == "statement_block":
        children = [c for c in node.named_children if c.type != "comment"]
        return bool(children) and children[-1].type in _EXITS
    return node.type in _EXITS


def _retry_shaped(node: Node, body: Node | None, source: bytes) -> bool:
    """A loop that repeats the same attempt until it succeeds: ``for (let attempt = 0;
    attempt < max; attempt++)`` or ``while (true)`` / ``while (attempt < max)`` whose body
    leaves the loop (``return`` or ``break``) once the attempt went through."""
    if body is None:
        return False
    if node.type == "for_in_statement":
        return False
    leaves = any(
        s.type in ("return_statement", "break_statement") for s in _walk_own(body, into_loops=False)
    )
    if not leaves:
        return False
    if node.type == "for_statement":
        condition = node.child_by_field_name("condition")
        text = source[condition.start_byte : condition.end_byte].decode() if condition else ""
        return "<" in text
    condition = node.child_by_field_name("condition")
    text = source[condition.start_byte : condition.end_byte].decode() if condition else ""
    inner = text.strip("() ;")
    return inner == "true" or "<" in inner or "attempt" in inner.lower() or "retr" in inner.lower()


# Each node kind's visit, looked up with one dict probe per node: None for the kinds never
# walked, ``_VISIT_CHILDREN`` (the default) for those whose children are visited.
_VISITS: dict[str, Callable[[_Extractor, Node], None] | None] = {
    name[len("visit_") :]: method
    for name, method in vars(_Extractor).items()
    if name.startswith("visit_") and callable(method) and name != "visit_children"
}
_VISITS.update(dict.fromkeys(_NO_FACTS))
_VISIT_CHILDREN = _Extractor.visit_children


class _Grammar:
    """One grammar's (TypeScript's or TSX's) node kind and field ids, for the paths every
    expression takes: a node's ``type`` is a new string each time it is read and a field
    found by name is searched for among the grammar's names, while ``kind_id`` and a field
    id are ints. Each set holds every id the grammar gives its kind names."""

    def __init__(self, language: Language) -> None:
        ids: dict[str, set[int]] = {}
        for kind_id in range(language.node_kind_count):
            name = language.node_kind_for_id(kind_id)
            if name is not None:
                ids.setdefault(name, set()).add(kind_id)

        def kinds(*names: str) -> frozenset[int]:
            return frozenset(kind_id for name in names for kind_id in ids.get(name, ()))

        def field(name: str) -> int:
            found = language.field_id_for_name(name)
            assert found is not None, name
            return found

        # Each kind's visit by its id; an id not here (``ERROR``) has its children visited.
        self.visits: dict[int, Callable[[_Extractor, Node], None] | None] = {
            kind_id: _VISITS.get(name, _VISIT_CHILDREN)
            for name, kind_ids in ids.items()
            for kind_id in kind_ids
        }
        self.transparent = kinds(*_TRANSPARENT)
        self.await_ = kinds("await_expression")
        self.identifier = kinds("identifier")
        self.this = kinds("this")
        self.super_ = kinds("super")
        self.identifier_or_this = self.identifier | self.this
        self.plain_names = kinds("identifier", "shorthand_property_identifier")
        self.names = self.plain_names | self.this
        self.literals = kinds("string", "regex", "number", "true", "false", "null", "undefined")
        self.member = kinds("member_expression")
        self.subscript = kinds("subscript_expression")
        self.calls = kinds("call_expression", "new_expression")
        self.object = kinds("object")
        self.pair = kinds("pair")
        self.template_string = kinds("template_string")
        self.comment = kinds("comment")
        self.no_reads_or_functions = kinds(*_NO_READS_OR_FUNCTIONS)
        self.field_function = field("function")
        self.field_constructor = field("constructor")
        self.field_object = field("object")
        self.field_property = field("property")
        self.field_arguments = field("arguments")
        self.field_key = field("key")
        self.field_value = field("value")


_GRAMMARS: dict[Language, _Grammar] = {}


def _grammar(language: Language) -> _Grammar:
    known = _GRAMMARS.get(language)
    if known is None:
        known = _GRAMMARS[language] = _Grammar(language)
    return known
