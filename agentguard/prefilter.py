"""Which Python files can matter to a check, decided before they are parsed.

A large repository is mostly code no agent tool touches. Parsing and linking it costs as
much as the agent code itself and can add no finding, so a scan starts from the *seed*
files, whose bytes name something the rules look for (a tool, an agent framework, a retry
construct, an ``agentguard`` suppression or runtime call, a raw tool schema), and adds
every project module a parsed file refers to, until nothing new is referred to. A helper a
tool calls, the client class it constructs, the base class of a tool class: each is
reached through a name the referring file imports or calls, so it is never left out.

Side-effect sinks are not seeds: a sink matters only when a tool or a retry construct
reaches it, and then the file that holds it is referred to. Test files are always kept
(the eval rule reads every test), and so is a file named on the command line. Files left
out are not parsed, so a syntax error in one
is not reported (AG000); ``--no-prefilter`` (or ``prefilter = false``) checks every file.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from agentguard.facts.extract import is_test_path, module_name_for
from agentguard.facts.module_facts import ModuleFacts, Value
from agentguard.knowledge.catalog import Catalog

# Lower-case words whose presence makes a file a seed, beside the names the catalogues
# give (framework packages, tool and retry constructs).
SEED_WORDS = (  # the most common first
    "tool",  # tools, @tool, BaseTool, tool_calls, bind_tools, ToolNode
    "agent",  # Agent(...), agents SDK, create_react_agent
    "retry",  # @retry, Retry(...), RetryPolicy, with_retry, retry_policy
    "retries",
    "backoff",
    # A hand-written retry loop: ``for attempt in range(3)``, or a wait between tries
    # (``for wait in WAITS: time.sleep(wait)``). (``tries`` is in "entries": it tells nothing.)
    "attempt",
    "sleep",
    "idempoten",
    "agentguard",  # suppression comments, the runtime, ledger calls
    "input_schema",  # Anthropic tool dicts
    '"parameters"',  # OpenAI tool dicts
    "'parameters'",
)
# Catalogue sections whose dotted names say what a tool or retry construct is called.
_CATALOG_SECTIONS = ("frameworks", "retries")
# Parts of them that name exception types, not constructs to look for.
_SKIPPED_KEYS = frozenset(
    {"transient_exceptions", "catch_all_exceptions", "policy_default_catches"}
)
# Parts whose first name part is a client library, not a framework (``requests`` for
# ``requests.adapters.Retry``): a file is a seed by the construct's own name there.
_TAIL_ONLY_KEYS = frozenset({"http_retry"})
# Parts whose last name part is too common a word to mean anything (``Server``): their
# files name the framework or a tool anyway.
_HEAD_ONLY_KEYS = frozenset({"lowlevel"})
# Names too common to tell anything (``tenacity.Retrying.__call__``, ``langgraph.func.task``):
# those constructs need a retry setting, or their framework's name, in the same file.
_TOO_COMMON = frozenset({"__call__", "task", "entrypoint", "server", "run", "call"})
# First name parts shared by many unrelated packages: the second part names the framework
# (``google.adk``).
_NAMESPACE_HEADS = frozenset({"google"})


def _dotted_names(
    data: Any, keys: frozenset[str] = frozenset()
) -> Iterator[tuple[str, frozenset[str]]]:
    """Every dotted name in a catalogue section, with the keys on its way."""
    if isinstance(data, str):
        if "." in data and " " not in data:
            yield data, keys
    elif isinstance(data, Mapping):
        for key, value in data.items():
            if key not in _SKIPPED_KEYS:
                yield from _dotted_names(value, keys | {str(key)})
    elif isinstance(data, (list, tuple)):
        for value in data:
            yield from _dotted_names(value, keys)


def catalog_words(catalog: Catalog) -> frozenset[str]:
    """The framework packages (first name part) and construct names (last part) the
    catalogues match, lower-cased: ``smolagents.tools.tool`` gives ``smolagents``."""
    words: set[str] = set()
    for section in _CATALOG_SECTIONS:
        for name, keys in _dotted_names(catalog.data.get(section) or {}):
            parts = name.split(".")
            chosen = []
            if not keys & _TAIL_ONLY_KEYS:
                head = ".".join(parts[:2]) if parts[0] in _NAMESPACE_HEADS else parts[0]
                chosen.append(head)
            if not keys & _HEAD_ONLY_KEYS:
                chosen.append(parts[-1])
            for part in chosen:
                word = part.lower()
                if word and word not in _TOO_COMMON and not any(ch in word for ch in "*?[]"):
                    words.add(word)
    return frozenset(words)


def seed_words(catalog: Catalog) -> tuple[str, ...]:
    """The lower-case words that make a file a seed, the most common first."""
    words = set(SEED_WORDS) | catalog_words(catalog)
    # A word containing another seed word adds nothing: fewer searches per file. The
    # search stops at the first word found, so the words most files hold go first
    # (SEED_WORDS in their order), then the catalogue's.
    kept = {word for word in words if not _contains_other(word, words)}
    ordered = [word for word in SEED_WORDS if word in kept]
    return tuple(ordered + sorted(kept - set(ordered)))


class Prefilter:
    """Seeds from bytes, then the project modules the parsed files refer to."""

    def __init__(
        self,
        catalog: Catalog,
        rels: Sequence[str],
        is_test: Callable[[str], bool] = is_test_path,
        named: Iterable[str] = (),
    ) -> None:
        """``named``: files the user named one by one (not through a folder): always
        checked, as a linter checks a file it is given."""
        self.is_test = is_test
        self._named = frozenset(named)
        self._words = tuple(word.encode() for word in seed_words(catalog))
        self._files_by_name: dict[str, tuple[int, ...]] = {}
        self._seeds: dict[str, bool] = {}
        self._rels = list(rels)
        self._index_of = {rel: index for index, rel in enumerate(self._rels)}
        # What each file followed (``follow``) refers to, by its path.
        self._referrals: dict[str, frozenset[int]] = {}

    @functools.cached_property
    def _module_index(self) -> tuple[dict[str, list[int]], frozenset[str]]:
        """The files by every dotted tail of their module names (code run from a sub-folder
        imports ``shop.orders`` for the file the scan root names ``backend.shop.orders``),
        and every part of those names. Built on the first file followed: a check that its
        recorded run answers follows none."""
        files: dict[str, list[int]] = {}
        parts_seen: set[str] = set()
        for index, rel in enumerate(self._rels):
            parts = module_name_for(rel).split(".")
            for start in range(len(parts)):
                files.setdefault(".".join(parts[start:]), []).append(index)
            parts_seen.update(parts)
        return files, frozenset(parts_seen)

    def is_seed(self, rel: str, data: bytes) -> bool:
        """Whether ``rel`` (with these bytes: one scan reads a file once) is a seed."""
        # Asked again for the same file by each recorded run tried, then by the scan.
        known = self._seeds.get(rel)
        if known is None:
            known = rel in self._named or self.is_test(rel)
            if not known:
                lowered = data.lower()
                known = any(word in lowered for word in self._words)
            self._seeds[rel] = known
        return known

    def remember(self, rel: str, seed: bool) -> None:
        """What an earlier check found for the same bytes of ``rel`` (same words, tests and
        named files): no search needed."""
        self._seeds.setdefault(rel, seed)

    def follow(self, facts: ModuleFacts) -> frozenset[int]:
        """``referred_files`` of a whole file's facts, kept by its path for the run record
        (``referral_table``), or answered from an earlier run's for the same bytes
        (``remember_referrals``)."""
        known = self._referrals.get(facts.path)
        if known is None:
            known = self._referrals[facts.path] = frozenset(self.referred_files(facts))
        return known

    def referral_table(self) -> bytes:
        """For each file followed, the files it refers to, by index, packed (see
        ``pack_referrals``)."""
        index_of = self._index_of
        return pack_referrals(
            {index_of[rel]: found for rel, found in self._referrals.items() if rel in index_of}
        )

    def remember_referrals(self, table: bytes, same_bytes: Callable[[str], bool]) -> None:
        """What an earlier check of the same files (its run key names every path) found each
        file to refer to, for the files whose bytes are the same now: following them needs
        no walk over their facts."""
        rels = self._rels
        for index, found in unpack_referrals(table).items():
            if index < len(rels) and same_bytes(rels[index]):
                self._referrals.setdefault(rels[index], frozenset(found))

    def referred_files(self, facts: ModuleFacts) -> set[int]:
        """The files of the project modules that ``facts`` imports or calls into."""
        found: set[int] = set()
        known = self._files_by_name
        module_files, module_parts = self._module_index
        # ``import app.billing`` records only ``app``: only then can a module be named by a
        # dotted value that is not a call (``tools=[app.billing.refund]``).
        whole = any(local == name and name in module_parts for local, name in facts.imports.items())
        for name in _referred_names(facts, whole):
            files = known.get(name)
            if files is None:
                files = known[name] = _files_named(name, module_files, module_parts)
            if files:
                found.update(files)
        return found


def _files_named(
    name: str, module_files: Mapping[str, list[int]], module_parts: frozenset[str]
) -> tuple[int, ...]:
    # Most names (``self.client.get``, ``json.dumps``) start with no module part at all:
    # told from the first part alone (a "()" never holds a dot), before any split.
    dot = name.find(".")
    head = name if dot < 0 else name[:dot]
    if (head.replace("()", "") if "(" in head else head) not in module_parts:
        return ()
    parts = name.replace("()", "").split(".")
    for cut in range(len(parts), 0, -1):
        files = module_files.get(".".join(parts[:cut]))
        if files is not None:
            return tuple(files)
    return ()


def pack_referrals(referrals: Mapping[int, Iterable[int]]) -> bytes:
    """File index -> the indices it refers to, as one array of integers (the file, the count,
    the files): a run record, read by every check it answers, holds one bytes object here
    rather than a tuple per file."""
    flat = array("I")
    for index in sorted(referrals):
        found = sorted(referrals[index])
        flat.append(index)
        flat.append(len(found))
        flat.extend(found)
    return flat.tobytes()


def unpack_referrals(table: bytes) -> dict[int, tuple[int, ...]]:
    """The inverse of ``pack_referrals``; an empty or damaged table gives what it can."""
    flat = array("I")
    flat.frombytes(table[: len(table) - len(table) % flat.itemsize])
    result: dict[int, tuple[int, ...]] = {}
    position = 0
    while position + 1 < len(flat):
        index, count = flat[position], flat[position + 1]
        found = flat[position + 2 : position + 2 + count]
        if len(found) < count:
            break
        result[index] = tuple(found)
        position += 2 + count
    return result


def _value_names(values: Iterable[Value], names: set[str]) -> None:
    """Add the dotted names expressions refer to, their list, tuple and dict items
    included."""
    stack = list(values)
    while stack:
        current = stack.pop()
        # A bare name is a local or a builtin: a module is reached through a dotted one.
        if current.qualname and "." in current.qualname:
            names.add(current.qualname)
        if current.elements:
            stack.extend(current.elements)
        if current.items:
            stack.extend(current.items.values())


def _contains_other(word: str, words: Iterable[str]) -> bool:
    return any(other != word and other in word for other in words)


def _referred_names(facts: ModuleFacts, values_too: bool) -> set[str]:
    names = set(facts.imports.values())
    names.update([call.callee for call in facts.calls])
    if values_too:
        # One walk over all the values, not one per call (178k walks on the corpus).
        values: list[Value] = []
        for call in facts.calls:
            if call.args:
                values += call.args
            if call.kwargs:
                values += call.kwargs.values()
        values += [a.value for a in facts.assignments]
        values += [a.value for a in facts.attribute_sets]
        _value_names(values, names)
    for cls in facts.classes.values():
        names.update(cls.bases)
        names.update(cls.self_types.values())
        names.update(decorator.qualname for decorator in cls.decorators)
    for fn in facts.functions.values():
        names.update(decorator.qualname for decorator in fn.decorators)
    return names
