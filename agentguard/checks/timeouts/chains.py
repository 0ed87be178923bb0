"""Where a timeout raised by a write goes: the handlers it meets on its way from the sink up
the call chain to the tool, innermost first, and what the first one that catches it (and any
that catch what that one raises instead) answers.

A timeout is caught by a handler naming a timeout class, a broader class that includes one
(``httpx.RequestError``, ``requests.RequestException``, a DB ``OperationalError``: the
catalogue's ``transport_errors``), or a catch-all when a timeout is set on the way to the
sink (``timeout=``, a client built with one, ``asyncio.wait_for``). A handler may sit in the
tool, in any helper between the tool and the sink, in a ``@contextmanager`` whose
``yield`` wraps the caller's ``with`` block, or in a decorator's wrapper around the tool. A handler that re-raises passes the timeout on;
one that raises another error passes that on, and an outer handler may still say "outcome
unknown" for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from agentguard.diagnostics import StepKind
from agentguard.facts.module_facts import Call, Function, Handler, ModuleFacts, TryBlock, Value
from agentguard.knowledge.checklist import Knowledge
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect

# How a handler catches the timeout.
TIMEOUT, TRANSPORT, CATCH_ALL = "timeout", "transport", "catch-all"
POLL = "poll"  # not a handler: a polling deadline reported as a failure (polling.py)


@dataclass
class Frame:
    """One function on the way from the tool to the sink, and its call on that way (the
    sink call itself in the last frame)."""

    qualname: str
    fn: Function
    facts: ModuleFacts
    call: Call


@dataclass
class Guard:
    """A ``try`` whose body holds a frame's call: its own, or a context manager's around
    the ``yield`` that wraps the caller's ``with`` block."""

    block: TryBlock
    fn: Function
    facts: ModuleFacts
    context_manager: bool = False


@dataclass
class Caught:
    """The handler that answered a timeout of the write as a plain or retryable failure."""

    depth: int  # index of the frame whose call the handler guards
    guard: Guard
    handler: Handler
    how: str  # timeout | transport | catch-all
    caught: list[str]  # the classes named that catch it
    caught_text: str  # the same for a message, with what a broader class includes
    outcome: str  # plain | retry
    detail: str


def frames_of(project: ProjectModel, start: list[str], effect: Effect) -> list[Frame] | None:
    """The frames from the first of ``start`` whose call begins ``effect``'s chain down to
    the sink call, or None when the chain cannot be followed call by call."""
    calls = [s for s in effect.chain if s.kind is StepKind.CALL]
    frames: list[Frame] = []
    qualname: str | None = None
    if calls:
        first = calls[0].location
        for candidate in start:
            if first is not None and _call_at(project, candidate, first.path, first.span):
                qualname = candidate
                break
    elif effect.function in start:
        qualname = effect.function
    for index, step in enumerate(calls):
        if qualname is None or step.location is None:
            return None
        call = _call_at(project, qualname, step.location.path, step.location.span)
        if call is None:
            return None
        fn, facts = project.functions[qualname]
        frames.append(Frame(qualname, fn, facts, call))
        targets = [t for c, t in project.call_edges(qualname) if c.span == call.span]
        # ``self._safe_call(call_fn)``: the helper and the function handed to it are both
        # reached from the one call; the chain goes on in the one holding its next step
        following = calls[index + 1].location if index + 1 < len(calls) else None
        qualname = next(
            (
                t
                for t in targets
                if (
                    _call_at(project, t, following.path, following.span) is not None
                    if following is not None
                    else t == effect.function
                )
            ),
            targets[0] if targets else None,
        )
    if qualname is None or qualname != effect.function or qualname not in project.functions:
        return None
    fn, facts = project.functions[qualname]
    frames.append(Frame(qualname, fn, facts, effect.call))
    return frames


