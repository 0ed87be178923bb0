"""What a call's receiver is known to be, whatever its method is called: an object of the
standard library, of a package whose objects live in the process, a logger, a literal, a
container bound here, or a variable named like a standard-library module. The write-verb
heuristic (``guessed_sinks``) and the open-world verdicts (``open_world``) both ask."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

from agentguard.facts.module_facts import CALL_STEP, Call, Chain, Function, ModuleFacts, Step, Value
from agentguard.knowledge.words import words
from agentguard.project.sink_keys import local_value

if TYPE_CHECKING:
    from agentguard.knowledge.open_world import OpenWorld
    from agentguard.project.index import ProjectIndex


# The standard library talks to no service on its own (queue.Queue.put, collections...);
# its real sinks (smtplib, subprocess, urllib) are catalogue entries.
STDLIB_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins"}


# Code written in place that takes nothing: ``() => ...``, ``async () => ...``,
# ``function () {...}``, ``lambda: ...``.
_THUNK = re.compile(r"^\s*(?:async\s+)?(?:\(\s*\)\s*=>|function\s*\w*\s*\(\s*\))|^\s*lambda\s*:")


def runs_code_handed_in_place(call: Call) -> bool:
    """A call handed code written in place that takes nothing, as its first argument
    (``queue.add(async () => ...)``, ``limiter.schedule(() => ...)``, ``pool.submit(lambda:
    ...)``), runs or schedules it: that code is judged where it is written, and the call's
    own one-word name (``add``, ``schedule``) says nothing of a remote effect. Code that
    takes something (``setState((s) => ...)``) changes what it is handed, and a name that
    says what it changes (``updateRequestRaw(() => text)``) is handed the new value: both
    are judged by their name as usual."""
    return (
        bool(call.args)
        and call.args[0].kind == "lambda"
        and bool(_THUNK.match(call.args[0].text))
        and len(words(call.method, identifier=True)) == 1
    )


def written_receiver(call: Call) -> str:
    """The receiver as written in the source (``self._client`` for ``self._client.place``)."""
    text = call.text
    return text.rsplit(".", 1)[0] if "." in text else ""


def call_receiver(call: Call) -> Chain | None:
    """What a call's method is read on (``self._client`` for ``self._client.place(...)``);
    for a function called by name, the module or class its resolved name is in
    (``requests`` for ``post(url)`` imported from ``requests``)."""
    receiver = call.chain.receiver() if call.chain is not None else None
    if receiver is None and "." in call.callee:
        receiver = resolved_chain(call.callee.rsplit(".", 1)[0])
    return receiver


def resolved_chain(name: str) -> Chain | None:
    """The chain a resolved name stands for: ``build().users()`` is ``build`` called, its
    ``users`` called; None for a name that is no such chain (a callee left as written)."""
    root = ""
    steps: list[Step] = []
    for part in name.split("."):
        calls = 0
        while part.endswith("()"):
            part, calls = part[:-2], calls + 1
        if not part.isidentifier():
            return None
        if root:
            steps.append(("attr", part))
        else:
            root = part
        steps.extend([CALL_STEP] * calls)
    return Chain(root, tuple(steps))


def receiver_name(call: Call) -> str:
    """The last part of a call's receiver as written: ``_client`` for ``self._client`` (and
    for ``self._client["eu"]``); for what a call returns, the called name (``get_client``
    for ``get_client(region)``, ``replace`` for ``url.replace("https://", "wss://")``),
    never text from the call's arguments; "" when the method is called on nothing."""
    written = written_receiver(call)
    if not written:
        return ""
    receiver = call.chain.receiver() if call.chain is not None else None
    if receiver is not None:
        receiver = receiver.without_items()  # ``self.clients["stripe"]``: ``clients``
        if receiver.ends_in_call:
            called = receiver.called()
            if called:
                return called
        elif receiver.steps:
            return str(receiver.steps[-1][1])
        elif receiver.root:
            return receiver.root
    # a literal or a bracketed expression (``", ".join``): as written
    while written.endswith("]") and "[" in written:
        written = written[: written.rindex("[")]
    return written.rsplit(".", 1)[-1]


