"""The extractor's visits of imports, functions, decorators and classes."""

from __future__ import annotations

import ast

from agentguard.diagnostics import Span
from agentguard.facts.extract_values import (
    Scope,
    ValueReader,
)
from agentguard.facts.module_facts import (
    CONTEXT_MANAGER_DECORATORS,
    ClassDef,
    Decorator,
    Function,
)

# Annotations that say an attribute may hold anything.
_ANYTHING = frozenset({"typing.Any", "typing_extensions.Any", "object", "builtins.object"})
_LITERAL_TYPES = frozenset({"typing.Literal", "typing_extensions.Literal"})
# The annotations of what a context manager enters and of what a generator yields.
_CONTEXT_MANAGER_TYPES = frozenset(
    {
        "AbstractContextManager",
        "AbstractAsyncContextManager",
        "ContextManager",
        "AsyncContextManager",
    }
)
_GENERATOR_TYPES = frozenset(
    {"Iterator", "Generator", "AsyncIterator", "AsyncGenerator", "Iterable", "AsyncIterable"}
)


class DefinitionVisitor(ValueReader):
    """Imports, functions (with their decorators) and classes."""

    def _program_name(self, name: str) -> str:
        """An absolute import's dotted name as the project names it: its first name taken
        from this file's own program when the import heads say so (``utils.mail`` ->
        ``billing_agent.utils.mail``)."""
        head, dot, rest = name.partition(".")
        taken = self.import_heads.get(head)
        return name if taken is None else f"{taken}{dot}{rest}"

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            # written as is: the naming of modules reads what the imports say
            self.facts.absolute_imports.append(alias.name)
            if alias.asname:
                self.facts.imports[alias.asname] = self._program_name(alias.name)
            else:
                head = alias.name.split(".")[0]
                self.facts.imports[head] = self._program_name(head)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.module.split(".")
            is_package = self.path.endswith("__init__.py")
            keep = len(parts) - node.level + (1 if is_package else 0)
            prefix = ".".join(parts[: max(keep, 0)])
            base = ".".join(p for p in (prefix, base) if p)
        written = base
        if not node.level:
            base = self._program_name(base)
        for alias in node.names:
            if not node.level and base:
                self.facts.absolute_imports.append(
                    written if alias.name == "*" else f"{written}.{alias.name}"
                )
            if alias.name == "*":
                if base:
                    self.facts.star_imports.append(base)
                continue
            self.facts.imports[alias.asname or alias.name] = (
                f"{base}.{alias.name}" if base else alias.name
            )

    # ------------------------------------------------------------------ definitions
    def _qualname(self, name: str) -> str:
        if not self.containers:
            return f"{self.module}.{name}"
        kind, outer = self.containers[-1]
        return f"{outer}.{name}" if kind == "class" else f"{outer}.<locals>.{name}"

    def _decorator(self, node: ast.expr) -> Decorator:
        if isinstance(node, ast.Call):
            return Decorator(
                qualname=self.resolve(node.func) or self.text(node.func),
                text=self.text(node),
                called=True,
                args=[self.value(a) for a in node.args],
                kwargs={k.arg: self.value(k.value) for k in node.keywords if k.arg},
                span=self.span(node),
            )
        return Decorator(
            qualname=self.resolve(node) or self.text(node),
            text=self.text(node),
            called=False,
            span=self.span(node),
        )

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        qualname = self._qualname(node.name)
        decorators = [self._decorator(d) for d in node.decorator_list]
        for dec in node.decorator_list:
            self._visit_decorator_calls(dec)
        first_line = min([d.lineno for d in node.decorator_list] + [node.lineno])
        span = self.span(node)
        name_col = node.col_offset + (6 if isinstance(node, ast.AsyncFunctionDef) else 0) + 5
        args = node.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        if args.vararg:
            params.append(args.vararg.arg)
        if args.kwarg:
            params.append(args.kwarg.arg)
        in_class = bool(self.containers) and self.containers[-1][0] == "class"
        function = Function(
            qualname=qualname,
            name=node.name,
            module=self.module,
            class_name=self.class_stack[-1].qualname if in_class else None,
            span=Span(first_line, span.column, span.end_line, span.end_column),
            name_span=Span(node.lineno, name_col, node.lineno, name_col + len(node.name)),
            params=params,
            is_async=isinstance(node, ast.AsyncFunctionDef),
            decorators=decorators,
            docstring=ast.get_docstring(node),
            is_test=self.facts.is_test and node.name.startswith("test"),
        )
        if node.returns is not None:
            manager = any(d.qualname in CONTEXT_MANAGER_DECORATORS for d in decorators)
            # ``@asynccontextmanager async def _open(...) -> AsyncGenerator[Sandbox]`` and
            # ``def open(...) -> AbstractAsyncContextManager[Sandbox]``: ``async with
            # self._open() as sandbox`` holds a ``Sandbox``
            function.return_type = self._entered_type(node.returns, manager)
            if function.return_type is None:
                function.return_type = self._annotation_type(node.returns)
        if self.scope.function is not None:
            self.scope.function.nested.append(qualname)
        self.facts.functions[qualname] = function
        if in_class:
            self.class_stack[-1].methods.append(qualname)
        scope = Scope(function)
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if a.annotation is not None:
                annotated = self._annotation_type(a.annotation)
                if annotated:
                    scope.types[a.arg] = annotated
                carried = self._carried_dependencies(a.annotation)
                if carried is not None:
                    # A dotted key: no bare name is ever looked up with a dot in it.
                    scope.types[f"{a.arg}.{carried[0]}"] = carried[1]
        for default in (*args.defaults, *args.kw_defaults):
            if default is not None:
                self.visit(default)
        positional = [*args.posonlyargs, *args.args]
        defaulted = [
            *zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True),
            *(
                (a, d)
                for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                if d is not None
            ),
        ]
        for parameter, default in defaulted:
            if type(default) is not ast.Constant:
                # a constant default says nothing a finder follows (``timeout=30``)
                function.defaults[parameter.arg] = self.value(default)
        self.scopes.append(scope)
        self.scope = scope
        self._forget_values()
        self.containers.append(("def", qualname))
        for stmt in node.body:
            self.visit(stmt)
        self.containers.pop()
        self.scopes.pop()
        self.scope = self.scopes[-1]
        self._forget_values()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _carried_dependencies(self, node: ast.expr) -> tuple[str, str] | None:
        """For ``RunContext[Deps]`` and the like (``self.carriers``): the attribute that
        holds the dependencies and their type (``("deps", "app.Deps")``)."""
        if not isinstance(node, ast.Subscript):
            return None
        carrier = self.resolve(node.value)
        if carrier is None or carrier.split(".", 1)[0] not in self.carriers.packages:
            return None
        attribute = self.carriers.attributes.get(carrier.rsplit(".", 1)[-1])
        if attribute is None:
            return None
        argument = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        carried = self._annotation_type(argument)
        return (attribute, carried) if carried else None

    def _visit_decorator_calls(self, node: ast.expr) -> None:
        # Calls inside decorator arguments (lambdas, retry stop conditions) still count.
        if isinstance(node, ast.Call):
            for arg in (*node.args, *(k.value for k in node.keywords)):
                self.visit(arg)

    def _entered_type(self, node: ast.expr, manager: bool) -> str | None:
        """The class a ``with`` statement binds for a function annotated as returning a
        context manager of it (``AbstractContextManager[X]``), or, for a generator made a
        context manager (``manager``), as yielding it (``Iterator[X]``,
        ``AsyncGenerator[X]``): the first type argument."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if not isinstance(node, ast.Subscript):
            return None
        origin = (self.resolve(node.value) or self.text(node.value)).rsplit(".", 1)[-1]
        if origin not in _CONTEXT_MANAGER_TYPES and not (manager and origin in _GENERATOR_TYPES):
            return None
        inner = node.slice
        first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
        return self._annotation_type(first)

    def _base(self, node: ast.expr) -> str:
        """A base class as imported: a generic one by its class (``BaseTool[Args, str]``
        is ``autogen_core.tools.BaseTool``), as ``isinstance`` and the framework see it."""
        if isinstance(node, ast.Subscript):
            node = node.value
        return self.resolve(node) or self.text(node)

    def _field_annotation(self, cls: ClassDef, name: str, annotation: ast.expr) -> None:
        """What a field's annotation names (``ClassDef.field_types``), and its tag when it is
        ``Literal["one string"]`` (``ClassDef.tags``)."""
        named = [
            resolved
            for node in ast.walk(annotation)
            if isinstance(node, (ast.Name, ast.Attribute)) and (resolved := self.resolve(node))
        ]
        if named:
            cls.field_types[name] = list(dict.fromkeys(named))
        if (
            isinstance(annotation, ast.Subscript)
            and self.resolve(annotation.value) in _LITERAL_TYPES
            and isinstance(annotation.slice, ast.Constant)
            and isinstance(annotation.slice.value, str)
        ):
            cls.tags[name] = annotation.slice.value

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qualname = self._qualname(node.name)
        cls = ClassDef(
            qualname=qualname,
            name=node.name,
            module=self.module,
            span=self.span(node),
            name_span=Span(
                node.lineno, node.col_offset + 7, node.lineno, node.col_offset + 7 + len(node.name)
            ),
            bases=[self._base(b) for b in node.bases],
            methods=[],
            decorators=[self._decorator(d) for d in node.decorator_list],
        )
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    cls.attributes[target.id] = self.value(stmt.value)
                    made = self._default_type(stmt.value)
                    if made:
                        cls.self_types.setdefault(target.id, made)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                self._field_annotation(cls, stmt.target.id, stmt.annotation)
                # ``client: WebClient``, with a default or not (``= Field(default_factory=
                # ...)``, ``= field(...)``): the instance's attribute holds a ``WebClient``.
                if stmt.value is not None:
                    cls.attributes[stmt.target.id] = self.value(stmt.value)
                annotated = self._annotation_type(stmt.annotation)
                item = self._item_annotation(stmt.annotation)
                if item is not None:
                    cls.item_types[stmt.target.id] = item
                if annotated:
                    cls.self_types[stmt.target.id] = annotated
                elif self.resolve(stmt.annotation) in _ANYTHING:
                    cls.opaque.append(stmt.target.id)
                elif stmt.value is not None:
                    made = self._default_type(stmt.value)
                    if made:
                        cls.self_types[stmt.target.id] = made
        self.facts.classes[qualname] = cls
        self.class_stack.append(cls)
        self.containers.append(("class", qualname))
        class_scope = Scope(self.scope.function)
        class_scope.order = self.scope.order
        self.scopes.append(class_scope)
        self.scope = class_scope
        self._forget_values()
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self.scope = self.scopes[-1]
        self._forget_values()
        self.containers.pop()
        self.class_stack.pop()
