"""POSTs that only read: the effect layer's one judgement on whether an HTTP POST asks a
question (search, query, embeddings, a model call, a GraphQL query) or changes something.

HTTP POST is a write unless the request says otherwise. The evidence, from the catalogue's
``read_posts`` section (rules/effects.yaml):

* the URL path: each segment counts by its first known word (of its last dotted part that
  has one): ``_delete_by_query`` deletes, ``chat.postMessage`` posts, ``points/search`` searches;
  the last segment that says anything decides, an earlier one saying the opposite makes
  the evidence mixed;
* the host (search and model APIs answer questions);
* the JSON body: a GraphQL ``query`` or ``mutation``, a model-shaped body (``model`` with
  ``messages``/``prompt``), search keys (``query``, ``q``: weak evidence);
* where all of that is silent, the names of the tool and of the function making the call.

URLs are followed through local and module constants, f-strings and concatenations, and
through a helper's parameter to the caller's argument (``self._post("/search", ...)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Call, Function, ModuleFacts, Value
from agentguard.knowledge.words import words
from agentguard.project.tool_facts import SELF_NAMES, Effect

if TYPE_CHECKING:
    from agentguard.knowledge.catalog import Catalog
    from agentguard.project.index import ProjectIndex

# Verdicts, strongest first. ``read``: the POST asks a question (no effect). ``mixed``: read
# and write evidence both (kept, low confidence). ``weak``: only a search-shaped body (kept,
# low confidence, dropped when the tool's name reads). ``neutral``: no evidence (the tool's
# name decides). ``write``: the request says it writes.
READ, MIXED, WEAK, NEUTRAL, WRITE = "read", "mixed", "weak", "neutral", "write"
# ``operation``: an RPC envelope whose operation is a parameter of the function posting it
# (``{"action": action, "params": params}``): each caller's argument decides, by the verb table.
OPERATION = "operation"
# ``document``: a GraphQL request whose document is a parameter of the function posting it
# (``{"query": query, "variables": variables}``): each caller's document decides.
DOCUMENT = "document"
# ``sets``: the POST writes but repeats safely (it sets a state on an existing resource, links
# existing things to it, or adds an id to a set-valued field such as ``/cards/{id}/idLabels``):
# an idempotent write.
SETS = "sets"
# ``deletes``: the request names a deletion (an RPC operation ``deleteNotes``).
DELETES = "deletes"
# ``document``: a GraphQL-over-HTTP request (a ``query`` beside ``variables`` or
# ``operationName``, or a ``/graphql`` endpoint) whose document no reader can know: it may
# be a mutation, so a write of unknown idempotency, judged like a statement a caller supplies.
DOCUMENT = "document"


@dataclass(frozen=True)
class PostJudgement:
    verdict: str
    reason: str = ""
    url_param: str | None = None  # the sink function's parameter the URL comes from
    # the URL as written when it names attributes of ``self`` its class leaves unset
    # (``f"{BASE}/{self.feature}/{self.subfeature}"``): each subclass's values judge it
    self_url: str | None = None


_LITERAL = re.compile(
    r"""(?P<q>"|')(?P<body>(?:\\.|(?!(?P=q)).)*)(?P=q)|(?P<name>[A-Za-z_][\w.]*)"""
)
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_SCHEME_HOST = re.compile(r"^[A-Za-z][\w+.-]*://[^/]*")
_GRAPHQL_OP = re.compile(r"^\s*(mutation|query|subscription|\{)")
# A GraphQL document's first field after the operation header (past an alias).
_GRAPHQL_FIELD = re.compile(r"\{\s*(?:\w+\s*:\s*)?(\w+)")


