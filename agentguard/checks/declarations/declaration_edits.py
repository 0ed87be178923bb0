"""The edits AG101's fix makes (LibCST, built only when a fix is asked for): MCP annotations
on an MCP tool's registration, or ``@guarded`` with its semantics on any other tool, the
Runtime it needs, and the removal of a handler that would hide a timeout from it. The
edit builders import LibCST inside their bodies (see ``Rule.fixed_text``)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from agentguard.checks.judgement import Judgement
from agentguard.checks.timeouts.shared import TimeoutVerdicts
from agentguard.fixes.context import RUNTIME_MODULE
from agentguard.project.project_model import ProjectModel

if TYPE_CHECKING:
    import libcst as cst

    from agentguard.checks.declarations.shared import Semantics
    from agentguard.checks.timeouts.shared import TimeoutVerdict
    from agentguard.fixes.context import FixContext
    from agentguard.project.tool_facts import ToolFacts


RUNTIME_TYPES = ("agentguard.runtime.Runtime", "agentguard.runtime.core.Runtime")
MCP_TYPES_MODULE = "mcp.types"
HINTS = (
    ("readOnlyHint", "read_only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open_world"),
)


def is_class_based(tool: ToolFacts) -> bool:
    """A tool whose entry point is a method of a class (``BaseTool._run``), not a function."""
    return not tool.functions or tool.symbol != tool.functions[0]


def guarded_methods(project: ProjectModel, tool: ToolFacts) -> list[str]:
    """The methods of a class-based tool that ``@guarded`` goes on: those the framework
    calls (``_run``, ``_arun``, ``forward``), defined on the tool's own class in its file,
    except one that only hands over to another of them (``_arun`` calling ``self._run``:
    guarding both would journal one call twice). None for a class other tools subclass:
    ``name=`` and the key would be wrong for them."""
    own = [
        qualname
        for qualname in tool.functions
        if qualname.startswith(f"{tool.symbol}.")
        and (entry := project.functions.get(qualname)) is not None
        and entry[1].path == tool.path
    ]
    simple = tool.symbol.rsplit(".", 1)[-1]
    if any(other != tool.symbol for other in Subclasses.of(project).get(simple, ())):
        return []
    names = {q.rsplit(".", 1)[-1] for q in own}
    return [
        qualname
        for qualname in own
        if not any(
            call.callee in {f"self.{n}" for n in names - {qualname.rsplit(".", 1)[-1]}}
            for call in project.calls_in(qualname)
        )
    ]


def guarded_targets(project: ProjectModel, tool: ToolFacts) -> list[str]:
    """Qualified names of the functions ``@guarded`` goes on."""
    if is_class_based(tool):
        return guarded_methods(project, tool)
    return tool.functions[:1]


def hidden_timeouts(project: ProjectModel, tool: ToolFacts) -> list[TimeoutVerdict] | None:
    """The handlers that catch a timeout around the tool's write and answer with a plain
    error (AG401): ``@guarded`` must see that timeout to record the call as uncertain, so the
    fix removes them. None when one sits where the fix cannot remove it (a helper the tool
    calls, a handler that is the enclosing loop's retry)."""
    targets = set(guarded_targets(project, tool))
    found = []
    for verdict in TimeoutVerdicts.of(project):
        if verdict.dispatched or verdict.tool is None or verdict.tool.name != tool.name:
            continue
        if verdict.function.qualname not in targets or verdict.outcome != "plain":
            return None
        if verdict.handler.try_id == -1 or not verdict.removable:
            return None
        found.append(verdict)
    return found


def guarded_description(
    project: ProjectModel,
    tool: ToolFacts,
    semantics: Semantics,
    hidden: list[TimeoutVerdict],
    inferred: str = "",
) -> str:
    """What the fix does, what it inferred that from, and every follow-up it leaves to the
    user."""
    done = (
        f"Wrap the tool in @guarded(risk={semantics.risk!r}, idempotency="
        f"{semantics.idempotency!r}, replay={semantics.replay!r})"
    )
    if hidden:
        caught = ", ".join(sorted({c for v in hidden for c in v.caught}))
        done += f" and remove the `except {caught}` handler that hid the timeout from it"
    if inferred:
        done += f" (inferred from {inferred})"
    todo = []
    if semantics.idempotency != "idempotent":
        todo.append("check that the placeholder `key=` names the business operation")
    todo.append(
        "callers now get agentguard's observation (ok, code, content, result), not the return value"
    )
    if _defines_runtime(project, tool):
        todo.append(
            "move the new `runtime` to one shared module; its ledger `agentguard-ledger.db` is"
            " created on the first call, relative to the working directory"
        )
        todo.append(
            "run each agent turn in `with runtime.run(user_id=..., approved_at=...)`: a call"
            " outside one runs in a run of its own, so its repeat is not recognised"
        )
    else:
        todo.append(
            "call the tool inside `with runtime.run(...)` (or create the Runtime with"
            " implicit_runs=True)"
        )
    if any(e.remote_write for e in tool.writes()):
        todo.append(
            "send `current_call().idempotency_key` to the service and add `reconcile=` so an"
            " uncertain call can be settled"
        )
    return f"{done}. Then: " + "; ".join(todo) + "."


def _defines_runtime(project: ProjectModel, tool: ToolFacts) -> bool:
    """Whether the fix defines a new Runtime (none in the tool's module or the project)."""
    facts = project.modules.get(tool.path)
    if facts is not None:
        if any(a.function is None and is_runtime(a.value.qualname) for a in facts.assignments) or (
            "runtime" in facts.imports
        ):
            return False
    return not any(path != tool.path for path, _, _ in ModuleRuntimes.of(project))


def _bool(value: bool) -> cst.Name:
    import libcst as cst

    return cst.Name("True" if value else "False")


def _site_call(
    ctx: FixContext, tool: ToolFacts, function: cst.FunctionDef
) -> tuple[cst.CSTNode, cst.BaseExpression] | None:
    """The node that registers the tool (a decorator, or a call such as ``add_tool(fn)``)."""
    import libcst as cst

    if tool.site.path != ctx.path:
        return None  # the registration is in another file
    site = tool.site.span
    for decorator in function.decorators:
        if ctx.parsed.position(decorator.decorator).start.line == site.line:
            return decorator, decorator.decorator
    node = ctx.node_at(site.line, site.column, (cst.Call,))
    if isinstance(node, cst.Call):
        return node, node
    return None


def mcp_annotations(
    ctx: FixContext, tool: ToolFacts, function: cst.FunctionDef, semantics: Semantics
) -> str | None:
    import libcst as cst

    from agentguard.fixes.cst_tools import (
        add_import,
        imported_name,
        string_quote,
        with_appended_arg,
    )

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
        return ctx.parsed.code(module)
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
    if bare and len(indent) + len(head) + len(one_line) + 3 > ctx.line_length:
        # One hint per line, as a formatter would lay it out.
        text = _one_hint_a_line(cst.Module(body=[]).code_for_node(annotations))
        new_call = cst.parse_expression(f"{head}(\n{INNER}annotations={text},\n)")
        module = ctx.parsed.replace(expression, new_call)
        if not uses_dicts:
            module = add_import(module, MCP_TYPES_MODULE, ["ToolAnnotations"], ctx.first_party)
        return ctx.parsed.code(module)
    if isinstance(expression, cst.Call):
        new_call = with_appended_arg(expression, arg)
        written = cst.Module(body=[]).code_for_node(new_call)
        if "\n" not in written and len(indent) + 1 + len(written) > ctx.line_length:
            # Over the line length: one argument a line, as a formatter would lay it out.
            new_call = _one_argument_a_line(head, expression, annotations, indent, ctx.line_length)
    else:
        new_call = cst.Call(func=expression, args=[arg])
    module = ctx.parsed.replace(expression, new_call)
    if not uses_dicts:
        module = add_import(module, MCP_TYPES_MODULE, ["ToolAnnotations"], ctx.first_party)
    del holder
    return ctx.parsed.code(module)


# One indentation step, relative to the decorator's line: LibCST adds the block's own.
INNER = "    "


def _one_hint_a_line(text: str) -> str:
    """``ToolAnnotations(a=1, b=2)`` or ``{"a": 1}`` written one hint a line."""
    callee, _, rest = text.partition("(")
    if rest:
        hints = [h.strip() for h in rest.rstrip(")").split(",")]
        body = "".join(f"\n{INNER}    {h}," for h in hints)
        return f"{callee}({body}\n{INNER})"
    hints = [h.strip() for h in text.strip("{}").split(",")]
    body = "".join(f"\n{INNER}    {h}," for h in hints)
    return f"{{{body}\n{INNER}}}"


def _one_argument_a_line(
    head: str, call: cst.Call, annotations: cst.BaseExpression, indent: str, line_length: int
) -> cst.BaseExpression:
    """The decorator call with ``annotations=`` added, one argument a line; the annotations
    one hint a line too when their own line would still be too long."""
    import libcst as cst

    code = cst.Module(body=[]).code_for_node
    arguments = [code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip() for a in call.args]
    text = code(annotations)
    if len(indent) + len(INNER) + len("annotations=") + len(text) + 1 > line_length:
        text = _one_hint_a_line(text)
    arguments.append(f"annotations={text}")
    body = "".join(f"{INNER}{argument},\n" for argument in arguments)
    return cst.parse_expression(f"{head}(\n{body})")


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()


def _equal() -> cst.AssignEqual:
    import libcst as cst

    return cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )


