"""Q6 judgement, shared by AG601 and AG602: where a tool's output reaches the model, raw
exception text in it, and error results without a code or a retryable flag. Reads facts
only (handlers, their raw-error uses, try blocks, effect summaries)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agentguard.checks.judgement import Judgement
from agentguard.checks.timeouts.shared import SettingUse, is_off, says_outcome_unknown, try_block
from agentguard.diagnostics import Confidence, Location, Span
from agentguard.facts.module_facts import (
    Assignment,
    Call,
    Function,
    Handler,
    ModuleFacts,
    RawErrorUse,
    Value,
    raw_error_attributes,
)
from agentguard.knowledge.checklist import Knowledge, Setting
from agentguard.project.counted_writes import counted_writes, counts_as_write
from agentguard.project.discovery.prompt_actions import FORM as PROMPT_ACTIONS
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect, ToolFacts


@dataclass
class ObservationSite:
    """A function whose return value or messages reach the model: a tool or an executor."""

    function: Function
    facts: ModuleFacts
    tool: ToolFacts | None
    # tool | wrapper | executor | helper (a function whose result a tool returns) | closure
    # (a function written inside a tool, filling what the tool returns)
    role: str
    # Every tool whose output this function's result reaches: the tool itself, each tool
    # returning a helper's result (directly or through other helpers), or the inline
    # dispatch branches an executor's ``try`` wraps.
    tools: list[ToolFacts] = field(default_factory=list)


def _observation_sites(project: ProjectModel) -> list[ObservationSite]:
    sites: dict[str, ObservationSite] = {}
    for tool in project.tools:
        if tool.inline is not None:
            continue  # its functions are what the branch calls: helpers, below
        for qualname in tool.functions:
            entry = project.functions.get(qualname)
            if entry is None:
                continue
            fn, facts = entry
            sites.setdefault(qualname, ObservationSite(fn, facts, tool, "tool", [tool]))
            for nested in fn.nested:
                # ``def runner(): ... except Exception as e: result["output"] = str(e)``
                # filling a dict the tool returns once the thread ends
                inner = project.functions.get(nested)
                if inner is not None and nested not in sites:
                    sites[nested] = ObservationSite(inner[0], inner[1], tool, "closure", [tool])
            for dec in fn.decorators:
                target = project.project_function(dec.qualname, facts)
                decorator = project.function(target) if target else None
                if decorator is None:
                    continue
                for nested in decorator.nested:
                    inner = project.functions.get(nested)
                    if inner is not None and nested not in sites:
                        sites[nested] = ObservationSite(inner[0], inner[1], None, "wrapper")
    # what runs the tool calls: the executors known to the ledger, and the functions whose
    # dispatch branches are tools of their own (a hand-written loop's ``if name == ...``)
    dispatchers = [executor.function for executor in project.ledger_index().executors]
    # (a tool call a model API made must be answered with its result; an action parsed from
    # the model's text is answered wherever the project chooses, the user often)
    dispatchers += [
        tool.inline[0]
        for tool in project.tools
        if tool.inline is not None and tool.form != PROMPT_ACTIONS.form
    ]
    for dispatcher in dispatchers:
        entry = project.functions.get(dispatcher)
        if entry is not None and dispatcher not in sites:
            sites[dispatcher] = ObservationSite(entry[0], entry[1], None, "executor")
    helpers: dict[str, list[ToolFacts]] = {}
    for tool in project.tools:
        for helper in _tool_helpers(project, tool):
            if tool not in helpers.setdefault(helper, []):
                helpers[helper].append(tool)
    for helper, tools in helpers.items():
        if helper in sites:
            continue
        fn, facts = project.functions[helper]
        sites[helper] = ObservationSite(fn, facts, tools[0], "helper", tools)
    for site in sites.values():
        if site.role == "executor":
            site.tools = _inline_branches(project, site.function)
    return [sites[q] for q in sorted(sites)]


def within_lines(outer: Span, inner: Span) -> bool:
    """Whether ``inner``'s lines lie within ``outer``'s."""
    return outer.line <= inner.line and inner.end_line <= outer.end_line


def _inline_branches(project: ProjectModel, fn: Function) -> list[ToolFacts]:
    """The tools that are dispatch branches written inside ``fn`` (a low-level MCP
    ``call_tool``): their code runs inside ``fn``'s ``try`` blocks."""
    return [
        t
        for t in project.tools
        if t.inline is not None and t.symbol.rsplit(":", 1)[0] == fn.qualname
    ]


