"""Finder: tool registrations reached through the project's own classes.

``self.app.tool()`` in a method whose class was handed the server, ``self.tool()`` in a
method of ``class NotesServer(FastMCP[Ctx])``, ``server.tool()`` on an instance of such a
subclass: decorators and registration calls whose framework form shows only once the
written name is expanded (``registration_names``). A function already a tool is left as the
earlier finders made it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import decorated_tool
from agentguard.project.discovery.framework_data import registration_methods
from agentguard.project.discovery.registration_calls import tools_from_call
from agentguard.project.discovery.registration_names import registration_names
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    forms = project.catalog.tool_forms
    methods = registration_methods(project)
    tool_functions = found.functions()
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for fn in facts.functions.values():
            if not fn.decorators or fn.qualname in tool_functions:
                continue
            for dec in fn.decorators:
                if forms["decorator"](dec.qualname) is not None:
                    break  # the decorator finder has judged this one
                if dec.qualname.replace("()", "").rsplit(".", 1)[-1] not in methods:
                    continue
                form = next(
                    (
                        matched
                        for candidate in registration_names(project, dec.qualname, fn, facts)
                        if (matched := forms["decorator"](candidate)) is not None
                    ),
                    None,
                )
                if form is None or form.framework == "agentguard":
                    continue
                tool = decorated_tool(project, fn, dec, form, facts)
                if tool:
                    yield tool
                break
        for site in project.call_sites(facts):
            written = site.call.callee
            if (
                site.call.method not in methods
                or "." not in written
                or forms["factory"](site.callee)
                or forms["decorator"](site.callee)
            ):
                continue
            for candidate in registration_names(project, written, site.caller, facts):
                if forms["factory"](candidate) or forms["decorator"](candidate):
                    yield from tools_from_call(project, site.call, facts, candidate)
                    break