def _call_at(project: ProjectModel, qualname: str, path: str, span: object) -> Call | None:
    entry = project.functions.get(qualname)
    if entry is None or entry[1].path != path:
        return None
    return next((c for c in project.calls_in(qualname) if c.span == span), None)


def guards(
    project: ProjectModel, know: Knowledge, frame: Frame, outermost: bool = False
) -> list[Guard]:
    """The ``try`` blocks around the frame's call, innermost first, with the context
    managers' error-mapping blocks at the place of their ``with``; for the outermost frame
    (the tool), then the blocks of the decorators that wrap it."""
    order = frame.call.order
    found: list[tuple[tuple[int, int], Guard]] = []
    for block in frame.fn.tries:
        if block.body_order[0] <= order < block.body_order[1]:
            found.append(
                ((block.span.line, block.span.column), Guard(block, frame.fn, frame.facts))
            )
    for with_block in frame.fn.withs:
        if not (with_block.body_order[0] <= order < with_block.body_order[1]):
            continue
        for span in with_block.item_spans:
            item = next((c for c in project.calls_in(frame.qualname) if c.span == span), None)
            target = project.call_target(item, frame.fn, frame.facts) if item else None
            entry = project.functions.get(target) if target else None
            if entry is None or not any(
                d.qualname in know.context_managers for d in entry[0].decorators
            ):
                continue
            key = (with_block.span.line, with_block.span.column)
            for block in entry[0].tries:
                if block.yields:
                    found.append((key, Guard(block, entry[0], entry[1], context_manager=True)))
    found.sort(key=lambda pair: pair[0], reverse=True)
    result = handed_guards(project, frame) + [guard for _, guard in found]
    return result + decorator_guards(project, frame) if outermost else result


def handed_guards(project: ProjectModel, frame: Frame) -> list[Guard]:
    """The ``try`` blocks of a project helper the frame's call hands a function to, around
    the helper's call of it (``self._safe_call(call_fn)`` with ``def _safe_call(self, f):
    try: return f() except ...``): the helper handles the errors of what it runs."""
    call = frame.call
    handed: list[int | str] = [i for i, a in enumerate(call.args) if a.kind == "name"]
    handed += [k for k, v in call.kwargs.items() if v.kind == "name"]
    if not handed:
        return []
    target = project.call_target(call, frame.fn, frame.facts)
    entry = project.functions.get(target) if target else None
    if target is None or entry is None:
        return []
    helper, facts = entry
    params = [p for p in helper.params if p not in {"self", "cls"}]
    names = {
        params[h] if isinstance(h, int) else h
        for h in handed
        if (isinstance(h, int) and h < len(params)) or h in helper.params
    }
    result: list[Guard] = []
    for inner in project.calls_in(target):
        if inner.callee not in names:
            continue
        result += _wrapping_guards(helper, facts, inner)
    return result


def _wrapping_guards(helper: Function, facts: ModuleFacts, call: Call) -> list[Guard]:
    """The ``try`` blocks of a helper around its call of what it was handed, innermost
    first: they handle the errors of the caller's call, as a context manager would."""
    return [
        Guard(block, helper, facts, context_manager=True)
        for block in sorted(helper.tries, key=lambda b: b.span, reverse=True)
        if block.body_order[0] <= call.order < block.body_order[1]
    ]


def decorator_guards(project: ProjectModel, frame: Frame) -> list[Guard]:
    """The ``try`` blocks of a project decorator's wrapper around its call of the function
    it wraps (``@handle_errors``: ``try: return func(*args, **kwargs) except ...``), the
    innermost decorator first."""
    result: list[Guard] = []
    for decorator in reversed(frame.fn.decorators):
        target = project.project_function(decorator.qualname, frame.facts)
        entry = project.functions.get(target) if target else None
        if entry is None:
            continue
        outer, facts = entry
        wrapped = set(outer.params)
        pending = list(outer.nested)
        while pending:
            qualname = pending.pop(0)
            inner = project.functions.get(qualname)
            if inner is None:
                continue
            wrapper = inner[0]
            wrapped |= set(wrapper.params)  # a decorator factory's decorator takes the function
            pending += wrapper.nested
            for call in project.calls_in(qualname):
                if call.callee not in wrapped or "." in call.callee:
                    continue
                result += _wrapping_guards(wrapper, facts, call)
    return result


