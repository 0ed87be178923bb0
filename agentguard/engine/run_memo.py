"""Whole-run memo: a check whose inputs are unchanged returns the recorded result.

The per-file fact cache (:mod:`agentguard.engine.fact_cache`) saves parsing; linking the project and
running the rules still cost seconds on a large tree. But a check is a pure function of
its inputs: the paths of the scanned files, the bytes of those it parsed, agentguard's own
code and catalogue, the resolved config and the command's selection. When all of them are
the same as in a recorded run (a CI re-run after a fresh clone, a pre-commit hook on an
untouched tree, an edit to code no agent tool reaches), the recorded findings are the
answer, and only hashing the files is left to do. A changed byte in a parsed file, a new
or removed file, or a left-out file that now names a seed word gives a full
(cached-facts) run, so linking across files stays exact.

The key covers everything but the Python files' bytes; each record lists the content key
of every file it parsed (``RunRecord.inputs``), and the caller checks them (and that the
files left out still would be: ``agentguard.engine.pipeline``). Records live beside the fact cache,
in ``<cache>/<namespace>/runs/<key>-<inputs>.pickle``, are written atomically, read with
an unpickler that admits agentguard's data classes only (a cache folder can come from an
untrusted checkout), and only the newest few are kept.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import io
import os
import pickle
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard import diagnostics
from agentguard.diagnostics import Finding, FixOffer, ScanProblem
from agentguard.engine.fact_cache import PICKLE_PROTOCOL, namespace
from agentguard.facts import module_facts as facts_module
from agentguard.project import tool_facts as model
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.config import Config

RECORDS_KEPT = 8
OfferKey = tuple[str, str, int, int, str | None]


def offer_key(finding: Finding) -> OfferKey:
    return (finding.code, finding.path, finding.span.line, finding.span.column, finding.tool)


@dataclass
class RunRecord:
    """What the outputs of ``check`` read of a scan, without the project model."""

    # The content key of each Python file the result follows from (every file but those
    # the prefilter left out).
    inputs: dict[str, str]
    findings: list[Finding]
    suppressed: list[Finding]
    problems: list[ScanProblem]
    files_scanned: int
    tools: list[ToolFacts]
    python_paths: list[str]
    schema_paths: list[str]
    fixes_attached: bool
    offers: dict[OfferKey, FixOffer | None] = field(default_factory=dict)
    # The files any output names (a finding, its evidence or fix, a tool, a problem): a
    # position in them is part of the result.
    shown_paths: frozenset[str] = frozenset()
    # The parsed files that were seeds (agentguard.prefilter), not only referred to; None
    # when every file was parsed.
    seeds: frozenset[str] | None = None
    # For each parsed file that is no seed, a parsed file that refers to it (see
    # ExtractStats.referrers): following these ends at a seed.
    referrers: dict[str, str] = field(default_factory=dict)
    # For each parsed file, the files it refers to, by index among the checked paths
    # (Prefilter.referral_table): a re-link follows an unchanged file from here, without a
    # walk over its facts.
    referrals: bytes = b""
    # The functions the rules read past their project-wide searches (ProjectModel.
    # functions_read); None when not known.
    functions_read: frozenset[str] | None = None


@functools.cache
def package_digest() -> str:
    """agentguard's own code and data: a new rule or a fixed bug must not reuse old results."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for path in sorted(package.rglob("*")):
        if path.suffix in {".py", ".yaml", ".json"} and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def run_key(
    config: Config,
    catalog_digest: str,
    selection: Sequence[str],
    with_fixes: bool,
    python_paths: Sequence[str],
    schema_files: Sequence[tuple[Path, str]],
) -> str:
    """The key of one check: every input but the Python files' bytes, which the record
    lists (``RunRecord.inputs``) for the caller to compare. Schema files are hashed here.
    """
    digest = hashlib.sha256()
    for part in (
        namespace(config.digest, catalog_digest),
        package_digest(),
        "\x1f".join(selection),
        "fixes" if with_fixes else "offers",
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    for rel in python_paths:
        digest.update(f"py\0{rel}\0".encode())
    for path, rel in schema_files:
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            content = f"unreadable: {exc.strerror or exc}"
        digest.update(f"schema\0{rel}\0{content}\0".encode())
    return digest.hexdigest()


def _record_classes() -> frozenset[tuple[str, str]]:
    allowed: set[tuple[str, str]] = {
        (RunRecord.__module__, RunRecord.__name__),
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
    """Run records under ``<cache>/<namespace>/runs/``."""

    def __init__(self, cache_dir: Path, config_digest: str, catalog_digest: str) -> None:
        self.folder = cache_dir / namespace(config_digest, catalog_digest) / "runs"

    def _entry(self, key: str, record: RunRecord) -> Path:
        inputs = hashlib.sha256(repr(sorted(record.inputs.items())).encode()).hexdigest()[:16]
        return self.folder / f"{key}-{inputs}.pickle"

    def load(self, key: str) -> Iterator[RunRecord]:
        """The runs recorded under ``key`` (for other bytes of the files), newest first;
        one that cannot be read is passed over."""
        entries = []
        for path in self.folder.glob(f"{key}-*.pickle"):
            try:
                entries.append((path.stat().st_mtime, path))
            except OSError:
                continue
        for _, path in sorted(entries, reverse=True):
            record = _read(path)
            if record is not None:
                yield record

    def store(self, key: str, record: RunRecord) -> None:
        """Write atomically and keep the newest few; a cache that cannot be written is skipped."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    pickle.dump(record, out, protocol=PICKLE_PROTOCOL)
                os.replace(temporary, self._entry(key, record))
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
                keys.update(record.inputs.values())
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
    """The record in ``path``; None for one unreadable, truncated, foreign or from another
    version (never used)."""
    try:
        record = _RecordUnpickler(io.BytesIO(path.read_bytes())).load()
    except Exception:
        return None
    return record if isinstance(record, RunRecord) else None


def paths_shown(*outputs: object) -> frozenset[str]:
    """Every file path the outputs hold: of a finding, an evidence step, a fix's edit, a
    tool, a scan problem (any agentguard data object with a ``path``)."""
    found: set[str] = set()
    seen: set[int] = set()
    stack: list[object] = list(outputs)
    while stack:
        value = stack.pop()
        if isinstance(value, (str, int, float, enum.Enum)) or value is None:
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if dataclasses.is_dataclass(value):
            path = getattr(value, "path", None)
            if isinstance(path, str):
                found.add(path)
            stack.extend(getattr(value, f.name) for f in dataclasses.fields(value))
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(value)
    return frozenset(found)
