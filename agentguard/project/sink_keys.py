"""Idempotency keys: the key a sink call passes (keyword, header, option, a dict built
earlier) and where it comes from, mapped through the helpers between tool and sink."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import Sink
from agentguard.project.tool_facts import (
    SELF_NAMES,
    ArgSpec,
    KeyEvidence,
    argument_at,
)

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def local_value(
    project: ProjectIndex, name: str, fn: Function, facts: ModuleFacts, before: int
) -> Value | None:
    """What ``name`` was last bound to in ``fn`` before the call at ``before``; for a name
    a nested function neither binds nor takes, what the function it is nested in last
    binds it to (``fs = connect(url)``, then ``def write(p): fs.write_file(p)``)."""
    binder = _binder(project, name, fn, facts)
    if binder is None:
        return None
    assignments = project.local_assignments(facts, binder.qualname, name)
    if binder is not fn:
        return assignments[-1].value if assignments else None
    found: Value | None = None
    for assignment in assignments:
        if assignment.order <= before:
            found = assignment.value
    return found


def _binder(project: ProjectIndex, name: str, fn: Function, facts: ModuleFacts) -> Function | None:
    """The function whose ``name`` a use in ``fn`` sees: ``fn`` when it binds or takes the
    name (or is nested in no function), else the innermost function it is nested in that
    does; None when one of those is not in the project."""
    current = fn
    while (
        name not in current.params
        and ".<locals>." in current.qualname
        and not project.local_assignments(facts, current.qualname, name)
    ):
        outer = project.function(current.qualname.rpartition(".<locals>.")[0])
        if outer is None:
            return None
        current = outer
    return current


def closed_over_param(
    project: ProjectIndex, name: str, fn: Function, facts: ModuleFacts
) -> str | None:
    """The function whose parameter ``name`` is, for a nested function that neither binds
    nor takes it (``const doRequest = async () => fetch(url, {method})`` inside
    ``makeRequest(nsid, params, method = "GET")``): what that function's callers hand it
    decides. None when ``name`` is ``fn``'s own or no enclosing function takes it."""
    if name in SELF_NAMES:
        return None
    binder = _binder(project, name, fn, facts)
    if binder is None or binder is fn or name not in binder.params:
        return None
    return binder.qualname


def handed_in(project: ProjectIndex, name: str, fn: Function, facts: ModuleFacts) -> bool:
    """Whether ``fn``'s callers hand ``name`` in: a parameter of ``fn`` (``self`` aside),
    or one of the function it is nested in that it uses (``closed_over_param``)."""
    if name in fn.params:
        return name not in SELF_NAMES
    return closed_over_param(project, name, fn, facts) is not None


def key_for(
    project: ProjectIndex, call: Call, sink: Sink, fn: Function, facts: ModuleFacts
) -> KeyEvidence | None:
    """The idempotency key passed to a sink call, wherever the call passes it: a keyword
    (``idempotency_key=``, ``ClientToken=``, ``task_id=``), a header or option in a dict
    literal, in a dict variable built earlier (also by ``headers[...] = ...``), or inside
    ``**kwargs`` unpacked from a dict."""
    key_spec = sink.key or {}
    if key_spec.get("sql_conflict"):
        return None
    kwarg_names = key_spec.get("kwarg")
    search = _KeySearch(
        project,
        call,
        fn,
        facts,
        set(kwarg_names if isinstance(kwarg_names, list) else [kwarg_names] if kwarg_names else []),
        key_spec.get("option"),
        key_spec.get("header"),
    )
    search.from_kwargs(call.kwargs, 0)
    for unpacked in call.star_kwargs_values:
        search.from_dict(unpacked, 0)
    if key_spec.get("field"):
        # a field of an options object (Stripe's ``create(params, {idempotencyKey})``)
        options = argument_at(call.args, {}, ArgSpec(key_spec.get("arg"), ()))
        if options is not None and options.kind == "name":
            options = local_value(project, options.text, fn, facts, call.order) or options
        if options is not None and options.kind == "dict" and key_spec["field"] in options.items:
            search.candidates.append(options.items[key_spec["field"]])
    if facts.language != "python":
        # JavaScript has no keywords: headers and options travel in objects passed by position
        for passed in call.args:
            search.from_dict(passed, 0)
    if not search.candidates:
        if search.preconditions:
            # ``If-None-Match: *`` / ``If-Match: <etag>``: the service refuses a repeat
            header, value = search.preconditions[-1]
            location = Location(facts.path, value.span) if value.span else None
            return KeyEvidence(value, "precondition", f"an `{header}` precondition", None, location)
        return None
    return classify_key(project, search.candidates[-1], fn, facts, call.order)


