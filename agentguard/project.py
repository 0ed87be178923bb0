"""The project model: tools, their declarations and effect summaries, the call graph.

Built from per-file facts (``python.facts``) and schema documents; checks read it and
never walk syntax themselves. Tool discovery, effect inference and retry detection live in
``agentguard.python.tools``, ``.effects`` and ``.retries``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.catalog import Catalog
from agentguard.diagnostics import Location, ScanProblem, Span
from agentguard.model import (  # noqa: F401  (re-exported for checks)
    FRESH_CALLS,
    GUARDED_NAMES,
    INJECTED_PARAMS,
    KEY_HEADER_RE,
    KEY_KWARG_RE,
    SELF_NAMES,
    Declaration,
    Effect,
    KeyEvidence,
    RetryUse,
    ToolFacts,
)
from agentguard.python.facts import Call, ClassDef, Function, ModuleFacts

if TYPE_CHECKING:
    from agentguard.config import Config


class ProjectModel:
    def __init__(self, modules: Iterable[ModuleFacts], catalog: Catalog) -> None:
        self.catalog = catalog
        self.modules: dict[str, ModuleFacts] = {m.path: m for m in modules}
        self.functions: dict[str, tuple[Function, ModuleFacts]] = {}
        self.classes: dict[str, tuple[ClassDef, ModuleFacts]] = {}
        self.by_name: dict[str, list[str]] = {}
        self.module_types: dict[str, dict[str, str]] = {}
        self.calls_by_function: dict[str | None, list[Call]] = {}
        for facts in self.modules.values():
            for fn in facts.functions.values():
                self.functions[fn.qualname] = (fn, facts)
                self.by_name.setdefault(fn.name, []).append(fn.qualname)
            for cls in facts.classes.values():
                self.classes[cls.qualname] = (cls, facts)
            types: dict[str, str] = {}
            for assignment in facts.assignments:
                value = assignment.value
                if assignment.function is None and value.kind == "call" and value.qualname:
                    last = value.qualname.rsplit(".", 1)[-1]
                    if last[:1].isupper():
                        types.setdefault(assignment.target, value.qualname)
            self.module_types[facts.module] = types
            for call in facts.calls:
                key = f"{facts.path}::{call.function}" if call.function is None else call.function
                self.calls_by_function.setdefault(key, []).append(call)
        self.tools: list[ToolFacts] = []
        self.problems: list[ScanProblem] = []
        self.config: Config | None = None
        self.schema_files: list[tuple[Path, str]] = []
        self._summaries: dict[str, list[Effect]] = {}
        from agentguard.python import effects, tools

        tools.discover_tools(self)
        effects.infer_effects(self)

    # ------------------------------------------------------------------ lookups
    def function(self, qualname: str) -> Function | None:
        entry = self.functions.get(qualname)
        return entry[0] if entry else None

    def module_of(self, qualname: str) -> ModuleFacts | None:
        entry = self.functions.get(qualname)
        return entry[1] if entry else None

    def calls_in(self, qualname: str) -> list[Call]:
        return self.calls_by_function.get(qualname, [])

    def location(self, facts: ModuleFacts, span: Span) -> Location:
        return Location(facts.path, span)

    def resolve_callee(self, call: Call, caller: Function | None, facts: ModuleFacts) -> str:
        """Resolve self.x.y and module-level instances into a qualified callee name."""
        callee = call.callee.replace("()", "")
        parts = callee.split(".")
        if len(parts) >= 2 and parts[0] in SELF_NAMES and caller is not None and caller.class_name:
            cls_qual = caller.class_name
            if len(parts) == 2:
                method = self.find_method(cls_qual, parts[1])
                return method or f"{cls_qual}.{parts[1]}"
            attr_type = self.self_type(cls_qual, parts[1])
            if attr_type:
                return ".".join([attr_type, *parts[2:]])
            return callee
        types = self.module_types.get(facts.module, {})
        if parts[0] in types:
            return ".".join([types[parts[0]], *parts[1:]])
        if parts[0] in self.classes or callee in self.functions:
            return callee
        if len(parts) >= 2:
            owner = ".".join(parts[:-1])
            if owner in self.classes:
                method = self.find_method(owner, parts[-1])
                if method:
                    return method
            # An instance of a project class whose method is called: Cls.method
        return callee

    def self_type(self, cls_qual: str, attr: str) -> str | None:
        seen: set[str] = set()
        queue = [cls_qual]
        while queue:
            current = queue.pop(0)
            if current in seen or current not in self.classes:
                continue
            seen.add(current)
            cls = self.classes[current][0]
            if attr in cls.self_types:
                return cls.self_types[attr]
            queue.extend(cls.bases)
        return None

    def find_method(self, cls_qual: str, name: str) -> str | None:
        seen: set[str] = set()
        queue = [cls_qual]
        while queue:
            current = queue.pop(0)
            if current in seen:
                continue
            seen.add(current)
            candidate = f"{current}.{name}"
            if candidate in self.functions:
                return candidate
            if current in self.classes:
                queue.extend(self.classes[current][0].bases)
        return None

    def project_function(self, qualname: str | None, facts: ModuleFacts) -> str | None:
        """The project function a name refers to, if any."""
        if not qualname:
            return None
        if qualname in self.functions:
            return qualname
        local = f"{facts.module}.{qualname}"
        if local in self.functions:
            return local
        # from pkg import mod; mod.fn  or  package re-exports
        if "." not in qualname:
            return None
        # Memoised: common names (get, run) have thousands of candidates, and the same
        # dotted callee is looked up from every call site.
        memo: dict[str, str | None] | None = getattr(self, "_by_prefix_memo", None)
        if memo is None:
            memo = {}
            self._by_prefix_memo = memo
        if qualname not in memo:
            module_prefix, tail = qualname.rsplit(".", 1)
            memo[qualname] = next(
                (c for c in self.by_name.get(tail, []) if c.startswith(module_prefix + ".")),
                None,
            )
        return memo[qualname]

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
        # An index instead of a scan of every class per base: class_bases runs per class.
        index: dict[str, list[str]] | None = getattr(self, "_class_index", None)
        if index is None:
            index = {}
            for qual in self.classes:
                index.setdefault(qual.rsplit(".", 1)[-1], []).append(qual)
            self._class_index = index
        return index

    def effects_of(self, qualname: str) -> list[Effect]:
        return self._summaries.get(qualname, [])

    def tool_for_function(self, qualname: str) -> ToolFacts | None:
        return next((t for t in self.tools if qualname in t.functions), None)

    def retry_uses(self) -> Iterator[RetryUse]:
        from agentguard.python.retries import retry_uses

        return retry_uses(self)

    def effects_in_orders(self, qualname: str, orders: tuple[int, int]) -> list[Effect]:
        """Effects reached from the calls of ``qualname`` whose order is within ``orders``."""
        start, end = orders
        result = []
        for effect in self.effects_of(qualname):
            first = effect.chain[0]
            if first.location is None:
                continue
            for call in self.calls_in(qualname):
                if start <= call.order < end and call.span == first.location.span:
                    result.append(effect)
                    break
        return result
