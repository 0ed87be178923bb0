"""What the retry rules (and AG401) share: which retries are limited to errors that are safe
to retry, and which effects a retry construct repeats."""

from __future__ import annotations

from agentguard.checks.judgement import Judgement
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect, RetryUse, ToolFacts

# What one retry construct repeats, and the tool it belongs to, if one.
Retried = tuple[list[Effect], ToolFacts | None]
# Retries that name no call of their own: a process-wide policy, an HTTP adapter's setting.
UNSCOPED_RETRIES = frozenset({"global", "http_retry"})


def only_transient(project: ProjectModel, use: RetryUse) -> bool:
    """A retry limited to errors raised before the request reached the service, or to
    statuses that say it was not processed (429, 423)."""
    if use.statuses is not None:
        return set(use.statuses) <= project.catalog.transient_statuses
    if use.catches is None or not use.catches:
        return False
    transient = project.catalog.transient_exceptions
    return all(name in transient or name.rsplit(".", 1)[-1] in transient for name in use.catches)


def retried_effects(project: ProjectModel, use: RetryUse) -> tuple[list[Effect], ToolFacts | None]:
    """The side effects a retry construct repeats, and the tool it belongs to, if one: a fact
    the retry rules and AG401 (a timeout caught inside a retry) both read."""
    if use.kind == "with_retry" and use.call is not None:
        receiver = (use.call.receiver or "").split(".")[-1]
        for tool in project.tools:
            if receiver and receiver in {
                tool.name,
                *(f.rsplit(".", 1)[-1] for f in tool.functions),
            }:
                return list(tool.effects), tool
        return [], None
    if use.tool is not None:
        named = next((t for t in project.tools if t.name == use.tool), None)
        if named is not None and use.sinks is not None:
            return [e for e in named.effects if e.site in use.sinks], named
        return (list(named.effects), named) if named else ([], None)
    if use.function is None:
        return [], None
    owner = project.tool_for_function(use.function)
    if use.kind == "loop" and use.covered_orders is not None:
        return project.effects_in_orders(use.function, use.covered_orders), owner
    return list(project.effects_of(use.function)), owner


def retried_through_tools(project: ProjectModel, use: RetryUse) -> list[tuple[ToolFacts, Effect]]:
    """For a retry in a helper no tool is (a client's ``request`` method that sends again
    on 5xx, a ``@retry`` on a shared ``_post``): each tool effect whose call chain passes
    through the code the retry re-runs, with the tool. The helper's own effects may say
    nothing (its HTTP method is a parameter); the tool's say which method it passes."""
    if (
        use.function is None
        or use.tool is not None
        or use.kind not in {"loop", "decorator", "wrapper"}
    ):
        return []
    function = project.function(use.function)
    facts = project.module_of(use.function)
    if function is None or facts is None:
        return []
    start, end = use.covered_orders or (0, 1 << 30)
    covered = {call.span for call in project.calls_in(use.function) if start <= call.order < end}
    if not covered:
        return []
    found: list[tuple[ToolFacts, Effect]] = []
    for tool in project.tools:
        if use.function in tool.functions:
            continue
        for effect in tool.effects:
            if any(
                step.location is not None
                and step.location.path == facts.path
                and step.location.span in covered
                for step in effect.chain
            ):
                found.append((tool, effect))
    return found


class RetriedEffects(Judgement[tuple[Retried | None, ...]]):
    produces = "what each retry construct repeats, in the order of the retry uses"

    @classmethod
    def judge(cls, project: ProjectModel) -> tuple[Retried | None, ...]:
        # worked out in the build, so that the rules only read effect summaries
        return tuple(
            None if use.kind in UNSCOPED_RETRIES else retried_effects(project, use)
            for use in project.retry_uses()
        )
