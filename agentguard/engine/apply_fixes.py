"""Apply fixes to a fixpoint, roll back fixes that break the code, render and write.

Rounds: scan (with the files' current texts in memory), take each file's fixable findings,
apply the fixes whose edits do not conflict, check the file still compiles (rolling back
the fixes that break it), repeat until nothing changes or the round limit is reached.
Nothing touches the disk until :func:`write_changes`, which writes each file atomically and
refuses to overwrite a file that changed on disk since it was read.
"""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.config import Config
from agentguard.diagnostics import Applicability, Finding
from agentguard.engine.display_paths import PathPresenter
from agentguard.engine.fix_edits import (
    attach_fixes,
    decode,
    fix_offer,
    fixable_elsewhere,
    source_encoding,
)
from agentguard.facts.extract import compiles
from agentguard.fixes.text import TextEdit, apply_text_edits, resolve

if TYPE_CHECKING:
    from agentguard.engine.speed import FactOptions

MAX_ROUNDS = 10
# Why a fix on offer was not made.
UNDECODABLE = "its file cannot be decoded in the encoding it declares"
NOT_BUILT = "no edit could be built for the code as it is written here"


@dataclass
class FileChange:
    path: str  # relative to the project root, "/"-separated
    absolute: Path
    original: bytes
    bom: str
    before: str
    after: str
    fixed: list[Finding] = field(default_factory=list)
    encoding: str = "utf-8"  # the one the file declares (PEP 263), kept on writing

    def encoded(self) -> bytes:
        return (self.bom + self.after).encode(self.encoding)


@dataclass
class RolledBack:
    finding: Finding
    reason: str


@dataclass
class FixRun:
    root: Path
    changes: list[FileChange]
    rolled_back: list[RolledBack]
    rounds: int
    # How paths are shown (the diff's file names too): relative to the repository root.
    paths: PathPresenter
    unapplied_unsafe: int = 0  # fixable findings left because unsafe fixes were not allowed
    # Findings whose fix is on offer (``check`` says so) but could not be made, and why.
    unmade: list[RolledBack] = field(default_factory=list)
    # Findings in files fixes cannot edit yet (TypeScript, JavaScript) whose rule fixes them
    # in Python: ``fix`` says they get none.
    unsupported: list[Finding] = field(default_factory=list)

    @property
    def fixed_count(self) -> int:
        return sum(len(c.fixed) for c in self.changes)

    def patch(self) -> bytes:
        """The fixes as a patch for ``git apply``: each file's hunks in the file's own
        encoding, so that the context lines match the bytes on disk."""
        return b"".join(
            unified_diff(c, self.paths.show(c.path)).encode(c.encoding, "surrogateescape")
            for c in self.changes
        )


def allowed(applicability: Applicability, unsafe: bool) -> bool:
    if applicability is Applicability.SAFE:
        return True
    return unsafe and applicability is Applicability.UNSAFE


