"""Q4 judgement: for AG401, a timeout caught around a counted write (in a tool, an executor or
a retry) that is answered as a plain failure or retried, not as an unknown outcome; for AG402,
framework settings that retry a write after a timeout (tool ``timeout=`` options, LangGraph
retry policies on writing nodes, MCP client retries). ``SettingUse`` is shared with AG603."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from agentguard.checks.judgement import Judgement
from agentguard.checks.retries.shared import retried_effects
from agentguard.checks.timeouts.chains import (
    POLL,
    TIMEOUT,
    Caught,
    Frame,
    frames_of,
    handler_outcome,
    is_off,
    judge_chain,
    says_outcome_unknown,
)
from agentguard.checks.timeouts.polling import Poll, polling_deadline
from agentguard.diagnostics import Confidence, Location
from agentguard.facts.module_facts import (
    Call,
    Function,
    Handler,
    ModuleFacts,
    TryBlock,
    Value,
)
from agentguard.knowledge.checklist import Knowledge, Setting
from agentguard.project.counted_writes import counted_writes, counts_as_write
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect, ToolFacts


@dataclass
class TimeoutVerdict:
    function: Function
    facts: ModuleFacts
    handler: Handler
    effects: list[Effect]
    outcome: str  # plain | retry
    detail: str
    tool: ToolFacts | None = None
    caught: list[str] = field(default_factory=list)
    dispatched: list[ToolFacts] = field(default_factory=list)  # for executors
    # Where the finding goes: the handler in the tool, or the tool's own call into the chain
    # when the handler sits in a helper or a context manager (None: the handler).
    location: Location | None = None
    how: str = TIMEOUT  # timeout | transport | catch-all: how the handler catches it
    caught_text: str = ""  # the classes caught, for a message
    removable: bool = True  # the AG101 fix may remove the handler (a timeout class, in the tool)
    handler_location: Location | None = None


def try_block(fn: Function, handler: Handler) -> TryBlock | None:
    return next((t for t in fn.tries if t.try_id == handler.try_id), None)


def _timeout_verdicts(project: ProjectModel) -> list[TimeoutVerdict]:
    know = project.catalog.checklist
    result: list[TimeoutVerdict] = []
    reached: set[str] = set()
    seen: set[tuple[object, ...]] = set()
    for tool in project.tools:
        if tool.schema_only:
            continue
        # a tool declared read-only or idempotent repeats nothing: the helpers it reaches
        # are judged through it (so not again on their own), and nothing is reported
        harmless = _declared_harmless(tool)
        for effect in _writes(project, tool):
            if effect.kind == "exec" and not effect.remote:
                # a process of this machine: what it did is there to look at when its
                # deadline passes (and a command still running is reported as running)
                continue
            frames = frames_of(project, tool.functions, effect)
            if frames is None:
                continue
            reached.update(f.qualname for f in frames)
            if harmless:
                continue
            found = judge_chain(project, know, frames)
            if found is None:
                poll = polling_deadline(project, know, frames)
                if poll is not None and ("poll", tool.name) not in seen:
                    seen.add(("poll", tool.name))
                    result.append(_poll_verdict(frames, poll, effect, tool))
                continue
            key = (tool.name, found.guard.facts.path, found.handler.span)
            if key not in seen:
                seen.add(key)
                result.append(_verdict(frames, found, effect, tool))
    for qualname, (fn, facts) in project.sorted_functions():
        if facts.is_test or qualname in reached or not _may_catch_timeouts(know, fn):
            continue
        owner = project.tool_for_function(qualname)
        name = owner.name if owner else fn.name
        for effect in project.effects_of(qualname):
            if not counts_as_write(
                effect, name, project.catalog, owner.description if owner else ""
            ):
                continue
            frames = frames_of(project, [qualname], effect)
            found = judge_chain(project, know, frames) if frames else None
            if frames is None or found is None or found.depth or found.guard.context_manager:
                continue  # a helper's handler is reported where a tool reaches it
            if found.how != TIMEOUT:
                continue  # outside any tool, only a handler naming a timeout is evidence enough
            key = ("", facts.path, found.handler.span)
            if key in seen:
                continue
            seen.add(key)
            result.append(
                _verdict(frames, found, effect, owner or _tool_with_effect(project, effect))
            )
    spans = {(v.facts.path, v.handler.span) for v in result}
    result += [
        v for v in _executor_timeouts(project) if (v.facts.path, v.handler.span) not in spans
    ]
    result += _timeout_retries(project)
    return result


def _writes(project: ProjectModel, tool: ToolFacts) -> list[Effect]:
    """The tool's counted writes; for a tool that declares a non-idempotent write when
    inference counts none and judges none repeatable, the calls nothing could judge and the
    guessed writes too weak to count (its write is among them), at medium confidence: the
    declaration is the evidence."""
    catalog = project.catalog
    # a description that reads clears even a declared write, whenever the tool got it
    writes = counted_writes(tool, catalog, reads_description=True, declaration_beats_name=False)
    if writes or not _declared_writer(tool):
        return writes
    repeatable = [e for e in tool.effects if e.writes and not e.non_idempotent]
    if repeatable:
        if not _declared_non_idempotent(tool):
            return writes  # a write found and judged repeatable is the tool's write
        # The author says in so many words that a repeat is not harmless (an append written
        # back with PUT, a delete that moves to the trash): the declaration beats the verb.
        return [replace(e, idempotent=False, confidence=Confidence.MEDIUM) for e in repeatable]
    unjudged = [e for e in tool.effects if e.kind == "unknown" or e.non_idempotent]
    # a method of some client before a bare helper name: the likelier place of the write
    unjudged.sort(key=lambda e: "." not in e.sink)
    return [replace(e, confidence=Confidence.MEDIUM) for e in unjudged]


def _declared_writer(tool: ToolFacts) -> bool:
    """A declaration that says the tool writes and is not idempotent (MCP annotations with
    ``readOnlyHint=False``, ``destructiveHint=True`` or ``idempotentHint=False``, a
    non-idempotent risk or idempotency)."""
    return any(
        d.read_only is False
        or d.destructive is True
        or d.idempotent_hint is False
        or d.idempotency in {"non_idempotent", "non-idempotent"}
        for d in tool.declarations
    )


def _declared_non_idempotent(tool: ToolFacts) -> bool:
    """A declaration that says, written out, that the tool is not idempotent
    (``idempotentHint=False`` given, ``idempotency="non_idempotent"``): not MCP's default."""
    return any(
        d.idempotency in {"non_idempotent", "non-idempotent"}
        or (d.idempotent_hint is False and "idempotent_hint" in d.fields)
        for d in tool.declarations
    )


