"""Where a finding about a tool is located: in the tool, where the user acts.

A cause found outside a tool (a sink in a helper, an ``except`` in a helper or in the
dispatcher around an inline branch) is reported in the tool: at the tool's own call into the
chain that reaches it, or at the tool's anchor when no call leads there. The cause and the
chain stay on the finding as related locations and evidence steps, so a helper shared by
twenty tools gives each tool its own finding, suppressible in that tool, and every output
can say that those findings share one cause.

Every rule reporting about a tool calls :func:`in_tool` (through ``Rule.tool_finding``) with
the place it found and uses the answer's location, related locations and steps.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from agentguard.diagnostics import EvidenceStep, Location, Span, StepKind
from agentguard.facts.module_facts import Call
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import ToolFacts

# How far a chain from a tool to a cause is followed (project functions on the way).
MAX_DEPTH = 8


@dataclass(frozen=True)
class Placement:
    """Where a finding about a tool goes (``location``, in the tool's own code), the places
    outside the tool it rests on (``related``: the cause first), and the calls from the
    tool to the cause (``steps``), empty when the cause is in the tool itself."""

    location: Location
    related: tuple[Location, ...] = ()
    steps: tuple[EvidenceStep, ...] = ()


def own_code(project: ProjectModel, tool: ToolFacts) -> list[Location]:
    """The spans of code that are the tool's own: its functions (a def, a class's run
    methods, an implementation it alone delegates to), or the dispatch branch of a tool
    with no function of its own (whose ``functions`` are what the branch calls)."""
    if tool.inline is not None:
        return [tool.anchor]
    spans = [tool.anchor]
    for qualname in tool.functions:
        entry = project.functions.get(qualname)
        if entry is not None:
            spans.append(Location(entry[1].path, entry[0].span))
    return spans


def in_own_code(project: ProjectModel, tool: ToolFacts, where: Location) -> bool:
    return any(
        loc.path == where.path and loc.span.encloses(where.span) for loc in own_code(project, tool)
    )


def _roots(project: ProjectModel, tool: ToolFacts) -> list[tuple[str, list[Call]]]:
    """The tool's own functions with the calls each makes as the tool (for a dispatch
    branch: the handler's calls inside the branch), in source order."""
    if tool.inline is not None:
        handler = tool.symbol.rsplit(":", 1)[0]
        span = tool.anchor.span
        on_lines = project.calls_on_lines(handler, span.line, span.end_line)
        calls = [c for c in on_lines if span.encloses(c.span)]
        return [(handler, sorted(calls, key=lambda c: c.order))]
    return [
        (q, sorted(project.calls_in(q), key=lambda c: c.order))
        for q in tool.functions
        if q in project.functions
    ]


def _targets(project: ProjectModel, qualname: str) -> dict[tuple[Span, int], str]:
    """The project function each call written in ``qualname`` runs, by the call's place: an
    edge's call is a copy of the written one when a runner forwards it
    (``asyncio.to_thread(helper, x)``), so it is matched by span and order, not identity."""
    edges = project.call_edges(qualname)
    # asked once per tool of a dispatch, of the same handler: kept with the edges it reads
    tables: dict[str, tuple[object, dict[tuple[Span, int], str]]]
    tables = project.remembered("call edge targets by place", dict)
    known = tables.get(qualname)
    if known is None or known[0] is not edges:
        known = tables[qualname] = (edges, {_key(call): target for call, target in edges})
    return known[1]


def _key(call: Call) -> tuple[Span, int]:
    return call.span, call.order


def call_chain(
    project: ProjectModel, tool: ToolFacts, function: str
) -> list[tuple[str, Call, str]] | None:
    """The shortest run of calls from the tool's own code into ``function``: (caller,
    call, callee) hops, the first one made by the tool. None when no call leads there."""
    seen: set[str] = set()
    queue: deque[tuple[str, list[tuple[str, Call, str]]]] = deque()
    for root, calls in _roots(project, tool):
        targets = _targets(project, root)
        for call in calls:
            target = targets.get(_key(call))
            if target is None:
                continue
            hop = [(root, call, target)]
            if target == function:
                return hop
            queue.append((target, hop))
    while queue:
        current, path = queue.popleft()
        if current in seen or len(path) >= MAX_DEPTH or current not in project.functions:
            continue
        seen.add(current)
        for call, target in sorted(project.call_edges(current), key=lambda e: e[0].order):
            hop = [*path, (current, call, target)]
            if target == function:
                return hop
            queue.append((target, hop))
    return None


def function_at(project: ProjectModel, where: Location) -> str | None:
    """The innermost project function whose body holds ``where``."""
    best: tuple[int, str] | None = None
    for qualname, (fn, facts) in project.sorted_functions():
        if facts.path == where.path and fn.span.encloses(where.span):
            size = fn.span.end_line - fn.span.line
            if best is None or size < best[0]:
                best = (size, qualname)
    return best[1] if best else None


def in_tool(
    project: ProjectModel,
    tool: ToolFacts,
    cause: Location,
    function: str | None = None,
    via: Location | None = None,
) -> Placement:
    """Where a finding of ``tool`` whose cause is at ``cause`` (in ``function``, the
    project function holding it, found from the location when not given) is located.

    In the tool's own code: there, unchanged. Otherwise at the tool's own call that
    starts the shortest chain of calls into the cause's function (for a dispatch branch
    whose cause is the dispatcher's own code, such as the ``except`` around every branch:
    the branch's first call into the project), with the cause as related location and the calls as
    evidence; failing both, at the tool's anchor. ``via``: the first call of a chain already
    known to lead from the tool to the cause (an effect's); when it is the tool's own, the
    finding goes there and no chain is searched."""
    if tool.schema_only or in_own_code(project, tool, cause):
        return Placement(cause)
    if via is not None and in_own_code(project, tool, via):
        return Placement(via, (cause,))
    function = function or function_at(project, cause)
    if function is not None:
        for root, calls in _roots(project, tool):
            if root == function:
                # The cause is in the code around the tool (a dispatcher's handler): the
                # branch's first call into the project, else its first call.
                targets = _targets(project, root)
                first = next((c for c in calls if _key(c) in targets), calls[0] if calls else None)
                where = Location(tool.path, first.span) if first else tool.anchor
                return Placement(where, (cause,))
        chain = call_chain(project, tool, function)
        if chain:
            steps = tuple(
                EvidenceStep(
                    StepKind.CALL,
                    _location(project, caller, call),
                    caller=f"`{caller.rsplit('.', 1)[-1]}`",
                    callee=f"`{callee.rsplit('.', 1)[-1]}`",
                )
                for caller, call, callee in chain
            )
            first_caller, first_call, _ = chain[0]
            return Placement(_location(project, first_caller, first_call), (cause,), steps)
    return Placement(tool.anchor, (cause,))


def _location(project: ProjectModel, caller: str, call: Call) -> Location:
    entry = project.functions.get(caller)
    path = entry[1].path if entry else ""
    return Location(path, call.span)
