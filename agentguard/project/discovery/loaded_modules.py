"""Plugin folders: the modules a project loads at run time and takes its tools from.

A loader lists a folder and loads each file as a module (``tool_functions.module_scans``:
``importlib.import_module``, ``spec_from_file_location`` + ``module_from_spec``...), then
takes attributes from each: ``getattr(module, "execute")``, ``module.tool_export`` (a spec the
module writes as a variable), or the function named like the file (``getattr(module, name)``
with ``name`` the file's stem). What it takes from a module that reaches a model is a tool
of every module of the plugin folder that defines it, named by the spec the module writes,
else by its file.

The folder a loader lists is often built at run time (a constructor's argument, a path
from ``__file__``), so the folder is known by its convention instead: the project folder
whose modules (two or more, not ``_private`` ones) each define what the loader takes. When
the loader also keeps another attribute of the same module in a table under the module's key
(``executors[name] = make_executor(module.execute)``), that attribute runs the tool the
first one describes. Nothing here knows what the project calls its loader, folder or hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Function, ModuleFacts, Value
from agentguard.project.discovery.class_tools import spec_items

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

_MAX_HOPS = 4


def loads_a_module(
    project: ProjectIndex, value: Value, fn: Function | None, facts: ModuleFacts, hops: int = 0
) -> bool:
    """Whether ``value`` holds a module loaded at run time: a module loader's answer, or what
    a project function returns that holds one, through locals."""
    if hops > _MAX_HOPS or fn is None:
        return False
    if value.kind == "name":
        assigned = project.local_assignments(facts, fn.qualname, value.text)
        return any(loads_a_module(project, a.value, fn, facts, hops + 1) for a in assigned)
    if value.kind != "call" or value.span is None:
        return False
    if (value.qualname or value.text.partition("(")[0]) in project.catalog.module_scans:
        return True
    called = _project_callee(project, value, fn, facts)
    if called is None:
        return False
    callee = project.function(called)
    if callee is None:
        return False
    callee_facts = project.functions[called][1]
    return any(loads_a_module(project, r, callee, callee_facts, hops + 1) for r in callee.returns)


def _project_callee(
    project: ProjectIndex, value: Value, fn: Function, facts: ModuleFacts
) -> str | None:
    """The project function the call ``value`` runs (``self._load(path)`` included): its
    call site's target."""
    for call in project.calls_in(fn.qualname):
        if call.span == value.span:
            target = project.call_site(call, fn, facts).target
            return target if target in project.functions else None
    return None


def taken_from(
    project: ProjectIndex, module: str, loader: Function, facts: ModuleFacts
) -> list[tuple[str, str | None]]:
    """What the loader takes from the module held in ``module``: each ``getattr`` on it (the
    attribute's literal name, or None for a name built at run time) and each attribute it
    reads (``module.tool_export``), with the local it is bound to, or as written when it is
    handed on or stored without one."""
    taken: list[tuple[str, str | None]] = []
    prefix = f"{module}."
    for assignment in project.local_assignments(facts, loader.qualname, None):
        value = assignment.value
        if (
            value.kind == "call"
            and value.qualname == "getattr"
            and len(value.call_args) >= 2
            and value.call_args[0].text == module
        ):
            taken.append((assignment.target, value.call_args[1].string()))
        elif value.kind == "attr" and value.text.startswith(prefix):
            taken.append((assignment.target, value.text.removeprefix(prefix)))
    read = [
        value
        for call in project.calls_in(loader.qualname)
        for value in (*call.args, *call.kwargs.values())
    ]
    read += [store.value for store in facts.stores if store.function == loader.qualname]
    for value in read:
        attribute = value.text.removeprefix(prefix)
        if value.kind == "attr" and value.text.startswith(prefix) and attribute.isidentifier():
            taken.append((value.text, attribute))
    return taken


def _defines(plugin: ModuleFacts, name: str) -> str | None:
    """The qualified name of what a plugin module defines at its top as ``name``: a
    function or a module variable."""
    qualname = f"{plugin.module}.{name}"
    if qualname in plugin.functions or any(
        a.function is None and a.target == name for a in plugin.assignments
    ):
        return qualname
    return None


def plugin_modules(project: ProjectIndex, taken: list[tuple[str, str | None]]) -> list[ModuleFacts]:
    """The modules of the plugin folders a loader loads from, given what it ``taken`` from
    each (``taken_from``). A plugin folder holds two or more modules, none of them private
    (``_example.py``, ``__init__.py``), that define something the loader takes."""
    wanted = {name for _, name in taken}
    by_folder: dict[str, list[ModuleFacts]] = {}
    for plugin in project.modules.values():
        stem = _stem(plugin)
        if plugin.is_test or stem.startswith("_"):
            continue
        if any(_defines(plugin, name or stem) for name in wanted):
            by_folder.setdefault(plugin.path.rpartition("/")[0], []).append(plugin)
    return sorted(
        (plugin for members in by_folder.values() if len(members) >= 2 for plugin in members),
        key=lambda plugin: plugin.path,
    )


def plugin_tool(
    project: ProjectIndex, plugin: ModuleFacts, described: str | None, runner: str | None
) -> tuple[str, str] | None:
    """The tool a plugin module gives: its name and the function that runs it. What the
    loader hands the model is ``described`` (None: the function named like the file); the
    name is the spec's own when that is a spec written in the module, else the file's; the
    runner is what the loader keeps to run it, else the described function itself."""
    stem = _stem(plugin)
    qualname = _defines(plugin, described or stem)
    if qualname is None:
        return None
    kept = runner is not None and runner.isidentifier() and runner != described
    runs = f"{plugin.module}.{runner}" if kept else qualname
    if runs not in project.functions and runs == qualname:
        # ``tool = {"name": "web_search", "function": web_search, ...}``: a record holding
        # the function that runs it
        runs = _held_function(project, plugin, project.module_variable(qualname)) or runs
    if runs not in project.functions:
        return None
    name = stem
    if qualname not in plugin.functions:
        held = project.module_variable(qualname)
        spec = spec_items(held) if held is not None else None
        named = spec.get("name") if spec is not None else None
        written = named.string() if named is not None else None
        if written:
            name = written
        elif runs == qualname:
            return None  # a variable that is no spec, run by nothing
    return name, runs


def _held_function(project: ProjectIndex, plugin: ModuleFacts, record: Value | None) -> str | None:
    """The first project function (or method of a module's instance) a record holds."""
    for held in record.items.values() if record is not None and record.kind == "dict" else ():
        if held.kind not in {"name", "attr"}:
            continue
        found = project.project_function(held.qualname or held.text, plugin)
        if found is None and held.qualname:
            bound = project.resolve_instance(held.qualname)
            found = bound if bound != held.qualname and bound in project.functions else None
        if found is not None:
            return found
    return None


def _stem(facts: ModuleFacts) -> str:
    return facts.path.rsplit("/", 1)[-1].removesuffix(".py")


def kept_runner(
    taken: list[tuple[str, str | None]], loader: Function, facts: ModuleFacts
) -> str | None:
    """Of what the loader ``taken`` from each module, the attribute it keeps in a table under
    a key (``executors[name] = make_executor(execute_fn, ...)`` after ``execute_fn =
    getattr(module, "execute")``, or ``function_map[name] = module.function``): what runs
    the tool. None when there is no such one."""
    kept = {
        name
        for store in facts.stores
        if store.function == loader.qualname
        for name in (*store.value.names, store.value.text)
    }
    for local, name in taken:
        if name and local in kept:
            return name
    return None