def _is_container(
    project: ProjectIndex, name: str, fn: Function, facts: ModuleFacts, before: int
) -> bool:
    """A receiver bound to a list/dict/set literal or factory, locally or at module level."""
    if name.startswith("self.") and name.count(".") == 1:
        # ``self.orders = {}`` in any method of the class (``__init__`` mostly).
        owner = f"{fn.class_name}." if fn.class_name else None
        bound = [
            a.value
            for a in facts.assignments
            if owner and a.target == name and (a.function or "").startswith(owner)
        ]
        return bool(bound) and all(_holds_container(project, value) for value in bound)
    value = local_value(project, name, fn, facts, before)
    if value is None:
        module_level = project.local_assignments(facts, None, name)
        value = module_level[-1].value if module_level else None
    return value is not None and _holds_container(project, value)


def _holds_container(project: ProjectIndex, value: Value) -> bool:
    if value.kind in {"list", "dict"} or value.text[:1] in {"[", "{"}:
        return True
    return value.kind == "call" and bool(
        project.catalog.container_factories.match(value.qualname or "")
    )


def _names_a_variable(
    project: ProjectIndex, name: str, call: Call, fn: Function, facts: ModuleFacts
) -> bool:
    """``calendar = build("calendar", "v3")``, then ``calendar.insert(...)``: the call's root
    is a variable named like a standard-library module, not the module."""
    if call.text.split(".", 1)[0] != name or name in facts.imports:
        return False
    return (
        name in fn.params
        or local_value(project, name, fn, facts, call.order) is not None
        or bool(project.local_assignments(facts, None, name))
    )


def in_process_method(project: ProjectIndex, callee: str, method: str) -> bool:
    """``networkx.Graph.add_edge``, ``pandas.DataFrame.insert``: a method of a class of a
    package whose objects live in the process, or of an object one of them hands out
    (``openpyxl.Workbook.active.append``: the active sheet of a workbook). Not its module
    functions (``networkx.write_gml(graph, path)`` writes a file), nor a save
    (``figure.savefig(path)``); but a module function that deletes (``numpy.delete``,
    ``torch.cuda.empty_cache``): such a package has nothing outside the process to delete."""
    world = project.catalog.open_world
    parts = callee.split(".")
    if parts[0] not in world.in_process_packages or method in world.buffer_saves:
        return False
    if len(parts) >= 2 and world.verb_class(method) == "destructive":
        return True
    return len(parts) >= 3 and any(part[:1].isupper() for part in parts[1:-1])


def _of_in_process_package(world: OpenWorld, written: str) -> bool:
    """Whether ``written`` (a callee) is a call of an npm package or Node module whose
    objects live in the process, or a step on what one handed out."""
    return written.startswith(("npm:", "node:")) and (
        written.split(".", 1)[0].removesuffix("()") in world.in_process_packages
    )


def _bound_call(project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts) -> str:
    """The callee of the call the local ``call``'s chain starts from was bound to (``now =
    dayjs().tz(zone)`` gives ``npm:dayjs().tz``), or ""."""
    root = call.chain.root if call.chain is not None else ""
    if not root or not root.isidentifier():
        return ""
    bound = local_value(project, root, fn, facts, call.order)
    return (bound.qualname or "") if bound is not None and bound.kind == "call" else ""


def _regular_expression(value: Value) -> bool:
    """A regular expression literal (``/ +/g``): a constant written between slashes."""
    return value.kind == "const" and value.text.startswith("/") and value.text.count("/") >= 2


def _string_literals_only(call: Call, least: dict[str, int]) -> bool:
    """Whether ``call`` is a method strings share with clients (``replace``, ``split``),
    handed at least as many string literals as the string's own takes and nothing else but
    a trailing count."""
    wanted = least.get(call.method)
    if wanted is None or not call.receiver or call.kwargs.keys() - {"count", "maxsplit", "sep"}:
        return False
    args = list(call.args)
    if args and args[-1].kind == "const" and type(args[-1].const) is int:
        args.pop()  # ``replace("a", "b", 1)``: the count
    handed = [*args, *call.kwargs.values()]
    return (
        len(handed) >= wanted
        and all(value.kind == "const" for value in handed)
        and all(isinstance(arg.const, str) for arg in args)
    )