def _tool_helpers(project: ProjectModel, tool: ToolFacts) -> list[str]:
    """The project functions whose result the tool returns, directly or through other
    such functions: ``return await self._handle(ctx)``, ``data = fetch(...)`` then
    ``return json.dumps(data)``. What they return from their ``except`` handlers reaches
    the model too."""
    if tool.inline is not None:
        handler = tool.symbol.rsplit(":", 1)[0]
        entry = project.functions.get(handler)
        queue = _returned_helpers(project, *entry, within=tool.anchor.span) if entry else []
    else:
        queue = [
            h
            for q in tool.functions
            if q in project.functions
            for h in _returned_helpers(project, *project.functions[q])
        ]
    found: list[str] = []
    while queue and len(found) < MAX_HELPERS:
        helper = queue.pop(0)
        if helper in found or (helper in tool.functions and tool.inline is None):
            continue
        found.append(helper)
        queue += _returned_helpers(project, *project.functions[helper])
    return found


MAX_HELPERS = 32  # helpers followed per tool (a chain of returned results)


def _line(assignment: Assignment) -> int:
    return assignment.span.line


def _edge_line(edge: tuple[Call, str]) -> int:
    return edge[0].span.line


def _returned_helpers(
    project: ProjectModel, fn: Function, facts: ModuleFacts, within: Span | None = None
) -> list[str]:
    """Project functions whose result ``fn`` returns (in ``within`` when given): the calls
    written in a returned expression, or in the value of a local it returns."""
    held: dict[str, list[Span]] = {}  # local name -> where the values it holds are written
    built_from: dict[str, set[str]] = {}  # local name -> the locals its values read
    assignments = project.local_assignments(facts, fn.qualname)
    edges = project.call_edges(fn.qualname)
    if within is not None:
        # a dispatch branch of ``fn``: only what is written on its lines, found by line
        # (every branch of the dispatch asks)
        first, last = within.line, within.end_line
        key = (facts.path, fn.qualname)
        assignments = project.on_lines(("assignments", *key), assignments, first, last, _line)
        edges = project.on_lines(("call edges", *key), edges, first, last, _edge_line)
    for assignment in assignments:
        if within is not None and not within_lines(within, assignment.span):
            continue
        if assignment.value.kind in {"call", "other"}:
            held.setdefault(assignment.target, []).append(assignment.value.span or assignment.span)
        if facts.language != "python":
            # ``message = result.ok ? "done" : `failed: ${result.error}```: the text
            # returned is built from what ``result`` holds
            built_from.setdefault(assignment.target, set()).update(assignment.value.names)
    spans: list[Span] = []
    for value in fn.returns:
        if value.span is None:
            continue
        # a return after a dispatch's branches (``return result``) returns what the branch
        # bound: only the branch's own locals are held, so only they are followed there
        inside = within is None or within_lines(within, value.span)
        if inside and value.kind not in {"name", "const", "lambda"}:
            spans.append(value.span)
        names, seen = list(value.names), set(value.names)
        while names:
            name = names.pop()
            spans += held.get(name, [])
            for source in built_from.get(name, set()) - seen:
                seen.add(source)
                names.append(source)
    found: list[str] = []
    for call, target in edges:
        if target == fn.qualname or target not in project.functions or target in found:
            continue
        if any(span.encloses(call.span) for span in spans):
            found.append(target)
    if facts.language != "python":
        # ``return await startSpan({name}, async (span) => {...})``: a runner handed the
        # function's own callback answers with what the callback returns
        nested = f"{fn.qualname}.<locals>."
        for call in project.calls_in(fn.qualname):
            if not any(span.encloses(call.span) for span in spans):
                continue
            for arg in call.args:
                target = arg.qualname or ""
                if arg.kind == "name" and target.startswith(nested) and target not in found:
                    if target in project.functions:
                        found.append(target)
    return found


