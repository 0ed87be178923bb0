"""The extractor's visits of control flow: returns, raises, branches, loops, handlers."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator

from agentguard.diagnostics import Span
from agentguard.facts.extract_values import ValueReader
from agentguard.facts.module_facts import (
    PYTHON_RAW_ERROR_ATTRIBUTES,
    Branch,
    Handler,
    Loop,
    RawErrorUse,
    StatusCheck,
    TryBlock,
    WithBlock,
)
from agentguard.facts.static_strings import enum_member_value
from agentguard.facts.status_retry import (
    Helpers,
    handler_retried_statuses,
    mentions_status,
    retried_statuses,
)
from agentguard.facts.syntax_walk import span_of, walk

_TRACEBACK_TEXT = {
    "traceback.format_exc",
    "traceback.format_exception",
    "traceback.format_exception_only",
    "traceback.format_tb",
}
_NOT_A_DESTINATION = {
    "str",
    "repr",
    "type",
    "isinstance",
    "format",
    "getattr",
    "hasattr",
    "len",
    "print",
}
_STATUS_SUBJECT = re.compile(r"(?i)(status|state)")
TOOL_SCHEMA_KEYS = (
    {"type", "function"},
    {"name", "input_schema"},
    {"name", "inputSchema"},
    {"name", "parameters"},
)


def tool_schema_shaped(keys: Collection[str]) -> bool:
    """Whether a dict's (or an object literal's) keys are those of a tool spec a model is
    given (OpenAI's, Anthropic's, MCP's)."""
    return any(shape <= set(keys) for shape in TOOL_SCHEMA_KEYS)


def _repeats_same_attempt(loop: ast.For | ast.AsyncFor, target: str) -> bool:
    """``for delay in (0, 1, 2, 4): sleep(delay); try: return post(...) except ...``: a loop
    over a schedule of waits is a retry when the guarded code never reads the loop variable
    (a batch loop passes each item to the call) and success leaves the loop."""
    tries = [n for n in walk(loop) if type(n) is ast.Try]
    if not tries:
        return False
    exits = any(
        isinstance(n, (ast.Return, ast.Break)) for t in tries for s in t.body for n in walk(s)
    )
    reads_target = any(
        isinstance(n, ast.Name) and n.id == target for t in tries for s in t.body for n in walk(s)
    )
    return exits and not reads_target


def _repeats_one_request(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """A loop head that repeats one attempt: ``while ...``, or ``for _ in range(n)`` (not
    ``range(len(items))``, which walks a batch)."""
    if isinstance(loop, ast.While):
        return True
    it = loop.iter
    return (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and not any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "len" for n in it.args)
    )


def _breaks_out(statements: list[ast.stmt]) -> bool:
    """A ``break`` among ``statements`` that leaves the loop around them: not one of a loop
    or a function nested in them."""
    for statement in statements:
        if isinstance(statement, ast.Break):
            return True
        if isinstance(
            statement,
            (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef),
        ):
            if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)) and _breaks_out(
                statement.orelse
            ):
                return True
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list) and _breaks_out(inner):
                return True
        for clause in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            if _breaks_out(clause.body):
                return True
    return False


def _last_pass_of(loop: ast.For | ast.AsyncFor | ast.While) -> tuple[str, int] | None:
    """``for i in range(2)``: the counter and the value it has on the last pass."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.target, ast.Name):
        return None
    it = loop.iter
    if not (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and len(it.args) == 1
        and not it.keywords
        and isinstance(it.args[0], ast.Constant)
        and type(it.args[0].value) is int
    ):
        return None
    return loop.target.id, it.args[0].value - 1


def _on_last_pass(test: ast.expr, counter: str, last: int) -> bool:
    """``i == 1`` / ``1 == i`` / ``i >= 1`` with 1 the counter's last value."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, right, op = test.left, test.comparators[0], test.ops[0]
    if isinstance(right, ast.Name) and isinstance(op, ast.Eq):
        left, right = right, left
    return (
        isinstance(left, ast.Name)
        and left.id == counter
        and isinstance(op, (ast.Eq, ast.GtE))
        and isinstance(right, ast.Constant)
        and right.value == last
        and type(right.value) is int
    )


