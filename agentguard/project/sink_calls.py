"""Catalogue sink calls: what a call of a known sink does (HTTP method, SQL statement,
file mode), and how a helper's HTTP call reads once its caller names the method or URL."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentguard.diagnostics import Confidence, EvidenceStep, Location, StepKind
from agentguard.facts.module_facts import SPREAD, Call, Function, ModuleFacts, Value
from agentguard.facts.typescript.modules import NPM_SCHEME
from agentguard.knowledge.catalog import Catalog, Matcher, Sink
from agentguard.knowledge.words import words
from agentguard.project import open_world
from agentguard.project.create_guards import check_then_create
from agentguard.project.guessed_sinks import heuristic_sink
from agentguard.project.module_state import module_state_write
from agentguard.project.read_posts import (
    DELETES,
    DOCUMENT,
    GRAPHQL,
    MIXED,
    NEUTRAL,
    OPERATION,
    READ,
    SETS,
    WEAK,
    WRITE,
    PostJudgement,
    graphql_document,
    judge_mapped_document,
    judge_mapped_url,
    judge_post,
    judge_self_url,
    name_reads,
    name_sets,
    rpc_operation_judgement,
)
from agentguard.project.rpc_dispatch import RPC_DEFERRED, judge_channel, judge_rpc, map_operation
from agentguard.project.sink_keys import (
    appended_after_read,
    closed_over_param,
    fresh_identity,
    handed_in,
    key_for,
    local_value,
    substitute,
)
from agentguard.project.sql_sinks import (
    bound_to_db_handle,
    repeats_safely,
    sqlalchemy_statement,
    statement_start,
    statement_write_clause,
)
from agentguard.project.tool_facts import (
    SELF_NAMES,
    ArgSpec,
    Effect,
    KeyEvidence,
    argument_at,
    shown,
)
from agentguard.project.unit_of_work import committed_changes

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def _http_method(
    project: ProjectIndex, call: Call, sink: Sink, fn: Function, facts: ModuleFacts
) -> str | None:
    if sink.method:
        return sink.method
    spec = sink.method_from or {}
    if spec.get("request_data"):
        first = call.args[0] if call.args else None
        if first is not None and first.kind == "name":
            first = local_value(project, first.text, fn, facts, call.order) or first
        if first and first.kind == "call":
            method = first.call_kwargs.get("method")
            method_text = method.string() if method else None
            if method_text:
                return method_text.upper()
            if "data" in first.call_kwargs or len(first.call_args) > 1:
                return "POST"
        return "POST" if ("data" in call.kwargs or len(call.args) > 1) else "GET"
    value = argument_at(call.args, call.kwargs, ArgSpec(spec.get("arg"), spec.get("kwarg")))
    if spec.get("field"):
        return option_method(project, value, spec["field"], fn, facts, call.order)[0]
    if value is not None and value.kind == "name":
        value = local_value(project, value.text, fn, facts, call.order) or value
    if spec.get("route"):
        return _route_method(value)
    if value is not None and value.string():
        return value.string().upper()  # type: ignore[union-attr]
    return None


def _route_method(route: Value | None) -> str | None:
    """The method a route string starts with (Octokit's ``request("POST /repos/{owner}/{repo}
    /issues")``); a route naming none is a GET. None when the route is not written out."""
    if route is None:
        return None
    text = route.string()
    if text is None and route.kind == "fstring" and route.parts:
        text = route.parts[0].string()
    if text is None:
        return None
    first = text.strip().split(" ", 1)[0].upper()
    return first if first in _HTTP_METHODS and " " in text.strip() else "GET"


def option_method(
    project: ProjectIndex,
    options: Value | None,
    field_name: str,
    fn: Function,
    facts: ModuleFacts,
    before: int,
    depth: int = 0,
) -> tuple[str | None, str | None]:
    """The HTTP method an options object names in ``field_name`` (``fetch(url, {method:
    "POST"})``): ``(method, None)`` when written, or GET when the object (or the field) is
    absent, as the libraries default; ``(None, parameter)`` when a parameter of ``fn``
    supplies it (``{...init}``, ``{method: options.method}``, the object itself), written
    ``options.method`` for a field of one; ``(None, None)`` when no reader can know it."""
    if options is None or options.kind in {"const", "fstring"}:
        return "GET", None  # no options object (``axios(url)``: the last argument is the URL)
    if options.kind == "name":
        if options.text in fn.params and options.text not in SELF_NAMES:
            return None, f"{options.text}.{field_name}"
        options = local_value(project, options.text, fn, facts, before) or options
    if options.kind != "dict":
        return None, None
    item = options.items.get(field_name)
    if item is None:
        # a later spread wins over an earlier one: the first that says anything decides
        spreads = [v for k, v in options.items.items() if k.startswith(SPREAD)]
        for spread in reversed(spreads):
            if depth >= 2:
                return None, None
            found = option_method(project, spread, field_name, fn, facts, before, depth + 1)
            if found != ("GET", None):
                return found
        return "GET", None
    if item.kind == "name":
        if handed_in(project, item.text, fn, facts):
            return None, item.text
        written = item.text
        item = local_value(project, item.text, fn, facts, before) or item
        if written == field_name and item.kind == "name" and item.text != written:
            # ``const { method } = options``: the field of the object it is taken from
            if item.text in fn.params and item.text not in SELF_NAMES:
                return None, f"{item.text}.{field_name}"
    if item.op == "if" and item.parts:  # ``options.method ?? "GET"``: the caller's, if given
        given = Value("dict", "", items={field_name: item.parts[0]})
        found = option_method(project, given, field_name, fn, facts, before, depth + 1)
        if found[1] is not None:
            return found
        text = next((part.string() for part in item.parts if part.string()), None)
        return (text.upper(), None) if text else (None, None)
    if item.kind == "attr":
        holder, _, attribute = item.text.replace("?", "").partition(".")
        if holder in fn.params and holder not in SELF_NAMES and attribute.isidentifier():
            return None, f"{holder}.{attribute}"
    text = item.string()
    return (text.upper(), None) if text else (None, None)


def find_sink(matcher: Matcher[Sink], call: Call, callee: str) -> Sink | None:
    """A sink entry for the resolved callee, the import-resolved name, or the call as
    written (``orders_client.create`` in a user's catalogue)."""
    sink = matcher(callee)
    if sink is None and call.callee != callee:
        sink = matcher(call.callee)
    if sink is None and call.text != callee and call.text != call.callee:
        sink = matcher(call.text)
    return sink


def _written_with(call: Call, sink: Sink) -> bool:
    """Whether the call writes each keyword argument the sink needs with its value."""
    for name, wanted in sink.only_with.items():
        given = call.kwargs.get(name)
        if given is None or given.kind != "const" or given.const != wanted:
            return False
    return True


def classify_sink(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """What ``call`` does, or None when it has no side effect worth a fact; judged from the
    request too (``sink_keys``: a fresh identity, a read-modify-write append; and
    ``create_guards``: a check-then-create)."""
    effect = _classify_sink(project, call, callee, fn, facts)
    if effect is None:
        return None
    if effect.idempotent is True and effect.kind in {"network_write", "write"}:
        fresh = fresh_identity(project, call, fn, facts)
        if fresh is not None:
            why = f"names what it writes with `{fresh}()`, new on every call"
        elif (appended := appended_after_read(project, call, fn, facts)) is not None:
            why = f"writes back `{appended}` after appending to what it read"
        else:
            return effect
        effect = replace(
            effect,
            idempotent=False,
            chain=(*effect.chain, EvidenceStep(StepKind.REQUEST, effect.site, detail=why)),
        )
    if effect.non_idempotent and effect.key is None:
        guard = check_then_create(project, call, fn, facts)
        if guard is not None:
            effect = replace(effect, key=guard)
    return effect


def _classify_sink(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    kept = module_state_write(project, call, fn, facts)
    if kept is not None:
        return kept  # a container the module keeps across calls, changed
    committed = committed_changes(project, call, callee, fn, facts)
    if committed is not None:
        return committed  # rows loaded and changed in memory, written by the commit
    catalog = project.catalog
    sink = find_sink(
        catalog.sinks if facts.language == "python" else catalog.npm_sinks, call, callee
    )
    if sink is not None and sink.pattern.startswith("*") and catalog.reads.named(callee):
        # ``calendar.freebusy.query``, documented as a read of its library: a pattern for
        # every receiver (``*.query``, a SQL driver's) does not decide it
        sink = None
    channel = judge_channel(project, call, fn, facts, sink)
    if not isinstance(channel, bool):
        return channel  # a command sent over a channel, judged by its operation
    if sink is not None and not _written_with(call, sink):
        return None  # ``NamedTemporaryFile()``: removed when closed, nothing left behind
    if sink is not None and (sink.method_from or {}).get("tagged"):
        if not (call.args and call.args[0].op == "tag"):
            return None  # ``neon(url)``: the client is made; sql`...` runs a statement
    if sink is not None and sink.effect == "write" and open_world.claims_a_lease(project, call):
        return None  # ``redis.set(k, v, nx=True, ex=60)``: a lease that frees itself
    if sink is not None:
        kind, idempotent, method = sink.effect, sink.idempotent, None
        unknown_statement = False  # SQL whose statement the caller supplies
        statement_from: str | None = None  # the parameter it comes from, if one
        confidence = Confidence(sink.confidence)
        remote = sink.remote if sink.remote is not None else True
        if kind == "sql" and call.args:
            if graphql_document(project, call.args[0], fn, facts, call.order) is not None:
                kind = "graphql"  # ``session.execute(gql("query { ... }"))``: not SQL
        if kind in {"http"}:
            method = _http_method(project, call, sink, fn, facts)
            method_param = _method_param(project, call, sink, fn, facts) if method is None else None
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
                elif method is None and (sink.method_from or {}).get("field"):
                    # an options object whose method no reader can know (``fetch(url,
                    # {...init})``, ``init`` built by a call; an absent one is a GET): an
                    # unknown effect, never a read
                    kind, idempotent, confidence = open_world.UNKNOWN, None, Confidence.LOW
                else:
                    return None
            elif method in {"PUT"}:
                kind, idempotent = "network_write", True
            elif method == "DELETE":
                kind, idempotent = "destructive", True
            else:
                kind, idempotent = "network_write", False
        elif kind == "destructive" and open_world.removes_its_temporary(project, call, fn, facts):
            return None  # the temporary file the function made, removed: its clean-up
        elif kind == "network_write" or kind in {"payment", "message", "destructive"}:
            method = sink.method
        elif kind == "sql":
            # the statement: first, or by the keyword the sink names (``query_=`` in Neo4j)
            named = ArgSpec(0, (sink.method_from or {}).get("kwarg") or "sql")
            statement = argument_at(call.args, call.kwargs, named)
            if statement is None:
                return _open_world(project, call, callee, fn, facts)  # ``request.execute()``
            statement_param = _statement_param(project, statement, fn, facts, call.order)
            if statement.kind == "name":
                statement = local_value(project, statement.text, fn, facts, call.order) or statement
            if statement.kind == "dict" and not {"text", "sql", "query"} & set(statement.items):
                # ``calendar.freebusy.query({requestBody: ...})``: an options object with no
                # statement in it (node-postgres takes ``{text, values}``) is no SQL call
                return _open_world(project, call, callee, fn, facts)
            text = statement.string()
            if text is None and sink.ecosystem == "npm" and statement.kind == "fstring":
                # a tagged template (``sql`DELETE FROM t WHERE id = ${id}```): its values
                # are bound as parameters, so the literal text is the statement
                text = _template_text(statement)
            receiver = (call.receiver or "").lower()
            # an npm driver's client is known by its type, whatever the receiver's name
            if (
                sink.ecosystem != "npm"
                and not project.catalog.db_handle_receivers.search(receiver)
                and not bound_to_db_handle(project, call.receiver or "", fn, facts, call.order)
            ):
                return _open_world(project, call, callee, fn, facts)
            start = statement_start(statement) if text is None else None
            if start is not None and project.catalog.sql_read.match(start):
                return None  # ``"EXPLAIN " + query``: whatever follows, it only reads
            if (
                start is not None
                and statement.kind == "fstring"
                and project.catalog.sql_write.match(start)
            ):
                # ``f"UPDATE tasks SET done = true WHERE id = {task_id}"``: the written words
                # say what the statement does, the values put in are values
                text = _template_text(statement)
            if text is not None and _column_added_when_missing(text, call, fn):
                return None  # the fixed schema's migration, set up on first use
            if text is not None:
                judged_sql = sql_text_effect(project.catalog, text)
                if judged_sql is None:
                    return None
                idempotent, method = judged_sql
                kind = "write"
            elif (verb := sqlalchemy_statement(project.catalog, statement)) is not None:
                if verb == "select":
                    return None
                kind = "write"
                idempotent = verb != "insert"
                method = verb.upper()
            else:
                kind, idempotent, confidence = "write", None, Confidence.LOW
                unknown_statement = True
                statement_from = statement_param
            # A statement writes the application's own database, an embedded file or a
            # server it runs: a write judged where the tool runs (Q1), with no service
            # downstream that takes an idempotency key (a unique constraint is the guard).
            remote = sink.remote if sink.remote is not None else False
        elif kind == "file_open":
            if open_world.opens_a_discard_file(project, call):
                return None  # ``open(os.devnull, "w")``: nothing is kept
            mode_text = open_world.file_mode(project, call, sink, fn, facts)
            if mode_text is None:  # a mode no reader of the source can know: maybe a write
                kind, idempotent, remote, confidence = "write", None, False, Confidence.LOW
            elif not any(ch in mode_text for ch in "wax+"):
                return None
            else:
                kind, idempotent, remote = "write", "a" not in mode_text, False
        elif kind == "graphql":
            judged = _graphql_effect(project, call, sink, fn, facts)
            if judged is None:
                return None  # a literal query reads
            kind, idempotent, unknown_statement = judged
            method = GRAPHQL
            if unknown_statement:
                confidence = Confidence.LOW
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
            return replace(effect, reading=NEUTRAL, statement_param=statement_from)
        if method == "PATCH" and name_sets(project.catalog, fn.name):
            return _idempotent_patch(effect, fn.name)
        if kind == "exec" and call.args:
            if open_world.command_reads(project, call.args[0], fn, facts, call.order):
                return None  # ``kubectl describe ...``: a literal read-only command
            # ``def _run(args): subprocess.run(args, ...)``: each caller's command judges it
            command_from = _statement_param(project, call.args[0], fn, facts, call.order)
            head, starred = _command_extended(call.args[0], fn)
            effect = replace(effect, statement_param=command_from or starred, command_head=head)
        return None if open_world.is_plumbing(project, effect, fn) else effect
    rpc = judge_rpc(project, call, callee, fn, facts)
    if not isinstance(rpc, bool):
        return rpc
    if open_world.saved_into_memory(project, call, fn, facts):
        return None
    saved = open_world.saved_to_file(project, call, fn, facts)
    if saved is not None:
        return None if open_world.is_plumbing(project, saved, fn) else saved
    method = _literal_request_method(project, call)
    if method is not None:
        return _requested(project, call, method, fn, facts)
    if project.catalog.reads(callee) or project.catalog.reads(call.callee):
        return None  # ``cl.Message(...).send()``: the catalogue says it changes nothing
    guessed = open_world.judge_built(
        project, call, fn, facts, lambda sink: key_for(project, call, sink, fn, facts)
    ) or heuristic_sink(project, call, callee, fn, facts)
    if guessed is not None and call.method in {"post", "apost"}:
        return _judged_post(project, guessed, fn, facts)  # client.post(...) on an unknown client
    return guessed if guessed is not None else _open_world(project, call, callee, fn, facts)


_HTTP_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
# What spells a method again in another case: ``method.upper()``, ``verb.toUpperCase()``.
_CASE_CHANGES = frozenset(
    ("attr", name) for name in ("upper", "lower", "strip", "toUpperCase", "toLowerCase", "trim")
)


def _literal_request_method(project: ProjectIndex, call: Call) -> str | None:
    """``client._request("POST", "/api/v1/billing", json=body)``: a client's generic request
    method (named only with HTTP words, ``request`` among them) given a literal HTTP method,
    first or as ``method=``; None for any other call."""
    if call.method.lstrip("_")[:1].isupper():
        return None  # ``urllib.request.Request(url, method="POST")``: built, sent later
    named = words(call.method, identifier=True)
    if "request" not in named or not set(named) <= project.catalog.http_helper_words:
        return None
    given = call.kwargs.get("method") or (call.args[0] if call.args else None)
    text = (given.string() or "").upper() if given is not None else ""
    return text if text in _HTTP_METHODS else None


def _requested(
    project: ProjectIndex, call: Call, method: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """What a generic request call with a literal method does: GET, HEAD and OPTIONS read,
    PUT and DELETE repeat safely, PATCH does not, and a POST is judged by its URL and body
    as any POST is (``judge_post``)."""
    if method in {"GET", "HEAD", "OPTIONS"}:
        return None
    kind, idempotent = {
        "PUT": ("network_write", True),
        "DELETE": ("destructive", True),
    }.get(method, ("network_write", False))
    sink = Sink(effect=kind, idempotent=idempotent, key={"header": "Idempotency-Key"})
    effect = replace(
        Effect.judged(
            call,
            fn.qualname,
            facts.path,
            kind=kind,
            idempotent=idempotent,
            remote=True,
            detail=f"an HTTP {method}",
            confidence=Confidence.MEDIUM,
            key=key_for(project, call, sink, fn, facts),
        ),
        method=method,
    )
    return _judged_post(project, effect, fn, facts) if method == "POST" else effect


# ``ALTER TABLE tasks ADD [COLUMN] due_date ...``: SQL syntax, not a word list.
_ADD_COLUMN = re.compile(
    r"(?is)^\s*alter\s+table\s+\S+\s+add\s+(column\s+)?(?P<guard>if\s+not\s+exists\b)?"
)


def _column_added_when_missing(text: str, call: Call, fn: Function) -> bool:
    """A literal ``ALTER TABLE t ADD COLUMN c`` written ``IF NOT EXISTS``, or run only when
    a test finds the column missing (``if "c" not in columns:``, the idiom of SQLite, which
    has no ``ADD COLUMN IF NOT EXISTS``): the application's fixed schema brought up to date
    on first use, as ``CREATE TABLE IF NOT EXISTS`` makes it; no effect of the call."""
    added = _ADD_COLUMN.match(text)
    if added is None:
        return False
    if added.group("guard"):
        return True
    return any(
        branch.test.op == "not in" and branch.span.encloses(call.span) for branch in fn.branches
    )


def _template_text(statement: Value) -> str:
    """A statement written as a template, each value put in standing as a parameter."""
    return statement.template_text(lambda _: "$1")


def sql_text_effect(catalog: Catalog, text: str) -> tuple[bool, str] | None:
    """What a literal SQL statement does: None when it reads (or is no statement a write
    verb starts); else whether it repeats safely and its verb. ``UPDATE t SET n = n + 1``
    repeats its increment; ``INSERT`` (or a Cypher ``CREATE`` clause) adds a row each time
    unless it says what a conflict does. A ``CREATE TABLE IF NOT EXISTS`` sets up the
    schema: no effect of the call."""
    # a statement that starts with neither verb writes by its clause (Cypher ``MATCH ... SET``)
    clause = statement_write_clause(catalog, text)
    if catalog.sql_read.match(text) or (not catalog.sql_write.match(text) and clause is None):
        return None
    if catalog.sql_setup.match(text):
        return None  # ``CREATE TABLE IF NOT EXISTS``: the schema, set up on first use
    return repeats_safely(catalog, text, clause), (clause or text.split(None, 1)[0]).upper()


def _statement_param(
    project: ProjectIndex, statement: Value, fn: Function, facts: ModuleFacts, before: int
) -> str | None:
    """The parameter of ``fn`` a SQL statement comes from: the parameter itself, or a local
    bound to a call handed it (``clean = self._validate(query, "SELECT")``)."""
    if statement.kind != "name":
        return None
    if statement.text in fn.params and statement.text not in SELF_NAMES:
        return statement.text
    bound = local_value(project, statement.text, fn, facts, before)
    if bound is None or bound.kind != "call":
        return None
    root = bound.chain.root if bound.chain is not None else ""
    if root in fn.params and root not in SELF_NAMES:
        # ``prepared = query.replace(/\?/g, ...)``: the parameter's own text, rewritten
        return root
    handed = [a.text for a in (*bound.call_args, *bound.call_kwargs.values()) if a.kind == "name"]
    params = [name for name in handed if name in fn.params and name not in SELF_NAMES]
    return params[0] if len(params) == 1 else None


def _command_extended(command: Value, fn: Function) -> tuple[str | None, str | None]:
    """A command list of literal words extended with a parameter of ``fn`` that collects
    the caller's arguments (``["git", *args]`` in ``def _git(repo, *args)``): its literal
    words and that parameter; (None, None) for any other command."""
    if command.kind != "list" or len(command.elements) < 2:
        return None, None
    *written, last = command.elements
    starred = last.text[1:] if last.kind == "other" and last.text.startswith("*") else ""
    head = [text for element in written if (text := element.string())]
    if starred not in fn.params or starred in SELF_NAMES or len(head) != len(written):
        return None, None
    return " ".join(head), starred


def _extended_by_caller(
    effect: Effect, callee_fn: Function, call: Call, caller: Function
) -> tuple[str | None, str | None]:
    """For a helper whose command its collecting parameter extends (``command_head``):
    the start of the command this caller's arguments make (``git log``), or the caller's
    own collecting parameter when it hands that on (``_git(repo, *args)``)."""
    params = [name for name in callee_fn.params if name not in SELF_NAMES]
    param = effect.statement_param or ""
    if param not in params:
        return None, None
    handed = call.args[params.index(param) :]
    if len(handed) == 1 and handed[0].kind == "other" and handed[0].text.startswith("*"):
        passed_on = handed[0].text[1:]
        return None, (passed_on if passed_on in caller.params else None)
    # the literal words the caller starts its arguments with (``"issue", "create", title``)
    leading: list[str] = []
    for argument in handed[:3]:
        word = argument.string()
        if not word:
            break
        leading.append(word)
    return (" ".join([effect.command_head or "", *leading]) if leading else None), None


def map_statement_through_call(
    project: ProjectIndex,
    effect: Effect,
    callee_fn: Function,
    call: Call,
    caller: Function,
    facts: ModuleFacts,
) -> Effect | None:
    """A helper's SQL whose statement is its parameter takes the caller's argument: a
    literal ``SELECT`` (or an f-string starting so) reads, a literal write is judged by its
    verb, a parameter of the caller is judged by that caller's callers; anything else stays
    a statement nobody can read. A helper that starts a process with the command it is
    handed is judged the same way: a caller's literal read-only command
    (``_run(["systemctl", "is-active", name])``) starts no effect."""
    if effect.statement_param is None:
        return effect
    if effect.kind == "exec" and effect.command_head is not None:
        command, passed_on = _extended_by_caller(effect, callee_fn, call, caller)
        if passed_on is not None:
            return replace(effect, statement_param=passed_on)
        if command is not None and open_world.command_text_reads(project, command):
            return None  # this caller's command only reads
        return replace(effect, statement_param=None, command_head=None)
    substitution = substitute(
        project, effect.statement_param, callee_fn, call, caller, self_passed_on=False
    )
    if effect.kind == "exec":
        if substitution.passed_on is not None:
            return replace(effect, statement_param=substitution.passed_on)
        handed = substitution.argument
        if handed is not None and open_world.command_reads(
            project, handed, caller, facts, call.order
        ):
            return None  # this caller's command only reads
        return replace(effect, statement_param=None)
    if substitution.passed_on is not None:
        if refuses_all_but_reads(project, caller, substitution.passed_on):
            return None  # ``if not query.lower().startswith("select"): raise ...``
        return replace(effect, statement_param=substitution.passed_on)
    argument = substitution.argument
    if argument is not None and argument.kind == "name":
        argument = local_value(project, argument.text, caller, facts, call.order) or argument
    text = _statement_start(argument) if argument is not None else None
    if text is None or not (
        project.catalog.sql_read.match(text) or project.catalog.sql_write.match(text)
    ):
        return replace(effect, statement_param=None)
    judged = sql_text_effect(project.catalog, text)
    if judged is None:
        return None  # this caller's statement reads
    idempotent, method = judged
    return replace(
        effect,
        kind="write",
        idempotent=idempotent,
        method=method,
        reading="",
        statement_param=None,
        confidence=Confidence.MEDIUM,
    )


# Checks of a statement's first word: Python's ``startswith``, JavaScript's ``startsWith``.
_PREFIX_CHECKS = frozenset({"startswith", "startsWith"})


def refuses_all_but_reads(project: ProjectIndex, fn: Function, param: str) -> bool:
    """Whether ``fn`` leaves (raises or returns) unless its statement parameter ``param``
    starts with a reading word (``if not query.strip().upper().startswith("SELECT"):
    raise ValueError(...)``): the statement it passes on only reads."""
    for branch in fn.branches:
        test = branch.test
        if not branch.exits or test.op != "not" or not test.parts:
            continue
        checked = test.parts[0]
        chain = checked.chain
        if checked.kind != "call" or chain is None or chain.root != param:
            continue
        if chain.called() not in _PREFIX_CHECKS or not checked.call_args:
            continue
        prefix = checked.call_args[0].string()
        if prefix and project.catalog.sql_read.match(prefix):
            return True
    return False


def _statement_start(value: Value) -> str | None:
    """A statement's literal text, or the literal start of an f-string (``f"SELECT * FROM
    {table}"`` starts ``SELECT * FROM``)."""
    text = value.string()
    if text is not None or value.kind != "fstring":
        return text
    # the f-string's text up to its first placeholder (its text may be cut short)
    opened = _FSTRING_START.match(value.text)
    return opened.group(1) if opened else None


_FSTRING_START = re.compile(r"""(?s)^[rR]?[fF][rR]?(?:"{3}|'{3}|"|')([^{]*)""")


def _graphql_effect(
    project: ProjectIndex, call: Call, sink: Sink, fn: Function, facts: ModuleFacts
) -> tuple[str, bool | None, bool] | None:
    """What executing a GraphQL document does: None for a literal ``query``; for a literal
    ``mutation``, the write its first field's verb names (``productCreate`` creates,
    ``productUpdate`` sets, ``productDelete`` deletes, none: a write of unknown
    idempotency); for a document no reader can know, a write whose idempotency is unknown
    (kind, idempotent, whether the document is unknown)."""
    spec = sink.method_from or {}
    document = argument_at(call.args, call.kwargs, ArgSpec(spec.get("arg", 0), spec.get("kwarg")))
    judged = graphql_document(project, document, fn, facts, call.order)
    if judged is None:
        return "network_write", None, True
    operation, text = judged
    if operation != "mutation":
        return None
    kind, idempotent = open_world.mutation_effect(project, text)
    return kind, idempotent, False


def _open_world(
    project: ProjectIndex, call: Call, callee: str, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """A call the catalogue does not know, judged by its verb (project/open_world.py). The
    terminal call of a builder chain (``api.payments().create(..., idempotency_key=k)
    .execute()``) sends the request the chain built: a key passed to that request counts."""
    request = project.chained_request(call)

    def keyed(sink: Sink) -> KeyEvidence | None:
        found = key_for(project, call, sink, fn, facts)
        if found is None and request is not None:
            found = key_for(project, request, sink, fn, facts)
        return found

    return open_world.judge(project, call, callee, fn, facts, keyed)


def _judged_post(
    project: ProjectIndex, effect: Effect, fn: Function, facts: ModuleFacts
) -> Effect | None:
    """An HTTP POST as its request reads: no effect when it only asks a question (search,
    embeddings, a model call, a GraphQL query), low confidence on mixed evidence."""
    judgement = judge_post(project, effect.call, fn, facts)
    if judgement.verdict in {READ, SETS, DELETES}:
        return _settled_post(effect, judgement)
    if judgement.verdict in {OPERATION, DOCUMENT}:
        return replace(effect, reading=judgement.verdict, url_param=judgement.url_param)
    if judgement.verdict in {MIXED, WEAK}:
        why = "reads and writes" if judgement.verdict == MIXED else "looks like a search"
        return replace(
            effect,
            confidence=Confidence.LOW,
            reading=judgement.verdict,
            url_param=judgement.url_param,
            url_self=judgement.self_url,
            chain=(
                *effect.chain,
                EvidenceStep(
                    StepKind.REQUEST,
                    effect.site,
                    detail=f"{why} ({judgement.reason or 'URL and body'})",
                ),
            ),
        )
    if judgement.verdict == NEUTRAL:
        return replace(
            effect, reading=NEUTRAL, url_param=judgement.url_param, url_self=judgement.self_url
        )
    return effect


# An HTTP call whose method a caller chooses: no effect until a caller passes one.
DEFERRED = open_world.HTTP_DEFERRED


def _method_param(
    project: ProjectIndex, call: Call, sink: Sink, fn: Function, facts: ModuleFacts
) -> str | None:
    """The parameter of ``fn`` passed as the HTTP method (``httpx.request(method, url)``),
    or whose field is (``fetch(url, {...init})`` passes ``init.method``)."""
    spec = sink.method_from or {}
    if spec.get("request_data"):
        return None
    value = argument_at(call.args, call.kwargs, ArgSpec(spec.get("arg"), spec.get("kwarg")))
    if spec.get("field"):
        return option_method(project, value, spec["field"], fn, facts, call.order)[1]
    if value is not None and value.kind == "name" and handed_in(project, value.text, fn, facts):
        return value.text
    return None


# What a helper's HTTP call does once its caller names the method (POST is judged by URL).
_METHOD_EFFECTS: dict[str, tuple[str, bool]] = {
    "PUT": ("network_write", True),
    "DELETE": ("destructive", True),
    "PATCH": ("network_write", False),
}


# How much each HTTP method may change, to judge a call by the worst it may send.
_METHOD_RANK = {"PUT": 1, "PATCH": 2, "POST": 3, "DELETE": 4}
_HTTP_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})


def _method_choices(
    project: ProjectIndex,
    argument: Value,
    caller: Function,
    facts: ModuleFacts,
    before: int,
    depth: int,
) -> set[str] | None:
    """The HTTP methods an argument may hold: a string or a constant's, either side of a
    conditional, what a local was last bound to, an enum member named for one
    (``HTTPMethod.DELETE``); None when the scan cannot tell."""
    written = project.constant_string(argument)
    if written is not None:
        return {written.upper()}
    if argument.op == "if" and argument.parts and depth < 4:
        found: set[str] = set()
        for part in argument.parts:
            held = _method_choices(project, part, caller, facts, before, depth + 1)
            if held is None:
                return None
            found |= held
        return found
    if argument.kind == "name" and depth < 4:
        bound = local_value(project, argument.text, caller, facts, before)
        if bound is not None:
            return _method_choices(project, bound, caller, facts, before, depth + 1)
    if argument.kind == "attr":
        member = argument.text.rsplit(".", 1)[-1].upper()
        if member in _HTTP_METHODS:
            return {member}
    chain = argument.chain
    if (
        argument.kind == "call"
        and chain is not None
        and len(chain.steps) == 2
        and chain.steps[0] in _CASE_CHANGES
        and depth < 4
    ):
        # ``method.upper()``: the method it spells
        spelled = Value(kind="name", text=chain.root, qualname=chain.root)
        return _method_choices(project, spelled, caller, facts, before, depth + 1)
    return None


def map_method_through_call(
    project: ProjectIndex,
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
    param, _, field_name = effect.method_param.partition(".")
    if closed_over_param(project, param, callee_fn, facts) == caller.qualname:
        # a closure run by the function whose parameter it uses: that function's callers
        # choose, as for its own call
        return effect
    substitution = substitute(project, param, callee_fn, call, caller, self_passed_on=True)
    if substitution.passed_on is not None:
        # the caller's own parameter, an HTTP method or an RPC operation: its callers choose
        passed_on = substitution.passed_on
        return replace(
            effect, method_param=f"{passed_on}.{field_name}" if field_name else passed_on
        )
    if effect.kind == RPC_DEFERRED:
        return map_operation(project, effect, substitution.argument, caller, facts, call)
    argument = substitution.argument
    if field_name:
        # a field of the options the caller hands (``api(path, {method: "POST"})``)
        written, forwarded = option_method(project, argument, field_name, caller, facts, call.order)
        if forwarded is not None:
            return replace(effect, method_param=forwarded)
        method = written or ""
    elif argument is None:
        return None
    else:
        choices = _method_choices(project, argument, caller, facts, call.order, 0)
        if choices is None:
            # ``makeRequest(request.method, ...)``: a method the scan cannot tell is unknown,
            # never a read
            return replace(
                effect,
                kind=open_world.UNKNOWN,
                idempotent=None,
                method_param=None,
                confidence=Confidence.LOW,
            )
        # ``const method = follow ? "PUT" : "DELETE"``: the worst the call may send
        method = max(choices, key=lambda m: _METHOD_RANK.get(m, 0))
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
    if effect.reading != MIXED and name_sets(project.catalog, caller.name):
        # ``update_task`` POSTing the task's fields: an update, as its name says
        return _idempotent_patch(replace(posted, reading=""), caller.name)
    if effect.reading == MIXED:
        return replace(posted, confidence=Confidence.LOW)
    if effect.reading == WRITE:
        return replace(posted, reading="")
    if effect.reading == SETS:
        return replace(posted, idempotent=True, url_param=None)
    if (
        effect.reading == NEUTRAL
        and facts.language != "python"
        and name_reads(project.catalog, caller.name) is False
    ):
        # ``bookAppointment`` handing ``{method: "POST"}`` to ``fetchFromApi``: the caller that
        # chose the POST names what it does, not the helper's HTTP words
        return replace(posted, reading="")
    return posted


def _repeat_safe_post(effect: Effect, reason: str) -> Effect:
    """A POST that sets a state or links existing things: a write that repeats safely."""
    return replace(
        effect,
        idempotent=True,
        reading=SETS,
        url_param=None,
        chain=(*effect.chain, EvidenceStep(StepKind.REQUEST, effect.site, detail=reason)),
    )


def _settled_post(effect: Effect, judgement: PostJudgement) -> Effect | None:
    """A POST its request settles: a read (no effect), a repeat-safe write, or a deletion."""
    if judgement.verdict == READ:
        return None
    if judgement.verdict == SETS:
        return _repeat_safe_post(effect, judgement.reason)
    return _deleting_post(effect, judgement.reason)


def _deleting_post(effect: Effect, reason: str) -> Effect:
    """A POST whose request names a deletion: destructive, and a repeat deletes nothing more."""
    return replace(
        effect,
        kind="destructive",
        idempotent=True,
        reading="",
        url_param=None,
        chain=(*effect.chain, EvidenceStep(StepKind.REQUEST, effect.site, detail=reason)),
    )


def _mapped_document(
    project: ProjectIndex,
    effect: Effect,
    argument: Value,
    caller: Function,
    facts: ModuleFacts,
    call: Call,
) -> Effect | None:
    """A GraphQL helper's POST whose document is its parameter, as the caller's document
    says (``self.client.execute_query(CREATE_ISSUE, variables)``): a query reads, a mutation
    does what its first field names; a document no reader can know is not judged."""
    judgement = judge_mapped_document(project, argument, caller, facts, call)
    if judgement.verdict == DOCUMENT:
        return replace(effect, url_param=judgement.url_param)
    if judgement.verdict in {READ, SETS, DELETES}:
        return _settled_post(effect, judgement)
    step = EvidenceStep(StepKind.REQUEST, effect.site, detail=judgement.reason or "a document")
    if judgement.verdict == WRITE:
        return replace(effect, reading="", url_param=None, chain=(*effect.chain, step))
    return _unjudged_post(effect, step)


def _unjudged_post(effect: Effect, step: EvidenceStep) -> Effect:
    """A helper's POST whose request its caller's argument does not tell: never read, never
    a create, an effect not judged."""
    return replace(
        effect,
        kind=open_world.UNKNOWN,
        idempotent=None,
        reading="",
        url_param=None,
        chain=(*effect.chain, step),
    )


def _mapped_operation(project: ProjectIndex, effect: Effect, argument: Value) -> Effect | None:
    """A helper's RPC POST whose operation is its parameter, as the caller's argument names it
    (``self.rpc("deleteNotes", ...)``); an operation no verb names, or not written as a
    string, leaves the POST to the names around it."""
    operation = argument.string()
    judgement = rpc_operation_judgement(project.catalog, operation) if operation else None
    if judgement is None:
        # An operation no verb names: an effect not judged (never read, never a create).
        detail = f"names the RPC operation `{operation}`" if operation else "an RPC operation"
        return _unjudged_post(effect, EvidenceStep(StepKind.REQUEST, effect.site, detail=detail))
    if judgement.verdict in {READ, SETS, DELETES}:
        return _settled_post(effect, judgement)
    return replace(
        effect,
        reading="",
        url_param=None,
        chain=(*effect.chain, EvidenceStep(StepKind.REQUEST, effect.site, detail=judgement.reason)),
    )


def _idempotent_patch(effect: Effect, name: str) -> Effect:
    """A PATCH (or a POST) is idempotent when it sets fields (``update_object``); the name is
    the only evidence, so the judgement is at most medium confidence."""
    step = EvidenceStep(StepKind.PATCH, effect.site, caller=name, detail=effect.method or "PATCH")
    return replace(
        effect,
        idempotent=True,
        confidence=min(effect.confidence, Confidence.MEDIUM, key=lambda c: c.rank),
        chain=(*effect.chain, step),
    )


def _sink_effect(
    project: ProjectIndex,
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
        chain=(EvidenceStep(StepKind.SINK, site, callee=shown),),
        key=key_for(project, call, sink, fn, facts),
        function=fn.qualname,
        **judgement,
    )


def _display_sink(project: ProjectIndex, callee: str, call: Call) -> str:
    if callee.startswith(("self.", "cls.")) or "." not in callee:
        return call.text
    if callee.startswith(NPM_SCHEME):
        # ``db.from("orders").update`` says more than the package's path to the method
        written = shown(call)
        return written if written == call.text else callee[len(NPM_SCHEME) :].replace("()", "")
    return callee.replace("()", "")


def map_url_through_call(
    project: ProjectIndex,
    effect: Effect,
    callee_fn: Function,
    call: Call,
    caller: Function,
    facts: ModuleFacts,
) -> Effect | None:
    """A helper's POST whose URL is its parameter (``def _post(self, path, body)``) reads
    or writes as the caller's argument says (``self._post("/v1/search", ...)``); one whose
    URL names attributes of ``self`` as the caller's class sets them."""
    if effect.url_self is not None and effect.reading in {NEUTRAL, WEAK}:
        by_class = judge_self_url(project, effect.url_self, caller, facts)
        if by_class is not None:
            if by_class.verdict == READ:
                return None
            if by_class.verdict == SETS:
                return _repeat_safe_post(effect, by_class.reason)
            if by_class.verdict == MIXED:
                return replace(effect, reading=MIXED, url_self=None, confidence=Confidence.LOW)
            return replace(effect, reading="", url_self=None)  # the URL names a write
    if effect.url_param is None or effect.reading not in {NEUTRAL, WEAK, OPERATION, DOCUMENT}:
        return effect
    # the URL's own parameters are found inside it by the judgement (an f-string's too)
    argument = substitute(
        project, effect.url_param, callee_fn, call, caller, self_passed_on=False
    ).argument
    if argument is None:
        return replace(effect, url_param=None)
    if effect.reading == OPERATION:
        return _mapped_operation(project, effect, argument)
    if effect.reading == DOCUMENT:
        return _mapped_document(project, effect, argument, caller, facts, call)
    judgement = judge_mapped_url(project, argument, caller, facts, call)
    if judgement.verdict == READ:
        return None
    if judgement.verdict == SETS:
        return _repeat_safe_post(effect, judgement.reason)
    if judgement.verdict == MIXED:
        return replace(effect, reading=MIXED, url_param=None, confidence=Confidence.LOW)
    if name_sets(project.catalog, caller.name):
        # ``update_task`` POSTing to the task's own URL: an update, as its name says
        return _idempotent_patch(replace(effect, reading="", url_param=None), caller.name)
    if judgement.verdict == NEUTRAL:
        return replace(effect, url_param=judgement.url_param)
    return replace(effect, reading="", url_param=None)
