"""Finder: tools a framework makes of a retriever or a query engine (LangChain's
``create_retriever_tool(retriever, "search_docs", "...")``, LlamaIndex's
``QueryEngineTool(query_engine=engine, metadata=ToolMetadata(name="docs"))``). The tool has
no function of the project's: the framework runs the retriever's search over its index when
the model calls it, which reads. It sits where the call makes it, under the name the call
gives; a name computed at run time gives no tool to report."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.registration_calls import tool_without_code
from agentguard.project.tool_facts import ToolFacts, argument_at

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    forms = project.catalog.tool_forms["retrieval_tool"]
    making = project.callees_matching(forms, resolved=True)
    if not making:
        return
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for site in project.call_sites(facts):
            form = forms(site.callee) if site.callee in making else None
            if form is None or form.name is None:
                continue
            call = site.call
            written = argument_at(call.args, call.kwargs, form.name)
            name = written.string() if written is not None else None
            if not name or found.named_in(name, facts.path):
                continue
            place = Location(facts.path, call.span)
            yield tool_without_code(project, call, facts, form, place, name, {})