def run_fixes(
    paths: Sequence[Path],
    config: Config,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    unsafe: bool = False,
    max_rounds: int = MAX_ROUNDS,
    facts: FactOptions | None = None,
) -> FixRun:
    from agentguard.engine.discovery import discover
    from agentguard.engine.parallel import read_source
    from agentguard.engine.pipeline import scan

    files = discover(list(paths), config)
    originals: dict[str, tuple[Path, bytes, str, str]] = {}
    encodings: dict[str, str] = {}
    for absolute, rel in files.sources:
        data = read_source(absolute, rel, config.max_file_size)
        if isinstance(data, bytes):
            decoded = decode(data)
            encoding = source_encoding(data)
            if decoded is not None and encoding is not None:
                originals[rel] = (Path(absolute), data, decoded[0], decoded[1])
                encodings[rel] = encoding
    current = {rel: entry[3] for rel, entry in originals.items()}
    fixed: dict[str, list[Finding]] = {}
    rolled_back: list[RolledBack] = []
    blocked: set[tuple[str, str]] = set()  # (path, fingerprint) of fixes that broke the code
    rounds = 0
    unapplied_unsafe = 0
    unmade: list[RolledBack] = []
    unsupported: list[Finding] = []
    jobs = facts.jobs if facts is not None else 1
    for rounds in range(1, max_rounds + 1):  # noqa: B007 - the count is reported
        sources = {
            rel: (originals[rel][2] + text).encode(encodings[rel]) for rel, text in current.items()
        }
        result = scan(paths, config, select=select, ignore=ignore, sources=sources, facts=facts)
        # Edits are built (a LibCST parse per file) only for the fixes this run may apply.
        wanted: list[Finding] = []
        unapplied_unsafe = 0
        unmade = []
        unsupported = [f for f in result.findings if fixable_elsewhere(f, result.project)]
        for finding in result.findings:
            offered = fix_offer(finding, result.project)
            if offered is None or (finding.path, finding.fingerprint) in blocked:
                continue
            if not allowed(offered.applicability, unsafe):
                unapplied_unsafe += offered.applicability is Applicability.UNSAFE
                continue
            if finding.path not in current:
                unmade.append(RolledBack(finding, UNDECODABLE))
                continue
            wanted.append(finding)
        by_file: dict[str, list[Finding]] = {}
        for finding in attach_fixes(wanted, result.project, config.root, sources, jobs=jobs):
            if finding.fix is not None:
                by_file.setdefault(finding.path, []).append(finding)
            else:
                unmade.append(RolledBack(finding, NOT_BUILT))
        progressed = False
        for rel, findings in sorted(by_file.items()):
            text, applied, broken = apply_round(current[rel], findings, rel)
            if not _encodable(text, encodings[rel]):
                # A fix that adds what the file's declared encoding cannot hold is not made.
                reason = f"the fix adds characters the file's encoding ({encodings[rel]}) lacks"
                broken += [(finding, reason) for finding in applied]
                text, applied = current[rel], []
            for finding, reason in broken:
                blocked.add((rel, finding.fingerprint))
                rolled_back.append(RolledBack(finding, reason))
            if text != current[rel]:
                current[rel] = text
                fixed.setdefault(rel, []).extend(applied)
                progressed = True
        if not progressed:
            break
    changes = [
        FileChange(
            path=rel,
            absolute=originals[rel][0],
            original=originals[rel][1],
            bom=originals[rel][2],
            before=originals[rel][3],
            after=text,
            fixed=fixed.get(rel, []),
            encoding=encodings[rel],
        )
        for rel, text in sorted(current.items())
        if text != originals[rel][3]
    ]
    return FixRun(
        config.root,
        changes,
        rolled_back,
        rounds,
        PathPresenter.for_config(config),
        unapplied_unsafe,
        unmade,
        unsupported,
    )


def _encodable(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def apply_round(
    text: str, findings: list[Finding], filename: str
) -> tuple[str, list[Finding], list[tuple[Finding, str]]]:
    """Apply the non-conflicting fixes of one round; roll back any that break compilation.

    Returns (new text, findings fixed, findings whose fix was rolled back with the reason).
    Fixes that conflict with an earlier one wait for the next round.
    """
    chosen: list[tuple[Finding, list[TextEdit]]] = []
    taken: list[TextEdit] = []
    for finding in sorted(findings, key=Finding.sort_key):
        assert finding.fix is not None
        edits = resolve(text, finding.fix.edits)
        if any(edit.conflicts(other) for edit in edits for other in taken):
            continue
        chosen.append((finding, edits))
        taken.extend(edits)
    was_broken = compiles(text, filename) is not None
    candidate = apply_text_edits(text, taken)
    if compiles(candidate, filename) is None or was_broken:
        return candidate, [f for f, _ in chosen], []
    # Something broke: keep the fixes one by one while the file still compiles.
    kept: list[TextEdit] = []
    applied: list[Finding] = []
    broken: list[tuple[Finding, str]] = []
    for finding, edits in chosen:
        attempt = apply_text_edits(text, kept + edits)
        reason = compiles(attempt, filename)
        if reason is None:
            kept += edits
            applied.append(finding)
        else:
            broken.append((finding, f"the fix would break the file ({reason})"))
    return apply_text_edits(text, kept), applied, broken


def unified_diff(change: FileChange, shown: str | None = None) -> str:
    """A unified diff that ``git apply`` accepts from the repository root; ``shown`` is the
    file's path as outputs show it (default: as the scan has it)."""
    name = shown or change.path
    before = change.before.splitlines(keepends=True)
    after = change.after.splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, fromfile=f"a/{name}", tofile=f"b/{name}")
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass
class WriteProblem:
    path: str
    reason: str


def write_changes(changes: Sequence[FileChange]) -> list[WriteProblem]:
    """Write each changed file atomically, keeping its permissions; skip files changed
    on disk since they were read."""
    problems: list[WriteProblem] = []
    for change in changes:
        try:
            if change.absolute.read_bytes() != change.original:
                problems.append(
                    WriteProblem(change.path, "changed on disk since it was read; not overwritten")
                )
                continue
            write_atomically(change.absolute, change.encoded())
        except OSError as exc:
            problems.append(WriteProblem(change.path, exc.strerror or str(exc)))
    return problems


def write_atomically(path: Path, data: bytes) -> None:
    path = path.resolve()  # write through a symlink, never replace the link itself
    mode = stat.S_IMODE(path.stat().st_mode)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".agentguard", dir=path.parent
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
