"""Finder: tool classes a project loads by the name the model answers with.

A project function that imports a module chosen at run time or lists a module's members
(``tool_functions.module_scans``: ``importlib.import_module``, ``inspect.getmembers``...) and
keeps what passes ``issubclass(member, base)`` for a ``base`` it is handed is a class loader.
A call of it that hands a project class and names the module by a value built at run time
(``"python/tools/" + name + ".py"``, ``f"tools.{name}"``) picks one class by name: the
dispatch a model's tool call drives. When that base leaves a hook abstract and the project
calls the hook, each concrete project class below it is a tool, named by the ``name`` it
gives itself or else by its module's file name, run by its override of the hook.

Only the classes of the modules such a name may pick count (``python/tools/*.py``): a
subclass kept elsewhere (a proxy for remote tools) is not loaded so. A loader handed a fixed
module or folder, to run every class found there (extensions, plugins, hooks), dispatches
nothing by name and makes no tool. Nothing here knows what the
project calls its loader, base or hook.
"""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatch
from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.class_tools import Family, class_tools, entry_method, self_string
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

FORM = ToolForm("custom", "loaded-by-name")


def _loaders(project: ProjectIndex) -> dict[str, int]:
    """The project's class loaders: function -> the position of the base it is handed."""
    scans = project.catalog.module_scans
    scanning: set[str] = set()
    tested: dict[str, int] = {}
    for site in project.source_call_sites():
        call = site.call
        if call.function is None:
            continue
        if site.callee in scans or call.callee in scans:
            scanning.add(call.function)
        elif call.callee == "issubclass" and len(call.args) == 2:
            fn = project.function(call.function)
            base = call.args[1]
            params = [p for p in fn.params if p not in SELF_NAMES] if fn else []
            if base.kind == "name" and base.text in params:
                tested[call.function] = params.index(base.text)
    return {function: position for function, position in tested.items() if function in scanning}


def _pattern(value: Value) -> str | None:
    """The glob of the modules a value built at run time may name: its literal parts kept,
    each variable part a ``*`` (``"python/tools/" + name + ".py"``: ``python/tools/*.py``)."""
    if value.kind == "call":
        for arg in value.call_args:
            found = _pattern(arg)
            if found is not None:
                return found
        return None
    if value.op == "+" or value.kind == "fstring":
        pieces = [
            (part.string() or "") if part.kind == "const" and part.string() is not None else "*"
            for part in value.parts
        ]
        return "".join(pieces) if "*" in pieces else None
    return None


def _project_class(
    project: ProjectIndex, value: Value, by_name: dict[str, list[str]]
) -> str | None:
    if value.kind not in {"name", "attr"}:
        return None
    for candidate in (value.qualname, project.resolve_instance(value.qualname or value.text)):
        if candidate in project.classes:
            return candidate
    named = by_name.get(value.text.rsplit(".", 1)[-1], [])
    return named[0] if len(named) == 1 else None


def _loaded_bases(project: ProjectIndex, loaders: dict[str, int]) -> dict[str, set[str]]:
    """The project classes handed to a loader that picks a module by a run-time name, with
    the globs of the modules it may pick."""
    by_name: dict[str, list[str]] = {}
    for qualname, (cls, facts) in project.classes.items():
        if not facts.is_test:
            by_name.setdefault(cls.name, []).append(qualname)
    bases: dict[str, set[str]] = {}
    for site in project.source_call_sites():
        loader_name = site.target or site.callee
        position = loaders.get(loader_name)
        if position is None:
            continue
        call = site.call
        loader = project.function(loader_name)
        params = [p for p in loader.params if p not in SELF_NAMES] if loader else []
        held = call.args[position] if position < len(call.args) else None
        if held is None and position < len(params):
            held = call.kwargs.get(params[position])
        others = [a for i, a in enumerate(call.args) if i != position]
        others += [
            v for k, v in call.kwargs.items() if position >= len(params) or k != params[position]
        ]
        patterns = {p for p in map(_pattern, others) if p is not None}
        base = _project_class(project, held, by_name) if held is not None else None
        if base is not None and patterns:
            bases.setdefault(base, set()).update(patterns)
    return bases


def _picked(path: str, module: str, patterns: set[str]) -> bool:
    """Whether a module is one a loader's globs may pick, by its file or its dotted name."""
    return any(
        fnmatch(path, pattern)
        or fnmatch(path, "*/" + pattern)
        or fnmatch(module, pattern)
        or fnmatch(module, "*." + pattern)
        for pattern in patterns
    )


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    loaders = _loaders(project)
    if not loaders:
        return
    bases = _loaded_bases(project, loaders)
    if not bases:
        return
    called = {
        call.method
        for facts in project.modules.values()
        if not facts.is_test
        for call in facts.calls
        if call.method and call.receiver not in SELF_NAMES
    }
    family = Family(project)
    taken = found.symbols()
    for base, patterns in bases.items():
        hooks = [
            m.rsplit(".", 1)[-1]
            for current in family.lineage(base)
            for m in project.classes[current][0].methods
            if project.is_interface_method(m)
        ]
        if not any(hook in called for hook in hooks):
            continue  # nothing runs what the loaded classes would do
        for cls_qual in family.members(base)[1:]:
            facts = project.classes[cls_qual][1]
            if cls_qual in taken or not _picked(facts.path, facts.module, patterns):
                continue
            entry = entry_method(project, family, cls_qual, set())
            if entry is None:
                continue
            stem = facts.path.rsplit("/", 1)[-1].removesuffix(".py")
            name = self_string(project, family, cls_qual, "name") or stem
            taken.add(cls_qual)
            yield from class_tools(project, cls_qual, name, entry, FORM)
