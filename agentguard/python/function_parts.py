"""A file's facts cut into its functions (module-level ones and the methods of module-level
classes, each with the functions nested in it) and the rest.

A recorded run still answers an edit confined to functions that no rule starts from and
that the rules did not read, or that nothing refers to (a helper written but not yet
called, dead code, code no tool reaches in a file parsed for another reason): the project
model and the rules work out the same findings without them. ``FunctionPart.rule_entry``
says whether a rule may start from a part, as far as its own facts tell; whether the rules
read it is in the recorded run, and whether anything refers to it is told from the bytes of
the whole project (``agentguard.engine.pipeline``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentguard.diagnostics import Span
from agentguard.facts.module_facts import (
    Assignment,
    ClassDef,
    Function,
    LineLayout,
    ModuleFacts,
    line_layout,
)
from agentguard.knowledge.catalog import Catalog
from agentguard.prefilter import seed_words
from agentguard.project.ledger_writes import dispatches_by_name, ledger_write

# Keyword arguments that change how every tool of the project is judged, whatever call
# passes them (agentguard.project.framework_settings).
_GLOBAL_SETTINGS = frozenset({"mask_error_details"})
# Decorators of the language and its standard library: no rule starts from them. Any other
# decorator may name a tool form or a retry through a module-level instance (``@hub.add``
# with ``hub = Hub()``), which the part's own names do not show.
_PLAIN_DECORATORS = frozenset(
    {
        "property",
        "staticmethod",
        "classmethod",
        "functools.cached_property",
        "functools.cache",
        "functools.lru_cache",
        "functools.wraps",
        "abc.abstractmethod",
        "typing.overload",
        "typing.override",
        "typing_extensions.overload",
        "typing_extensions.override",
        "contextlib.contextmanager",
        "contextlib.asynccontextmanager",
    }
)
_PROPERTY_PARTS = (".setter", ".getter", ".deleter")


@dataclass(frozen=True)
class FunctionPart:
    """One function (module-level, or a method of a module-level class) with the functions
    nested in it, and the facts made in them, as a module of its own."""

    qualnames: frozenset[str]  # the function's and its nested functions'
    is_method: bool  # a method of a module-level class, not a module-level function
    span: Span
    facts: ModuleFacts
    layout: LineLayout
    # Why a rule could start from it (a decorator, a retry loop, a seed word...); "" if none.
    rule_entry: str

    @property
    def names(self) -> frozenset[str]:
        """The def names of its functions."""
        return frozenset(fn.name for fn in self.facts.functions.values())


def _within(span: Span | None, outer: Span) -> bool:
    return span is not None and outer.line <= span.line and span.end_line <= outer.end_line


def split_functions(
    facts: ModuleFacts, catalog: Catalog
) -> tuple[LineLayout, dict[str, FunctionPart]]:
    """The layout of everything but the functions, and each function as a part, by
    qualified name."""
    # A word that makes a file a seed (agentguard.prefilter) may make a part a rule's
    # start. Facts hold names, not source text: a word's quotes (``"parameters"``) are not
    # there.
    words = tuple(word.strip("\"'") for word in seed_words(catalog))
    owner: dict[str, str] = {}
    module_classes = {
        qualname
        for qualname, cls in facts.classes.items()
        if qualname == f"{facts.module}.{cls.name}"
    }
    tops = [
        fn
        for fn in facts.functions.values()
        if (fn.class_name is None and fn.qualname == f"{facts.module}.{fn.name}")
        or (fn.class_name in module_classes and fn.qualname == f"{fn.class_name}.{fn.name}")
    ]
    for top in tops:
        stack = [top.qualname]
        while stack:
            qualname = stack.pop()
            if qualname in owner:
                continue
            owner[qualname] = top.qualname
            nested = facts.functions.get(qualname)
            if nested is not None:
                stack.extend(nested.nested)

    def part_of(function: str | None) -> str | None:
        return owner.get(function) if function is not None else None

    def in_some_part(span: Span | None) -> str | None:
        return next((top.qualname for top in tops if _within(span, top.span)), None)

    grouped: dict[str | None, dict[str, list[Any]]] = {}

    def put(part: str | None, field_name: str, item: Any) -> None:
        grouped.setdefault(part, {}).setdefault(field_name, []).append(item)

    for name in ("calls", "assignments", "attribute_sets", "status_checks"):
        for item in getattr(facts, name):
            put(part_of(item.function), name, item)
    for entry in facts.branches:
        put(part_of(entry[0]), "branches", entry)
    for value in facts.dicts:
        put(in_some_part(value.span), "dicts", value)
    for suppression in facts.suppressions:
        put(in_some_part(suppression.span), "suppressions", suppression)
    functions: dict[str | None, dict[str, Function]] = {}
    for qualname, fn in facts.functions.items():
        functions.setdefault(owner.get(qualname), {})[qualname] = fn
    classes: dict[str | None, dict[str, ClassDef]] = {}
    for qualname, cls in facts.classes.items():
        part = in_some_part(cls.span)
        if part is None:
            # A class ends where its last method ends: where on that line is the method's,
            # and only an output shows it (a file an output names is never reused).
            line, column, end_line, _ = cls.span
            cls = dataclasses.replace(cls, span=Span(line, column, end_line, 0))
        classes.setdefault(part, {})[qualname] = cls

    def module_of(part: str | None) -> ModuleFacts:
        lists = grouped.get(part, {})
        return dataclasses.replace(
            facts,
            functions=functions.get(part, {}),
            classes=classes.get(part, {}),
            calls=lists.get("calls", []),
            assignments=lists.get("assignments", []),
            attribute_sets=lists.get("attribute_sets", []),
            status_checks=lists.get("status_checks", []),
            branches=lists.get("branches", []),
            dicts=lists.get("dicts", []),
            suppressions=lists.get("suppressions", []),
        )

    parts: dict[str, FunctionPart] = {}
    for top in tops:
        part_facts = module_of(top.qualname)
        is_method = top.class_name is not None
        # The imports are the rest's, compared there: left out, the layout's strings are
        # the part's own.
        layout = line_layout(dataclasses.replace(part_facts, imports={}))
        parts[top.qualname] = FunctionPart(
            qualnames=frozenset(part_facts.functions),
            is_method=is_method,
            span=top.span,
            facts=part_facts,
            layout=layout,
            rule_entry=_rule_entry(part_facts, top.name, catalog, words, is_method, layout[0]),
        )
    return line_layout(module_of(None)), parts


def _rule_entry(
    part: ModuleFacts,
    name: str,
    catalog: Catalog,
    words: tuple[str, ...],
    is_method: bool,
    shape: list[object],
) -> str:
    """Why a rule could start from this part of a file, as its facts tell; "" if nothing.

    Every tool form, registration, retry construct, ledger or runtime call and suppression
    the rules look for is named by a seed word (that is what makes a file a seed), except
    the forms told by shape or by a conventional name, checked one by one here: what the
    rules look for in every function of the project (a retry loop, a timeout handler, an
    executor's dispatch, a tool-call record, a project-wide setting), not only in the
    functions a tool reaches.
    """
    if name.startswith("__") or (not is_method and name in catalog.plugin_entry_names):
        return f"`{name}` may be run by its name alone"
    if part.is_test or any(fn.is_test for fn in part.functions.values()):
        return "it is a test (evals are read from tests)"
    if part.classes:
        return "it defines a class"
    if part.suppressions:
        return "it holds a suppression comment"
    if part.dicts or part.branches:
        return "it holds a schema-shaped dict or a dispatch on a tool name"
    if part.attribute_sets or part.status_checks:
        return "it sets another object's attribute or checks a status"
    know = catalog.checklist
    for fn in part.functions.values():
        for decorator in fn.decorators:
            decorating = decorator.qualname
            if decorating not in _PLAIN_DECORATORS and not decorating.endswith(_PROPERTY_PARTS):
                return f"`{fn.name}` is decorated (`@{decorator.text}`)"
        if any(loop.is_retry_shape for loop in fn.loops) or any(
            handler.continues for handler in fn.handlers
        ):
            return f"`{fn.name}` may retry"
        if any(know.is_timeout(caught) for handler in fn.handlers for caught in handler.caught):
            return f"`{fn.name}` handles a timeout"
    bound: dict[tuple[str | None, str], list[Assignment]] = {}
    for assignment in part.assignments:
        bound.setdefault((assignment.function, assignment.target), []).append(assignment)
    for call in part.calls:
        called = call.text.split("(", 1)[0]
        if ledger_write(catalog, call, part) is not None:
            return f"`{called}` writes a tool-call record"
        if dispatches_by_name(know, call, _assigned_in(bound, call.function)):
            return f"`{called}` runs a function looked up by name"
        if any(key in _GLOBAL_SETTINGS for key in call.kwargs):
            return f"`{called}` passes a setting that applies to every tool"
    # The strings of the part's layout (``shape``: its imports left out, a name it uses is
    # in its resolved calls). Its own module's name starts every qualified name of it, and
    # its file's path and module name say where it is: only the rest counts. A standard
    # decorator is passed over above: ``functools`` would be read as "tool".
    own = part.module + "."
    place = {part.path, part.module}
    strings = [
        s
        for s in shape
        if isinstance(s, str) and s not in place and s.split("(", 1)[0] not in _PLAIN_DECORATORS
    ]
    text = "\n".join(s.replace(own, "") for s in strings).lower()
    found = next((word for word in words if word in text), None)
    return f"it names the seed word {found!r}" if found else ""


def _assigned_in(
    bound: dict[tuple[str | None, str], list[Assignment]], function: str | None
) -> Callable[[str], list[Assignment]]:
    """The assignments to a local of ``function``, by the local's name."""
    return lambda local: bound.get((function, local), [])