def handlers_of(guard: Guard) -> list[Handler]:
    return [h for h in guard.fn.handlers if h.try_id == guard.block.try_id]


def is_catch_all(know: Knowledge, handler: Handler) -> bool:
    return not handler.caught or any(c in know.broad_exceptions for c in handler.caught)


def catches_timeout(
    project: ProjectModel, know: Knowledge, handler: Handler, frames: list[Frame], depth: int
) -> tuple[str, list[str], str] | None:
    """How ``handler`` catches a timeout of the call it guards in ``frames[depth]``: the
    kind, the classes it names that catch it, and that as text for a message."""
    named = [c for c in handler.caught if know.is_timeout(c)]
    if named:
        return TIMEOUT, named, ", ".join(f"`{c}`" for c in named)
    if not handler.caught and frames[depth].facts.language != "python":
        # ``catch (err) { if (err.code === "ETIMEDOUT") ... }``: it tells the timeout apart
        markers = sorted({s for s in handler.strings if s in know.catch_markers})
        if markers:
            shown = " or ".join(f"`{m}`" for m in markers)
            return TIMEOUT, markers, f"every error (testing for {shown})"
    broader = [c for c in handler.caught if know.includes_timeout(c)]
    if broader:
        text = ", ".join(
            f"`{c}` (which includes {_shown(know.includes_timeout(c))})" for c in broader
        )
        return TRANSPORT, broader, text
    if is_catch_all(know, handler):
        setting = explicit_timeout(project, know, frames[depth:])
        if setting:
            names = ", ".join(f"`{c}`" for c in handler.caught) or "every exception"
            return CATCH_ALL, list(handler.caught), f"{names} around {setting}"
    return None


def _shown(name: str | None) -> str:
    """A class name in backticks, a description as it is."""
    text = name or ""
    return f"`{text}`" if text and " " not in text else text


def explicit_timeout(project: ProjectModel, know: Knowledge, frames: list[Frame]) -> str | None:
    """A timeout set on the way to the sink: a ``timeout=`` on a call of the chain, a
    deadline call or block around one, or a client built with a timeout for the sink."""
    for frame in frames:
        call = frame.call
        if frame.facts.language != "python":
            # an options object's fields, written as they are there (a trailing options
            # object is the call's keywords too)
            found = _option_deadline(project, know, frame, call.args)
            if found:
                return found
        else:
            setting = _timeout_set(know, call.kwargs)
            if setting is not None:
                return f"a call with `{setting[0]}={setting[1].text}`"
        for other in project.calls_in(frame.qualname):
            if other.callee in know.deadline_calls and other.span.encloses(call.span):
                return f"`{other.callee}(...)`"
        for with_block in frame.fn.withs:
            if with_block.body_order[0] <= call.order < with_block.body_order[1] and any(
                c in know.deadline_calls for c in with_block.item_callees
            ):
                return f"a `{' '.join(with_block.item_callees)}` block"
    sink = frames[-1]
    client = _client_setting(project, know, sink)
    if client:
        return f"a client built with `{client}`"
    written = sink.call.text.split("(", 1)[0].strip()
    receiver = written.rsplit(".", 1)[0] if "." in written else ""
    setter = _deadline_set_on(project, know, sink, receiver) if receiver else None
    if setter:
        return f"a deadline set with `{setter}`"
    return _default_deadline(project, know, sink)