class _UrlResolver:
    """The text a URL expression stands for: constants substituted, parameters noted."""

    def __init__(
        self, project: ProjectIndex, fn: Function, facts: ModuleFacts, before: int
    ) -> None:
        self.project, self.fn, self.facts, self.before = project, fn, facts, before
        self.param: str | None = None
        self.hosts: list[str] = []

    def resolve(self, value: Value | None, depth: int = 0) -> str:
        if value is None or depth > 4:
            return ""
        text = value.string()
        if text is not None:
            return self._strip_host(text)
        if value.kind in {"name", "attr"}:
            return self._name(value.text, depth)
        if value.kind == "fstring" and value.text.startswith("`"):
            # a JavaScript template (`/collections.info`, `/users/${id}/posts`): its text
            # with each substitution as a placeholder, read as a literal's body is
            body = value.template_text(lambda part: f"{{{part.text}}}")
            return self._strip_host(self._placeholders(body, depth))
        # f-strings, concatenations, urljoin(...) and "...".format(...): string literals
        # (with their placeholders resolved) and the names between them.
        parts: list[str] = []
        for match in _LITERAL.finditer(value.text):
            body = match.group("body")
            if body is not None:
                parts.append(self._strip_host(self._placeholders(body, depth)))
            else:
                name = match.group("name")
                if name.lower() in {"f", "r", "b", "rf", "fr", "format", "urljoin", "join"}:
                    continue
                called = value.text[match.end() :].lstrip().startswith("(")
                if called and name.endswith(".format"):
                    # ``ACTION_URL.format(action_id=id)``: the template is the URL.
                    name = name[: -len(".format")]
                elif called:
                    # A function called (``_construct_url(base, path)``): its name is no
                    # part of the URL, and a helper's name says what it does, not where.
                    continue
                parts.append(self._name(name, depth))
        return "/".join(p for p in parts if p)

    def _placeholders(self, body: str, depth: int) -> str:
        def replace(match: re.Match[str]) -> str:
            expr = match.group(1).split("!", 1)[0].split(":", 1)[0].strip()
            if not re.fullmatch(r"[A-Za-z_][\w.]*", expr):
                return ""
            if expr in self.fn.params and re.match(r"/\w", body[match.end() :]):
                return ""  # an id in the middle of the path (``/channels/{id}/messages``)
            return self._name(expr, depth)

        return _PLACEHOLDER.sub(replace, body)

    def _name(self, name: str, depth: int) -> str:
        if name in self.fn.params and name not in SELF_NAMES:
            self.param = self.param or name
            return ""
        value = self._binding(name)
        if value is not None:
            return self.resolve(value, depth + 1)
        # An unresolved name speaks only when it names a URL (``self.search_url``).
        return name if self.project.catalog.url_name_words.search(name) else ""

    def _binding(self, name: str) -> Value | None:
        found: Value | None = None
        for assignment in self.facts.assignments:
            if assignment.target != name:
                continue
            local = assignment.function == self.fn.qualname and assignment.order <= self.before
            # a module constant or an attribute set anywhere, unless a local binding won
            shared = assignment.function is None or name.startswith("self.")
            if local or (shared and found is None):
                found = assignment.value
        if found is None and name in self.facts.imports:
            # a constant imported from another project module (``from .queries import URL``)
            found = self.project.module_variable(self.facts.imports[name])
        return found

    def _strip_host(self, text: str) -> str:
        host = _SCHEME_HOST.match(text)
        if host:
            self.hosts.append(host.group(0))
            text = text[host.end() :]
        return text.split("?", 1)[0].split("#", 1)[0]


def _segment_verdicts(catalog: Catalog, path: str) -> list[str]:
    """One verdict per path segment that says anything: the first known word of the last
    dotted part that has one (``chat.postMessage`` posts, ``_delete_by_query`` deletes)."""
    verdicts: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if index + 2 < len(segments) and segments[index + 1] == "" and segments[index + 2]:
            # ``/search/{id}/feedback``: a segment an id follows names a collection, and
            # what is done to the item is said after it
            continue
        said: str | None = None
        for part in segment.split("."):
            for word in words(part):
                if word in catalog.post_write_words:
                    said = WRITE
                    break
                if word in catalog.post_read_words:
                    said = READ
                    break
        if said is not None:
            verdicts.append(said)
    return verdicts


def _body(catalog: Catalog, call: Call, *, positional: bool = True) -> Value | None:
    """The body a call sends: its first keyword of the catalogue's ``body_kwargs``, else
    (``positional``) its second positional argument. A caller handing a POST helper its
    body along with the URL passes it by keyword: a helper's positions are its own."""
    for name in catalog.body_kwargs:
        if name in call.kwargs:
            return call.kwargs[name]
    return call.args[1] if positional and len(call.args) > 1 else None


def _parameter(resolver: _UrlResolver, value: Value) -> bool:
    """Whether ``value`` is a parameter of the resolver's function, not bound there again."""
    return (
        value.kind == "name"
        and value.text in resolver.fn.params
        and value.text not in SELF_NAMES
        and resolver._binding(value.text) is None
    )


