"""One fix builder per rule: from a finding's facts and a LibCST edit of its file, a Fix.

Each builder returns the whole new text of the file (or None when it cannot fix this
finding with confidence); :func:`build_fix` turns that into line edits.
"""

from __future__ import annotations

import json
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from io import StringIO
from typing import TYPE_CHECKING

import libcst as cst

from agentguard.diagnostics import Finding, Fix
from agentguard.fixes.cst_tools import (
    ParsedFile,
    add_import,
    add_plain_import,
    imported_name,
    insert_after_imports,
    name_is_used,
    name_uses,
    plain_import_name,
    remove_unused_import,
    string_quote,
    with_appended_arg,
    without_items,
)
from agentguard.fixes.offers import (
    EXCEPTION_TYPE,
    KEY_FROM_RUNTIME,
    FixOffer,
    Semantics,
    StructuredError,
    finding_tool,
    fix_offer,
    guarded_methods,
    infer_semantics,
    is_class_based,
    structured_error,
)
from agentguard.fixes.text import char_column, line_edits

if TYPE_CHECKING:
    from agentguard.facts.module_facts import ModuleFacts
    from agentguard.project.project_model import ProjectModel
    from agentguard.project.tool_facts import ToolFacts

RUNTIME_MODULE = "agentguard.runtime"
RUNTIME_TYPES = ("agentguard.runtime.Runtime", "agentguard.runtime.core.Runtime")
MCP_TYPES_MODULE = "mcp.types"
IDEMPOTENT_METHODS = ("HEAD", "GET", "PUT", "DELETE", "OPTIONS", "TRACE")
UNSAFE_METHODS = {"POST", "PATCH"}
LINE_LENGTH = 88
SUPPRESSION_RE = re.compile(r"#\s*agentguard:\s*ignore(?:\[[A-Za-z0-9_,\s-]*\])?[^#]*")


class ProjectFixFacts:
    """What builders derive from the whole project, once per run rather than per fix."""

    def __init__(self, project: ProjectModel) -> None:
        self.project = project

    @cached_property
    def first_party(self) -> frozenset[str]:
        """Top-level package names of the project (their imports form the last group)."""
        return frozenset(m.module.split(".", 1)[0] for m in self.project.modules.values())

    @cached_property
    def runtimes(self) -> list[tuple[str, str, str]]:
        """(path, module, name) of each module-level Runtime an importable, non-test module
        defines, by path."""
        found = []
        for other in self.project.modules.values():
            if other.is_test:
                continue
            for assignment in other.assignments:
                if (
                    assignment.function is None
                    and _is_runtime(assignment.value.qualname)
                    and "." not in assignment.target
                    and _importable(other.module)
                ):
                    found.append((other.path, other.module, assignment.target))
        found.sort(key=lambda runtime: runtime[0])  # stable: a module's own order stays
        return found


@dataclass
class FileContext:
    """What a builder may read: the finding's file (text, facts, lazy LibCST tree) and project."""

    path: str
    text: str
    shared: ProjectFixFacts
    _parsed: ParsedFile | None = None

    @property
    def project(self) -> ProjectModel:
        return self.shared.project

    @property
    def parsed(self) -> ParsedFile:
        if self._parsed is None:
            self._parsed = ParsedFile(self.text)
        return self._parsed

    @property
    def first_party(self) -> frozenset[str]:
        return self.shared.first_party

    @property
    def facts(self) -> ModuleFacts | None:
        return self.project.modules.get(self.path)

    def tool(self, finding: Finding) -> ToolFacts | None:
        return finding_tool(self.project, finding) if finding.path == self.path else None

    def char_col(self, line: int, byte_column: int) -> int:
        lines = self.parsed.lines
        return char_column(lines[line - 1], byte_column) if 0 < line <= len(lines) else byte_column

    def node_at(self, line: int, byte_column: int, kinds: tuple[type, ...]) -> cst.CSTNode | None:
        """The outermost node of one of ``kinds`` that starts where an ``ast`` span starts."""
        for node in self.parsed.nodes_at(line, self.char_col(line, byte_column)):
            if isinstance(node, kinds):
                return node
        return None

    def tool_function(self, tool: ToolFacts) -> cst.FunctionDef | None:
        if not tool.functions:
            return None
        entry = self.project.functions.get(tool.functions[0])
        if entry is None or entry[1].path != self.path:
            return None
        fn = entry[0]
        return self.parsed.function_at(fn.name, fn.name_span.line)


