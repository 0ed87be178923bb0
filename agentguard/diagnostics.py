"""The one diagnostic model that every front end, check, fixer and output format speaks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from enum import Enum
from operator import itemgetter
from typing import TYPE_CHECKING, Any


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Confidence(str, Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        return {"low": 0, "medium": 1, "high": 2}[self.value]


class Applicability(str, Enum):
    """How safe a fix is to apply without review (ruff's vocabulary)."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY = "display"


class _SpanType(type):
    def __call__(cls, line: int, column: int, end_line: int, end_column: int) -> Any:
        return tuple.__new__(cls, (line, column, end_line, end_column))  # type: ignore[arg-type]


class Span(tuple[int, int, int, int], metaclass=_SpanType):
    """1-based lines, 1-based columns, end exclusive (as SARIF and editors count).

    A tuple (compared, ordered and hashed as one), not a dataclass: a large project's facts
    hold over a million spans, and a tuple subclass with no ``__new__`` or ``__reduce__``
    of its own is pickled and rebuilt in C (the ``NEWOBJ`` opcode, ``tuple.__new__``),
    where a frozen dataclass ran a Python ``__init__`` per span, a third of loading facts.
    ``Span(line, column, end_line, end_column)`` builds one (through the metaclass).
    """

    __slots__ = ()

    if TYPE_CHECKING:
        line: int
        column: int
        end_line: int
        end_column: int

        def __new__(cls, line: int, column: int, end_line: int, end_column: int) -> Span: ...

    else:
        line = property(itemgetter(0))
        column = property(itemgetter(1))
        end_line = property(itemgetter(2))
        end_column = property(itemgetter(3))

    @classmethod
    def point(cls, line: int, column: int = 1) -> Span:
        return cls(line, column, line, column)

    def encloses(self, inner: Span) -> bool:
        """Whether ``inner`` lies within this span (bounds included)."""
        return self[:2] <= inner[:2] and inner[2:] <= self[2:]

    def __repr__(self) -> str:
        return f"Span(line={self[0]}, column={self[1]}, end_line={self[2]}, end_column={self[3]})"


@dataclass(frozen=True)
class Location:
    path: str  # relative to the scan root, "/"-separated
    span: Span

    def __str__(self) -> str:
        return f"{self.path}:{self.span.line}:{self.span.column}"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions of a file (end exclusive)."""

    path: str
    span: Span
    replacement: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "replacement": self.replacement,
        }


@dataclass(frozen=True)
class FixOffer:
    """The fix a finding would get, without its edits: decided by the rule from facts alone,
    so that text output names it without parsing the file with LibCST."""

    applicability: Applicability
    description: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    description: str
    edits: tuple[Edit, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability.value,
            "description": self.description,
            "edits": [e.to_dict() for e in self.edits],
        }


class StepKind(str, Enum):
    """What one link of an evidence chain is. Each kind names the fields it reads; its
    text (``EvidenceStep.label``) is rendered from them, never parsed back."""

    TOOL = "tool"  # subject: the tool's name; detail: its framework
    CALL = "call"  # caller calls callee (a project function on the way to a sink)
    SINK = "sink"  # callee: the sink called; detail: why it counts, when guessed
    REQUEST = "request"  # detail: what the HTTP request reads as
    PATCH = "patch"  # caller: the function whose name says its PATCH or POST sets fields
    DECLARATION = "declaration"  # subject: where it is said; detail: the verb said
    RETRY = "retry"  # detail: the retry construct as written
    SETTING = "setting"  # subject: the framework setting
    HANDLER = "handler"  # detail: the exceptions caught
    INTERRUPT = "interrupt"  # an ``interrupt()`` call
    DISPATCH = "dispatch"  # an executor dispatching a tool by name
    RECORD = "record"  # a ledger record written
    RECORD_AFTER = "record_after"  # a ledger record written after the call returns
    STATUS_CHECK = "status_check"  # a resume's status check
    RERUN = "rerun"  # a resume re-running the work
    ERROR_RESULT = "error_result"  # an error returned as a tool result
    OBSERVATION = "observation"  # subject: the function; detail: its role (tool, wrapper...)


_STEP_TEXT: dict[StepKind, str] = {
    StepKind.TOOL: "tool `{subject}` ({detail})",
    StepKind.CALL: "{caller} calls {callee}",
    StepKind.SINK: "calls {callee}",
    StepKind.REQUEST: "the request {detail}",
    StepKind.PATCH: "{detail} in `{caller}` sets fields",
    StepKind.DECLARATION: "{subject} says `{detail}`",
    StepKind.RETRY: "retry: {detail}",
    StepKind.SETTING: "setting `{subject}`",
    StepKind.HANDLER: "except {detail}",
    StepKind.INTERRUPT: "interrupt()",
    StepKind.DISPATCH: "dispatch",
    StepKind.RECORD: "record",
    StepKind.RECORD_AFTER: "record after",
    StepKind.STATUS_CHECK: "status check",
    StepKind.RERUN: "re-run",
    StepKind.ERROR_RESULT: "error result",
    StepKind.OBSERVATION: "{detail} `{subject}`",
}


@dataclass(frozen=True)
class EvidenceStep:
    """One link of an evidence chain: tool -> helper -> sink, as fields."""

    kind: StepKind
    location: Location | None = None
    caller: str | None = None
    callee: str | None = None
    subject: str | None = None
    detail: str | None = None

    @property
    def label(self) -> str:
        """The step as text outputs print it, rendered from its fields."""
        text = _STEP_TEXT[self.kind].format(
            caller=self.caller, callee=self.callee, subject=self.subject, detail=self.detail
        )
        if self.kind is StepKind.SINK and self.detail:
            text += f" ({self.detail})"
        return text

    def to_dict(self) -> dict[str, Any]:
        loc = self.location
        return {
            "label": self.label,
            "path": loc.path if loc else None,
            "line": loc.span.line if loc else None,
            "column": loc.span.column if loc else None,
            "kind": self.kind.value,
            "caller": self.caller,
            "callee": self.callee,
            "subject": self.subject,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity
    confidence: Confidence
    location: Location
    message: str
    question: str
    tool: str | None = None
    evidence: tuple[EvidenceStep, ...] = ()
    fix: Fix | None = None
    symbol: str | None = None  # enclosing def/class, for baselines
    node_text: str = ""  # normalised text of the flagged node, for fingerprints
    related: tuple[Location, ...] = ()

    @property
    def path(self) -> str:
        return self.location.path

    @property
    def span(self) -> Span:
        return self.location.span

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.span.line, self.span.column, self.code, self.message)

    @property
    def fingerprint(self) -> str:
        """Stable across line shifts: rule, file, enclosing symbol and flagged text."""
        basis = "\0".join(
            [self.code, self.path, self.symbol or "", " ".join(self.node_text.split())]
        )
        return hashlib.sha256(basis.encode()).hexdigest()[:32]

    def with_fix(self, fix: Fix | None) -> Finding:
        return replace(self, fix=fix)

    def to_dict(self) -> dict[str, Any]:
        s = self.span
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "confidence": self.confidence.value,
            "path": self.path,
            "line": s.line,
            "column": s.column,
            "end_line": s.end_line,
            "end_column": s.end_column,
            "tool": self.tool,
            "message": self.message,
            "question": self.question,
            "evidence": [e.to_dict() for e in self.evidence],
            "related": [
                {"path": r.path, "line": r.span.line, "column": r.span.column} for r in self.related
            ],
            "symbol": self.symbol,
            "fix": self.fix.to_dict() if self.fix else None,
            "fingerprint": self.fingerprint,
        }


PARTLY_READ = "partly-read"


@dataclass
class ScanProblem:
    """A file that could not be read or parsed, reported rather than crashing the run."""

    path: str
    reason: str
    # "skipped": left out on purpose (not a regular file, over max-file-size), named only;
    # "unreadable" (no permission, binary, an I/O error) and "parse-error": reported as
    # AG000, which fails the run like any error, since nobody checked that file's tools;
    # "partly-read": a file its parser read around syntax it does not know (the rest was
    # checked), named only.
    kind: str = "skipped"
    span: Span = field(default_factory=lambda: Span.point(1))

    @property
    def reported(self) -> bool:
        """Whether this problem is an AG000 finding rather than a skipped-file notice."""
        return self.kind in ("unreadable", "parse-error")