def judge_mapped_document(
    project: ProjectIndex, argument: Value, caller: Function, facts: ModuleFacts, call: Call
) -> PostJudgement:
    """A GraphQL helper's document as a caller passes it: a ``query`` reads; a ``mutation``
    does what its first field names (``issueCreate`` creates, ``issueUpdate`` sets,
    ``issueDelete`` deletes); a parameter of the caller defers again; anything else is not
    judged (``neutral``)."""
    resolver = _UrlResolver(project, caller, facts, call.order)
    if _parameter(resolver, argument):
        return PostJudgement(DOCUMENT, "", argument.text)
    held = argument
    for _ in range(3):
        if held.kind not in {"name", "attr"}:
            break
        bound = resolver._binding(held.text)
        if bound is None:
            break
        held = bound
    text = _literal_document(held)
    operation = _operation(text) if text is not None else None
    if operation == "query":
        return PostJudgement(READ, "a GraphQL query")
    if operation != "mutation" or text is None:
        return PostJudgement(NEUTRAL)
    name = mutation_field(text)
    judged = rpc_operation_judgement(project.catalog, name) if name else None
    if judged is not None and judged.verdict != READ:
        return PostJudgement(judged.verdict, f"a GraphQL mutation `{name}`")
    return PostJudgement(WRITE, f"a GraphQL mutation{f' `{name}`' if name else ''}")


def mutation_field(text: str) -> str:
    """A GraphQL mutation's first field (``tagsAdd`` in ``mutation addTags($id: ID!) {
    tagsAdd(id: $id) {...} }``, past an alias), or "" when none is written."""
    field = _GRAPHQL_FIELD.search(text)
    return field.group(1) if field else ""


def _literal_document(value: Value) -> str | None:
    """The text of a GraphQL document written as a string or ``gql("query { ... }")``."""
    text = value.literal_text()
    if text is None and value.kind == "call" and value.call_args:
        text = value.call_args[0].literal_text()
    return text


def _operation(text: str) -> str | None:
    """``mutation`` or ``query`` (a subscription or ``{ ... }`` shorthand reads), or None
    for text that is no GraphQL document."""
    op = _GRAPHQL_OP.match(text)
    if op is None:
        return None
    return "mutation" if op.group(1) == "mutation" else "query"


def _graphql_operation(resolver: _UrlResolver, query: Value | None, depth: int = 0) -> str | None:
    """``mutation`` / ``query`` for a GraphQL document, or None when it cannot be read."""
    if query is None or depth > 3:
        return None
    text = _literal_document(query)
    if text is not None:
        return _operation(text)
    if query.kind == "name" and query.text in resolver.fn.params:
        return None  # the model's document: a parameter's name says nothing of it
    if query.kind in {"name", "attr"}:
        bound = resolver._binding(query.text)
        if bound is not None:
            return _graphql_operation(resolver, bound, depth + 1)
        name_words = words(query.text)
        writes = resolver.project.catalog.post_write_words
        if "mutation" in name_words or any(w in writes for w in name_words):
            return "mutation"  # CREATE_ISSUE_QUERY holds a mutation whatever it is called
        if "query" in name_words:
            return "query"
    return None


# The method of an effect sending a GraphQL document a client library executes.
GRAPHQL = "GRAPHQL"


def graphql_document(
    project: ProjectIndex, document: Value | None, fn: Function, facts: ModuleFacts, before: int
) -> tuple[str, str] | None:
    """The operation (``mutation`` / ``query``) and text of the document a GraphQL client
    executes (a literal, a constant, ``gql("...")``), or None when no reader of the source
    can know it: a parameter the model fills in says nothing, whatever it is called."""
    resolver = _UrlResolver(project, fn, facts, before)
    for _ in range(4):
        if document is None or (document.kind == "name" and document.text in fn.params):
            return None
        text = _literal_document(document)
        if text is not None:
            operation = _operation(text)
            return (operation, text) if operation is not None else None
        if document.kind not in {"name", "attr"}:
            return None
        document = resolver._binding(document.text)
    return None


