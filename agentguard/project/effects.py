"""Effect inference: side-effect sinks (rules/effects.yaml), idempotency keys, and effect
summaries propagated through the project's call graph to a fixpoint, for the functions
asked about (``EffectSummaries``)."""

from __future__ import annotations

import ast
import re
import sys
import weakref
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentguard.diagnostics import Confidence, EvidenceStep, Location
from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import Matcher, Sink
from agentguard.project import open_world
from agentguard.project.open_world import local_value as _local_value
from agentguard.project.read_posts import (
    MIXED,
    NEUTRAL,
    READ,
    WEAK,
    WRITE,
    judge_mapped_url,
    judge_post,
    name_sets,
    read_by_name,
)
from agentguard.project.tool_facts import (
    FRESH_CALLS,
    HASH_CALLS,
    INJECTED_PARAMS,
    KEY_HEADER_RE,
    KEY_KWARG_RE,
    SCOPE_NAMES,
    SELF_NAMES,
    SQL_READ_RE,
    SQL_WRITE_RE,
    ArgSpec,
    Effect,
    KeyEvidence,
    argument_at,
)

# The standard library talks to no service on its own (queue.Queue.put, collections...);
# its real sinks (smtplib, subprocess, urllib) are catalogue entries.
STDLIB_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins"}

if TYPE_CHECKING:
    from agentguard.project.project_model import ProjectModel


def _http_method(
    project: ProjectModel, call: Call, sink: Sink, fn: Function, facts: ModuleFacts
) -> str | None:
    if sink.method:
        return sink.method
    spec = sink.method_from or {}
    if spec.get("request_data"):
        first = call.args[0] if call.args else None
        if first is not None and first.kind == "name":
            first = _local_value(project, first.text, fn, facts, call.order) or first
        if first and first.kind == "call":
            method = first.call_kwargs.get("method")
            method_text = method.string() if method else None
            if method_text:
                return method_text.upper()
            if "data" in first.call_kwargs or len(first.call_args) > 1:
                return "POST"
        return "POST" if ("data" in call.kwargs or len(call.args) > 1) else "GET"
    value = argument_at(call.args, call.kwargs, ArgSpec(spec.get("arg"), spec.get("kwarg")))
    if value is not None and value.kind == "name":
        value = _local_value(project, value.text, fn, facts, call.order) or value
    if value is not None and value.string():
        return value.string().upper()  # type: ignore[union-attr]
    return None


def _find_sink(matcher: Matcher[Sink], call: Call, callee: str) -> Sink | None:
    """A sink entry for the resolved callee, the import-resolved name, or the call as
    written (``orders_client.create`` in a user's catalogue)."""
    sink = matcher(callee)
    if sink is None and call.callee != callee:
        sink = matcher(call.callee)
    if sink is None and call.text != callee and call.text != call.callee:
        sink = matcher(call.text)
    return sink


