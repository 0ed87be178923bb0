"""Effect inference: effect summaries propagated through the project's call graph to a
fixpoint, for the functions the build asks about (``EffectSummaries``), and the pass that gives each
tool its effects. What one sink call does is judged in ``sink_calls`` (catalogue sinks),
``guessed_sinks`` (write verbs on client-like receivers), ``sql_sinks`` and ``sink_keys``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence, EvidenceStep, Location, Span, StepKind
from agentguard.facts.module_facts import Call, Function, ModuleFacts
from agentguard.project import open_world
from agentguard.project.branch_guards import dispatched_elsewhere, guarded, map_guard_through_call
from agentguard.project.built_agents import AgentConstruction, AgentTable
from agentguard.project.create_guards import CHECK_THEN_CREATE, check_then_create
from agentguard.project.module_state import module_store_writes
from agentguard.project.passed_calls import parameter_call_targets, passed_effects
from agentguard.project.passes import Pass, PassResults
from agentguard.project.read_posts import (
    is_statement,
    read_by_name,
)
from agentguard.project.rpc_dispatch import RPC_DEFERRED
from agentguard.project.setup_calls import (
    cached_singleton,
    off_by_default_orders,
    setup_orders,
)
from agentguard.project.sink_calls import (
    DEFERRED,
    classify_sink,
    find_sink,
    map_method_through_call,
    map_statement_through_call,
    map_url_through_call,
)
from agentguard.project.sink_keys import map_key_through_call
from agentguard.project.state_writes import context_writes, object_state_writes
from agentguard.project.tool_discovery import ToolDiscovery
from agentguard.project.tool_facts import (
    SELF_NAMES,
    DelegatedAgent,
    Effect,
    ToolFacts,
)

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


# A summary entry: where the sink call is (path, line, column).
SiteKey = tuple[str, int, int]
# Rounds of propagation at most: a cycle of ever-shorter chains ends here.
MAX_ROUNDS = 50


def _site_key(effect: Effect) -> SiteKey:
    return (effect.site.path, effect.site.span.line, effect.site.span.column)


class EffectSummaries:
    """Each function's effects, its own and those reached through the project functions it
    calls: worked out on demand, for the functions asked about and what they reach.

    Summaries propagate in rounds over the functions in sorted order, each visit seeing what
    earlier visits found, a function revisited only when a callee's summary changed. Asked
    for every function at once this is the fixpoint over the whole project; asked for some,
    only the functions they reach (a set closed under calls) are worked out. A summary
    depends on its callees' alone, so the visits to that set are those of the whole run in
    the same order, and its summaries are the whole run's. Its rounds are the whole run's
    too (a visit in round k of one is in round k of the other), so the cap of
    ``MAX_ROUNDS`` stops both at the same visit.

    A later question reaches new functions whose callees were worked out earlier. Seeing
    those callees' final summaries would not do: between two evidence chains of the same
    length the first found is kept, and in the whole run a caller may first have seen a
    callee's summary before its shorter chains arrived. So each function keeps the summary
    it had before each change, with the round of the change, and the new functions replay
    their part of the whole run: they read a callee as it stood at their visit, and are
    woken in the round the whole run would have woken them. Whatever is asked, in whatever
    order, every summary is the one the whole run would give.

    Only passes ask: the build seals the summaries when its last pass has run, and what a
    rule asks later (it should not) is worked out the same way and noted in
    ``asked_after_build``, which the tests keep empty.
    """

    def __init__(self, project: ProjectIndex, agents: AgentTable) -> None:
        # The index, not the built model that holds these summaries: no cycle to outlive
        # a dropped scan result.
        self._project = project
        self._agents = agents
        self._user_sinks = project.catalog.user_sinks
        # For the functions worked out (a set closed under calls), final:
        self._summaries: dict[str, dict[SiteKey, Effect]] = {}
        self._edges: dict[str, list[tuple[Call, str]]] = {}
        # qualname -> (round, the summary before that round's change), oldest first
        self._history: dict[str, list[tuple[int, dict[SiteKey, Effect]]]] = {}
        self._sorted: dict[str, list[Effect]] = {}
        self._sealed = False
        self.asked_after_build: list[str] = []

    def seal(self) -> None:
        """The build is over: from now on a rule reads summaries and asks for no new one."""
        self._sealed = True

    def of(self, qualname: str) -> list[Effect]:
        """The effects ``qualname`` has or reaches, by position in the source."""
        found = self._sorted.get(qualname)
        if found is None:
            if qualname not in self._project.functions:
                return []
            self.cover([qualname])
            found = self._sorted[qualname]
        return found

    def cover(self, qualnames: Iterable[str]) -> None:
        """Work out the summaries of ``qualnames`` and of every function they reach."""
        new = self._reach(qualnames)
        if new:
            if self._sealed:
                self.asked_after_build.extend(sorted(new))
            self._propagate(sorted(new))
            for qualname in new:
                self._sorted[qualname] = sorted(
                    self._summaries[qualname].values(), key=lambda e: (e.site.path, e.site.span)
                )

    def _reach(self, qualnames: Iterable[str]) -> set[str]:
        """The functions reached from ``qualnames`` not worked out yet, their own effects and
        call edges found."""
        functions = self._project.functions
        new: set[str] = set()
        pending = [q for q in qualnames if q in functions and q not in self._summaries]
        while pending:
            qualname = pending.pop()
            if qualname in self._summaries:
                continue
            effects, edges = self._direct(qualname)
            self._summaries[qualname] = {_site_key(e): e for e in effects}
            self._edges[qualname] = edges
            new.add(qualname)
            pending.extend(target for _, target in edges if target not in self._summaries)
        return new

    def _direct(self, qualname: str) -> tuple[list[Effect], list[tuple[Call, str]]]:
        """The sink calls in ``qualname``, and its calls of other project functions."""
        project = self._project
        user_sinks = self._user_sinks
        fn, facts = project.functions[qualname]
        effects: list[Effect] = []
        edges: list[tuple[Call, str]] = []
        # set-up (a client made on first use, a cached singleton): followed, not an effect
        setup = setup_orders(project, fn, facts)
        # an option the operator turns on (``if self.save_file:``): not the default effect
        setup += off_by_default_orders(project, fn, facts)
        setup_edges: list[tuple[Call, str]] = []
        calls = project.calls_in(qualname)
        shipped = _ships_handed_function(fn, calls)
        for written in calls:
            if shipped and written.order in shipped:
                continue  # the handed function, run elsewhere: its callers bring its effect
            site = project.followed_site(written, fn, facts)
            call, callee = site.call, site.callee
            if any(start <= written.order < end for start, end in setup):
                found = [(site.edge_call, t) for t in site.targets if t != qualname]
                edges.extend(found)
                setup_edges.extend(found)
                continue
            if user_sinks and find_sink(user_sinks, call, callee) is not None:
                # the user declared this call a sink: judge it here, do not look inside
                effect = classify_sink(project, call, callee, fn, facts)
                if effect is not None:
                    effects.append(effect)
                continue
            targets = site.targets
            ran = self._agent_run(call, callee, facts) if not targets else None
            if ran is not None:
                # ``await worker.run(prompt)``: the agent's tools run, as its model picks them
                bare = replace(call, args=[], kwargs={})
                edges.extend((bare, target) for target in ran if target != qualname)
                continue
            if targets and targets != (qualname,):
                edges.extend((site.edge_call, target) for target in targets if target != qualname)
                hidden = _interface_effect(project, call, targets, fn, facts)
                if hidden is not None:
                    effects.append(guarded(hidden, fn, written.order))
                # what it hands a helper that calls it (``_call(client.remove, key)``)
                effects.extend(
                    guarded(passed, fn, written.order)
                    for passed in passed_effects(project, site, fn, facts)
                )
                continue
            if not targets and written.callee in fn.params and written.callee not in SELF_NAMES:
                # ``apiPost(path, body)`` on a parameter: what the callers hand it runs here
                handed, passed = parameter_call_targets(project, written, fn, facts)
                edges.extend((call, target) for target in handed)
                effects.extend(guarded(effect, fn, written.order) for effect in passed)
                continue
            effect = classify_sink(project, call, callee, fn, facts)
            if effect is not None:
                effects.append(guarded(effect, fn, written.order))
        # ``TASKS[task_id] = task``: an entry of a container the module keeps, no call
        effects.extend(module_store_writes(project, fn, facts, setup))
        # a project decorator whose wrapper runs around the function: its effects too
        edges.extend(project.decorator_edges(qualname))
        if not user_sinks:
            project.note_call_edges(qualname, edges)  # every call was followed
        return effects, [
            edge
            for edge in edges
            if not cached_singleton(project, edge[1])
            and not any(edge is setup_edge for setup_edge in setup_edges)
        ]

    def _agent_run(self, call: Call, callee: str, facts: ModuleFacts) -> tuple[str, ...] | None:
        """The tool functions of the agents ``call`` runs when it runs agents the project
        builds, every tool of which the scan follows (none for an agent with no tool: a
        model's answer only). None for any other call: one whose agent gives a tool out of
        sight stays unjudged."""
        agents = self._agents.run_by(call, callee, facts)
        if agents is None:
            return None
        functions: list[str] = []
        for agent in agents:
            tools = self._agents.tools_of(agent)
            if not tools.complete:
                return None
            functions += tools.functions
        return tuple(dict.fromkeys(functions))

    def _propagate(self, order: list[str]) -> None:
        """The rounds of the whole run, for the functions in ``order`` (new, sorted); the
        functions they call outside it were worked out before."""
        history = self._history
        members = set(order)
        callers: dict[str, set[str]] = {}
        # round -> the functions a change of an earlier-worked callee wakes in that round:
        # the same round when the callee is visited first, the next one otherwise
        woken: dict[int, set[str]] = {}
        for qualname in order:
            for _, target in self._edges[qualname]:
                if target in members:
                    callers.setdefault(target, set()).add(qualname)
                else:
                    for changed, _ in history.get(target, ()):
                        wakes = changed if target < qualname else changed + 1
                        woken.setdefault(wakes, set()).add(qualname)
        last_woken = max(woken, default=0)
        dirty = set(order)
        rounds = 0
        while (dirty or rounds < last_woken) and rounds < MAX_ROUNDS:
            rounds += 1
            dirty.update(woken.get(rounds, ()))
            for qualname in order:
                if qualname not in dirty:
                    continue
                dirty.discard(qualname)
                if self._visit(qualname, rounds, members):
                    dirty.update(callers.get(qualname, ()))

    def _seen_by(
        self, target: str, qualname: str, rounds: int, members: set[str]
    ) -> dict[SiteKey, Effect]:
        """``target``'s summary as the whole run had it when it visited ``qualname``."""
        if target not in members:
            for changed, before in self._history.get(target, ()):
                if changed > rounds or (changed == rounds and target > qualname):
                    return before
        return self._summaries[target]

    def _visit(self, qualname: str, rounds: int, members: set[str]) -> bool:
        """One visit of ``qualname`` in round ``rounds``: whether its summary changed."""
        project = self._project
        fn, facts = project.functions[qualname]
        mine = self._summaries[qualname]
        before: dict[SiteKey, Effect] | None = None
        for call, target in self._edges[qualname]:
            reached = self._seen_by(target, qualname, rounds, members)
            if not reached:
                continue  # most callees have no effect to pass on
            target_fn = project.functions[target][0]
            for key, effect in list(reached.items()):
                if key in mine and _rank(mine[key]) <= (_guarded(effect), len(effect.chain) + 1):
                    continue
                candidate = self._through(effect, call, fn, facts, target_fn)
                if candidate is None:
                    continue  # this caller's URL reads, a local cache or token refreshed, logs
                if key in mine and _rank(mine[key]) <= _rank(candidate):
                    continue  # a path with no guard (or a shorter one) was found first
                if before is None:
                    before = dict(mine)
                mine[key] = candidate
        if before is None:
            return False
        self._history.setdefault(qualname, []).append((rounds, before))
        return True

    def _through(
        self, effect: Effect, call: Call, fn: Function, facts: ModuleFacts, target_fn: Function
    ) -> Effect | None:
        """``effect`` of ``target_fn`` as ``fn`` reaches it by ``call``: its HTTP method, URL,
        statement, guard and key as this call hands them; None when at this call it is no
        effect (a caller's URL that reads, a local cache or token refreshed, logs)."""
        project = self._project
        step = EvidenceStep(
            StepKind.CALL,
            Location(facts.path, call.span),
            caller=_shown(fn),
            callee=_shown(target_fn, fn),
        )
        mapped = map_method_through_call(project, effect, target_fn, call, fn, facts)
        if mapped is not None and mapped.method_param is None:
            mapped = map_url_through_call(project, mapped, target_fn, call, fn, facts)
        if mapped is not None:
            mapped = map_statement_through_call(project, mapped, target_fn, call, fn, facts)
        if mapped is not None:
            mapped = map_guard_through_call(project, mapped, target_fn, call, fn)
        if (
            mapped is None
            or open_world.is_plumbing(project, mapped, target_fn)
            or open_world.delivers_telemetry(project, mapped, target_fn)
        ):
            return None
        mapped_key = map_key_through_call(project, effect.key, target_fn, call, fn, facts)
        if mapped_key is None and mapped.non_idempotent:
            mapped_key = check_then_create(project, call, fn, facts)
        return guarded(replace(mapped, chain=(step, *mapped.chain), key=mapped_key), fn, call.order)

    def reached_by_calls_in(self, qualname: str, span: Span) -> list[Effect]:
        """What ``qualname``'s calls inside ``span`` reach, each judged at its own call: the
        summary keeps one effect a sink, the first found, so a branch of a dispatch whose
        call reaches the same helper as an earlier branch (``apiPost(path, body)`` in every
        ``case``) would otherwise see that branch's request, not its own."""
        self.cover([qualname])
        project = self._project
        fn, facts = project.functions[qualname]
        edges = self._edges.get(qualname, [])
        reached = project.on_lines(("edges", qualname), edges, span.line, span.end_line, _edge_line)
        for call in project.calls_on_lines(qualname, span.line, span.end_line):
            if call.callee in fn.params and call.callee not in SELF_NAMES:
                # ``post("/refunds", body)`` on a parameter the resolved callers fill
                # (``dispatch(name, args, _post)``): what they hand runs at this call
                for value, site, site_facts in project.handed_by_callers(fn, call.callee):
                    reached.extend(
                        (call, target)
                        for target in project.handed_functions(value, site, site_facts)
                    )
        found: list[Effect] = []
        for call, target in reached:
            target_fn = project.functions[target][0]
            for effect in self.of(target):
                candidate = self._through(effect, call, fn, facts, target_fn)
                if candidate is not None:
                    found.append(candidate)
        return found


def _edge_line(edge: tuple[Call, str]) -> int:
    return edge[0].span.line


def _ships_handed_function(fn: Function, calls: list[Call]) -> set[int]:
    """The orders of the calls of ``fn`` that send a function it is handed, by name, to run
    elsewhere (``rfc.call(url, function_name=func.__name__, args=args)``) when ``fn`` also
    calls that function itself (``return func(*args)`` in the other branch): either way what
    runs is the handed function, whose effect each caller's hand-over brings (a call edge to
    it, or its judgement as a call). The transport is no effect of its own."""
    called = {call.callee for call in calls if call.callee in fn.params}
    if not called:
        return set()
    names = {f"{param}.__name__" for param in called}
    return {
        call.order
        for call in calls
        if any(value.text in names for value in (*call.args, *call.kwargs.values()))
    }


def _interface_effect(
    project: ProjectIndex,
    call: Call,
    targets: tuple[str, ...],
    fn: Function,
    facts: ModuleFacts,
) -> Effect | None:
    """A call that only reaches interface methods (abstract, or a ``Protocol``'s), as a
    function handed to a runner (``asyncio.to_thread(self._runner.run_code, code)``):
    what implements them runs, out of sight. Judged as a call of the method itself is,
    by its name: a read verb reads, anything else is unknown."""
    if not all(project.is_interface_method(target) for target in targets):
        return None
    target = targets[0]
    method = target.rsplit(".", 1)[-1]
    reference = Call(target, target, method, None, call.span)
    reference.function = call.function
    reference.order = call.order
    return open_world.judge(project, reference, target, fn, facts, lambda sink: None)


def _guarded(effect: Effect) -> int:
    """1 when only a check-then-create keeps the write from repeating (``create_guards``)."""
    return int(effect.key is not None and effect.key.origin == CHECK_THEN_CREATE)


def _rank(effect: Effect) -> tuple[int, int]:
    """Which of two paths to one sink a summary keeps (the lower): a path that reaches the
    write unguarded before one through a check-then-create, then the shorter chain."""
    return (_guarded(effect), len(effect.chain))


def _shown(fn: Function, caller: Function | None = None) -> str:
    """A function as an evidence step names it: a method with its class (``create_order
    calls OrdersClient.create_order``, not ``create_order calls create_order``), except a
    method of the caller's own class (``OrdersClient.place calls _post``)."""
    if fn.class_name is None or (caller is not None and caller.class_name == fn.class_name):
        return fn.name
    return f"{fn.class_name.rsplit('.', 1)[-1]}.{fn.name}"


@dataclass(frozen=True)
class ToolEffects:
    """Effect inference's result: the summaries (worked out for the tools' functions and
    what they reach; for any other function when a pass of the build first asks) and the
    tools found, each with its effects."""

    summaries: EffectSummaries
    tools: tuple[ToolFacts, ...]


class EffectInference(Pass[ToolEffects]):
    needs = (ToolDiscovery, AgentConstruction)
    produces = "each tool with its effects, and the effect summaries of the call graph"

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> ToolEffects:
        return infer_effects(index, results[ToolDiscovery].tools, results[AgentConstruction].table)


def infer_effects(
    project: ProjectIndex, tools: tuple[ToolFacts, ...], agents: AgentTable
) -> ToolEffects:
    """The effect-inference pass: effect summaries for the project, worked out now for the
    functions of ``tools`` (and what they reach), later for any other function a pass asks
    about; each tool again with its effects. An agent offered as a tool does what the
    tools it is given do, as each is judged for itself."""
    summaries = EffectSummaries(project, agents)
    summaries.cover(
        qualname
        for tool in tools
        for qualname in (*_reached_from(tool), *(tool.delegate.functions if tool.delegate else ()))
    )
    # the tools of their own code first: an agent offered as a tool does what they do
    judged = [
        replace(tool, effects=_tool_effects(project, tool, summaries))
        if tool.delegate is None
        else tool
        for tool in tools
    ]
    by_function: dict[str, ToolFacts] = {}
    for tool in judged:
        if tool.delegate is None:
            for qualname in tool.functions:
                by_function.setdefault(qualname, tool)
    for position, tool in enumerate(judged):
        if tool.delegate is not None:
            effects = _delegated_effects(project, tool, tool.delegate, by_function, summaries)
            judged[position] = replace(tool, effects=effects)
    return ToolEffects(summaries, tuple(judged))


def _delegated_effects(
    project: ProjectIndex,
    tool: ToolFacts,
    delegate: DelegatedAgent,
    by_function: dict[str, ToolFacts],
    summaries: EffectSummaries,
) -> list[Effect]:
    """What the agent ``tool`` offers does: each of its tools' effects, as judged for that
    tool (a function no tool found runs is judged as a tool of its own would be); unknown
    when a tool it is given is out of the scan's sight."""
    gathered: dict[SiteKey, Effect] = {}
    for qualname in delegate.functions:
        own = by_function.get(qualname)
        effects = (
            own.effects
            if own is not None
            else _tool_effects(project, _given_function(tool, qualname), summaries)
        )
        for effect in effects:
            step = EvidenceStep(
                StepKind.CALL,
                delegate.site,
                caller=tool.name,
                callee=own.name if own is not None else qualname.rsplit(".", 1)[-1],
            )
            gathered.setdefault(_site_key(effect), replace(effect, chain=(step, *effect.chain)))
    found = list(gathered.values())
    if not delegate.complete:
        found.append(
            Effect.judged(
                delegate.call,
                delegate.call.function or "",
                delegate.site.path,
                kind=open_world.UNKNOWN,
                idempotent=None,
                remote=False,
                detail="an agent given tools the scan cannot follow",
                confidence=Confidence.LOW,
            )
        )
    return found


def _given_function(agent_tool: ToolFacts, qualname: str) -> ToolFacts:
    """A function an agent is given, as the tool its model sees: named after it."""
    return replace(
        agent_tool,
        name=qualname.rsplit(".", 1)[-1],
        functions=[qualname],
        inline=None,
        delegate=None,
        description="",
    )


def _tool_effects(
    project: ProjectIndex, tool: ToolFacts, summaries: EffectSummaries
) -> list[Effect]:
    """The effects of a tool of its own functions (or the dispatch branch it is)."""
    seen: set[SiteKey] = set()
    gathered: list[Effect] = []
    for qualname in _reached_from(tool):
        for effect in _own_effects(project, tool, qualname, summaries):
            key = _site_key(effect)
            if read_by_name(project.catalog, effect, tool.name, tool.description):
                if not is_statement(effect):
                    continue  # a POST the request does not judge, in a tool named to read
                # SQL or GraphQL text no reader of the source can know: named to read is
                # no evidence
                effect = replace(effect, kind=open_world.UNKNOWN)
            if effect.kind == DEFERRED:
                chosen = _chosen_by_the_model(project, tool, qualname, effect)
                if chosen is None:
                    continue  # no caller chose the HTTP method
                effect = chosen
            if effect.kind == RPC_DEFERRED:
                # the model chooses the remote operation: a generic executor, unjudged
                effect = replace(effect, kind=open_world.UNKNOWN, method_param=None)
            if key not in seen:
                seen.add(key)
                gathered.append(effect)
    if not any(effect.writes for effect in gathered):
        # a tool named for a change that makes it in its run context (``update_seat``)
        gathered.extend(context_writes(project, tool))
    if not any(effect.writes for effect in gathered):
        # ``self.tasks[task_id] = task`` in a method tool: state every later call sees
        gathered.extend(object_state_writes(project, tool))
    return gathered


def _chosen_by_the_model(
    project: ProjectIndex, tool: ToolFacts, qualname: str, effect: Effect
) -> Effect | None:
    """An HTTP call whose method is a parameter of the tool's own function: the model
    chooses it (a generic HTTP executor), so it may write, its idempotency unknown. None
    when no parameter of the tool decides it."""
    param = (effect.method_param or "").partition(".")[0]
    if qualname not in tool.functions or param not in project.functions[qualname][0].params:
        return None
    step = EvidenceStep(
        StepKind.REQUEST, effect.site, detail="with the HTTP method the model chooses"
    )
    return replace(
        effect,
        kind="network_write",
        idempotent=None,
        method_param=None,
        chain=(*effect.chain, step),
    )


def _for_this_name(
    project: ProjectIndex, tool: ToolFacts, qualname: str, effects: list[Effect]
) -> list[Effect]:
    """``effects`` of a function a dispatch branch calls, as that branch calls it: a service
    function dispatching on the name it is handed again (``handle_s3(client, name, args)``)
    does for this tool only what its branch for this tool's name does."""
    assert tool.inline is not None
    handler, body = tool.inline
    entry = project.functions.get(handler)
    callee = project.functions.get(qualname)
    if entry is None or callee is None or not any(effect.guard for effect in effects):
        return effects
    fn, facts = entry
    calls = [
        call
        for call in project.calls_in(handler)
        if body.span.line <= call.span.line <= body.span.end_line
        and project.call_target(call, fn, facts) == qualname
    ]
    if len(calls) != 1:
        return effects
    kept: list[Effect] = []
    for effect in effects:
        mapped = map_guard_through_call(project, effect, callee[0], calls[0], fn)
        if mapped is not None and not dispatched_elsewhere(project, mapped, handler, tool.name):
            kept.append(effect)
    return kept


def _reached_from(tool: ToolFacts) -> list[str]:
    """The functions whose effects are the tool's: its own, then the dispatch handler a
    branch tool is part of (``if name == "send": await channel.send(...)`` in ``call_tool``)."""
    if tool.inline is None:
        return tool.functions
    return [*tool.functions, tool.inline[0]]


def _own_effects(
    project: ProjectIndex, tool: ToolFacts, qualname: str, summaries: EffectSummaries
) -> list[Effect]:
    """The effects of ``qualname`` that belong to the tool: all of them for a function of
    its own; for the handler a branch tool is part of, those the branch's own statements
    make or reach (the first step of the chain is inside the branch), each call of the
    branch judged at that call."""
    effects = summaries.of(qualname)
    if tool.inline is None:
        return effects
    if qualname != tool.inline[0] or qualname in tool.functions:
        return _for_this_name(project, tool, qualname, effects)
    body = tool.inline[1]
    starts = (effect.chain[0].location if effect.chain else None for effect in effects)
    own = [
        effect
        for effect, start in zip(effects, starts, strict=True)
        if start is not None
        and start.path == body.path
        and body.span.line <= start.span.line <= body.span.end_line
        # ``handle_s3(client, name, args)`` shared by the router's branches: only what it
        # does for this tool's name
        and not dispatched_elsewhere(project, effect, qualname, tool.name)
    ]
    if body.path != project.functions[qualname][1].path:
        return own
    # a sink the summary holds as an earlier branch reaches it: this branch's call, judged
    reached = [
        effect
        for effect in summaries.reached_by_calls_in(qualname, body.span)
        if not dispatched_elsewhere(project, effect, qualname, tool.name)
    ]
    return [*own, *reached]
