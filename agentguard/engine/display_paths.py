"""One root for every output's paths: the repository, not the folder that was scanned.

Inside a scan every path is relative to the scan root (the folder of the config file, else
the first path scanned): module names and config patterns (``per-file-ignores``,
``include``, ``exclude``) are read against it, as ruff reads its patterns against the
project root. What a run *shows* is read through one :class:`PathPresenter`, so that every
output of one run names a file the same way, and names it as a code-scanning service, a
pull-request annotation or a ``--link-base`` link expects: relative to the repository root.

That root is the git top level (the nearest folder above the scan root holding a ``.git``
folder, or the ``.git`` file of a worktree or submodule; ``git`` itself is not run), else
the project root that holds the config, else the working directory. A file outside that
root keeps its absolute path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.config import Config
from agentguard.diagnostics import EvidenceStep, Finding, Fix, Location, ScanProblem
from agentguard.engine.discovery import _absolute

if TYPE_CHECKING:
    from agentguard.project.tool_facts import ToolFacts


def repository_root(start: Path) -> Path | None:
    """The git top level at or above ``start``: the nearest folder with a ``.git`` entry (a
    folder, or the file a worktree or submodule has instead). None outside a repository."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass
class PathPresenter:
    """Shows a scan-root-relative path relative to the display root (``base``)."""

    scan_root: Path  # absolute: what the scan's paths are relative to
    base: Path  # absolute: what shown paths are relative to
    # What the base is: "repository root" (git top level), "project root" (the config's
    # folder), "working directory", or "scanned folder" (a scan outside the working directory).
    kind: str = "scanned folder"
    cwd: Path | None = None  # where paths outside the scan root were written from
    # The scan root relative to the base, "/"-separated ("" when they are the same folder).
    prefix: str = field(init=False, default="")
    _shown: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.prefix = (
            "" if self.scan_root == self.base else self.scan_root.relative_to(self.base).as_posix()
        )

    @classmethod
    def for_config(cls, config: Config, cwd: Path | None = None) -> PathPresenter:
        """The presenter of a scan with this config, run from ``cwd`` (default: here)."""
        scan_root = _absolute(config.root)
        here = _absolute(cwd or Path.cwd())
        repository = repository_root(scan_root)
        if repository is not None:
            return cls(scan_root, repository, "repository root", here)
        if config.source is not None:
            return cls(scan_root, scan_root, "project root", here)
        if _inside(scan_root, here):
            return cls(scan_root, here, "working directory", here)
        return cls(scan_root, scan_root, "scanned folder", here)

    def show(self, path: str) -> str:
        """``path`` (relative to the scan root, "/"-separated) as every output shows it."""
        shown = self._shown.get(path)
        if shown is None:
            shown = self._shown[path] = self._present(path)
        return shown

    def _present(self, path: str) -> str:
        if not self.prefix and not os.path.isabs(path):
            return path
        full = self._full(path)
        if _inside(full, self.base):
            return full.relative_to(self.base).as_posix() if full != self.base else "."
        return full.as_posix()

    def _full(self, path: str) -> Path:
        if os.path.isabs(path):
            return Path(os.path.normpath(path))
        full = Path(os.path.normpath(self.scan_root / path))
        # Discovery writes a file outside the scan root as it was given (relative to the
        # working directory): tell it from a file of the scan root by where it exists.
        if self.cwd is not None and not full.exists():
            written = Path(os.path.normpath(self.cwd / path))
            if written.exists():
                return written
        return full

    def location(self, location: Location) -> Location:
        return Location(self.show(location.path), location.span)

    def finding(self, finding: Finding) -> Finding:
        """The finding as outputs show it: every location, evidence step and edit re-pathed
        (its fingerprint then names the file as the repository does, wherever the scan
        started)."""
        if not self.prefix:
            return finding
        return replace(
            finding,
            location=self.location(finding.location),
            evidence=tuple(self._step(step) for step in finding.evidence),
            related=tuple(self.location(r) for r in finding.related),
            fix=self._fix(finding.fix),
        )

    def findings(self, findings: Iterable[Finding]) -> list[Finding]:
        return [self.finding(f) for f in findings]

    def problem(self, problem: ScanProblem) -> ScanProblem:
        return replace(problem, path=self.show(problem.path))

    def problems(self, problems: Iterable[ScanProblem]) -> list[ScanProblem]:
        return [self.problem(p) for p in problems]

    def sources(self, tool: ToolFacts) -> list[str]:
        """Where a tool is defined and declared, as ``path:line:column``."""
        return [str(self.location(loc)) for loc in (tool.anchor, *tool.sources)]

    def _step(self, step: EvidenceStep) -> EvidenceStep:
        if step.location is None:
            return step
        return replace(step, location=self.location(step.location))

    def _fix(self, fix: Fix | None) -> Fix | None:
        if fix is None or not fix.edits:
            return fix
        return replace(fix, edits=tuple(replace(e, path=self.show(e.path)) for e in fix.edits))
