"""Which HTTP statuses make a hand-written loop send its request again.

A loop that re-sends on a status instead of an exception (``for attempt in range(n): r =
send(); if r.status_code < 400: return r; if not retryable(r.status_code): raise ...;
sleep()``) decides by comparisons of the response's status. The loop body is run here
once per status of a sample, without the code: each ``if`` is decided when its test reads
only the status (three-valued: a test that reads anything else may go either way), a
``return``/``raise``/``break`` leaves, a ``continue`` or the end of the body repeats. A
status for which some path repeats is retried.

The tests read the status as the catalogue says a response holds it (``retries.response_status``
in rules/retries.yaml): its status attribute (``status_code``, ``status``), a local holding
one or named for one, the documented response flags of requests and httpx (``ok``,
``is_success``...); ``raise_for_status()`` raises for 4xx/5xx. A predicate helper of the same
module (``def _should_retry(self, code): return code == 429 or code >= 500``) is read through.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from agentguard.knowledge.catalog import ResponseStatus

# The statuses tried: successes, refusals, "not processed" answers and server errors.
SAMPLE = (200, 201, 202, 204, 400, 401, 403, 404, 408, 409, 422, 423, 429, 500, 502, 503, 504)
_COMPARE: dict[type, Callable[[int, int], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}
_DEPTH = 2  # helpers read through, nested

Tri = bool | None  # True, False, or unknown (either)
Numbers = int | frozenset[int] | None

RETURN, RAISE, NEXT, FALL = "return", "raise", "next", "fall"


class Helpers:
    """The module's functions whose body is one ``return <test>``, by name, and its
    module-level constants holding integers (``RETRY_STATUSES = {429, 502, 503}``); and
    how a response's status is read (the catalogue's ``response_status``)."""

    def __init__(self, tree: ast.Module, status: ResponseStatus) -> None:
        self._tree = tree
        self.status = status
        self._functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None
        self._constants: dict[str, Numbers] = {}

    def _index(self) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        """Both indexes, from one walk of the module on first need."""
        if self._functions is None:
            functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
            constants = self._constants
            for node in ast.walk(self._tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions.setdefault(node.name, node)
                elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                    if isinstance(target, ast.Name):
                        constants.setdefault(target.id, _literal_numbers(node.value))
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    if isinstance(node.target, ast.Name):
                        constants.setdefault(node.target.id, _literal_numbers(node.value))
            self._functions = functions
        return self._functions

    def function(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        return self._index().get(name)

    def constant(self, name: str) -> Numbers:
        self._index()
        return self._constants.get(name)


def _literal_numbers(node: ast.expr) -> Numbers:
    """An int, a collection of ints, ``range(a, b)``, or a ``frozenset``/``set`` of them."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        numbers = [i for i in items if type(i) is int]
        return frozenset(numbers) if len(numbers) == len(node.elts) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [a.value for a in node.args if isinstance(a, ast.Constant)]
        if node.func.id == "range" and len(args) == len(node.args) in (1, 2):
            if all(type(a) is int for a in args):
                return frozenset(range(*args))  # type: ignore[arg-type]
        if node.func.id in {"frozenset", "set", "tuple"} and len(node.args) == 1:
            return _literal_numbers(node.args[0])
    return None


def _not(value: Tri) -> Tri:
    return None if value is None else not value


def _combine(values: Iterable[Tri], deciding: bool) -> Tri:
    """Three-valued ``and`` (``deciding`` False) or ``or`` (True): one deciding value
    settles it, else any unknown leaves it unknown."""
    result: Tri = not deciding
    for value in values:
        if value is deciding:
            return deciding
        if value is None:
            result = None
    return result