def _classify_sink(
    project: ProjectModel, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    sink = _find_sink(project.catalog.sinks, call, callee)
    if sink is not None:
        kind, idempotent, method = sink.effect, sink.idempotent, None
        unknown_statement = False  # SQL whose statement the caller supplies
        confidence = Confidence(sink.confidence)
        remote = sink.remote if sink.remote is not None else True
        if kind in {"http"}:
            method = _http_method(project, call, sink, fn, facts)
            method_param = _method_param(call, sink, fn) if method is None else None
            if method_param is not None:
                # judged where a caller passes the method (``self._request("POST", ...)``)
                judgement = judge_post(project, call, fn, facts)
                return _sink_effect(
                    project,
                    call,
                    callee,
                    sink,
                    fn,
                    facts,
                    kind=DEFERRED,
                    idempotent=None,
                    remote=remote,
                    confidence=confidence,
                    reading=judgement.verdict,
                    url_param=judgement.url_param,
                    method_param=method_param,
                )
            if method in {None, "GET", "HEAD", "OPTIONS"}:
                if method is None and call.kwargs.get("method") is not None:
                    kind, idempotent, confidence = "network_write", False, Confidence.LOW
                else:
                    return None
            elif method in {"PUT"}:
                kind, idempotent = "network_write", True
            elif method == "DELETE":
                kind, idempotent = "destructive", True
            else:
                kind, idempotent = "network_write", False
        elif kind == "network_write" or kind in {"payment", "message", "destructive"}:
            method = sink.method
        elif kind == "sql":
            statement = call.args[0] if call.args else call.kwargs.get("sql")
            if statement is None:
                return _open_world(project, call, callee, fn, facts)  # ``request.execute()``
            if statement.kind == "name":
                statement = (
                    _local_value(project, statement.text, fn, facts, call.order) or statement
                )
            text = statement.string()
            receiver = (call.receiver or "").lower()
            if not re.search(
                r"(cur|conn|db|session|engine|cx|sql|tx|transaction)", receiver
            ) and not _bound_to_db_handle(project, call.receiver or "", fn, facts, call.order):
                return _open_world(project, call, callee, fn, facts)
            if text is not None:
                if SQL_READ_RE.match(text) or not SQL_WRITE_RE.match(text):
                    return None
                upsert = bool(
                    re.search(r"(?i)on\s+conflict|on\s+duplicate\s+key|insert\s+or\s+ignore", text)
                )
                # UPDATE t SET n = n + 1 repeats its increment; INSERT adds a row each time.
                relative = bool(re.search(r"(?is)\bset\b.*?(\w+)\s*=\s*\1\s*[-+]", text))
                idempotent = upsert or not (re.match(r"(?is)^\s*insert", text) or relative)
                kind = "write"
                method = text.split(None, 1)[0].upper()
            elif (verb := _sqlalchemy_statement(statement)) is not None:
                if verb == "select":
                    return None
                kind = "write"
                idempotent = verb != "insert"
                method = verb.upper()
            else:
                kind, idempotent, confidence = "write", None, Confidence.LOW
                unknown_statement = True
            # An embedded database file is a local write (judged by Q1): no service downstream
            # could honour an idempotency key.
            remote = not _embedded_database_module(facts)
        elif kind == "file_open":
            mode_text = open_world.file_mode(project, call, sink, fn, facts)
            if mode_text is None:  # a mode no reader of the source can know: maybe a write
                kind, idempotent, remote, confidence = "write", None, False, Confidence.LOW
            elif not any(ch in mode_text for ch in "wax+"):
                return None
            else:
                kind, idempotent, remote = "write", "a" not in mode_text, False
        if sink.receiver_hint == "task" and not (call.receiver or "").strip():
            return None
        effect = _sink_effect(
            project,
            call,
            callee,
            sink,
            fn,
            facts,
            kind=kind,
            idempotent=idempotent,
            remote=remote,
            confidence=confidence,
            method=method,
        )
        if method == "POST" and kind == "network_write":
            return _judged_post(project, effect, fn, facts)
        if unknown_statement:
            # a statement the caller supplies: the tool's name and description decide
            return replace(effect, reading=NEUTRAL)
        if method == "PATCH" and name_sets(project.catalog, fn.name):
            return _idempotent_patch(effect, fn.name)
        if kind == "exec" and open_world.reads_by_command(project, call, fn, facts):
            return None  # ``kubectl describe ...``: a literal read-only command
        return None if open_world.is_plumbing(project, effect, fn) else effect
    guessed = open_world.judge_built(
        project, call, fn, facts, lambda sink: _key_for(project, call, sink, fn, facts)
    ) or _heuristic_sink(project, call, callee, fn, facts)
    if guessed is not None and call.method in {"post", "apost"}:
        return _judged_post(project, guessed, fn, facts)  # client.post(...) on an unknown client
    return guessed if guessed is not None else _open_world(project, call, callee, fn, facts)


def _open_world(
    project: ProjectModel, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """A call the catalogue does not know, judged by its verb (project/open_world.py)."""
    return open_world.judge(
        project, call, callee, fn, facts, lambda sink: _key_for(project, call, sink, fn, facts)
    )


def _judged_post(
    project: ProjectModel, effect: Effect, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """An HTTP POST as its request reads: no effect when it only asks a question (search,
    embeddings, a model call, a GraphQL query), low confidence on mixed evidence."""
    judgement = judge_post(project, effect.call, fn, facts)
    if judgement.verdict == READ:
        return None
    if judgement.verdict in {MIXED, WEAK}:
        why = "reads and writes" if judgement.verdict == MIXED else "looks like a search"
        return replace(
            effect,
            confidence=Confidence.LOW,
            reading=judgement.verdict,
            url_param=judgement.url_param,
            chain=(
                *effect.chain,
                EvidenceStep(
                    f"the request {why} ({judgement.reason or 'URL and body'})", effect.site
                ),
            ),
        )
    if judgement.verdict == NEUTRAL:
        return replace(effect, reading=NEUTRAL, url_param=judgement.url_param)
    return effect


# An HTTP call whose method a caller chooses: no effect until a caller passes one.
DEFERRED = "http_deferred"


def _method_param(call: Call, sink: Sink, fn: Function) -> str | None:
    """The parameter of ``fn`` passed as the HTTP method (``httpx.request(method, url)``)."""
    spec = sink.method_from or {}
    if spec.get("request_data"):
        return None
    value = argument_at(call.args, call.kwargs, ArgSpec(spec.get("arg"), spec.get("kwarg")))
    if value is not None and value.kind == "name" and value.text in fn.params:
        return value.text if value.text not in SELF_NAMES else None
    return None


# What a helper's HTTP call does once its caller names the method (POST is judged by URL).
_METHOD_EFFECTS: dict[str, tuple[str, bool]] = {
    "PUT": ("network_write", True),
    "DELETE": ("destructive", True),
    "PATCH": ("network_write", False),
}


def _map_method_through_call(
    project: ProjectModel,
    effect: Effect,
    callee_fn: Function,
    call: Call,
    caller: Function,
    facts: ModuleFacts,
) -> Effect | None:
    """A helper's HTTP call whose method is its parameter takes the caller's argument:
    "GET" reads (no effect), "PUT"/"DELETE" are idempotent, "POST" is judged by its URL."""
    if effect.method_param is None:
        return effect
    argument = _argument_for(effect.method_param, callee_fn, call)
    if argument is None:
        return None
    if argument.kind == "name" and argument.text in caller.params:
        return replace(effect, method_param=argument.text)
    method = (argument.string() or "").upper()
    chosen = _METHOD_EFFECTS.get(method)
    if chosen is not None:
        kind, idempotent = chosen
        settled = replace(
            effect,
            kind=kind,
            idempotent=idempotent,
            method=method,
            method_param=None,
            reading="",
            url_param=None,
        )
        if method == "PATCH" and name_sets(project.catalog, caller.name):
            return _idempotent_patch(settled, caller.name)
        return settled
    if method != "POST" or effect.reading == READ:
        return None  # GET/HEAD/OPTIONS, an unknown method, or a POST whose URL reads
    posted = replace(
        effect, kind="network_write", idempotent=False, method=method, method_param=None
    )
    if effect.reading == MIXED:
        return replace(posted, confidence=Confidence.LOW)
    if effect.reading == WRITE:
        return replace(posted, reading="")
    return posted


def _idempotent_patch(effect: Effect, name: str) -> Effect:
    """PATCH is idempotent when it sets fields (``update_object``); the name is the only
    evidence, so the judgement is at most medium confidence."""
    return replace(
        effect,
        idempotent=True,
        confidence=min(effect.confidence, Confidence.MEDIUM, key=lambda c: c.rank),
        chain=(*effect.chain, EvidenceStep(f"PATCH in `{name}` sets fields", effect.site)),
    )


def _argument_for(param: str, callee_fn: Function, call: Call) -> Value | None:
    params = [p for p in callee_fn.params if p not in SELF_NAMES]
    argument: Value | None = call.kwargs.get(param)
    if argument is None and param in params:
        index = params.index(param)
        if index < len(call.args):
            argument = call.args[index]
    return argument


SQL_BUILDERS = {"insert", "update", "delete", "select"}


def _sqlalchemy_statement(statement: Value) -> str | None:
    """The verb of ``insert(T).values(...)`` / ``text("INSERT ...")``, or None."""
    if statement.kind != "call":
        return None
    for callee in statement.calls:
        last = callee.replace("()", "").rsplit(".", 1)[-1]
        if last in SQL_BUILDERS and (callee.startswith("sqlalchemy") or "." not in callee):
            return last
    if statement.qualname and statement.qualname.rsplit(".", 1)[-1] == "text":
        sql = statement.call_args[0].string() if statement.call_args else None
        if sql is not None:
            if SQL_READ_RE.match(sql) or not SQL_WRITE_RE.match(sql):
                return "select"
            return sql.split(None, 1)[0].lower()
    return None


def _sink_effect(
    project: ProjectModel,
    call: Call,
    callee: str,
    sink: Sink,
    fn: Function,
    facts: ModuleFacts,
    **judgement: Any,
) -> Effect:
    """The effect of a catalogue sink call: where it is, its evidence and its key."""
    site = Location(facts.path, call.span)
    shown = _display_sink(project, callee, call)
    return Effect(
        sink=shown,
        site=site,
        call=call,
        chain=(EvidenceStep(f"calls {shown}", site),),
        key=_key_for(project, call, sink, fn, facts),
        function=fn.qualname,
        **judgement,
    )


def _display_sink(project: ProjectModel, callee: str, call: Call) -> str:
    if callee.startswith(("self.", "cls.")) or "." not in callee:
        return call.text
    return callee.replace("()", "")


# Methods that lists, sets and dicts have too: on a receiver not named like a client they
# are container operations (``parts.insert(0, x)``, ``seen.update(...)``), never a write.
# What a queue object of the standard library (asyncio, queue, multiprocessing) is handed
# items with: a message broker's client publishes or sends instead.
QUEUE_PUTS = frozenset({"put", "put_nowait"})
CONTAINER_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "add",
        "update",
        "remove",
        "pop",
        "discard",
        "clear",
        "setdefault",
        "put",
        "put_nowait",
        "push",
        "set",
        "write",
        "send",
        "sort",
        "replace",
    }
)
LOGGER_NAMES = re.compile(r"(?i)^_?(log|logger|logging|console|print|warnings|self|cls)$")
CONTAINER_FACTORIES = re.compile(
    r"^(list|dict|set|tuple|frozenset|collections\..*|defaultdict|deque|OrderedDict|Counter)$"
)


EMBEDDED_DATABASES = {"sqlite3", "aiosqlite", "duckdb"}
SERVER_DATABASES = {
    "psycopg",
    "psycopg2",
    "asyncpg",
    "pymysql",
    "MySQLdb",
    "mysql",
    "aiomysql",
    "pymssql",
    "oracledb",
    "cx_Oracle",
    "sqlalchemy",
    "sqlmodel",
    "databases",
    "snowflake",
    "clickhouse_driver",
    "pyodbc",
    "tortoise",
    "peewee",
    "django",
}


def _embedded_database_module(facts: ModuleFacts) -> bool:
    roots = {qualified.split(".", 1)[0] for qualified in facts.imports.values()}
    return bool(roots & EMBEDDED_DATABASES) and not roots & SERVER_DATABASES


def _bound_to_db_handle(
    project: ProjectModel, receiver: str, fn: Function, facts: ModuleFacts, before: int
) -> bool:
    """``c = conn.cursor()`` / ``db = sqlite3.connect(...)``: a receiver named ``c`` is still
    a DB-API cursor or connection when the code bound it to one."""
    if not receiver.isidentifier():
        return False
    value = _local_value(project, receiver, fn, facts, before)
    if value is None or value.kind != "call":
        return False
    method = (value.qualname or value.text).split("(", 1)[0].rsplit(".", 1)[-1]
    return method in {"cursor", "connect"}


def _written_receiver(call: Call) -> str:
    """The receiver as written in the source (``self._client`` for ``self._client.place``)."""
    text = call.text
    return text.rsplit(".", 1)[0] if "." in text else ""


def _receiver_name(written: str) -> str:
    """The last part of a receiver as written: ``_client`` for ``self._client`` (and for
    ``self._client["eu"]``); for what a call returns, the called name (``get_client`` for
    ``get_client(region)``, ``replace`` for ``url.replace("https://", "wss://")``), never
    text from the call's arguments."""
    while written.endswith("]") and "[" in written:
        written = written[: written.rindex("[")]  # ``self.clients["stripe"]``: ``clients``
    if written.endswith(")"):
        try:
            node = ast.parse(written, mode="eval").body
        except (SyntaxError, ValueError):
            node = None  # cut short at the text limit: judged as written
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                return node.func.attr
            if isinstance(node.func, ast.Name):
                return node.func.id
    return written.rsplit(".", 1)[-1]


def _is_container(
    project: ProjectModel, name: str, fn: Function, facts: ModuleFacts, before: int
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
        return bool(bound) and all(_holds_container(value) for value in bound)
    value = _local_value(project, name, fn, facts, before)
    if value is None:
        module_level = project.local_assignments(facts, None, name)
        value = module_level[-1].value if module_level else None
    return value is not None and _holds_container(value)


def _holds_container(value: Value) -> bool:
    if value.kind in {"list", "dict"} or value.text[:1] in {"[", "{"}:
        return True
    return value.kind == "call" and bool(CONTAINER_FACTORIES.match(value.qualname or ""))


def _heuristic_sink(
    project: ProjectModel, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """An unresolved call whose method name starts with a write verb, on a receiver that
    looks like a service client. Lower confidence than a catalogue sink, and silent on
    containers, loggers, strings and the standard library."""
    if call.method[:1].isupper():
        return None  # a constructor (SendGridAPIClient(...)) builds a client, it sends nothing
    verb_class = open_world.knowledge(project.catalog).verb_class(call.method)
    if verb_class in {None, "read"}:
        return None
    if project.catalog.reads(callee) or project.catalog.reads(call.callee):
        return None
    head = callee.split(".", 1)[0]
    if head in STDLIB_MODULES or callee.startswith(("str.", "bytes.", "list.", "dict.", "set.")):
        return None
    written = _written_receiver(call)
    last = _receiver_name(written) if written else ""
    if last and (LOGGER_NAMES.match(last) or last[:1] in {'"', "'", "[", "{", "("}):
        return None
    if written and _is_container(project, written, fn, facts, call.order):
        return None
    trusted_receiver = bool(last) and bool(project.catalog.client_receiver.search(last))
    external = head in _imported_heads(project, facts) and head not in project.module_heads
    if external and re.search(r"\.(deps|context)\.", callee):
        external = False  # ``ctx.deps.client.send(...)``: the user's own dependencies
    if call.method in CONTAINER_METHODS and not trusted_receiver:
        return None
    if call.method in QUEUE_PUTS and "queue" in last.lower():
        return None  # ``sub.queue.put_nowait(event)``: an asyncio/queue.Queue, in the process
    if not (trusted_receiver or (external and "." in callee)):
        return None
    kind = {
        "non_idempotent": "network_write",
        "destructive": "destructive",
        "idempotent_write": "write",
    }[verb_class]
    idempotent = verb_class != "non_idempotent"
    site = Location(facts.path, call.span)
    sink = Sink(effect=kind, idempotent=idempotent, key={})
    return Effect(
        kind=kind,
        idempotent=idempotent,
        remote=True,
        sink=call.text,
        site=site,
        call=call,
        chain=(EvidenceStep(f"calls {call.text} (write verb, not resolved)", site),),
        confidence=Confidence.MEDIUM if trusted_receiver and external else Confidence.LOW,
        key=_key_for(project, call, sink, fn, facts),
        heuristic=True,
        function=fn.qualname,
    )


def _imported_heads(project: ProjectModel, facts: ModuleFacts) -> frozenset[str]:
    """The top-level names a module imports from (memoised: asked per call)."""
    memo: dict[str, frozenset[str]] = project.__dict__.setdefault("_imported_heads", {})
    heads = memo.get(facts.path)
    if heads is None:
        heads = memo[facts.path] = frozenset(v.split(".")[0] for v in facts.imports.values())
    return heads


KEY_HOLDERS = ("options", "request_options", "extra_headers", "headers", "params", "json", "data")


def _key_for(
    project: ProjectModel, call: Call, sink: Sink, fn: Function, facts: ModuleFacts
) -> KeyEvidence | None:
    """The idempotency key passed to a sink call, wherever the call passes it: a keyword
    (``idempotency_key=``, ``ClientToken=``, ``task_id=``), a header or option in a dict
    literal, in a dict variable built earlier (also by ``headers[...] = ...``), or inside
    ``**kwargs`` unpacked from a dict."""
    key_spec = sink.key or {}
    if key_spec.get("sql_conflict"):
        return None
    kwarg_names = key_spec.get("kwarg")
    search = _KeySearch(
        project,
        call,
        fn,
        facts,
        set(kwarg_names if isinstance(kwarg_names, list) else [kwarg_names] if kwarg_names else []),
        key_spec.get("option"),
        key_spec.get("header"),
    )
    search.from_kwargs(call.kwargs, 0)
    for unpacked in call.star_kwargs_values:
        search.from_dict(unpacked, 0)
    if not search.candidates:
        return None
    return _classify_key(project, search.candidates[-1], fn, facts, call.order)


class _KeySearch:
    """The values a sink call may pass its key in, found by ``_key_for``. (A class, not two
    closures calling each other: those made a reference cycle holding the project per call,
    and the engine freezes the model, cycles and all.)"""

    def __init__(
        self,
        project: ProjectModel,
        call: Call,
        fn: Function,
        facts: ModuleFacts,
        names: set[str],
        option: str | None,
        header: str | None,
    ) -> None:
        self.project = project
        self.call = call
        self.fn = fn
        self.facts = facts
        self.names = names
        self.option = option
        self.header = header
        self.candidates: list[Value] = []

    def from_kwargs(self, kwargs: dict[str, Value], depth: int) -> None:
        for name, value in kwargs.items():
            if name in self.names or KEY_KWARG_RE.match(name):
                self.candidates.append(value)
        for holder in KEY_HOLDERS:
            if holder in kwargs:
                self.from_dict(kwargs[holder], depth)

    def from_dict(self, holder: Value, depth: int) -> None:
        if depth > 3:
            return
        project, call, fn, facts = self.project, self.call, self.fn, self.facts
        original = holder
        if holder.kind == "name":
            holder = _local_value(project, holder.text, fn, facts, call.order) or holder
        if holder.kind == "dict":
            for item_key, item in holder.items.items():
                if _is_key_name(item_key, self.option, self.header):
                    self.candidates.append(item)
                elif item_key in KEY_HOLDERS:
                    self.from_dict(item, depth + 1)
        elif holder.kind == "call" and holder.qualname in {"dict", "builtins.dict"}:
            self.from_kwargs(holder.call_kwargs, depth + 1)
        if original.kind == "name":
            # headers built up by subscript: headers["Idempotency-Key"] = ...
            prefix = original.text + "["
            for assignment in project.local_assignments(facts, fn.qualname):
                if (
                    assignment.target.startswith(prefix)
                    and assignment.order <= call.order
                    and _is_key_name(assignment.target[len(prefix) : -1], self.option, self.header)
                ):
                    self.candidates.append(assignment.value)


def _is_key_name(name: str, option: str | None, header: str | None) -> bool:
    return bool(
        KEY_HEADER_RE.match(name)
        or KEY_KWARG_RE.match(name)
        or (option and name == option)
        or (header and name.lower() == header.lower())
    )


def _classify_key(
    project: ProjectModel,
    value: Value,
    fn: Function,
    facts: ModuleFacts,
    before: int,
    depth: int = 0,
) -> KeyEvidence:
    location = Location(facts.path, value.span) if value.span else None
    if value.kind == "name" and depth < 3:
        if value.text in fn.params and value.text not in INJECTED_PARAMS:
            return KeyEvidence(value, "param", f"parameter `{value.text}`", value.text, location)
        local = _local_value(project, value.text, fn, facts, before)
        if local is not None:
            return _classify_key(project, local, fn, facts, before, depth + 1)
    text = value.text
    calls = [c.replace("()", "") for c in value.calls]
    if (
        "current_call" in text
        or any(c.endswith("current_call") for c in calls)
        or (
            "idempotency_key" in value.attrs
            and any(n in {"call", "ctx", "context", "tool_call"} for n in value.names)
        )
    ):
        return KeyEvidence(value, "runtime", "built by the runtime", None, location)
    fresh = [c for c in calls if FRESH_CALLS.match(c)]
    if fresh:
        return KeyEvidence(value, "fresh", f"`{fresh[0]}()` is new on every call", None, location)
    params_used = [n for n in value.names if n in fn.params and n not in INJECTED_PARAMS]
    if value.kind in {"attr", "fstring", "other", "call"} and params_used and not fresh:
        only_params = all(
            n in fn.params
            or n in {"json", "hashlib", "str", "repr", "sorted", "dict", "uuid", "hash"}
            for n in value.names
        )
        hashed = any(HASH_CALLS.match(c) for c in calls)
        scoped = any(SCOPE_NAMES.search(n) for n in value.names) or any(
            SCOPE_NAMES.search(a) for a in value.attrs
        )
        if hashed and only_params and not scoped:
            return KeyEvidence(value, "args_hash", "a hash of the arguments only", None, location)
        if (
            value.kind == "fstring"
            and only_params
            and not scoped
            and len(params_used) == len(set(value.names))
        ):
            return KeyEvidence(
                value,
                "param",
                f"made from parameter `{params_used[0]}`",
                params_used[0],
                location,
            )
    if any(HASH_CALLS.match(c) for c in calls) and not any(
        SCOPE_NAMES.search(n) for n in value.names + value.attrs
    ):
        if all(
            n in fn.params
            or n
            in {
                "json",
                "hashlib",
                "str",
                "repr",
                "sorted",
                "uuid",
                "hash",
                "args",
                "kwargs",
                "arguments",
                "payload",
                "params",
            }
            for n in value.names
        ):
            return KeyEvidence(value, "args_hash", "a hash of the arguments only", None, location)
    return KeyEvidence(value, "scoped", "", None, location)


def _map_key_through_call(
    project: ProjectModel,
    key: KeyEvidence | None,
    callee_fn: Function,
    call: Call,
    caller: Function,
    facts: ModuleFacts,
) -> KeyEvidence | None:
    """A key that is a helper's parameter takes the caller's argument's origin."""
    if key is None or key.origin != "param" or key.param is None:
        return key
    params = [p for p in callee_fn.params if p not in SELF_NAMES]
    argument: Value | None = call.kwargs.get(key.param)
    if argument is None and key.param in params:
        index = params.index(key.param)
        if index < len(call.args):
            argument = call.args[index]
    if argument is None:
        return KeyEvidence(key.value, "scoped", "", None, key.location)
    return _classify_key(project, argument, caller, facts, call.order)


def _map_url_through_call(
    project: ProjectModel,
    effect: Effect,
    callee_fn: Function,
    call: Call,
    caller: Function,
    facts: ModuleFacts,
) -> Effect | None:
    """A helper's POST whose URL is its parameter (``def _post(self, path, body)``) reads
    or writes as the caller's argument says (``self._post("/v1/search", ...)``)."""
    if effect.url_param is None or effect.reading not in {NEUTRAL, WEAK}:
        return effect
    argument = _argument_for(effect.url_param, callee_fn, call)
    if argument is None:
        return replace(effect, url_param=None)
    judgement = judge_mapped_url(project, argument, caller, facts, call)
    if judgement.verdict == READ:
        return None
    if judgement.verdict == MIXED:
        return replace(effect, reading=MIXED, url_param=None, confidence=Confidence.LOW)
    if judgement.verdict == NEUTRAL:
        return replace(effect, url_param=judgement.url_param)
    return replace(effect, reading="", url_param=None)


# A summary entry: where the sink call is (path, line, column).
SiteKey = tuple[str, int, int]
# Rounds of propagation at most: a cycle of ever-shorter chains ends here.
MAX_ROUNDS = 50


def _site_key(effect: Effect) -> SiteKey:
    return (effect.site.path, effect.site.span.line, effect.site.span.column)


class EffectSummaries:
    """Each function's effects, its own and those reached through the project functions it
    calls: worked out on demand, for the functions asked about and what they reach.

    Summaries propagate in rounds over the functions in sorted order, each visit seeing what
    earlier visits found, a function revisited only when a callee's summary changed. Asked
    for every function at once this is the fixpoint over the whole project; asked for some,
    only the functions they reach (a set closed under calls) are worked out. A summary
    depends on its callees' alone, so the visits to that set are those of the whole run in
    the same order, and its summaries are the whole run's. Its rounds are the whole run's
    too (a visit in round k of one is in round k of the other), so the cap of
    ``MAX_ROUNDS`` stops both at the same visit.

    A later question reaches new functions whose callees were worked out earlier. Seeing
    those callees' final summaries would not do: between two evidence chains of the same
    length the first found is kept, and in the whole run a caller may first have seen a
    callee's summary before its shorter chains arrived. So each function keeps the summary
    it had before each change, with the round of the change, and the new functions replay
    their part of the whole run: they read a callee as it stood at their visit, and are
    woken in the round the whole run would have woken them. Whatever is asked, in whatever
    order, every summary is the one the whole run would give.
    """

    def __init__(self, project: ProjectModel) -> None:
        # Held weakly: the project holds the summaries, and the cycle the two would make
        # outlives a dropped scan result once the engine has frozen the model.
        self._project_ref = weakref.ref(project)
        self._user_sinks = project.catalog.user_sinks
        # For the functions worked out (a set closed under calls), final:
        self._summaries: dict[str, dict[SiteKey, Effect]] = {}
        self._edges: dict[str, list[tuple[Call, str]]] = {}
        # qualname -> (round, the summary before that round's change), oldest first
        self._history: dict[str, list[tuple[int, dict[SiteKey, Effect]]]] = {}
        self._sorted: dict[str, list[Effect]] = {}

    @property
    def _project(self) -> ProjectModel:
        project = self._project_ref()
        if project is None:
            raise RuntimeError("effect summaries outlived their project")
        return project

    def of(self, qualname: str) -> list[Effect]:
        """The effects ``qualname`` has or reaches, by position in the source."""
        found = self._sorted.get(qualname)
        if found is None:
            if qualname not in self._project.functions:
                return []
            self.cover([qualname])
            found = self._sorted[qualname]
        return found

    def worked_out(self) -> frozenset[str]:
        """The functions whose summaries were worked out: those asked about and every
        function they reach."""
        return frozenset(self._summaries)

    def cover(self, qualnames: Iterable[str]) -> None:
        """Work out the summaries of ``qualnames`` and of every function they reach."""
        new = self._reach(qualnames)
        if new:
            self._propagate(sorted(new))
            for qualname in new:
                self._sorted[qualname] = sorted(
                    self._summaries[qualname].values(), key=lambda e: (e.site.path, e.site.span)
                )

    def _reach(self, qualnames: Iterable[str]) -> set[str]:
        """The functions reached from ``qualnames`` not worked out yet, their own effects and
        call edges found."""
        functions = self._project.functions
        new: set[str] = set()
        pending = [q for q in qualnames if q in functions and q not in self._summaries]
        while pending:
            qualname = pending.pop()
            if qualname in self._summaries:
                continue
            effects, edges = self._direct(qualname)
            self._summaries[qualname] = {_site_key(e): e for e in effects}
            self._edges[qualname] = edges
            new.add(qualname)
            pending.extend(target for _, target in edges if target not in self._summaries)
        return new

    def _direct(self, qualname: str) -> tuple[list[Effect], list[tuple[Call, str]]]:
        """The sink calls in ``qualname``, and its calls of other project functions."""
        project = self._project
        user_sinks = self._user_sinks
        fn, facts = project.functions[qualname]
        effects: list[Effect] = []
        edges: list[tuple[Call, str]] = []
        for call in project.calls_in(qualname):
            site = project.call_site(call, fn, facts)
            callee = site.callee
            if user_sinks and _find_sink(user_sinks, call, callee) is not None:
                # the user declared this call a sink: judge it here, do not look inside
                effect = _classify_sink(project, call, callee, fn, facts)
                if effect is not None:
                    effects.append(effect)
                continue
            target = site.target
            if target and target != qualname:
                edges.append((call, target))
                continue
            effect = _classify_sink(project, call, callee, fn, facts)
            if effect is not None:
                effects.append(effect)
        if not user_sinks:
            project._edges[qualname] = edges  # every call was followed: the call graph's edges
        return effects, edges

    def _propagate(self, order: list[str]) -> None:
        """The rounds of the whole run, for the functions in ``order`` (new, sorted); the
        functions they call outside it were worked out before."""
        history = self._history
        members = set(order)
        callers: dict[str, set[str]] = {}
        # round -> the functions a change of an earlier-worked callee wakes in that round:
        # the same round when the callee is visited first, the next one otherwise
        woken: dict[int, set[str]] = {}
        for qualname in order:
            for _, target in self._edges[qualname]:
                if target in members:
                    callers.setdefault(target, set()).add(qualname)
                else:
                    for changed, _ in history.get(target, ()):
                        wakes = changed if target < qualname else changed + 1
                        woken.setdefault(wakes, set()).add(qualname)
        last_woken = max(woken, default=0)
        dirty = set(order)
        rounds = 0
        while (dirty or rounds < last_woken) and rounds < MAX_ROUNDS:
            rounds += 1
            dirty.update(woken.get(rounds, ()))
            for qualname in order:
                if qualname not in dirty:
                    continue
                dirty.discard(qualname)
                if self._visit(qualname, rounds, members):
                    dirty.update(callers.get(qualname, ()))

    def _seen_by(
        self, target: str, qualname: str, rounds: int, members: set[str]
    ) -> dict[SiteKey, Effect]:
        """``target``'s summary as the whole run had it when it visited ``qualname``."""
        if target not in members:
            for changed, before in self._history.get(target, ()):
                if changed > rounds or (changed == rounds and target > qualname):
                    return before
        return self._summaries[target]

    def _visit(self, qualname: str, rounds: int, members: set[str]) -> bool:
        """One visit of ``qualname`` in round ``rounds``: whether its summary changed."""
        project = self._project
        fn, facts = project.functions[qualname]
        mine = self._summaries[qualname]
        before: dict[SiteKey, Effect] | None = None
        for call, target in self._edges[qualname]:
            reached = self._seen_by(target, qualname, rounds, members)
            if not reached:
                continue  # most callees have no effect to pass on
            target_fn = project.functions[target][0]
            for key, effect in list(reached.items()):
                if key in mine and len(mine[key].chain) <= len(effect.chain) + 1:
                    continue
                step = EvidenceStep(
                    f"{_shown(fn)} calls {_shown(target_fn, fn)}", Location(facts.path, call.span)
                )
                mapped = _map_method_through_call(project, effect, target_fn, call, fn, facts)
                if mapped is not None and mapped.method_param is None:
                    mapped = _map_url_through_call(project, mapped, target_fn, call, fn, facts)
                if mapped is None or open_world.is_plumbing(project, mapped, target_fn):
                    continue  # this caller's URL reads, or a local cache or token refreshed
                if before is None:
                    before = dict(mine)
                mine[key] = replace(
                    mapped,
                    chain=(step, *mapped.chain),
                    key=_map_key_through_call(project, effect.key, target_fn, call, fn, facts),
                )
        if before is None:
            return False
        self._history.setdefault(qualname, []).append((rounds, before))
        return True


def _shown(fn: Function, caller: Function | None = None) -> str:
    """A function as an evidence step names it: a method with its class (``create_order
    calls OrdersClient.create_order``, not ``create_order calls create_order``), except a
    method of the caller's own class (``OrdersClient.place calls _post``)."""
    if fn.class_name is None or (caller is not None and caller.class_name == fn.class_name):
        return fn.name
    return f"{fn.class_name.rsplit('.', 1)[-1]}.{fn.name}"


def infer_effects(project: ProjectModel) -> None:
    """Effect summaries for the project, worked out now for its tools' functions (and what
    they reach), later for any other function asked about; each tool's effects."""
    summaries = project._effects = EffectSummaries(project)
    summaries.cover(qualname for tool in project.tools for qualname in tool.functions)
    for tool in project.tools:
        seen: set[SiteKey] = set()
        gathered: list[Effect] = []
        for qualname in tool.functions:
            for effect in summaries.of(qualname):
                key = _site_key(effect)
                if read_by_name(project.catalog, effect, tool.name, tool.description):
                    if effect.kind == "network_write":
                        continue  # a POST the request does not judge, in a tool named to read
                    # SQL text no reader of the source can know: named to read is no evidence
                    effect = replace(effect, kind=open_world.UNKNOWN)
                if effect.kind == DEFERRED:
                    continue  # no caller chose the HTTP method
                if key not in seen:
                    seen.add(key)
                    gathered.append(effect)
        tool.effects = gathered