def _default_deadline(project: ProjectModel, know: Knowledge, sink: Frame) -> str | None:
    """The deadline the sink's library sets when the code sets none (httpx's 5 s, aiohttp's
    5 minutes, the OpenAI and Anthropic clients' 10 minutes): a catch-all around it catches
    that timeout too. None when the code turns it off (``timeout=None`` on the call or the
    client)."""
    callee = project.resolve_callee(sink.call, sink.fn, sink.facts)
    text = next(
        (t for glob, t in know.default_deadlines.items() if fnmatchcase(callee, glob)), None
    )
    if text is None:
        return None
    if any(is_off(v) for n, v in sink.call.kwargs.items() if n in know.timeout_kwargs):
        return None
    for value in _client_values(project, sink):
        if value.kind == "call" and any(
            is_off(v) for n, v in value.call_kwargs.items() if n in know.timeout_kwargs
        ):
            return None
    return text


def _client_setting(project: ProjectModel, know: Knowledge, frame: Frame) -> str | None:
    """The timeout the sink's receiver was built with (``client = httpx.Client(timeout=30)``,
    ``async with httpx.AsyncClient(timeout=30.0) as client``, ``self._http = ...`` in the
    class), if any."""
    for value in _client_values(project, frame):
        if value.kind != "call":
            continue
        setting = _timeout_set(know, value.call_kwargs)
        if setting is not None:
            return f"{setting[0]}={setting[1].text}"
        if frame.facts.language != "python":
            # ``axios.create({timeout: 5000})``, ``new Client({timeout})``
            for options in value.call_args:
                setting = _timeout_set(know, options.items) if options.kind == "dict" else None
                if setting is not None:
                    return f"{setting[0]}: {setting[1].text}"
    return None


def _timeout_set(know: Knowledge, given: Mapping[str, Value]) -> tuple[str, Value] | None:
    """The first timeout ``given`` sets (a keyword or an options field), as the code writes
    them: the catalogue's names are a set, whose order would be the hash seed's."""
    return next(
        (
            (name, value)
            for name, value in given.items()
            if name in know.timeout_kwargs and not is_off(value)
        ),
        None,
    )


def _option_deadline(
    project: ProjectModel, know: Knowledge, frame: Frame, args: list[Value]
) -> str | None:
    """A deadline in a TypeScript or JavaScript call's options object: a timeout field
    (axios' ``{timeout: 5000}``), or a signal that fires after a delay
    (``AbortSignal.timeout(ms)``, a controller a timer aborts)."""
    for options in args:
        if options.kind != "dict":
            continue
        setting = _timeout_set(know, options.items)
        if setting is not None:
            return f"a call with `{setting[0]}: {setting[1].text}`"
        for name, signal in options.items.items():
            if name not in know.signal_fields:
                continue
            found = _timed_signal(project, know, frame, signal)
            if found:
                return found
    return None


def _timed_signal(
    project: ProjectModel, know: Knowledge, frame: Frame, signal: Value
) -> str | None:
    """Whether an abort signal fires after a delay: made by ``AbortSignal.timeout(ms)``
    (there or in the local it is read from), or a controller's ``signal`` whose ``abort()``
    a timer calls in the same function."""
    if signal.kind == "call" and (signal.qualname or "") in know.signal_deadlines:
        return f"`{signal.qualname}(...)`"
    root = signal.chain.root if signal.chain is not None else ""
    if not root or not root.isidentifier():
        return None
    for assignment in project.local_assignments(frame.facts, frame.qualname, root):
        made = assignment.value
        if made.kind == "call" and (made.qualname or "") in know.signal_deadlines:
            return f"`{made.qualname}(...)`"
    for other in project.calls_in(frame.qualname):
        if other.callee in know.abort_timers and f"{root}.abort(" in other.text:
            return f"an `AbortController` aborted by `{other.callee}`"
    return None