# ---------------------------------------------------------------- Q6: raw error text


@dataclass
class RawObservation:
    site: ObservationSite
    use: RawErrorUse
    location: Location
    reaches: str
    confidence: Confidence


def _reaches_model(
    know: Knowledge, site: ObservationSite, use: RawErrorUse
) -> tuple[str, Confidence] | None:
    if use.dest == "return":
        return "the tool's return value", Confidence.HIGH
    if use.dest == "raise":
        callee = (use.callee or "").replace("()", "")
        if know.tool_error_exceptions(callee):
            return f"a raised `{callee.rsplit('.', 1)[-1]}` message", Confidence.HIGH
        framework = site.tool.framework if site.tool else ""
        default = know.framework_errors.get(framework) or {}
        if site.facts.language != "python":
            # ``throw new Error(`...${err}`)``: the framework forwards the message, which is
            # the framework's default (AG603), not the tool's own answer
            return None
        if site.role == "tool" and default.get("raw"):
            return f"the error text {framework} sends to the model", Confidence.MEDIUM
        return None
    callee = (use.callee or "").replace("()", "")
    if know.model_message_types(callee):
        return f"a `{callee.rsplit('.', 1)[-1]}`", Confidence.HIGH
    method = callee.rsplit(".", 1)[-1]
    if method in know.message_sink_methods:
        if set(use.arg_keys) & know.tool_message_keys or (
            "role" in use.arg_keys and set(use.arg_strings) & know.tool_message_roles
        ):
            return "a tool message for the model", Confidence.HIGH
    return None


def _raw_observations(project: ProjectModel) -> list[RawObservation]:
    result: list[RawObservation] = []
    for site in ObservationSites.of(project):
        for handler in site.function.handlers:
            found = _first_raw(project, site, handler)
            if found is not None:
                result.append(found)
        rejected = _validation_error_return(project, site)
        if rejected is not None:
            result.append(rejected)
    return result


def _validation_error_return(project: ProjectModel, site: ObservationSite) -> RawObservation | None:
    """``const parsed = Schema.safeParse(args)`` and ``return {content: [{text:
    `Invalid arguments: ${parsed.error}`}]}``: the validation error's own text (every issue,
    with the values received) sent as the answer."""
    fields = project.catalog.checklist.validation_results
    if not fields:
        return None
    held: dict[str, str] = {}  # local -> the field its validation error is in
    for assignment in project.local_assignments(site.facts, site.function.qualname):
        value = assignment.value
        if value.kind == "call" and assignment.target.isidentifier():
            method = (value.qualname or value.text.split("(", 1)[0]).rsplit(".", 1)[-1]
            if method in fields:
                held[assignment.target] = fields[method]
    if not held:
        return None
    for value in site.function.returns:
        if value.span is None:
            continue
        carried = _validation_text(value, held)
        if carried is not None:
            use = RawErrorUse(
                f"{carried} (the validation error)", "return", value.span, None, value.text
            )
            reaches = "the tool's return value"
            if site.role == "helper":
                reaches = f"`{site.function.name}`'s return value, which the tool returns"
            return RawObservation(
                site, use, Location(site.facts.path, value.span), reaches, Confidence.MEDIUM
            )
    return None


def _validation_text(value: Value, held: dict[str, str]) -> str | None:
    """Where ``value`` carries a held result's error field as text (a template part, a
    concatenation, a call's argument, a property value), not where it tests it."""
    stack = [value]
    while stack:
        current = stack.pop()
        if current.op in _TESTS:
            continue
        chain = current.chain
        if current.kind in {"attr", "call"} and chain is not None and chain.root in held:
            field_name = held[chain.root]
            if chain.steps[:1] == (("attr", field_name),):
                return f"`{chain.root}.{field_name}`"
        stack += [*current.parts, *current.items.values(), *current.elements]
        if current.kind == "call" and current.qualname in _TO_TEXT:
            # ``String(parsed.error)``; a project helper handed the error
            # (``describe(parsed.error)``) says what it chooses, unknown here
            stack += current.call_args
    return None