Builder = Callable[[Finding, FileContext], "str | None"]
BUILDERS: dict[str, Builder] = {}


def builder(code: str) -> Callable[[Builder], Builder]:
    def register(function: Builder) -> Builder:
        BUILDERS[code] = function
        return function

    return register


def build_fix(
    finding: Finding, context: FileContext, offered: FixOffer | None = None
) -> Fix | None:
    """The finding's fix with its edits; applicability and description come from its offer,
    so that every output says the same whether or not it computed the edits."""
    build = BUILDERS.get(finding.code)
    if offered is None:
        offered = fix_offer(finding, context.project)
    if build is None or offered is None:
        return None
    new_text = build(finding, context)
    if new_text is None or new_text == context.text:
        return None
    edits = line_edits(context.path, context.text, new_text)
    return Fix(offered.applicability, offered.description, edits)


def _bool(value: bool) -> cst.Name:
    return cst.Name("True" if value else "False")


# --------------------------------------------------------------------------- AG101


HINTS = (
    ("readOnlyHint", "read_only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open_world"),
)


@builder("AG101")
def declare_semantics(finding: Finding, ctx: FileContext) -> str | None:
    tool = ctx.tool(finding)
    if tool is None:
        return None
    function = ctx.tool_function(tool)
    if function is None:
        return None
    semantics = infer_semantics(tool.writes())
    if tool.framework == "mcp":
        return _mcp_annotations(ctx, tool, function, semantics)
    return _guarded_decorator(ctx, tool, function, semantics)


def _site_call(
    ctx: FileContext, tool: ToolFacts, function: cst.FunctionDef
) -> tuple[cst.CSTNode, cst.BaseExpression] | None:
    """The node that registers the tool (a decorator, or a call such as ``add_tool(fn)``)."""
    site = tool.site.span
    for decorator in function.decorators:
        if ctx.parsed.position(decorator.decorator).start.line == site.line:
            return decorator, decorator.decorator
    node = ctx.node_at(site.line, site.column, (cst.Call,))
    if isinstance(node, cst.Call):
        return node, node
    return None


