"""Retry constructs (AG901-AG904): which retries repeat a non-idempotent side effect."""

from __future__ import annotations

import textwrap

import pytest

from .conftest import ScanFiles

TOOLS = textwrap.dedent(
    '''
    import requests
    from langchain_core.tools import tool

    @tool
    def create_order(cart_id: str) -> dict:
        """Create an order."""
        return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()

    @tool
    def search_products(query: str) -> list:
        """Search products."""
        return requests.get("https://shop.example/search", params={"q": query}).json()
    '''
)


def retry_findings(scan_files: ScanFiles, source: str) -> list[tuple[str, int]]:
    result = scan_files({"agent.py": textwrap.dedent(source)})
    return sorted((f.code, f.span.line) for f in result.findings if f.code.startswith("AG9"))


def codes(scan_files: ScanFiles, source: str) -> list[str]:
    return sorted({code for code, _ in retry_findings(scan_files, source)})


POST = 'return requests.post("https://shop.example/orders", json=order).json()'
GET = 'return requests.get("https://shop.example/orders", params=order).json()'


def helper(decorator: str, body: str = POST, imports: str = "") -> str:
    return (
        "import requests\nimport httpx\n"
        + imports
        + "\n\n"
        + decorator
        + "\ndef place(order: dict) -> dict:\n    "
        + body
        + "\n"
    )


DECORATORS = [
    ("tenacity-bare", "from tenacity import retry", "@retry", ["AG902", "AG903"]),
    ("tenacity-called", "from tenacity import retry", "@retry()", ["AG902", "AG903"]),
    (
        "tenacity-stop",
        "from tenacity import retry, stop_after_attempt",
        "@retry(stop=stop_after_attempt(3))",
        ["AG902", "AG903"],
    ),
    (
        "tenacity-module",
        "import tenacity",
        "@tenacity.retry(stop=tenacity.stop_after_attempt(3))",
        ["AG902", "AG903"],
    ),
    (
        "tenacity-named-timeout",
        "from tenacity import retry, retry_if_exception_type",
        "@retry(retry=retry_if_exception_type(requests.Timeout))",
        ["AG902"],
    ),
    (
        "tenacity-connect-only",
        "from tenacity import retry, retry_if_exception_type",
        "@retry(retry=retry_if_exception_type(httpx.ConnectError))",
        [],
    ),
    (
        "tenacity-connect-tuple",
        "from tenacity import retry, retry_if_exception_type",
        "@retry(retry=retry_if_exception_type((httpx.ConnectError, httpx.ConnectTimeout)))",
        [],
    ),
    (
        "backoff-exception",
        "import backoff",
        "@backoff.on_exception(backoff.expo, Exception, max_tries=3)",
        ["AG902", "AG903"],
    ),
    (
        "backoff-timeout",
        "import backoff",
        "@backoff.on_exception(backoff.expo, requests.exceptions.Timeout, max_tries=3)",
        ["AG902"],
    ),
    (
        "backoff-connection",
        "import backoff",
        "@backoff.on_exception(backoff.expo, requests.exceptions.ConnectionError, max_tries=3)",
        [],
    ),
    (
        "stamina-httperror",
        "import stamina",
        "@stamina.retry(on=httpx.HTTPError, attempts=3)",
        ["AG902"],
    ),
    ("stamina-exception", "import stamina", "@stamina.retry(on=Exception)", ["AG902", "AG903"]),
    # a policy made once and applied by its name: the call it holds is the decorator
    (
        "tenacity-named-policy",
        "from tenacity import retry, retry_if_exception_type, stop_after_attempt\n"
        "_with_retries = retry(\n    stop=stop_after_attempt(3),\n"
        "    retry=retry_if_exception_type((httpx.ConnectError, httpx.TimeoutException)),\n)",
        "@_with_retries",
        ["AG902"],
    ),
    (
        "tenacity-named-connect-only",
        "from tenacity import retry, retry_if_exception_type\n"
        "_reconnect = retry(retry=retry_if_exception_type(httpx.ConnectError))",
        "@_reconnect",
        [],
    ),
]


