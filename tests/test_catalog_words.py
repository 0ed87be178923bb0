"""Word and name lists that moved from code to the catalogues: a user's entry in config reaches
the rule that reads it (and without the entry the rule does not fire)."""

from __future__ import annotations

import textwrap

import pytest

from agentguard.knowledge.catalog import CatalogError
from agentguard.knowledge.words import words

from .conftest import ScanFiles

POST_TOOL = textwrap.dedent(
    '''
    import requests
    from langchain_core.tools import tool

    @tool
    def create_order(cart_id: str) -> dict:
        """Create an order."""
        key = KEY
        return requests.post(
            "https://shop.example/orders", json={"cart": cart_id}, headers={"Idempotency-Key": key}
        ).json()
    '''
)


def _codes(result: object) -> list[str]:
    return sorted(f.code for f in result.findings)  # type: ignore[attr-defined]


def test_user_key_kwarg_names_a_model_supplied_key(scan_files: ScanFiles) -> None:
    """``effects.keys.kwargs``: a tool parameter of that name is an idempotency key the
    model supplies (AG202)."""
    source = textwrap.dedent(
        '''
        import requests
        from langchain_core.tools import tool

        @tool
        def create_order(cart_id: str, op_ref: str) -> dict:
            """Create an order."""
            return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
        '''
    )
    assert "AG202" not in _codes(scan_files({"agent.py": source}))
    config = '[tool.agentguard.effects.keys]\nkwargs = ["op_ref"]\n'
    result = scan_files({"pyproject.toml": config, "agent.py": source})
    messages = [f.message for f in result.findings if f.code == "AG202"]
    assert messages == ["Tool `create_order` takes its idempotency key `op_ref` from the model"]


def test_user_key_header_is_found_in_the_headers(scan_files: ScanFiles) -> None:
    """``effects.keys.headers``: a header of that name carries the key, so a per-call value in
    it is an unstable key (AG203) and the POST is keyed (no AG201)."""
    source = (
        POST_TOOL.replace("key = KEY", "key = str(uuid.uuid4())")
        .replace('"Idempotency-Key"', '"X-Op-Ref"')
        .replace("import requests", "import uuid\nimport requests")
    )
    plain = _codes(scan_files({"agent.py": source}))
    assert "AG203" not in plain and "AG201" in plain
    config = '[tool.agentguard.effects.keys]\nheaders = ["op-ref"]\n'
    extended = _codes(scan_files({"pyproject.toml": config, "agent.py": source}))
    assert "AG203" in extended and "AG201" not in extended


def test_user_fresh_call_makes_an_unstable_key(scan_files: ScanFiles) -> None:
    """``effects.keys.fresh_calls``: a key built with that call is new on every call (AG203)."""
    source = POST_TOOL.replace("key = KEY", "key = idgen.new_id()").replace(
        "import requests", "import idgen\nimport requests"
    )
    assert "AG203" not in _codes(scan_files({"agent.py": source}))
    config = '[tool.agentguard.effects.keys]\nfresh_calls = ["idgen.new_*"]\n'
    result = scan_files({"pyproject.toml": config, "agent.py": source})
    messages = [f.message for f in result.findings if f.code == "AG203"]
    assert len(messages) == 1 and "`idgen.new_id()` is new on every call" in messages[0]


def test_user_scope_word_scopes_a_hashed_key(scan_files: ScanFiles) -> None:
    """``effects.keys.scope_words``: a name holding that word scopes a key hashed from the
    arguments to a run, so it is no longer a hash of the arguments only (AG204)."""
    source = (
        POST_TOOL.replace(
            "key = KEY", "key = hashlib.sha256((cart_id + batch).encode()).hexdigest()"
        )
        .replace("cart_id: str)", "cart_id: str, batch: str)")
        .replace("import requests", "import hashlib\nimport requests")
    )
    assert "AG204" in _codes(scan_files({"agent.py": source}))
    config = '[tool.agentguard.effects.keys]\nscope_words = ["batch"]\n'
    assert "AG204" not in _codes(scan_files({"pyproject.toml": config, "agent.py": source}))


def test_user_sql_write_verb_makes_a_statement_a_write(scan_files: ScanFiles) -> None:
    """``effects.sql.write_verbs``: a statement starting with that word writes (a stored
    procedure ``CALL``), so the tool running it makes an undeclared write (AG101)."""
    source = textwrap.dedent(
        '''
        import psycopg
        from langchain_core.tools import tool

        conn = psycopg.connect("dbname=shop")

        @tool
        def charge_card(card_id: str) -> str:
            """Charge the card."""
            conn.execute("CALL charge(%s)", (card_id,))
            return "ok"
        '''
    )
    assert scan_files({"agent.py": source}).findings == []
    config = '[tool.agentguard.effects.sql]\nwrite_verbs = ["call"]\n'
    result = scan_files({"pyproject.toml": config, "agent.py": source})
    messages = [f.message for f in result.findings if f.code == "AG101"]
    assert messages == [
        "Tool `charge_card` makes a write (`CALL agent.conn.execute`) but declares no "
        "idempotency, risk or replay policy"
    ]


def test_user_injected_param_is_not_the_models(scan_files: ScanFiles) -> None:
    """``tool-functions.injected_params``: a parameter the user's executor fills in itself is
    not a key the model supplies (no AG202)."""
    source = textwrap.dedent(
        '''
        import requests
        from langchain_core.tools import tool

        @tool
        def create_order(cart_id: str, idempotency_key: str) -> dict:
            """Create an order."""
            return requests.post(
                "https://shop.example/orders",
                json={"cart": cart_id},
                headers={"Idempotency-Key": idempotency_key},
            ).json()
        '''
    )
    assert "AG202" in _codes(scan_files({"agent.py": source}))
    config = '[tool.agentguard.tool-functions]\ninjected_params = ["idempotency_key"]\n'
    assert "AG202" not in _codes(scan_files({"pyproject.toml": config, "agent.py": source}))