def _mcp_annotations(
    ctx: FileContext, tool: ToolFacts, function: cst.FunctionDef, semantics: Semantics
) -> str | None:
    found = _site_call(ctx, tool, function)
    if found is None:
        return None
    holder, expression = found
    module = ctx.parsed.module
    existing = None
    if isinstance(expression, cst.Call):
        existing = next(
            (a for a in expression.args if a.keyword and a.keyword.value == "annotations"), None
        )
    uses_dicts = re.search(r"annotations\s*=\s*\{", ctx.text) is not None
    quote = string_quote(module)
    if existing is not None:
        # Complete an annotations value that declares no hint yet (a title only, say).
        value = existing.value
        if isinstance(value, cst.Call):
            present = {a.keyword.value for a in value.args if a.keyword}
            new_value: cst.BaseExpression = value
            for camel, attr in HINTS:
                if camel not in present and _snake(camel) not in present:
                    assert isinstance(new_value, cst.Call)
                    new_value = with_appended_arg(
                        new_value,
                        cst.Arg(_bool(getattr(semantics, attr)), keyword=cst.Name(camel)),
                    )
        elif isinstance(value, cst.Dict):
            present = {
                str(e.key.evaluated_value)
                for e in value.elements
                if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
            }
            elements = list(value.elements)
            for camel, attr in HINTS:
                if camel not in present and _snake(camel) not in present:
                    elements.append(
                        cst.DictElement(
                            cst.SimpleString(f"{quote}{camel}{quote}"),
                            _bool(getattr(semantics, attr)),
                        )
                    )
            new_value = value.with_changes(elements=_recomma(elements))
        else:
            return None
        assert isinstance(expression, cst.Call)
        new_expression = expression.with_changes(
            args=[a.with_changes(value=new_value) if a is existing else a for a in expression.args]
        )
        module = ctx.parsed.replace(expression, new_expression)
        return module.code
    if uses_dicts:
        annotations: cst.BaseExpression = cst.parse_expression(
            "{"
            + ", ".join(
                f"{quote}{camel}{quote}: {getattr(semantics, attr)}" for camel, attr in HINTS
            )
            + "}"
        )
    else:
        local = imported_name(module, MCP_TYPES_MODULE, "ToolAnnotations") or "ToolAnnotations"
        annotations = cst.parse_expression(
            f"{local}("
            + ", ".join(f"{camel}={getattr(semantics, attr)}" for camel, attr in HINTS)
            + ")"
        )
    arg = cst.Arg(annotations, keyword=cst.Name("annotations"), equal=_equal())
    indent = _indent_of(ctx, function)
    bare = not isinstance(expression, cst.Call) or not expression.args
    one_line = cst.Module(body=[]).code_for_node(arg)
    head = cst.Module(body=[]).code_for_node(
        expression.func if isinstance(expression, cst.Call) else expression
    )
    if bare and len(indent) + len(head) + len(one_line) + 3 > LINE_LENGTH:
        # One hint per line, as a formatter would lay it out.
        # Relative to the decorator's line: LibCST adds the block's own indentation.
        inner = "    "
        text = cst.Module(body=[]).code_for_node(annotations)
        callee, _, rest = text.partition("(")
        if rest:
            hints = [h.strip() for h in rest.rstrip(")").split(",")]
            body = "".join(f"\n{inner}    {h}," for h in hints)
            text = f"{callee}({body}\n{inner})"
        else:
            hints = [h.strip() for h in text.strip("{}").split(",")]
            body = "".join(f"\n{inner}    {h}," for h in hints)
            text = f"{{{body}\n{inner}}}"
        new_call = cst.parse_expression(f"{head}(\n{inner}annotations={text},\n)")
        module = ctx.parsed.replace(expression, new_call)
        if not uses_dicts:
            module = add_import(module, MCP_TYPES_MODULE, ["ToolAnnotations"], ctx.first_party)
        return module.code
    if isinstance(expression, cst.Call):
        new_call = with_appended_arg(expression, arg)
    else:
        new_call = cst.Call(func=expression, args=[arg])
    module = ctx.parsed.replace(expression, new_call)
    if not uses_dicts:
        module = add_import(module, MCP_TYPES_MODULE, ["ToolAnnotations"], ctx.first_party)
    del holder
    return module.code


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()


def _equal() -> cst.AssignEqual:
    return cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )


def _recomma(elements: list[cst.BaseDictElement]) -> list[cst.BaseDictElement]:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last = elements[-1]
    return [e.with_changes(comma=comma) for e in elements[:-1]] + [
        last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    ]


def _guarded_decorator(
    ctx: FileContext, tool: ToolFacts, function: cst.FunctionDef, semantics: Semantics
) -> str | None:
    class_based = is_class_based(tool)
    if class_based:
        # ``BaseTool._run`` (and ``_arun``): the methods the framework calls, defined on the
        # tool's own class; a method shared through a base class would guard every subclass.
        targets = []
        for qualname in guarded_methods(ctx.project, tool):
            fn = ctx.project.functions[qualname][0]
            method = ctx.parsed.function_at(fn.name, fn.name_span.line)
            if method is not None:
                targets.append(method)
        if not targets:
            return None
    elif tool.anchor.span.line != ctx.parsed.position(function.name).start.line:
        return None
    else:
        targets = [function]
    runtime_name, runtime_import, define_runtime = _runtime_reference(ctx)
    parts = [runtime_name, f'risk="{semantics.risk}"', f'idempotency="{semantics.idempotency}"']
    parts.append(f'replay="{semantics.replay}"')
    if semantics.idempotency != "idempotent":
        parts.append(f"key={_key_placeholder(tool)}")
    if class_based:
        parts.append(f"name={json.dumps(tool.name)}")  # the method is called `_run`
    guarded_local = imported_name(ctx.parsed.module, RUNTIME_MODULE, "guarded") or "guarded"
    replacements: dict[cst.FunctionDef, cst.FunctionDef] = {}
    for target in targets:
        decorator = cst.Decorator(_call_expression(guarded_local, parts, _indent_of(ctx, target)))
        decorators = list(target.decorators)
        index = len(decorators) if class_based else 0
        for position, existing in enumerate(decorators):
            if ctx.parsed.position(existing.decorator).start.line == tool.site.span.line:
                index = position + 1
        decorators.insert(index, decorator)
        replacements[target] = target.with_changes(decorators=decorators)
    module = ctx.parsed.replace_all(replacements)
    names = ["guarded"]
    if define_runtime:
        names += ["Runtime", "SQLiteLedger"]
    module = add_import(module, RUNTIME_MODULE, names, ctx.first_party)
    if runtime_import is not None:
        module = add_import(module, runtime_import[0], [runtime_import[1]], ctx.first_party)
    if define_runtime:
        statement = cst.parse_statement(
            f'{runtime_name} = Runtime(ledger=SQLiteLedger("agentguard-ledger.db"))',
            config=module.config_for_parsing,
        )
        note = cst.Comment(
            "# The ledger that makes guarded tools replay-safe: share one Runtime per process."
        )
        statement = statement.with_changes(
            leading_lines=[cst.EmptyLine(), cst.EmptyLine(comment=note)]
        )
        module = insert_after_imports(module, [statement])
    return module.code


