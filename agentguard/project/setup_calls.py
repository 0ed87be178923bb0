"""Set-up: what a function does once, on first use, is not what each call of it does. A
client, pool or singleton made the first time it is asked for (``if _pool is None: _pool =
await asyncpg.create_pool(dsn)``, ``if self._index is None: self._index = ...``), or a
function with no arguments whose answer is cached (``@functools.lru_cache def
get_client()``), or a file kept across calls that a function writes when a test finds it
missing (cookies or a token saved after a login): its effects are set-up, not the effect of
the tool that reaches it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Span
from agentguard.facts.module_facts import Assignment, Branch, Call, Function, ModuleFacts, Value
from agentguard.knowledge.words import words
from agentguard.project.receivers import written_receiver
from agentguard.project.tool_facts import SELF_NAMES, self_spelled

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def setup_orders(project: ProjectIndex, fn: Function, facts: ModuleFacts) -> list[tuple[int, int]]:
    """The call orders of ``fn`` inside a first-use block: an ``if`` that tests a module
    variable or an attribute of ``self`` for being unset (``is None``, ``not x``) and whose
    body sets it, or that a function of the module or a method of the class sets
    (``if not self._initialized: await self.initialize()``). A local tested so (``if found
    is None: found = create(...)``) is a get-or-create, each call's own write, not set-up."""
    found: list[tuple[int, int]] = []
    for branch in fn.branches:
        if _seeds_a_default(project, branch.test, branch.span, fn, facts):
            found.append(branch.body_order)
            continue
        cache = _missing_key_test(branch.test)
        if cache is not None and _shared_cache(project, cache, fn, facts):
            span = branch.span
            if any(
                store.function == fn.qualname
                and store.target == cache
                and span.line <= store.span.line <= span.end_line
                for store in facts.stores
            ):
                # ``if Memory.index.get(name) is None: ...; Memory.index[name] = db``: an
                # index kept across calls, filled on the first use of its key
                found.append(branch.body_order)
            continue
        answered = _first_use_below(project, branch, fn, facts)
        if answered is not None:
            found.append(answered)
            continue
        held = _unset_test(branch.test)
        if held is None or not _shared(project, held, fn, facts):
            continue
        span = branch.span
        assigned = _assignments_of(project, held, fn, facts)
        if any(
            span.line <= assignment.span.line <= span.end_line for assignment in assigned
        ) or _set_elsewhere(facts, held, fn):
            found.append(branch.body_order)
    found.extend((order, order + 1) for order in kept_file_writes(project, fn, facts))
    found.extend((order, order + 1) for order in handshake_sends(project, fn, facts))
    found.extend((order, order + 1) for order in returned_folder_made(fn, project))
    found.extend((order, order + 1) for order in fixed_folder_made(project, fn, facts))
    return found


def _assignments_of(
    project: ProjectIndex, held: str, fn: Function, facts: ModuleFacts
) -> list[Assignment]:
    """What binds ``held`` in ``fn``: ``global _client`` then ``_client = Client()`` binds
    the module's variable, an assignment of the module's written inside the function."""
    return [
        *project.local_assignments(facts, fn.qualname, held),
        *(a for a in project.local_assignments(facts, None, held) if a.function is None),
    ]


def _first_use_below(
    project: ProjectIndex, branch: Branch, fn: Function, facts: ModuleFacts
) -> tuple[int, int] | None:
    """The call orders below a guard that hands back what the function keeps once it is
    made (``if _db is not None: return _db``, ``if (db) return db;``), when the function
    builds it below the guard (a client, a connection: ``_db = sqlite3.connect(path)``):
    the rest of the function runs on first use only. What a call answers kept so (``if
    self.sent: return self.sent``, then ``self.sent = requests.post(...)``) is no set-up."""
    if not branch.exits:
        return None
    held = _set_test(branch.test)
    if held is None or not _shared(project, held, fn, facts):
        return None
    guard = branch.span
    if not any(
        value.span is not None
        and guard.line <= value.span.line <= guard.end_line
        and self_spelled(value.text) == held
        for value in fn.returns
    ):
        return None
    if not any(
        a.span.line > guard.end_line and _made_here(project, a.value, fn, facts)
        for a in _assignments_of(project, held, fn, facts)
    ):
        return None  # what is kept is no object made here (a client, a connection)
    below = [
        call.order for call in project.calls_in(fn.qualname) if call.span.line > guard.end_line
    ]
    return (min(below), max(below) + 1) if below else None


