"""A client that opens a websocket it keeps for later requests and greets the server on it
(``{"role": "client"}``) sends that greeting once per connection: it is set-up of every
request, not the effect of a tool that only asks for something. A message built from what
the caller hands over is still the call's own."""

from __future__ import annotations

from .conftest import ScanFiles, tool_verdicts

CLIENT = """
import json

import websockets


class BoardClient:
    def __init__(self, uri: str):
        self.uri = uri
        self.socket = None
        self.ready = False

    async def connect(self) -> None:
        self.socket = await websockets.connect(self.uri)
        await self.socket.send(json.dumps({"role": "client", "version": 2}))
        self.ready = True

    async def ask(self, kind: str, **fields) -> dict:
        if not self.ready:
            await self.connect()
        try:
            await self.socket.send(json.dumps({"type": kind, **fields}))
        except websockets.ConnectionClosed:
            await self.connect()
            await self.socket.send(json.dumps({"type": kind, **fields}))
        return json.loads(await self.socket.recv())

    async def open_and_post(self, text: str) -> None:
        self.socket = await websockets.connect(self.uri)
        await self.socket.send(text)
"""

SERVER = '''
from mcp.server.fastmcp import FastMCP

from client import BoardClient

mcp = FastMCP("board")
board = BoardClient("ws://localhost:8765")


@mcp.tool()
async def list_cards(column: str) -> dict:
    """The cards of a column."""
    return await board.ask("get_cards", column=column)


@mcp.tool()
async def post_raw(text: str) -> str:
    """Post a raw message on a fresh connection."""
    await board.open_and_post(text)
    return "posted"
'''


def test_a_greeting_sent_on_a_kept_connection_it_opens_is_set_up(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"client.py": CLIENT, "server.py": SERVER})
    assert verdicts["list_cards"] == ("read", set())
    assert verdicts["post_raw"][0] != "read"