def is_statement(effect: Effect) -> bool:
    """Whether the effect runs a statement its caller supplies (SQL, a GraphQL document),
    where a name's "query" says nothing about reading."""
    return effect.kind != "network_write" or effect.method == GRAPHQL


def judge_post(
    project: ProjectIndex, call: Call, fn: Function, facts: ModuleFacts
) -> PostJudgement:
    """Whether an HTTP POST (``requests.post(url, json=...)``) reads or writes."""
    catalog = project.catalog
    resolver = _UrlResolver(project, fn, facts, call.order)
    url = call.args[0] if call.args else call.kwargs.get("url")
    if call.method == "request" or (call.args and call.args[0].string() in {"POST", "post"}):
        url = call.args[1] if len(call.args) > 1 else call.kwargs.get("url")
    path = resolver.resolve(url)
    verdicts = _segment_verdicts(catalog, path)
    body = _body(catalog, call)
    if body is not None and body.kind in {"name", "attr"}:
        body = resolver._binding(body.text) or body
    keys = set(body.items) if body is not None and body.kind == "dict" else set()
    document = body.items.get("query") if body is not None and keys else None
    graphql = "graphql" in words(path) or bool(keys & {"variables", "operationName"})
    if document is not None and graphql and _parameter(resolver, document):
        # a GraphQL request (``{"query": query, "variables": variables}``) whose document is
        # the caller's: its name (``query``) says nothing of what it does
        return PostJudgement(DOCUMENT, "", document.text)
    operation = _graphql_operation(resolver, document) if document is not None else None
    rpc = _json_rpc(catalog, body, fn) if keys else None
    if rpc is not None:
        return rpc
    graphql = "graphql" in words(path) or (
        "query" in keys and bool(keys & catalog.post_graphql_keys)
    )
    if graphql or operation is not None:
        if operation == "mutation":
            return PostJudgement(MIXED if READ in verdicts else WRITE, "a GraphQL mutation")
        if operation == "query" and WRITE not in verdicts:
            return PostJudgement(READ, "a GraphQL query")
        if operation is None and "query" in keys:
            return PostJudgement(DOCUMENT, "a GraphQL document no reader can know")
    sets = _sets(catalog, path, body, verdicts)
    if sets is not None:
        return PostJudgement(SETS, sets, resolver.param)
    judged = _url_judgement(catalog, resolver, path, verdicts)
    if judged is not None:
        return judged
    if "model" in keys and keys & catalog.post_model_keys:
        return PostJudgement(READ, "a model call (`model` with a prompt)", resolver.param)
    self_url = _self_template(resolver, url)
    if keys & catalog.post_query_keys:
        return PostJudgement(WEAK, "a search-shaped body", resolver.param, self_url)
    return PostJudgement(NEUTRAL, "", resolver.param, self_url)


_SELF_PLACEHOLDER = re.compile(r"\{self\.(\w+)\}")


def _self_template(resolver: _UrlResolver, url: Value | None) -> str | None:
    """The URL's text when it is an f-string naming attributes of ``self`` (held in a local
    or written in the call), so that a subclass that sets them can judge it."""
    if url is not None and url.kind == "name":
        url = resolver._binding(url.text) or url
    if url is None or url.kind != "fstring" or not _SELF_PLACEHOLDER.search(url.text):
        return None
    return url.text


def class_attribute(project: ProjectIndex, cls_qual: str, name: str) -> str | None:
    """The string a class (or the first of its bases that does) sets ``name`` to in its
    body (``subfeature: str = "object_detection"``)."""
    for current in project.lineage(cls_qual):
        if current in project.classes:
            value = project.classes[current][0].attributes.get(name)
            if value is not None:
                return value.string()
    return None


def judge_self_url(
    project: ProjectIndex, template: str, caller: Function, facts: ModuleFacts
) -> PostJudgement | None:
    """A helper's POST whose URL names attributes of ``self``, judged with the values the
    caller's class gives them (``f"{BASE}/{self.feature}/{self.subfeature}"`` posts to
    ``/image/object_detection`` for the object-detection tool); None when that class sets
    no value for one of them."""
    if caller.class_name is None:
        return None
    values: dict[str, str] = {}
    for name in set(_SELF_PLACEHOLDER.findall(template)):
        value = class_attribute(project, caller.class_name, name)
        if value is None:
            return None
        values[name] = value
    text = _SELF_PLACEHOLDER.sub(lambda m: values[m.group(1)].replace("{", ""), template)
    resolver = _UrlResolver(project, caller, facts, 0)
    written = Value("fstring", text)
    path = resolver.resolve(written)
    return _url_judgement(project.catalog, resolver, path, _segment_verdicts(project.catalog, path))


