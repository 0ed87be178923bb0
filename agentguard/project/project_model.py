"""The project model: tools, their declarations and effect summaries, the call graph.

Built from per-file facts (``agentguard.facts``) and schema documents by ``build_project``,
whose passes run in order (index the modules, discover tools, infer effects, merge schema
tools, find retries) and then freeze the model; checks read it and never walk syntax
themselves. The passes live in ``agentguard.project.tools``, ``.effects``, ``.schema_tools``
and ``.retries``.
"""

from __future__ import annotations

import copy
import functools
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agentguard.diagnostics import Location, ScanProblem, Span
from agentguard.facts.module_facts import Assignment, Call, ClassDef, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import Catalog, Matcher, NameIndex, normalise
from agentguard.knowledge.words import words
from agentguard.project.discovery_runtime_built import local_function
from agentguard.project.discovery_subclasses import enclosing_class, framework_bases
from agentguard.project.tool_facts import (
    SELF_NAMES,
    Effect,
    RetryUse,
    ToolFacts,
)

if TYPE_CHECKING:
    from agentguard.config import Config
    from agentguard.facts.schema_files.detect import SchemaIssue
    from agentguard.project.effects import EffectSummaries
    from agentguard.project.ledger_writes import LedgerIndex


# A callee as written, resolved wherever it is called: (the name without "()", its dotted
# parts, whether the caller's class decides it, the project name it stands for if known).
_CalleeName = tuple[str, list[str], bool, "str | None"]
# How many ``__init__.py`` re-exports a name is followed through (a cycle ends there).
MAX_REEXPORT_HOPS = 8


def _unpacked_item(value: Value) -> int | None:
    """The item a name unpacked from a call's result holds: 1 for ``self._start()[1]``,
    as the extractor writes ``sandbox, port = self._start()``."""
    chain = value.chain
    if value.kind != "other" or chain is None or len(chain.steps) < 2 or not value.calls:
        return None
    (made, _), (kind, index) = chain.steps[-2:]
    if made == "call" and kind == "item" and isinstance(index, int) and index >= 0:
        return index
    return None


def _constructed_type(value: Value) -> str | None:
    """What a call builds, when its name says: a class (``httpx.Client``), or a boto3 client
    of a service (``boto3.client("sqs")`` gives ``boto3.client:sqs``, as the extractor types
    it)."""
    qualname = value.qualname
    if value.kind == "other" and value.calls and _built_either_way(value):
        # ``Client(api_key=key) if key else Client()``: the same class on both arms
        qualname = value.calls[0]
        return qualname if qualname.rsplit(".", 1)[-1][:1].isupper() else None
    if value.kind != "call" or not qualname:
        return None
    last = qualname.rsplit(".", 1)[-1]
    if last[:1].isupper():
        return qualname
    if last in {"client", "resource"} and value.call_args:
        service = value.call_args[0].string()
        if service:
            return f"{qualname}:{service}"
    return None


def _built_either_way(value: Value) -> bool:
    """Whether ``value`` is a conditional expression both of whose arms call one and the
    same name (its only calls): ``Client(key) if key else Client()``."""
    if len(set(value.calls)) != 1 or len(value.calls) != 2 or value.op != "if":
        return False
    body, orelse = value.parts
    return (
        body.kind == "call"
        and orelse.kind == "call"
        and body.chain is not None
        and body.chain == orelse.chain
    )


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


class CallSite:
    """One call site as resolved for its caller: the callee's qualified name and the project
    function the call runs (a class's ``__init__`` for a construction), if any; ``also``:
    the other project functions it may run (a dispatch dict's entries past the first)."""

    __slots__ = ("also", "call", "callee", "caller", "facts", "forwarded", "target")

    def __init__(
        self,
        call: Call,
        caller: Function | None,
        facts: ModuleFacts,
        callee: str,
        target: str | None,
    ) -> None:
        self.call = call
        self.caller = caller
        self.facts = facts
        self.callee = callee
        self.target = target
        self.also: tuple[str, ...] = ()
        # The call as the target receives it, when a runner forwards it
        # (``asyncio.to_thread(send, to, body)`` calls ``send(to, body)``).
        self.forwarded: Call | None = None

    @property
    def edge_call(self) -> Call:
        """The call whose arguments the target receives."""
        return self.forwarded or self.call

    @property
    def targets(self) -> tuple[str, ...]:
        """Every project function the call may run."""
        return (self.target, *self.also) if self.target else self.also