def _client_values(project: ProjectModel, frame: Frame) -> list[Value]:
    """What the sink's receiver was bound to: in the function, in any method of its class
    (and of the class's project bases), or as a module's variable."""
    written = frame.call.text.split("(", 1)[0].strip()
    receiver = written.rsplit(".", 1)[0] if "." in written else ""
    if not receiver:
        return []
    values: list[Value] = [
        a.value for a in project.local_assignments(frame.facts, frame.qualname, receiver)
    ]
    if receiver.startswith("self."):
        for method, facts in _class_methods(project, frame):
            values += [a.value for a in project.local_assignments(facts, method, receiver)]
    held = project.held_value(receiver, frame.fn, frame.facts)
    if held is not None:
        values.append(held)  # a module's client, imported or its own
    return values


def _class_methods(project: ProjectModel, frame: Frame) -> list[tuple[str, ModuleFacts]]:
    """The methods of the frame's class and of its project base classes, wherever each is
    written: where ``self``'s client may be built or given its deadline."""
    if not frame.fn.class_name:
        return []
    result: list[tuple[str, ModuleFacts]] = []
    for cls in project.lineage(frame.fn.class_name):
        entry = project.classes.get(cls)
        if entry is None:
            continue
        for method in entry[0].methods:
            held = project.functions.get(method)
            if held is not None:
                result.append((method, held[1]))
    if not result:  # a class the index does not name: its methods in this module
        result = [
            (m.qualname, frame.facts)
            for m in frame.facts.functions.values()
            if m.class_name == frame.fn.class_name
        ]
    return result


def _deadline_set_on(
    project: ProjectModel, know: Knowledge, frame: Frame, receiver: str
) -> str | None:
    """A deadline set on the receiver, or on a socket it holds, after it was built:
    ``self.sock.settimeout(15)`` in any method of the class, ``smtp.sock.settimeout(5)`` in
    the function or at module level."""
    holders: list[str | None] = [frame.qualname, None]
    if receiver.split(".", 1)[0] in {"self", "cls"}:
        holders += [method for method, _ in _class_methods(project, frame)]
    for holder in holders:
        calls = (
            project.calls_in(holder)
            if holder is not None
            else [c for c in frame.facts.calls if c.function is None]
        )
        for call in calls:
            on = call.receiver or ""
            if not (on == receiver or on.startswith(f"{receiver}.")):
                continue  # set on the receiver or on what it holds (``smtp.sock``)
            if call.method not in know.timeout_setters:
                continue
            given = call.args[0] if call.args else next(iter(call.kwargs.values()), None)
            if given is not None and not is_off(given):
                return f"{call.text.split('(', 1)[0]}({given.text})"
    return None


def is_off(value: Value) -> bool:
    return value.kind == "const" and value.const in (None, False, 0)


def catches_raised(project: ProjectModel, know: Knowledge, handler: Handler, raised: str) -> bool:
    """Whether ``handler`` catches the error an inner handler raised in the timeout's place
    (by its class, a base of it the project defines, or everything)."""
    if is_catch_all(know, handler):
        return True
    names = {raised, raised.rsplit(".", 1)[-1]}
    entry = project.classes.get(raised)
    if entry is not None:
        for base in project.class_bases(entry[0]):
            names |= {base, base.rsplit(".", 1)[-1]}
    return any(c in names or c.rsplit(".", 1)[-1] in names for c in handler.caught)


def says_outcome_unknown(know: Knowledge, handler: Handler) -> bool:
    texts = [*handler.strings, *(v.text for v in (*handler.returns, *handler.raises))]
    if any(know.uncertain_words.search(t) for t in texts):
        return True
    if any(know.uncertain_exception.search(v.qualname or v.text) for v in handler.raises):
        return True
    if any(know.reconcile_call.search(c.rsplit(".", 1)[-1]) for c in handler.calls):
        return True
    return any(_says_not_retryable(know, v) for v in handler.returns)


def _says_not_retryable(know: Knowledge, value: Value) -> bool:
    items = value.items if value.kind == "dict" else {}
    if value.kind == "call" and value.call_args and value.call_args[0].kind == "dict":
        items = value.call_args[0].items
    for key in know.retry_keys:
        if key in items and items[key].kind == "const" and items[key].const is False:
            return True
    return False