def judge_mapped_url(
    project: ProjectIndex, argument: Value, caller: Function, facts: ModuleFacts, call: Call
) -> PostJudgement:
    """The judgement of a helper's POST whose URL is the caller's ``argument``."""
    resolver = _UrlResolver(project, caller, facts, call.order)
    path = resolver.resolve(argument)
    verdicts = _segment_verdicts(project.catalog, path)
    body = _body(project.catalog, call, positional=False)
    if body is not None and body.kind in {"name", "attr"}:
        body = resolver._binding(body.text) or body
    sets = _sets(project.catalog, path, body, verdicts)
    if sets is not None:
        return PostJudgement(SETS, sets, resolver.param)
    judged = _url_judgement(project.catalog, resolver, path, verdicts)
    return judged or PostJudgement(NEUTRAL, "", resolver.param)


def _json_rpc(catalog: Catalog, body: Value | None, fn: Function) -> PostJudgement | None:
    """An RPC envelope (JSON-RPC ``{"jsonrpc": "2.0", "method": "eth_getBalance", "params":
    ...}``, or ``{"action": "findNotes", "params": ...}``) does what its operation names,
    whatever the URL: judged by the verb table. An operation that is a parameter of the
    function posting it is judged where each caller passes it."""
    if body is None or ("jsonrpc" not in body.items and "params" not in body.items):
        return None
    key = next((k for k in catalog.post_rpc_operation_keys if k in body.items), None)
    if key is None:
        return None
    operation = body.items[key]
    if operation.kind == "name" and operation.text in fn.params:
        return PostJudgement(OPERATION, "", operation.text)
    method = operation.string()
    return rpc_operation_judgement(catalog, method) if method else None


def rpc_operation_judgement(catalog: Catalog, method: str) -> PostJudgement | None:
    """What an RPC operation's name says (``findNotes`` reads, ``updateNote`` and
    ``suspend`` set a state, ``addTags`` adds to a set of links, ``deleteNotes`` deletes,
    ``addNotes`` writes); None when no verb names it, or when it runs what it names
    (``run_all_cells``, ``exec_script``: unknown, never a read)."""
    # kebab-case names the same words (``create-task``, an MCP tool's name)
    name = method.rsplit(".", 1)[-1].rsplit("/", 1)[-1].replace("-", "_")
    if catalog.open_world.runs_what_it_names(name):
        return None
    verb = catalog.open_world.verb_class(name)
    name_words = words(name)
    reason = f"names the RPC operation `{method}`"
    if verb == "read":
        return PostJudgement(READ, f"{reason}, which reads")
    if verb == "idempotent_write" or (name_words and name_words[0] in catalog.post_state_words):
        return PostJudgement(SETS, f"{reason}, which sets a state")
    if verb == "destructive":
        return PostJudgement(DELETES, f"{reason}, which deletes")
    if verb == "non_idempotent" and set(name_words[1:]) & catalog.post_relation_words:
        return PostJudgement(SETS, f"{reason}, which adds to a set of links")
    if verb == "non_idempotent":
        return PostJudgement(WRITE, reason)
    return None


def _sets(catalog: Catalog, path: str, body: Value | None, verdicts: list[str]) -> str | None:
    """Why a POST to ``path`` is a write that repeats safely (SETS), or None: a state set or
    existing things linked (``_repeat_safe``) where the URL's last word does not read, or a
    last segment naming a list of ids (``idMembers``, ``label_ids``: an id added to a set)."""
    repeat_safe = _repeat_safe(catalog, path, body)
    if repeat_safe is not None and READ not in verdicts[-1:]:
        return repeat_safe
    last = next((seg for seg in reversed(path.split("/")) if seg), "")
    if catalog.post_id_set_segment.search(last):
        return f"the URL path `{path.strip('/')}` adds an id to a set"
    return None


