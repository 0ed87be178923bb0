"""The one diagnostic model that every front end, check, fixer and output format speaks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any


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


@dataclass(frozen=True, order=True, slots=True)
class Span:
    """1-based lines, 1-based columns, end exclusive (as SARIF and editors count)."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, line: int, column: int = 1) -> Span:
        return cls(line, column, line, column)

    def __reduce__(self) -> tuple[type[Span], tuple[int, int, int, int]]:
        # Positional, without field names: a cache entry holds thousands of spans.
        return Span, (self.line, self.column, self.end_line, self.end_column)


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


@dataclass(frozen=True)
class EvidenceStep:
    """One link of an evidence chain: tool -> helper -> sink."""

    label: str
    location: Location | None = None

    def to_dict(self) -> dict[str, Any]:
        loc = self.location
        return {
            "label": self.label,
            "path": loc.path if loc else None,
            "line": loc.span.line if loc else None,
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


@dataclass
class ScanProblem:
    """A file that could not be read or parsed, reported rather than crashing the run."""

    path: str
    reason: str
    kind: str = "skipped"  # "skipped" (not scanned) or "parse-error" (reported as AG000)
    span: Span = field(default_factory=lambda: Span.point(1))