def _recomma(elements: list[cst.BaseDictElement]) -> list[cst.BaseDictElement]:
    import libcst as cst

    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last = elements[-1]
    return [e.with_changes(comma=comma) for e in elements[:-1]] + [
        last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    ]


def guarded_decorator(
    ctx: FixContext, tool: ToolFacts, function: cst.FunctionDef, semantics: Semantics
) -> str | None:
    import libcst as cst

    from agentguard.fixes.cst_tools import (
        add_import,
        imported_name,
        insert_after_imports,
        remove_unused_import,
        string_quote,
    )

    class_based = is_class_based(tool)
    hidden = hidden_timeouts(ctx.project, tool)
    if hidden is None:
        return None
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
    quote = string_quote(ctx.parsed.module)
    runtime_name, runtime_import, define_runtime = _runtime_reference(ctx)
    parts = [runtime_name] + [
        f"{name}={quote}{value}{quote}"
        for name, value in (
            ("risk", semantics.risk),
            ("idempotency", semantics.idempotency),
            ("replay", semantics.replay),
        )
    ]
    guarded_local = imported_name(ctx.parsed.module, RUNTIME_MODULE, "guarded") or "guarded"
    replacements: dict[cst.FunctionDef, cst.FunctionDef] = {}
    for target in targets:
        indent = _indent_of(ctx, target)
        target_parts = list(parts)
        if semantics.idempotency != "idempotent":
            key = _key_placeholder(tool, quote, ctx.line_length - len(indent))
            target_parts.append(f"key={key}")
        if class_based:
            target_parts.append(f"name={quote}{tool.name}{quote}")  # the method is `_run`
        call = _call_expression(guarded_local, target_parts, indent, ctx.line_length)
        decorators = list(target.decorators)
        index = len(decorators) if class_based else 0
        for position, existing in enumerate(decorators):
            if ctx.parsed.position(existing.decorator).start.line == tool.site.span.line:
                index = position + 1
        decorators.insert(index, cst.Decorator(call))
        rewritten = _without_timeout_handlers(ctx, target, hidden)
        if rewritten is None:
            return None
        replacements[target] = rewritten.with_changes(decorators=decorators)
    module = ctx.parsed.replace_all(replacements)
    for verdict in hidden:
        for caught in verdict.caught:
            module = remove_unused_import(module, _local_root(ctx, caught))
    names = ["guarded"]
    if define_runtime:
        names += ["Runtime", "SQLiteLedger"]
    module = add_import(module, RUNTIME_MODULE, names, ctx.first_party)
    if runtime_import is not None:
        module = add_import(module, runtime_import[0], [runtime_import[1]], ctx.first_party)
    if define_runtime:
        ledger = f"SQLiteLedger({quote}agentguard-ledger.db{quote}, lazy=True)"
        arguments = [f"ledger={ledger}", "implicit_runs=True"]
        text = f"{runtime_name} = Runtime({', '.join(arguments)})"
        if len(text) > ctx.line_length:
            text = f"{runtime_name} = Runtime(" + "".join(f"\n    {a}," for a in arguments) + "\n)"
        statement = cst.parse_statement(text, config=module.config_for_parsing)
        # No break inside the code phrase (a no-break space until wrapped).
        notes = [
            line.replace("\u00a0", " ")
            for sentence in (
                "The ledger that makes guarded tools replay-safe: share one Runtime per process.",
                f"Its file is created on the first call; a call outside"
                f" `with\u00a0{runtime_name}.run(...)` runs in a run of its own.",
            )
            for line in textwrap.wrap(sentence, ctx.line_length - 2, break_on_hyphens=False)
        ]
        statement = statement.with_changes(
            leading_lines=[cst.EmptyLine()]
            + [cst.EmptyLine(comment=cst.Comment(f"# {note}")) for note in notes]
        )
        module = insert_after_imports(module, [statement])
    return ctx.parsed.code(module)


