"""Baselines: adopt agentguard on existing code without hiding what is new.

An entry is keyed by rule code, file, enclosing symbol and a hash of the normalised flagged
text — never by line number, so code that moves keeps its entry — and carries a count, so
one accepted finding cannot hide a second, identical one added later (bandit's baseline
compares by set membership and has exactly that hole).

Paths are written as every output shows them: relative to the repository root
(:mod:`agentguard.engine.display_paths`), so one baseline serves a scan of the whole
repository and a scan of one folder of it. A baseline written before (no ``"paths"`` key)
has paths relative to the folder that was scanned; :meth:`Baseline.rebased` reads them so.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard import __version__
from agentguard.diagnostics import Finding

BASELINE_VERSION = 1
# What a baseline's paths are relative to; absent in a baseline written by agentguard 0.1.0,
# whose paths are relative to the scanned folder.
PATH_BASE = "repository-root"


def _same(path: str) -> str:
    return path


class BaselineError(Exception):
    """A baseline file that cannot be read; the message names the file and the problem."""


@dataclass(frozen=True, order=True)
class EntryKey:
    code: str
    path: str
    symbol: str
    text_hash: str

    @classmethod
    def of(cls, finding: Finding, show: Callable[[str], str] = _same) -> EntryKey:
        """The key of a finding; ``show`` gives its path as outputs show it."""
        return cls(
            finding.code, show(finding.path), finding.symbol or "", text_hash(finding.node_text)
        )


@dataclass(frozen=True)
class StaleEntry:
    key: EntryKey
    unmatched: int  # how many of the entry's count no current finding used
    message: str = ""

    def describe(self) -> str:
        where = f"{self.key.path}" + (f" in {self.key.symbol}" if self.key.symbol else "")
        times = f" (x{self.unmatched})" if self.unmatched > 1 else ""
        detail = f": {self.message}" if self.message else ""
        return f"{self.key.code} {where}{times}{detail}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.key.code,
            "path": self.key.path,
            "symbol": self.key.symbol or None,
            "hash": self.key.text_hash,
            "unmatched": self.unmatched,
            "message": self.message,
        }


@dataclass
class Baseline:
    counts: Counter[EntryKey] = field(default_factory=Counter)
    messages: dict[EntryKey, str] = field(default_factory=dict)
    # Read from a baseline whose paths are relative to the scanned folder (agentguard 0.1.0).
    scan_relative: bool = False

    @classmethod
    def from_findings(
        cls, findings: Iterable[Finding], show: Callable[[str], str] = _same
    ) -> Baseline:
        baseline = cls()
        for finding in findings:
            key = EntryKey.of(finding, show)
            baseline.counts[key] += 1
            baseline.messages.setdefault(key, finding.message)
        return baseline

    def rebased(self, show: Callable[[str], str]) -> Baseline:
        """A baseline read with scan-relative paths, with each path as ``show`` gives it
        (the same baseline when its paths are already relative to the repository root)."""
        if not self.scan_relative:
            return self
        rebased = Baseline()
        for key, count in self.counts.items():
            moved = EntryKey(key.code, show(key.path), key.symbol, key.text_hash)
            rebased.counts[moved] += count
            rebased.messages.setdefault(moved, self.messages.get(key, ""))
        return rebased

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": BASELINE_VERSION,
            "tool": {"name": "agentguard", "version": __version__},
            "paths": PATH_BASE,
            "entries": [
                {
                    "code": key.code,
                    "path": key.path,
                    "symbol": key.symbol or None,
                    "hash": key.text_hash,
                    "count": count,
                    "message": self.messages.get(key, ""),
                }
                for key, count in sorted(self.counts.items())
            ],
        }

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Baseline:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise BaselineError(f"{path}: baseline file not found") from None
        except OSError as exc:
            raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise BaselineError(
                f"{path}:{exc.lineno}: baseline is not valid JSON: {exc.msg}"
            ) from None
        if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION:
            raise BaselineError(
                f'{path}: not an agentguard baseline (expected "version": {BASELINE_VERSION})'
            )
        entries = data.get("entries")
        if not isinstance(entries, list):
            raise BaselineError(f'{path}: "entries" must be a list')
        base = data.get("paths")
        if base is not None and base != PATH_BASE:
            raise BaselineError(f'{path}: unknown "paths": {base!r} (expected "{PATH_BASE}")')
        baseline = cls(scan_relative=base is None)
        for index, entry in enumerate(entries):
            try:
                key = EntryKey(
                    str(entry["code"]),
                    str(entry["path"]),
                    str(entry.get("symbol") or ""),
                    str(entry["hash"]),
                )
                count = int(entry.get("count", 1))
            except (KeyError, TypeError, ValueError, AttributeError):
                raise BaselineError(
                    f'{path}: entry {index + 1} needs "code", "path", "hash" and a numeric "count"'
                ) from None
            if count < 1:
                raise BaselineError(f"{path}: entry {index + 1} has a count below 1")
            baseline.counts[key] += count
            baseline.messages.setdefault(key, str(entry.get("message", "")))
        return baseline


@dataclass
class BaselineOutcome:
    """What comparing a scan against a baseline found."""

    path: str
    new: list[Finding]
    matched: int
    stale: list[StaleEntry]

    def summary(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "new": len(self.new),
            "matched": self.matched,
            "stale": [entry.to_dict() for entry in self.stale],
        }


def text_hash(node_text: str) -> str:
    normalised = " ".join(node_text.split())
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]


def compare(
    findings: Sequence[Finding],
    baseline: Baseline,
    path: str = "",
    show: Callable[[str], str] = _same,
    judged: Callable[[EntryKey], bool] | None = None,
) -> BaselineOutcome:
    """Split findings into new ones and ones the baseline accepts, up to each entry's count.
    ``show`` gives a finding's path as the baseline has it (relative to the repository root).
    ``judged``: whether this run could have found an entry's finding again (its file was
    scanned, its rule selected); only such an entry is stale when nothing matches it.

    Findings are taken in source order, so when an entry allows one and there are two, the
    first keeps its place and the later copy is reported as new.
    """
    remaining = Counter(baseline.counts)
    new: list[Finding] = []
    matched = 0
    for finding in sorted(findings, key=Finding.sort_key):
        key = EntryKey.of(finding, show)
        if remaining[key] > 0:
            remaining[key] -= 1
            matched += 1
        else:
            new.append(finding)
    stale = [
        StaleEntry(key, count, baseline.messages.get(key, ""))
        for key, count in sorted(remaining.items())
        if count > 0 and (judged is None or judged(key))
    ]
    return BaselineOutcome(path=path, new=new, matched=matched, stale=stale)