def _indent_of(ctx: FileContext, function: cst.FunctionDef) -> str:
    line = ctx.parsed.lines[ctx.parsed.position(function.name).start.line - 1]
    return line[: len(line) - len(line.lstrip())]


def _call_expression(callee: str, parts: list[str], indent: str) -> cst.BaseExpression:
    """``callee(parts)`` on one line, or one part per line when that is too long."""
    one_line = f"{callee}({', '.join(parts)})"
    if len(indent) + 1 + len(one_line) <= LINE_LENGTH:
        return cst.parse_expression(one_line)
    # Relative to the decorator's line: LibCST adds the block's own indentation.
    lines = "".join(f"\n    {part}," for part in parts)
    return cst.parse_expression(f"{callee}({lines}\n)")


def _runtime_reference(ctx: FileContext) -> tuple[str, tuple[str, str] | None, bool]:
    """(name, import to add, whether to define it here) for the Runtime the decorator uses.

    1. a Runtime this module already binds (assigned from ``Runtime(...)`` or imported as
       ``runtime``); 2. one defined at module level elsewhere in the project, imported;
    3. otherwise a module-level ``runtime = Runtime(ledger=SQLiteLedger(...))`` after the
    imports, which the user should move to one shared place.
    """
    facts = ctx.facts
    if facts is not None:
        for assignment in facts.assignments:
            if assignment.function is None and _is_runtime(assignment.value.qualname):
                return assignment.target, None, False
        if "runtime" in facts.imports:
            return "runtime", None, False
    for path, module, target in ctx.shared.runtimes:
        if path != ctx.path:
            return target, (module, target), False
    taken = set(facts.functions if facts else ()) | set(facts.imports if facts else ())
    taken |= {a.target for a in (facts.assignments if facts else []) if a.function is None}
    name = (
        "runtime" if not any(t.rsplit(".", 1)[-1] == "runtime" for t in taken) else "agent_runtime"
    )
    return name, None, True


def _importable(module: str) -> bool:
    """Whether ``from module import name`` is valid Python (a folder named ``my-agent`` is not)."""
    return all(part.isidentifier() for part in module.split("."))


def _is_runtime(qualname: str | None) -> bool:
    return qualname is not None and qualname.replace("()", "") in RUNTIME_TYPES


def _key_placeholder(tool: ToolFacts) -> str:
    """A key naming user, resource, run and approval; the user checks the resource part."""
    ids = [p for p in tool.params if p == "id" or p.endswith(("_id", "_ids", "_key", "_name"))]
    resources = ids or tool.params[:1]
    parts = ["{call.user_id}"] + [f"{{call.args['{p}']}}" for p in resources]
    parts += ["{call.run_id}", "{call.approved_at}"]
    return f'lambda call: f"{tool.name}:{":".join(parts)}"'


# --------------------------------------------------------------------------- AG102