def _local_root(ctx: FixContext, caught: str) -> str:
    """The name the file binds for a caught exception: ``requests`` for ``requests.Timeout``
    (``import requests``), ``Timeout`` for ``from requests import Timeout``."""
    facts = ctx.facts
    for local, qualified in facts.imports.items() if facts else ():
        if caught == qualified or caught.startswith(f"{qualified}."):
            return local
    return caught.split(".", 1)[0]


def _without_timeout_handlers(
    ctx: FixContext, function: cst.FunctionDef, hidden: list[TimeoutVerdict]
) -> cst.FunctionDef | None:
    """The function without the handlers that hid a timeout from ``@guarded``: a handler
    catching only timeouts goes (and its ``try`` with it when nothing else is left), a
    timeout listed with other exceptions leaves the tuple. None when one is not found."""
    import libcst as cst

    rewritten: cst.CSTNode = function
    for verdict in hidden:
        span = verdict.handler.span
        handler = ctx.node_at(span.line, span.column, (cst.ExceptHandler,))
        parent = ctx.parsed.parent(handler) if handler is not None else None
        if not isinstance(handler, cst.ExceptHandler) or not isinstance(parent, cst.Try):
            return None
        kept_types = [
            element
            for element in _caught_elements(handler)
            if _dotted(element) not in {_caught_local(ctx, c) for c in verdict.caught}
        ]
        replacement: cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement]
        if kept_types:
            kind: cst.BaseExpression = (
                kept_types[0]
                if len(kept_types) == 1
                else cst.Tuple([cst.Element(e) for e in kept_types])
            )
            handlers = [
                handler.with_changes(type=kind) if h is handler else h for h in parent.handlers
            ]
            replacement = parent.with_changes(handlers=handlers)
        else:
            handlers = [h for h in parent.handlers if h is not handler]
            if handlers or parent.finalbody is not None:
                if not handlers and parent.orelse is not None:
                    return None  # try/else/finally with nothing caught is not valid Python
                replacement = parent.with_changes(handlers=handlers)
            else:
                blocks = [parent.body, *([parent.orelse.body] if parent.orelse else [])]
                if not all(isinstance(b, cst.IndentedBlock) for b in blocks):
                    return None  # ``try: x`` on one line: left as it is
                body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = [
                    statement
                    for block in blocks
                    for statement in block.body
                    if isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
                ]
                body[0] = body[0].with_changes(
                    leading_lines=[*parent.leading_lines, *body[0].leading_lines]
                )
                replacement = cst.FlattenSentinel(body)
        # LibCST splices a FlattenSentinel's statements into the enclosing block.
        found = rewritten.deep_replace(parent, cast("Any", replacement))
        if not isinstance(found, cst.CSTNode) or found is rewritten:
            return None
        rewritten = found
    return rewritten if isinstance(rewritten, cst.FunctionDef) else None


