"""The facts carry each expression's structure (a chain of names, attributes, calls and items;
the operands of a conditional, a concatenation, a negation or a comparison; an f-string's
parts), so that the passes above read structure and never parse text again."""

from __future__ import annotations

import textwrap

from agentguard.engine.fact_cache import decode, encode
from agentguard.facts.extract import extract
from agentguard.facts.module_facts import CALL_STEP, Chain, ModuleFacts, Value
from agentguard.knowledge.catalog import load_catalog

CARRIERS = load_catalog().context_carriers


def facts_of(source: str) -> ModuleFacts:
    return extract(textwrap.dedent(source).encode(), "agent/tools.py", CARRIERS)


def assigned(facts: ModuleFacts, target: str) -> Value:
    return next(a.value for a in facts.assignments if a.target == target)


def test_a_call_chain_is_read_as_written() -> None:
    facts = facts_of(
        """
        def send(self, body):
            self.api.events().insert(body=body).execute()
        """
    )
    execute = next(c for c in facts.calls if c.method == "execute")
    steps = (("attr", "api"), ("attr", "events"), CALL_STEP, ("attr", "insert"), CALL_STEP)
    assert execute.chain == Chain("self", (*steps, ("attr", "execute")))
    receiver = execute.chain.receiver()
    assert receiver is not None and receiver.called() == "insert"
    assert receiver.ends_in_call and not receiver.is_name
    # what the builder chain's first call is made on
    assert execute.chain.base() == "self.api"


def test_a_chain_from_a_literal_keeps_the_literal() -> None:
    facts = facts_of('words = ", ".join(parts)\nhistory = session["history"][0]\n')
    joined = assigned(facts, "words").chain
    assert joined is not None and joined.root == "" and joined.start is not None
    assert joined.start.string() == ", " and joined.base() == ""
    item = assigned(facts, "history").chain
    assert item == Chain("session", (("item", "history"), ("item", 0)))
    assert item.without_items() == Chain("session")


def test_a_call_of_a_bare_name_is_made_on_nothing() -> None:
    facts = facts_of('service = build("gmail", "v1").users()\n')
    chain = assigned(facts, "service").chain
    assert chain is not None and chain.called() == "users" and chain.base() == ""


def test_operands_of_conditionals_concatenations_and_comparisons() -> None:
    facts = facts_of(
        """
        def run(key, table, mode, append):
            client = Client(key) if key else Client()
            query = "DELETE FROM " + table + " WHERE id = ?"
            opened = "a" if append else "w"
            if not key:
                pass
            if mode is None:
                pass
        """
    )
    client = assigned(facts, "client")
    assert client.op == "if" and [p.text for p in client.parts] == ["Client(key)", "Client()"]
    assert client.parts[0].chain == client.parts[1].chain
    query = assigned(facts, "query")
    assert query.op == "+"
    assert [p.string() for p in query.parts] == ["DELETE FROM ", None, " WHERE id = ?"]
    assert [p.string() for p in assigned(facts, "opened").parts] == ["a", "w"]
    negated, compared = facts.functions["agent.tools.run"].branches
    assert negated.test.op == "not" and [p.text for p in negated.test.parts] == ["key"]
    assert compared.test.op == "is" and compared.test.parts[1].kind == "const"
    assert compared.test.parts[1].const is None


def test_an_fstring_is_its_text_and_what_it_formats() -> None:
    facts = facts_of('command = f"git {verb} --short"\n')
    parts = assigned(facts, "command").parts
    assert [(p.op, p.text) for p in parts] == [("text", "git "), ("", "verb"), ("text", " --short")]
    assert parts[1].kind == "name"


def test_structure_is_whole_when_the_text_is_cut_short() -> None:
    """A value's text stops at a limit; its structure does not."""
    long_sql = "SELECT " + ", ".join(f"column_{i}" for i in range(60)) + " FROM {table}"
    facts = facts_of(f'query = f"{long_sql}"\n')
    query = assigned(facts, "query")
    assert query.text.endswith("...")
    assert "".join(p.string() or "{}" for p in query.parts) == long_sql.replace("{table}", "{}")


def test_names_unpacked_from_a_call_are_items_of_its_result() -> None:
    facts = facts_of(
        """
        def start(self):
            sandbox, port = self._start()
        """
    )
    port = assigned(facts, "port").chain
    assert port == Chain("self", (("attr", "_start"), CALL_STEP, ("item", 1)))


def test_structure_survives_the_fact_cache() -> None:
    facts = facts_of(
        """
        def send(self, body, key):
            self.api.events().insert(body=f"x {body}").execute()
            client = Client(key) if key else Client()
        """
    )
    loaded = decode(encode(facts))
    assert loaded == facts
