"""Which fix a finding has, and how safe it is, from facts alone (no LibCST).

A fix's applicability and description depend on the finding and the project's facts (an MCP
tool gets safe hints, any other tool the unsafe ``@guarded`` decorator), never on its edits.
Computing edits parses the file with LibCST, which costs far more than the whole ``ast``
scan, so text output asks this module ("fix available (unsafe)") and only the fixer and
the formats that print edits (JSON, SARIF) build them (:func:`agentguard.engine.fix_edits.attach_fixes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Applicability, Finding

if TYPE_CHECKING:
    from agentguard.project.project_model import ProjectModel
    from agentguard.project.tool_facts import Effect, ToolFacts

ADDITIVE_KINDS = {"network_write", "payment", "message"}
KEY_FROM_RUNTIME = "current_call().idempotency_key"


@dataclass(frozen=True)
class FixOffer:
    applicability: Applicability
    description: str


@dataclass(frozen=True)
class Semantics:
    """What a tool's inferred effects say it should declare."""

    risk: str
    idempotency: str
    replay: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


def infer_semantics(effects: list[Effect]) -> Semantics:
    kinds = {e.kind for e in effects}
    idempotent = bool(effects) and all(e.idempotent is True for e in effects)
    destructive_risk = bool(kinds & {"destructive", "exec"})
    # MCP: destructiveHint=false means "only additive updates" (a POST create, a send).
    additive = all(e.kind in ADDITIVE_KINDS and e.idempotent is not True for e in effects)
    return Semantics(
        risk="destructive" if destructive_risk else "write",
        idempotency="idempotent" if idempotent else "non_idempotent",
        replay="auto" if idempotent and not destructive_risk else "never",
        read_only=not effects,
        destructive=not additive,
        idempotent=idempotent,
        open_world=any(
            e.remote or e.kind in ADDITIVE_KINDS or e.kind == "unknown" for e in effects
        ),
    )


def finding_tool(project: ProjectModel, finding: Finding) -> ToolFacts | None:
    """The code-defined tool a finding is about, in the finding's file."""
    for tool in project.tools:
        if tool.name == finding.tool and tool.path == finding.path and not tool.schema_only:
            if finding.symbol in (None, tool.symbol):
                return tool
    return None


Offer = Callable[[Finding, "ProjectModel"], "FixOffer | None"]
OFFERS: dict[str, Offer] = {}


def offer(code: str) -> Callable[[Offer], Offer]:
    def register(function: Offer) -> Offer:
        OFFERS[code] = function
        return function

    return register


def fix_offer(finding: Finding, project: ProjectModel) -> FixOffer | None:
    """The fix this finding would get, without building its edits (None: no fix)."""
    find = OFFERS.get(finding.code)
    return find(finding, project) if find is not None else None


def is_class_based(tool: ToolFacts) -> bool:
    """A tool whose entry point is a method of a class (``BaseTool._run``), not a function."""
    return not tool.functions or tool.symbol != tool.functions[0]


def guarded_methods(project: ProjectModel, tool: ToolFacts) -> list[str]:
    """The methods of a class-based tool that ``@guarded`` goes on: those the framework
    calls (``_run``, ``_arun``, ``forward``), defined on the tool's own class in its file,
    except one that only hands over to another of them (``_arun`` calling ``self._run``:
    guarding both would journal one call twice). None for a class other tools subclass:
    ``name=`` and the key would be wrong for them."""
    own = [
        qualname
        for qualname in tool.functions
        if qualname.startswith(f"{tool.symbol}.")
        and (entry := project.functions.get(qualname)) is not None
        and entry[1].path == tool.path
    ]
    simple = tool.symbol.rsplit(".", 1)[-1]
    for other, _ in project.classes.values():
        if other.qualname != tool.symbol and any(
            base == tool.symbol or base == simple or base.endswith(f".{simple}")
            for base in other.bases
        ):
            return []
    names = {q.rsplit(".", 1)[-1] for q in own}
    return [
        qualname
        for qualname in own
        if not any(
            call.callee in {f"self.{n}" for n in names - {qualname.rsplit(".", 1)[-1]}}
            for call in project.calls_in(qualname)
        )
    ]


@offer("AG101")
def _declare_semantics(finding: Finding, project: ProjectModel) -> FixOffer | None:
    tool = finding_tool(project, finding)
    if tool is None or not tool.functions:
        return None
    if is_class_based(tool) and not guarded_methods(project, tool):
        return None
    semantics = infer_semantics(tool.writes())
    if tool.framework == "mcp":
        return FixOffer(Applicability.SAFE, "Declare the tool's MCP annotations")
    return FixOffer(
        Applicability.UNSAFE,
        f"Wrap the tool in @guarded(risk={semantics.risk!r}, idempotency="
        f"{semantics.idempotency!r}, replay={semantics.replay!r})",
    )


@offer("AG102")
def _correct_hint(finding: Finding, project: ProjectModel) -> FixOffer | None:
    parts = finding.node_text.split(":")
    kind = parts[1] if len(parts) >= 3 else ""
    if kind not in ("read-only", "idempotent") or finding_tool(project, finding) is None:
        return None
    what = "as writing" if kind == "read-only" else "as not idempotent"
    return FixOffer(Applicability.UNSAFE, f"Declare the tool {what}, as the code behaves")


@offer("AG202")
def _key_from_runtime_param(finding: Finding, project: ProjectModel) -> FixOffer | None:
    param = finding.node_text.rsplit(":", 1)[-1]
    tool = finding_tool(project, finding) if param.isidentifier() else None
    if tool is None or _reads_of(project, tool, param) > 1:
        # A parameter read beside the key (``json={"cart": cart_id}``) carries business
        # data: binding it to the runtime's key would send the key in its place.
        return None
    return FixOffer(
        Applicability.UNSAFE,
        f"Drop the `{param}` parameter and take the key from `{KEY_FROM_RUNTIME}`",
    )