@pytest.mark.parametrize(
    ("imports", "decorator", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in DECORATORS],
)
def test_retry_decorators_around_a_post(
    scan_files: ScanFiles, imports: str, decorator: str, expected: list[str]
) -> None:
    assert codes(scan_files, helper(decorator, imports=imports + "\n")) == expected


@pytest.mark.parametrize(
    ("imports", "decorator"),
    [pytest.param(case[1], case[2], id=case[0]) for case in DECORATORS],
)
def test_retry_decorators_around_a_read_are_fine(
    scan_files: ScanFiles, imports: str, decorator: str
) -> None:
    assert codes(scan_files, helper(decorator, body=GET, imports=imports + "\n")) == []


def test_tenacity_retrying_loop(scan_files: ScanFiles) -> None:
    source = """
        import requests
        from tenacity import Retrying, stop_after_attempt

        def place(order: dict) -> dict:
            for attempt in Retrying(stop=stop_after_attempt(3)):
                with attempt:
                    return requests.post("https://shop.example/orders", json=order).json()
    """
    assert codes(scan_files, source) == ["AG902", "AG903"]


def test_tenacity_async_retrying_loop(scan_files: ScanFiles) -> None:
    source = """
        import httpx
        from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

        async def place(order: dict) -> dict:
            async with httpx.AsyncClient() as client:
                async for attempt in AsyncRetrying(
                    stop=stop_after_attempt(3), retry=retry_if_exception_type(httpx.ReadTimeout)
                ):
                    with attempt:
                        return (await client.post("https://shop.example/orders", json=order)).json()
    """
    assert codes(scan_files, source) == ["AG902"]


def test_hand_written_for_loop(scan_files: ScanFiles) -> None:
    source = """
        import time
        import requests

        def place(order: dict) -> dict:
            for attempt in range(3):
                try:
                    return requests.post("https://shop.example/orders", json=order, timeout=5).json()
                except requests.RequestException:
                    time.sleep(2 ** attempt)
            raise RuntimeError("unavailable")
    """
    assert retry_findings(scan_files, source) == [("AG902", 6)]


def test_hand_written_while_loop_with_counter(scan_files: ScanFiles) -> None:
    source = """
        import requests

        def place(order: dict) -> dict:
            attempts = 0
            while True:
                try:
                    return requests.post("https://shop.example/orders", json=order).json()
                except Exception:
                    attempts += 1
                    if attempts >= 3:
                        raise
                    continue
    """
    assert codes(scan_files, source) == ["AG902", "AG903"]


def test_hand_written_loop_on_connection_errors_only_is_fine(scan_files: ScanFiles) -> None:
    source = """
        import time
        import requests

        def place(order: dict) -> dict:
            for attempt in range(3):
                try:
                    return requests.post("https://shop.example/orders", json=order).json()
                except requests.ConnectionError:
                    time.sleep(1)
            raise RuntimeError("unavailable")
    """
    assert codes(scan_files, source) == []


def test_loop_over_items_is_not_a_retry(scan_files: ScanFiles) -> None:
    source = """
        import logging
        import requests

        def place_all(orders: list) -> None:
            for order in orders:
                try:
                    requests.post("https://shop.example/orders", json=order)
                except requests.RequestException:
                    logging.exception("failed")
    """
    assert codes(scan_files, source) == []


def test_loop_that_reraises_is_not_a_retry(scan_files: ScanFiles) -> None:
    source = """
        import requests

        def place(order: dict) -> dict:
            for attempt in range(3):
                try:
                    return requests.post("https://shop.example/orders", json=order).json()
                except requests.RequestException as exc:
                    raise RuntimeError("failed") from exc
            return {}
    """
    assert codes(scan_files, source) == []


