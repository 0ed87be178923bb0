"""Run memo: a check whose inputs are all unchanged returns the recorded outcome.

The per-file fact cache (:mod:`agentguard.engine.fact_cache`) saves parsing; linking the project and
running the rules still cost seconds on a large tree. But a check is a pure function of
its inputs: agentguard's own code, the effective config, the catalogue (the user's
extensions included), the command's selection, and every scanned file's path and bytes.
When all of them are exactly those of a recorded run (a CI re-run after a fresh clone, a
pre-commit hook on an untouched tree, a branch switched back), the recorded outcome is the
answer and only reading and hashing the files is left to do. Any other tree is checked in
full, from the cached facts.

The key (:func:`run_key`) covers every input; a record is found by its key alone. Records
live beside the fact cache, in ``<cache>/<namespace>/runs/<key>.pickle``, are written
atomically, read with an unpickler that admits agentguard's data classes only (a cache
folder can come from an untrusted checkout), and only the newest few are kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import hashlib
import io
import os
import pickle
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard import diagnostics
from agentguard.diagnostics import Finding, FixOffer, ScanProblem
from agentguard.engine.fact_cache import PICKLE_PROTOCOL, namespace
from agentguard.facts import module_facts as facts_module
from agentguard.project import tool_facts as model
from agentguard.project.tool_facts import ToolFacts

RECORDS_KEPT = 8
OfferKey = tuple[str, str, int, int, str | None]


def offer_key(finding: Finding) -> OfferKey:
    return (finding.code, finding.path, finding.span.line, finding.span.column, finding.tool)


@dataclass(kw_only=True)
class ScanOutcome:
    """What the outputs of ``check`` read of a scan: all a run record keeps."""

    findings: list[Finding]
    suppressed: list[Finding]
    problems: list[ScanProblem]
    files_scanned: int
    found_tools: list[ToolFacts] = field(default_factory=list)
    python_paths: list[str] = field(default_factory=list)
    schema_paths: list[str] = field(default_factory=list)
    # Whether findings carry their fix edits (computed lazily: agentguard.fixes.ensure_fixes).
    fixes_attached: bool = False
    # The fix each finding is offered, without its edits (the text output's "fix available").
    offers: dict[OfferKey, FixOffer | None] = field(default_factory=dict)

    @property
    def tools(self) -> int:
        return len(self.found_tools)

    def fix_offer(self, finding: Finding) -> FixOffer | None:
        """The fix this finding would get, without building its edits."""
        return self.offers.get(offer_key(finding))

    def outcome(self) -> ScanOutcome:
        """These fields alone (of a ``ScanResult``: without the project model)."""
        return ScanOutcome(
            **{item.name: getattr(self, item.name) for item in dataclasses.fields(ScanOutcome)}
        )


@dataclass
class RunRecord:
    """One recorded run: its outcome, and the content keys of the files it parsed (the
    fact cache entries a later run may still want: ``FactCache.prune``)."""

    outcome: ScanOutcome
    inputs: tuple[str, ...] = ()


@functools.cache
def package_digest() -> str:
    """agentguard's own code and data: a new rule or a fixed bug must not reuse old results."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent  # all of agentguard, not the engine only
    for path in sorted(package.rglob("*")):
        if path.suffix in {".py", ".yaml", ".json"} and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def run_key(
    config_digest: str,
    catalog_digest: str,
    question: Sequence[str],
    python_files: Sequence[tuple[str, str]],
    schema_files: Sequence[tuple[Path, str]],
    problems: Sequence[ScanProblem],
) -> str:
    """The key of one check: every input it follows from.

    ``question`` is what the command asks (rule selection, fix edits or not);
    ``python_files`` each file's path and content key (``agentguard.engine.fact_cache.content_key``);
    ``problems`` what discovery could not scan (reported too). Schema files are hashed here.
    """
    digest = hashlib.sha256()
    for part in (namespace(config_digest, catalog_digest), package_digest(), *question):
        digest.update(part.encode())
        digest.update(b"\0")
    digest.update(b"\x1e")
    for rel, key in python_files:
        digest.update(f"py\0{rel}\0{key}\0".encode())
    for path, rel in schema_files:
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            content = f"unreadable: {exc.strerror or exc}"
        digest.update(f"schema\0{rel}\0{content}\0".encode())
    for problem in problems:
        digest.update(f"problem\0{problem.path}\0{problem.kind}\0{problem.reason}\0".encode())
    return digest.hexdigest()


def _record_classes() -> frozenset[tuple[str, str]]:
    allowed: set[tuple[str, str]] = {
        (RunRecord.__module__, RunRecord.__name__),
        (ScanOutcome.__module__, ScanOutcome.__name__),
        (diagnostics.__name__, diagnostics.Span.__name__),
    }
    # The shared empty containers the facts' compact pickle form refers to by name.
    allowed.update((facts_module.__name__, name) for name in facts_module.PICKLED_GLOBALS)
    for module in (diagnostics, model, facts_module):
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and (dataclasses.is_dataclass(value) or issubclass(value, enum.Enum))
            ):
                allowed.add((module.__name__, name))
    return frozenset(allowed)


class _RecordUnpickler(pickle.Unpickler):
    ALLOWED = _record_classes()

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not an agentguard record class")
        return super().find_class(module, name)


class RunMemo:
    """Run records under ``<cache>/<namespace>/runs/``, by run key."""

    def __init__(self, cache_dir: Path, config_digest: str, catalog_digest: str) -> None:
        self.folder = cache_dir / namespace(config_digest, catalog_digest) / "runs"

    def _entry(self, key: str) -> Path:
        return self.folder / f"{key}.pickle"

    def load(self, key: str) -> RunRecord | None:
        """The run recorded under ``key``; None when there is none, or it cannot be read."""
        record = _read(self._entry(key))
        if record is not None:
            # The newest records are kept (``_prune``): this one was used now.
            with contextlib.suppress(OSError):
                os.utime(self._entry(key))
        return record

    def store(self, key: str, record: RunRecord) -> None:
        """Write atomically and keep the newest few; a cache that cannot be written is skipped."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    pickle.dump(record, out, protocol=PICKLE_PROTOCOL)
                os.replace(temporary, self._entry(key))
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            self._prune()
        except (OSError, pickle.PicklingError):
            return

    def inputs_named(self) -> set[str]:
        """The content keys of the files every kept record follows from: the fact cache
        entries a later run can still use (see ``FactCache.prune``)."""
        keys: set[str] = set()
        for path in self.folder.glob("*.pickle"):
            record = _read(path)
            if record is not None:
                keys.update(record.inputs)
        return keys

    def _prune(self) -> None:
        records = []
        for path in self.folder.glob("*.pickle"):
            try:
                records.append((path.stat().st_mtime, path))
            except OSError:
                continue
        records.sort(reverse=True)
        for _, path in records[RECORDS_KEPT:]:
            path.unlink(missing_ok=True)


def _read(path: Path) -> RunRecord | None:
    """The record in ``path``; None for one missing, unreadable, truncated, foreign or from
    another version (never used)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    try:
        record = _RecordUnpickler(io.BytesIO(blob)).load()
    except Exception:
        return None
    if not isinstance(record, RunRecord) or not isinstance(record.outcome, ScanOutcome):
        return None
    return record