def _declared_harmless(tool: ToolFacts) -> bool:
    """A tool that declares itself read-only or idempotent: re-sending it after a timeout
    repeats nothing (a contradiction with its effects is AG102's)."""
    return any(d.says_read_only or d.says_idempotent for d in tool.declarations)


def _may_catch_timeouts(know: Knowledge, fn: Function) -> bool:
    return any(any(know.is_timeout(c) for c in h.caught) for h in fn.handlers)


def _verdict(
    frames: list[Frame], found: Caught, effect: Effect, tool: ToolFacts | None
) -> TimeoutVerdict:
    own = found.depth == 0 and not found.guard.context_manager
    location = (
        Location(found.guard.facts.path, found.handler.span)
        if own
        else Location(frames[0].facts.path, frames[0].call.span)
    )
    return TimeoutVerdict(
        found.guard.fn,
        found.guard.facts,
        found.handler,
        [effect],
        found.outcome,
        found.detail,
        tool,
        found.caught,
        location=location,
        how=found.how,
        caught_text=found.caught_text,
        removable=own and found.how == TIMEOUT,
        handler_location=Location(found.guard.facts.path, found.handler.span),
    )


def _poll_verdict(
    frames: list[Frame], poll: Poll, effect: Effect, tool: ToolFacts
) -> TimeoutVerdict:
    span = poll.answer.span or frames[0].call.span
    answer = Location(poll.facts.path, span)
    own = poll.fn is frames[0].fn
    return TimeoutVerdict(
        poll.fn,
        poll.facts,
        Handler(try_id=-2, caught=[], span=span, name=None),
        [effect],
        "plain",
        poll.answer.text,
        tool,
        location=answer if own else Location(frames[0].facts.path, frames[0].call.span),
        how=POLL,
        removable=False,
        handler_location=answer,
    )


