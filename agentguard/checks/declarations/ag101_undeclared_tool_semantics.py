from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import (
    effect_words,
    finding_tool,
    strongest_confidence,
    tool_evidence,
)
from agentguard.checks.declarations.shared import Semantics, infer_semantics
from agentguard.diagnostics import Applicability, Finding, FixOffer, Severity
from agentguard.fixes.context import LINE_LENGTH, RUNTIME_MODULE
from agentguard.project.project_model import ProjectModel

if TYPE_CHECKING:
    import libcst as cst

    from agentguard.fixes.context import FixContext
    from agentguard.project.tool_facts import ToolFacts


class UndeclaredToolSemantics(Rule):
    """
    ## What it does
    Flags a tool whose code writes, sends, pays, deletes or executes, and that declares no
    idempotency, risk or replay policy: no `@guarded(...)`, no MCP `ToolAnnotations`, no
    LangChain `metadata` hints, no entry in an `agentguard.yaml` manifest.

    ## Why it matters
    When the call times out, the runtime and the model must decide whether to call again.
    With nothing declared, the only safe reading is the MCP spec's pessimistic default
    (destructive, not idempotent), but most runtimes retry anyway: the order is placed twice.

    ## Example
    ```python
    @tool
    def create_order(cart_id: str) -> dict:
        return requests.post(ORDERS_URL, json={"cart": cart_id}).json()
    ```

    ## Use instead
    ```python
    @tool
    @guarded(runtime, risk="write", idempotency="non_idempotent", replay="never",
             key=lambda call: f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}")
    def create_order(cart_id: str) -> dict:
        ...
    ```
    For MCP tools, declare `annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=False, ...)`.

    ## Fix safety
    Safe for MCP tools: the fix adds `annotations=ToolAnnotations(readOnlyHint=...,
    destructiveHint=..., idempotentHint=..., openWorldHint=...)` (or the dict form where the
    file already uses dicts), inferred from the effects; hints change no behaviour.

    Unsafe elsewhere: the fix adds `@guarded(runtime, risk=..., idempotency=..., replay=...)`
    directly under the framework decorator, which journals and deduplicates every call.
    For a class-based tool (`BaseTool` and the like) it goes on the methods the framework
    calls (`_run`, `_arun`, `forward`) defined on the tool's own class, with `name=` set to
    the tool's name; a method inherited from a shared base class is left for you.
    Where the tool is not idempotent it adds a placeholder
    `key=lambda call: f"tool:{call.user_id}:{call.args['<id>']}:{call.run_id}:{call.approved_at}"`
    naming user, resource, run and approval: check that it identifies the business operation.
    The `runtime` it passes is, in order: a `Runtime(...)` this module already binds; one
    bound at module level elsewhere in the project (imported from there); otherwise a new
    `runtime = Runtime(ledger=SQLiteLedger("agentguard-ledger.db"))` after the imports, which
    you should move to one shared module so the process has a single Runtime.
    """

    code, name, question = "AG101", "undeclared-tool-semantics", "Q1"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    fix_applicability_detail = "safe (MCP) / unsafe"
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def get_order(order_id: str) -> dict:\n"
            '    """Look an order up."""\n'
            '    return requests.get(f"https://shop.example/orders/{order_id}").json()\n'
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from agentguard.runtime import guarded, current_call\n"
            "from app.runtime import runtime\n\n"
            "@tool\n"
            '@guarded(runtime, risk="write", idempotency="conditional", replay="never",\n'
            "         key=lambda call: f\"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}\")\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    headers = {"Idempotency-Key": current_call().idempotency_key}\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers=headers).json()\n'
        ),
        Valid(
            "from mcp.server.fastmcp import FastMCP\n"
            "from mcp.types import ToolAnnotations\n"
            "import subprocess\n\n"
            'mcp = FastMCP("ops")\n\n'
            "@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False))\n"
            "def restart_service(name: str) -> str:\n"
            '    return subprocess.run(["systemctl", "restart", name], check=True).stdout\n'
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain_core.tools import BaseTool\n"
            "\n"
            "\n"
            "class CreateInvoice(BaseTool):\n"
            '    name: str = "create_invoice"\n'
            '    description: str = "Create an invoice for a customer"\n'
            "\n"
            "    def _run(self, customer_id: str, cents: int) -> dict:\n"
            "        return requests.post(\n"
            '            "https://billing.example/invoices", json={"customer": customer_id, "cents": cents}\n'
            "        ).json()\n",
            span=(5, 7, 5, 20),
            fixed=(
                "import requests\n"
                "from agentguard.runtime import Runtime, SQLiteLedger, guarded\n"
                "from langchain_core.tools import BaseTool\n"
                "\n"
                "# The ledger that makes guarded tools replay-safe: share one Runtime per process.\n"
                'runtime = Runtime(ledger=SQLiteLedger("agentguard-ledger.db"))\n'
                "\n"
                "\n"
                "class CreateInvoice(BaseTool):\n"
                '    name: str = "create_invoice"\n'
                '    description: str = "Create an invoice for a customer"\n'
                "\n"
                "    @guarded(\n"
                "        runtime,\n"
                '        risk="write",\n'
                '        idempotency="non_idempotent",\n'
                '        replay="never",\n'
                "        key=lambda call: f\"create_invoice:{call.user_id}:{call.args['customer_id']}:{call.run_id}:{call.approved_at}\",\n"
                '        name="create_invoice",\n'
                "    )\n"
                "    def _run(self, customer_id: str, cents: int) -> dict:\n"
                "        return requests.post(\n"
                '            "https://billing.example/invoices", json={"customer": customer_id, "cents": cents}\n'
                "        ).json()\n"
            ),
        ),
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n',
            span=(5, 5, 5, 17),
            fixed=(
                "import requests\n"
                "from agentguard.runtime import Runtime, SQLiteLedger, guarded\n"
                "from langchain_core.tools import tool\n"
                "\n"
                "# The ledger that makes guarded tools replay-safe: share one Runtime per process.\n"
                'runtime = Runtime(ledger=SQLiteLedger("agentguard-ledger.db"))\n'
                "\n"
                "@tool\n"
                "@guarded(\n"
                "    runtime,\n"
                '    risk="write",\n'
                '    idempotency="non_idempotent",\n'
                '    replay="never",\n'
                "    key=lambda call: f\"create_order:{call.user_id}:{call.args['cart_id']}:{call.run_id}:{call.approved_at}\",\n"
                ")\n"
                "def create_order(cart_id: str) -> dict:\n"
                '    """Create an order."""\n'
                '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
            ),
            message_contains="requests.post",
        ),
        Invalid(
            "from mcp.server.fastmcp import FastMCP\n"
            "import smtplib\n\n"
            'mcp = FastMCP("mail")\n\n'
            "@mcp.tool()\n"
            "def send_invoice(to: str, body: str) -> str:\n"
            '    with smtplib.SMTP("localhost") as smtp:\n'
            '        smtp.sendmail("billing@shop.example", [to], body)\n'
            '    return "sent"\n',
            span=(7, 5, 7, 17),
            fixed=(
                "from mcp.server.fastmcp import FastMCP\n"
                "from mcp.types import ToolAnnotations\n"
                "import smtplib\n"
                "\n"
                'mcp = FastMCP("mail")\n'
                "\n"
                "@mcp.tool(\n"
                "    annotations=ToolAnnotations(\n"
                "        readOnlyHint=False,\n"
                "        destructiveHint=False,\n"
                "        idempotentHint=False,\n"
                "        openWorldHint=True,\n"
                "    ),\n"
                ")\n"
                "def send_invoice(to: str, body: str) -> str:\n"
                '    with smtplib.SMTP("localhost") as smtp:\n'
                '        smtp.sendmail("billing@shop.example", [to], body)\n'
                '    return "sent"\n'
            ),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool in project.tools:
            if tool.declaration is not None:
                continue
            writes = tool.writes()
            if not writes:
                continue
            worst = sorted(
                writes,
                key=lambda e: (e.idempotent is True, -e.confidence.rank, e.site.path, e.site.span),
            )[0]
            severity = Severity.ERROR if any(e.non_idempotent for e in writes) else Severity.WARNING
            if tool.schema_only:
                # Known only from a tool schema: the effect is a guess from its name.
                yield self.finding(
                    tool.anchor,
                    f"Tool `{tool.name}` looks like it makes {effect_words(worst)}, judging "
                    f"from its schema ({worst.sink}), but declares no idempotency, risk or "
                    "replay policy (no MCP annotations, no agentguard.yaml entry)",
                    tool=tool,
                    confidence=strongest_confidence(writes),
                    evidence=tool_evidence(tool, worst),
                    severity=severity,
                    node_text=f"{tool.name}:{tool.framework}",
                )
                continue
            more = f" (and {len(writes) - 1} more side effects)" if len(writes) > 1 else ""
            yield self.finding(
                tool.anchor,
                f"Tool `{tool.name}` makes {effect_words(worst)} ({worst.route()}){more} but "
                "declares no idempotency, risk or replay policy",
                tool=tool,
                confidence=strongest_confidence(writes),
                evidence=tool_evidence(tool, worst),
                severity=severity,
                node_text=f"{tool.name}:{tool.framework}",
            )

    # --- fix

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        tool = finding_tool(project, finding)
        if tool is None or not tool.functions:
            return None
        if is_class_based(tool) and not guarded_methods(project, tool):
            return None
        semantics = infer_semantics(tool.writes())
        if tool.framework == "mcp":
            return FixOffer(Applicability.SAFE, "Declare the tool's MCP annotations")
        return FixOffer(
            Applicability.UNSAFE,
            f"Wrap the tool in @guarded(risk={semantics.risk!r}, idempotency="
            f"{semantics.idempotency!r}, replay={semantics.replay!r})",
        )

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        tool = finding_tool(ctx.project, finding)
        if tool is None:
            return None
        function = ctx.tool_function(tool)
        if function is None:
            return None
        semantics = infer_semantics(tool.writes())
        if tool.framework == "mcp":
            return _mcp_annotations(ctx, tool, function, semantics)
        return _guarded_decorator(ctx, tool, function, semantics)


# --------------------------------------------------------------------------- fix
# The edit builder's helpers import LibCST inside their bodies (see Rule.fixed_text).


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
    for other, _ in project.classes.values():
        if other.qualname != tool.symbol and any(
            base == tool.symbol or base == simple or base.endswith(f".{simple}")
            for base in other.bases
        ):
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


def _bool(value: bool) -> cst.Name:
    import libcst as cst

    return cst.Name("True" if value else "False")


def _site_call(
    ctx: FixContext, tool: ToolFacts, function: cst.FunctionDef
) -> tuple[cst.CSTNode, cst.BaseExpression] | None:
    """The node that registers the tool (a decorator, or a call such as ``add_tool(fn)``)."""
    import libcst as cst

    site = tool.site.span
    for decorator in function.decorators:
        if ctx.parsed.position(decorator.decorator).start.line == site.line:
            return decorator, decorator.decorator
    node = ctx.node_at(site.line, site.column, (cst.Call,))
    if isinstance(node, cst.Call):
        return node, node
    return None


def _mcp_annotations(
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


def _guarded_decorator(
    ctx: FixContext, tool: ToolFacts, function: cst.FunctionDef, semantics: Semantics
) -> str | None:
    import libcst as cst

    from agentguard.fixes.cst_tools import add_import, imported_name, insert_after_imports

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


def _indent_of(ctx: FixContext, function: cst.FunctionDef) -> str:
    line = ctx.parsed.lines[ctx.parsed.position(function.name).start.line - 1]
    return line[: len(line) - len(line.lstrip())]


def _call_expression(callee: str, parts: list[str], indent: str) -> cst.BaseExpression:
    """``callee(parts)`` on one line, or one part per line when that is too long."""
    import libcst as cst

    one_line = f"{callee}({', '.join(parts)})"
    if len(indent) + 1 + len(one_line) <= LINE_LENGTH:
        return cst.parse_expression(one_line)
    # Relative to the decorator's line: LibCST adds the block's own indentation.
    lines = "".join(f"\n    {part}," for part in parts)
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
            if assignment.function is None and _is_runtime(assignment.value.qualname):
                return assignment.target, None, False
        if "runtime" in facts.imports:
            return "runtime", None, False
    for path, module, target in ctx.shared.once(_module_runtimes):
        if path != ctx.path:
            return target, (module, target), False
    taken = set(facts.functions if facts else ()) | set(facts.imports if facts else ())
    taken |= {a.target for a in (facts.assignments if facts else []) if a.function is None}
    name = (
        "runtime" if not any(t.rsplit(".", 1)[-1] == "runtime" for t in taken) else "agent_runtime"
    )
    return name, None, True


def _module_runtimes(project: ProjectModel) -> list[tuple[str, str, str]]:
    """(path, module, name) of each module-level Runtime an importable, non-test module
    defines, by path."""
    found = []
    for other in project.modules.values():
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
