"""The agents the project builds with a framework's agent classes (the ``registries`` of
rules/frameworks.yaml whose entries name the agent or how it runs), each with the tools it
is given: its tool list, the agents it manages, and the tools registered on it later
(``worker.tool(find_order)``, ``@worker.tool_plain``).

Running one (``await worker.run(prompt)``, ``Runner.run(agent, prompt)``) does what its
tools do; one offered to another agent's model as a tool (``managed_agents=[...]``,
``agent.as_tool(...)``, ``AgentTool(agent=...)``) is a tool doing the same. An agent with a
tool the scan cannot follow (a library's, or a list computed at run time) is not complete:
what running it does stays unknown.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Call, Chain, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.knowledge.matcher import Matcher
from agentguard.project.discovery.registries import listed_elements, named_functions
from agentguard.project.passes import Pass, PassResults
from agentguard.project.tool_facts import SELF_NAMES, DelegatedAgent, argument_at

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex
    from agentguard.project.index.call_site import CallSite

# (path, line, column) of the call building an agent
SiteKey = tuple[str, int, int]
# the functions some tools run, and whether those are all they run
Reach = tuple[tuple[str, ...], bool]
# How many names, returns and fields a reference is followed through; agents nested in
# agents, how deep.
MAX_HOPS = 8


@dataclass
class BuiltAgent:
    """One construction of a framework's agent class: where, by which registry entry, and
    under which name (its ``agent_name`` keyword, when a literal)."""

    form: ToolForm
    callee: str  # the registry callee, resolved
    call: Call
    facts: ModuleFacts
    name: str | None
    description: str

    @property
    def key(self) -> SiteKey:
        return (self.facts.path, self.call.span.line, self.call.span.column)

    @property
    def site(self) -> Location:
        return Location(self.facts.path, self.call.span)


@dataclass(frozen=True)
class Origin:
    """An expression a reference holds, where it is written."""

    value: Value
    facts: ModuleFacts
    function: str | None


class AgentTable:
    """The agents the project builds, by the place of their construction."""

    def __init__(self, project: ProjectIndex) -> None:
        self._project = project
        forms = project.catalog.tool_forms
        self._registry = forms["registry"]
        self._agent_tool = forms["agent_tool"]
        self._runner = forms["agent_runner"]
        self.by_site: dict[SiteKey, BuiltAgent] = {}
        # the agent-tool calls (``AgentTool(agent=a)``, ``a.as_tool()``): form, call, module
        self._offers: list[tuple[ToolForm, Call, ModuleFacts]] = []
        for site, facts in self._sites(self._registry, self._agent_tool):
            call = site.call
            form = self._registry(site.callee)
            if form is not None and (form.runs or form.agent_name):
                named = argument_at(call.args, call.kwargs, form.agent_name)
                described = call.kwargs.get("description")
                agent = BuiltAgent(
                    form,
                    site.callee,
                    call,
                    facts,
                    named.string() if named is not None else None,
                    (described.string() or "") if described is not None else "",
                )
                self.by_site[agent.key] = agent
            offer = self._agent_tool(site.callee)
            if offer is not None:
                self._offers.append((offer, call, facts))
        # the methods running an agent built here: asked of every unresolved method call
        self._run_methods = frozenset(
            method for agent in self.by_site.values() for method in agent.form.runs
        )
        self._receivers: dict[tuple[str, str | None, str, int], list[BuiltAgent] | None] = {}
        # what is registered on an agent later, and the agents given a tool out of sight so
        self._registered_unfollowed: set[SiteKey] = set()
        self._registered = self._registered_later()
        self._working: set[SiteKey] = set()
        # the tools of each agent, worked out; how many cycles or depths were cut so far
        self._tools: dict[SiteKey, DelegatedAgent] = {}
        self._cuts = 0

    def _sites(self, *matchers: Matcher[ToolForm]) -> Iterator[tuple[CallSite, ModuleFacts]]:
        """The calls outside tests whose callee, resolved, one of ``matchers`` knows."""
        project = self._project
        callees: frozenset[str] = frozenset().union(
            *(project.callees_matching(matcher, resolved=True) for matcher in matchers)
        )
        for site in project.source_call_sites():
            if site.callee in callees:
                yield site, site.facts

    # ------------------------------------------------------------------ what an agent runs

    def tools_of(self, agent: BuiltAgent, depth: int = 0) -> DelegatedAgent:
        """The functions of the tools ``agent`` is given, and whether that is all of them."""
        known = self._tools.get(agent.key)
        if known is not None:
            return known
        if agent.key in self._working or depth > MAX_HOPS:
            # an agent that manages itself through others, or nested past what is followed:
            # what the cut leaves out is not seen, and what is found above it is partial
            self._cuts += 1
            return DelegatedAgent(agent.site, agent.call, (), False)
        self._working.add(agent.key)
        cuts = self._cuts
        try:
            functions: list[str] = []
            complete = True
            form, call, facts = agent.form, agent.call, agent.facts
            for ref, as_agents in ((form.tools, False), (form.agents, True)):
                listed = argument_at(call.args, call.kwargs, ref) if ref is not None else None
                if listed is None:
                    continue
                elements, all_followed = listed_elements(self._project, listed, call, facts)
                complete = complete and all_followed
                for element in elements:
                    found = (
                        self._agents_functions(element, facts, call.function, call.span.line, depth)
                        if as_agents
                        else self._element_functions(element, facts, call, depth)
                    )
                    if found is None:
                        complete = False
                    else:
                        functions += found[0]
                        complete = complete and found[1]
            functions += self._registered.get(agent.key, ())
            if agent.key in self._registered_unfollowed:
                complete = False
            tools = DelegatedAgent(
                agent.site, agent.call, tuple(dict.fromkeys(functions)), complete
            )
            if self._cuts == cuts:
                # kept only when no cut was made below: a cut's answer depends on where the
                # question started
                self._tools[agent.key] = tools
            return tools
        finally:
            self._working.discard(agent.key)

    def _element_functions(
        self, element: Value, facts: ModuleFacts, call: Call, depth: int
    ) -> Reach | None:
        """The functions one item of a tool list runs: a project function (or a method of
        the calling class), what a framework's tool factory wraps, the entry methods of a
        tool class built there, or the tools of an agent offered as one. None when the scan
        cannot follow it."""
        named = named_functions(self._project, element, call, facts)
        if named:
            return named, True
        origins = self._origins(element, facts, call.function, call.span.line, 0)
        if not origins:
            return None
        functions: list[str] = []
        complete = True
        for origin in origins:
            found = self._built_functions(origin, depth)
            if found is None:
                return None
            functions += found[0]
            complete = complete and found[1]
        return tuple(functions), complete

    def _built_functions(self, origin: Origin, depth: int) -> Reach | None:
        """The functions a tool built by a call runs (``Tool(fn)``, ``AgentTool(agent=a)``,
        ``SearchTool()``), None for any other call."""
        project, value = self._project, origin.value
        if value.kind != "call" or not value.qualname:
            return None
        callee = value.qualname
        factory = project.catalog.tool_forms["factory"](callee)
        if factory is not None and factory.function is not None:
            wrapped = argument_at(value.call_args, value.call_kwargs, factory.function)
            if wrapped is None:
                return None
            named = named_functions(project, wrapped, self._written_call(origin), origin.facts)
            return (named, True) if named else None
        as_tool = self._agent_tool(callee)
        if as_tool is not None:
            return self._agents_functions_in(value, as_tool, origin, depth)
        cls = project.classes.get(callee)
        if cls is not None:
            methods = self._tool_class_methods(callee)
            if methods:
                return tuple(methods), True
        return None

    def _written_call(self, origin: Origin) -> Call:
        """The call ``origin`` holds, as its function's calls list it (its place among
        them tells which local a name it hands was bound to)."""
        value = origin.value
        calls = self._project.calls_in(origin.function) if origin.function else origin.facts.calls
        for call in calls:
            if call.span == value.span:
                return call
        written = Call(value.qualname or "", value.text, "", None, value.span or Span(0, 0, 0, 0))
        written.function = origin.function
        return written

    def _tool_class_methods(self, cls_qual: str) -> list[str]:
        """The entry methods of a tool class (``forward`` of a ``smolagents.Tool``), by the
        base-class forms of the catalogue."""
        project = self._project
        base_form = project.catalog.tool_forms["base_class"]
        for base in project.lineage(cls_qual):
            form = base_form(base)
            if form is None:
                continue
            found = [m for m in (project.find_method(cls_qual, n) for n in form.methods) if m]
            if found:
                return found
        return []

    def _agents_functions_in(
        self, value: Value, form: ToolForm, origin: Origin, depth: int
    ) -> Reach | None:
        """The tools of the agent an agent-tool call offers (``AgentTool(agent=a)``,
        ``a.as_tool(...)``)."""
        line = value.span.line if value.span else 0
        agents = self._offered_by(
            form,
            value.call_args,
            value.call_kwargs,
            value.chain,
            origin.facts,
            origin.function,
            line,
        )
        return self._functions_of(agents, depth)

    def _agents_functions(
        self, value: Value, facts: ModuleFacts, function: str | None, line: int, depth: int
    ) -> Reach | None:
        return self._functions_of(self.referenced(value, facts, function, line), depth)

    def _functions_of(self, agents: list[BuiltAgent] | None, depth: int) -> Reach | None:
        """The functions of the tools of ``agents``; None for agents the scan cannot follow."""
        if agents is None:
            return None
        functions: list[str] = []
        complete = True
        for agent in agents:
            tools = self.tools_of(agent, depth + 1)
            functions += tools.functions
            complete = complete and tools.complete
        return tuple(functions), complete

    def _registered_later(self) -> dict[SiteKey, list[str]]:
        """The functions registered on a built agent after it is built, by a method of its
        class the catalogue lists as a tool decorator (``pydantic_ai.Agent.tool``): as a
        decorator (``@worker.tool``) or called on the function (``worker.tool(fn)``)."""
        project = self._project
        methods = self._registering_methods()
        found: dict[SiteKey, list[str]] = {}
        if not methods:
            return found
        for facts in project.modules.values():
            if facts.is_test:
                continue
            # a function decorated inside another: its receiver is that function's local
            enclosing = {
                nested: fn.qualname for fn in facts.functions.values() for nested in fn.nested
            }
            for fn in facts.functions.values():
                for dec in fn.decorators:
                    written, _, method = dec.text.lstrip("@").split("(", 1)[0].rpartition(".")
                    if method in methods and written:
                        outer, line = enclosing.get(fn.qualname), fn.span.line
                        for agent in self._receiver_agents(written, facts, outer, line) or ():
                            if method in self._methods_of(agent):
                                found.setdefault(agent.key, []).append(fn.qualname)
            for call in facts.calls:
                receiver = _plain_receiver(call.chain)
                if call.method not in methods or not receiver or not call.args:
                    continue
                registered = named_functions(project, call.args[0], call, facts)
                line = call.span.line
                for agent in self._receiver_agents(receiver, facts, call.function, line) or ():
                    if call.method in self._methods_of(agent):
                        found.setdefault(agent.key, []).extend(registered)
                        if not registered:
                            # a library's function, a lambda: what it does is out of sight
                            self._registered_unfollowed.add(agent.key)
        return found

    def _registering_methods(self) -> set[str]:
        return {m for agent in self.by_site.values() for m in self._methods_of(agent)}

    def _methods_of(self, agent: BuiltAgent) -> set[str]:
        """The methods of ``agent``'s class the catalogue lists as tool decorators."""
        catalog = self._project.catalog
        framework = catalog.frameworks.get(agent.form.framework)
        if framework is None:
            return set()
        return {
            method
            for owner, _, method in (name.rpartition(".") for name in framework.decorators)
            if owner == agent.callee
        }

    # ------------------------------------------------------------------ what a reference holds

    def referenced(
        self, value: Value, facts: ModuleFacts, function: str | None, line: int
    ) -> list[BuiltAgent] | None:
        """The agents ``value`` holds, each built in the project; None when it may hold
        anything else (or the scan cannot tell)."""
        origins = self._origins(value, facts, function, line, 0)
        if not origins:
            return None
        agents: list[BuiltAgent] = []
        for origin in origins:
            span = origin.value.span
            agent = (
                self.by_site.get((origin.facts.path, span.line, span.column))
                if origin.value.kind == "call" and span is not None
                else None
            )
            if agent is None:
                return None
            agents.append(agent)
        return agents

    def _receiver_agents(
        self, receiver: str, facts: ModuleFacts, function: str | None, line: int
    ) -> list[BuiltAgent] | None:
        """The agents a receiver written as a dotted name (``worker``, ``self.agent``,
        ``team.writer``) holds."""
        head = receiver.split(".", 1)[0]
        # what it holds depends on the line only through the local it was last bound to
        bound = (
            [
                a.span.line
                for a in self._project.local_assignments(facts, function, head)
                if a.span.line <= line
            ]
            if function is not None
            else []
        )
        key = (facts.path, function, receiver, bound[-1] if bound else 0)
        if key not in self._receivers:
            self._receivers[key] = self._held_agents(receiver, head, facts, function, line)
        return self._receivers[key]

    def _held_agents(
        self, receiver: str, head: str, facts: ModuleFacts, function: str | None, line: int
    ) -> list[BuiltAgent] | None:
        if not all(part.isidentifier() for part in receiver.split(".")):
            return None
        qualname = facts.imports.get(head) or f"{facts.module}.{head}"
        if "." in receiver:
            qualname = f"{qualname}.{receiver.split('.', 1)[1]}"
        kind = "attr" if "." in receiver else "name"
        return self.referenced(
            Value(kind=kind, text=receiver, qualname=qualname), facts, function, line
        )

    def _origins(
        self, value: Value, facts: ModuleFacts, function: str | None, line: int, hops: int
    ) -> list[Origin] | None:
        """The calls ``value`` comes from: through locals (the last binding before
        ``line``), module variables (imported too), ``self`` attributes set in the class's
        methods, the values a project function returns, and the fields of a project class
        built with keywords (``Team(writer=build_writer())``, then ``team.writer``)."""
        project = self._project
        if hops > MAX_HOPS:
            return None
        if value.kind == "call":
            target = project.project_function(value.qualname, facts)
            entry = project.functions.get(target) if target else None
            if entry is None:
                return [Origin(value, facts, function)]
            fn, fn_facts = entry
            found: list[Origin] = []
            for returned in fn.returns:
                line_of = returned.span.line if returned.span else fn.span.end_line
                more = self._origins(returned, fn_facts, fn.qualname, line_of, hops + 1)
                if more is None:
                    return None
                found += more
            return found or None
        if value.kind == "name":
            return self._name_origins(value, facts, function, line, hops)
        if value.kind == "attr":
            head, _, rest = value.text.partition(".")
            if "." in rest or not rest.isidentifier():
                return None
            if head in SELF_NAMES and function is not None:
                return self._self_origins(rest, facts, function, hops)
            held = self._name_origins(
                Value(
                    kind="name",
                    text=head,
                    qualname=facts.imports.get(head) or f"{facts.module}.{head}",
                ),
                facts,
                function,
                line,
                hops,
            )
            if held is None:
                return None
            found = []
            for origin in held:
                field_value = (
                    origin.value.call_kwargs.get(rest) if origin.value.kind == "call" else None
                )
                if field_value is None or origin.value.qualname not in project.classes:
                    return None
                line_of = origin.value.span.line if origin.value.span else line
                more = self._origins(field_value, origin.facts, origin.function, line_of, hops + 1)
                if more is None:
                    return None
                found += more
            return found
        return None

    def _name_origins(
        self, value: Value, facts: ModuleFacts, function: str | None, line: int, hops: int
    ) -> list[Origin] | None:
        project = self._project
        if function is not None:
            bound = [
                a
                for a in project.local_assignments(facts, function, value.text)
                if a.span.line <= line
            ]
            if bound:
                last = bound[-1]
                return self._origins(last.value, facts, function, last.span.line, hops + 1)
            fn = project.function(function)
            if fn is not None and value.text in fn.params:
                return None
        # a name's own qualname may be the type it holds: the variable is looked up by name
        qualname = facts.imports.get(value.text) or f"{facts.module}.{value.text}"
        held = project.module_variable_in(qualname)
        if held is None:
            return None
        module_value, path = held
        module_facts = project.modules.get(path)
        if module_facts is None:
            return None
        line_of = module_value.span.line if module_value.span else 0
        return self._origins(module_value, module_facts, None, line_of, hops + 1)

    def _self_origins(
        self, attr: str, facts: ModuleFacts, function: str, hops: int
    ) -> list[Origin] | None:
        project = self._project
        fn = project.function(function)
        entry = project.classes.get(fn.class_name or "") if fn is not None else None
        if entry is None:
            return None
        cls, cls_facts = entry
        found: list[Origin] = []
        for method in cls.methods:
            for assignment in project.local_assignments(cls_facts, method, f"self.{attr}"):
                line_of = assignment.span.line
                more = self._origins(assignment.value, cls_facts, method, line_of, hops + 1)
                if more is None:
                    return None
                found += more
        return found or None

    def _offered_by(
        self,
        form: ToolForm,
        args: list[Value],
        kwargs: dict[str, Value],
        chain: Chain | None,
        facts: ModuleFacts,
        function: str | None,
        line: int,
    ) -> list[BuiltAgent] | None:
        """The agents an agent-tool call offers: the one it is handed (``AgentTool(agent=a)``)
        or the one it is called on (``a.as_tool(...)``)."""
        if form.agents is not None:
            handed = argument_at(args, kwargs, form.agents)
            return self.referenced(handed, facts, function, line) if handed else None
        receiver = _plain_receiver(chain)
        return self._receiver_agents(receiver, facts, function, line) if receiver else None

    # ------------------------------------------------------------------ runs

    def run_by(self, call: Call, callee: str, facts: ModuleFacts) -> list[BuiltAgent] | None:
        """The agents ``call`` runs: one of the ``runs`` methods of the agent its receiver
        holds (``await worker.run(prompt)``), or an agent handed to a runner
        (``Runner.run(agent, prompt)``). None for any other call, or one whose agent the
        scan cannot follow."""
        if not self.by_site:
            return None
        runner = self._runner(callee)
        if runner is not None:
            handed = argument_at(call.args, call.kwargs, runner.agents)
            if handed is None:
                return None
            return self.referenced(handed, facts, call.function, call.span.line)
        receiver = _plain_receiver(call.chain)
        if not receiver or call.method not in self._run_methods:
            return None
        agents = self._receiver_agents(receiver, facts, call.function, call.span.line)
        if agents is None or any(call.method not in agent.form.runs for agent in agents):
            return None
        return agents

    def offered(self) -> Iterator[tuple[BuiltAgent, ToolForm, Call, ModuleFacts, str | None]]:
        """Each agent offered to another agent's model as a tool: the agent, the form
        offering it, the call that does, and the tool's name when that call gives one."""
        for agent in list(self.by_site.values()):
            if agent.form.agents is None:
                continue
            listed = argument_at(agent.call.args, agent.call.kwargs, agent.form.agents)
            for element in (
                listed_elements(self._project, listed, agent.call, agent.facts).elements
                if listed
                else ()
            ):
                line = agent.call.span.line
                for managed in (
                    self.referenced(element, agent.facts, agent.call.function, line) or ()
                ):
                    yield managed, agent.form, agent.call, agent.facts, None
        for form, call, facts in self._offers:
            agents = self._offered_by(
                form, call.args, call.kwargs, call.chain, facts, call.function, call.span.line
            )
            named = argument_at(call.args, call.kwargs, form.name) if form.name else None
            for agent in agents or ():
                yield agent, form, call, facts, named.string() if named else None


def _plain_receiver(chain: Chain | None) -> str | None:
    """The dotted name the method a chain calls is called on, written as a call's callee
    (``team.writer.run``) or as the call's value (``team.writer.run(task)``): ``team.writer``;
    None when it is no plain name or attribute chain (``receivers.written_receiver`` gives
    any receiver's text)."""
    if chain is None or not chain.root:
        return None
    steps = chain.steps[:-1] if chain.ends_in_call else chain.steps
    if not steps or any(kind != "attr" for kind, _ in steps):
        return None
    return ".".join([chain.root, *(str(name) for _, name in steps[:-1])])


@dataclass(frozen=True)
class BuiltAgents:
    """The agents the project builds, with the tools each is given."""

    table: AgentTable


class AgentConstruction(Pass[BuiltAgents]):
    produces = "the agents the project builds, each with the tools it is given"

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> BuiltAgents:
        return BuiltAgents(AgentTable(index))