def _made_here(project: ProjectIndex, value: Value, fn: Function, facts: ModuleFacts) -> bool:
    """Whether ``value`` is an object a call builds (``Client(...)``, ``new Database(file)``,
    ``sqlite3.connect(path)``, a factory's client), not the answer of a write (``requests.
    post(...)``, or a local holding one)."""
    world = project.catalog.open_world
    for _ in range(3):  # ``answer = requests.post(...)``, then ``self.sent = answer.json()``
        if value.kind == "name":
            bound = project.local_assignments(facts, fn.qualname, value.text)
            value = bound[-1].value if bound else value
        if value.kind != "call":
            return False
        if project.built_type(value) is not None:
            return True
        method = (value.qualname or value.text.partition("(")[0]).rsplit(".", 1)[-1]
        named = words(method, identifier=True)
        if named and world.verb_class(named[0]) in {
            "non_idempotent",
            "idempotent_write",
            "destructive",
        }:
            return False
        root = value.chain.root if value.chain is not None else ""
        if (
            not root
            or root == value.text
            or not project.local_assignments(facts, fn.qualname, root)
        ):
            return True
        value = Value("name", root)
    return True


def _set_test(test: Value) -> str | None:
    """``x`` / ``x is not None`` / ``x != None``: the name or attribute tested for being
    set."""
    tested = test
    if (
        test.op in {"is not", "!="}
        and len(test.parts) == 2
        and test.parts[1].text
        in {
            "None",
            "null",
            "undefined",
        }
    ):
        tested = test.parts[0]
    elif test.op:
        return None
    return self_spelled(tested.text) if tested.kind in {"name", "attr"} else None


# What makes a folder when it is missing: ``path.mkdir(exist_ok=True)``, ``os.makedirs(p,
# exist_ok=True)``.
_FOLDER_MAKERS = frozenset({"mkdir", "makedirs"})


def _returned_folder(value: Value) -> str | None:
    """The folder a returned value names: itself (``return folder``), or the folder a path
    in it is joined to (``return os.path.join(folder, name)``, ``return folder / name``)."""
    if value.kind == "name":
        return value.text
    if value.kind == "call" and value.qualname == "os.path.join" and value.call_args:
        first = value.call_args[0]
        return first.text if first.kind == "name" else None
    if value.op == "/" and value.parts and value.parts[0].kind == "name":
        return value.parts[0].text
    return None


def returned_folder_made(fn: Function, project: ProjectIndex) -> list[int]:
    """The orders of the calls of ``fn`` that make the folder it returns, or a path in it,
    when it is missing (``d = root / name; d.mkdir(parents=True, exist_ok=True); return
    d``, ``os.makedirs(data, exist_ok=True); return os.path.join(data, "tasks.db")``): a
    getter of a working folder or a file in it, whose callers write there; making it is
    their set-up. A folder made and not returned is the call's own effect (a tool that
    creates a directory)."""
    returned = {_returned_folder(value) for value in fn.returns} - {None}
    if not returned:
        return []
    made: list[int] = []
    for call in project.calls_in(fn.qualname):
        exist_ok = call.kwargs.get("exist_ok")
        if call.method not in _FOLDER_MAKERS or exist_ok is None or exist_ok.const is not True:
            continue
        folder = call.args[0].text if call.callee == "os.makedirs" and call.args else None
        if (folder or written_receiver(call)) in returned:
            made.append(call.order)
    return made