def _executor_timeouts(project: ProjectModel) -> list[TimeoutVerdict]:
    """An executor that catches a timeout around ``tools[name](...)``: it speaks for every
    tool it may run, so it counts when the project has a non-idempotent write tool."""
    know = project.catalog.checklist
    writers = [
        t
        for t in project.tools
        if t.guarded is None and any(counts_as_write(e, t.name, project.catalog) for e in t.effects)
    ]
    if not writers:
        return []
    result: list[TimeoutVerdict] = []
    for executor in project.ledger_index().executors:
        if executor.dispatch is None:
            continue
        entry = project.functions.get(executor.function)
        if entry is None:
            continue
        fn, facts = entry
        for handler in fn.handlers:
            caught = [c for c in handler.caught if know.is_timeout(c)]
            block = try_block(fn, handler)
            if not caught or block is None:
                continue
            if not (block.body_order[0] <= executor.dispatch_order < block.body_order[1]):
                continue
            if says_outcome_unknown(know, handler):
                continue
            verdict = handler_outcome(know, fn, block, handler)
            if verdict is None:
                continue
            outcome, detail = verdict
            effects = [
                e
                for e in writers[0].effects
                if counts_as_write(e, writers[0].name, project.catalog)
            ]
            result.append(
                TimeoutVerdict(fn, facts, handler, effects, outcome, detail, None, caught, writers)
            )
    return result


def _timeout_retries(project: ProjectModel) -> list[TimeoutVerdict]:
    """A retry decorator or wrapper that names a timeout among the errors it retries."""
    know = project.catalog.checklist
    result: list[TimeoutVerdict] = []
    for use in project.retry_uses():
        if use.kind != "decorator" or not use.catches or use.function is None:
            continue
        caught = [c for c in use.catches if know.is_timeout(c)]
        if not caught:
            continue
        effects, tool = retried_effects(project, use)
        risky = [
            e
            for e in effects
            if counts_as_write(
                e,
                tool.name if tool else use.function.rsplit(".", 1)[-1],
                project.catalog,
                tool.description if tool else "",
            )
            and (e.key is None or e.key.origin in {"fresh", "param"})
        ]
        entry = project.functions.get(use.function)
        if not risky or entry is None or (tool is not None and tool.guarded is not None):
            continue
        fn, facts = entry
        handler = Handler(try_id=-1, caught=caught, span=use.location.span, name=None)
        result.append(
            TimeoutVerdict(
                fn, facts, handler, risky, "retry", f"{use.library} retries it", tool, caught
            )
        )
    return result


def _tool_with_effect(project: ProjectModel, effect: Effect) -> ToolFacts | None:
    for tool in project.tools:
        if any(e.site == effect.site for e in tool.effects):
            return tool
    return None


@dataclass
class SettingUse:
    location: Location
    text: str  # what the setting does
    setting: str  # the code that sets it
    tools: list[ToolFacts] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    confidence: Confidence = Confidence.HIGH


def _tool_decorators(project: ProjectModel, tool: ToolFacts) -> list[str]:
    names: list[str] = []
    for qualname in tool.functions:
        fn = project.function(qualname)
        if fn is not None:
            names += [d.qualname for d in fn.decorators]
    return names


def _framework_key(project: ProjectModel, tool: ToolFacts) -> str:
    if tool.framework == "mcp" and any(
        d.startswith("fastmcp.") for d in _tool_decorators(project, tool)
    ):
        return "fastmcp"
    return tool.framework


# ---------------------------------------------------------------- AG402


def _timeout_retry_settings(project: ProjectModel) -> Iterable[SettingUse]:
    know = project.catalog.checklist
    result: list[SettingUse] = []
    for tool in project.tools:
        risky = counted_writes(tool, project.catalog)
        if not risky or tool.guarded is not None or tool.schema_only:
            continue
        key = _framework_key(project, tool)
        for raw in know.timeout_settings:
            if raw.get("framework") != key:
                continue
            value = tool.options.get(raw.get("tool_kwarg", ""))
            if value is None or is_off(value):
                continue
            unless = raw.get("unless") or {}
            if any(
                (tool.options.get(k) is not None and tool.options[k].string() == v)
                for k, v in unless.items()
            ):
                continue
            result.append(
                SettingUse(
                    Location(tool.site.path, value.span or tool.site.span),
                    raw.get("text", ""),
                    f"{raw.get('tool_kwarg')}={value.text}",
                    [tool],
                    risky,
                )
            )
    writers = {
        t.framework: t
        for t in project.tools
        if counted_writes(t, project.catalog) and t.guarded is None
    }
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for call in facts.calls:
            if not call.kwargs:
                continue  # every setting below is a keyword argument
            for setting in know.agent_timeout_settings:
                value = call.kwargs.get(setting.kwarg)
                if value is not None and _matches(setting, call) and not is_off(value):
                    writer = writers.get(setting.framework)
                    if writer is not None:
                        result.append(
                            SettingUse(
                                Location(facts.path, value.span or call.span),
                                setting.text,
                                f"{setting.kwarg}={value.text}",
                                [writer],
                                counted_writes(writer, project.catalog),
                            )
                        )
            for setting in know.mcp_client_retries:
                value = call.kwargs.get(setting.kwarg)
                if (
                    value is not None
                    and _matches(setting, call)
                    and not is_off(value)
                    and not _declared_read_only_server(project, call)
                ):
                    result.append(
                        SettingUse(
                            Location(facts.path, value.span or call.span),
                            setting.text,
                            f"{setting.kwarg}={value.text}",
                            confidence=Confidence.MEDIUM,
                        )
                    )
            result += _langgraph_retry(project, call, facts)
        for fn in facts.functions.values():
            for dec in fn.decorators:
                if not know.task_decorators(dec.qualname):
                    continue
                policy = dec.kwargs.get("retry_policy")
                if policy is None or not _default_retry_on(know, policy):
                    continue
                effects = _node_effects(project, fn.qualname)
                if effects:
                    result.append(
                        SettingUse(
                            Location(facts.path, policy.span or dec.span),
                            _LANGGRAPH_TEXT,
                            f"retry_policy={policy.text}",
                            [],
                            effects,
                            _retry_confidence(effects),
                        )
                    )
    return result