def _repeat_safe(catalog: Catalog, path: str, body: Value | None) -> str | None:
    """Why a POST to ``path`` repeats safely, or None: the URL's last segment, nested under
    a resource, is an action setting its state (``/issue/{key}/transitions``), or a set of
    links (``/cards/{id}/idMembers``) the body adds existing things to by id."""
    segments = [segment for segment in path.split("/") if segment.strip()]
    if len(segments) < 2:
        return None  # a top-level collection (``/labels``): a POST there creates
    last = segments[-1]
    last_words = [w for part in last.split(".") for w in words(part)]
    action = words(last.split(".")[-1])  # ``chat.update``: the method after the dot
    if action and action[0] in catalog.post_state_words:
        return f"`{last}` sets the state of an existing resource"
    if not set(last_words) & catalog.post_relation_words or body is None:
        return None
    if body.kind != "dict" or not body.items:
        return None
    for key, value in body.items.items():
        key_words = words(key)
        value_words = words(value.text)
        if key in catalog.post_relation_words:
            continue  # ``{"labels": [...]}``: the things linked, named
        if key not in catalog.post_reference_keys and not {"id", "ids"} & set(key_words):
            return None
        if value.string() is None and not {"id", "ids"} & set(key_words + value_words):
            return None  # a value that is no reference to an existing thing
    return f"`{last}` links existing things by id (a set: a repeat keeps one link)"


def _url_judgement(
    catalog: Catalog, resolver: _UrlResolver, path: str, verdicts: list[str]
) -> PostJudgement | None:
    """The URL's say: its path words, then its host; None when it says nothing."""
    if verdicts:
        last = verdicts[-1]
        conflict = (READ if last == WRITE else WRITE) in verdicts
        if last == READ:
            reason = f"the URL path `{path.strip('/')}` reads"
            return PostJudgement(MIXED if conflict else READ, reason, resolver.param)
        return PostJudgement(MIXED if conflict else WRITE, "", resolver.param)
    if any(catalog.post_read_hosts.search(host) for host in resolver.hosts):
        return PostJudgement(READ, f"`{resolver.hosts[0]}` answers questions", resolver.param)
    return None


def name_reads(catalog: Catalog, name: str, helper: bool = False, sql: bool = False) -> bool | None:
    """True when a tool or function name (or a description's first sentence) reads
    (``search_docs``, ``get_weather``, "Run one read-only SELECT."), False when it names
    a write (``create_order``, ``search_and_book``), None when it says neither. A
    ``helper`` name's HTTP words (``_post_json``) say nothing."""
    name_words = [w for w in words(name) if w not in catalog.name_generic_words]
    if sql:
        name_words = [w for w in name_words if w not in catalog.sql_neutral_words]
    if helper:
        name_words = [w for w in name_words if w not in catalog.http_helper_words]
    if any(w in catalog.post_write_words for w in name_words):
        return False
    if any(w in catalog.name_read_words for w in name_words):
        return True
    return None


def read_by_name(catalog: Catalog, effect: Effect, tool_name: str, description: str = "") -> bool:
    """A POST (or a SQL statement) the request itself does not judge (``neutral``/``weak``)
    reads when the closest name that says anything reads: the function making the call,
    then the tool, then the first sentence of the tool's description."""
    if effect.reading not in {NEUTRAL, WEAK, OPERATION, DOCUMENT}:
        return False
    function = effect.function.rsplit(".", 1)[-1] if effect.function else ""
    sql = is_statement(effect)
    verdict = name_reads(catalog, function, helper=True, sql=sql) if function else None
    sentence = " ".join(re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0].split()[:12])
    for name in (tool_name, sentence):
        if verdict is not None:
            break
        verdict = name_reads(catalog, name, sql=sql) if name else None
    return bool(verdict)


def name_sets(catalog: Catalog, name: str) -> bool:
    """A PATCH made by ``update_contact``/``set_status``/``rename_room``: a function named
    for an idempotent write (setting fields again changes nothing), with no verb that adds."""
    name_words = [w for w in words(name) if w not in catalog.http_helper_words and w != "patch"]
    kinds = [catalog.verbs.get(w) for w in name_words]
    if name_words:
        # the verb it starts with, as open-world calls are judged (``edit``, ``rename``,
        # ``move``); later words of that table may be nouns (``new_card_label``)
        kinds.append(catalog.open_world.verbs.get(name_words[0]))
    return "idempotent_write" in kinds and not {"non_idempotent", "destructive"} & set(kinds)