Derived = TypeVar("Derived")


@dataclass
class LookupMemo:
    """The project model's one memo: answers of pure lookups over its frozen indexes,
    kept because tool discovery, effects, ledgers, retries and resume each ask the same
    questions of every call site. Nothing here changes what a lookup answers."""

    sites: dict[int, CallSite] = field(default_factory=dict)
    targets: dict[str, tuple[str | None, bool, str | None]] = field(default_factory=dict)
    module_sites: dict[str, list[CallSite]] = field(default_factory=dict)
    matching: dict[tuple[int, bool], tuple[Matcher[Any], frozenset[str]]] = field(
        default_factory=dict
    )
    callee_names: dict[str, _CalleeName] = field(default_factory=dict)
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
    called_params: dict[str, frozenset[str]] = field(default_factory=dict)
    constructions: dict[str, list[tuple[Call, ModuleFacts]]] | None = None
    # The calls whose target is being worked out (a local bound to a call that is resolved
    # through that same local): a lookup that would go round ends there.
    resolving: set[int] = field(default_factory=set)
    # Whole-project answers a rule derives from the built model (``ProjectModel.once``).
    derived: dict[Callable[[Any], Any], Any] = field(default_factory=dict)


class FrozenProjectError(AttributeError):
    """An attribute of a built project model was assigned: the passes are over."""