def fixed_folder_made(project: ProjectIndex, fn: Function, facts: ModuleFacts) -> list[int]:
    """The orders of the calls of ``fn`` that make a folder when it is missing, on a path
    that is the same on every call (``os.makedirs(DATA_DIR, exist_ok=True)``,
    ``await fs.mkdir(SYNC_DIR, { recursive: true })``): an empty folder made once, where the
    function then reads or writes; what it does there is the call's effect, not the folder.
    A folder named by the caller (``mkdir(root / name)``) is the call's own effect."""
    made: list[int] = []
    for call in project.calls_in(fn.qualname):
        if call.method not in _FOLDER_MAKERS or not _when_missing(call):
            continue
        python_function = call.callee == "os.makedirs"
        path = (
            call.args[0] if (python_function or facts.language != "python") and call.args else None
        )
        text = path.text if path is not None else written_receiver(call)
        if text and _same_every_call(project, text, path, fn, facts):
            made.append(call.order)
    return made


def _when_missing(call: Call) -> bool:
    """Whether a folder maker leaves a folder that is there alone: ``exist_ok=True`` in
    Python, ``{ recursive: true }`` in Node's ``fs.mkdir``."""
    exist_ok = call.kwargs.get("exist_ok")
    if exist_ok is not None:
        return exist_ok.const is True
    options = call.args[1] if len(call.args) > 1 else None
    recursive = options.items.get("recursive") if options is not None else None
    return recursive is not None and recursive.const is True


# What tests whether a file is there: ``os.path.exists(p)``, ``p.exists()``, ``p.is_file()``.
_EXISTENCE_TESTS = frozenset({"exists", "isfile", "is_file"})


def handshake_sends(project: ProjectIndex, fn: Function, facts: ModuleFacts) -> list[int]:
    """The orders of the messages ``fn`` sends on a connection it opens and keeps for later
    calls, made of nothing its caller hands it (``self.websocket = await
    websockets.connect(uri)``, then ``await self.websocket.send(json.dumps({"role":
    "external"}))``): a greeting that opens the channel, set-up of every request sent on it
    later. A message built from a parameter is the call's own, and so is anything sent on a
    connection the function does not keep (``ws = connect(url); ws.send(text)``)."""
    opened = {
        assignment.target: assignment.order
        for assignment in project.local_assignments(facts, fn.qualname)
        if assignment.target.partition(".")[0] in SELF_NAMES and assignment.value.kind == "call"
    }
    if not opened:
        return []
    world = project.catalog.open_world
    params = {name for name in fn.params if name not in SELF_NAMES}
    return [
        call.order
        for call in project.calls_in(fn.qualname)
        if call.receiver in opened
        and call.order >= opened[call.receiver]
        and call.method in world.channel_sends
        and not any(params & set(value.names) for value in (*call.args, *call.kwargs.values()))
    ]


def kept_file_writes(project: ProjectIndex, fn: Function, facts: ModuleFacts) -> list[int]:
    """The orders of the calls of ``fn`` that write a file the function also tests for
    (``if COOKIES.exists(): load(COOKIES) else: login(); save(COOKIES)``, the OAuth
    quickstart's ``token.json``), when that file is the same on every call (a literal path or
    a module constant) and the write runs only on some calls: inside an ``if``, or after one
    that leaves the function. Such a file is a cache of a login or a token, written when
    missing. A write every call makes (``open(NOTES, "a")`` after creating the file when
    missing) is the call's own, and so is a write to a path the caller hands in."""
    tested: set[str] = set()
    for call in project.calls_in(fn.qualname):
        if call.method not in _EXISTENCE_TESTS:
            continue
        path = call.args[0] if call.callee.startswith("os.path.") and call.args else None
        text = path.text if path is not None else written_receiver(call)
        if text and _same_every_call(project, text, path, fn, facts):
            tested.add(text)
    if not tested:
        return []
    kept: list[int] = []
    for call in project.calls_in(fn.qualname):
        if call.method in _EXISTENCE_TESTS:
            continue
        handed = [value.text for value in (*call.args, *call.kwargs.values())]
        receiver = written_receiver(call)
        if (
            any(text in tested for text in handed)
            or any(receiver == text or receiver.startswith(f"{text}.") for text in tested)
        ) and _on_some_calls(fn, call.span):
            kept.append(call.order)
    return kept


def _on_some_calls(fn: Function, span: Span) -> bool:
    """Whether the call at ``span`` in ``fn`` runs only on some calls: it sits in an ``if``
    (its body or its ``else``), or follows an ``if`` whose body leaves the function."""
    return any(
        branch.span.encloses(span) or (branch.exits and branch.span.end_line < span.line)
        for branch in fn.branches
    )