def stays_in_process(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> bool:
    """Calls whose receiver is known to live in the process, whatever the method is called:
    the standard library and builtin types, a package whose objects live in the process,
    loggers and literals, a container bound here, a library's own settings, a queue's
    ``put``."""
    head = callee.split(".", 1)[0]
    if head in STDLIB_MODULES and not _names_a_variable(project, head, call, fn, facts):
        return True
    if in_process_method(project, callee, call.method):
        return True
    if callee.startswith(("str.", "bytes.", "list.", "dict.", "set.")):
        return True
    world = project.catalog.open_world
    if call.method not in world.buffer_saves and (
        # ``npm:dayjs().add`` for ``dayjs(start).add(1, "hour")``: the package called
        _of_in_process_package(world, call.callee)
        # ``const now = dayjs().tz(zone)``, then ``now.subtract(1, "day")``: bound first
        or (
            facts.language != "python"
            and _of_in_process_package(world, _bound_call(project, call, fn, facts))
        )
    ):
        # ``createHash("sha256")`` (node:crypto), ``$("script").remove()`` after ``$ =
        # cheerio.load(html)``: a function of an in-memory npm package or Node module, or a
        # method of what one handed out (its saves excepted)
        return True
    if facts.language != "python" and call.receiver and call.method in world.js_value_methods:
        # ``error.message.includes("quota")``, ``name.trim()``: a JavaScript value's own
        # method, computing a new value
        return True
    if facts.language == "python" and call.receiver and call.method in world.python_value_methods:
        # ``service.endswith(".service")`` on a local no annotation types: a string's own
        return True
    if facts.language == "python" and _string_literals_only(
        call, world.python_string_literal_methods
    ):
        # ``stamp.replace("Z", "+00:00")``: a string's own method, handed only string literals
        return True
    if any(_regular_expression(arg) for arg in call.args[:1]):
        # ``text.replace(/\/$/, "")``, ``name.split(/\s+/)``: a string's own method, handed
        # a regular expression literal
        return True
    written = written_receiver(call)
    last = receiver_name(call)
    inherited = last == "self" and callee.startswith(("npm:", "node:"))
    if (
        last
        and not inherited  # ``this.schedule()``: a method of the package class it extends
        and (project.catalog.logger_receivers.match(last) or last[:1] in {'"', "'", "[", "{", "("})
    ):
        return True
    if written and _is_container(project, written, fn, facts, call.order):
        return True
    if call.method in project.catalog.item_methods and _keyed_item(call):
        # ``session["history"].append(cmd)``: a value a mapping holds under a literal key,
        # changed in place, whatever the mapping is called
        return True
    if _configures_library(project, call, written, facts):
        return True
    if _context_state(project, written, fn):
        # ``tool_context.state.pop("cart")``: the session state the framework hands the tool,
        # a mapping in the process (its changes are judged by project/state_writes.py)
        return True
    # ``sub.queue.put_nowait(event)``: an asyncio/queue.Queue, in the process
    return call.method in project.catalog.queue_methods and "queue" in last.lower()


def _context_state(project: ProjectIndex, written: str, fn: Function) -> bool:
    """Whether ``written`` is the state a framework's injected run context holds
    (``tool_context.state``)."""
    root, _, attribute = written.partition(".")
    catalog = project.catalog
    return (
        root in fn.params and root in catalog.injected_params and attribute in catalog.context_state
    )


def _keyed_item(call: Call) -> bool:
    """Whether a call's receiver is an item taken by a literal string key
    (``session["history"]``, ``state['items']``)."""
    receiver = call.chain.receiver() if call.chain is not None else None
    if receiver is None or not receiver.steps:
        return False
    kind, key = receiver.steps[-1]
    return kind == "item" and isinstance(key, str)


def _configures_library(
    project: ProjectIndex, call: Call, written: str, facts: ModuleFacts
) -> bool:
    """``wikipedia.set_lang("fr")``, ``pandas.set_option(...)``: a setting verb called on an
    imported module itself, not on a client it made, configures the library in this
    process; nothing leaves it."""
    named = words(call.method, identifier=True)
    if not named or named[0] not in project.catalog.open_world.module_settings:
        return False
    imported = facts.imports.get(written)
    if imported is None or imported.split(".", 1)[0] in project.module_heads:
        return False
    return imported.rsplit(".", 1)[-1][:1].islower()  # a module, not a class or a client


def asks_a_collection(project: ProjectIndex, call: Call, collection: str) -> bool:
    """``client.sql_generations.create(prompt=...)``, ``client.completions.create(...)``: a
    generated SDK's ``create`` on a collection named as a question is the POST to that
    collection's path (``/sql-generations``), judged by the path's words as a POST is
    (``read_posts``): a collection whose name only asks makes an answer, nothing a retry
    duplicates."""
    if call.method not in {"create", "acreate"}:
        return False
    named = words(collection, identifier=True)
    catalog = project.catalog
    return (
        bool(named)
        and not any(w in catalog.post_write_words for w in named)
        and any(w in catalog.post_read_words for w in named)
    )
