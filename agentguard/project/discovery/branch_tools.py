"""Where a tool named by a string runs: the module that dispatches on the name, and the
dispatch branch that does the work itself.

Low-level MCP servers and hand-written tool loops list their tools in one place (``Tool(name=
"create_issue", ...)``, a spec dict ``{"name": "write_file", ...}`` handed to a model API) and
dispatch on the name in another: ``if name == "create_issue":`` / ``case "write_file":`` in
the module that handles the model's or the client's call. A branch that does the work itself,
or only through helpers every branch shares, is the tool: it has no function of its own, so
the tool is anchored at the branch and reaches what the branch calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import ModuleFacts
from agentguard.facts.static_strings import ENUM_MEMBER
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.declarations import declarations_from_options
from agentguard.project.discovery.dispatch import (
    branch_name,
    branch_names,
    branches_by_name,
    handler_entries,
    is_guard_call,
    looked_up_method,
)
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts

if TYPE_CHECKING:
    from agentguard.facts.module_facts import Value
    from agentguard.project.index import ProjectIndex


class DispatchingModules:
    """The module that dispatches on each tool name, computed once per finder run."""

    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        self._by_name: dict[str, list[ModuleFacts]] | None = None
        self._tables: dict[str, list[ModuleFacts]] | None = None
        self._keyed_by_tool: set[tuple[str, str]] = set()

    def of(self, name: str, listing: ModuleFacts) -> ModuleFacts:
        """The module that dispatches on ``name``: ``listing`` itself when it does (a branch
        on the name, or a method so named looked up by ``getattr``; or when no one module
        does), else the one module of the project that does."""
        project = self.project
        if name in branch_names(project, listing) or looked_up_method(project, name, listing):
            return listing
        if self._by_name is None:
            self._by_name = dispatching_modules(project)
        elsewhere = self._by_name.get(name, [])
        if not elsewhere:
            # no branch names it: a table of handlers by name (``{create_task:
            # handleCreateTask}``, ``{"send_on_slack": slack.send_message}``) the dispatch
            # looks the name up in
            if self._tables is None:
                self._tables = _handler_tables(project, self._keyed_by_tool)
            elsewhere = self._tables.get(name, [])
            if len(elsewhere) > 1:
                # ``{[LIST_EVENTS_TOOL.name]: handleListEvents}`` beside a namespace that
                # happens to hold a ``listEvents``: the table keyed by the tool's own constant
                elsewhere = [
                    module for module in elsewhere if (name, module.path) in self._keyed_by_tool
                ]
        return elsewhere[0] if len(elsewhere) == 1 else listing


def _handler_tables(
    project: ProjectIndex, keyed_by_tool: set[tuple[str, str]]
) -> dict[str, list[ModuleFacts]]:
    """The modules holding an object of handlers by tool name (``const handlers =
    {create_task: handleCreateTask}``, ``available = {"send_on_slack": slack.send_message}``),
    for each name: its value is an entry a dispatch runs (``dispatch.entry_function``).
    ``keyed_by_tool`` gets each (name, path) whose key is a tool constant's string."""
    found: dict[str, list[ModuleFacts]] = {}
    for entry in handler_entries(project):
        modules = found.setdefault(entry.name, [])
        if entry.facts not in modules:
            modules.append(entry.facts)
        if entry.key.startswith(ENUM_MEMBER):
            keyed_by_tool.add((entry.name, entry.facts.path))
    return found


def dispatching_modules(project: ProjectIndex) -> dict[str, list[ModuleFacts]]:
    """The modules whose functions dispatch on each name (``if name == "x"``, ``case "x":``)."""
    found: dict[str, list[ModuleFacts]] = {}
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for function, string, _ in facts.branches:
            if function is not None:
                held = found.setdefault(branch_name(project, string), [])
                if not held or held[-1] is not facts:
                    held.append(facts)
    return found


def _branch_targets(
    project: ProjectIndex, facts: ModuleFacts, handler: str, body: Span
) -> list[str]:
    """The project functions a dispatch branch's own statements call, in source order."""
    return list(project.targets_on_lines(handler, body.line, body.end_line, facts))


def _branches_calling(
    project: ProjectIndex, facts: ModuleFacts, handler: str
) -> dict[str, set[str]]:
    """Each project function the dispatch branches of ``handler`` call, with the tool names
    of the branches calling it."""

    def work_out() -> dict[str, set[str]]:
        calling: dict[str, set[str]] = {}
        for name, branches in branches_by_name(project, facts).items():
            for other_handler, body in branches:
                if other_handler == handler:
                    for target in _branch_targets(project, facts, handler, body):
                        calling.setdefault(target, set()).add(name)
        return calling

    return project.remembered(("branches calling", facts.path, handler), work_out)