def _same_every_call(
    project: ProjectIndex, text: str, path: Value | None, fn: Function, facts: ModuleFacts
) -> bool:
    """Whether the path written ``text`` names the same file on every call: a string
    literal, a module variable no local or parameter of ``fn`` shadows, or a local read
    from the operator's settings (``folder = os.getenv("SCRATCH_DIR", "./scratch")``)."""
    if path is not None and path.string() is not None:
        return True
    if not text.isidentifier() or text in fn.params:
        return False
    local = project.local_assignments(facts, fn.qualname, text)
    if local:
        return all(_a_setting(assignment.value) for assignment in local)
    return bool(project.local_assignments(facts, None, text))


# What reads an operator's setting from the environment.
_SETTING_READS = frozenset({"os.getenv", "os.environ.get", "os.environ"})


def _a_setting(value: Value) -> bool:
    """``os.getenv("DIR", "./data")``, ``os.environ["DIR"]``, ``process.env.DIR ??
    "./data"``: the same on every call of a running server."""
    if value.op in {"??", "||", "or"} and value.parts:
        return _a_setting(value.parts[0]) and all(
            part.string() is not None or _a_setting(part) for part in value.parts[1:]
        )
    head = (value.qualname or value.text).partition("(")[0].partition("[")[0]
    return head in _SETTING_READS or value.text.startswith("process.env.")


def _set_elsewhere(facts: ModuleFacts, held: str, fn: Function) -> bool:
    """Whether another function sets ``held``: a method of ``fn``'s class other than its
    ``__init__`` for ``self.x``, a function of the module (``global``) for a variable."""
    owner = f"{fn.class_name}." if fn.class_name else None
    for assignment in facts.assignments:
        where = assignment.function
        if where is None and "." not in held and assignment.target == held:
            # ``global _ready; _ready = True`` in another function binds the module's
            # variable: the assignment is the module's, written inside that function
            inside = any(
                other.qualname != fn.qualname
                and other.span.line <= assignment.span.line <= other.span.end_line
                for other in facts.functions.values()
            )
            if inside and not fn.span.line <= assignment.span.line <= fn.span.end_line:
                return True
            continue
        if assignment.target != held or where is None or where == fn.qualname:
            continue
        if held.split(".", 1)[0] in SELF_NAMES:
            if owner and where.startswith(owner) and not where.endswith(".__init__"):
                return True
        elif "." not in held:
            return True
    return False


def _unset_test(test: Value) -> str | None:
    """``x is None`` / ``not x`` / ``x == None``: the name or attribute tested."""
    unset = (test.op == "not" and bool(test.parts)) or (
        test.op in {"is", "=="} and len(test.parts) == 2 and test.parts[1].text == "None"
    )
    if not unset:
        return None
    tested = test.parts[0]
    return self_spelled(tested.text) if tested.kind in {"name", "attr"} else None


def _missing_key_test(test: Value) -> str | None:
    """``cache.get(key) is None`` / ``not cache.get(key)`` / ``key not in cache``: the
    mapping tested for a missing key, as written."""
    if test.op == "not in" and len(test.parts) == 2:
        cache = test.parts[1]
        return self_spelled(cache.text) if cache.kind in {"name", "attr"} else None
    unset = (test.op == "not" and bool(test.parts)) or (
        test.op in {"is", "=="} and len(test.parts) == 2 and test.parts[1].text == "None"
    )
    if not unset:
        return None
    tested = test.parts[0]
    chain = tested.chain if tested.kind == "call" else None
    receiver = chain.receiver() if chain is not None else None
    if chain is None or chain.called() != "get" or receiver is None:
        return None
    text = self_spelled(tested.text.split("(", 1)[0])
    return text[: -len(".get")] if text.endswith(".get") else None


