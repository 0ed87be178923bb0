"""Per-file fact cache, keyed on content, so a warm run after a fresh clone still hits.

An entry holds the pickled :class:`ModuleFacts` of one file, or the parse error its bytes
give (facts, never findings: the
project model links files to each other, so findings are always recomputed). Its key is
the sha256 of the file's relative path and bytes; the folder it lives in is named after
everything else the facts depend on: agentguard's version, the Python version (its ``ast``),
the resolved config digest and the catalogue digest. A change to any of them selects a
fresh folder, so nothing stale is ever read. Modification times are never consulted: a
fresh clone gives every file a new mtime and the same content.

Entries are written to a temporary file and renamed into place, so concurrent runs never
see half an entry; a corrupt or unreadable entry counts as a miss and is rewritten.

The cache lives outside the scanned tree (:func:`default_cache_dir`: the user's cache folder,
one folder per project path): what a checkout holds must never decide what is reported
about it, and the allow-listed unpickler stops code, not false facts. A folder inside the
tree is refused (:func:`inside_scanned_tree`).

The cache stays about the size of one project's facts (:func:`prune`): after a run that
linked the project, entries no kept run record names are removed once they are an hour old,
and so are the folders of other versions, configs or catalogues unused for two weeks.
"""

from __future__ import annotations

import copyreg
import dataclasses
import functools
import hashlib
import io
import os
import pickle
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from agentguard import __version__
from agentguard.diagnostics import ScanProblem, Span
from agentguard.facts import module_facts as facts_module
from agentguard.facts.module_facts import ModuleFacts
from agentguard.facts.typescript.parser import grammar_version

CACHE_DIR_NAME = ".agentguard_cache"
FORMAT = (
    "10"  # bump when the facts dataclasses change shape or the extractor fills them differently
)
PICKLE_PROTOCOL = 5
# An unreferenced entry younger than this is kept: a run still going may have written it
# for a record it has not stored yet.
PRUNE_GRACE_SECONDS = 3600.0
# The folder of another version, config or catalogue is removed once unused this long.
UNUSED_NAMESPACE_SECONDS = 14 * 24 * 3600.0
# Touched by every run that uses a namespace folder (a run answered by its record writes
# nothing else there).
LAST_USED = "last-used"
_NAMESPACE_NAME = re.compile(r"[0-9a-f]{20}")
_ENTRY_FOLDER = re.compile(r"[0-9a-f]{2}")

_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by agentguard.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def content_key(
    rel: str, data: bytes, module: str | None = None, import_heads: Mapping[str, str] | None = None
) -> str:
    """The key of one file's facts: its path (module name, test-ness), its module name when
    its package root is not the scan root, its import heads when it has any, and its bytes."""
    digest = hashlib.sha256(rel.encode("utf-8"))
    if module is not None:
        digest.update(b"\0module:" + module.encode("utf-8"))
    for head, taken in sorted((import_heads or {}).items()):
        digest.update(f"\0head:{head}={taken}".encode())
    digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


@functools.cache
def extractor_digest() -> str:
    """The facts depend on the extractor's code too: a change to it must not reuse old facts,
    even when nobody remembered to bump FORMAT."""
    return code_digest(Path(__file__).resolve().parent.parent)