def _declared_read_only_server(project: ProjectModel, call: Call) -> bool:
    """Whether the config declares this remote MCP server's tools read-only, by the
    ``name=`` the client is built with or the URL in its ``params``: a re-sent read repeats
    nothing, and a remote server's tools cannot be seen from here."""
    declared = set(project.config.read_only_mcp_servers if project.config else ())
    if not declared:
        return False
    name = call.kwargs.get("name")
    params = call.kwargs.get("params")
    url = params.items.get("url") if params is not None else None
    return any(v is not None and v.string() in declared for v in (name, url))


_LANGGRAPH_TEXT = (
    "LangGraph's default `retry_on` retries `httpx` and SDK timeouts, so the node's write is "
    "sent again after a timeout"
)


def _matches(setting: Setting, call: Call) -> bool:
    callee = call.callee.replace("()", "")
    return callee in setting.match


def _default_retry_on(know: Knowledge, policy: Value) -> bool:
    if policy.kind != "call" or not know.retry_policy(policy.qualname):
        return False
    return "retry_on" not in policy.call_kwargs and len(policy.call_args) < 6


def _node_effects(project: ProjectModel, qualname: str) -> list[Effect]:
    name = qualname.rsplit(".", 1)[-1]
    return [e for e in project.effects_of(qualname) if counts_as_write(e, name, project.catalog)]


def _retry_confidence(effects: list[Effect]) -> Confidence:
    # requests/urllib timeouts derive from OSError, which the default retry_on skips.
    if all(e.sink.startswith(("requests.", "urllib")) for e in effects):
        return Confidence.LOW
    if any(e.sink.startswith(("httpx.", "openai.", "anthropic.")) for e in effects):
        return Confidence.HIGH
    return Confidence.MEDIUM


def _langgraph_retry(project: ProjectModel, call: Call, facts: ModuleFacts) -> list[SettingUse]:
    know = project.catalog.checklist
    if call.method != "add_node" and not know.add_node(call.callee):
        return []
    policy = call.kwargs.get("retry_policy")
    if policy is None or not _default_retry_on(know, policy):
        return []
    node = call.args[1] if len(call.args) > 1 else call.args[0] if call.args else None
    node = call.kwargs.get("action", node)
    if node is None:
        return []
    effects: list[Effect] = []
    tools: list[ToolFacts] = []
    if node.kind == "call" and node.call_args and node.call_args[0].kind == "list":
        for element in node.call_args[0].elements:  # ToolNode([...])
            target = project.project_function(element.qualname, facts)
            tool = project.tool_for_function(target) if target else None
            if tool is not None and counted_writes(tool, project.catalog):
                tools.append(tool)
                effects += counted_writes(tool, project.catalog)
    else:
        target = project.project_function(node.qualname, facts)
        if target:
            effects = _node_effects(project, target)
    if not effects:
        return []
    confidence = _retry_confidence(effects)
    if confidence == Confidence.LOW:
        return []
    return [
        SettingUse(
            Location(facts.path, policy.span or call.span),
            _LANGGRAPH_TEXT,
            f"retry_policy={policy.text}",
            tools,
            effects,
            confidence,
        )
    ]


class TimeoutVerdicts(Judgement[tuple[TimeoutVerdict, ...]]):
    produces = "how each write tool's timeouts are told apart from plain failures"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[TimeoutVerdict, ...]:
        return tuple(_timeout_verdicts(project))


class TimeoutRetrySettings(Judgement[tuple[SettingUse, ...]]):
    produces = "framework settings that retry a tool call after a timeout"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[SettingUse, ...]:
        return tuple(_timeout_retry_settings(project))
