"""Retry settings of a client a tool writes through: the client sends the write again.

The catalogue's ``client_retry`` entries (rules/retries.yaml) say where a client takes a
retry setting: a constructor keyword holding a settings object (``boto3.client("sqs",
config=Config(retries={...}))``), or an adapter mounted on it (``session.mount("https://",
HTTPAdapter(max_retries=Retry(allowed_methods=None)))``, with the Retry judged by the
``http_retry`` entries: only a Retry that allows POST or PATCH re-sends a write). For each
non-idempotent effect of a tool, the receiver of its call is followed to the assignment
that built it (a local, ``self.attr`` set in the class, or a module variable) and to the
mount calls on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import ModuleFacts, Value
from agentguard.knowledge.catalog import AttemptKeys, RetryConstruct
from agentguard.project.tool_facts import Effect, RetryUse, argument_at

if TYPE_CHECKING:
    from agentguard.project.tool_index import ToolIndex

_UNSAFE = {"POST", "PATCH"}


def client_retry_uses(project: ToolIndex) -> Iterator[RetryUse]:
    """One use per tool write sent through a client whose retry setting covers it."""
    # many writes go through one client: its setting is looked up once per receiver
    known: dict[tuple[str, str], tuple[RetryConstruct, Value, str] | None] = {}
    for tool in project.tools:
        for effect in tool.effects:
            if not effect.non_idempotent or not effect.function:
                continue
            key = (effect.function, effect.call.text)
            if key not in known:
                known[key] = _client_setting(project, effect)
            found = known[key]
            if found is None:
                continue
            construct, setting, path = found
            location = Location(path, setting.span or effect.site.span)
            yield RetryUse(
                kind="client",
                library=construct.library,
                location=location,
                function=effect.function,
                catches=[],
                construct=construct,
                text=setting.text,
                tool=tool.name,
                sinks=[effect.site],
            )


def _client_setting(project: ToolIndex, effect: Effect) -> tuple[RetryConstruct, Value, str] | None:
    """The retry setting of the client the effect's call is made on, if one covers it."""
    facts = project.module_of(effect.function)
    # as written (``sqs``, ``self.session``): ``Call.receiver`` may hold its resolved type
    receiver = effect.call.text.rsplit(".", 1)[0] if "." in effect.call.text else ""
    if facts is None or not receiver:
        return None
    function = project.function(effect.function)
    built = project.held_value(receiver, function, facts)
    while built is None and facts.language != "python" and "." in receiver:
        # ``slack.chat.postMessage(...)``: an SDK's namespaces hang off the client
        receiver = receiver.rsplit(".", 1)[0]
        built = project.held_value(receiver, function, facts)
    if built is None or built.kind != "call":
        return None
    construct = project.catalog.client_retries(built.qualname or "")
    if construct is None:
        return None
    if construct.mount:
        return _mounted(project, facts, effect.function, receiver, construct)
    holder = argument_at(built.call_args, built.call_kwargs, construct.setting)
    holder = _resolved(project, facts, effect.function, holder)
    if holder is not None and holder.kind == "dict" and not construct.holders:
        # ``new OpenAI({maxRetries: 5})``: the options object holds the setting itself
        setting = _resolved(
            project, facts, effect.function, holder.items.get(construct.requires_kwarg or "")
        )
        if setting is None or not _retries_at_all(setting, construct.attempts):
            return None
        return construct, setting, facts.path
    if holder is None or holder.kind != "call" or holder.qualname not in construct.holders:
        return None
    setting = holder.call_kwargs.get(construct.requires_kwarg or "")
    if setting is None or not _retries_at_all(setting, construct.attempts):
        return None
    return construct, holder, facts.path


def _mounted(
    project: ToolIndex,
    facts: ModuleFacts,
    function: str,
    receiver: str,
    construct: RetryConstruct,
) -> tuple[RetryConstruct, Value, str] | None:
    """``session.mount(prefix, HTTPAdapter(max_retries=Retry(...)))`` on the receiver: the
    Retry, when it lets POST or PATCH be sent again."""
    shared = receiver.startswith("self.") or "." not in function
    for call in facts.calls:
        if call.method != construct.mount or call.receiver != receiver:
            continue
        if not shared and call.function not in {function, None}:
            continue
        adapter = _resolved(
            project, facts, call.function, argument_at(call.args, call.kwargs, construct.setting)
        )
        if adapter is None or adapter.kind != "call" or adapter.qualname not in construct.holders:
            continue
        policy = _resolved(
            project, facts, call.function, adapter.call_kwargs.get(construct.requires_kwarg or "")
        )
        retry = project.catalog.retries(policy.qualname or "") if policy is not None else None
        if policy is None or retry is None or retry.kind != "http_retry":
            continue
        if _allows_writes(policy, retry):
            return construct, policy, facts.path
    return None


def _allows_writes(policy: Value, retry: RetryConstruct) -> bool:
    for name in retry.methods_kwarg:
        value = policy.call_kwargs.get(name)
        if value is None:
            continue
        if value.kind == "const" and not value.const:
            return True  # allowed_methods=None / method_whitelist=False: every method
        elements = value.elements or next(
            (a.elements for a in value.call_args if a.kind == "list"), []
        )
        return any((e.string() or "").upper() in _UNSAFE for e in elements)
    return bool(set(retry.default_methods) & _UNSAFE)


def _retries_at_all(setting: Value, keys: AttemptKeys) -> bool:
    """Whether the setting sends again: ``retries={"max_attempts": 0}`` or
    ``{"total_max_attempts": 1}`` sends once (the keys are the catalogue's ``attempts``)."""
    if setting.kind == "const":
        return bool(setting.const)
    if setting.kind != "dict":
        return True
    total = setting.items.get(keys.total) if keys.total else None
    if total is not None and isinstance(total.const, int) and total.const <= 1:
        return False
    attempts = setting.items.get(keys.retries) if keys.retries else None
    if attempts is not None and isinstance(attempts.const, int):
        mode = setting.items.get(keys.mode) if keys.mode else None
        counts_first = mode is not None and mode.string() in keys.counting_modes
        return attempts.const > (1 if counts_first else 0)
    return True


def _resolved(
    project: ToolIndex, facts: ModuleFacts, function: str | None, value: Value | None
) -> Value | None:
    """A name stands for the value bound to it (``config=retry_config``)."""
    if value is None or value.kind not in {"name", "attr"}:
        return value
    caller = project.function(function) if function is not None else None
    return project.held_value(value.text, caller, facts) or value