class _KeySearch:
    """The values a sink call may pass its key in, found by ``key_for``. (A class, not two
    closures calling each other: those made a reference cycle holding the project per call,
    and the engine freezes the model, cycles and all.)"""

    def __init__(
        self,
        project: ProjectIndex,
        call: Call,
        fn: Function,
        facts: ModuleFacts,
        names: set[str],
        option: str | None,
        header: str | None,
    ) -> None:
        self.project = project
        self.call = call
        self.fn = fn
        self.facts = facts
        self.names = names
        self.option = option
        self.header = header
        self.candidates: list[Value] = []
        self.preconditions: list[tuple[str, Value]] = []  # (header, value)

    def from_kwargs(self, kwargs: dict[str, Value], depth: int) -> None:
        for name, value in kwargs.items():
            if name in self.names or self.project.catalog.key_kwargs.match(name):
                self.candidates.append(value)
        for holder in self.project.catalog.key_holders:
            if holder in kwargs:
                self.from_dict(kwargs[holder], depth)

    def from_dict(self, holder: Value, depth: int) -> None:
        if depth > 3:
            return
        project, call, fn, facts = self.project, self.call, self.fn, self.facts
        original = holder
        if holder.kind == "name":
            holder = local_value(project, holder.text, fn, facts, call.order) or holder
        if holder.kind == "dict":
            for item_key, item in holder.items.items():
                if self._is_key_name(item_key):
                    self.candidates.append(item)
                elif self.project.catalog.precondition_headers.match(item_key):
                    self.preconditions.append((item_key, item))
                elif item_key in self.project.catalog.key_holders:
                    self.from_dict(item, depth + 1)
        elif holder.kind == "call" and holder.qualname in {"dict", "builtins.dict"}:
            self.from_kwargs(holder.call_kwargs, depth + 1)
        if original.kind == "name":
            # headers built up by subscript: headers["Idempotency-Key"] = ...
            prefix = original.text + "["
            for assignment in project.local_assignments(facts, fn.qualname):
                if not assignment.target.startswith(prefix) or assignment.order > call.order:
                    continue
                name = assignment.target[len(prefix) : -1]
                if self._is_key_name(name):
                    self.candidates.append(assignment.value)
                elif self.project.catalog.precondition_headers.match(name.strip("'\"")):
                    self.preconditions.append((name.strip("'\""), assignment.value))

    def _is_key_name(self, name: str) -> bool:
        catalog, option, header = self.project.catalog, self.option, self.header
        return bool(
            catalog.key_headers.match(name)
            or catalog.key_kwargs.match(name)
            or (option and name == option)
            or (header and name.lower() == header.lower())
        )


def _injected(project: ProjectIndex, param: str) -> bool:
    """A parameter the framework fills in (``self``, a run context), never the model."""
    return param in SELF_NAMES or param in project.catalog.injected_params