# Operators that test a value rather than carry its text.
_TESTS = frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "is", "not"})
# Calls whose result is their argument's text.
_TO_TEXT = frozenset(
    {"String", "JSON.stringify", "util.inspect", "node:util.inspect", "str", "repr"}
)


def _input_error_only(project: ProjectModel, site: ObservationSite, handler: Handler) -> bool:
    """``except InvalidQueryError as e: raise ModelRetry(str(e))`` around code that writes
    nothing: the message describes the model's own input (a rejected SQL statement, a
    failed validation), which is what the model needs to correct it; no outcome is in
    doubt."""
    know = project.catalog.checklist
    if not handler.caught or not all(
        know.input_error.search(name.rsplit(".", 1)[-1]) for name in handler.caught
    ):
        return False
    block = try_block(site.function, handler)
    if block is None:
        return False
    name = site.tool.name if site.tool else site.function.name
    description = site.tool.description if site.tool else ""
    return not any(
        counts_as_write(e, name, project.catalog, description)
        for e in project.effects_in_orders(site.function.qualname, block.body_order)
    )


def _first_raw(
    project: ProjectModel, site: ObservationSite, handler: Handler
) -> RawObservation | None:
    if _input_error_only(project, site, handler):
        return None
    for use in handler.raw_error_uses:
        verdict = _reaches_model(project.catalog.checklist, site, use)
        if verdict is not None:
            reaches, confidence = verdict
            if site.role == "helper" and use.dest == "return":
                # one step removed: the tool returns what this function returns
                reaches = f"`{site.function.name}`'s return value, which the tool returns"
                confidence = min(confidence, Confidence.MEDIUM, key=lambda c: c.rank)
            return RawObservation(
                site, use, Location(site.facts.path, use.span), reaches, confidence
            )
    helper = _error_helper_return(project, site, handler)
    if helper is not None:
        return helper
    if handler.tainted_names and site.role == "closure":
        return _closure_return(project, site, handler)
    if handler.tainted_names:
        tainted = _carried(project, site, handler)
        for value in site.function.returns:
            if value.span is None or value.span.line <= handler.span.line:
                continue
            if value.kind == "call" and value.qualname in _TEXTLESS:
                continue
            if (tainted & set(value.names) and value.kind != "name") or value.text in tainted:
                held = sorted(tainted & set(value.names)) or [value.text]
                return _returned(site, f"`{held[0]}` (set from the exception)", value, None)
        # error = f"... {e}" in the handler, messages.append({... "content": error}) later
        for call in project.calls_in(site.function.qualname):
            if call.span.line <= handler.span.end_line:
                continue
            args = [*call.args, *call.kwargs.values()]
            held = sorted(
                tainted
                & {
                    n
                    for v in args
                    for n in (*v.names, *(n for i in v.items.values() for n in i.names))
                }
            )
            if not held:
                continue
            keys = [k for v in args for k in v.items] + list(call.kwargs)
            strings = [s for v in args for i in v.items.values() if (s := i.string())]
            use = RawErrorUse(
                f"`{held[0]}` (set from the exception)",
                "call",
                call.span,
                call.callee,
                call.text,
                keys,
                strings,
            )
            verdict = _reaches_model(project.catalog.checklist, site, use)
            if verdict is not None:
                return RawObservation(
                    site, use, Location(site.facts.path, call.span), verdict[0], Confidence.MEDIUM
                )
    return None


# Calls whose result carries none of their arguments' text.
_TEXTLESS = frozenset({"len", "bool", "int", "float", "isinstance", "hash", "id", "type"})


def _carried(project: ProjectModel, site: ObservationSite, handler: Handler) -> set[str]:
    """The locals holding the exception's text after ``handler``: the ones it sets
    (``error = str(e)``), then, to a fixpoint, the containers those are put into
    (``results.append({"error": error})``) and the locals built from them
    (``summary = {"results": results}``)."""
    tainted = set(handler.tainted_names)
    fn = site.function
    after = [
        a
        for a in project.local_assignments(site.facts, fn.qualname)
        if a.span.line > handler.span.end_line
    ]
    fills = [
        c
        for c in project.calls_in(fn.qualname)
        if c.span.line > handler.span.line
        and c.method in _FILLS
        and c.receiver
        and c.receiver.isidentifier()
    ]
    changed = True
    while changed:
        changed = False
        for call in fills:
            if call.receiver in tainted:
                continue
            args = [*call.args, *call.kwargs.values()]
            if any(tainted & set(v.names) for v in args if v.qualname not in _TEXTLESS):
                tainted.add(call.receiver or "")
                changed = True
        for assignment in after:
            value = assignment.value
            if assignment.target in tainted or not assignment.target.isidentifier():
                continue
            if value.kind == "call" and value.qualname in _TEXTLESS:
                continue
            if tainted & set(value.names):
                tainted.add(assignment.target)
                changed = True
    return tainted