def _in_retry_loop(fn: Function, block: TryBlock) -> bool:
    return any(loop.loop_id in block.loop_ids and loop.is_retry_shape for loop in fn.loops)


def judge_chain(project: ProjectModel, know: Knowledge, frames: list[Frame]) -> Caught | None:
    """The handler that answers the sink's timeout as a plain or retryable failure, walking
    the handlers around the chain from the sink up; None when no handler catches it, one
    says the outcome is unknown (or one catches what an inner one raised and says so), or a
    catch-all with no timeout set catches it (too unsure to judge)."""
    for depth in range(len(frames) - 1, -1, -1):
        for index, guard in enumerate(guards(project, know, frames[depth], depth == 0)):
            for handler in handlers_of(guard):
                how = catches_timeout(project, know, handler, frames, depth)
                if how is None:
                    if not is_catch_all(know, handler):
                        continue  # another error class: the timeout passes it by
                    if _passes_on(handler):
                        break
                    return None  # a catch-all with no timeout set: not judged
                if says_outcome_unknown(know, handler):
                    return None
                outcome = handler_outcome(know, guard.fn, guard.block, handler)
                if outcome is None:
                    if handler.reraises:
                        break  # passed on to the handlers further out
                    return None
                raised = _raised(handler, outcome)
                if raised and cleared(project, know, frames, depth, index + 1, raised):
                    return None
                return Caught(depth, guard, handler, *how, *outcome)
    return None


def _raised(handler: Handler, outcome: tuple[str, str]) -> str:
    """The error a handler raises in place of the one it caught (none when it returns)."""
    if outcome[0] != "plain" or not handler.raises or handler.returns:
        return ""
    value = handler.raises[0]
    return value.qualname or value.text.split("(", 1)[0]


def cleared(
    project: ProjectModel,
    know: Knowledge,
    frames: list[Frame],
    depth: int,
    first_guard: int,
    raised: str,
) -> bool:
    """Whether the error ``raised`` in a timeout's place around ``frames[depth]``'s call (past
    its first ``first_guard`` guards) is caught further out by a handler that says the
    outcome is unknown, or swallows it (what the tool answers then is not known here)."""
    for level in range(depth, -1, -1):
        around = guards(project, know, frames[level], level == 0)
        for guard in around[first_guard if level == depth else 0 :]:
            for handler in handlers_of(guard):
                if not catches_raised(project, know, handler, raised):
                    continue
                if says_outcome_unknown(know, handler):
                    return True
                outcome = handler_outcome(know, guard.fn, guard.block, handler)
                if outcome is None:
                    if handler.reraises:
                        break
                    return True
                raised = _raised(handler, outcome)
                if not raised:
                    return False
                break
    return False


def _passes_on(handler: Handler) -> bool:
    """``except Exception: log(...); raise``: the error goes on unchanged."""
    return handler.reraises and not handler.raises and not handler.returns


def handler_outcome(
    know: Knowledge, fn: Function, block: TryBlock, handler: Handler
) -> tuple[str, str] | None:
    """plain: the handler answers with an error; retry: the loop around it sends it again.
    A handler that re-raises what it caught and otherwise raises only error objects it was
    handed (``raise enriched from e``, ``enriched = enrich(e)`` for some classes) passes the
    error on: it builds no answer of its own."""
    if handler.reraises and not handler.returns and all(v.kind == "name" for v in handler.raises):
        return None
    if handler.returns or handler.raises:
        return "plain", (handler.returns or handler.raises)[0].text
    if handler.reraises:
        return None
    if _in_retry_loop(fn, block) and (handler.continues or not handler.breaks):
        return "retry", "the enclosing loop sends it again"
    messages = [s for s in handler.strings if " " in s.strip()]
    logs = know.log_receivers
    if messages and not any(c.split(".")[0] in logs for c in handler.calls):
        return "plain", repr(messages[0])  # result = "Timed out, try again" used later
    return None
