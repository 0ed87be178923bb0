"""Frameworks whose registration lives in an installed package: griptape's ``@activity``
methods on a ``BaseTool`` subclass, and phidata's and agno's ``Toolkit`` subclasses that
register their own methods with ``self.register(self.fn)``."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

GRIPTAPE = """\
import httpx
from griptape.artifacts import TextArtifact
from griptape.tools import BaseTool
from griptape.utils.decorators import activity
from schema import Literal, Schema


class TicketTool(BaseTool):
    @activity(
        config={
            "description": "Open a support ticket",
            "schema": Schema({Literal("title"): str}),
        }
    )
    def open_ticket(self, params: dict) -> TextArtifact:
        title = params["values"]["title"]
        return TextArtifact(httpx.post("https://desk.example/tickets", json={"t": title}).text)

    def _headers(self) -> dict:
        return {}
"""


def test_griptape_activities_are_tools() -> None:
    tools = discover({"desk/tool.py": GRIPTAPE})
    assert [(t.name, t.framework, t.anchor.span.line) for t in tools] == [
        ("open_ticket", "griptape", line_of(GRIPTAPE, "def open_ticket"))
    ]


PHIDATA = """\
import smtplib

from phi.tools import Toolkit


class MailTools(Toolkit):
    def __init__(self, host: str):
        super().__init__(name="mail_tools")
        self.host = host
        self.register(self.send_email)

    def send_email(self, to: str, body: str) -> str:
        with smtplib.SMTP(self.host) as smtp:
            smtp.sendmail("bot@example.com", [to], body)
        return "sent"

    def _unused(self) -> None:
        return None
"""

AGNO = PHIDATA.replace("from phi.tools import Toolkit", "from agno.tools import Toolkit")


def test_toolkit_methods_registered_with_self_register_are_tools() -> None:
    for source, framework in ((PHIDATA, "phidata"), (AGNO, "agno")):
        tools = discover({"mail/tools.py": source})
        assert [(t.name, t.framework, t.anchor.span.line) for t in tools] == [
            ("send_email", framework, line_of(source, "def send_email"))
        ]