class _Run:
    """The loop body run for one status."""

    def __init__(self, status: int, helpers: Helpers, names: set[str]) -> None:
        self.status = status
        self.helpers = helpers
        self.names = names  # locals holding the status
        self.decided = False  # some test read the status
        self.depth = 0

    # --- expressions

    def is_status(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr in self.helpers.status.attributes
        if isinstance(node, ast.Name):
            return node.id in self.names or bool(self.helpers.status.names.search(node.id))
        return False

    def numbers(self, node: ast.expr) -> Numbers:
        if self.is_status(node):
            self.decided = True
            return self.status
        literal = _literal_numbers(node)
        if literal is not None:
            return literal
        if isinstance(node, ast.Name):
            return self.helpers.constant(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return self.helpers.constant(node.attr)  # self.RETRY_STATUSES, Cls.RETRYABLE
        return None

    def test(self, node: ast.expr) -> Tri:
        if isinstance(node, ast.BoolOp):
            values = (self.test(v) for v in node.values)
            return _combine(values, deciding=isinstance(node.op, ast.Or))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _not(self.test(node.operand))
        if isinstance(node, ast.Compare):
            return self.compare(node)
        flag = self.helpers.status.flags.get(node.attr) if isinstance(node, ast.Attribute) else None
        if flag is not None:
            self.decided = True
            return flag[0] <= self.status <= flag[1]
        if isinstance(node, ast.Call):
            return self.helper(node)
        return None

    def compare(self, node: ast.Compare) -> Tri:
        results: list[Tri] = []
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            a, b = self.numbers(left), self.numbers(right)
            if a is None or b is None:
                results.append(None)
            elif isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(a, int) or isinstance(b, int):
                    results.append(None)
                else:
                    results.append((a in b) == isinstance(op, ast.In))
            elif isinstance(a, int) and isinstance(b, int) and type(op) in _COMPARE:
                results.append(_COMPARE[type(op)](a, b))
            else:
                results.append(None)
            left = right
        return _combine(results, deciding=False)

    def helper(self, call: ast.Call) -> Tri:
        """A predicate of this module called with the status: its ``return`` test, with the
        parameter the status is passed to read as the status."""
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name is None or self.depth >= _DEPTH or call.keywords:
            return None
        definition = self.helpers.function(name)
        if definition is None:
            return None
        body = [
            s
            for s in definition.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            return None
        params = [a.arg for a in definition.args.args]
        if isinstance(func, ast.Attribute) and params and params[0] in {"self", "cls"}:
            params = params[1:]
        # the parameter given the status; a response passed whole is read by its attributes
        bound = {p for p, arg in zip(params, call.args, strict=False) if self.is_status(arg)}
        saved, self.names = self.names, bound
        self.depth += 1
        try:
            return self.test(body[0].value)
        finally:
            self.depth -= 1
            self.names = saved

    # --- statements

    def block(self, statements: list[ast.stmt]) -> set[str]:
        outcomes = {FALL}
        for statement in statements:
            if FALL not in outcomes:
                break
            outcomes.discard(FALL)
            outcomes |= self.statement(statement)
        return outcomes

    def statement(self, node: ast.stmt) -> set[str]:
        if isinstance(node, ast.Return):
            return {RETURN}
        if isinstance(node, ast.Break):
            return {RETURN}
        if isinstance(node, ast.Raise):
            return {RAISE}
        if isinstance(node, ast.Continue):
            return {NEXT}
        if isinstance(node, ast.If):
            decided = self.test(node.test)
            if decided is True:
                return self.block(node.body)
            if decided is False:
                return self.block(node.orelse)
            return self.block(node.body) | self.block(node.orelse)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return self.block(node.body)
        if isinstance(node, ast.Try):
            return self.attempt(node)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and self.is_status(node.value):
                self.names.add(target.id)
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)):
            call = node.value.value if isinstance(node.value, ast.Await) else node.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in self.helpers.status.raises_on_error
            ):
                self.decided = True
                return {RAISE} if self.status >= 400 else {FALL}
        return {FALL}

    def attempt(self, node: ast.Try) -> set[str]:
        """A ``try`` in the loop: its body and ``else``. What its handlers do with an
        exception is the handler's own fact (``handler_retried_statuses``)."""
        outcomes = self.block(node.body)
        if FALL in outcomes and node.orelse:
            outcomes.discard(FALL)
            outcomes |= self.block(node.orelse)
        return outcomes


def _per_status(body: list[ast.stmt], helpers: Helpers) -> tuple[bool, list[int]]:
    """Whether some test of ``body`` read the status, and the sample statuses for which
    ``body`` may go on (to its end, or ``continue``)."""
    going_on: list[int] = []
    decided = False
    for status in SAMPLE:
        run = _Run(status, helpers, set())
        outcomes = run.block(body)
        decided = decided or run.decided
        if NEXT in outcomes or FALL in outcomes:
            going_on.append(status)
    return decided, going_on


def retried_statuses(loop: ast.For | ast.AsyncFor | ast.While, helpers: Helpers) -> list[int]:
    """The sample statuses for which the loop may send again, when the loop is a retry on
    a status: some success leaves it and some error status runs it again. Empty otherwise
    (a pager or poller repeats on success; a loop whose tests never read a status is not
    deciding on one)."""
    decided, retried = _per_status(loop.body, helpers)
    success_exits = any(s < 300 and s not in retried for s in SAMPLE)
    if not decided or not success_exits or not any(s >= 400 for s in retried):
        return []
    return retried


def handler_retried_statuses(
    handler: ast.ExceptHandler, helpers: Helpers
) -> tuple[int, ...] | None:
    """For an ``except`` clause that decides on the failed response's status (``if
    e.response.status_code == 429: sleep(); continue`` then ``raise``): the sample statuses
    for which it goes on (to the next attempt, in a loop). None when no test of it reads a
    status, or every status goes on alike."""
    decided, retried = _per_status(handler.body, helpers)
    if not decided or len(retried) == len(SAMPLE):
        return None
    return tuple(retried)


def mentions_status(loop: ast.AST, status: ResponseStatus) -> bool:
    """A cheap test before running the loop: does its body read a status at all?"""
    reads = status.read_attributes
    return any(isinstance(node, ast.Attribute) and node.attr in reads for node in ast.walk(loop))
