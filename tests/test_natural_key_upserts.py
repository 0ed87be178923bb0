"""Natural-key upserts repeat safely: a statement that says what a conflict on its key does
(SQL ``ON CONFLICT``, ``ON DUPLICATE KEY``, ``INSERT OR REPLACE``, ``INSERT IGNORE``), a
``MERGE``/``REPLACE`` statement, Cypher ``MERGE`` and an ORM's ``get_or_create`` do not
contradict an idempotent declaration (no AG102); a plain ``INSERT`` or a Cypher ``CREATE``
still adds on every run, which such a declaration contradicts. The application's own
database takes no idempotency key either way (no AG201): a write it makes is declared
(AG101)."""

from __future__ import annotations

import textwrap

import pytest

from .conftest import ScanFiles

SQL_TOOL = textwrap.dedent(
    '''
    import psycopg
    from langchain_core.tools import tool

    conn = psycopg.connect("dbname=shop")


    @tool
    def save_preference(user_id: str, key: str, value: str) -> str:
        """Save one preference of a user."""
        cur = conn.cursor()
        cur.execute(STATEMENT, (user_id, key, value))
        conn.commit()
        return "saved"
    '''
)


DECLARED_IDEMPOTENT = (
    '@tool\n@guarded(runtime, risk="write", idempotency="idempotent", replay="auto")\n'
)


def _codes(scan_files: ScanFiles, statement: str, declared_idempotent: bool = False) -> set[str]:
    source = SQL_TOOL.replace("STATEMENT", repr(statement))
    if declared_idempotent:
        source = source.replace("@tool\n", DECLARED_IDEMPOTENT).replace(
            "import psycopg\n",
            "import psycopg\nfrom agentguard.runtime import guarded\nfrom app.runtime import runtime\n",
        )
    result = scan_files({"prefs.py": source}, select=("AG101", "AG102", "AG201"))
    return {f.code for f in result.findings}


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO prefs (user_id, key, value) VALUES (%s, %s, %s) "
        "ON CONFLICT (user_id, key) DO UPDATE SET value = EXCLUDED.value",
        "INSERT INTO prefs (user_id, key, value) VALUES (%s, %s, %s) "
        "ON DUPLICATE KEY UPDATE value = VALUES(value)",
        "INSERT OR REPLACE INTO prefs (user_id, key, value) VALUES (%s, %s, %s)",
        "INSERT IGNORE INTO prefs (user_id, key, value) VALUES (%s, %s, %s)",
        "REPLACE INTO prefs (user_id, key, value) VALUES (%s, %s, %s)",
        "MERGE INTO prefs p USING (VALUES (%s, %s, %s)) v (u, k, val) "
        "ON p.user_id = v.u AND p.key = v.k "
        "WHEN MATCHED THEN UPDATE SET value = v.val WHEN NOT MATCHED THEN INSERT VALUES (v.u, v.k, v.val)",
    ],
)
def test_sql_upsert_is_an_idempotent_write(scan_files: ScanFiles, statement: str) -> None:
    assert _codes(scan_files, statement) == {"AG101"}  # a write to declare
    assert _codes(scan_files, statement, declared_idempotent=True) == set()


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO prefs (user_id, key, value) VALUES (%s, %s, %s)",
        # the words inside a quoted value say nothing about the statement
        "INSERT INTO audit (note, user_id, key) VALUES ('on conflict', %s, %s)",
    ],
)
def test_plain_insert_still_adds_a_row(scan_files: ScanFiles, statement: str) -> None:
    assert _codes(scan_files, statement) == {"AG101"}
    assert _codes(scan_files, statement, declared_idempotent=True) == {"AG102"}


GRAPH = textwrap.dedent(
    '''
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations
    from neo4j import Driver, GraphDatabase

    mcp = FastMCP("graph")


    class Graph:
        def __init__(self, driver: Driver) -> None:
            self.driver = driver

        def merge_person(self, name: str, city: str) -> None:
            self.driver.execute_query(
                "MERGE (p:Person {name: $name}) "
                "ON CREATE SET p.created = timestamp() "
                "MERGE (c:City {name: $city}) MERGE (p)-[:LIVES_IN]->(c)",
                name=name,
                city=city,
            )

        def add_post(self, author: str, text: str) -> None:
            self.driver.execute_query(
                "MERGE (a:Person {name: $author}) CREATE (a)-[:WROTE]->(:Post {text: $text})",
                author=author,
                text=text,
            )


    GRAPH = Graph(GraphDatabase.driver("bolt://graph.internal:7687"))


    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))
    def remember_person(name: str, city: str) -> str:
        """Remember a person and the city they live in, merged by name."""
        GRAPH.merge_person(name, city)
        return "ok"


    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=True))
    def add_post(author: str, text: str) -> str:
        """Record a post by an author."""
        GRAPH.add_post(author, text)
        return "ok"
    '''
)


def test_cypher_merge_on_a_name_declared_idempotent_is_quiet(scan_files: ScanFiles) -> None:
    result = scan_files({"graph.py": GRAPH}, select=("AG101", "AG102", "AG201"))
    by_tool = {(f.tool, f.code) for f in result.findings}
    assert not {c for t, c in by_tool if t == "remember_person"}


def test_cypher_create_beside_a_merge_still_adds(scan_files: ScanFiles) -> None:
    """``MERGE`` the author, ``CREATE`` the post: a repeat makes a second post, which the
    idempotent declaration contradicts."""
    result = scan_files({"graph.py": GRAPH}, select=("AG102", "AG201"))
    assert {f.code for f in result.findings if f.tool == "add_post"} == {"AG102"}


def test_orm_get_or_create_needs_no_key(scan_files: ScanFiles) -> None:
    source = textwrap.dedent(
        '''
        from langchain_core.tools import tool

        from shop.models import Tag


        @tool
        def tag_order(order_id: str, label: str) -> str:
            """Tag an order with a label."""
            tag, _ = Tag.objects.get_or_create(name=label)
            Tag.objects.update_or_create(name=label, defaults={"order": order_id})
            return tag.name
        '''
    )
    result = scan_files({"agent.py": source}, select=("AG101", "AG201"))
    assert {f.code for f in result.findings} == {"AG101"}
