"""The project model's data: tools, declarations, effects, keys and retries.

Front ends fill these; checks read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentguard.diagnostics import Confidence, EvidenceStep, Location, StepKind
from agentguard.facts.module_facts import Call, Value
from agentguard.knowledge.catalog import RetryConstruct

SELF_NAMES = {"self", "cls"}


def self_spelled(written: str) -> str:
    """A name or attribute as the facts bind it: TypeScript's ``this.token`` is bound as
    ``self.token``."""
    return f"self.{written[5:]}" if written.startswith("this.") else written


# A parameter and the literals a branch compares it with (``method == "POST"``).
Guard = tuple[str, frozenset[str]]
REMOTE_EFFECTS = {"network_write", "payment", "message"}
# ``unknown`` (a call no catalogue entry or verb judges) is not a write: no write rule fires
# on it, and the report shows it as unknown, never as read or safe.
WRITE_EFFECTS = {"network_write", "payment", "message", "write", "destructive", "exec"}


@dataclass
class Declaration:
    """What a tool says about itself: risk, idempotency, replay (and MCP hints)."""

    source: str  # guarded | mcp-annotations | langchain-metadata | registry | manifest | schema
    location: Location
    risk: str | None = None
    idempotency: str | None = None
    replay: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent_hint: bool | None = None
    # MCP ``openWorldHint``: False when the tool touches only a closed, local world (no
    # default is assumed; it declares nothing about risk or idempotency by itself)
    open_world: bool | None = None
    has_key: bool = False
    has_reconcile: bool = False
    key: Value | None = None
    retry: Value | None = None
    fields: dict[str, Location] = field(default_factory=dict)  # where each field is written

    @property
    def declares_anything(self) -> bool:
        return any(
            v is not None
            for v in (
                self.risk,
                self.idempotency,
                self.replay,
                self.read_only,
                self.destructive,
                self.idempotent_hint,
            )
        )

    def assume_mcp_defaults(self) -> None:
        """MCP's pessimistic defaults for the hints a ``ToolAnnotations`` leaves out: not
        read-only, and then destructive and not idempotent."""
        if self.read_only is None:
            self.read_only = False
        if self.read_only is False and self.destructive is None:
            self.destructive = True
        if self.read_only is False and self.idempotent_hint is None:
            self.idempotent_hint = False

    @property
    def says_read_only(self) -> bool:
        return self.risk == "read" or self.read_only is True

    @property
    def says_idempotent(self) -> bool:
        return self.idempotency == "idempotent" or (
            self.idempotent_hint is True and self.read_only is not True
        )

    @property
    def says_write(self) -> bool:
        """The tool declares it changes something: a risk other than read, or MCP hints
        (``readOnlyHint`` false, as the spec reads a hint left out once any is given)."""
        if self.risk is not None:
            return self.risk != "read"
        if self.idempotency in {"non_idempotent", "conditional"}:
            return True
        return self.read_only is False or self.destructive is True

    @property
    def says_additive_non_idempotent(self) -> bool:
        """The tool declares, in so many words, a write that adds something each call: a
        create. ``idempotency="non_idempotent"`` on a write risk, or ``idempotentHint=False``
        written out with ``destructiveHint=False`` written out (the MCP spec's "only additive
        updates"). A destructive declaration (a delete repeats harmlessly) is none."""
        if not self.says_write or self.risk == "destructive" or self.open_world is False:
            return False
        if self.idempotency is not None:
            return self.idempotency == "non_idempotent" and self.destructive is not True
        return (
            self.idempotent_hint is False
            and self.destructive is False
            and "idempotent_hint" in self.fields
            and "destructive" in self.fields
        )


@dataclass
class KeyEvidence:
    """The idempotency key that reaches a sink and where it comes from."""

    value: Value
    # runtime | param | fresh | args_hash | scoped | unknown, or precondition: no key but an
    # ``If-Match``/``If-None-Match`` header the service refuses a repeat on
    origin: str
    detail: str = ""
    param: str | None = None
    location: Location | None = None


def shown(call: Call) -> str:
    """The call as a message names it: as written, or its shape without arguments when
    written over several lines (``service.users().drafts().create().execute``)."""
    if "\n" in call.text or len(call.text) > 120:
        return call.callee
    return call.text


@dataclass
class Effect:
    kind: str
    idempotent: bool | None
    remote: bool
    sink: str
    site: Location
    call: Call
    chain: tuple[EvidenceStep, ...]
    confidence: Confidence
    method: str | None = None
    key: KeyEvidence | None = None
    heuristic: bool = False
    function: str = ""  # qualname of the function holding the sink call
    # For an HTTP POST, what the request says about reading (python/read_posts.py):
    # mixed | weak | neutral, or "" when it says it writes (or is not a POST).
    reading: str = ""
    url_param: str | None = None  # the URL comes from this parameter of ``function``
    # the URL as written, naming attributes of ``self`` a subclass sets (read_posts.py)
    url_self: str | None = None
    # An HTTP call whose method is this parameter of ``function`` (``def _request(self,
    # method, url)``): kind ``http_deferred`` (no write yet) until a caller passes "POST".
    method_param: str | None = None
    # SQL whose text comes from this parameter of ``function`` (``def run(self, query)``),
    # directly or through a call handed it (``self._validate(query)``): each caller's
    # literal statement judges it (a ``SELECT`` reads); otherwise it stays unknown. For an
    # execution, the command it starts (``def _run(args): subprocess.run(args)``): a
    # caller's literal read-only command starts no effect.
    statement_param: str | None = None
    # The literal words of a command written before the parameter it is extended with
    # (``subprocess.run(["git", *args])`` in ``def _git(*args)``: "git", the parameter
    # ``args``): each caller's arguments from that parameter's place finish the command.
    command_head: str | None = None
    # Made only on the branch where this parameter of ``function`` (or of a caller it was
    # passed on to) equals one of these literals, upper-cased (project/branch_guards.py).
    guard: Guard | None = None

    @classmethod
    def judged(
        cls,
        call: Call,
        function: str,
        path: str,
        *,
        kind: str,
        idempotent: bool | None,
        remote: bool,
        detail: str,
        confidence: Confidence,
        sink: str | None = None,
        callee: str | None = None,
        key: KeyEvidence | None = None,
    ) -> Effect:
        """A sink no catalogue entry names, judged by a rule of the analyser: one evidence
        step at the call, saying why (``detail``)."""
        site = Location(path, call.span)
        shown_call = shown(call)
        return cls(
            kind=kind,
            idempotent=idempotent,
            remote=remote,
            sink=sink or shown_call,
            site=site,
            call=call,
            chain=(EvidenceStep(StepKind.SINK, site, callee=callee or shown_call, detail=detail),),
            confidence=confidence,
            key=key,
            heuristic=True,
            function=function,
        )

    @property
    def writes(self) -> bool:
        return self.kind in WRITE_EFFECTS

    @property
    def non_idempotent(self) -> bool:
        return self.writes and self.idempotent is not True

    @property
    def remote_write(self) -> bool:
        return self.kind in REMOTE_EFFECTS or (self.kind == "write" and self.remote)

    def describe(self) -> str:
        verb = f"{self.method} " if self.method else ""
        return f"{verb}{self.sink}".strip()

    @property
    def helpers(self) -> list[str]:
        """The project functions between the tool and the sink, as the chain's call steps
        name them (the last step is the sink's own)."""
        return [
            step.callee
            for step in self.chain[:-1]
            if step.kind is StepKind.CALL and step.callee is not None
        ]

    def route(self) -> str:
        """`requests.post` via `place`: the sink and the helpers between tool and sink."""
        text = f"`{self.describe()}`"
        if self.helpers:
            text += " via " + " -> ".join(f"`{h}`" for h in self.helpers)
        return text


@dataclass(frozen=True)
class DelegatedAgent:
    """An agent a tool runs (project/built_agents.py): where it is built, the functions of
    the tools it is given, and whether those are all of them (``complete``: none is a
    library's or in a list the scan cannot follow)."""

    site: Location
    call: Call
    functions: tuple[str, ...]
    complete: bool


@dataclass
class ToolFacts:
    name: str
    framework: str
    form: str
    path: str
    anchor: Location
    functions: list[str]
    symbol: str
    site: Location
    params: list[str] = field(default_factory=list)
    options: dict[str, Value] = field(default_factory=dict)
    declarations: list[Declaration] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    schema_only: bool = False
    description: str = ""
    # Other places defining or declaring the same tool (schema files, manifest entries).
    sources: list[Location] = field(default_factory=list)
    # A tool with no function of its own (a dispatch branch): the handler it is part of and
    # the span of its own statements, whose calls are the tool's.
    inline: tuple[str, Location] | None = None
    # An agent offered to another agent's model as a tool: the agent it runs, whose tools'
    # effects are its own.
    delegate: DelegatedAgent | None = None

    @property
    def guarded(self) -> Declaration | None:
        return next((d for d in self.declarations if d.source == "guarded"), None)

    @property
    def declaration(self) -> Declaration | None:
        return next((d for d in self.declarations if d.declares_anything), None)

    @property
    def declared_write(self) -> Declaration | None:
        """The declaration saying the tool writes, if any: evidence of a write even where
        inference finds none."""
        decl = self.declaration
        return decl if decl is not None and decl.says_write else None

    def writes(self) -> list[Effect]:
        return [e for e in self.effects if e.writes]

    def non_idempotent_writes(self) -> list[Effect]:
        return [e for e in self.effects if e.non_idempotent]

    @property
    def is_read_only(self) -> bool:
        return not self.writes()

    def unjudged(self) -> list[Effect]:
        """The calls leaving the project that nothing could judge (kind ``unknown``)."""
        return [e for e in self.effects if e.kind == "unknown"]


@dataclass
class RetryUse:
    """A construct that re-runs code: a decorator, a wrapper call or a hand-written loop."""

    kind: str  # decorator | wrapper | loop | with_retry | global | http_retry
    library: str
    location: Location
    function: str | None  # the function whose body is retried (None: module level)
    catches: list[str] | None  # named exceptions; None: every exception
    construct: RetryConstruct | None = None
    call: Call | None = None
    covered_orders: tuple[int, int] | None = None  # for loops: call orders retried
    text: str = ""
    tool: str | None = None  # the one tool a tool-scoped retry re-runs (by tool name)
    statuses: list[int] | None = None  # a loop that sends again on these HTTP statuses
    sinks: list[Location] | None = None  # a client's setting: the tool's calls it re-sends


def argument_at(call_args: list[Value], call_kwargs: dict[str, Value], ref: object) -> Value | None:
    """The value a catalogue reference points at: a keyword, else a position (negative from
    the end); then, with ``field``, that field of the options object found there."""
    found: Value | None = None
    kwargs = getattr(ref, "kwarg", ()) or ()
    for name in kwargs:
        if name in call_kwargs:
            found = call_kwargs[name]
            break
    index = getattr(ref, "arg", None)
    if found is None and index is not None and -len(call_args) <= index < len(call_args):
        found = call_args[index]
    field_name = getattr(ref, "field", None)
    if found is not None and field_name:
        if found.kind == "call":
            # an options object built by a call (``metadata=ToolMetadata(name="docs")``)
            return found.call_kwargs.get(field_name)
        return found.items.get(field_name) if found.kind == "dict" else None
    return found


@dataclass
class ArgSpec:
    arg: int | None
    kwarg: object
    field: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.kwarg, str):
            self.kwarg = (self.kwarg,)
        elif self.kwarg is None:
            self.kwarg = ()