# Methods that put their argument into the container they are called on.
_FILLS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft"})


def _error_helper_return(
    project: ProjectModel, site: ObservationSite, handler: Handler
) -> RawObservation | None:
    """``return format_error(e)`` (or ``self._error(e)``) where the project helper returns
    the text of its parameter, itself or through other helpers it hands it to."""
    if not handler.name:
        return None
    for value, call in ((v, c) for v in handler.returns for c in _calls_within(v)):
        if value.span is None:
            continue
        helper = _called_at(project, site.function, site.facts, call)
        if helper is None:
            continue
        passed = _params_given(helper, call, handler.name)
        for param in passed:
            if _returns_text_of(project, helper, param, 0):
                how = f"`{helper.name}({param})` returns its text"
                return _returned(site, how, value, helper.qualname)
    return None


def _closure_return(
    project: ProjectModel, site: ObservationSite, handler: Handler
) -> RawObservation | None:
    """A handler inside a function written in the tool that puts the exception's text in a
    container of the tool's own (``result["output"] = str(e)``), which the tool returns."""
    outer = project.functions.get(site.function.qualname.rpartition(".<locals>.")[0])
    if outer is None:
        return None
    own = {a.target for a in project.local_assignments(site.facts, site.function.qualname)}
    shared = set(handler.tainted_names) - own
    for value in outer[0].returns:
        if value.kind == "name" and value.text in shared:
            return _returned(site, f"`{value.text}` (set from the exception)", value, None)
    return None


def _returned(site: ObservationSite, how: str, value: Value, callee: str | None) -> RawObservation:
    """Raw text in the returned ``value``, found one step removed (medium confidence)."""
    assert value.span is not None
    use = RawErrorUse(how, "return", value.span, callee, value.text)
    return RawObservation(
        site,
        use,
        Location(site.facts.path, value.span),
        "the tool's return value",
        Confidence.MEDIUM,
    )


def _called_at(
    project: ProjectModel, fn: Function, facts: ModuleFacts, value: Value
) -> Function | None:
    """The project function the call ``value`` (written in ``fn``) runs."""
    span = value.span
    for call, target in project.call_edges(fn.qualname):
        if span is not None and call.span == span:
            return project.function(target)
    named = project.project_function(value.qualname, facts)
    return project.function(named) if named else None


def _params_given(helper: Function, value: Value, name: str) -> list[str]:
    """The parameters of ``helper`` that the call ``value`` passes ``name`` to."""
    params = [p for p in helper.params if p not in {"self", "cls"}]
    passed = [
        params[i]
        for i, arg in enumerate(value.call_args)
        if i < len(params) and arg.kind == "name" and arg.text == name
    ]
    passed += [k for k, arg in value.call_kwargs.items() if arg.text == name and k in params]
    return passed


MAX_HELPER_DEPTH = 4  # helpers followed when one hands the exception to another