def _reads_of(project: ProjectModel, tool: ToolFacts, name: str) -> int:
    """How many of the tool's call arguments, assigned and returned values read ``name``
    (a call's arguments count again in a call around it: more reads, never fewer)."""
    reads = 0
    for qualname in tool.functions:
        entry = project.functions.get(qualname)
        if entry is None:
            continue
        fn, facts = entry
        values = [
            v for call in project.calls_in(qualname) for v in (*call.args, *call.kwargs.values())
        ]
        # An assigned or returned call is counted by its arguments above.
        bound = [a.value for a in facts.assignments if a.function == qualname]
        values += [value for value in (*bound, *fn.returns) if value.kind != "call"]
        reads += sum(value.names.count(name) for value in values)
    return reads


@offer("AG203")
def _key_from_runtime_expression(finding: Finding, project: ProjectModel) -> FixOffer | None:
    if finding.node_text.endswith(":guarded-key"):
        return None
    return FixOffer(
        Applicability.UNSAFE,
        f"Take the key from `{KEY_FROM_RUNTIME}` instead of a fresh value per call",
    )


@offer("AG904")
def _idempotent_methods_only(finding: Finding, project: ProjectModel) -> FixOffer | None:
    return FixOffer(
        Applicability.SAFE, "Retry only idempotent methods after the request may have been sent"
    )


@offer("AG002")
def _remove_suppression(finding: Finding, project: ProjectModel) -> FixOffer | None:
    return FixOffer(Applicability.SAFE, "Remove the unused suppression comment")


# --------------------------------------------------------------------------- AG601

EXCEPTION_TYPE = "{type(NAME).__name__}"
# The service answered with an error status (4xx: refused; 5xx: may have acted).
HTTP_STATUS_ERRORS = frozenset(
    {"HTTPStatusError", "HTTPError", "ClientResponseError", "APIStatusError"}
)


@dataclass(frozen=True)
class StructuredError:
    """The structured error that replaces raw exception text in a tool's return value.

    ``content`` is plain words for the model: what happened, whether it may call again, what
    to do next. Where the handler names the exception, ``content`` holds the placeholder
    ``{type(<name>).__name__}`` (the type is fine to show; the message is what leaks).
    """

    code: str
    retryable: bool
    content: str
    exception_name: str | None


def structured_error(finding: Finding, project: ProjectModel) -> StructuredError | None:
    """For an AG601 finding on ``return <raw text>`` directly inside a tool's ``except``."""
    tool = finding_tool(project, finding)
    entry = project.functions.get(finding.symbol or "")
    if tool is None or entry is None or entry[0].qualname not in tool.functions:
        return None
    function = entry[0]
    handler = next(
        (
            h
            for h in sorted(function.handlers, key=lambda h: h.span, reverse=True)
            if any(u.dest == "return" and u.span == finding.span for u in h.raw_error_uses)
        ),
        None,
    )
    if handler is None:
        return None
    know = project.catalog.checklist
    writes = any(know.counts_as_write(e, tool.name, project.catalog) for e in tool.effects)
    caught = [c.replace("()", "") for c in handler.caught]
    before_send = [
        c for c in caught if c in know.before_send or c.rsplit(".", 1)[-1] in know.before_send
    ]
    timeouts = [c for c in caught if know.is_timeout(c)]
    name = tool.name
    typed = f" ({EXCEPTION_TYPE.replace('NAME', handler.name)})" if handler.name else ""
    if caught and len(before_send) == len(caught):
        return StructuredError(
            "TRANSIENT_NETWORK",
            True,
            f"{name} could not reach the service{typed}; nothing was sent. It is safe to call "
            f"{name} again in a moment.",
            handler.name,
        )
    if timeouts and writes:
        return StructuredError(
            "SIDE_EFFECT_UNCERTAIN",
            False,
            f"{name} timed out{typed} after its request may have reached the service, so it "
            f"may or may not have taken effect. Do not call {name} again for this request: "
            "that could do it twice. Tell the user it is not known yet whether it happened.",
            handler.name,
        )
    if caught and len(timeouts) + len(before_send) == len(caught):
        return StructuredError(
            "TIMEOUT",
            True,
            f"{name} timed out{typed}. It changes nothing, so it is safe to call {name} again "
            "in a moment.",
            handler.name,
        )
    answered = caught and all(c.rsplit(".", 1)[-1] in HTTP_STATUS_ERRORS for c in caught)
    if answered and writes:
        content = (
            f"{name} got an error response from the service{typed}; it may or may not have "
            f"acted. Do not call {name} again for this request; tell the user what failed."
        )
    elif answered:
        content = (
            f"{name} got an error response from the service{typed}. Check the arguments "
            "before calling it again, or tell the user what failed."
        )
    elif writes:
        content = (
            f"{name} failed unexpectedly{typed} and may already have acted. Do not call "
            f"{name} again for this request; tell the user what failed."
        )
    else:
        content = (
            f"{name} failed{typed}. Calling it again is unlikely to help; tell the user what "
            "failed."
        )
    return StructuredError("TOOL_CRASH", False, content, handler.name)


@offer("AG601")
def _structured_error(finding: Finding, project: ProjectModel) -> FixOffer | None:
    error = structured_error(finding, project)
    if error is None:
        return None
    retry = "retryable" if error.retryable else "not retryable"
    return FixOffer(
        Applicability.UNSAFE,
        f"Return a structured error ({error.code}, {retry}) instead of the exception text",
    )
