"""Finder: project decorators that register the function they are given with a framework's tool
decorator.

A server may wrap its framework's decorator in one of its own, to register a tool only when
enabled, or to add logging::

    def tool(annotations=None):
        def decorator(func):
            if enabled(func.__name__):
                return mcp.tool(annotations=annotations)(func)
            return func
        return decorator

    @tool(annotations=ToolAnnotations(readOnlyHint=True))
    def get_sheet(...): ...

Every function decorated with such a wrapper is a tool of the framework whose decorator the
wrapper applies. The framework decorator's options are the wrapper's: a keyword written as a
parameter of the factory (``annotations=annotations``) takes what each use site passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call, Decorator, Function, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import returned_local_function
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool, wraps_a_parameter
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

LOCALS = ".<locals>."


@dataclass(frozen=True)
class Wrapper:
    """A project function applying a framework decorator to its parameter: used as
    ``@wrapper`` itself, or returned by ``factory`` and used as ``@factory(...)``."""

    wrapper: str
    factory: str | None
    form: ToolForm
    options: dict[str, Value]


def _applied_form(
    project: ProjectIndex, fn: Function, call: Call, calls: list[Call]
) -> tuple[ToolForm, dict[str, Value]] | None:
    """The framework decorator ``call`` applies to a parameter of ``fn``, with its options:
    ``mcp.tool(annotations=a)(func)`` (the decorator call, then the call on the function)
    or ``tool(func)``."""
    if not call.args or call.args[0].kind != "name":
        return None
    handed = call.args[0].text
    if handed not in fn.params and not wraps_a_parameter(project, f"{fn.qualname}{LOCALS}{handed}"):
        return None
    decorator = project.catalog.tool_forms["decorator"]
    form = decorator(call.callee)
    if form is not None:
        return form, dict(call.kwargs)
    if not call.text.endswith(")"):
        return None
    for inner in calls:
        # the decorator call starts where the call on the function does, and is its callee
        if inner is call or inner.span[:2] != call.span[:2]:
            continue
        if not call.text.startswith(inner.text + "("):
            continue
        form = decorator(inner.callee)
        if form is not None:
            return form, dict(inner.kwargs)
    return None


def _wrappers(project: ProjectIndex) -> list[Wrapper]:
    found: list[Wrapper] = []
    for qualname, (fn, facts) in project.functions.items():
        if facts.is_test or not fn.params:
            continue
        calls = project.calls_in(qualname)
        for call in calls:
            applied = _applied_form(project, fn, call, calls)
            if applied is None:
                continue
            form, options = applied
            factory = qualname.rpartition(LOCALS)[0]
            returned = returned_local_function(project, factory) == qualname
            found.append(Wrapper(qualname, factory if returned else None, form, options))
            break
    return found


def _use_options(
    project: ProjectIndex, wrapper: Wrapper, decorator: Decorator
) -> dict[str, Value] | None:
    """The framework decorator's options at one use site, or None when ``decorator`` is no
    use of ``wrapper``. A keyword the wrapper writes as a factory parameter takes the value
    the use site passes for it (by keyword or position); one it does not pass is left out."""
    if decorator.qualname == wrapper.wrapper:
        params: list[str] = []
    elif wrapper.factory is not None and decorator.qualname == wrapper.factory:
        params = project.functions[wrapper.factory][0].params
    else:
        return None
    options: dict[str, Value] = {}
    for key, value in wrapper.options.items():
        if value.kind != "name" or value.text not in params:
            if value.kind != "name":
                options[key] = value
            continue
        given = decorator.kwargs.get(value.text)
        index = params.index(value.text)
        if given is None and index < len(decorator.args):
            given = decorator.args[index]
        if given is not None:
            options[key] = given
    return options


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    """The tools made by project decorators that apply a framework's tool decorator."""
    wrappers = _wrappers(project)
    if not wrappers:
        return
    for qualname, (fn, facts) in project.functions.items():
        if facts.is_test or not fn.decorators:
            continue
        uses = (
            (decorator, wrapper, options)
            for decorator in fn.decorators
            for wrapper in wrappers
            if qualname != wrapper.wrapper
            and (options := _use_options(project, wrapper, decorator)) is not None
        )
        for decorator, wrapper, options in uses:
            name = options.get("name")
            site = Location(facts.path, decorator.span)
            text = name.string() if name is not None else None
            tool = function_tool(project, qualname, wrapper.form, site, text, options)
            if tool is not None:
                yield tool
            break  # the first use decides