def classify_key(
    project: ProjectIndex,
    value: Value,
    fn: Function,
    facts: ModuleFacts,
    before: int,
    depth: int = 0,
) -> KeyEvidence:
    location = Location(facts.path, value.span) if value.span else None
    if value.kind == "name" and depth < 3:
        param = passed_on_parameter(project, value, fn, self_passed_on=False, skip_injected=True)
        if param is not None:
            return KeyEvidence(value, "param", f"parameter `{param}`", param, location)
        local = local_value(project, value.text, fn, facts, before)
        if local is not None:
            return classify_key(project, local, fn, facts, before, depth + 1)
    text = value.text
    catalog = project.catalog
    calls = [c.replace("()", "") for c in value.calls]
    if (
        "current_call" in text
        or any(c.endswith("current_call") for c in calls)
        or (
            "idempotency_key" in value.attrs
            and any(n in {"call", "ctx", "context", "tool_call"} for n in value.names)
        )
    ):
        return KeyEvidence(value, "runtime", "built by the runtime", None, location)
    fresh = [c for c in calls if catalog.fresh_calls(c)]
    if fresh:
        return KeyEvidence(value, "fresh", f"`{fresh[0]}()` is new on every call", None, location)
    params_used = [n for n in value.names if n in fn.params and not _injected(project, n)]
    if value.kind in {"attr", "fstring", "other", "call"} and params_used and not fresh:
        only_params = all(
            n in fn.params
            or n in {"json", "hashlib", "str", "repr", "sorted", "dict", "uuid", "hash"}
            for n in value.names
        )
        hashed = any(catalog.hash_calls(c) for c in calls)
        scoped = any(catalog.scope_words.search(n) for n in value.names) or any(
            catalog.scope_words.search(a) for a in value.attrs
        )
        if hashed and only_params and not scoped:
            return KeyEvidence(value, "args_hash", "a hash of the arguments only", None, location)
        if (
            value.kind == "fstring"
            and only_params
            and not scoped
            and len(params_used) == len(set(value.names))
        ):
            return KeyEvidence(
                value,
                "param",
                f"made from parameter `{params_used[0]}`",
                params_used[0],
                location,
            )
    if any(catalog.hash_calls(c) for c in calls) and not any(
        catalog.scope_words.search(n) for n in value.names + value.attrs
    ):
        if all(
            n in fn.params
            or n
            in {
                "json",
                "hashlib",
                "str",
                "repr",
                "sorted",
                "uuid",
                "hash",
                "args",
                "kwargs",
                "arguments",
                "payload",
                "params",
            }
            for n in value.names
        ):
            return KeyEvidence(value, "args_hash", "a hash of the arguments only", None, location)
    return KeyEvidence(value, "scoped", "", None, location)


def argument_for(param: str, callee_fn: Function, call: Call) -> Value | None:
    """The argument ``call`` passes for ``callee_fn``'s parameter ``param``, if any."""
    params = [p for p in callee_fn.params if p not in SELF_NAMES]
    argument: Value | None = call.kwargs.get(param)
    if argument is None and param in params:
        index = params.index(param)
        if index < len(call.args):
            argument = call.args[index]
    return argument


@dataclass(frozen=True)
class Substitution:
    """What a caller passes for a helper's parameter: the ``argument`` written in the call
    (None when it passes nothing), and ``passed_on``, the caller's own parameter that
    argument is, when it is one: then the caller's callers decide it."""

    argument: Value | None
    passed_on: str | None


def passed_on_parameter(
    project: ProjectIndex,
    value: Value | None,
    fn: Function,
    *,
    self_passed_on: bool,
    skip_injected: bool,
) -> str | None:
    """The parameter of ``fn`` that ``value`` names, left to ``fn``'s callers.

    ``self_passed_on``: whether ``self``/``cls`` counts. It does where any name at all
    leaves the choice open (an HTTP method, an RPC operation: the callers find no string
    and judge it so); it does not where ``self`` is read as a local binding instead (a
    statement, a key). ``skip_injected``: whether a parameter the framework fills in (a
    run context, per the catalogue) is no parameter, as for a key, which must come from
    the model to say anything."""
    if value is None or value.kind != "name" or value.text not in fn.params:
        return None
    if not self_passed_on and value.text in SELF_NAMES:
        return None
    if skip_injected and value.text in project.catalog.injected_params:
        return None
    return value.text


def substitute(
    project: ProjectIndex,
    param: str,
    callee_fn: Function,
    call: Call,
    caller: Function,
    *,
    self_passed_on: bool,
    skip_injected: bool = False,
) -> Substitution:
    """The one substitution of a caller's argument for a helper's parameter ``param``:
    the argument ``call`` passes, and whether it is ``caller``'s own parameter passed on
    (the policies are ``passed_on_parameter``'s)."""
    argument = argument_for(param, callee_fn, call)
    passed_on = passed_on_parameter(
        project, argument, caller, self_passed_on=self_passed_on, skip_injected=skip_injected
    )
    return Substitution(argument, passed_on)