def test_retry_with_a_stable_key_is_fine(scan_files: ScanFiles) -> None:
    source = """
        import requests
        from tenacity import retry, retry_if_exception_type, stop_after_attempt

        @retry(retry=retry_if_exception_type(requests.Timeout), stop=stop_after_attempt(3))
        def place(order: dict, run_id: str) -> dict:
            headers = {"Idempotency-Key": f"order:{run_id}:{order['id']}"}
            return requests.post("https://shop.example/orders", json=order, headers=headers).json()
    """
    assert codes(scan_files, source) == []


# ---------------------------------------------------------------- LangChain / LangGraph
def test_with_retry_on_a_write_tool(scan_files: ScanFiles) -> None:
    source = TOOLS + "\nsafe_order = create_order.with_retry(stop_after_attempt=3)\n"
    assert codes(scan_files, source) == ["AG902", "AG903"]


def test_with_retry_on_a_read_tool_is_fine(scan_files: ScanFiles) -> None:
    source = TOOLS + "\nsearch = search_products.with_retry(stop_after_attempt=3)\n"
    assert codes(scan_files, source) == []


def test_with_retry_on_an_agent_is_global(scan_files: ScanFiles) -> None:
    source = TOOLS + textwrap.dedent(
        """
        from langchain.agents import create_agent

        agent = create_agent("gpt-5", tools=[create_order, search_products])
        robust_agent = agent.with_retry(stop_after_attempt=3)
        """
    )
    assert codes(scan_files, source) == ["AG901"]


def test_with_retry_over_every_tool(scan_files: ScanFiles) -> None:
    source = TOOLS + textwrap.dedent(
        """
        tools = [create_order, search_products]
        retrying_tools = [t.with_retry() for t in tools]
        """
    )
    assert codes(scan_files, source) == ["AG901"]


def test_tool_retry_middleware(scan_files: ScanFiles) -> None:
    source = TOOLS + textwrap.dedent(
        """
        from langchain.agents import create_agent
        from langchain.agents.middleware import ToolRetryMiddleware

        agent = create_agent("gpt-5", tools=[create_order, search_products],
                             middleware=[ToolRetryMiddleware(max_retries=3)])
        """
    )
    assert codes(scan_files, source) == ["AG901"]


def test_tool_retry_middleware_limited_to_read_tools_is_fine(scan_files: ScanFiles) -> None:
    source = TOOLS + textwrap.dedent(
        """
        from langchain.agents import create_agent
        from langchain.agents.middleware import ToolRetryMiddleware

        agent = create_agent("gpt-5", tools=[create_order, search_products],
                             middleware=[ToolRetryMiddleware(max_retries=3, tools=["search_products"])])
        """
    )
    assert codes(scan_files, source) == []


def test_tool_retry_middleware_naming_a_write_tool(scan_files: ScanFiles) -> None:
    source = TOOLS + textwrap.dedent(
        """
        from langchain.agents import create_agent
        from langchain.agents.middleware import ToolRetryMiddleware

        agent = create_agent("gpt-5", tools=[create_order, search_products],
                             middleware=[ToolRetryMiddleware(max_retries=3, tools=[create_order])])
        """
    )
    # retry_on defaults to (Exception,)
    assert codes(scan_files, source) == ["AG902", "AG903"]


def test_tool_retry_middleware_on_connection_errors_only_is_fine(scan_files: ScanFiles) -> None:
    source = TOOLS + textwrap.dedent(
        """
        import httpx
        from langchain.agents import create_agent
        from langchain.agents.middleware import ToolRetryMiddleware

        agent = create_agent("gpt-5", tools=[create_order, search_products],
                             middleware=[ToolRetryMiddleware(retry_on=(httpx.ConnectError,))])
        """
    )
    assert codes(scan_files, source) == []


def test_langgraph_task_with_retry_policy(scan_files: ScanFiles) -> None:
    source = textwrap.dedent(
        """
        import requests
        from langgraph.func import task
        from langgraph.types import RetryPolicy

        @task(retry_policy=RetryPolicy(max_attempts=3))
        def submit(order: dict) -> dict:
            return requests.post("https://shop.example/orders", json=order).json()

        @task
        def submit_once(order: dict) -> dict:
            return requests.post("https://shop.example/orders", json=order).json()
        """
    )
    assert retry_findings(scan_files, source) == [("AG902", 6)]