def _returns_text_of(project: ProjectModel, helper: Function, param: str, depth: int) -> bool:
    """Whether ``helper`` returns its parameter ``param``'s text: formatted into what it
    returns, through a local it formats it into, or handed to another project helper
    that does."""
    entry = project.functions.get(helper.qualname)
    facts = entry[1] if entry else None
    raw = raw_error_attributes(facts.language if facts else "python")
    assignments = [
        a
        for a in (project.local_assignments(facts, helper.qualname) if facts is not None else [])
        if a.target.isidentifier()
    ]
    # ``info = parseError(error)``: what a helper handed the exception makes of its text,
    # asked once; then ``message = info.message``, ``text = JSON.stringify(response)``:
    # the locals the text is carried in
    held = {param} | {
        a.target
        for a in assignments
        if facts is not None
        and depth < MAX_HELPER_DEPTH
        and _helper_hands_back_text(project, helper, facts, a.value, param, depth)
    }
    for _ in range(4):
        grown = {
            a.target
            for a in assignments
            if a.target not in held
            and (
                _carries(a.value, held - {param})
                or (a.value.kind == "name" and a.value.text == param)
                or any(_formats(a.value, name, raw) for name in held)
            )
        }
        if not grown:
            break
        held |= grown
    for returned in helper.returns:
        if _formats(returned, param, raw):
            return True
        if returned.kind != "name" and set(returned.names) & (held - {param}):
            return True
        if returned.kind == "name" and returned.text in held - {param}:
            return True
        if depth >= MAX_HELPER_DEPTH or facts is None:
            continue
        for call in _calls_within(returned):
            inner = _called_at(project, helper, facts, call)
            if inner is not None and inner.qualname != helper.qualname:
                for inner_param in _params_given(inner, call, param):
                    if _returns_text_of(project, inner, inner_param, depth + 1):
                        return True
    return False


# Calls that serialise what they are handed: the text they make holds it.
_SERIALISERS = frozenset({"json.dumps", "JSON.stringify"})


def _carries(value: Value, names: set[str]) -> bool:
    """Whether ``value`` holds a local of ``names`` (text already taken from an exception)
    as it is: the name, an item or attribute of it, a dict or list holding it, an f-string
    or a serialisation of one (``json.dumps({"message": message})``)."""
    if not names:
        return False
    chain = value.chain
    if chain is not None and chain.root in names and all(kind != "call" for kind, _ in chain.steps):
        return True
    if value.kind == "fstring":
        return bool(names & set(value.names))
    if value.kind == "call":
        return (value.qualname or "") in _SERIALISERS and any(
            _carries(argument, names) for argument in value.call_args
        )
    return any(_carries(item, names) for item in [*value.items.values(), *value.elements])


def _helper_hands_back_text(
    project: ProjectModel,
    helper: Function,
    facts: ModuleFacts,
    value: Value,
    param: str,
    depth: int,
) -> bool:
    """Whether ``value`` calls a project helper, handing it ``param``, that returns that
    parameter's text (``parseError(error)`` returning ``{message: error.message}``)."""
    for call in _calls_within(value):
        inner = _called_at(project, helper, facts, call)
        if inner is None or inner.qualname == helper.qualname:
            continue
        for inner_param in _params_given(inner, call, param):
            if _returns_text_of(project, inner, inner_param, depth + 1):
                return True
    return False


def _calls_within(value: Value) -> list[Value]:
    """The call expressions in ``value`` whose result it holds: itself, the values of a
    dict or list it builds, and the arguments of calls it makes (``json.dumps(...)``)."""
    found: list[Value] = []
    stack = [value]
    while stack:
        current = stack.pop()
        if current.kind == "call":
            found.append(current)
            stack += [*current.call_args, *current.call_kwargs.values()]
        stack += [*current.items.values(), *current.elements]
    return found


# Calls that turn what they are handed into its text, in either language.
_TEXT_OF = frozenset({"str", "repr", "String", "JSON.stringify"})


def _formats(value: Value, param: str, raw_attributes: frozenset[str]) -> bool:
    """Whether ``value`` holds the text of the exception ``param``: formatted into a
    string (``f"{e}"``, `` `${err}` ``), turned into text (``str(e)``, ``String(err)``), or
    read through the attributes an error's text is in (``err.message``, ``e.args``)."""
    if param not in value.names:
        return False
    if value.kind == "fstring":
        return True
    stack = [value, *value.items.values()]
    while stack:
        current = stack.pop()
        if current.kind == "fstring" and param in current.names:
            return True
        if current.kind == "call" and current.qualname in _TEXT_OF:
            if current.call_args and current.call_args[0].text == param:
                return True
        if current.kind == "attr" and current.chain is not None and current.chain.root == param:
            if current.chain.steps[:1] and current.chain.steps[0][1] in raw_attributes:
                return True
        if (
            current.kind == "other"
            and param in current.names
            and raw_attributes & set(current.attrs)
        ):
            return True  # ``err.message || String(err)``
        stack += current.call_args + list(current.items.values()) + current.elements
    return False


