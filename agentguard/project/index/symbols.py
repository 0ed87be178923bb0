"""The project index's symbol table: the modules, the functions and classes they define,
the calls each function makes, the assignments each scope makes, class chains and imports.

Built once from the per-file facts; every lookup here answers from the facts alone."""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Assignment, Call, ClassDef, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import Catalog, Matcher, NameIndex

if TYPE_CHECKING:
    from agentguard.project.index.call_site import CallSite

Answer = TypeVar("Answer")
Item = TypeVar("Item")


def _call_line(call: Call) -> int:
    return call.span.line


@dataclass
class LookupMemo:
    """The index's one memo: answers of pure lookups over its tables, kept because tool
    discovery, effects, ledgers, retries and resume each ask the same questions of every
    call site. Nothing here changes what a lookup answers."""

    sites: dict[int, CallSite] = field(default_factory=dict)
    targets: dict[str, tuple[str | None, bool, str | None]] = field(default_factory=dict)
    matching: dict[tuple[int, bool], tuple[Matcher[Any], frozenset[str]]] = field(
        default_factory=dict
    )
    callee_names: dict[str, tuple[str, list[str], bool, str | None]] = field(default_factory=dict)
    class_names: dict[tuple[str, str, str], str] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)
    prefix_index: dict[str, dict[str, str]] = field(default_factory=dict)
    by_prefix: dict[str, str | None] = field(default_factory=dict)
    edges: dict[str, list[tuple[Call, str]]] = field(default_factory=dict)
    assignment_index: dict[
        int,
        tuple[
            ModuleFacts,
            dict[str | None, list[Assignment]],
            dict[tuple[str | None, str], list[Assignment]],
        ],
    ] = field(default_factory=dict)
    call_bound_index: dict[int, tuple[ModuleFacts, set[tuple[str | None, str]]]] = field(
        default_factory=dict
    )
    imported_heads: dict[str, frozenset[str]] = field(default_factory=dict)
    handed: dict[int, tuple[Call, Call | None]] = field(default_factory=dict)
    method_built: dict[tuple[str, str], str | None] = field(default_factory=dict)
    # a project class's method inherited from a package class (``Types.inherited_method``)
    inherited: dict[str, str | None] = field(default_factory=dict)
    called_params: dict[str, frozenset[str]] = field(default_factory=dict)
    implementations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    constructions: dict[str, list[tuple[Call, ModuleFacts]]] | None = None
    # what each parameter's callers hand it (``ProjectIndex.handed_type``)
    handed_types: dict[tuple[str, str], str | None] = field(default_factory=dict)
    # what each parameter's callers hand it, with the calls (``ProjectIndex.handed_values``)
    handed_values: dict[tuple[str, str], tuple[bool, list[tuple[Value, Call, ModuleFacts]]]] = (
        field(default_factory=dict)
    )
    calls_by_last_name: dict[str, list[tuple[Call, ModuleFacts]]] | None = None
    # lists by line (``Symbols.on_lines``): the list, its lines sorted, the items' places
    by_line: dict[Hashable, tuple[Sequence[Any], list[int], list[int]]] = field(
        default_factory=dict
    )
    # the functions the calls on some lines of a function run (``targets_on_lines``)
    targets_on_lines: dict[tuple[str, int, int], list[str]] = field(default_factory=dict)
    # a pass's tables over the facts (``Symbols.remembered``), by the pass's own key
    remembered: dict[Hashable, Any] = field(default_factory=dict)
    # The calls whose target is being worked out (a local bound to a call that is resolved
    # through that same local): a lookup that would go round ends there.
    resolving: set[int] = field(default_factory=set)