def test_user_declaration_decorator_declares_the_policy(scan_files: ScanFiles) -> None:
    """``tool-functions.declaration_decorators``: the user's own wrapper of ``@guarded``
    declares the tool's policy, so the tool is no longer undeclared (AG101)."""
    source = textwrap.dedent(
        '''
        import requests
        from acme.policy import declared
        from langchain_core.tools import tool

        @tool
        @declared(risk="write", idempotency="idempotent", replay="auto")
        def set_price(sku: str, price: int) -> dict:
            """Set a price."""
            return requests.put("https://shop.example/prices/" + sku, json={"price": price}).json()
        '''
    )
    assert "AG101" in _codes(scan_files({"agent.py": source}))
    config = '[tool.agentguard.tool-functions]\ndeclaration_decorators = ["acme.policy.declared"]\n'
    assert "AG101" not in _codes(scan_files({"pyproject.toml": config, "agent.py": source}))


def test_user_annotation_hint_declares_read_only(scan_files: ScanFiles) -> None:
    """``tool-functions.annotation_hints``: an annotation name the user's MCP layer writes
    declares the tool read-only, which its POST contradicts (AG102 instead of AG101)."""
    source = textwrap.dedent(
        '''
        import requests
        from mcp.server.fastmcp import FastMCP

        mcp = FastMCP("shop")

        @mcp.tool(annotations={"readOnly": True})
        def place_order(cart_id: str) -> dict:
            """Place an order."""
            return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
        '''
    )
    plain = _codes(scan_files({"agent.py": source}))
    assert "AG101" in plain and "AG102" not in plain
    config = '[tool.agentguard.tool-functions.annotation_hints]\nread_only = ["readOnly"]\n'
    result = scan_files({"pyproject.toml": config, "agent.py": source})
    messages = [f.message for f in result.findings if f.code in {"AG101", "AG102"}]
    assert messages == [
        "Tool `place_order` is declared read-only (mcp-annotations) but makes a remote write "
        "(`POST requests.post`)"
    ]


def test_bad_tool_functions_entry_names_the_file_and_key(scan_files: ScanFiles) -> None:
    config = "[tool.agentguard.tool-functions]\ninjected_params = [3]\n"
    with pytest.raises(
        CatalogError,
        match=r"pyproject.toml: invalid configuration at "
        r"`tool-functions.injected_params.0`",
    ):
        scan_files({"pyproject.toml": config, "agent.py": ""})


def test_user_url_name_word_lets_an_unresolved_url_speak(scan_files: ScanFiles) -> None:
    """``effects.url_name_words``: a POST's URL held by a name the scan cannot resolve is
    judged by that name once it is a URL name (``SEARCH_BASE`` reads, so no AG201)."""
    source = textwrap.dedent(
        '''
        import requests
        from langchain_core.tools import tool
        from service_settings import SEARCH_BASE

        @tool
        def process_payload(payload: dict) -> dict:
            """Process the payload."""
            return requests.post(SEARCH_BASE, json=payload).json()
        '''
    )
    assert "AG201" in _codes(scan_files({"agent.py": source}))
    config = '[tool.agentguard.effects]\nurl_name_words = ["base"]\n'
    assert _codes(scan_files({"pyproject.toml": config, "agent.py": source})) == []


def test_user_context_carrier_types_the_dependencies(scan_files: ScanFiles) -> None:
    """``tool-functions.context_carriers``: the user's framework hands its tools a
    ``Ctx[Deps]`` whose ``.deps`` holds the dependencies, so ``ctx.deps.orders.post`` is the
    ``httpx.Client.post`` that ``Deps`` declares, found for certain (not guessed)."""
    source = textwrap.dedent(
        '''
        from dataclasses import dataclass

        import httpx
        from acme.agents import Ctx
        from langchain_core.tools import tool

        @dataclass
        class Deps:
            orders: httpx.Client

        @tool
        def place_order(ctx: Ctx[Deps], cart_id: str) -> dict:
            """Place an order."""
            return ctx.deps.orders.post("/orders", json={"cart": cart_id}).json()
        '''
    )

    def ag201(result: object) -> list[tuple[str, str]]:
        findings = result.findings  # type: ignore[attr-defined]
        return [
            (f.message.split("`")[3], f.confidence.value) for f in findings if f.code == "AG201"
        ]

    assert ag201(scan_files({"agent.py": source})) == [("ctx.deps.orders.post", "low")]
    config = (
        "[tool.agentguard.tool-functions.context_carriers]\n"
        'attributes = {Ctx = "deps"}\npackages = ["acme"]\n'
    )
    extended = ag201(scan_files({"pyproject.toml": config, "agent.py": source}))
    assert extended == [("POST httpx.Client.post", "high")]


def test_names_and_texts_split_into_the_words_the_lists_hold() -> None:
    """One splitter: a text splits at every symbol, a name of the code at underscores and
    capitals only, so a word with an accent stays whole."""
    assert words("chat.postMessage") == ["chat", "post", "message"]
    assert words("Creates a new ticket") == ["creates", "a", "new", "ticket"]
    assert words("batch_createIssues", identifier=True) == ["batch", "create", "issues"]
    assert words("créer_commande", identifier=True) == ["créer", "commande"]
    assert words("créer_commande") == ["cr", "er", "commande"]