# ---------------------------------------------------------------- Q6: unstructured errors


@dataclass
class UnstructuredError:
    site: ObservationSite
    value: Value
    location: Location
    missing: list[str]


def _error_items(value: Value) -> dict[str, Value] | None:
    if value.kind == "dict":
        return value.items
    if value.kind == "call" and value.call_args and value.call_args[0].kind == "dict":
        if (value.qualname or "").endswith(("dumps", "dict", "JSONResponse")):
            return value.call_args[0].items
    return None


def _unstructured_errors(project: ProjectModel) -> Iterable[UnstructuredError]:
    know = project.catalog.checklist
    raw_lines = {(r.location.path, r.location.span.line) for r in RawObservations.of(project)}
    for site in ObservationSites.of(project):
        if site.role != "tool" or site.tool is None:
            continue
        tool_name = site.tool.name
        fn = site.function
        for handler in fn.handlers:
            block = try_block(fn, handler)
            if block is None:
                continue
            effects = [
                e
                for e in project.effects_in_orders(fn.qualname, block.body_order)
                if counts_as_write(e, tool_name, project.catalog, site.tool.description)
            ]
            if not effects or says_outcome_unknown(know, handler):
                continue
            for value in handler.returns:
                if value.span is None:
                    continue
                location = Location(site.facts.path, value.span)
                if (location.path, value.span.line) in raw_lines:
                    continue
                items = _error_items(value)
                if items is not None:
                    missing = []
                    if not set(items) & know.code_keys:
                        missing.append("a code")
                    if not set(items) & know.retry_keys:
                        missing.append("a retryable flag")
                    if missing:
                        yield UnstructuredError(site, value, location, missing)
                elif value.kind == "fstring" or isinstance(value.const, str):
                    yield UnstructuredError(site, value, location, ["a code", "a retryable flag"])
                break


# ---------------------------------------------------------------- AG603


def _error_handler_settings(project: ProjectModel) -> Iterable[SettingUse]:
    know = project.catalog.checklist
    result: list[SettingUse] = []
    writers = [t for t in project.tools if counted_writes(t, project.catalog) and t.guarded is None]
    by_name = {
        n: t for t in writers for n in (t.name, *(q.rsplit(".", 1)[-1] for q in t.functions))
    }
    named = {name for setting in know.error_settings for name in setting.match}
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for call in facts.calls:
            callee = call.callee.replace("()", "") if "()" in call.callee else call.callee
            if callee not in named:
                continue
            for setting in know.error_settings:
                if callee not in setting.match:
                    continue
                value = call.kwargs.get(setting.kwarg)
                if not _setting_active(setting, value):
                    continue
                tools = _tools_named_in(project, call, facts) or (
                    writers if setting.when == "absent_or_continue" else []
                )
                tools = [t for t in tools if t in writers]
                if tools:
                    result.append(
                        SettingUse(
                            Location(facts.path, (value.span if value else None) or call.span),
                            setting.text,
                            f"{setting.kwarg}={value.text}" if value else call.text,
                            tools,
                            counted_writes(tools[0], project.catalog),
                        )
                    )
        for assignment in facts.attribute_sets:
            owner, _, attr = assignment.target.rpartition(".")
            if attr != "handle_tool_error" or is_off(assignment.value):
                continue
            tool = by_name.get(owner.rsplit(".", 1)[-1])
            if tool is not None:
                result.append(
                    SettingUse(
                        Location(facts.path, assignment.span),
                        "`handle_tool_error=True` sends the `ToolException` text to the model",
                        f"{assignment.target} = {assignment.value.text}",
                        [tool],
                        counted_writes(tool, project.catalog),
                    )
                )
    return result


def _setting_active(setting: Setting, value: Value | None) -> bool:
    if setting.when == "absent_or_continue":
        return value is None or value.string() == "continue"
    if value is None:
        return False
    if setting.when == "is_true":
        return value.is_true()
    # true_or_exception: True, an exception class or a tuple of them
    return value.is_true() or value.kind in {"name", "attr", "list"}