def inline_branch(
    project: ProjectIndex, name: str, facts: ModuleFacts
) -> tuple[str, Span, list[str]] | None:
    """The ``call_tool`` branch for ``name`` when it does the work inline (its handler, its
    statements' span and the functions it calls): the branch calls no project function of
    its own, only private helpers (``_execute_query``) or helpers other branches call too.
    A branch that hands over to a function of its own is left to the dispatch target."""
    mine = list(branches_by_name(project, facts).get(name, []))
    if len(mine) > 1:
        # a router's branch hands over to a service function that dispatches on the name
        # again (``if name == "s3_create": return handle_s3(client, name, args)``): the
        # router's branch is where the tool starts
        called = {
            t for handler, body in mine for t in _branch_targets(project, facts, handler, body)
        }
        mine = [(handler, body) for handler, body in mine if handler not in called]
    if len(mine) > 1:
        # a loop that runs the tool calls (``await self._execute_tool_call(call)``) and
        # later sums up what each did, branching on the names again: the function it calls
        # to run them is where each tool runs
        runners = {handler for handler, _ in mine}
        mine = [
            (handler, body)
            for handler, body in mine
            if not runners & {target for _, target in project.call_edges(handler)}
        ]
    if len(mine) != 1:
        return None
    handler, body = mine[0]
    assert handler is not None
    if not project.calls_on_lines(handler, body.line, body.end_line):
        return None  # a branch that calls nothing does no work of its own
    targets = _branch_targets(project, facts, handler, body)
    calling = _branches_calling(project, facts, handler)
    handed = {
        t: _handed_the_arguments(project, facts, handler, body, t)
        for t in targets
        if not calling[t] - {name}  # no other tool's branch calls it too
        and not t.rsplit(".", 1)[-1].startswith("_")
    }
    own = [t for t, how in handed.items() if how is not None]
    if len(own) == 1 and (
        handed[own[0]] == ARGUMENTS or not _reads_the_arguments(project, facts, handler, body)
    ):
        # the branch hands the tool over to one function of its own
        return None
    # none, or several composed by the branch (``stats = store.stats(); stats["pairs"] =
    # vectors.count()``), or one handed nothing while the branch reads the arguments itself
    # (``pairs = vectors.all()``, then filtered by ``arguments["chat"]``): the branch is the tool
    return handler, body, targets


# How a branch hands a helper over: the tool's arguments, or nothing at all.
ARGUMENTS = "arguments"
NOTHING = "nothing"


def _reads_the_arguments(
    project: ProjectIndex, facts: ModuleFacts, handler: str, body: Span
) -> bool:
    """Whether a dispatch branch's own statements use what the handler was handed besides
    the name it dispatches on (``arguments.get("chat_name")`` under ``if name ==
    "list_pairs":``)."""
    fn = project.function(handler)
    if fn is None:
        return False
    # the names the innermost ``if`` opening the branch tests: the dispatched name
    opening = [branch for branch in fn.branches if branch.span.encloses(body)]
    tested = max(opening, key=lambda branch: branch.span[:2]).test.names if opening else []
    params = {p for p in fn.params if p not in SELF_NAMES} - {n.split(".", 1)[0] for n in tested}
    for call in project.calls_on_lines(handler, body.line, body.end_line):
        if is_guard_call(fn, call):
            continue
        used = [call.callee, *(n for v in (*call.args, *call.kwargs.values()) for n in v.names)]
        if any(name.split(".", 1)[0] in params for name in used):
            return True
    return False


def _handed_the_arguments(
    project: ProjectIndex, facts: ModuleFacts, handler: str, body: Span, target: str
) -> str | None:
    """How the branch hands ``target`` over when it hands it only the tool's arguments:
    ``ARGUMENTS`` when whole or in fields (``handle_create(arguments)``,
    ``restock(arguments["sku"], arguments["amount"])``, ``handleReadFile(parsed)`` with
    ``parsed = Schema.parse(args)``), then it is the tool's own function; ``NOTHING`` when handed nothing (``handleListProcesses()``). A helper also
    handed something else, a client (``createLabel(gmail, args.name)``), leaves the work,
    and the answer, to the branch (None)."""
    fn = project.function(handler)
    if fn is None:
        return None
    params = {p for p in fn.params if p not in SELF_NAMES}

    def from_params(name: str, before: int, depth: int = 0) -> bool:
        if name in params:
            return True
        if depth > 2:
            return False
        bound = [a for a in project.local_assignments(facts, handler, name) if a.order <= before]
        return bool(bound) and all(
            a.value.names and all(from_params(n, before, depth + 1) for n in a.value.names)
            for a in bound
        )

    for call in project.calls_on_lines(handler, body.line, body.end_line):
        if is_guard_call(fn, call):
            continue
        if project.call_target(call, fn, facts) != target:
            continue
        handed = [*call.args, *call.kwargs.values()]
        # nothing handed (``handleListProcesses()``): it does the tool's work by itself
        if all(all(from_params(name, call.order) for name in value.names) for value in handed):
            return ARGUMENTS if any(value.names for value in handed) else NOTHING
    return None


def branch_tool(
    project: ProjectIndex,
    name: str,
    facts: ModuleFacts,
    site: Location,
    options: dict[str, Value],
    branch: tuple[str, Span, list[str]],
    form: ToolForm,
) -> ToolFacts:
    """The tool an inline branch is: anchored at the branch, reaching what it calls."""
    handler, body, targets = branch
    tool = ToolFacts(
        name=name,
        framework=form.framework,
        form=form.form,
        path=facts.path,
        anchor=Location(facts.path, body),
        functions=targets,
        symbol=f"{handler}:{name}",
        site=site,
        options=dict(options),
        inline=(handler, Location(facts.path, body)),
    )
    tool.declarations += declarations_from_options(project, form.framework, options, site, facts)
    return tool
