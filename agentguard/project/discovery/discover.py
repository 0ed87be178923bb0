"""The finders, in the order they run, and the one function that runs them.

Order matters because the first registration of a function makes its tool (a later one only
adds declarations and options), and because most finders leave alone the functions, classes
or names already tools when they start. The declarations (decorators, tool classes,
registration calls) are walked together module by module; every other finder walks the
whole project in turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from agentguard.facts.module_facts import ModuleFacts
from agentguard.project.built_agents import AgentTable
from agentguard.project.discovery import (
    answer_choices,
    decorated_functions,
    delegated_agents,
    loaded_classes,
    lowlevel_mcp,
    name_dispatch,
    open_agents,
    prompt_actions,
    records,
    registrars,
    registration_sites,
    registries,
    retrieval_tools,
    schema_dicts,
    schema_file_dispatch,
    spec_sinks,
    structural,
    stub_dispatch,
    subclasses,
    tool_classes,
    wrappers,
)
from agentguard.project.discovery.builder import FoundTools, ToolBuilder
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

# A finder yields candidate tools; it may ask ``FoundTools`` what was found before it.
Finder = Callable[["ProjectIndex", FoundTools], Iterable[ToolFacts]]
ModuleFinder = Callable[["ProjectIndex", FoundTools, ModuleFacts], Iterable[ToolFacts]]

# Declarations, run in this order within each module before the next module: the decorator
# (or tool class) a function is written under names it before any call registering it.
DECLARATIONS: tuple[ModuleFinder, ...] = (
    decorated_functions.find_in,
    tool_classes.find_in,
    registration_sites.find_in,
)


def declarations(project: ProjectIndex, found: FoundTools) -> Iterable[ToolFacts]:
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for finder in DECLARATIONS:
            yield from finder(project, found, facts)


FINDERS: tuple[Finder, ...] = (
    declarations,
    # Project decorators wrapping a framework's: a declaration too, found once the
    # framework's own are.
    wrappers.find,
    # Project registrars whose store reaches a model: after every framework form, so a
    # function a framework decorator also registers keeps that framework.
    registrars.find,
    # Registrations reached through the project's classes: functions not already tools.
    subclasses.find,
    # Lists handed to agents after every declaration: a function both decorated and listed
    # keeps its decorator's name and framework.
    registries.find,
    # Named tools dispatched by name, then the tool specs written as dicts, whose functions
    # may already be tools of a low-level server.
    lowlevel_mcp.find,
    schema_dicts.find,
    # Tagged unions in the schema a model's answer must fit: the member it answers with.
    answer_choices.find,
    # Tool classes whose specs reach a model API call, and those loaded by the name the
    # model answers with, before the shapes alone are judged: provenance names them and the
    # method their dispatch runs.
    spec_sinks.find,
    loaded_classes.find,
    # Tools a framework makes of a retriever or a query engine: no function of their own.
    retrieval_tools.find,
    # Tools handed with a model to a builder no catalogue names: after every framework's.
    open_agents.find,
    # Tools found by shape alone come last: any framework form found first wins.
    structural.find,
    records.find,
    # Actions a prompt sent to a model lists, run by the project's branches on their names:
    # after every tool is found, whose own branches on an argument are no actions.
    prompt_actions.find,
    # The operations a generic tool found so far hands its own name attribute to.
    name_dispatch.find,
)


def find_tools(
    project: ProjectIndex, agents: AgentTable, declared: frozenset[str] = frozenset()
) -> list[ToolFacts]:
    """The project's tools, every finder's candidates merged, by file, line and name; with
    the project's agents, last, those offered to another agent's model as tools.
    ``declared``: the tool names the project's schema files declare."""
    builder = ToolBuilder(set(project.classes))
    for finder in FINDERS:
        for candidate in finder(project, builder):
            builder.add(candidate)
    for candidate in schema_file_dispatch.find(project, builder, declared):
        builder.add(candidate)
    for candidate in delegated_agents.find(project, builder, agents):
        builder.add(candidate)
    tools = builder.sorted()
    stub_dispatch.add_branch_work(project, tools)
    return tools