def _seeds_a_default(
    project: ProjectIndex, test: Value, span: Span, fn: Function, facts: ModuleFacts
) -> bool:
    """``if PROTECTED not in data: data[PROTECTED] = []; _save(data)``: a fixed key of the
    state a function loaded, given a literal default when it is missing and saved. Once
    saved the key is there: the first use's set-up, not what each call does."""
    if test.op != "not in" or len(test.parts) != 2:
        return False
    key, mapping = test.parts
    if mapping.kind != "name" or project.constant_string(key) is None:
        return False
    return any(
        store.function == fn.qualname
        and store.target == mapping.text
        and span.line <= store.span.line <= span.end_line
        and store.value.kind in {"list", "dict", "const"}
        and not store.value.names
        for store in facts.stores
    )


def _shared_cache(project: ProjectIndex, cache: str, fn: Function, facts: ModuleFacts) -> bool:
    """Whether the mapping ``cache`` outlives the call: an attribute of ``self``/``cls``, a
    class attribute (``Memory.index``) or a module variable."""
    head, _, attr = cache.partition(".")
    if head in SELF_NAMES:
        return bool(attr) and "." not in attr
    if not attr:
        return bool(project.local_assignments(facts, None, cache))
    return "." not in attr and head[:1].isupper()


def _shared(project: ProjectIndex, held: str, fn: Function, facts: ModuleFacts) -> bool:
    """Whether ``held`` outlives the call: an attribute of ``self``/``cls`` or a module
    variable."""
    head, _, attr = held.partition(".")
    if head in SELF_NAMES:
        return bool(attr) and "." not in attr
    return "." not in held and bool(project.local_assignments(facts, None, held))


def cached_singleton(project: ProjectIndex, qualname: str) -> bool:
    """A function of no arguments (``self`` aside) whose answer a caching decorator keeps
    (``@functools.lru_cache``): it runs once, what it does is set-up."""
    fn = project.functions[qualname][0]
    if any(param not in SELF_NAMES for param in fn.params):
        return False
    decorators = project.catalog.open_world.setup_decorators
    return any(decorator.qualname in decorators for decorator in fn.decorators)


def off_by_default_orders(
    project: ProjectIndex, fn: Function, facts: ModuleFacts
) -> list[tuple[int, int]]:
    """The call orders of ``fn`` inside an ``if`` on an operator's setting that is off by
    default: an attribute of the tool's class whose class-level default is ``False`` or
    ``None`` (``save_file: bool = False``), tested as it is or through a local that takes it
    as its default (``save_file = kwargs.get("save_file", self.save_file)``). What such a
    branch does is an option the operator turns on, not what the tool does by default."""
    if not fn.class_name:
        return []
    owner = fn.qualname.rsplit(".", 1)[0]
    found: list[tuple[int, int]] = []
    for branch in fn.branches:
        test = branch.test
        if test.kind not in {"name", "attr"} or test.op:
            continue
        setting = _setting_of(project, test.text, fn, facts)
        if setting is not None and _off_by_default(project, owner, setting):
            found.append(branch.body_order)
    return found


def _setting_of(project: ProjectIndex, tested: str, fn: Function, facts: ModuleFacts) -> str | None:
    """The attribute of ``self`` a test reads: ``self.save_file``, or a local assigned
    ``self.save_file`` or ``<mapping>.get("...", self.save_file)`` once in ``fn``."""
    head, _, attr = tested.partition(".")
    if head in SELF_NAMES:
        return attr if attr and "." not in attr else None
    if attr:
        return None
    assigned = project.local_assignments(facts, fn.qualname, tested)
    if len(assigned) != 1:
        return None
    value = assigned[0].value
    if value.kind == "call" and value.chain is not None and value.chain.called() == "get":
        given = value.call_args[1:2]
        value = given[0] if given else value
    head, _, attr = value.text.partition(".")
    if value.kind == "attr" and head in SELF_NAMES and attr and "." not in attr:
        return attr
    return None


def _off_by_default(project: ProjectIndex, owner: str, setting: str) -> bool:
    """Whether the class (or the nearest base of the project that sets it) gives
    ``setting`` the class-level default ``False`` or ``None``."""
    for current in project.lineage(owner):
        entry = project.classes.get(current)
        if entry is None:
            continue
        default = entry[0].attributes.get(setting)
        if default is not None:
            return default.kind == "const" and (default.const is False or default.const is None)
    return False
