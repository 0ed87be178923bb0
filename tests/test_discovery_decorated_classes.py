"""A framework's tool decorator on a class: LangChain's ``@tool`` turns a pydantic model
into a tool the model may call (a signal such as "hand off" or "done"); the tool is the
class, and building it is all it does."""

from __future__ import annotations

from tests.test_tool_discovery import discover, line_of

MODEL_TOOLS = """\
from langchain_core.tools import tool
from pydantic import BaseModel


@tool
class Handoff(BaseModel):
    '''Hand the conversation to a person.'''

    reason: str


class Note(BaseModel):
    text: str
"""


def test_a_model_class_under_a_tool_decorator_is_a_tool() -> None:
    tools = discover({"desk/signals.py": MODEL_TOOLS})
    assert [(t.name, t.anchor.span.line) for t in tools] == [
        ("Handoff", line_of(MODEL_TOOLS, "class Handoff"))
    ]
