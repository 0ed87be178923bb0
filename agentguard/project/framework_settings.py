"""Framework settings that decide what a write tool's timeout or error becomes (Q4, Q6):
tool ``timeout=`` options, LangGraph retry policies on writing nodes, MCP client retries,
``handle_tool_error(s)=True``, ``ToolRetryMiddleware`` and frameworks' default error text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence, Location
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.knowledge.checklist import Setting

if TYPE_CHECKING:
    from agentguard.project.project_model import ProjectModel
    from agentguard.project.tool_facts import Effect, ToolFacts

BROAD = {"Exception", "BaseException", "builtins.Exception", "builtins.BaseException"}


@dataclass
class SettingUse:
    location: Location
    text: str  # what the setting does
    setting: str  # the code that sets it
    tools: list[ToolFacts] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    confidence: Confidence = Confidence.HIGH


def _risky(project: ProjectModel, tool: ToolFacts) -> list[Effect]:
    know = project.catalog.checklist
    return [e for e in tool.effects if know.counts_as_write(e, tool.name, project.catalog)]


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


def _is_off(value: Value) -> bool:
    return value.kind == "const" and value.const in (None, False, 0)


# ---------------------------------------------------------------- AG402


def timeout_retry_settings(project: ProjectModel) -> list[SettingUse]:
    know = project.catalog.checklist
    result: list[SettingUse] = []
    for tool in project.tools:
        risky = _risky(project, tool)
        if not risky or tool.guarded is not None or tool.schema_only:
            continue
        key = _framework_key(project, tool)
        for raw in know.timeout_settings:
            if raw.get("framework") != key:
                continue
            value = tool.options.get(raw.get("tool_kwarg", ""))
            if value is None or _is_off(value):
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
    writers = {t.framework: t for t in project.tools if _risky(project, t) and t.guarded is None}
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for call in facts.calls:
            if not call.kwargs:
                continue  # every setting below is a keyword argument
            for setting in know.agent_timeout_settings:
                value = call.kwargs.get(setting.kwarg)
                if value is not None and _matches(setting, call) and not _is_off(value):
                    writer = writers.get(setting.framework)
                    if writer is not None:
                        result.append(
                            SettingUse(
                                Location(facts.path, value.span or call.span),
                                setting.text,
                                f"{setting.kwarg}={value.text}",
                                [writer],
                                _risky(project, writer),
                            )
                        )
            for setting in know.mcp_client_retries:
                value = call.kwargs.get(setting.kwarg)
                if value is not None and _matches(setting, call) and not _is_off(value):
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
                if policy is None or not _default_retry_on(project, policy):
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


_LANGGRAPH_TEXT = (
    "LangGraph's default `retry_on` retries `httpx` and SDK timeouts, so the node's write is "
    "sent again after a timeout"
)


def _matches(setting: Setting, call: Call) -> bool:
    callee = call.callee.replace("()", "")
    return callee in setting.match


def _default_retry_on(project: ProjectModel, policy: Value) -> bool:
    if policy.kind != "call" or not project.catalog.checklist.retry_policy(policy.qualname):
        return False
    return "retry_on" not in policy.call_kwargs and len(policy.call_args) < 6


def _node_effects(project: ProjectModel, qualname: str) -> list[Effect]:
    name = qualname.rsplit(".", 1)[-1]
    return [
        e
        for e in project.effects_of(qualname)
        if project.catalog.checklist.counts_as_write(e, name, project.catalog)
    ]


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
    if policy is None or not _default_retry_on(project, policy):
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
            if tool is not None and _risky(project, tool):
                tools.append(tool)
                effects += _risky(project, tool)
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


# ---------------------------------------------------------------- AG603


def error_handler_settings(project: ProjectModel) -> list[SettingUse]:
    know = project.catalog.checklist
    result: list[SettingUse] = []
    writers = [t for t in project.tools if _risky(project, t) and t.guarded is None]
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
                            _risky(project, tools[0]),
                        )
                    )
        for assignment in facts.attribute_sets:
            owner, _, attr = assignment.target.rpartition(".")
            if attr != "handle_tool_error" or _is_off(assignment.value):
                continue
            tool = by_name.get(owner.rsplit(".", 1)[-1])
            if tool is not None:
                result.append(
                    SettingUse(
                        Location(facts.path, assignment.span),
                        "`handle_tool_error=True` sends the `ToolException` text to the model",
                        f"{assignment.target} = {assignment.value.text}",
                        [tool],
                        _risky(project, tool),
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
        for effect in _risky(project, tool):
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
            broad = not handler.caught or any(c in BROAD for c in handler.caught)
            timeout = any(know.is_timeout(c) for c in handler.caught)
            if (broad or timeout) and not (handler.reraises and not handler.returns):
                return True
    return False