def _caught_elements(handler: cst.ExceptHandler) -> list[cst.BaseExpression]:
    import libcst as cst

    if isinstance(handler.type, cst.Tuple):
        return [e.value for e in handler.type.elements]
    return [handler.type] if handler.type is not None else []


def _dotted(node: cst.BaseExpression) -> str:
    import libcst as cst

    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _caught_local(ctx: FixContext, caught: str) -> str:
    """``requests.Timeout`` as the file writes it (``Timeout`` after ``from requests import``)."""
    root = _local_root(ctx, caught)
    facts = ctx.facts
    qualified = facts.imports.get(root) if facts else None
    if qualified and caught.startswith(f"{qualified}."):
        return root + caught[len(qualified) :]
    return caught if not qualified else root


def _indent_of(ctx: FixContext, function: cst.FunctionDef) -> str:
    line = ctx.parsed.lines[ctx.parsed.position(function.name).start.line - 1]
    return line[: len(line) - len(line.lstrip())]


def _call_expression(
    callee: str, parts: list[str], indent: str, line_length: int
) -> cst.BaseExpression:
    """``callee(parts)`` on one line, or one part per line when that is too long."""
    import libcst as cst

    one_line = f"{callee}({', '.join(parts)})"
    if "\n" not in one_line and len(indent) + 1 + len(one_line) <= line_length:
        return cst.parse_expression(one_line)
    # Relative to the decorator's line: LibCST adds the block's own indentation.
    lines = "".join(f"\n    {part}," for part in (p.replace("\n", "\n    ") for p in parts))
    return cst.parse_expression(f"{callee}({lines}\n)")