class ProjectModel:
    """The project's facts, built by ``build_project``'s passes and frozen after them.

    The constructor runs the first pass only (indexing the modules); discovery, effect
    inference, schema tools and retries are passes of their own, run by ``build_project``.
    """

    def __init__(self, modules: Iterable[ModuleFacts], catalog: Catalog) -> None:
        self.catalog = catalog
        self.modules: dict[str, ModuleFacts] = {m.path: m for m in modules}
        self.modules_by_name: dict[str, ModuleFacts] = {m.module: m for m in self.modules.values()}
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
                if assignment.function is None:
                    made = _constructed_type(assignment.value)
                    if made is not None:
                        types.setdefault(assignment.target, made)
            self.module_types[facts.module] = types
            for call in facts.calls:
                key = f"{facts.path}::{call.function}" if call.function is None else call.function
                self.calls_by_function.setdefault(key, []).append(call)
        for facts in self.modules.values():
            types = self.module_types[facts.module]
            for assignment in facts.assignments:
                if assignment.function is None and assignment.target not in types:
                    made = self._made_by_factory(assignment.value)
                    if made is not None:
                        types[assignment.target] = made
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
        self.tools: list[ToolFacts] = []
        self.problems: list[ScanProblem] = []
        self.config: Config | None = None
        self.schema_files: list[tuple[Path, str]] = []
        self.schema_issues: list[
            SchemaIssue
        ] = []  # filled by agentguard.project.schema_tools (AG001)
        # Set by the passes of ``build_project``:
        self.effect_summaries: EffectSummaries | None = None
        self.retries: tuple[RetryUse, ...] = ()
        self.ledger: LedgerIndex | None = None
        self._memo = LookupMemo()
        self._written_names = NameIndex(
            call.callee for calls in self.calls_by_function.values() for call in calls
        )
        self._frozen = False

    def _made_by_factory(self, value: Value) -> str | None:
        """``app = create_server()``, where the project function ``create_server`` returns
        ``FastMCP(...)`` on every path, or declares ``-> FastMCP``: the class the module
        variable holds, as ``app = FastMCP(...)`` would."""
        entry = self.functions.get(value.qualname or "") if value.kind == "call" else None
        if entry is None or entry[0].class_name:
            return None
        fn = entry[0]
        named = fn.return_type
        if named and named.rsplit(".", 1)[-1][:1].isupper():
            module, _, name = named.rpartition(".")
            held = self.modules_by_name.get(module)
            if held is None or not any(
                a.function is None and a.target == name for a in held.assignments
            ):
                return named  # not a type variable or an alias: a class
        made = {_constructed_type(returned) for returned in fn.returns}
        return made.pop() if len(made) == 1 and None not in made else None

    def __setattr__(self, name: str, value: object) -> None:
        if getattr(self, "_frozen", False):
            raise FrozenProjectError(f"the project model is frozen after build: cannot set {name}")
        super().__setattr__(name, value)

    def freeze(self) -> None:
        """End of build: no attribute may be assigned from now on."""
        self._frozen = True

    def once(self, derive: Callable[[ProjectModel], Derived]) -> Derived:
        """``derive(self)``, computed on the first call after the build and reused after:
        for a whole-project answer that several rules, or one rule per tool or per finding,
        ask for (the answer must not be changed by whoever reads it). Before the build is
        over the model still changes, so nothing is kept."""
        if not self._frozen:
            return derive(self)
        derived = self._memo.derived
        if derive not in derived:
            derived[derive] = derive(self)
        return cast("Derived", derived[derive])

    # ------------------------------------------------------------------ lookups
    def function(self, qualname: str) -> Function | None:
        entry = self.functions.get(qualname)
        return entry[0] if entry else None

    def module_of(self, qualname: str) -> ModuleFacts | None:
        entry = self.functions.get(qualname)
        return entry[1] if entry else None

    def sorted_functions(self) -> list[tuple[str, tuple[Function, ModuleFacts]]]:
        """The project's functions by qualified name: several rules walk them in order."""
        return self._functions_in_order

    @functools.cached_property
    def _functions_in_order(self) -> list[tuple[str, tuple[Function, ModuleFacts]]]:
        return sorted(self.functions.items())

    def calls_in(self, qualname: str) -> list[Call]:
        return self.calls_by_function.get(qualname, [])

    def location(self, facts: ModuleFacts, span: Span) -> Location:
        return Location(facts.path, span)

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
            site = CallSite(call, caller, facts, callee, self._call_target(callee, facts))
            if site.target is not None and site.target in self._abstract_methods:
                # a method of an interface (``BaseClient.create``) has no effect of its
                # own: the call is judged as written, as a call no project code answers
                site.target = None
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
            module_prefix, tail = callee.rsplit(".", 1)
            otherwise = self._functions_under(tail).get(module_prefix)
        if otherwise is None and callee in self.classes:
            otherwise = self.find_method(callee, "__init__")
        return (None, maybe_local, otherwise)

    # ------------------------------------------------------------ interfaces
    def is_interface_method(self, qualname: str) -> bool:
        """Whether ``qualname`` is a method with no body of its own (abstract, or of a
        ``Protocol``): a call of it runs code the project does not show."""
        return qualname in self._abstract_methods

    @functools.cached_property
    def _abstract_methods(self) -> frozenset[str]:
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

    # ------------------------------------------------------------ indirect calls
    def _handed_targets(
        self, call: Call, callee: str, caller: Function | None, facts: ModuleFacts
    ) -> tuple[str, ...]:
        """The project functions a call runs through indirection: one handed to a function
        that runs it (``asyncio.to_thread(send, ...)``, the catalogue's callable runners),
        an entry of a dispatch dict (``HANDLERS[name](...)``), or a local bound to a
        function, a bound method or a partial (``fn = partial(send, to); fn()``)."""
        handed = self._handed_value(call, callee)
        if handed is not None:
            return self._reference_targets(handed, call, caller, facts, 0)
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

    def _passed_functions(
        self, call: Call, target: str, caller: Function | None, facts: ModuleFacts
    ) -> tuple[str, ...]:
        """The project functions handed to a project function that calls the parameter it
        receives them in: ``self._safe_call(call_fn)`` with ``def _safe_call(self, f):
        return f()`` runs ``call_fn`` too."""
        called = self._memo.called_params.get(target)
        if called is None:
            fn = self.functions[target][0]
            called = (
                frozenset(c.callee for c in self.calls_in(target) if c.callee in fn.params)
                - SELF_NAMES
            )
            self._memo.called_params[target] = called
        if not called:
            return ()
        params = [p for p in self.functions[target][0].params if p not in SELF_NAMES]
        found: list[str] = []
        for param in sorted(called):
            value = call.kwargs.get(param)
            index = params.index(param) if param in params else len(call.args)
            if value is None and index < len(call.args):
                value = call.args[index]
            if value is None or value.kind not in {"name", "attr", "call"}:
                continue
            for passed in self._reference_targets(value, call, caller, facts, 0):
                if passed != target and passed not in found:
                    found.append(passed)
        return tuple(found)

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
        """The calls of ``facts``, each resolved for the function it is in (computed once:
        tool discovery and retry detection walk every call of every module)."""
        sites = self._memo.module_sites.get(facts.path)
        if sites is None:
            function = self.function
            sites = [
                self.call_site(call, function(call.function) if call.function else None, facts)
                for call in facts.calls
            ]
            self._memo.module_sites[facts.path] = sites
        return sites

    def callees_matching(self, matcher: Matcher[Any], *, resolved: bool) -> frozenset[str]:
        """The callees in the project, as written (``call.callee``) or as resolved for their
        call sites, that ``matcher`` knows: a walk over every call site tests membership in
        this set instead of asking the catalogue at each site. Most sites match nothing."""
        key = (id(matcher), resolved)
        entry = self._memo.matching.get(key)
        if entry is None or entry[0] is not matcher:
            names = self._resolved_index() if resolved else self._written_names
            entry = self._memo.matching[key] = (matcher, matcher.among(names))
        return entry[1]

    def _resolved_index(self) -> NameIndex:
        return self._resolved_names

    @functools.cached_property
    def _resolved_names(self) -> NameIndex:
        return NameIndex(
            site.callee for facts in self.modules.values() for site in self.call_sites(facts)
        )

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
            method=text.rsplit(".", 1)[-1],
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
        if resolved is not None:
            return resolved
        if len(parts) >= 2 and caller is not None:
            # An instance a project function made and returned: a project class's method
            # (Cls.method), or the method of the class its return annotation names.
            made = self._factory_class(parts[0], caller, facts)
            if made in self.classes and len(parts) == 2:
                method = self.find_method(made, parts[1])
                if method:
                    return method
            elif made:
                typed = ".".join([made, *parts[1:]])
                return self._resolve_name(typed)[3] or typed
        if len(parts) == 2 and caller is not None and parts[0] in caller.params:
            # ``db.execute_query(sql)`` on a parameter no annotation types: the one project
            # class that defines a method so named, when its name is of several words
            return self._sole_method(parts[1]) or callee
        return callee

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
        elif parts[0] in self.classes or callee in self.functions:
            resolved = callee
        elif len(parts) >= 2:
            owner = ".".join(parts[:-1])
            if owner in self.classes:
                resolved = self.find_method(owner, parts[-1])
            elif len(parts) >= 3:
                resolved = self._through_typed_attribute(parts)
        if resolved is None and "()." in written:
            resolved = self._on_returned_client(written)
        return (callee, parts, on_class, resolved)

    def _on_returned_client(self, written: str) -> str | None:
        """``app.clients.get_http().post``, where the project function ``get_http`` builds
        and returns ``httpx.Client(...)`` on every path: ``httpx.Client.post`` (a project
        class's method, for a project class)."""
        factory, _, rest = written.partition("()")
        entry = self.functions.get(factory)
        if entry is None or "(" in rest:
            return None
        kind = self._declared_return(entry[0])  # ``def get_http() -> httpx.Client``
        if not kind:
            made = {_constructed_type(value) for value in entry[0].returns}
            if len(made) != 1:
                return None
            (kind,) = made
            if kind is None:
                return None
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
            return method or f"{cls_qual}.{parts[1]}"
        attr_type = self.self_type(cls_qual, parts[1]) or self._accessor_type(cls_qual, parts[1])
        if attr_type:
            typed = self.resolve_instance(".".join([attr_type, *parts[2:]]))
            return self._method_if_project_class(typed)
        return callee

    def _method_if_project_class(self, qualname: str) -> str:
        """``pkg.gateway.Gateway.refund``: the method it runs, inherited ones included."""
        owner, _, method = qualname.rpartition(".")
        if owner in self.classes and qualname not in self.functions:
            return self.find_method(owner, method) or qualname
        return qualname

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
        returns = made[0].returns
        item = _unpacked_item(bound)
        if item is not None:
            # ``sandbox, port = self._start()`` with ``return sandbox, port``: that item,
            # or what the function bound the name it returns to
            returns = [
                self._returned_binding(value.elements[item], made[0], made[1])
                for value in returns
                if value.kind == "list" and item < len(value.elements)
            ]
        for value in returns:
            if value.kind == "call" and value.qualname in self.classes:
                return value.qualname
        if item is None and self._declared_return(made[0]):
            # ``async def get_client(ctx) -> NotesClient``, awaited or not
            return made[0].return_type
        # ``return httpx.Client(...)`` on every path
        built = {_constructed_type(value) for value in returns}
        return built.pop() if len(built) == 1 and None not in built else None

    def _returned_binding(self, value: Value, fn: Function, facts: ModuleFacts) -> Value:
        """A returned name as the function last bound it (``sandbox = Sandbox(...)``)."""
        if value.kind != "name":
            return value
        bound = self.local_assignments(facts, fn.qualname, value.text)
        return bound[-1].value if bound else value

    def _declared_return(self, fn: Function) -> str | None:
        """The class ``fn``'s return annotation names; None for a type variable
        (``T = TypeVar("T")``: ``def instance(self, kind: type[T]) -> T`` names no class)."""
        named = fn.return_type
        held = self.module_variable(named) if named else None
        if held is not None and (held.qualname or "").rsplit(".", 1)[-1] == "TypeVar":
            return None
        return named

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

    def resolve_instance(self, qualname: str) -> str:
        """``pkg.app.mcp.tool`` -> ``fastmcp.FastMCP.tool`` when ``pkg/app.py`` holds
        ``mcp = FastMCP(...)``: an instance imported from another project module."""
        # Memoised: the same dotted names come from every call site.
        found = self._memo.instances.get(qualname)
        if found is None:
            found = self._memo.instances[qualname] = self._resolve_instance(qualname)
        return found

    def _resolve_instance(self, qualname: str, hops: int = 0) -> str:
        parts = qualname.split(".")
        if parts[0] not in self._module_firsts:
            return qualname
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            facts = self.modules_by_name.get(module)
            if facts is None:
                continue
            name = ".".join(parts[: cut + 1])
            typed = self.module_types.get(module, {}).get(parts[cut])
            if typed:
                return ".".join([typed, *parts[cut + 1 :]])
            # ``billing/__init__.py`` re-exports ``from .gateway import PaymentGateway``:
            # ``billing.PaymentGateway`` is ``billing.gateway.PaymentGateway``.
            exported = facts.imports.get(parts[cut])
            if (
                exported
                and exported != name
                and name not in self.classes
                and name not in self.functions
                and hops < MAX_REEXPORT_HOPS
            ):
                return self._resolve_instance(".".join([exported, *parts[cut + 1 :]]), hops + 1)
            return qualname
        return qualname

    def module_variable(self, qualname: str | None) -> Value | None:
        """The value last assigned at module level to ``pkg.mod.NAME``, if any."""
        held = self.module_variable_in(qualname)
        return held[0] if held is not None else None

    def module_variable_in(self, qualname: str | None) -> tuple[Value, str] | None:
        """``module_variable``, with the path of the file it is written in: a position in
        the value is in that file, not in the one that imports the name."""
        if not qualname or "." not in qualname:
            return None
        module, name = qualname.rsplit(".", 1)
        facts = self.modules_by_name.get(module)
        if facts is None:
            return None
        assigned = self.local_assignments(facts, None, name)
        return (assigned[-1].value, facts.path) if assigned else None

    def _class_qualname(self, name: str, facts: ModuleFacts) -> str:
        if name in self.classes:
            return name
        local = f"{facts.module}.{name}"
        return local if local in self.classes else name

    def _accessor_type(self, cls_qual: str, method_name: str) -> str | None:
        """``self._stripe().customers.create``, or ``self.client.post`` through a
        ``@property``/``@cached_property``: the type an accessor method returns: the class
        its return annotation names, the one it builds and returns (``return
        WebClient(token=...)``), or one of the instance's typed attributes (``return
        self._client``)."""
        method = self.find_method(cls_qual, method_name)
        fn = self.function(method) if method else None
        if fn is None:
            return None
        if self._declared_return(fn):
            return fn.return_type
        built = {_constructed_type(value) for value in fn.returns}
        if len(built) == 1 and None not in built:
            return built.pop()
        for value in fn.returns:
            if (
                value.kind == "attr"
                and value.text.startswith("self.")
                and value.text.count(".") == 1
            ):
                typed = self.self_type(cls_qual, value.text[5:])
                if typed:
                    return typed
        return None

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

    def self_type(self, cls_qual: str, attr: str) -> str | None:
        for current in self.lineage(cls_qual):
            if current not in self.classes:
                continue
            cls = self.classes[current][0]
            if attr in cls.self_types:
                return cls.self_types[attr]
            validated = self._validator_bound(current, attr) or self._factory_default(current, attr)
            if validated is not None:
                return validated
        return self._built_by_method(cls_qual, attr)

    def _factory_default(self, cls_qual: str, attr: str) -> str | None:
        """``process: Any = Field(default_factory=_default_process)`` where the project
        function builds and returns ``BashProcess(...)``: the field holds what it builds."""
        cls, facts = self.classes[cls_qual]
        default = cls.attributes.get(attr)
        factory = default.call_kwargs.get("default_factory") if default is not None else None
        if factory is None or factory.kind not in {"name", "attr"}:
            return None
        target = self.project_function(factory.qualname or factory.text, facts)
        entry = self.functions.get(target) if target else None
        if entry is None:
            return None
        built = {_constructed_type(value) for value in entry[0].returns}
        return built.pop() if len(built) == 1 and None not in built else None

    def _validator_bound(self, cls_qual: str, attr: str) -> str | None:
        """``values["client"] = Client(...)`` (or a local holding one) in a validator the
        model runs on its input before it is built (``@model_validator(mode="before")``,
        ``@root_validator(pre=True)``, LangChain's ``@pre_init``): the field ``attr`` holds
        what was stored under its name."""
        cls, facts = self.classes[cls_qual]
        for method in cls.methods:
            fn = self.function(method)
            if fn is None or not any(
                self.catalog.field_validators(d.qualname) for d in fn.decorators
            ):
                continue
            data = [p for p in fn.params if p not in SELF_NAMES][:1]
            for param in data:
                for assignment in self.local_assignments(facts, method, f"{param}[{attr}]"):
                    value = assignment.value
                    if value.kind == "name":
                        value = (
                            self._bound_before(facts, method, value.text, assignment.order) or value
                        )
                    made = _constructed_type(value) or self._handed_by_client(
                        facts, method, value, assignment.order
                    )
                    if made is not None:
                        return made
        return None

    def _bound_before(self, facts: ModuleFacts, method: str, name: str, order: int) -> Value | None:
        """What the local ``name`` was last bound to in ``method`` before ``order``."""
        held = [a for a in self.local_assignments(facts, method, name) if a.order <= order]
        return held[-1].value if held else None

    def _handed_by_client(
        self, facts: ModuleFacts, method: str, value: Value, order: int
    ) -> str | None:
        """``g.projects.get(name)`` with ``g = gitlab.Gitlab(...)`` in the same function: the
        object the client's call hands out, named by the client's type and the calls made on
        it (``gitlab.Gitlab.projects.get``), so calls on it resolve into the client's package."""
        if value.kind != "call" or "(" not in value.text:
            return None
        chain = value.text.split("(", 1)[0]
        root, _, rest = chain.partition(".")
        if not rest or not root.isidentifier():
            return None
        bound = self._bound_before(facts, method, root, order)
        client = _constructed_type(bound) if bound is not None else None
        return f"{client}.{rest}" if client is not None else None

    def _built_by_method(self, cls_qual: str, attr: str) -> str | None:
        """``self.g = self.authenticate()``, where the class's method builds and returns
        ``Github(auth=...)`` on every path (or declares ``-> Github``): the attribute holds
        what the method returns (``_accessor_type``)."""
        key = (cls_qual, attr)
        if key in self._memo.method_built:
            return self._memo.method_built[key]
        self._memo.method_built[key] = None  # a method returning ``self.g`` asks again
        entry = self.classes.get(cls_qual)
        found: str | None = None
        if entry is not None:
            cls, facts = entry
            target = f"self.{attr}"
            for method in cls.methods:
                for assignment in self.local_assignments(facts, method, target):
                    value = assignment.value
                    called = value.calls[0] if value.kind == "call" and value.calls else ""
                    head, _, name = called.partition(".")
                    if head in SELF_NAMES and name.isidentifier():
                        found = found or self._accessor_type(cls_qual, name)
        self._memo.method_built[key] = found
        return found

    def find_method(self, cls_qual: str, name: str) -> str | None:
        for current in self.lineage(cls_qual):
            candidate = f"{current}.{name}"
            if candidate in self.functions:
                return candidate
        if cls_qual not in self.classes:
            return None
        # bases written as their module imports them, or generic (``ToolkitCore[list[T]]``)
        for base in framework_bases(self, cls_qual):
            candidate = f"{base}.{name}"
            if candidate in self.functions:
                return candidate
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
        memo = self._memo.by_prefix
        if qualname not in memo:
            module_prefix, tail = qualname.rsplit(".", 1)
            memo[qualname] = self._functions_under(tail).get(module_prefix)
        return memo[qualname]

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

    @functools.cached_property
    def _class_index(self) -> dict[str, list[str]]:
        # An index instead of a scan of every class per base: class_bases runs per class.
        index: dict[str, list[str]] = {}
        for qual in self.classes:
            index.setdefault(qual.rsplit(".", 1)[-1], []).append(qual)
        return index

    @functools.cached_property
    def subclass_index(self) -> tuple[dict[str, list[ClassDef]], dict[str, list[ClassDef]]]:
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

    @functools.cached_property
    def third_party_heads(self) -> frozenset[str]:
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

    def note_call_edges(self, qualname: str, edges: list[tuple[Call, str]]) -> None:
        """Effect inference followed every call of ``qualname``: these are its call edges
        (``call_edges`` would find the same)."""
        self._memo.edges[qualname] = edges

    def effects_of(self, qualname: str) -> list[Effect]:
        """The effects ``qualname`` has or reaches through its calls (worked out on first
        demand for a function no tool reaches)."""
        summaries = self.effect_summaries
        return summaries.of(qualname) if summaries is not None else []

    def tool_for_function(self, qualname: str) -> ToolFacts | None:
        return next((t for t in self.tools if qualname in t.functions), None)

    def retry_uses(self) -> Iterator[RetryUse]:
        """The constructs that re-run code (the retries pass of ``build_project``)."""
        return iter(self.retries)

    def ledger_index(self) -> LedgerIndex:
        """The ledger pass's facts (record writes, recording functions, executors)."""
        if self.ledger is None:
            raise RuntimeError("the ledger pass runs in build_project")
        return self.ledger

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


def build_project(
    modules: Iterable[ModuleFacts],
    catalog: Catalog,
    *,
    config: Config | None = None,
    problems: Sequence[ScanProblem] = (),
    schema_files: Sequence[tuple[Path, str]] = (),
) -> ProjectModel:
    """The project model, built by its passes in order and frozen: index the modules (the
    constructor), discover the tools, infer their effects (call sites are resolved as these
    ask), merge the schema files' tools, find the retry constructs, index the ledger writes. The schema files
    skipped (too big, binary, unreadable) join ``problems``."""
    from agentguard.project.effects import infer_effects
    from agentguard.project.ledger_writes import build_ledger_index
    from agentguard.project.retries import retry_uses
    from agentguard.project.tools import discover_tools

    project = ProjectModel(modules, catalog)
    discover_tools(project)
    project.effect_summaries = infer_effects(project)
    project.problems = list(problems)
    project.config = config
    project.schema_files = list(schema_files)
    if config is not None:
        # Imported here: jsonschema is slow to import, and most runs have no schema file.
        from agentguard.project.schema_tools import add_schema_tools

        project.problems += add_schema_tools(project, schema_files, config)
    project.retries = tuple(retry_uses(project))
    project.ledger = build_ledger_index(project)
    project.freeze()
    return project