class Symbols:
    """What the project defines and where: modules by path and by name, functions and
    classes by qualified name, calls by the function making them."""

    def __init__(self, modules: Iterable[ModuleFacts], catalog: Catalog) -> None:
        self.catalog = catalog
        self.modules: dict[str, ModuleFacts] = {m.path: m for m in modules}
        self.modules_by_name: dict[str, ModuleFacts] = {m.module: m for m in self.modules.values()}
        self.functions: dict[str, tuple[Function, ModuleFacts]] = {}
        self.classes: dict[str, tuple[ClassDef, ModuleFacts]] = {}
        self.by_name: dict[str, list[str]] = {}
        self.calls_by_function: dict[str | None, list[Call]] = {}
        for facts in self.modules.values():
            for fn in facts.functions.values():
                self.functions[fn.qualname] = (fn, facts)
                self.by_name.setdefault(fn.name, []).append(fn.qualname)
            for cls in facts.classes.values():
                self.classes[cls.qualname] = (cls, facts)
            for call in facts.calls:
                key = f"{facts.path}::{call.function}" if call.function is None else call.function
                self.calls_by_function.setdefault(key, []).append(call)
        # The last parts of the project's function names: a callee ending otherwise is no
        # function of the calling module.
        self._function_tails = {q.rsplit(".", 1)[-1] for q in self.functions}
        # The first parts of the parsed modules' names: most dotted callees (``self.x.get``,
        # ``json.dumps``) start otherwise, so no prefix of theirs names a module or is the
        # prefix of a project function's name, and no lookup need try.
        self._module_firsts = {name.split(".", 1)[0] for name in self.modules_by_name}
        self._function_firsts = {q.split(".", 1)[0] for q in self.functions}
        self._name_firsts = (
            self._module_firsts | self._function_firsts | {q.split(".", 1)[0] for q in self.classes}
        )
        # Top-level packages of the scanned code: imports from them are not third-party.
        self.module_heads: set[str] = {m.module.split(".")[0] for m in self.modules.values()}
        self._memo = LookupMemo()
        self._written_names = NameIndex(
            call.callee for calls in self.calls_by_function.values() for call in calls
        )
        self._functions_in_order = sorted(self.functions.items())
        self._abstract_methods = self._find_abstract_methods()
        self._class_index = self._index_classes()
        # Classes by each base they name, and by each dotted base's last part.
        self.subclass_index = self._index_subclasses()
        # The top-level names imported from outside the project and the standard library.
        self.third_party_heads = self._find_third_party_heads()

    def function(self, qualname: str) -> Function | None:
        entry = self.functions.get(qualname)
        return entry[0] if entry else None

    def module_of(self, qualname: str) -> ModuleFacts | None:
        entry = self.functions.get(qualname)
        return entry[1] if entry else None

    def sorted_functions(self) -> list[tuple[str, tuple[Function, ModuleFacts]]]:
        """The project's functions by qualified name: several rules walk them in order."""
        return self._functions_in_order

    def calls_in(self, qualname: str) -> list[Call]:
        return self.calls_by_function.get(qualname, [])

    def remembered(self, key: Hashable, work_out: Callable[[], Answer]) -> Answer:
        """``work_out()``, worked out once per index: a table a pass builds over the facts
        (a module's dispatch branches by name) and asks for once per tool, which a scan
        per tool would make grow with the square of the tools."""
        memo = self._memo.remembered
        if key not in memo:
            memo[key] = work_out()
        return memo[key]

    def calls_on_lines(self, qualname: str, first: int, last: int) -> list[Call]:
        """The calls of ``qualname`` starting on lines ``first`` to ``last``, in the order
        ``calls_in`` gives: a branch of a dispatch asks for its own among every branch's."""
        return self.on_lines(("calls", qualname), self.calls_in(qualname), first, last, _call_line)

    def on_lines(
        self,
        key: Hashable,
        items: Sequence[Item],
        first: int,
        last: int,
        line_of: Callable[[Item], int],
    ) -> list[Item]:
        """The ``items`` whose line (``line_of``) is ``first`` to ``last``, in their order:
        found through an index by line made once per ``key``, not by a scan per question
        (each branch of a dispatch asks for its own among every branch's)."""
        index = self._memo.by_line.get(key)
        if index is None or index[0] is not items:  # made for another list of that key
            by_line = sorted(range(len(items)), key=lambda place: line_of(items[place]))
            lines_of = [line_of(items[place]) for place in by_line]
            index = self._memo.by_line[key] = (items, lines_of, by_line)
        _, lines, places = index
        found = places[bisect_left(lines, first) : bisect_right(lines, last)]
        return [items[place] for place in sorted(found)]

    def location(self, facts: ModuleFacts, span: Span) -> Location:
        return Location(facts.path, span)

    def is_interface_method(self, qualname: str) -> bool:
        """Whether ``qualname`` is a method with no body of its own (abstract, or of a
        ``Protocol``): a call of it runs code the project does not show."""
        return qualname in self._abstract_methods

    def implementations(self, method: str) -> tuple[str, ...]:
        """The project's own implementations of an interface method (``BaseSearchClient.
        forward_async`` that only raises ``NotImplementedError``): the methods of that name
        its subclasses, at any depth, define with a body."""
        found = self._memo.implementations.get(method)
        if found is not None:
            return found
        owner, _, name = method.rpartition(".")
        found = tuple(
            sorted(
                candidate
                for sub in self.subclasses(owner)
                if (candidate := f"{sub}.{name}") in self.functions
                and candidate not in self._abstract_methods
            )
        )
        self._memo.implementations[method] = found
        return found

    def subclasses(self, owner: str) -> list[str]:
        """The project's subclasses of the class ``owner``, at any depth, breadth first (at
        most 63): those naming it by its qualified name or its last part, and, for ``owner``
        itself, by the bare name a sibling module imports."""
        by_base, by_last = self.subclass_index
        short = owner.rsplit(".", 1)[-1]
        seen: set[str] = {owner}
        pending = [owner]
        found: list[str] = []
        while pending and len(seen) < 64:
            current = pending.pop(0)
            tail = current.rsplit(".", 1)[-1]
            candidates = [*by_base.get(current, ()), *by_last.get(tail, ())]
            if current == owner:
                candidates.extend(by_base.get(short, ()))
            for sub in candidates:
                if sub.qualname in seen:
                    continue
                seen.add(sub.qualname)
                pending.append(sub.qualname)
                found.append(sub.qualname)
        return found

    def _find_abstract_methods(self) -> frozenset[str]:
        """Methods with no body of their own: ``@abstractmethod``, one that only raises
        ``NotImplementedError``, or any method of a ``Protocol``."""
        found: set[str] = set()
        for cls, _ in self.classes.values():
            protocol = any(base.rsplit(".", 1)[-1] == "Protocol" for base in cls.bases)
            for method in cls.methods:
                fn = self.function(method)
                if fn is None:
                    continue
                abstract = protocol or any(
                    d.qualname.rsplit(".", 1)[-1] == "abstractmethod" for d in fn.decorators
                )
                if not abstract and fn.raises:
                    abstract = all("NotImplementedError" in v.text for v in fn.raises) and all(
                        c.callee.endswith("NotImplementedError") for c in self.calls_in(method)
                    )
                if abstract:
                    found.add(method)
        return frozenset(found)

    def chained_request(self, call: Call) -> Call | None:
        """The call ``call`` is made on, in a builder chain written in one expression
        (``send(userId=..., body=...)`` of ``service.users().messages().send(...).execute()``):
        the longest call that starts where ``call`` starts and ends before it does. Its
        arguments are the request's; ``call`` only sends it."""
        if "(" not in call.text and "()" not in call.callee:
            return None  # a name or attribute called: made on no call
        start, end = call.span[:2], call.span[2:]
        found: Call | None = None
        for other in self.calls_by_function.get(call.function, ()) if call.function else ():
            if other is call or other.span[:2] != start or other.span[2:] >= end:
                continue
            if found is None or other.span[2:] > found.span[2:]:
                found = other
        return found

    def _returned_nested(self, qualname: str, *, wraps: bool) -> str | None:
        """The function nested in ``qualname`` that it returns; with ``wraps``, only one
        that calls ``qualname``'s first parameter (the function being decorated)."""
        fn = self.function(qualname)
        if fn is None:
            return None
        for value in fn.returns:
            nested = f"{qualname}.<locals>.{value.text}"
            if value.kind != "name" or nested not in fn.nested:
                continue
            if not wraps:
                return nested
            given = fn.params[0] if fn.params else None
            if given and any(call.callee == given for call in self.calls_in(nested)):
                return nested
        return None

    def local_assignments(
        self, facts: ModuleFacts, function: str | None, target: str | None = None
    ) -> list[Assignment]:
        """The assignments of ``facts`` made in ``function`` (None: at module level), to
        ``target`` when given, in source order: an index instead of a scan per lookup."""
        entry = self._memo.assignment_index.get(id(facts))
        if entry is None or entry[0] is not facts:
            by_function: dict[str | None, list[Assignment]] = {}
            by_target: dict[tuple[str | None, str], list[Assignment]] = {}
            for assignment in facts.assignments:
                by_function.setdefault(assignment.function, []).append(assignment)
                by_target.setdefault((assignment.function, assignment.target), []).append(
                    assignment
                )
            entry = (facts, by_function, by_target)
            self._memo.assignment_index[id(facts)] = entry
        if target is None:
            return entry[1].get(function, [])
        return entry[2].get((function, target), [])

    def _call_bound(self, facts: ModuleFacts) -> set[tuple[str | None, str]]:
        """The (function, local) pairs of ``facts`` that some assignment binds to a call:
        asked for every ``name.method()`` called, of which few are bound to a factory's
        result (246 of 50k on a large corpus)."""
        entry = self._memo.call_bound_index.get(id(facts))
        if entry is None or entry[0] is not facts:
            bound = {
                (a.function, a.target)
                for a in facts.assignments
                if a.value.calls and a.value.kind in {"call", "other"}
            }
            entry = self._memo.call_bound_index[id(facts)] = (facts, bound)
        return entry[1]

    def module_variable(self, qualname: str | None) -> Value | None:
        """The value last assigned at module level to ``pkg.mod.NAME``, if any."""
        held = self.module_variable_in(qualname)
        return held[0] if held is not None else None

    def constant_string(self, value: Value) -> str | None:
        """A string literal, or the string a module constant holds (``TOOL_NAME``)."""
        if value.string() is not None:
            return value.string()
        if value.kind in {"name", "attr"}:
            held = self.module_variable(value.qualname)
            return held.string() if held is not None else None
        return None

    def module_binding(self, qualname: str | None) -> tuple[Value, ModuleFacts] | None:
        """``module_variable_in``, with the module it is written in rather than its path."""
        held = self.module_variable_in(qualname)
        written_in = self.modules.get(held[1]) if held is not None else None
        return (held[0], written_in) if held is not None and written_in is not None else None

    def module_variable_in(self, qualname: str | None) -> tuple[Value, str] | None:
        """``module_variable``, with the path of the file it is written in: a position in
        the value is in that file, not in the one that imports the name."""
        if not qualname or "." not in qualname:
            return None
        for _ in range(4):  # a re-export's re-export
            module, name = qualname.rsplit(".", 1)
            facts = self.modules_by_name.get(module)
            if facts is None:
                return None
            assigned = self.local_assignments(facts, None, name)
            if assigned:
                return assigned[-1].value, facts.path
            # a name the module imports from another (``export default createEventTool``,
            # ``from .tools import TOOLS`` in a package's ``__init__``)
            imported = facts.imports.get(name)
            if not imported:
                # ``from .send_message import *``: the module of the star import defining it
                imported = next(
                    (
                        f"{star}.{name}"
                        for star in facts.star_imports
                        if (held := self.modules_by_name.get(star)) is not None
                        and self.local_assignments(held, None, name)
                    ),
                    None,
                )
            if not imported or "." not in imported or imported == qualname:
                return None
            qualname = imported
        return None

    def _class_qualname(self, name: str, facts: ModuleFacts) -> str:
        if name in self.classes:
            return name
        local = f"{facts.module}.{name}"
        return local if local in self.classes else name

    def lineage(self, cls_qual: str) -> Iterator[str]:
        """``cls_qual`` and then its bases, breadth first, each once; a name the project does
        not define is given but not followed."""
        seen: set[str] = set()
        queue = [cls_qual]
        while queue:
            current = queue.pop(0)
            if current in seen:
                continue
            seen.add(current)
            yield current
            if current in self.classes:
                queue.extend(self.classes[current][0].bases)

    def opaque_attribute(self, cls_qual: str, attr: str) -> bool:
        """Whether the class (or a base) declares ``attr`` to hold anything (``agent: Any``)."""
        return any(
            attr in self.classes[current][0].opaque
            for current in self.lineage(cls_qual)
            if current in self.classes
        )

    def project_function(self, qualname: str | None, facts: ModuleFacts) -> str | None:
        """The project function a name refers to, if any."""
        if not qualname:
            return None
        if qualname in self.functions:
            return qualname
        local = f"{facts.module}.{qualname}"
        if local in self.functions:
            return local
        name = qualname.removeprefix(facts.module + ".")
        for star in facts.star_imports:
            # ``from configs.tools import *``: a name this module never defines, taken from
            # that module as named from the scan root or from a folder above this file (a
            # script run from its own folder)
            parts = facts.module.split(".")
            for cut in range(len(parts) - 1, -1, -1):
                taken = ".".join([*parts[:cut], star, name])
                if taken in self.functions:
                    return taken
        # from pkg import mod; mod.fn  or  package re-exports
        return self.dotted_function(qualname) if "." in qualname else None

    def dotted_function(self, qualname: str) -> str | None:
        """The function a dotted name reaches from any module: the one a package or barrel
        re-exports under it, else the first of that name under its prefix."""
        # Memoised: common names (get, run) have thousands of candidates, and the same
        # dotted callee is looked up from every call site.
        memo = self._memo.by_prefix
        if qualname not in memo:
            module_prefix, tail = qualname.rsplit(".", 1)
            memo[qualname] = self._reexported(module_prefix, tail) or self._functions_under(
                tail
            ).get(module_prefix)
        return memo[qualname]

    def _reexported(self, package: str, name: str, depth: int = 0) -> str | None:
        """The function a package's ``__init__`` re-exports as ``name`` (``from
        pkg.list_emails import list_emails``): the one it names, not another function of
        that name under the package (a method ``pkg.core.Client.list_emails``). A barrel
        that re-exports whole modules (``export * from "./createEvent.js"``, ``from .ops
        import *``) exports the function of that name one of them defines or re-exports."""
        facts = self.modules_by_name.get(package)
        if facts is None:
            return None
        exported = facts.imports.get(name)
        if exported and exported != f"{package}.{name}":
            return exported if exported in self.functions else None
        for star in facts.star_imports if depth < 4 else ():
            taken = f"{star}.{name}"
            if taken in self.functions:
                return taken
            found = self._reexported(star, name, depth + 1)
            if found is not None:
                return found
        return None

    def _functions_under(self, name: str) -> dict[str, str]:
        """For the functions called ``name``: each dotted prefix of their qualified names
        (``pkg``, ``pkg.mod``, ``pkg.mod.Cls``) -> the first of them under it."""
        index = self._memo.prefix_index.get(name)
        if index is None:
            index = {}
            for qualname in self.by_name.get(name, ()):
                dot = qualname.find(".")
                while dot >= 0:
                    index.setdefault(qualname[:dot], qualname)
                    dot = qualname.find(".", dot + 1)
            self._memo.prefix_index[name] = index
        return index

    def class_bases(self, cls: ClassDef) -> list[str]:
        """All base names, following project classes transitively."""
        result: list[str] = []
        queue = list(cls.bases)
        seen: set[str] = set()
        while queue:
            base = queue.pop(0)
            if base in seen:
                continue
            seen.add(base)
            result.append(base)
            if base in self.classes:
                queue.extend(self.classes[base][0].bases)
            else:
                # a base written as a bare name imported from a sibling module
                for qual in self._classes_by_last_name().get(base.rsplit(".", 1)[-1], ()):
                    if qual.endswith("." + base) and qual not in seen:
                        queue.extend(self.classes[qual][0].bases)
        return result

    def _classes_by_last_name(self) -> dict[str, list[str]]:
        return self._class_index

    def _index_classes(self) -> dict[str, list[str]]:
        # An index instead of a scan of every class per base: class_bases runs per class.
        index: dict[str, list[str]] = {}
        for qual in self.classes:
            index.setdefault(qual.rsplit(".", 1)[-1], []).append(qual)
        return index

    def _index_subclasses(self) -> tuple[dict[str, list[ClassDef]], dict[str, list[ClassDef]]]:
        """Classes by each base they name, and by each dotted base's last part: one pass over
        the classes instead of one per class asked about."""
        by_base: dict[str, list[ClassDef]] = {}
        by_last: dict[str, list[ClassDef]] = {}
        for other, _ in self.classes.values():
            for base in other.bases:
                by_base.setdefault(base, []).append(other)
                if "." in base:
                    by_last.setdefault(base.rsplit(".", 1)[1], []).append(other)
        return (by_base, by_last)

    def _find_third_party_heads(self) -> frozenset[str]:
        """The top-level names any module of the project imports from that are neither the
        project's own packages nor the standard library's: a callee resolved through an
        attribute typed in another module (``interface: Ain`` in a base class, imported
        there only) still names the package it leaves the project for."""
        stdlib = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins"}
        heads: set[str] = set()
        for facts in self.modules.values():
            heads |= self.imported_heads(facts)
        return frozenset(heads - self.module_heads - stdlib)

    def imported_heads(self, facts: ModuleFacts) -> frozenset[str]:
        """The top-level names a module imports from (memoised: asked per call)."""
        heads = self._memo.imported_heads.get(facts.path)
        if heads is None:
            heads = frozenset(v.split(".")[0] for v in facts.imports.values())
            self._memo.imported_heads[facts.path] = heads
        return heads