def _continues_only_on_last_pass(statements: list[ast.stmt], counter: str, last: int) -> bool:
    """Whether every ``continue`` among ``statements`` (not one of a nested loop or
    function) sits under an ``if`` that holds on the loop's last pass only: such a
    ``continue`` ends the loop, it runs nothing again."""
    for statement in statements:
        if isinstance(statement, ast.Continue):
            return False
        if isinstance(
            statement,
            (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef),
        ):
            continue
        if isinstance(statement, ast.If) and _on_last_pass(statement.test, counter, last):
            if not _continues_only_on_last_pass(statement.orelse, counter, last):
                return False
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list) and not _continues_only_on_last_pass(inner, counter, last):
                return False
        for clause in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            if not _continues_only_on_last_pass(clause.body, counter, last):
                return False
    return True


def _exits_on_success(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """A retry loop leaves once an attempt succeeds: a ``return``/``break`` in a guarded
    body (or its ``else``, or right after the ``try``), or a flag the ``while`` test reads
    set there. A poller or worker loop (``while True: try: poll()``) never leaves on
    success: it is not retrying anything."""
    flags = (
        {n.id for n in walk(loop.test) if isinstance(n, ast.Name)}
        if isinstance(loop, ast.While)
        else set()
    )

    def leaves(statements: list[ast.stmt]) -> bool:
        for statement in statements:
            for node in walk(statement):
                if isinstance(node, (ast.Return, ast.Break)):
                    return True
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in flags for t in node.targets
                ):
                    return True
        return False

    def tries_in(statements: list[ast.stmt]) -> Iterator[tuple[ast.Try, list[ast.stmt]]]:
        for index, statement in enumerate(statements):
            if isinstance(statement, ast.Try):
                yield statement, statements[index + 1 : index + 2]
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and not isinstance(statement, ast.Try):
                    yield from tries_in(inner)

    for node, following in tries_in(loop.body):
        if leaves(node.body) or leaves(node.orelse) or leaves(following):
            return True
    return False


def _yields(statements: list[ast.stmt]) -> bool:
    """Whether ``statements`` yield, outside any function or class defined in them."""
    pending: list[ast.AST] = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return False


