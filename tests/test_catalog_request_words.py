"""What a request carries, as the catalogue says: the keywords of a request body
(``effects.body_kwargs``), the body-key words naming what a write identifies
(``effects.keys.identity_words``) and how a response's status is read
(``retries.response_status``), each extended from a project's own config."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles
from .test_keys_from_request import CLIENT


def codes_by_tool(scan_files: ScanFiles, files: dict[str, str], code: str) -> set[str]:
    result = scan_files({path: textwrap.dedent(text) for path, text in files.items()})
    return {f.tool or "" for f in result.findings if f.code == code}


def test_a_body_handed_to_a_helper_as_content_is_read_like_json(scan_files: ScanFiles) -> None:
    """A project's client takes the body as ``content`` (as httpx names it): linking an
    existing label by id repeats safely, creating a label does not."""
    client = CLIENT.replace("data", "content")
    assert "json=content" in client
    tools = '''
    from mcp.server.fastmcp import FastMCP

    from app.client import BoardClient

    mcp = FastMCP("boards")
    board = BoardClient()


    @mcp.tool()
    def label_card(card_id: str, label_id: str) -> dict:
        """Put an existing label on a card."""
        return board.request(f"/cards/{card_id}/labels", method="POST", content={"value": label_id})


    @mcp.tool()
    def new_card_label(card_id: str, name: str) -> dict:
        """Create a label on a card."""
        return board.request(f"/cards/{card_id}/labels", method="POST", content={"name": name})
    '''
    flagged = codes_by_tool(scan_files, {"app/client.py": client, "app/tools.py": tools}, "AG201")
    assert flagged == {"new_card_label"}


def test_identity_words_from_config_name_what_a_write_identifies(scan_files: ScanFiles) -> None:
    source = '''
    import uuid

    import requests
    from langchain_core.tools import tool


    @tool
    def save_product(name: str) -> dict:
        """Save a product in the catalogue."""
        body = {"sku": str(uuid.uuid4()), "name": name}
        return requests.put("https://shop.example/api/products", json=body).json()
    '''
    assert codes_by_tool(scan_files, {"agent.py": source}, "AG201") == set()
    config = '[tool.agentguard.effects.keys]\nidentity_words = ["sku"]\n'
    extended = codes_by_tool(scan_files, {"pyproject.toml": config, "agent.py": source}, "AG201")
    assert extended == {"save_product"}


def test_a_status_attribute_from_config_makes_a_status_retry_loop(scan_files: ScanFiles) -> None:
    """An SDK whose responses hold the status as ``http_status``: a loop that sends again on
    a 5xx re-sends the tool's create."""
    client = """
    import time

    import requests


    class ShopClient:
        base_url = "https://shop.example/api"

        def request(self, path: str, method: str = "GET", data: dict | None = None) -> dict:
            for attempt in range(3):
                response = self._send(method, self.base_url + path, data)
                if response.http_status < 400:
                    return response.payload
                if response.http_status < 500:
                    raise RuntimeError("refused")
                time.sleep(attempt + 1)
            raise RuntimeError("shop unavailable")

        def _send(self, method: str, url: str, data: dict | None):
            return requests.request(method, url, json=data, timeout=10)
    """
    tools = '''
    from langchain_core.tools import tool

    from shop.client import ShopClient

    client = ShopClient()


    @tool
    def create_order(cart_id: str) -> dict:
        """Create an order from a cart."""
        return client.request("/orders", method="POST", data={"cart": cart_id})
    '''
    files = {"shop/__init__.py": "", "shop/client.py": client, "shop/tools.py": tools}

    def retried(extra: dict[str, str]) -> set[str]:
        result = scan_files({p: textwrap.dedent(t) for p, t in {**files, **extra}.items()})
        return {f.tool or "" for f in result.findings if f.code.startswith("AG9")}

    assert retried({}) == set()
    config = '[tool.agentguard.retries.response_status]\nattributes = ["http_status"]\n'
    assert retried({"pyproject.toml": config}) == {"create_order"}