def _runtime_reference(ctx: FixContext) -> tuple[str, tuple[str, str] | None, bool]:
    """(name, import to add, whether to define it here) for the Runtime the decorator uses.

    1. a Runtime this module already binds (assigned from ``Runtime(...)`` or imported as
       ``runtime``); 2. one defined at module level elsewhere in the project, imported;
    3. otherwise a module-level ``runtime = Runtime(ledger=SQLiteLedger(...))`` after the
    imports, which the user should move to one shared place.
    """
    facts = ctx.facts
    if facts is not None:
        for assignment in facts.assignments:
            if assignment.function is None and is_runtime(assignment.value.qualname):
                return assignment.target, None, False
        if "runtime" in facts.imports:
            return "runtime", None, False
    for path, module, target in ModuleRuntimes.of(ctx.project):
        if path != ctx.path:
            return target, (module, target), False
    taken = set(facts.functions if facts else ()) | set(facts.imports if facts else ())
    taken |= {a.target for a in (facts.assignments if facts else []) if a.function is None}
    name = (
        "runtime" if not any(t.rsplit(".", 1)[-1] == "runtime" for t in taken) else "agent_runtime"
    )
    return name, None, True


class Subclasses(Judgement[Mapping[str, tuple[str, ...]]]):
    produces = "the classes that name a base, by the base's last name"

    @classmethod
    def judge(cls, project: ProjectModel) -> Mapping[str, tuple[str, ...]]:
        # Asked by every fix offer on a class-based tool: looked up, not searched for.
        found: dict[str, list[str]] = {}
        for other, _ in project.classes.values():
            for base in other.bases:
                found.setdefault(base.rsplit(".", 1)[-1], []).append(other.qualname)
        return {name: tuple(classes) for name, classes in found.items()}


class ModuleRuntimes(Judgement[tuple[tuple[str, str, str], ...]]):
    produces = "the module-level Runtimes of the project's importable modules"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[tuple[str, str, str], ...]:
        # Asked by every fix offer of AG101: worked out once, not per finding.
        return tuple(module_runtimes(project))


def module_runtimes(project: ProjectModel) -> list[tuple[str, str, str]]:
    """(path, module, name) of each module-level Runtime an importable, non-test module
    defines, by path."""
    found = []
    for other in project.modules.values():
        if other.is_test:
            continue
        for assignment in other.assignments:
            if (
                assignment.function is None
                and is_runtime(assignment.value.qualname)
                and "." not in assignment.target
                and _importable(other.module)
            ):
                found.append((other.path, other.module, assignment.target))
    found.sort(key=lambda runtime: runtime[0])  # stable: a module's own order stays
    return found


def _importable(module: str) -> bool:
    """Whether ``from module import name`` is valid Python (a folder named ``my-agent`` is not)."""
    return all(part.isidentifier() for part in module.split("."))


def is_runtime(qualname: str | None) -> bool:
    return qualname is not None and qualname.replace("()", "") in RUNTIME_TYPES


def _key_placeholder(tool: ToolFacts, quote: str, width: int) -> str:
    """A key naming user, resource, run and approval; the user checks the resource part.
    In the file's quotes, split into adjacent f-strings when longer than ``width``."""
    inner = "'" if quote == '"' else '"'  # an f-string cannot reuse its quote before 3.12
    ids = [p for p in tool.params if p == "id" or p.endswith(("_id", "_ids", "_key", "_name"))]
    resources = ids or tool.params[:1]
    parts = ["{call.user_id}"] + [f"{{call.args[{inner}{p}{inner}]}}" for p in resources]
    parts += ["{call.run_id}", "{call.approved_at}"]
    pieces = [f"{tool.name}:"] + [f"{p}:" for p in parts[:-1]] + [parts[-1]]
    whole = "".join(pieces)
    # ``    key=lambda call: f"...",`` on the decorator's argument line, else one f-string
    # per line in parentheses, eight columns in.
    if len(f"    key=lambda call: f{quote}{whole}{quote},") <= width:
        return f"lambda call: f{quote}{whole}{quote}"
    lines: list[str] = []
    for piece in pieces:
        if lines and 8 + len(lines[-1]) + len(piece) + 3 <= width:
            lines[-1] += piece
        else:
            lines.append(piece)
    body = "".join(f"\n    f{quote}{line}{quote}" for line in lines)
    return f"lambda call: ({body}\n)"