def test_langgraph_node_defaults(scan_files: ScanFiles) -> None:
    source = TOOLS + textwrap.dedent(
        """
        from langgraph.graph import StateGraph
        from langgraph.prebuilt import ToolNode
        from langgraph.types import RetryPolicy

        builder = StateGraph(dict)
        builder.add_node("tools", ToolNode([create_order, search_products]))
        graph = builder.set_node_defaults(retry_policy=RetryPolicy(max_attempts=3))
        """
    )
    assert "AG901" in codes(scan_files, source)


def test_langgraph_retry_policy_on_the_tools_node(scan_files: ScanFiles) -> None:
    source = TOOLS + textwrap.dedent(
        """
        from langgraph.graph import StateGraph
        from langgraph.prebuilt import ToolNode
        from langgraph.types import RetryPolicy

        builder = StateGraph(dict)
        builder.add_node("tools", ToolNode([create_order, search_products]), retry_policy=RetryPolicy())
        """
    )
    assert codes(scan_files, source) == ["AG901"]


def test_a_tool_node_class_from_config_counts_as_every_tool(scan_files: ScanFiles) -> None:
    """``tool_nodes`` of a ``retries.node_retry`` entry in config: the user's own node class
    that runs every tool is treated like ``ToolNode``."""
    source = TOOLS + textwrap.dedent(
        """
        from langgraph.graph import StateGraph
        from langgraph.types import RetryPolicy
        from app.nodes import SafeToolNode

        builder = StateGraph(dict)
        builder.add_node("tools", SafeToolNode([create_order, search_products]), retry_policy=RetryPolicy())
        """
    )
    assert "AG901" not in codes(scan_files, source)
    config = textwrap.dedent(
        """
        [[tool.agentguard.retries.node_retry]]
        match = ["*.add_node"]
        library = "langgraph"
        requires_kwarg = "retry_policy"
        node = {arg = 1, kwarg = ["action", "node"]}
        tool_nodes = ["SafeToolNode"]
        """
    )
    result = scan_files({"pyproject.toml": config, "agent.py": source})
    assert "AG901" in {f.code for f in result.findings}


def test_langgraph_retry_policy_on_a_writing_node(scan_files: ScanFiles) -> None:
    source = textwrap.dedent(
        """
        import requests
        from langgraph.graph import StateGraph
        from langgraph.types import RetryPolicy

        def submit(state: dict) -> dict:
            requests.post("https://shop.example/orders", json=state["order"])
            return state

        def lookup(state: dict) -> dict:
            return {"order": requests.get("https://shop.example/orders/1").json()}

        builder = StateGraph(dict)
        builder.add_node("submit", submit, retry_policy=RetryPolicy(max_attempts=3))
        builder.add_node("lookup", lookup, retry_policy=RetryPolicy(max_attempts=3))
        """
    )
    assert retry_findings(scan_files, source) == [("AG902", 14)]


# ---------------------------------------------------------------- HTTP client retries
URLLIB3 = [
    ("allowed-none", "Retry(total=3, allowed_methods=None)", ["AG904"]),
    ("allowed-false", "Retry(total=3, allowed_methods=False)", ["AG904"]),
    ("allowed-post", 'Retry(total=3, allowed_methods=["GET", "POST"])', ["AG904"]),
    (
        "allowed-frozenset-patch",
        'Retry(total=3, allowed_methods=frozenset({"GET", "PATCH"}))',
        ["AG904"],
    ),
    ("whitelist-false", "Retry(total=3, method_whitelist=False)", ["AG904"]),
    ("default", "Retry(total=3, backoff_factor=0.3, status_forcelist=[502, 503])", []),
    ("idempotent-only", 'Retry(total=3, allowed_methods=["GET", "PUT", "DELETE"])', []),
]


