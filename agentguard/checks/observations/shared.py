"""Q6 judgement, shared by AG601 and AG602: where a tool's output reaches the model, raw
exception text in it, and error results without a code or a retryable flag. Reads facts
only (handlers, their raw-error uses, try blocks, effect summaries)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from agentguard.checks.timeouts.shared import SettingUse, is_off, says_outcome_unknown, try_block
from agentguard.diagnostics import Confidence, Location
from agentguard.facts.module_facts import (
    Call,
    Function,
    Handler,
    ModuleFacts,
    RawErrorUse,
    Value,
)
from agentguard.knowledge.checklist import Knowledge, Setting
from agentguard.project.counted_writes import counted_writes, counts_as_write
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect, ToolFacts


@dataclass
class ObservationSite:
    """A function whose return value or messages reach the model: a tool or an executor."""

    function: Function
    facts: ModuleFacts
    tool: ToolFacts | None
    role: str  # tool | wrapper | executor | helper (a function whose result a tool returns)


def observation_sites(project: ProjectModel) -> list[ObservationSite]:
    sites: dict[str, ObservationSite] = {}
    for tool in project.tools:
        for qualname in tool.functions:
            entry = project.functions.get(qualname)
            if entry is None:
                continue
            fn, facts = entry
            sites.setdefault(qualname, ObservationSite(fn, facts, tool, "tool"))
            for dec in fn.decorators:
                target = project.project_function(dec.qualname, facts)
                decorator = project.function(target) if target else None
                if decorator is None:
                    continue
                for nested in decorator.nested:
                    inner = project.functions.get(nested)
                    if inner is not None and nested not in sites:
                        sites[nested] = ObservationSite(inner[0], inner[1], None, "wrapper")
    for executor in project.ledger_index().executors:
        entry = project.functions.get(executor.function)
        if entry is not None and executor.function not in sites:
            sites[executor.function] = ObservationSite(entry[0], entry[1], None, "executor")
    for site in [s for s in sites.values() if s.role == "tool"]:
        for helper in _returned_helpers(project, site):
            if helper not in sites:
                fn, facts = project.functions[helper]
                sites[helper] = ObservationSite(fn, facts, site.tool, "helper")
    result = [sites[q] for q in sorted(sites)]
    return result


def _returned_helpers(project: ProjectModel, site: ObservationSite) -> list[str]:
    """Project functions whose result the tool returns: ``return await make_request(...)``
    or ``data = make_request(...)`` then ``return json.dumps(data)``. What the helper
    returns from its ``except`` handlers reaches the model too."""
    fn, facts = site.function, site.facts
    held: dict[str, list[str]] = {}  # local name -> helpers whose result it holds
    for assignment in facts.assignments:
        if assignment.function == fn.qualname and assignment.value.kind in {"call", "other"}:
            held.setdefault(assignment.target, []).extend(assignment.value.calls)
    found: list[str] = []
    for value in fn.returns:
        callees = [] if value.kind not in {"call", "other"} else value.calls[:1]
        if value.kind == "other" and not value.text.startswith("await "):
            callees = []
        for name in value.names:
            callees += held.get(name, [])
        for callee in callees:
            target = project.project_function(callee.replace("()", ""), facts)
            if target and target != fn.qualname and target in project.functions:
                found.append(target)
    return list(dict.fromkeys(found))


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


def raw_observations(project: ProjectModel) -> list[RawObservation]:
    result: list[RawObservation] = []
    for site in observation_sites(project):
        for handler in site.function.handlers:
            found = _first_raw(project, site, handler)
            if found is not None:
                result.append(found)
    return result


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
    if handler.tainted_names:
        tainted = set(handler.tainted_names)
        for value in site.function.returns:
            if value.span is None or value.span.line <= handler.span.line:
                continue
            if (tainted & set(value.names) and value.kind != "name") or value.text in tainted:
                use = RawErrorUse(
                    f"`{sorted(tainted & set(value.names))[0]}` (set from the exception)",
                    "return",
                    value.span,
                    None,
                    value.text,
                )
                return RawObservation(
                    site,
                    use,
                    Location(site.facts.path, value.span),
                    "the tool's return value",
                    Confidence.MEDIUM,
                )
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


def _error_helper_return(
    project: ProjectModel, site: ObservationSite, handler: Handler
) -> RawObservation | None:
    """``return format_error(e)`` where the project helper returns ``str(e)``/``f"{e}"``."""
    if not handler.name:
        return None
    for value in handler.returns:
        if value.kind != "call" or value.span is None:
            continue
        target = project.project_function(value.qualname, site.facts)
        helper = project.function(target) if target else None
        if helper is None:
            continue
        params = [p for p in helper.params if p not in {"self", "cls"}]
        passed = [
            params[i]
            for i, arg in enumerate(value.call_args)
            if i < len(params) and arg.kind == "name" and arg.text == handler.name
        ]
        passed += [k for k, arg in value.call_kwargs.items() if arg.text == handler.name]
        for param in passed:
            for returned in helper.returns:
                if _formats(returned, param):
                    use = RawErrorUse(
                        f"`{helper.name}({param})` returns its text",
                        "return",
                        value.span,
                        helper.qualname,
                        value.text,
                    )
                    return RawObservation(
                        site,
                        use,
                        Location(site.facts.path, value.span),
                        "the tool's return value",
                        Confidence.MEDIUM,
                    )
    return None


def _formats(value: Value, param: str) -> bool:
    if param not in value.names:
        return False
    if value.kind == "fstring":
        return True
    stack = [value, *value.items.values()]
    while stack:
        current = stack.pop()
        if current.kind == "fstring" and param in current.names:
            return True
        if current.kind == "call" and current.qualname in {"str", "repr"}:
            if current.call_args and current.call_args[0].text == param:
                return True
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


def unstructured_errors(project: ProjectModel) -> Iterator[UnstructuredError]:
    know = project.catalog.checklist
    raw_lines = {(r.location.path, r.location.span.line) for r in raw_observations(project)}
    for site in observation_sites(project):
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


def error_handler_settings(project: ProjectModel) -> list[SettingUse]:
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


def default_error_texts(project: ProjectModel) -> list[DefaultErrorText]:
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
            if (broad or timeout) and not (handler.reraises and not handler.returns):
                return True
    return False
