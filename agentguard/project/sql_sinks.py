"""SQL sinks: statements built with SQLAlchemy, embedded databases, and receivers bound
to a DB-API cursor or connection."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Function, ModuleFacts, Value
from agentguard.knowledge.catalog import Catalog
from agentguard.project.sink_keys import local_value

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


SQL_BUILDERS = {"insert", "update", "delete", "select"}


def sqlalchemy_statement(catalog: Catalog, statement: Value) -> str | None:
    """The verb of ``insert(T).values(...)`` / ``text("INSERT ...")``, or None."""
    if statement.kind != "call":
        return None
    for callee in statement.calls:
        last = callee.replace("()", "").rsplit(".", 1)[-1]
        if last in SQL_BUILDERS and (callee.startswith("sqlalchemy") or "." not in callee):
            return last
    if statement.qualname and statement.qualname.rsplit(".", 1)[-1] == "text":
        written = statement.call_args[0] if statement.call_args else None
        # ``text(f"SET @version = '{VERSION}'")``: its literal start is enough
        sql = (written.string() or statement_start(written)) if written is not None else None
        if sql is not None:
            # reads, or sets up the fixed schema (``CREATE TABLE IF NOT EXISTS``): no effect
            if (
                catalog.sql_read.match(sql)
                or catalog.sql_setup.match(sql)
                or not catalog.sql_write.match(sql)
            ):
                return "select"
            return sql.split(None, 1)[0].lower()
    return None


def embedded_database_module(catalog: Catalog, facts: ModuleFacts) -> bool:
    roots = {qualified.split(".", 1)[0] for qualified in facts.imports.values()}
    return bool(roots & catalog.embedded_databases) and not roots & catalog.server_databases


def bound_to_db_handle(
    project: ProjectIndex, receiver: str, fn: Function, facts: ModuleFacts, before: int
) -> bool:
    """``c = conn.cursor()`` / ``db = sqlite3.connect(...)``: a receiver named ``c`` is still
    a DB-API cursor or connection when the code bound it to one."""
    if not receiver.isidentifier():
        return False
    value = local_value(project, receiver, fn, facts, before)
    if value is None or value.kind != "call":
        return False
    method = (value.qualname or value.text).split("(", 1)[0].rsplit(".", 1)[-1]
    return method in project.catalog.db_handle_factories


_QUOTED = re.compile(r"""'[^']*'|"[^"]*"|`[^`]*`""")


def statement_write_clause(catalog: Catalog, text: str) -> str | None:
    """The write clause inside a statement that starts with neither a read nor a write
    verb: ``MATCH (n {id: $id}) SET n.name = $name`` (Cypher) or ``WITH old AS (...) DELETE
    FROM ...`` writes, whatever it starts with. Quoted strings are no clause."""
    if catalog.sql_read.match(text) or catalog.sql_write.match(text):
        return None
    found = catalog.sql_clause_writes.search(_QUOTED.sub("", text))
    return found.group(1).lower() if found else None


def statement_start(statement: Value) -> str | None:
    """The literal start of a statement built from a literal and a value no reader knows
    (``"EXPLAIN " + query``, ``f"DELETE FROM {table} WHERE id = ?"``), up to the first
    part not written: enough to read its first word. None when it starts with no literal."""
    if statement.kind not in {"other", "fstring"}:
        return None
    first = statement
    if first.op == "+":
        first = first.parts[0]
    if first.kind == "fstring" and first.parts:
        first = first.parts[0]
    head = first.string() if first.kind == "const" else None
    # only a whole first word says what the statement is
    return head if head is not None and re.match(r"\s*\w+\s", head) else None


# A Cypher ``CREATE`` of a node or a path (``CREATE (``), not ``ON CREATE SET``: it adds one on
# every run, wherever the statement starts (``MERGE (a {name: $a}) CREATE (a)-[:WROTE]->(p)``).
_CYPHER_CREATE = re.compile(r"(?i)(?<!\bon\s)\bcreate\s*\(")


def repeats_safely(catalog: Catalog, text: str, clause: str | None) -> bool:
    """Whether a write statement leaves the same state when run twice. ``INSERT`` (or a
    clause that creates, ``clause``) adds a row or a node each time unless it says what a
    conflict on the natural key does (``ON CONFLICT``, ``INSERT OR REPLACE``: an upsert);
    ``UPDATE t SET n = n + 1`` repeats its increment; ``MERGE``/``REPLACE``/``UPDATE`` set a
    state, except that a Cypher ``CREATE (...)`` in a ``MERGE`` still adds."""
    unquoted = _QUOTED.sub("", text)
    if catalog.sql_upserts.search(unquoted):
        return True
    relative = bool(re.search(r"(?is)\bset\b.*?(\w+)\s*=\s*\1\s*[-+]", text))
    adds = bool(re.match(r"(?is)^\s*insert", text)) or clause in catalog.sql_creates
    adds = adds or bool(_CYPHER_CREATE.search(unquoted))
    return not (adds or relative)