@pytest.mark.parametrize(
    ("expr", "expected"), [pytest.param(*case[1:], id=case[0]) for case in URLLIB3]
)
def test_urllib3_retry_methods(scan_files: ScanFiles, expr: str, expected: list[str]) -> None:
    source = (
        "import requests\nfrom requests.adapters import HTTPAdapter\n"
        "from urllib3.util.retry import Retry\n\n"
        "session = requests.Session()\n"
        f'session.mount("https://", HTTPAdapter(max_retries={expr}))\n'
    )
    assert codes(scan_files, source) == expected


# ---------------------------------------------------------------- read-only tools
def test_read_only_tool_never_gets_retry_or_write_findings(scan_files: ScanFiles) -> None:
    source = textwrap.dedent(
        '''
        import requests
        from tenacity import retry
        from langchain_core.tools import tool

        @tool
        @retry
        def search_products(query: str) -> list:
            """Search products."""
            for attempt in range(3):
                try:
                    return requests.get("https://shop.example/search", params={"q": query}).json()
                except Exception:
                    continue
            return []

        safe_search = search_products.with_retry()
        '''
    )
    result = scan_files({"agent.py": source})
    assert [f.code for f in result.findings] == []


def test_global_retry_without_any_write_tool_is_fine(scan_files: ScanFiles) -> None:
    source = textwrap.dedent(
        '''
        import requests
        from langchain_core.tools import tool
        from langchain.agents import create_agent
        from langchain.agents.middleware import ToolRetryMiddleware

        @tool
        def search_products(query: str) -> list:
            """Search products."""
            return requests.get("https://shop.example/search", params={"q": query}).json()

        agent = create_agent("gpt-5", tools=[search_products],
                             middleware=[ToolRetryMiddleware(max_retries=3)])
        '''
    )
    assert codes(scan_files, source) == []


SHOP_DISPATCH = TOOLS.replace(
    "import requests\n", "import requests\nfrom tenacity import retry, stop_after_attempt\n"
) + textwrap.dedent(
    """
    TOOLS = {"create_order": create_order, "search_products": search_products}

    @retry(stop=stop_after_attempt(3))
    def run_tool(name: str, args: dict) -> object:
        return TOOLS[name].invoke(args)
    """
)

SMS_AGENT = textwrap.dedent(
    '''
    import requests
    from langchain_core.tools import tool

    @tool
    def textme(body: str) -> dict:
        """Send me a text."""
        return requests.post("https://sms.example/send", json={"body": body}).json()
    '''
)


def test_a_global_retry_names_only_the_tools_its_registry_holds(scan_files: ScanFiles) -> None:
    # Two projects in one folder: the retry around TOOLS[name] cannot reach `textme`.
    result = scan_files({"shop/agent.py": SHOP_DISPATCH, "sms/agent.py": SMS_AGENT})
    (finding,) = [f for f in result.findings if f.code == "AG901"]
    assert finding.message.endswith("it also repeats non-idempotent tools (`create_order`)")


def test_a_global_retry_over_a_registry_of_reads_is_not_reported(scan_files: ScanFiles) -> None:
    reads_only = SHOP_DISPATCH.replace('"create_order": create_order, ', "")
    result = scan_files({"shop/agent.py": reads_only, "sms/agent.py": SMS_AGENT})
    assert [f for f in result.findings if f.code == "AG901"] == []


def test_a_global_retry_names_the_tools_of_the_code_it_imports(scan_files: ScanFiles) -> None:
    dispatcher = textwrap.dedent(
        """
        from tenacity import retry

        from shop.tools import REGISTRY

        @retry
        def run_tool(name: str, args: dict) -> object:
            return REGISTRY.get(name).invoke(args)
        """
    )
    shop_tools = SHOP_DISPATCH.split("TOOLS =")[0] + "REGISTRY = {}\n"
    result = scan_files(
        {
            "shop/__init__.py": "",
            "shop/tools.py": shop_tools,
            "shop/dispatch.py": dispatcher,
            "sms/agent.py": SMS_AGENT,
        }
    )
    messages = [f.message for f in result.findings if f.code == "AG901"]
    assert messages and all("`textme`" not in m and "`create_order`" in m for m in messages)