def map_key_through_call(
    project: ProjectIndex,
    key: KeyEvidence | None,
    callee_fn: Function,
    call: Call,
    caller: Function,
    facts: ModuleFacts,
) -> KeyEvidence | None:
    """A key that is a helper's parameter takes the caller's argument's origin."""
    if key is None or key.origin != "param" or key.param is None:
        return key
    argument = substitute(
        project, key.param, callee_fn, call, caller, self_passed_on=False, skip_injected=True
    ).argument
    if argument is None:
        return KeyEvidence(key.value, "scoped", "", None, key.location)
    return classify_key(project, argument, caller, facts, call.order)


def fresh_identity(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> str | None:
    """The call making a value new on every call (``uuid4``, the time) that names what an
    otherwise idempotent write writes: in its URL or target (``PUT /docs/{uuid4()}``), or in
    a body field naming an identity (``put_item(Item={"id": str(uuid4()), ...})``). Such a
    PUT or save makes a new thing on every call. A fresh value elsewhere in the body (an
    ``updated_at`` timestamp) leaves an overwrite an overwrite; a key header is judged by
    the key rules."""
    catalog = project.catalog
    holders = set(catalog.key_holders) - set(catalog.body_kwargs)
    target = call.args[0] if call.args else call.kwargs.get("url")
    values: list[Value] = [target] if target is not None else []
    for name, value in call.kwargs.items():
        if name in holders or catalog.key_kwargs.match(name):
            continue
        values.extend(_identity_fields(value, project, fn, facts, call.order))
    for value in call.args[1:]:
        values.extend(_identity_fields(value, project, fn, facts, call.order))
    for value in values:
        fresh = _fresh_call(project, value, fn, facts, call.order, 0)
        if fresh is not None:
            return fresh
    return None


def _identity_fields(
    value: Value, project: ProjectIndex, fn: Function, facts: ModuleFacts, before: int
) -> list[Value]:
    """The fields of a body (a dict, or a local bound to one) that name an identity: a
    key with one of the catalogue's identity words among its parts, or a camelCase ``...Id``."""
    if value.kind == "name":
        value = local_value(project, value.text, fn, facts, before) or value
    if value.kind != "dict":
        return []
    found = []
    for key, item in value.items.items():
        parts = set(key.lower().replace("-", "_").split("_"))
        if parts & project.catalog.identity_words or key.endswith("Id"):
            found.append(item)
        elif item.kind == "dict":
            found.extend(_identity_fields(item, project, fn, facts, before))
    return found


def _fresh_call(
    project: ProjectIndex, value: Value, fn: Function, facts: ModuleFacts, before: int, depth: int
) -> str | None:
    for called in value.calls:
        name = called.replace("()", "")
        if project.catalog.fresh_calls(name):
            return name
    if depth >= 2:
        return None
    for name in value.names:
        if name in fn.params:
            continue
        bound = local_value(project, name, fn, facts, before)
        if bound is not None:
            fresh = _fresh_call(project, bound, fn, facts, before, depth + 1)
            if fresh is not None:
                return fresh
    return None


def appended_after_read(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> str | None:
    """The local an otherwise idempotent write (a PUT, a save) sends after appending to
    what it read (``rows = sheet.get(...); rows.append(row); sheet.put(rows)``): a
    read-modify-write append, which a repeat appends again. None when there is none."""
    catalog = project.catalog
    values = [call.kwargs[k] for k in catalog.body_kwargs if k in call.kwargs] + call.args[1:]
    names = {n for value in values for n in value.names if n not in fn.params}
    if not names:
        return None
    calls = project.calls_in(fn.qualname)
    for name in sorted(names):
        bindings = [
            a for a in project.local_assignments(facts, fn.qualname, name) if a.order <= call.order
        ]
        if not bindings:
            continue
        appended = any(
            c.order < call.order
            and c.method in catalog.append_methods
            and (c.receiver or "").split("[", 1)[0].split(".", 1)[0] == name
            for c in calls
        ) or any(name in a.value.names for a in bindings[1:])
        first = bindings[0].value
        read = [c for c in first.calls if c.replace("()", "") not in catalog.local_shapes]
        if appended and read:
            return name
    return None