class FlowVisitor(ValueReader):
    """Returns, raises, branches, loops, ``try`` handlers (what reaches the model from a
    caught error) and ``with`` blocks."""

    _helpers: Helpers | None = None
    # the innermost loop's counter and its last value: ``for i in range(2)`` -> ("i", 1)
    _last_pass: tuple[str, int] | None = None

    def module_helpers(self) -> Helpers:
        """The module's predicates and integer constants, indexed on first need."""
        if self._helpers is None:
            tree = self.tree or ast.Module(body=[], type_ignores=[])
            self._helpers = Helpers(tree, self.carriers.status)
        return self._helpers

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.visit(node.value)
            if self.scope.function is not None:
                self.scope.function.returns.append(self.value(node.value))

    def visit_Yield(self, node: ast.Yield) -> None:
        if node.value is not None:
            self.visit(node.value)
            if self.scope.function is not None:
                self.scope.function.yields.append(self.value(node.value))

    def visit_Raise(self, node: ast.Raise) -> None:
        if node.exc is not None:
            self.visit(node.exc)
            if self.scope.function is not None:
                self.scope.function.raises.append(self.value(node.exc))

    def visit_Assert(self, node: ast.Assert) -> None:
        self.generic_visit(node)
        if self.scope.function is not None:
            self.scope.function.asserts.append(self.value(node.test))

    def _status_check(self, node: ast.Compare) -> None:
        if len(node.ops) != 1:
            return
        ops = {ast.Eq: "eq", ast.NotEq: "ne", ast.In: "in", ast.NotIn: "not_in"}
        op = ops.get(type(node.ops[0]))
        if op is None:
            return
        left, right = node.left, node.comparators[0]
        if op in {"eq", "ne"} and isinstance(left, ast.Constant):
            left, right = right, left
        subject = self.text(left, 80)
        if not _STATUS_SUBJECT.search(subject):
            return
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            values = [right.value]
        elif isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            values = []
            for element in right.elts:
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    values.append(element.value)
                elif isinstance(element, ast.Attribute):
                    values.append(element.attr)  # (Status.FAILED, Status.STARTED)
        elif isinstance(right, ast.Attribute):
            values = [right.attr]  # Status.SUCCEEDED
        else:
            return
        if not values:
            return
        fn = self.scope.function
        self.facts.status_checks.append(
            StatusCheck(
                function=fn.qualname if fn else None,
                subject=subject,
                op=op,
                values=[v.lower() for v in values],
                span=span_of(node),
            )
        )

    def visit_Compare(self, node: ast.Compare) -> None:
        self.generic_visit(node)
        self._status_check(node)

    def _branch(self, string: str, body: list[ast.stmt]) -> None:
        if not body:
            return
        first, last = span_of(body[0]), span_of(body[-1])
        fn = self.scope.function
        self.facts.branches.append(
            (
                fn.qualname if fn else None,
                string,
                Span(first.line, first.column, last.end_line, last.end_column),
            )
        )

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            for side in (test.left, test.comparators[0]):
                string = self._static_string(side)
                if string is not None:
                    self._branch(string, node.body)
        scope = self.scope
        fn = scope.function
        if fn is None:
            self.generic_visit(node)
            return
        self.visit(test)
        start = scope.order
        for stmt in node.body:
            self.visit(stmt)
        end = scope.order
        last = node.body[-1] if node.body else None
        fn.branches.append(
            Branch(
                test=self.value(test),
                span=self.span(node),
                body_order=(start, end),
                exits=isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)),
            )
        )
        for stmt in node.orelse:
            self.visit(stmt)

    def _static_string(self, node: ast.expr) -> str | None:
        """A string literal, or a class constant of this module naming one (``Tools.COMMIT``
        in ``class Tools(str, Enum): COMMIT = "git_commit"``): dispatch compares tool names
        against either."""
        member = enum_member_value(node, self.facts.classes, self.module, self.resolve)
        if member is not None:
            return member
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            cls = self.facts.classes.get(f"{self.module}.{node.value.id}")
            value = cls.attributes.get(node.attr) if cls is not None else None
            return value.string() if value is not None else None
        return None

    def visit_Match(self, node: ast.Match) -> None:
        for case in node.cases:
            pattern = case.pattern
            options = pattern.patterns if isinstance(pattern, ast.MatchOr) else [pattern]
            for option in options:
                if isinstance(option, ast.MatchValue):
                    string = self._static_string(option.value)
                    if string is not None:
                        self._branch(string, case.body)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        self.generic_visit(node)
        keys = {
            k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }
        if tool_schema_shaped(keys):
            self.facts.dicts.append(self.value(node))

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While, kind: str) -> None:
        loop_id = self.new_id()
        retry_shape = False
        if isinstance(node, (ast.For, ast.AsyncFor)):
            it = node.iter
            retry_shape = (
                isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            ) and isinstance(node.target, ast.Name)
            retry_shape = retry_shape and _exits_on_success(node)
            if not retry_shape and isinstance(node.target, ast.Name):
                retry_shape = _repeats_same_attempt(node, node.target.id)
            self.visit(node.iter)
        else:
            retry_shape = _exits_on_success(node)
            self.visit(node.test)
        loop = Loop(loop_id=loop_id, kind=kind, span=self.span(node), is_retry_shape=retry_shape)
        if isinstance(node, (ast.For, ast.AsyncFor)):
            loop.targets = [n.id for n in walk(node.target) if isinstance(n, ast.Name)]
            loop.iterable = self.value(node.iter)
        fn = self.scope.function
        if fn is None and self.scope is self.module_scope:
            self.facts.loops.append(loop)  # ``for fn in TOOLS: mcp.add_tool(fn)``
        if fn is not None:
            fn.loops.append(loop)
            if _repeats_one_request(node) and mentions_status(node, self.carriers.status):
                loop.retried_statuses = retried_statuses(node, self.module_helpers())
        self.scope.loops.append(loop_id)
        start = self.scope.order
        outer = self._last_pass
        self._last_pass = _last_pass_of(node)
        for stmt in node.body:
            self.visit(stmt)
        self._last_pass = outer
        if loop.retried_statuses:
            loop.body_order = (start, self.scope.order)
        self.scope.loops.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        """``[StructuredTool.from_function(f) for f in (a, b)]``: what each generator walks,
        as a loop of kind ``comprehension`` (no statement repeats in it, so calls inside
        are in no loop a retry or a poll could be)."""
        fn = self.scope.function
        held = fn.loops if fn is not None else None
        if fn is None and self.scope is self.module_scope:
            held = self.facts.loops  # ``TOOLS = [Tool(f) for f in (a, b)]`` at module level
        if held is not None:
            for generator in node.generators:
                loop = Loop(loop_id=self.new_id(), kind="comprehension", span=self.span(node))
                loop.targets = [n.id for n in walk(generator.target) if isinstance(n, ast.Name)]
                loop.iterable = self.value(generator.iter)
                held.append(loop)
        self.generic_visit(node)

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node)

    def visit_SetComp(self, node: ast.SetComp) -> None:
        self._comprehension(node)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._comprehension(node)

    def visit_For(self, node: ast.For) -> None:
        self._loop(node, "for")

    def visit_AsyncFor(self, node: ast.AsyncFor) -> None:
        self._loop(node, "for")

    def visit_While(self, node: ast.While) -> None:
        self._loop(node, "while")

    def visit_Try(self, node: ast.Try) -> None:
        try_id = self.new_id()
        scope = self.scope
        start = scope.order
        for stmt in node.body:
            self.visit(stmt)
        end = scope.order
        fn = scope.function
        if fn is not None:
            fn.tries.append(
                TryBlock(
                    try_id=try_id,
                    span=self.span(node),
                    loop_ids=list(scope.loops),
                    body_order=(start, end),
                    # no ``yield`` in the module's bytes: no try of it yields, unwalked
                    yields=self.source_yields and _yields(node.body),
                )
            )
        for handler in node.handlers:
            self._handler(handler, try_id)
        for stmt in (*node.orelse, *node.finalbody):
            self.visit(stmt)

    visit_TryStar = visit_Try

    def _caught(self, node: ast.expr | None) -> list[str]:
        if node is None:
            return []
        if isinstance(node, ast.Tuple):
            return [self.resolve(e) or self.text(e) for e in node.elts]
        return [self.resolve(node) or self.text(node)]

    def _handler(self, handler: ast.ExceptHandler, try_id: int) -> None:
        fn = self.scope.function
        record = Handler(
            try_id=try_id,
            caught=self._caught(handler.type),
            span=self.span(handler),
            name=handler.name,
        )
        for sub in walk(handler):
            if isinstance(sub, ast.Raise):
                if sub.exc is None or (
                    isinstance(sub.exc, ast.Name) and sub.exc.id == handler.name
                ):
                    record.reraises = True
                else:
                    record.raises.append(self.value(sub.exc))
            elif isinstance(sub, ast.Return) and sub.value is not None:
                record.returns.append(self.value(sub.value))
            elif isinstance(sub, ast.Continue):
                record.continues = True
            elif isinstance(sub, ast.Call):
                callee = self.resolve(sub.func)
                if callee:
                    record.calls.append(callee)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                record.strings.append(sub.value[:200])
        record.breaks = _breaks_out(handler.body)
        if record.continues and self._last_pass is not None:
            # ``if i == attempts - 1: continue`` on the last pass: no pass follows
            record.continues = not _continues_only_on_last_pass(handler.body, *self._last_pass)
        record.raw_error_uses, record.tainted_names = self._raw_error_uses(handler)
        if self.scope.loops and mentions_status(handler, self.carriers.status):
            record.retried_statuses = handler_retried_statuses(handler, self.module_helpers())
        if fn is not None:
            fn.handlers.append(record)
        if handler.name:
            self.scope.types.pop(handler.name, None)
            self._forget_values()
        for stmt in handler.body:
            self.visit(stmt)

    def _raw_text(self, expr: ast.AST, name: str | None, tainted: set[str]) -> str | None:
        """How ``expr`` carries the exception's raw text, if it does."""
        top_level = [expr]
        if isinstance(expr, ast.Dict):
            top_level += [v for v in expr.values if v is not None]
        for item in top_level:
            if name and isinstance(item, ast.Name) and item.id == name:
                return name
        for sub in walk(expr):
            if isinstance(sub, ast.Call):
                callee = self.resolve(sub.func) or ""
                if callee in _TRACEBACK_TEXT:
                    return f"{callee}()"
                first = sub.args[0] if sub.args else None
                if name and isinstance(first, ast.Name) and first.id == name:
                    if callee in {"str", "repr", "format"}:
                        return f"{callee}({name})"
                if (
                    name
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr == "format"
                    and any(isinstance(a, ast.Name) and a.id == name for a in sub.args)
                ):
                    return f".format({name})"
            elif isinstance(sub, ast.FormattedValue):
                inner = sub.value
                if name and isinstance(inner, ast.Name) and inner.id == name:
                    return f'f"{{{name}}}"'
            elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mod):
                parts = sub.right.elts if isinstance(sub.right, ast.Tuple) else [sub.right]
                if name and any(isinstance(p, ast.Name) and p.id == name for p in parts):
                    return f"% {name}"
            elif (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Name)
                and name
                and sub.value.id == name
                and sub.attr in PYTHON_RAW_ERROR_ATTRIBUTES
            ):
                return f"{name}.{sub.attr}"
            elif isinstance(sub, ast.Name) and sub.id in tainted and isinstance(sub.ctx, ast.Load):
                return f"`{sub.id}` (holds the error text)"
        return None

    def _raw_error_uses(self, handler: ast.ExceptHandler) -> tuple[list[RawErrorUse], list[str]]:
        name = handler.name
        if not name and not self.source_names_traceback:
            return [], []
        tainted: set[str] = set()
        uses: list[RawErrorUse] = []
        walked = walk(handler)
        raised = {id(n.exc) for n in walked if isinstance(n, ast.Raise)}
        nodes = [n for n in walked if hasattr(n, "lineno")]
        nodes.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        for node in nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value:
                how = self._raw_text(node.value, name, tainted)
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    base = target.value if isinstance(target, ast.Subscript) else target
                    if how and isinstance(base, ast.Name):
                        tainted.add(base.id)
            elif isinstance(node, ast.Return) and node.value is not None:
                how = self._raw_text(node.value, name, tainted)
                if how:
                    uses.append(RawErrorUse(how, "return", span_of(node), None, self.text(node)))
            elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                args = [*node.exc.args, *(k.value for k in node.exc.keywords)]
                how = next((h for h in (self._raw_text(a, name, tainted) for a in args) if h), None)
                if how:
                    uses.append(
                        RawErrorUse(
                            how,
                            "raise",
                            span_of(node),
                            self.resolve(node.exc.func),
                            self.text(node),
                        )
                    )
            elif isinstance(node, ast.Call) and id(node) not in raised:
                if self.resolve(node.func) in _NOT_A_DESTINATION:
                    continue
                args = [*node.args, *(k.value for k in node.keywords)]
                how = next((h for h in (self._raw_text(a, name, tainted) for a in args) if h), None)
                if not how:
                    continue
                keys: list[str] = []
                strings: list[str] = []
                for arg in args:
                    if isinstance(arg, ast.Dict):
                        for key, val in zip(arg.keys, arg.values, strict=False):
                            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                                keys.append(key.value)
                            if isinstance(val, ast.Constant) and isinstance(val.value, str):
                                strings.append(val.value)
                keys += [k.arg for k in node.keywords if k.arg]
                uses.append(
                    RawErrorUse(
                        how,
                        "call",
                        span_of(node),
                        self.resolve(node.func) or self.text(node.func, 120),
                        self.text(node),
                        keys,
                        strings,
                    )
                )
        return uses, sorted(tainted)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        entered = [
            item.context_expr for item in node.items if isinstance(item.context_expr, ast.Call)
        ]
        for item in node.items:
            self.visit(item.context_expr)
            if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call):
                callee = self.resolve(item.context_expr.func)
                if callee and callee.rsplit(".", 1)[-1][:1].isupper():
                    self.scope.types[item.optional_vars.id] = callee
                    self._forget_values()
                self._record_assignment(item.optional_vars, item.context_expr, node)
        start = self.scope.order
        for stmt in node.body:
            self.visit(stmt)
        fn = self.scope.function
        if fn is not None and entered:
            fn.withs.append(
                WithBlock(
                    span=self.span(node),
                    item_spans=[span_of(e) for e in entered],
                    item_callees=[self.resolve(e.func) or self.text(e.func) for e in entered],
                    body_order=(start, self.scope.order),
                )
            )

    visit_AsyncWith = visit_With