@builder("AG102")
def correct_hint(finding: Finding, ctx: FileContext) -> str | None:
    kind = finding.node_text.split(":")[1] if finding.node_text.count(":") >= 2 else ""
    if kind not in ("read-only", "idempotent"):
        return None
    tool = ctx.tool(finding)
    if tool is None:
        return None
    span = finding.span
    value = ctx.node_at(span.line, span.column, (cst.BaseExpression,))
    if value is None:
        return None
    parent = ctx.parsed.parent(value)
    key = None
    if isinstance(parent, cst.Arg) and parent.keyword is not None:
        key = parent.keyword.value
    elif isinstance(parent, cst.DictElement) and isinstance(parent.key, cst.SimpleString):
        key = str(parent.key.evaluated_value)
    if key is None:
        return None
    semantics = infer_semantics(tool.writes())
    quote = string_quote(ctx.parsed.module, parent)
    replacement: cst.BaseExpression
    if key in ("readOnlyHint", "read_only_hint", "idempotentHint", "idempotent_hint"):
        replacement = cst.Name("False")
    elif key == "risk":
        replacement = cst.SimpleString(f"{quote}{semantics.risk}{quote}")
    elif key == "idempotency":
        replacement = cst.SimpleString(f"{quote}non_idempotent{quote}")
    else:
        return None
    module = ctx.parsed.replace(value, replacement)
    call = ctx.parsed.parent(parent) if parent is not None else None
    if key == "idempotency" and isinstance(call, cst.Call):
        # replay="auto" was only sound for an idempotent tool.
        args = []
        for arg in call.args:
            if arg is parent:
                arg = arg.with_changes(value=replacement)
            elif (
                arg.keyword
                and arg.keyword.value == "replay"
                and isinstance(arg.value, cst.SimpleString)
                and arg.value.evaluated_value == "auto"
            ):
                arg = arg.with_changes(value=cst.SimpleString(f"{quote}never{quote}"))
            args.append(arg)
        module = ctx.parsed.replace(call, call.with_changes(args=args))
    return module.code


# --------------------------------------------------------------------------- AG202 / AG203


@builder("AG202")
def key_from_runtime_param(finding: Finding, ctx: FileContext) -> str | None:
    tool = ctx.tool(finding)
    if tool is None:
        return None
    param = finding.node_text.rsplit(":", 1)[-1]
    function = ctx.tool_function(tool)
    if function is None or not param.isidentifier():
        return None
    params = function.params
    if not any(p.name.value == param for p in (*params.params, *params.kwonly_params)):
        return None
    if name_uses(function.body, param, enough=2) > 1:
        # ``json={"cart": cart_id}`` beside ``f"order-{cart_id}"``: the parameter carries the
        # business data too, and binding it to the key would send the key as the cart.
        return None

    def drop(p: cst.Param) -> bool:
        return p.name.value == param

    new_params = params.with_changes(
        params=without_items(list(params.params), drop),
        kwonly_params=without_items(list(params.kwonly_params), drop),
    )
    if not new_params.kwonly_params and isinstance(new_params.star_arg, cst.ParamStar):
        new_params = new_params.with_changes(star_arg=cst.MaybeSentinel.DEFAULT)
    new_function = function.with_changes(params=new_params)
    if name_is_used(function.body, param) and isinstance(function.body, cst.IndentedBlock):
        body = list(function.body.body)
        index = 1 if body and _is_docstring_statement(body[0]) else 0
        binding = cst.parse_statement(
            f"{param} = {KEY_FROM_RUNTIME}", config=ctx.parsed.module.config_for_parsing
        )
        body.insert(index, binding)
        new_function = new_function.with_changes(body=function.body.with_changes(body=body))
    module = ctx.parsed.replace(function, new_function)
    module = add_import(module, RUNTIME_MODULE, ["current_call"], ctx.first_party)
    return module.code