def code_digest(package: Path) -> str:
    """The digest of the code under ``package`` (an agentguard tree) that makes the facts."""
    digest = hashlib.sha256()
    # Every module of the facts package (the extractor is split by concern over several), and
    # of the layers under it that it reads: the knowledge package's code (the catalogue's
    # classes it builds facts with, the Node built-in module names) and diagnostics.py (the
    # facts' spans and parse problems are its classes). The catalogue's data is keyed apart.
    sources = [
        *sorted((package / "facts").rglob("*.py")),
        *sorted((package / "knowledge").rglob("*.py")),
        package / "diagnostics.py",
    ]
    for source in sources:
        digest.update(source.relative_to(package).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def namespace(config_digest: str, catalog_digest: str) -> str:
    """The folder name for every input other than the file itself."""
    parts = (
        FORMAT,
        __version__,
        extractor_digest(),
        grammar_version(),
        f"{sys.version_info[0]}.{sys.version_info[1]}",
        config_digest,
        catalog_digest,
    )
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


class FactCache:
    """Facts by content key under ``<directory>/<namespace>/``."""

    def __init__(self, directory: Path, config_digest: str, catalog_digest: str) -> None:
        self.directory = directory
        self.folder = directory / namespace(config_digest, catalog_digest)
        self.hits = 0
        self.misses = 0
        self._ready = False

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key[2:]}.pickle"

    def load(self, key: str) -> ModuleFacts | ScanProblem | None:
        """Cached facts (or parse error), or None on a miss or an unreadable entry."""
        try:
            blob = self._entry(key).read_bytes()
        except OSError:
            self.misses += 1
            return None
        facts = decode(blob)
        if facts is None:
            self.misses += 1
        else:
            self.hits += 1
        return facts

    def store(self, key: str, blob: bytes) -> None:
        """Write one entry atomically; a cache that cannot be written is skipped quietly."""
        target = self._entry(key)
        try:
            if not self._ready:
                self._prepare()
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(blob)
                os.replace(temporary, target)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError:
            return

    def _prepare(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        # Keep the cache out of version control and out of backups.
        for name, text in ((".gitignore", "*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = self.directory / name
            if not marker.exists():
                marker.write_text(text, encoding="utf-8")
        self.folder.mkdir(exist_ok=True)
        (self.folder / LAST_USED).touch()
        self._ready = True

    def mark_used(self) -> None:
        """Say that a run used this folder now, so that :func:`prune` keeps it."""
        try:
            os.utime(self.folder / LAST_USED)
        except OSError:
            return  # not written yet: the first entry stored writes it

    def prune(self, referenced: Collection[str], now: float | None = None) -> int:
        """Remove the entries whose key is not in ``referenced`` and that are older than
        PRUNE_GRACE_SECONDS (with left-over temporary files), and the sibling folders of
        other namespaces unused for UNUSED_NAMESPACE_SECONDS. Returns the entries
        removed. Only a folder agentguard tagged as its cache is touched; a file that
        cannot be removed is left."""
        if not _tagged_by_agentguard(self.directory):
            return 0
        now = time.time() if now is None else now
        removed = 0
        for sub in _scan(self.folder):
            if not (sub.is_dir(follow_symlinks=False) and _ENTRY_FOLDER.fullmatch(sub.name)):
                continue
            for entry in _scan(Path(sub.path)):
                name = entry.name
                if name.endswith(".pickle") and not name.startswith(".tmp-"):
                    if sub.name + name[: -len(".pickle")] in referenced:
                        continue
                elif not name.startswith(".tmp-"):
                    continue
                if _older_than(entry, now - PRUNE_GRACE_SECONDS) and _unlink(entry.path):
                    removed += 1
        for other in _scan(self.directory):
            if other.name == self.folder.name or not _NAMESPACE_NAME.fullmatch(other.name):
                continue
            if not other.is_dir(follow_symlinks=False):
                continue
            stamp = Path(other.path) / LAST_USED
            used = _mtime(stamp) if stamp.exists() else _mtime(Path(other.path))
            if used is not None and used < now - UNUSED_NAMESPACE_SECONDS:
                shutil.rmtree(other.path, ignore_errors=True)
        return removed


def _tagged_by_agentguard(directory: Path) -> bool:
    """Whether ``directory`` holds the cache tag agentguard writes (other tools tag their
    caches with the same file name)."""
    try:
        return (directory / "CACHEDIR.TAG").read_text(encoding="utf-8") == _CACHEDIR_TAG
    except (OSError, UnicodeDecodeError):
        return False


def _scan(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _older_than(entry: os.DirEntry[str], moment: float) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_mtime < moment
    except OSError:
        return False


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def _reduce_span(span: Span) -> tuple[Any, tuple[type[Span], tuple[int, ...]]]:
    # What the default route writes for a tuple subclass (``NEWOBJ``: rebuilt by
    # ``tuple.__new__`` in C), found without its lookups of ``__reduce_ex__`` and
    # ``__getnewargs__`` per span.
    return copyreg.__newobj__, (Span, tuple(span))  # type: ignore[attr-defined]


class _FactsPickler(pickle.Pickler):
    """Writes exactly what ``pickle.dumps`` writes, but finds each facts class's reducer in
    one table probe: the default route asks every object for ``__reduce_ex__``, which
    then looks up and binds ``__reduce__``, about a third of encoding a large project."""

    dispatch_table = {
        **copyreg.dispatch_table,
        **facts_module.REDUCERS,
        Span: _reduce_span,
    }


def encode(facts: ModuleFacts | ScanProblem) -> bytes:
    buffer = io.BytesIO()
    _FactsPickler(buffer, protocol=PICKLE_PROTOCOL).dump(facts)
    return buffer.getvalue()


class _FactsUnpickler(pickle.Unpickler):
    """Loads facts and nothing else: a cache folder can come from an untrusted checkout,
    and a plain pickle could name any callable. Besides the facts classes it may name only
    the shared empty list and dict that empty fields are written as."""

    # Every dataclass of the facts module (a class added there is cached without a list
    # to keep in step here: a class left off made every file holding one a cache miss).
    ALLOWED = frozenset(
        {
            ("agentguard.facts.module_facts", name)
            for name, value in vars(facts_module).items()
            if isinstance(value, type)
            and dataclasses.is_dataclass(value)
            and value.__module__ == facts_module.__name__
        }
        | {("agentguard.diagnostics", "Span"), ("agentguard.diagnostics", "ScanProblem")}
        # The one shared empty list and dict that empty fields are pickled as.
        | {("agentguard.facts.module_facts", name) for name in facts_module.PICKLED_GLOBALS}
    )

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not a facts class")
        return super().find_class(module, name)


def decode(blob: bytes) -> ModuleFacts | ScanProblem | None:
    """Facts (or the file's parse error) from an entry; None for anything else."""
    try:
        facts = _FactsUnpickler(io.BytesIO(blob)).load()
    except Exception:  # a truncated or foreign file raises anything from EOFError up
        return None
    return facts if isinstance(facts, (ModuleFacts, ScanProblem)) else None


def cache_unusable(directory: Path) -> str:
    """Why entries cannot be written under ``directory`` (made if missing), or "" if they
    can: asked once before a check, so that a cache that is never kept is said, not
    silently skipped file by file."""
    if directory.exists() and not directory.is_dir():
        return "a file is in its place"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(directory, os.W_OK | os.X_OK):
        return "no permission to write in it"
    return ""


# The folder under which every project's cache is kept, when set (the GitHub Action sets it
# to the path it saves and restores); else the user's cache folder.
CACHE_ROOT_ENV = "AGENTGUARD_CACHE_DIR"


def user_cache_root() -> Path:
    """Where agentguard keeps its caches, outside every project: ``$AGENTGUARD_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/agentguard``, else ``~/.cache/agentguard`` (on Windows
    ``%LOCALAPPDATA%\\agentguard\\Cache``)."""
    explicit = os.environ.get(CACHE_ROOT_ENV, "")
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "")
        base = Path(local) if local else Path.home() / "AppData" / "Local"
        return base / "agentguard" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    # As the XDG spec says, a relative value is ignored.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "agentguard"


def default_cache_dir(root: Path) -> Path:
    """The cache of the project at ``root``: a folder of the user's cache named after the
    project's absolute path, so that two projects never share records, and a fresh clone
    at the same path (a CI job's workspace) finds the cache it restored. Never inside the
    project: what a checkout holds must not decide what is reported about it."""
    resolved = root.resolve()
    label = re.sub(r"[^A-Za-z0-9._-]", "_", resolved.name)[:40] or "root"
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return user_cache_root() / "projects" / f"{label}-{digest}"


def inside_scanned_tree(directory: Path, scanned: Collection[Path]) -> Path | None:
    """The scanned folder (or project root) that ``directory`` lies in, None when it lies in
    none: a cache there could be supplied by the checkout itself (a folder committed to the
    repository), and its entries would then decide the findings."""
    target = directory.expanduser().resolve()
    for root in scanned:
        try:
            folder = root.resolve()
        except OSError:
            continue
        if not folder.is_dir():
            folder = folder.parent
        if target == folder or target.is_relative_to(folder):
            return folder
    return None


@dataclasses.dataclass(frozen=True)
class Cleaned:
    """What ``clean`` did: whether there was a cache, and what it left in the folder."""

    removed: bool
    kept: tuple[str, ...] = ()


def clean(directory: Path) -> Cleaned:
    """Remove a cache folder: what agentguard wrote there, and the folder once it is empty.

    Refuses a folder that is not an agentguard cache: one tagged by another tool (a
    ``CACHEDIR.TAG`` marks ruff's and mypy's caches too), or an untagged one not
    named ``.agentguard_cache`` (the folder's name before the cache moved out of the
    project). Anything else a user put in the folder is kept and named.
    """
    if not directory.exists():
        return Cleaned(removed=False)
    if not directory.is_dir():
        raise ValueError(f"{directory} is a file, not a cache folder; not removing it")
    tagged = (directory / "CACHEDIR.TAG").exists()
    ours = _tagged_by_agentguard(directory) or (not tagged and directory.name == CACHE_DIR_NAME)
    if not ours:
        raise ValueError(f"{directory} does not look like an agentguard cache; not removing it")
    kept: list[str] = []
    for child in sorted(directory.iterdir(), key=lambda entry: entry.name):
        if child.is_dir() and not child.is_symlink() and _NAMESPACE_NAME.fullmatch(child.name):
            shutil.rmtree(child)
        elif child.name == "CACHEDIR.TAG" or (
            child.name == ".gitignore" and child.read_text(errors="replace") == "*\n"
        ):
            child.unlink()
        else:
            kept.append(child.name)
    if not kept:
        directory.rmdir()
    return Cleaned(removed=True, kept=tuple(kept))
