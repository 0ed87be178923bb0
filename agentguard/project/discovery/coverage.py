"""Honest coverage (AG003): the files that use a framework's tool API where no tool was
found, run once the finders are done.

A registration the analyser does not understand (a factory handed a computed function, a
tool class with no entry method it knows, a low-level server's ``list_tools`` handler whose
dispatch it cannot follow) must not end as a silent zero: each such file is named with the
first place it touches the API.

So must a sink where tools enter a model: a model API call handed tool specs
(``chat.completions.create(tools=...)``, ``converse(toolConfig=...)``: the catalogue's
``spec_sinks``) in a file where no tool was found and that imports nothing from a
file where one was. A sink handed what its enclosing function's parameters make passes on
what its callers give it, and a framework's agent handed a tool list (``Agent(tools=...)``)
is often handed a package's own tool objects: either is named only when the project has no
tool at all, so that a zero is never silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Span
from agentguard.facts.module_facts import Function, ModuleFacts, Value
from agentguard.project.definitions import framework_bases
from agentguard.project.discovery.framework_data import lowlevel_handlers, registration_methods
from agentguard.project.discovery.registration_names import registration_names
from agentguard.project.discovery.shared_bases import is_shared_base
from agentguard.project.tool_facts import argument_at

if TYPE_CHECKING:
    from agentguard.project.tool_index import ToolIndex


@dataclass(frozen=True)
class CoverageGap:
    """A file that uses ``framework``'s tool API ``through`` (at ``span``) and holds no tool."""

    path: str
    span: Span
    framework: str
    through: str
    # A sink where tools enter a model or an agent (not a registration): why none was traced
    why: str = ""


def coverage_gaps(project: ToolIndex) -> list[CoverageGap]:
    """One gap per non-test file that touches a framework's tool API where no tool was
    found, at its first touch point."""
    covered = {t.path for t in project.tools} | {t.site.path for t in project.tools}
    handler_methods = lowlevel_handlers(project)
    methods = registration_methods(project) | handler_methods
    handlers = {
        f"{server}.{handler}"
        for server in project.catalog.mcp_lowlevel_servers
        for handler in handler_methods
    }
    tool_modules = {
        facts.module
        for facts in project.modules.values()
        if facts.path in covered and not facts.is_test
    }
    gaps: list[CoverageGap] = []
    for facts in project.modules.values():
        if facts.is_test or facts.path in covered:
            continue
        touches = sorted(
            _touches(project, facts, methods, handlers),
            key=lambda t: (t.span.line, t.span.column),
        )
        if not touches:
            touches = _sinks(project, facts, tool_modules)
        if touches:
            gaps.append(min(touches, key=lambda t: (t.span.line, t.span.column)))
    return sorted(gaps, key=lambda g: (g.path, g.span.line))


def _sinks(project: ToolIndex, facts: ModuleFacts, tool_modules: set[str]) -> list[CoverageGap]:
    """The places in ``facts`` where tools enter a model or an agent and none was traced."""
    if any(
        imported in tool_modules or imported.rpartition(".")[0] in tool_modules
        for imported in facts.imports.values()
    ):
        return []  # it hands over tools found in the files it imports from
    registry = project.catalog.tool_forms["registry"]
    model_calls = project.catalog.spec_sinks
    found: list[CoverageGap] = []
    for site in project.call_sites(facts):
        call = site.call
        keywords = model_calls(site.callee)
        form = registry(site.callee) if keywords is None else None
        if keywords is not None:
            handed = next((call.kwargs[k] for k in keywords if k in call.kwargs), None)
            framework = "a model API"
        elif form is not None and form.tools is not None:
            handed = argument_at(call.args, call.kwargs, form.tools)
            framework = form.framework
        else:
            continue
        if handed is None or (handed.kind == "const" and not handed.const):
            continue
        if handed.kind == "list" and not handed.elements:
            continue
        if project.tools and (form is not None or _passed_on(facts, site.caller, handed)):
            # its callers choose the tools, or an agent is handed objects (often a
            # package's own tools): judged where they are made, or by the registration
            # checks above; named only when the project has no tool at all
            continue
        why = (
            "no tool was found anywhere in the project"
            if not project.tools
            else f"the tools it is handed (`{handed.text[:60]}`) were not traced to a function"
        )
        found.append(CoverageGap(facts.path, call.span, framework, f"{call.text}(...)", why))
    return found


def _touches(
    project: ToolIndex, facts: ModuleFacts, methods: frozenset[str], handlers: set[str]
) -> list[CoverageGap]:
    forms = project.catalog.tool_forms
    found: list[CoverageGap] = []
    for fn in facts.functions.values():
        for dec in fn.decorators:
            name = dec.qualname.replace("()", "")
            if name.rsplit(".", 1)[-1] not in methods:
                continue
            for candidate in registration_names(project, name, fn, facts):
                form = forms["decorator"](candidate)
                if form is not None and form.framework != "agentguard":
                    found.append(CoverageGap(facts.path, dec.span, form.framework, dec.text))
                    break
                if candidate in handlers:
                    found.append(CoverageGap(facts.path, dec.span, "mcp", dec.text))
                    break
    for site in project.call_sites(facts):
        call = site.call
        if call.method not in methods:
            continue
        for candidate in (
            site.callee,
            *registration_names(project, call.callee, site.caller, facts),
        ):
            form = forms["factory"](candidate) or forms["decorator"](candidate)
            if form is not None and form.framework != "agentguard":
                found.append(
                    CoverageGap(facts.path, call.span, form.framework, f"{call.text}(...)")
                )
                break
    for cls in facts.classes.values():
        if is_shared_base(project, cls):
            continue  # the tools are its subclasses, wherever they are
        for base in framework_bases(project, cls.qualname):
            form = forms["base_class"](base)
            if form is not None and not form.requires_attributes:
                found.append(
                    CoverageGap(facts.path, cls.name_span, form.framework, f"subclass of {base}")
                )
                break
    return found


def _passed_on(facts: ModuleFacts, caller: Function | None, handed: Value) -> bool:
    """Whether ``handed`` is made from a parameter of ``caller`` (``tools``, or
    ``specs = [convert(t) for t in tools]``): what its callers pass in."""
    if caller is None:
        return False
    params = set(caller.params)
    names = set(handed.names) | ({handed.text} if handed.kind == "name" else set())
    made = [
        (a.target, a.value) for a in facts.assignments if a.function == caller.qualname
    ]  # ``specs = [...]``
    made += [
        (call.receiver, value)
        for call in facts.calls
        if call.function == caller.qualname
        and call.method in {"append", "extend"}
        and call.receiver
        for value in call.args
    ]  # ``specs.append(spec)``
    made += [
        (target, loop.iterable)
        for loop in caller.loops
        if loop.iterable is not None
        for target in loop.targets
    ]  # ``for tool in tools:``
    for _ in range(4):
        if names & params:
            return True
        grown = names | {name for target, value in made if target in names for name in value.names}
        if grown == names:
            return False
        names = grown
    return bool(names & params)