def _is_docstring_statement(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


@builder("AG203")
def key_from_runtime_expression(finding: Finding, ctx: FileContext) -> str | None:
    if finding.node_text.endswith(":guarded-key"):
        return None
    span = finding.span
    node = ctx.node_at(span.line, span.column, (cst.BaseExpression,))
    if node is None:
        return None
    where = ctx.parsed.position(node)
    if (where.end.line, where.end.column + 1) != (
        span.end_line,
        ctx.char_col(span.end_line, span.end_column),
    ):
        return None
    names = _names_in(node)
    module = ctx.parsed.replace(node, cst.parse_expression(KEY_FROM_RUNTIME))
    for name in names:
        module = remove_unused_import(module, name)
    module = add_import(module, RUNTIME_MODULE, ["current_call"], ctx.first_party)
    return module.code


def _names_in(node: cst.CSTNode) -> list[str]:
    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: list[str] = []

        def visit_Name(self, name: cst.Name) -> None:
            if name.value not in self.names:
                self.names.append(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

    finder = Finder()
    node.visit(finder)
    return finder.names


# --------------------------------------------------------------------------- AG904


@builder("AG904")
def idempotent_methods_only(finding: Finding, ctx: FileContext) -> str | None:
    span = finding.span
    value = ctx.node_at(span.line, span.column, (cst.BaseExpression,))
    if value is None:
        return None
    parent = ctx.parsed.parent(value)
    if not isinstance(parent, cst.Arg):
        return None
    quote = string_quote(ctx.parsed.module, ctx.parsed.parent(parent) or parent)
    default = cst.parse_expression(
        "[" + ", ".join(f"{quote}{m}{quote}" for m in IDEMPOTENT_METHODS) + "]"
    )
    if isinstance(value, cst.Name) and value.value in ("None", "False"):
        module = ctx.parsed.replace(value, default)
    else:
        collection = _innermost_collection(value)
        if collection is None:
            return None

        def unsafe(element: cst.BaseElement) -> bool:
            item = element.value
            return (
                isinstance(item, cst.SimpleString)
                and str(item.evaluated_value).upper() in UNSAFE_METHODS
            )

        kept = without_items(list(collection.elements), unsafe)
        if len(kept) == len(collection.elements):
            return None
        if kept:
            module = ctx.parsed.replace(collection, collection.with_changes(elements=kept))
        else:
            module = ctx.parsed.replace(value, default)
    return module.code


def _innermost_collection(node: cst.CSTNode) -> cst.List | cst.Set | cst.Tuple | None:
    if isinstance(node, (cst.List, cst.Set, cst.Tuple)):
        return node
    if isinstance(node, cst.Call) and len(node.args) == 1:
        return _innermost_collection(node.args[0].value)
    return None


# --------------------------------------------------------------------------- AG002


@builder("AG002")
def remove_suppression(finding: Finding, ctx: FileContext) -> str | None:
    lines = ctx.text.splitlines(keepends=True)
    number = finding.span.line
    if not 0 < number <= len(lines):
        return None
    line = lines[number - 1]
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    comment_start = _comment_start(body)
    if comment_start is None:
        return None
    comment = body[comment_start:]
    match = SUPPRESSION_RE.search(comment)
    if match is None:
        return None
    before = comment[: match.start()].rstrip()
    after = comment[match.end() :].strip()
    new_comment = "  ".join(part for part in (before, after) if part)
    code = body[:comment_start].rstrip()
    if not code and not new_comment:
        lines[number - 1] = ""
    else:
        indent = body[: len(body) - len(body.lstrip())]
        joined = f"{code}  {new_comment}" if code and new_comment else code or indent + new_comment
        lines[number - 1] = joined + ending
    return "".join(lines)


def _comment_start(line: str) -> int | None:
    """Column of the line's comment, by tokens (a ``#`` inside a string is not one)."""
    tokens = tokenize.generate_tokens(StringIO(line + "\n").readline)
    try:
        for token in tokens:
            if token.type == tokenize.COMMENT:
                return token.start[1]
    except (tokenize.TokenError, SyntaxError):
        pass  # a line inside an open bracket: the tokens before the error were seen
    return None


# --------------------------------------------------------------------------- AG601


@builder("AG601")
def structured_error_return(finding: Finding, ctx: FileContext) -> str | None:
    error = structured_error(finding, ctx.project)
    if error is None:
        return None
    span = finding.span
    node = ctx.node_at(span.line, span.column, (cst.Return,))
    if not isinstance(node, cst.Return) or node.value is None:
        return None
    handler: cst.CSTNode | None = node
    while handler is not None and not isinstance(handler, cst.ExceptHandler):
        handler = ctx.parsed.parent(handler)
    function: cst.CSTNode | None = handler
    while function is not None and not isinstance(function, cst.FunctionDef):
        function = ctx.parsed.parent(function)
    if not isinstance(handler, cst.ExceptHandler) or not isinstance(function, cst.FunctionDef):
        return None
    module = ctx.parsed.module
    as_text = _annotated_str(function)
    line = ctx.parsed.lines[ctx.parsed.position(node).start.line - 1]
    indent = line[: len(line) - len(line.lstrip())]
    source = _structured_error_source(
        error,
        len(indent),
        string_quote(module, node),
        (plain_import_name(module, "json") or "json") if as_text else None,
    )
    new_return = node.with_changes(value=cst.parse_expression(source))
    new_handler = handler.deep_replace(node, new_return)
    assert isinstance(new_handler, cst.ExceptHandler)
    new_function = function.deep_replace(handler, new_handler)
    for name in ("traceback", "sys"):
        if name in _names_in(node.value) and not name_is_used(new_function, name):
            # ``import traceback`` inside the handler, only for the text just replaced.
            new_handler = _without_local_import(new_handler, name)
    module = ctx.parsed.replace(handler, new_handler)
    for name in ("traceback", "sys"):
        if name in _names_in(node.value):
            module = remove_unused_import(module, name)
    if as_text:
        module = add_plain_import(module, "json")
    return module.code


def _without_local_import(handler: cst.ExceptHandler, name: str) -> cst.ExceptHandler:
    body = handler.body
    if not isinstance(body, cst.IndentedBlock):
        return handler

    def binds_only(statement: cst.BaseStatement) -> bool:
        return (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Import)
            and [cst.Module(body=[]).code_for_node(a) for a in statement.body[0].names] == [name]
        )

    kept = [s for s in body.body if not binds_only(s)]
    if not kept or len(kept) == len(body.body):
        return handler
    return handler.with_changes(body=body.with_changes(body=kept))


def _annotated_str(function: cst.FunctionDef) -> bool:
    """``-> str``: the framework expects text, so the structure goes out as JSON text."""
    annotation = function.returns.annotation if function.returns else None
    return isinstance(annotation, cst.Name) and annotation.value == "str"


def _structured_error_source(
    error: StructuredError, indent: int, quote: str, json_name: str | None
) -> str:
    """``{"ok": False, "code": ..., "content": ..., "retryable": ...}`` laid out one item per
    line (a formatter's layout), inside ``json.dumps(...)`` when the tool returns text.

    Lines are indented relative to the statement: LibCST adds the block's indentation.
    """
    inner = "        " if json_name else "    "

    def literal(text: str) -> str:
        return f"{quote}{text}{quote}"

    width = LINE_LENGTH - indent - len(inner)
    pieces = _content_pieces(error, quote, width - 4)
    if len(pieces) == 1 and len(f"'content': {pieces[0]},") <= width:
        content = pieces[0]
    else:
        lines = "".join(f"\n{inner}    {piece}" for piece in pieces)
        content = f"({lines}\n{inner})"
    items = [
        f"{literal('ok')}: False",
        f"{literal('code')}: {literal(error.code)}",
        f"{literal('content')}: {content}",
        f"{literal('retryable')}: {error.retryable}",
    ]
    closing = inner[:-4]
    body = "{" + "".join(f"\n{inner}{item}," for item in items) + f"\n{closing}}}"
    if json_name is None:
        return body
    return f"{json_name}.dumps(\n{closing}{body}\n)"


def _content_pieces(error: StructuredError, quote: str, width: int) -> list[str]:
    """The content as adjacent string literals of at most ``width`` characters each; only
    those holding the exception type placeholder are f-strings."""
    placeholder = (
        EXCEPTION_TYPE.replace("NAME", error.exception_name) if error.exception_name else None
    )

    def escape(text: str, formatted: bool) -> str:
        text = text.replace("\\", "\\\\").replace(quote, f"\\{quote}")
        if formatted:
            parts = text.split(placeholder) if placeholder else [text]
            doubled = [p.replace("{", "{{").replace("}", "}}") for p in parts]
            return (placeholder or "").join(doubled)
        return text

    words = error.content.split(" ")
    chunks: list[str] = []
    current = ""
    for word in words:
        candidate = f"{current} {word}" if current else word
        if current and len(candidate) + 4 > max(width, 30):
            chunks.append(current + " ")
            current = word
        else:
            current = candidate
    chunks.append(current)
    pieces = []
    for chunk in chunks:
        formatted = placeholder is not None and placeholder in chunk
        pieces.append(("f" if formatted else "") + quote + escape(chunk, formatted) + quote)
    return pieces
