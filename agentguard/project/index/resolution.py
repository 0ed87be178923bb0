"""The project index's call resolution: what each call site runs (its callee as a
qualified name, the project functions it may run: directly, handed to a runner, through a
dispatch dict, a bound method, a partial, ``getattr`` or a decorator's wrapper), and the
call edges effect inference follows."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from agentguard.facts.module_facts import CALL_STEP, Call, Function, ModuleFacts, Step, Value
from agentguard.knowledge.catalog import Catalog, Matcher, NameIndex, normalise
from agentguard.knowledge.words import words
from agentguard.project.definitions import enclosing_class, local_function
from agentguard.project.index.call_site import CallSite
from agentguard.project.index.guessed_types import (
    ITERATOR_STEPS,
    Types,
    handed_back,
    unpacked_item,
)
from agentguard.project.tool_facts import SELF_NAMES, self_spelled

# A callee as written, resolved wherever it is called: (the name without "()", its dotted
# parts, whether the caller's class decides it, the project name it stands for if known).
_CalleeName = tuple[str, list[str], bool, "str | None"]


_FSTRING = re.compile(r"""^[fF][rR]?(['"])(?P<body>[^'"]*)\1$""")
_CONCATENATED = re.compile(
    r"""^(?:(['"])(?P<head>\w*)\1\s*\+\s*[\w.]+|[\w.]+\s*\+\s*(['"])(?P<tail>\w*)\3)$"""
)


def _name_pattern(text: str) -> tuple[str, str] | None:
    """The literal start and end of a name built as ``f"_handle_{name}"``, ``"tool_" +
    name`` or ``name + "_tool"``; None for any other form."""
    built = _FSTRING.match(text)
    if built is not None:
        body = built.group("body")
        if "{" not in body:
            return None
        return body.split("{", 1)[0], body.rsplit("}", 1)[-1]
    joined = _CONCATENATED.match(text)
    if joined is not None:
        return joined.group("head") or "", joined.group("tail") or ""
    return None


def _call_order(call: Call) -> int:
    return call.order


def entry_holder(value: Value) -> str | None:
    """The container an entry is looked up in, as written (``this.`` read as ``self.``):
    ``self.adapters`` of ``self.adapters.get(name)``, ``ADAPTERS`` of ``ADAPTERS[kind]``."""
    text = value.text
    head = text.split("(", 1)[0]
    if value.kind == "call" and head.endswith(".get"):
        holder = head[: -len(".get")]
    elif value.kind == "other" and text.endswith("]") and "[" in text:
        holder = text.split("[", 1)[0]
    else:
        return None
    return self_spelled(holder)


class ProjectIndex(Types):
    """Modules, definitions, imports, types and call resolution of the scanned project:
    the typed symbol table with every call site of every module resolved when it is built."""

    def __init__(self, modules: Iterable[ModuleFacts], catalog: Catalog) -> None:
        super().__init__(modules, catalog)
        # Every call of every module resolved for the function it is in, once, in the order
        # of the modules: tool discovery, effects, ledgers and retries all walk these.
        function = self.function
        self.sites_by_module: dict[str, list[CallSite]] = {
            facts.path: [
                self.call_site(call, function(call.function) if call.function else None, facts)
                for call in facts.calls
            ]
            for facts in self.modules.values()
        }
        self.resolved_callees = NameIndex(
            site.callee for sites in self.sites_by_module.values() for site in sites
        )

    def resolve_callee(self, call: Call, caller: Function | None, facts: ModuleFacts) -> str:
        """Resolve self.x.y and module-level instances into a qualified callee name."""
        return self.call_site(call, caller, facts).callee

    def call_target(self, call: Call, caller: Function | None, facts: ModuleFacts) -> str | None:
        """The project function a call runs (a class's ``__init__`` for a construction)."""
        return self.call_site(call, caller, facts).target

    def call_site(self, call: Call, caller: Function | None, facts: ModuleFacts) -> CallSite:
        """``call`` as resolved for ``caller``: its callee and the project function it runs."""
        # Memoised per call site: tool discovery, effects, ledgers, retries and resume each
        # resolve every call, some of them in several rounds.
        site = self._memo.sites.get(id(call))
        if (
            site is None
            or site.call is not call
            or site.caller is not caller
            or site.facts is not facts
        ):
            callee = self._resolve_callee(call, caller, facts)
            if facts.language == "python" and callee not in self.functions:
                # ``task.insert()`` on a ``Task(beanie.Document)``: the package's method
                callee = self.inherited_method(callee) or callee
            site = CallSite(call, caller, facts, callee, self._call_target(callee, facts))
            if site.target is not None and site.target in self._abstract_methods:
                # a method of an interface (``BaseClient.create``) has no effect of its
                # own: what runs is one of the project's implementations of it, chosen at
                # run time; with none, the call is judged as written, as a call no project
                # code answers
                implementations = self.implementations(site.target)
                site.target = implementations[0] if implementations else None
                site.also = implementations[1:]
            elif site.target is None:
                handed = self._handed_targets(call, callee, caller, facts)
                if handed:
                    site.target, site.also = handed[0], handed[1:]
                    site.forwarded = self._forwarded(call, callee)
            else:
                site.also = self._passed_functions(call, site.target, caller, facts)
            self._memo.sites[id(call)] = site
        return site

    def _call_target(self, callee: str, facts: ModuleFacts) -> str | None:
        # ``project_function`` (then a class's ``__init__``), with what does not depend on
        # the calling module worked out once per name.
        known = self._memo.targets.get(callee)
        if known is None:
            known = self._memo.targets[callee] = self._target_anywhere(callee)
        direct, maybe_local, otherwise = known
        if direct is not None:
            return direct
        if maybe_local:
            local = f"{facts.module}.{callee}"
            if local in self.functions:
                return local
        if otherwise is None and facts.star_imports:
            # ``from core.pods import *`` then ``delete_pod(name)``: the function of that
            # name the star-imported module defines
            return self.project_function(callee, facts)
        return otherwise

    def _target_anywhere(self, callee: str) -> tuple[str | None, bool, str | None]:
        """For ``_call_target``: the project function ``callee`` names from any module, whether
        the calling module's own function of that name could come first, and the target
        when it does not (a re-exported function, or a class's ``__init__``)."""
        if callee in self.functions:
            return (callee, False, None)
        maybe_local = bool(callee) and callee.rsplit(".", 1)[-1] in self._function_tails
        otherwise = None
        if "." in callee and callee.split(".", 1)[0] in self._function_firsts:
            otherwise = self.dotted_function(callee)
        if otherwise is None and callee in self.classes:
            otherwise = self.find_method(callee, "__init__")
        return (None, maybe_local, otherwise)

    def _handed_targets(
        self, call: Call, callee: str, caller: Function | None, facts: ModuleFacts
    ) -> tuple[str, ...]:
        """The project functions a call runs through indirection: one handed to a function
        that runs it (``asyncio.to_thread(send, ...)``, the catalogue's callable runners),
        an entry of a dispatch dict (``HANDLERS[name](...)``), or a local bound to a
        function, a bound method or a partial (``fn = partial(send, to); fn()``)."""
        handed = self._handed_value(call, callee)
        if handed is not None:
            runs = self._reference_targets(handed, call, caller, facts, 0)
            if runs:
                return runs
            # ``executor.submit(job)`` is written as a runner's method is, but hands no
            # function: a method of the project object it is called on, looked for below
        written = call.callee
        if written.startswith("getattr(") and caller is not None:
            # ``getattr(self, f"_handle_{name}")(arguments)``: the getattr call is the one
            # this call is made on
            inner = self.chained_request(call)
            if inner is not None and inner.callee == "getattr" and len(inner.args) >= 2:
                return self._getattr_targets(inner.args[0], inner.args[1], caller)
            return ()
        if "(" in written or (caller is None and not call.text.endswith("]")):
            return ()
        chosen = self._table_methods(written, call, caller, facts)
        if chosen:
            return chosen
        if written.startswith("self.") and written.count(".") == 1 and caller is not None:
            # ``self.run_tool(...)`` where ``run_tool`` is a field the object was built with
            owner = caller.class_name or enclosing_class(self, caller)
            fields = self._field_targets(owner, written.split(".", 1)[1]) if owner else ()
            if fields:
                return fields
        held = self.held_value(written, caller, facts)
        if held is None:
            return ()
        if call.text.endswith("]"):
            return self._dict_targets(held, call, caller, facts)
        return self._reference_targets(held, call, caller, facts, 0)

    def _table_methods(
        self, written: str, call: Call, caller: Function | None, facts: ModuleFacts
    ) -> tuple[str, ...]:
        """``executor.run(payload)`` on an object chosen at run time: an entry of a dict of
        project objects (``executor = EXECUTORS[kind]``, ``.get(kind)``, or
        ``EXECUTORS[kind].run(...)`` itself), what a project factory returns on its paths
        (``_held_classes``), or what the constructions of the class hand the parameter its
        constructor keeps as ``self.executor``. The method of each class it may be runs."""
        root, _, method = written.rpartition(".")
        if caller is None or not method.isidentifier():
            return ()
        if root.isidentifier():
            bound = self.held_value(root, caller, facts)
        elif root.partition(".")[0] in SELF_NAMES and root.count(".") == 1:
            # ``self.executor.run(cmd)`` with ``self.executor = executor`` from the
            # constructor: what each construction hands it
            return self._constructed_field_methods(root.partition(".")[2], method, caller, facts)
        elif call.receiver is not None and call.receiver.endswith("]"):
            # ``EXECUTORS[kind].run(payload)``: the entry looked up where it is called on
            bound = Value("other", call.receiver)
        else:
            return ()
        found: list[str] = []
        for made in self._held_classes(bound, caller, facts) if bound is not None else ():
            target = self.find_method(made, method)
            if target is None:
                continue
            # an interface method: its implementations
            chosen = self.implementations(target) if target in self._abstract_methods else (target,)
            for each in chosen:
                if each not in found:
                    found.append(each)
        return tuple(found)

    def _constructed_field_methods(
        self, attr: str, method: str, caller: Function, facts: ModuleFacts
    ) -> tuple[str, ...]:
        """``self.<attr>.<method>(...)`` where the constructor keeps a parameter as
        ``self.<attr>`` and no annotation types it: the method of each project class whose
        object a construction of the class hands that parameter (``Service(Remote())``)."""
        owner = caller.class_name or enclosing_class(self, caller)
        init = self.find_method(owner, "__init__") if owner else None
        if owner is None or init is None:
            return ()
        init_fn, init_facts = self.functions[init]
        kept = [a.value for a in self.local_assignments(init_facts, init, f"self.{attr}")]
        if len(kept) != 1 or kept[0].kind != "name" or kept[0].text not in init_fn.params:
            return ()
        short = owner.rsplit(".", 1)[-1]
        found: list[str] = []
        for built, built_facts in self.calls_named(short):
            if self._call_target(built.callee, built_facts) != init:
                continue
            handed = self._argument_for(built, init, kept[0].text)
            if handed is not None and handed.kind == "name":
                builder = self.function(built.function) if built.function else None
                handed = self.held_value(handed.text, builder, built_facts) or handed
            made = self.built_type(handed) if handed is not None else None
            target = self.find_method(made, method) if made in self.classes else None
            if target is not None and target not in found:
                found.append(target)
        return tuple(found)

    def _held_classes(self, bound: Value, caller: Function, facts: ModuleFacts) -> list[str]:
        """The project classes a local may hold an object of, chosen at run time: an entry
        of a dict of project objects (``EXECUTORS[kind]``, ``.get(kind)``), or what a
        project function returns on any path (``return Remote() if remote else Local()``)."""
        table_name = self._looked_up(bound)
        if table_name is not None:
            table = self.held_value(table_name, caller, facts)
            entries = (
                list(table.items.values()) if table is not None and table.kind == "dict" else []
            )
            if not entries:
                # filled at run time: the class the container is declared to hold, or any
                # of its subclasses
                declared = self._entry_class(bound, caller, facts)
                if declared is None or declared not in self.classes:
                    return []
                return [declared, *self.subclasses(declared)]
        elif bound.kind == "call" and (maker := self.functions.get(bound.qualname or "")):
            if maker[0].class_name or len(maker[0].returns) + _either_count(maker[0].returns) < 2:
                return []  # one answer: typed where it is bound (``_factory_class``)
            entries = [self.returned_binding(value, *maker) for value in maker[0].returns]
        else:
            return []
        found: list[str] = []
        for entry in entries:
            for each in entry.parts if entry.op == "if" else (entry,):
                made = self.built_type(each)
                if made in self.classes and made not in found:
                    found.append(made)
        return found

    def _entry_class(self, bound: Value, caller: Function, facts: ModuleFacts) -> str | None:
        """The class of an entry looked up (``self.adapters.get(name)``, ``ADAPTERS[kind]``)
        in a container whose declaration names it (``adapters: dict[str, Adapter]``,
        ``Map<string, Adapter>``): a field of the caller's class, or a module variable."""
        holder = entry_holder(bound)
        if holder is None:
            return None
        head, _, attr = holder.partition(".")
        if head in SELF_NAMES:
            owner = caller.class_name or enclosing_class(self, caller)
            if owner is None or not attr.isidentifier():
                return None
            for each in self.lineage(owner):
                declared = self.classes[each][0].item_types if each in self.classes else {}
                if attr in declared:
                    return declared[attr]
            return None
        if not holder.isidentifier():
            return None
        if holder in facts.item_types:
            return facts.item_types[holder]
        module, _, name = facts.imports.get(holder, "").rpartition(".")
        written_in = self.modules_by_name.get(module)
        return written_in.item_types.get(name) if written_in is not None else None

    def _passed_functions(
        self, call: Call, target: str, caller: Function | None, facts: ModuleFacts
    ) -> tuple[str, ...]:
        """The project functions handed to a project function that calls the parameter it
        receives them in: ``self._safe_call(call_fn)`` with ``def _safe_call(self, f):
        return f()`` runs ``call_fn`` too."""
        called = self.called_params(target)
        if not called:
            return ()
        found: list[str] = []
        for param in sorted(called):
            value = self._argument_for(call, target, param)
            if value is None or value.kind not in {"name", "attr", "call"}:
                continue
            for passed in self._reference_targets(value, call, caller, facts, 0):
                if passed != target and passed not in found:
                    found.append(passed)
        return tuple(found)

    def called_params(self, target: str) -> frozenset[str]:
        """The parameters of ``target`` that it calls: directly (``fn(*args)``), handed to a
        callable runner (``asyncio.to_thread(fn)``), or passed on to a project function that
        calls them, through any depth of helpers (``_outer(fn)`` calling ``_call(fn)``)."""
        called = self._memo.called_params.get(target)
        if called is not None:
            return called
        self._memo.called_params[target] = frozenset()  # a cycle of helpers ends here
        fn, facts = self.functions[target]
        params = set(fn.params) - SELF_NAMES
        found: set[str] = set()
        for call in self.calls_in(target):
            if call.callee in params:
                found.add(call.callee)
                continue
            given = (*call.args, *call.kwargs.values())
            if not any(v.kind == "name" and v.text in params for v in given):
                continue  # hands on none of its parameters
            callee = self._resolve_callee(call, fn, facts)
            handed = self._handed_value(call, callee)
            if handed is not None and handed.kind == "name" and handed.text in params:
                found.add(handed.text)
                continue
            helper = self._call_target(callee, facts)
            if helper is None or helper == target:
                continue
            for param in self.called_params(helper):
                value = self._argument_for(call, helper, param)
                if value is not None and value.kind == "name" and value.text in params:
                    found.add(value.text)
        called = frozenset(found)
        self._memo.called_params[target] = called
        return called

    def _argument_for(self, call: Call, target: str, param: str) -> Value | None:
        """The argument ``call`` gives ``target``'s parameter ``param``."""
        value = call.kwargs.get(param)
        if value is not None:
            return value
        params = [p for p in self.functions[target][0].params if p not in SELF_NAMES]
        index = params.index(param) if param in params else len(call.args)
        return call.args[index] if index < len(call.args) else None

    def passed_callables(self, site: CallSite) -> list[tuple[str, Value]]:
        """What a call hands a project function for a parameter it calls (``called_params``),
        when that is no project function (those are the site's targets): each parameter
        with its argument, an external method (``client.remove``), a value of no known
        kind, or a parameter of the caller (its own callers hand what it calls)."""
        target = site.target
        if target is None or site.caller is None:
            return []
        found: list[tuple[str, Value]] = []
        for param in sorted(self.called_params(target)):
            value = self._argument_for(site.call, target, param)
            if value is None or value.kind == "lambda":
                continue  # a lambda's calls are the caller's own
            if value.kind in {"name", "attr", "call"} and self._reference_targets(
                value, site.call, site.caller, site.facts, 0
            ):
                continue
            found.append((param, value))
        return found

    def _field_targets(self, cls_qual: str, attr: str) -> tuple[str, ...]:
        """The project functions a class's objects are built with as field ``attr``
        (``Tool(run=self.run_tool, ...)``, a dataclass or pydantic field holding a
        callable) when the class has no method of that name: what ``self.<attr>(...)``
        runs."""
        if cls_qual not in self.classes or self.find_method(cls_qual, attr) is not None:
            return ()
        name = cls_qual.rsplit(".", 1)[-1]
        found: list[str] = []
        for built, facts in self._constructions().get(name, ()):
            if built.callee not in {cls_qual, name} or attr not in built.kwargs:
                continue
            caller = self.function(built.function) if built.function else None
            for target in self._reference_targets(built.kwargs[attr], built, caller, facts, 0):
                if target not in found:
                    found.append(target)
        return tuple(found)

    def _constructions(self) -> dict[str, list[tuple[Call, ModuleFacts]]]:
        """Calls with keyword arguments to a name that looks like a class, by that name."""
        index = self._memo.constructions
        if index is None:
            index = {}
            for facts in self.modules.values():
                for call in facts.calls:
                    last = call.callee.rsplit(".", 1)[-1]
                    if call.kwargs and last[:1].isupper():
                        index.setdefault(last, []).append((call, facts))
            self._memo.constructions = index
        return index

    def _forwarded(self, call: Call, callee: str) -> Call | None:
        """A runner's call as the function it runs receives it: the arguments after the
        function (``to_thread(f, a, b)``, ``submit(f, a, b)``), or ``args=``/``kwargs=``
        beside ``target=`` (``Thread(target=f, args=(a, b))``); a partial's own arguments
        come first. None: the call passes its arguments as they are."""
        runners = self.catalog.callable_runners
        spec = runners(callee) or runners(call.callee)
        if spec is None:
            return None
        arg, kwarg = spec
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        if arg is not None and len(call.args) > arg:
            handed, args, kwargs = call.args[arg], call.args[arg + 1 :], dict(call.kwargs)
        elif kwarg and kwarg in call.kwargs:
            handed = call.kwargs[kwarg]
            listed, named = call.kwargs.get("args"), call.kwargs.get("kwargs")
            args = list(listed.elements) if listed is not None else []
            kwargs = dict(named.items) if named is not None else {}
        else:
            return None
        if handed.kind == "call" and handed.call_args and runners(handed.qualname):
            args = [*handed.call_args[1:], *args]
            kwargs = {**handed.call_kwargs, **kwargs}
        forwarded = copy.copy(call)
        forwarded.args, forwarded.kwargs = args, kwargs
        return forwarded

    def _handed_value(self, call: Call, callee: str) -> Value | None:
        """The function argument of a callable runner's call, if ``callee`` is one."""
        runners = self.catalog.callable_runners
        spec = runners(callee) or runners(call.callee)
        if spec is None:
            return None
        arg, kwarg = spec
        if arg is not None and len(call.args) > arg:
            return call.args[arg]
        return call.kwargs.get(kwarg) if kwarg else None

    def held_value(self, name: str, caller: Function | None, facts: ModuleFacts) -> Value | None:
        """What a name holds where ``caller`` (None: module level) uses it: its last
        assignment in ``caller`` (``self.attr = ...`` too), a module variable (of this module,
        or imported), or an attribute the caller's class sets on ``self`` (in its body or in
        a method)."""
        if caller is not None:
            assigned = self.local_assignments(facts, caller.qualname, name)
            if assigned:
                return assigned[-1].value
        held = self.module_variable(name)
        if held is not None:
            return held
        if "." not in name:
            imported = facts.imports.get(name)
            local = self.module_variable(imported or f"{facts.module}.{name}")
            if local is not None:
                return local
        parts = name.split(".")
        if caller is not None and len(parts) == 2 and parts[0] in SELF_NAMES:
            owner = caller.class_name or enclosing_class(self, caller)
            entry = self.classes.get(owner) if owner else None
            if entry is not None:
                if parts[1] in entry[0].attributes:
                    return entry[0].attributes[parts[1]]
                for method in entry[0].methods:
                    for assignment in self.local_assignments(facts, method, name):
                        return assignment.value
        return None

    def _dict_targets(
        self, held: Value, call: Call, caller: Function | None, facts: ModuleFacts
    ) -> tuple[str, ...]:
        """Every project function a dispatch dict (``{"refund": refund, ...}``) holds."""
        if held.kind != "dict":
            return ()
        found: list[str] = []
        for entry in held.items.values():
            for target in self._reference_targets(entry, call, caller, facts, 0):
                if target not in found:
                    found.append(target)
        return tuple(found)

    def _reference_targets(
        self, value: Value, call: Call, caller: Function | None, facts: ModuleFacts, depth: int
    ) -> tuple[str, ...]:
        """The project function a value names without calling it: a function or a nested
        one, a bound method (``self.send``, ``client.send``), or a partial of one."""
        if depth > 3:
            return ()
        if value.op == "if":
            # ``self.send_to_a if backend == "a" else self.send_to_b``: either may run
            found: list[str] = []
            for part in value.parts:
                for either in self._reference_targets(part, call, caller, facts, depth + 1):
                    if either not in found:
                        found.append(either)
            return tuple(found)
        looked_up = self._looked_up(value)
        if looked_up is not None:
            # ``HANDLERS.get(name)`` or ``HANDLERS[name]``: any function the dict holds.
            held = self.held_value(looked_up, caller, facts)
            return self._dict_targets(held, call, caller, facts) if held is not None else ()
        if value.kind == "call" and value.qualname == "getattr" and len(value.call_args) >= 2:
            # ``handler = getattr(self, f"tool_{name}", None)``
            return self._getattr_targets(value.call_args[0], value.call_args[1], caller)
        if value.kind == "call":
            # ``partial(send, to)`` handed on: the function inside it.
            runner = Call(value.qualname or "", value.text, "", None, call.span, value.call_args)
            runner.kwargs = value.call_kwargs
            inner = self._handed_value(runner, value.qualname or "")
            if inner is None:
                return ()
            return self._reference_targets(inner, call, caller, facts, depth + 1)
        if value.kind == "name" and caller is not None and value.qualname == value.text:
            # a local bound to a function, or a function nested in the caller
            nested = local_function(self, value, call)
            if nested is not None:
                return (nested,)
            held = self.held_value(value.text, caller, facts)
            if held is not None and held is not value:
                return self._reference_targets(held, call, caller, facts, depth + 1)
            return ()
        if value.kind not in {"name", "attr"}:
            return ()
        written = value.qualname or value.text
        reference = Call(written, value.text, written.rsplit(".", 1)[-1], None, call.span)
        target = self._call_target(self._resolve_callee(reference, caller, facts), facts)
        if target is None or target.endswith(".__init__"):
            return ()
        return (target,)

    def _getattr_targets(
        self, owner_value: Value, name: Value, caller: Function | None
    ) -> tuple[str, ...]:
        """The methods ``getattr(self, name)`` may give: the one a literal names, or every
        method of the class (its project bases included) whose name has the literal start
        and end of ``f"_handle_{name}"`` or ``"tool_" + name`` (three characters at least:
        a name built from nothing known could be any method)."""
        if caller is None or owner_value.text not in SELF_NAMES:
            return ()
        owner = caller.class_name or enclosing_class(self, caller)
        if owner is None:
            return ()
        literal = name.string()
        if literal is not None:
            method = self.find_method(owner, literal)
            return (method,) if method else ()
        ends = _name_pattern(name.text)
        if ends is None or len(ends[0]) + len(ends[1]) < 3:
            return ()
        prefix, suffix = ends
        found: dict[str, str] = {}
        for cls_qual in [owner, *self.class_bases(self.classes[owner][0])]:
            entry = self.classes.get(cls_qual)
            for method in entry[0].methods if entry else ():
                short = method.rsplit(".", 1)[-1]
                if short.startswith(prefix) and short.endswith(suffix) and short not in found:
                    found[short] = method  # a subclass's method hides its base's
        return tuple(q for q in sorted(found.values()) if q != caller.qualname)

    @staticmethod
    def _looked_up(value: Value) -> str | None:
        """The dict a value looks an entry up in: ``HANDLERS`` of ``HANDLERS.get(name)``
        or of ``HANDLERS[name]`` (as resolved, for ``.get``; as written, for ``[]``)."""
        if value.kind == "call" and value.qualname and value.qualname.endswith(".get"):
            return value.qualname[: -len(".get")]
        if value.kind == "other" and value.text.endswith("]") and "[" in value.text:
            head = value.text.split("[", 1)[0]
            if head.replace(".", "").replace("_", "").isalnum():
                return head
        return None

    def call_sites(self, facts: ModuleFacts) -> list[CallSite]:
        """The calls of ``facts``, each resolved for the function it is in (resolved when
        the index was built)."""
        sites = self.sites_by_module.get(facts.path)
        if sites is None:
            raise KeyError(f"{facts.path} is not a module of the project index")
        return sites

    def source_call_sites(self) -> Iterator[CallSite]:
        """The call sites of every module outside the tests, module by module."""
        for facts in self.modules.values():
            if not facts.is_test:
                yield from self.call_sites(facts)

    def callees_matching(self, matcher: Matcher[Any], *, resolved: bool) -> frozenset[str]:
        """The callees in the project, as written (``call.callee``) or as resolved for their
        call sites, that ``matcher`` knows: a walk over every call site tests membership in
        this set instead of asking the catalogue at each site. Most sites match nothing."""
        key = (id(matcher), resolved)
        entry = self._memo.matching.get(key)
        if entry is None or entry[0] is not matcher:
            names = self.resolved_callees if resolved else self._written_names
            entry = self._memo.matching[key] = (matcher, matcher.among(names))
        return entry[1]

    def _handed_call(self, call: Call, callee: str) -> Call | None:
        """For a call that runs a function outside the project it is handed
        (``asyncio.to_thread(client.create, model, values)``, the catalogue's
        ``callable_runners``): the call of that function with the arguments after it, at the
        same place (memoised: the call site resolved for it is). None for any other call;
        project functions handed over are call targets (``_handed_targets``)."""
        memo = self._memo.handed.get(id(call))
        if memo is not None and memo[0] is call:
            return memo[1]
        function = self._handed_value(call, callee)
        handed = None
        if function is not None and function.kind in {"name", "attr"}:
            handed = self._runner_call(call, callee, function)
        self._memo.handed[id(call)] = (call, handed)
        return handed

    def _runner_call(self, call: Call, callee: str, function: Value) -> Call:
        forwarded = self._forwarded(call, callee) or call
        text = function.text
        return Call(
            callee=function.qualname or text,
            text=f"{text}(...)",
            # the name called, from the resolved name: a long text is cut short
            method=(function.qualname or text).rsplit(".", 1)[-1],
            receiver=text.rsplit(".", 1)[0] if "." in text else None,
            span=call.span,
            args=forwarded.args,
            kwargs=forwarded.kwargs,
            star_kwargs_values=call.star_kwargs_values,
            function=call.function,
            loop_ids=call.loop_ids,
            order=call.order,
        )

    def followed_site(self, call: Call, caller: Function, facts: ModuleFacts) -> CallSite:
        """``call`` as effect inference follows it: the function a runner call is handed
        (``_handed_call``) in its place when that is what the call runs."""
        site = self.call_site(call, caller, facts)
        if site.target is None:
            handed = self._handed_call(call, site.callee)
            if handed is not None:
                return self.call_site(handed, caller, facts)
        return site

    def call_edges(self, qualname: str) -> list[tuple[Call, str]]:
        """The calls in ``qualname`` that run another project function, with that function
        (kept from effect inference for the functions it worked out)."""
        edges = self._memo.edges.get(qualname)
        if edges is None:
            fn, facts = self.functions[qualname]
            edges = []
            for written in self.calls_in(qualname):
                site = self.followed_site(written, fn, facts)
                for target in site.targets:
                    if target != qualname:
                        edges.append((site.edge_call, target))
            edges.extend(self.decorator_edges(qualname))
            self._memo.edges[qualname] = edges
        return edges

    def decorator_edges(self, qualname: str) -> list[tuple[Call, str]]:
        """The wrappers project decorators put around ``qualname``: a decorator (or what a
        decorator factory returns, for ``@audited("refunds")``) that returns a function
        nested in it which calls the function it was given. Calling the decorated function
        runs that wrapper, so its effects are the function's; each edge's call is the
        decorator as written."""
        entry = self.functions.get(qualname)
        if entry is None or not entry[0].decorators:
            return []
        fn, facts = entry
        edges: list[tuple[Call, str]] = []
        for decorator in fn.decorators:
            maker = self.project_function(decorator.qualname, facts)
            if maker is None:
                continue
            if decorator.called:
                maker = self._returned_nested(maker, wraps=False)
            wrapper = self._returned_nested(maker, wraps=True) if maker else None
            if wrapper is not None and wrapper != qualname:
                call = Call(decorator.qualname, decorator.text, "", None, decorator.span)
                call.function = qualname
                edges.append((call, wrapper))
        return edges

    def _resolve_callee(self, call: Call, caller: Function | None, facts: ModuleFacts) -> str:
        # Most of what a name resolves to does not depend on the call site: it is worked out
        # once per name (and class), and only the site-specific parts are looked at here.
        name = self._memo.callee_names.get(call.callee)
        if name is None:
            name = self._memo.callee_names[call.callee] = self._resolve_name(call.callee)
        callee, parts, on_class, resolved = name
        # ``self`` in a function nested in a method is the method's ``self``.
        owner = caller.class_name or enclosing_class(self, caller) if on_class and caller else None
        if owner:
            class_key = (owner, facts.module, callee)
            found = self._memo.class_names.get(class_key)
            if found is None:
                found = self._memo.class_names[class_key] = self._resolve_on_class(
                    callee, parts, owner, facts
                )
            return found
        if len(parts) >= 2 and caller is not None and self._self_alias(parts[0], caller, facts):
            # ``toolkit = self`` in a method, ``toolkit.run_tool(...)`` in a function nested
            # in it: a call on the method's ``self``
            owner = enclosing_class(self, caller)
            if owner:
                return self._resolve_on_class(callee, ["self", *parts[1:]], owner, facts)
        types = self.module_types.get(facts.module, {})
        # Only a name the extractor left unresolved (a module variable assigned below its
        # use): ``mcp.server.fastmcp.FastMCP.add_tool`` must not be resolved twice.
        if parts[0] in types and callee == normalise(call.text):
            return ".".join([types[parts[0]], *parts[1:]])
        if caller is not None and (resolved is None or resolved not in self.functions):
            held = self._option_function(call, caller, facts)
            if held is not None:
                return held
        if resolved is not None:
            return resolved
        if len(parts) >= 2 and caller is not None and self.catalog.lifespan_attributes:
            lifespan = self._through_lifespan(callee, parts, caller, facts)
            if lifespan is not None:
                return lifespan
        if len(parts) >= 2 and caller is not None:
            # An instance a project function made and returned: a project class's method
            # (Cls.method), or the method of the class its return annotation names.
            made = self._factory_class(parts[0], caller, facts)
            if made in self.classes and len(parts) == 2:
                method = self.find_method(made, parts[1])
                if method:
                    return method
                if self.self_bindings(made, parts[1]):
                    # ``stub.AddItem(...)``: a callable the class binds to ``self.AddItem``
                    return f"{made}.{parts[1]}"
            elif made:
                typed = ".".join([made, *parts[1:]])
                return self._resolve_name(typed)[3] or typed
        if len(parts) >= 2 and caller is not None:
            # ``def register(server): server.tool(...)`` called as ``register(mcp)`` with
            # ``mcp = FastMCP(...)``: a parameter holds what every caller hands it
            handed = self.handed_type(caller, parts[0])
            if handed is not None:
                # ``google.gmail()`` handed over: the client that factory call made
                typed = ".".join([handed.replace("()", ""), *parts[1:]])
                return self._resolve_name(typed)[3] or typed
        if (
            len(parts) == 2
            and caller is not None
            and (parts[0] in caller.params or self._taken_from_params(parts[0], caller, facts))
        ):
            # ``db.execute_query(sql)`` on a parameter no annotation types: the one project
            # class that defines a method so named, when its name is of several words
            return self._sole_method(parts[1]) or callee
        if caller is not None and self._on_project_answer(call, parts, caller, facts):
            # ``get_client(cluster).index_document(...)``, or ``client = get_client()`` then
            # ``client.index_document(...)``: what a project function returned, of no type
            # it names; the same one project method
            return self._sole_method(call.method) or callee
        return callee

    def _through_lifespan(
        self, callee: str, parts: list[str], caller: Function, facts: ModuleFacts
    ) -> str | None:
        """``ctx.request_context.lifespan_context.db.execute(...)`` (or ``db = ctx.
        request_context.lifespan_context.db`` first) in a tool of an MCP server built with
        ``lifespan=``: a call on the field of the object the lifespan yields."""
        written = callee
        assigned = self.local_assignments(facts, caller.qualname, parts[0])
        if assigned and assigned[-1].value.kind == "attr" and assigned[-1].value.qualname:
            written = ".".join([assigned[-1].value.qualname, *parts[1:]])
        for attribute in self.catalog.lifespan_attributes:
            _, marker, tail = written.partition(f".{attribute}.")
            if not marker:
                continue
            held = self._lifespan_class()
            field_name, _, rest = tail.partition(".")
            typed = self.self_type(held, field_name) if held and rest else None
            if typed is not None:
                joined = f"{typed}.{rest}"
                return self._resolve_name(joined)[3] or joined
        return None

    def _lifespan_class(self) -> str | None:
        """The project class the ``lifespan=`` function of the project's MCP server yields
        (its return annotation's, or what it yields); None when no server, or several
        yielding different classes, say."""

        def work_out() -> str | None:
            found: set[str] = set()
            servers = self.catalog.lifespan_servers
            for facts in self.modules.values():
                for call in facts.calls:
                    handed = call.kwargs.get("lifespan")
                    if handed is None or not servers(call.callee):
                        continue
                    target = self.project_function(handed.qualname or handed.text, facts)
                    fn = self.function(target) if target else None
                    if fn is None:
                        continue
                    made = fn.return_type or next(
                        (m for y in fn.yields if (m := self.built_type(y))), None
                    )
                    if made in self.classes:
                        found.add(made)
            return found.pop() if len(found) == 1 else None

        return self.remembered("lifespan class", work_out)

    def _on_project_answer(
        self, call: Call, parts: list[str], caller: Function, facts: ModuleFacts
    ) -> bool:
        """Whether ``call`` is a method called on what a project function returned: directly
        (``make().method()``) or through a local bound to that call."""
        chain = call.chain
        if chain is not None and len(chain.steps) == 2 and chain.steps[0] == ("call", None):
            maker = call.callee.rpartition("().")[0]
            return bool(maker) and self.project_function(maker, facts) is not None
        if len(parts) != 2 or (caller.qualname, parts[0]) not in self._call_bound(facts):
            return False
        assigned = self.local_assignments(facts, caller.qualname, parts[0])
        bound = assigned[-1].value if assigned else None
        if bound is None or bound.kind != "call" or not bound.calls:
            return False
        return self.project_function(bound.calls[0].replace("()", ""), facts) is not None

    def handed_type(self, function: Function, name: str) -> str | None:
        """The class every call of ``function`` (or of the function it is nested in) hands
        its parameter ``name``, when the callers agree on one and it is a class of a
        package or the project (``registerTools(this.server)`` with ``server = new
        McpServer(...)``); None when any caller hands something else or nothing is known."""
        owner: Function | None = function
        while owner is not None and name not in owner.params:
            head, sep, _ = owner.qualname.rpartition(".<locals>.")
            owner = self.function(head) if sep else None
        if owner is None or name in SELF_NAMES:
            return None
        key = (owner.qualname, name)
        memo = self._memo.handed_types
        if key in memo:
            return memo[key]
        memo[key] = None  # a caller reached again through itself hands nothing known
        memo[key] = found = self._agreed_handed_type(owner, name)
        return found

    def _agreed_handed_type(self, function: Function, name: str) -> str | None:
        position = function.params.index(name)
        if function.class_name is not None and function.params[:1] == ["self"]:
            position -= 1
        kinds: set[str] = set()
        for call, facts in self.calls_named(function.name):
            if self.project_function(call.callee, facts) != function.qualname:
                continue
            value = call.kwargs.get(name) or (
                call.args[position] if 0 <= position < len(call.args) else None
            )
            typed = self._value_type(value, call, facts) if value is not None else None
            if typed is None:
                return None
            kinds.add(typed)
        return kinds.pop() if len(kinds) == 1 else None

    def handed_values(
        self, function: Function, name: str
    ) -> tuple[bool, list[tuple[Value, Call, ModuleFacts]]]:
        """Whether any call of ``function`` resolves to it (each such call judges what it
        hands at its own site: ``passed_effects``), and, when none does, what the calls of
        its name made on a receiver of no known kind hand its parameter ``name``, each with
        its call: those handing exactly as many positional arguments as it takes
        (``handler.handle(name, args, apiGet, apiPost)`` on a module picked from a table).
        A test's calls hand stand-ins and are not counted."""
        key = (function.qualname, name)
        memo = self._memo.handed_values
        if key in memo:
            return memo[key]
        params = [p for p in function.params if p not in SELF_NAMES]
        position = params.index(name) if name in params else -1
        unresolved: list[tuple[Value, Call, ModuleFacts]] = []
        resolved = False
        for call, facts in self.calls_named(function.name):
            if facts.is_test:
                continue
            target = self.project_function(call.callee, facts)
            if target == function.qualname:
                resolved = True
                break
            value = call.args[position] if 0 <= position < len(call.args) else None
            if (
                value is not None
                and target is None
                and "." in call.callee
                and len(call.args) == len(params)
                and not call.kwargs
                and self._untyped_receiver(call, facts)
            ):
                unresolved.append((value, call, facts))
        memo[key] = found = (resolved, [] if resolved else unresolved)
        return found

    def handed_by_callers(
        self, function: Function, name: str
    ) -> list[tuple[Value, Call, ModuleFacts]]:
        """What each call resolving to ``function`` hands its parameter ``name`` (by
        position or keyword), with the call: ``dispatch(name, args, _post)`` hands ``_post``
        to ``post``. A test's calls are not counted."""
        params = [p for p in function.params if p not in SELF_NAMES]
        position = params.index(name) if name in params else -1
        found: list[tuple[Value, Call, ModuleFacts]] = []
        for call, facts in self.calls_named(function.name):
            if facts.is_test or self.project_function(call.callee, facts) != function.qualname:
                continue
            value = call.kwargs.get(name) or (
                call.args[position] if 0 <= position < len(call.args) else None
            )
            if value is not None:
                found.append((value, call, facts))
        return found

    def handed_functions(self, value: Value, call: Call, facts: ModuleFacts) -> tuple[str, ...]:
        """The project functions ``value``, handed by ``call``, names without calling them
        (a function, a bound method, a partial of one)."""
        caller = self.function(call.function) if call.function else None
        return self._reference_targets(value, call, caller, facts, 0)

    def _untyped_receiver(self, call: Call, facts: ModuleFacts) -> bool:
        """Whether ``call`` is a method call on a receiver nothing types: its callee, as
        resolved, is still the name as written."""
        caller = self.function(call.function) if call.function else None
        return self._resolve_callee(call, caller, facts) == call.callee

    def _value_type(self, value: Value, call: Call, facts: ModuleFacts) -> str | None:
        """The class a handed value holds, as the extractor typed it or as ``self.<attr>``
        of the calling method's class declares it."""
        qualname = value.qualname
        if value.kind not in {"name", "attr"} or not qualname:
            return None
        if value.kind == "name" and qualname == value.text and call.function:
            # handed on from the caller's own parameter: what the caller's callers hand it
            caller = self.function(call.function)
            return self.handed_type(caller, qualname) if caller is not None else None
        if qualname.startswith("self.") and qualname.count(".") == 1:
            caller = self.function(call.function) if call.function else None
            owner = enclosing_class(self, caller) if caller else None
            return self.self_type(owner, qualname[5:]) if owner else None
        if qualname in self.functions or ("." not in qualname and ":" not in qualname):
            return None
        if qualname.rsplit(".", 1)[0] == facts.module:
            return None  # a module variable the extractor could not type
        return qualname

    def callers_of(self, qualname: str) -> list[str]:
        """The project functions with a call that runs ``qualname``, each once: found
        through the calls of its name, not by resolving every call of the project."""
        found: list[str] = []
        for call, facts in self.calls_named(qualname.rsplit(".", 1)[-1]):
            caller = self.function(call.function) if call.function else None
            if caller is None or caller.qualname in found:
                continue
            if qualname in self.call_site(call, caller, facts).targets:
                found.append(caller.qualname)
        return found

    def calls_named(self, name: str) -> list[tuple[Call, ModuleFacts]]:
        index = self._memo.calls_by_last_name
        if index is None:
            index = self._memo.calls_by_last_name = {}
            for facts in self.modules.values():
                for call in facts.calls:
                    last = call.callee.rsplit(".", 1)[-1]
                    index.setdefault(last, []).append((call, facts))
        return index.get(name, [])

    def targets_on_lines(
        self, qualname: str, first: int, last: int, facts: ModuleFacts
    ) -> list[str]:
        """The project functions other than ``qualname`` that its calls on lines ``first``
        to ``last`` run, each once, in call order (a dispatch branch's helpers): asked for
        every branch once per tool name of the same dispatch, so kept."""
        key = (qualname, first, last)
        known = self._memo.targets_on_lines.get(key)
        if known is None:
            caller = self.function(qualname)
            known = []
            for call in sorted(self.calls_on_lines(qualname, first, last), key=_call_order):
                target = self.call_target(call, caller, facts)
                if target and target != qualname and target not in known:
                    known.append(target)
            self._memo.targets_on_lines[key] = known
        return known

    def calls_to(self, callee: str) -> list[tuple[Call, ModuleFacts]]:
        """The project's calls written to exactly ``callee``, from the index by last name."""
        return [
            (call, facts)
            for call, facts in self.calls_named(callee.rsplit(".", 1)[-1])
            if call.callee == callee
        ]

    def _taken_from_params(self, name: str, caller: Function, facts: ModuleFacts) -> bool:
        """Whether the local ``name`` only ever holds what a parameter carries under a key
        (``user_context = kwargs.get("_user_context")``, ``store = params["store"]``): of no
        type the code says, like the parameter itself."""
        bound = self.local_assignments(facts, caller.qualname, name)
        return bool(bound) and all(
            (chain := assignment.value.chain) is not None
            and chain.root in caller.params
            and chain.root not in SELF_NAMES
            and (chain.steps == (("attr", "get"), CALL_STEP) or _one_item(chain.steps))
            for assignment in bound
        )

    def _sole_method(self, name: str) -> str | None:
        """The only method named ``name`` (of two words or more: ``execute_query``, not
        ``send``) that the project's own, non-test classes define."""
        if len(words(name, identifier=True)) < 2:
            return None
        found = [
            q
            for q in self.by_name.get(name, ())
            if self.functions[q][0].class_name and not self.functions[q][1].is_test
        ]
        return found[0] if len(found) == 1 else None

    def _self_alias(self, name: str, caller: Function, facts: ModuleFacts) -> bool:
        """Whether ``name`` is a local bound to ``self`` (``outer = self``) in ``caller`` or
        in a function it is nested in, and never bound to anything else there."""
        if name in SELF_NAMES or not name.isidentifier():
            return False
        scope: str | None = caller.qualname
        while scope:
            bound = self.local_assignments(facts, scope, name)
            if bound:
                return all(a.value.kind == "name" and a.value.text in SELF_NAMES for a in bound)
            head, sep, _ = scope.rpartition(".<locals>.")
            scope = head if sep else None
        return False

    def _resolve_name(self, written: str) -> _CalleeName:
        """What ``written`` (a callee as the extractor left it) names wherever it is called:
        a project function or class, or a method of an instance another module holds (None:
        the call site decides)."""
        callee = written.replace("()", "")
        parts = callee.split(".")
        on_class = len(parts) >= 2 and (
            (parts[0] == "super" and len(parts) == 2) or parts[0] in SELF_NAMES
        )
        resolved: str | None = None
        if parts[0] not in self._name_firsts:
            return (callee, parts, on_class, resolved)
        instance = self.resolve_instance(callee)
        if instance != callee:
            resolved = self._method_if_project_class(instance)
            if resolved == instance and instance not in self.functions and len(parts) >= 3:
                # ``service_manager.category.add`` on a module's ``ServiceManager()``: the
                # method of the type its constructor gives ``self.category``
                resolved = self._through_typed_attribute(instance.split(".")) or resolved
        elif parts[0] in self.classes or callee in self.functions:
            resolved = callee
        elif len(parts) >= 2:
            owner = ".".join(parts[:-1])
            if owner in self.classes:
                resolved = self.find_method(owner, parts[-1])
            elif owner in self.functions:
                # ``makeApi().deploy``, its call marks dropped: what the object it returns holds
                resolved = self.returned_member(owner, parts[-1]) or self._decorated_call(
                    owner, parts[-1]
                )
            elif len(parts) >= 3:
                resolved = self._through_typed_attribute(parts)
        if resolved is None and "()." in written:
            resolved = self._on_returned_client(written)
        if resolved is None and len(parts) >= 2:
            resolved = self._on_returned_package_call(written, parts)
        return (callee, parts, on_class, resolved)

    def _on_returned_package_call(self, written: str, parts: list[str]) -> str | None:
        """``createClient.from().update()`` (``const supabase = await createClient()``),
        where the project function ``createClient`` returns a package's call on every path
        (``return createServerClient(url, key, {...})``): the chain on that call,
        ``npm:@supabase/ssr.createServerClient().from().update()``, which the catalogue
        knows. Through up to three such helpers."""
        for cut in range(len(parts) - 1, 0, -1):
            helper = ".".join(parts[:cut])
            entry = self.functions.get(helper)
            if entry is None:
                continue
            if entry[0].class_name or not written.startswith(helper):
                return None
            made = self._returned_package_call(helper)
            if made is None:
                return None
            rest = written[len(helper) :]
            return made + (rest if rest.startswith("()") else "()" + rest)
        return None

    def _returned_package_call(self, helper: str) -> str | None:
        """The package function every return of the project function ``helper`` calls
        (directly, through a local it bound so, or through another such helper), if one."""
        made = self._on_every_return(helper, self._package_call)
        return f"{made}()" if made else None

    def _package_call(self, value: Value, facts: ModuleFacts) -> str | None:
        """The package function ``value`` is a lone call of (``createServerClient(...)``,
        ``discovery.build(...)``), not a step on something else (``client.table(name)``)."""
        if value.kind != "call" or not value.qualname or value.chain is None:
            return None
        steps = value.chain.steps
        if steps[-1:] != (CALL_STEP,) or CALL_STEP in steps[:-1] or "." not in value.qualname:
            return None
        head = value.qualname.split(".", 1)[0]
        if head in self.module_heads or self.project_function(value.qualname, facts):
            return None
        return value.qualname

    def _option_function(self, call: Call, caller: Function, facts: ModuleFacts) -> str | None:
        """``updateTicketStateTool.func(args)``, where the module variable was built as
        ``new DynamicStructuredTool({..., func: async (...) => ...})`` (or ``Tool(func=...)``):
        the project function its options hold under the method's name, which the object
        keeps and the call runs."""
        chain = call.chain
        if chain is None or chain.steps != (("attr", call.method),):
            return None
        receiver = chain.root
        if not receiver or not receiver.isidentifier() or receiver in caller.params:
            return None
        if self.local_assignments(facts, caller.qualname, receiver):
            return None
        built = self.module_variable(facts.imports.get(receiver) or f"{facts.module}.{receiver}")
        if built is None or built.kind != "call":
            return None
        options = [built.call_kwargs, *(arg.items for arg in built.call_args if arg.kind == "dict")]
        for held in (option.get(call.method) for option in options):
            if held is not None and held.qualname in self.functions:
                return held.qualname
        return None

    def _on_returned_client(self, written: str) -> str | None:
        """``app.clients.get_http().post``, where the project function ``get_http`` builds
        and returns ``httpx.Client(...)`` on every path: ``httpx.Client.post`` (a project
        class's method, for a project class)."""
        factory, _, rest = written.partition("()")
        entry = self.functions.get(factory)
        if entry is None:
            return None
        chained = "(" in rest
        if not chained and rest.count(".") == 1:
            member = self.returned_member(factory, rest[1:])
            if member is not None:
                return member
        kind = self._declared_return(entry[0])  # ``def get_http() -> httpx.Client``
        if not kind:
            made = {self.built_type(value) for value in entry[0].returns}
            if len(made) != 1:
                return None
            (kind,) = made
            if kind is None:
                return None
        if chained:
            # ``get_db().table("notes").delete()``: a query built on a package's client,
            # named as the catalogue names the chain; a project class's chain is not followed
            return None if kind in self.classes else kind + rest.replace("()", "")
        method = self._method_if_project_class(kind + rest)
        if method in self.functions or rest.count(".") < 2:
            return method
        # ``get_runtime().mutations.send.execute``: through the attributes the returned
        # class declares (``mutations: Services``, then ``send: SendService``)
        return self._resolve_name(kind + rest)[3] or method

    def _through_typed_attribute(self, parts: list[str]) -> str | None:
        """``app.Deps.client.post``, called on a parameter or local of the project class
        ``Deps``: the method of the type the class declares for the attribute
        (``client: httpx.Client`` gives ``httpx.Client.post``). Each step uses up one
        attribute, so a chain of typed attributes ends."""
        for cut in range(len(parts) - 2, 0, -1):
            owner = ".".join(parts[:cut])
            if owner not in self.classes:
                continue
            attr_type = self.self_type(owner, parts[cut])
            if attr_type is None:
                return None
            typed = ".".join([attr_type, *parts[cut + 1 :]])
            return self._resolve_name(typed)[3] or typed
        return None

    def _resolve_on_class(
        self, callee: str, parts: list[str], cls_qual: str, facts: ModuleFacts
    ) -> str:
        """``super().m``, ``self.m`` and ``self.attr.m`` called in a method of ``cls_qual``."""
        if parts[0] == "super":
            # super().method(): the first definition in the bases, not the class itself
            cls_entry = self.classes.get(cls_qual)
            for base in cls_entry[0].bases if cls_entry else []:
                method = self.find_method(self._class_qualname(base, facts), parts[1])
                if method:
                    return method
            return callee
        if len(parts) == 2:
            method = self.find_method(cls_qual, parts[1])
            if method is None and facts.language != "python":
                # ``this.schedule(...)`` in a class extending a package's (``class Chat
                # extends AIChatAgent``): the package's method, judged as such
                inherited = self._package_base(cls_qual)
                if inherited is not None:
                    return f"{inherited}.{parts[1]}"
            return method or f"{cls_qual}.{parts[1]}"
        attr_type = self.self_type(cls_qual, parts[1]) or self._accessor_type(cls_qual, parts[1])
        if attr_type:
            typed = self.resolve_instance(".".join([attr_type, *parts[2:]]))
            method = self._method_if_project_class(typed)
            if method not in self.functions and len(parts) > 3:
                # ``self.music.audio.skip()``: the attribute the first one's class types
                method = self._through_typed_attribute(method.split(".")) or method
            return method
        if len(parts) == 3 and self._handed_to_constructor(cls_qual, parts[1]):
            # ``self.character_manager.modify_stat(...)`` on what the constructor was handed,
            # of no type it names: the one project method so named, as on a parameter
            return self._sole_method(parts[2]) or callee
        return callee

    def _handed_to_constructor(self, cls_qual: str, attr: str) -> bool:
        """Whether ``self.<attr>`` is set in the constructor of ``cls_qual`` (or of a base)
        to one of its parameters, as handed."""
        for current in self.lineage(cls_qual):
            init = self.functions.get(f"{current}.__init__")
            if init is None:
                continue
            for assignment in self.local_assignments(init[1], init[0].qualname, f"self.{attr}"):
                if assignment.value.kind == "name" and assignment.value.text in init[0].params:
                    return True
        return False

    def _package_base(self, cls_qual: str) -> str | None:
        """The one package class (``npm:@cloudflare/ai-chat.AIChatAgent``) among the bases
        of ``cls_qual`` and of its project bases; None for none or several."""
        found = [
            base
            for base in self.lineage(cls_qual)
            if base not in self.classes and base.startswith(("npm:", "node:"))
        ]
        return found[0] if len(found) == 1 else None

    def _method_if_project_class(self, qualname: str) -> str:
        """``pkg.gateway.Gateway.refund``: the method it runs, inherited ones included;
        ``pkg.client.makeApi().deploy``: the function the object ``makeApi`` returns holds."""
        owner, _, method = qualname.rpartition(".")
        if owner in self.classes and qualname not in self.functions:
            return self.find_method(owner, method) or qualname
        if owner.endswith("()"):
            return self.returned_member(owner[:-2], method) or qualname
        return qualname

    def _decorated_call(self, function: str, member: str) -> str | None:
        """``calendar.delete_event_tool.fn(...)``, ``search.invoke({...})``: a member of the
        tool object a framework's decorator made of the project function, one that runs it
        (the catalogue's ``decorated_calls``); the function itself."""
        decorator = self.catalog.tool_forms["decorator"]
        for written in self.functions[function][0].decorators:
            form = decorator(written.qualname) or decorator(self.resolve_instance(written.qualname))
            if form is not None and member in self.catalog.decorated_calls.get(form.framework, ()):
                return function
        return None

    def returned_member(self, factory: str, member: str) -> str | None:
        """The function held under ``member`` by the object the project function
        ``factory`` returns (``return { deploy: (spec) => call("/v1/servers", {method:
        "POST"}) }``, ``return {"deploy": deploy}``): what ``makeApi(cfg).deploy(...)`` runs."""
        entry = self.functions.get(factory)
        if entry is None:
            return None
        for value in entry[0].returns:
            held = value.items.get(member) if value.kind == "dict" else None
            if held is None:
                continue
            for target in (held.qualname, f"{factory}.<locals>.{held.text}"):
                if target and target in self.functions:
                    return target
        return None

    def _attribute_factory(self, callee: str, caller: Function) -> str | None:
        """``self.session_maker()`` where the class (or a base) keeps a package's factory
        object, ``self.session_maker = async_sessionmaker(bind=engine)``: the class that
        factory's call makes (the catalogue's ``callable_factories``)."""
        head, _, attr = callee.partition(".")
        if head not in SELF_NAMES or not attr.isidentifier():
            return None
        owner = caller.class_name or enclosing_class(self, caller)
        for current in self.lineage(owner) if owner else ():
            for value in self.self_bindings(current, attr):
                made = self.catalog.callable_factories.get(value.qualname or "")
                if value.kind == "call" and made is not None:
                    return made
        return None

    def _factory_class(self, name: str, caller: Function, facts: ModuleFacts) -> str | None:
        """``client = _get_client(...)`` where the project function returns
        ``_Client(...)``: the project class the local holds."""
        if (caller.qualname, name) not in self._call_bound(facts):
            return None
        assigned = self.local_assignments(facts, caller.qualname, name)
        bound = assigned[-1].value if assigned else None
        if bound is None or bound.kind not in {"call", "other"} or not bound.calls:
            return None
        callee = bound.calls[0].replace("()", "")
        stepped = callee in ITERATOR_STEPS and len(bound.calls) > 1
        if stepped:
            # ``db = next(get_db())``: what the generator yields first
            callee = bound.calls[1].replace("()", "")
        factory_made = (
            self.catalog.client_factories.get(callee)
            # ``async with async_session_factory() as session``: a factory object another
            # module keeps (``async_sessionmaker(...)``) makes what the catalogue says
            or self.called_types.get(callee)
            or self._attribute_factory(callee, caller)
        )
        if factory_made is not None:
            # ``client = create_client(url, key)``: the client a package's factory builds
            return factory_made
        target = self.project_function(callee, facts)
        if target is None and "." not in callee:
            # a sibling helper nested in the same function (``register_tools`` style)
            same = [q for q in self.by_name.get(callee, []) if q.startswith(facts.module + ".")]
            target = same[0] if len(same) == 1 else None
        if target is None:
            # ``client = self._client()``, ``msg = account.new_message()``: the method
            # the call runs, as resolved where it is made
            target = self._bound_call_target(bound, caller, facts)
        if target is None:
            # an interface's method (``SandboxFactory.open``, abstract) runs nothing of its
            # own, but its annotation says what it returns
            interface = self.bound_callee(bound, caller, facts)
            if interface is not None and self.is_interface_method(interface):
                return self.functions[interface][0].return_type
        made = self.functions.get(target) if target else None
        if made is None:
            return None
        returns = handed_back(made[0], stepped)
        item = unpacked_item(bound)
        if item is not None:
            # ``sandbox, port = self._start()`` with ``return sandbox, port``: that item,
            # or what the function bound the name it returns to
            returns = [
                self.returned_binding(value.elements[item], made[0], made[1])
                for value in returns
                if value.kind == "list" and item < len(value.elements)
            ]
        held = self.module_types.get(made[1].module, {})
        returned_classes = {
            v.qualname or "" for v in returns if v.kind == "call" and v.qualname in self.classes
        }
        if len(returned_classes) > 1:
            # ``return Local()`` on one path, ``return Remote()`` on another: either may be
            # held, so a method called on it is each class's (``_held_classes``)
            return None
        for value in returns:
            if value.kind == "call" and value.qualname in self.classes:
                return value.qualname
            if (
                value.kind == "dict"
                and name in value.items
                and item is None
                and facts.language != "python"
            ):
                # ``const { drive } = await getClients()`` with ``return { docs:
                # google.docs(...), drive: google.drive(...) }``: the local named as a key of
                # the object returned holds that key's value
                return self.built_type(self.returned_binding(value.items[name], made[0], made[1]))
            if (
                value.kind == "name"
                and held.get(value.text) in self.classes
                and not self.local_assignments(made[1], made[0].qualname, value.text)
            ):
                # ``return _connection``: the module's variable a first use sets
                # (``global _connection; _connection = QgisConnection()``)
                return held[value.text]
        if item is None and self._declared_return(made[0]):
            # ``async def get_client(ctx) -> NotesClient``, awaited or not
            return made[0].return_type
        if item is not None:
            built = {self.built_type(self.returned_binding(v, made[0], made[1])) for v in returns}
            return built.pop() if len(built) == 1 and None not in built else None
        return self._returned_client(target or "", stepped)

    def _returned_client(self, target: str, stepped: bool = False) -> str | None:
        """What the project function ``target`` returns on every path, when a construction
        says: ``return httpx.Client(...)``, a local bound so (``w3 = Web3(provider)``, then
        ``return w3``), or the answer of another project function that does or declares it
        (``return make_client()`` with ``def make_client() -> Client``)."""
        return self._on_every_return(target, self._built_or_declared, stepped=stepped)

    def _built_or_declared(self, value: Value, facts: ModuleFacts) -> str | None:
        """The class ``value`` builds, or the one the project function it calls declares it
        returns."""
        made = self.built_type(value)
        if made is None and value.kind == "call":
            inner = self.project_function(value.qualname or value.text, facts)
            if inner is not None and inner in self.functions:
                made = self._declared_return(self.functions[inner][0])
        return made

    def _on_every_return(
        self,
        target: str,
        leaf: Callable[[Value, ModuleFacts], str | None],
        hops: int = 0,
        stepped: bool = False,
    ) -> str | None:
        """What ``leaf`` says of every value the project function ``target`` returns (a
        returned local as it was bound), looking through up to three project functions whose
        answer it returns: the one answer on every path, else None."""
        fn, facts = self.functions[target]
        found: set[str | None] = set()
        for returned in handed_back(fn, stepped):
            value = self.returned_binding(returned, fn, facts)
            made = leaf(value, facts)
            if made is None and value.kind == "call" and hops < 3:
                inner = self.project_function(value.qualname or value.text, facts)
                if inner is not None and inner != target and inner in self.functions:
                    made = self._on_every_return(inner, leaf, hops + 1)
            found.add(made)
        return found.pop() if len(found) == 1 and None not in found else None

    def _bound_call_target(self, bound: Value, caller: Function, facts: ModuleFacts) -> str | None:
        """The project function run by the call a local is bound to (its first call)."""
        site = self._bound_call_site(bound, caller, facts)
        return site.target if site is not None else None

    def bound_callee(self, bound: Value, caller: Function, facts: ModuleFacts) -> str | None:
        """The callee of the call a local is bound to (its first call), resolved where it is
        made: ``msg = self.client.me.messages.by_message_id(i)`` with ``self.client`` built
        by a method that returns ``GraphServiceClient(...)`` gives
        ``msgraph.GraphServiceClient.me.messages.by_message_id``."""
        site = self._bound_call_site(bound, caller, facts)
        return site.callee if site is not None else None

    def _bound_call_site(
        self, bound: Value, caller: Function, facts: ModuleFacts
    ) -> CallSite | None:
        span = bound.span
        if span is None or not bound.calls:
            return None
        for call in self.calls_in(caller.qualname):
            inside = call.span[:2] >= span[:2] and call.span[2:] <= span[2:]
            if not inside or call.callee != bound.calls[0]:
                continue
            if id(call) in self._memo.resolving:
                return None  # ``client = client.refreshed()``: resolving that very call
            self._memo.resolving.add(id(call))
            try:
                return self.call_site(call, caller, facts)
            finally:
                self._memo.resolving.discard(id(call))
        return None

    def note_call_edges(self, qualname: str, edges: list[tuple[Call, str]]) -> None:
        """Effect inference followed every call of ``qualname``: these are its call edges
        (``call_edges`` would find the same)."""
        self._memo.edges[qualname] = edges


def _either_count(returns: list[Value]) -> int:
    """How many of a function's returned values choose between two (``a if c else b``)."""
    return sum(1 for value in returns if value.op == "if")


def _one_item(steps: tuple[Step, ...]) -> bool:
    """``params["store"]``: one item taken, nothing else."""
    return len(steps) == 1 and steps[0][0] == "item"