def _tools_named_in(project: ProjectModel, call: Call, facts: ModuleFacts) -> list[ToolFacts]:
    tools: list[ToolFacts] = []
    for value in (*call.args, *call.kwargs.values()):
        elements = value.elements if value.kind == "list" else [value]
        for element in elements:
            target = project.project_function(element.qualname, facts)
            tool = project.tool_for_function(target) if target else None
            if tool is not None and tool not in tools:
                tools.append(tool)
    made = next((t for t in project.tools if t.site == Location(facts.path, call.span)), None)
    if made is not None and made not in tools:
        tools.append(made)
    return tools


@dataclass
class DefaultErrorText:
    tool: ToolFacts
    effect: Effect
    text: str


def _default_error_texts(project: ProjectModel) -> Iterable[DefaultErrorText]:
    know = project.catalog.checklist
    masked = _fastmcp_masked(project)
    result: list[DefaultErrorText] = []
    for tool in project.tools:
        if tool.guarded is not None or tool.schema_only or tool.form in {"lowlevel", "schema-dict"}:
            continue
        default = know.framework_errors.get(tool.framework)
        if not default:
            continue
        if tool.framework == "mcp" and masked:
            continue
        opt_outs = default.get("opt_out_kwargs") or {}
        if any(k in tool.options for k in opt_outs):
            continue
        for effect in counted_writes(tool, project.catalog):
            if not _handled_in_tool(project, tool, effect):
                result.append(DefaultErrorText(tool, effect, default.get("text", "")))
                break
    return result


def _fastmcp_masked(project: ProjectModel) -> bool:
    for facts in project.modules.values():
        for call in facts.calls:
            value = call.kwargs.get("mask_error_details")
            if value is not None and value.is_true():
                return True
    return False


def _handled_in_tool(project: ProjectModel, tool: ToolFacts, effect: Effect) -> bool:
    """The tool catches errors around the effect itself (broadly, or the timeout)."""
    know = project.catalog.checklist
    first = effect.chain[0].location if effect.chain else None
    for qualname in tool.functions:
        fn: Function | None = project.function(qualname)
        if fn is None or first is None:
            continue
        call = next((c for c in project.calls_in(qualname) if c.span == first.span), None)
        if call is None:
            continue
        for handler in fn.handlers:
            block = next((t for t in fn.tries if t.try_id == handler.try_id), None)
            if block is None or not (block.body_order[0] <= call.order < block.body_order[1]):
                continue
            broad = not handler.caught or any(c in know.broad_exceptions for c in handler.caught)
            timeout = any(know.is_timeout(c) for c in handler.caught)
            if not (broad or timeout) or (handler.reraises and not handler.returns):
                continue
            entry = project.functions.get(qualname)
            if entry is not None and entry[1].language != "python" and not handler.returns:
                continue  # ``throw new Error(`...${err}`)``: the framework answers it
            return True
    return False


class ObservationSites(Judgement[tuple[ObservationSite, ...]]):
    produces = (
        "the functions whose answers reach the model: tools, their wrappers and helpers, executors"
    )

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[ObservationSite, ...]:
        return tuple(_observation_sites(project))


class RawObservations(Judgement[tuple[RawObservation, ...]]):
    needs = (*Judgement.needs, ObservationSites)
    produces = "raw exception text in what those functions return or send to the model"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[RawObservation, ...]:
        return tuple(_raw_observations(project))


class UnstructuredErrors(Judgement[tuple[UnstructuredError, ...]]):
    needs = (*Judgement.needs, ObservationSites, RawObservations)
    produces = "error results sent to the model without a code or a retryable flag"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[UnstructuredError, ...]:
        return tuple(_unstructured_errors(project))


class ErrorHandlerSettings(Judgement[tuple[SettingUse, ...]]):
    produces = "framework settings that hand raw tool errors to the model"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[SettingUse, ...]:
        return tuple(_error_handler_settings(project))


class DefaultErrorTexts(Judgement[tuple[DefaultErrorText, ...]]):
    produces = "frameworks whose default error handling sends exception text to the model"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[DefaultErrorText, ...]:
        return tuple(_default_error_texts(project))
