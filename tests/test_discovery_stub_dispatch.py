"""Tools declared to a framework as stubs, for their schemas only, and run by the project's
own loop branching on their names: what the branch calls is what the tool does. A tool
that does its own work keeps it."""

from __future__ import annotations

from .conftest import ScanFiles, tool_verdicts

GRAPH = '''
import sqlite3

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

DB = "notes.db"


def remove_note(user_id: int, note_id: int) -> str:
    with sqlite3.connect(DB) as conn:
        conn.execute("DELETE FROM notes WHERE id = ? AND user_id = ?", (note_id, user_id))
    return "deleted"


def list_notes(user_id: int) -> str:
    with sqlite3.connect(DB) as conn:
        rows = conn.execute("SELECT text FROM notes WHERE user_id = ?", (user_id,)).fetchall()
    return "\\n".join(row[0] for row in rows)


def log_usage(name: str) -> None:
    with sqlite3.connect(DB) as conn:
        conn.execute("INSERT INTO usage (tool) VALUES (?)", (name,))


@tool
def delete_note_tool(note_id: int) -> str:
    """Delete one of the user's notes."""
    pass  # run by call_tools


@tool
def show_notes_tool() -> str:
    """Show the user's notes."""
    pass  # run by call_tools


@tool
def word_count_tool(text: str) -> str:
    """Count the words of a text."""
    return str(len(text.split()))


model = ChatOpenAI(model="gpt-4o").bind_tools([delete_note_tool, show_notes_tool, word_count_tool])


def call_tools(state: dict) -> dict:
    replies = []
    for call in state["messages"][-1].tool_calls:
        if call["name"] == "delete_note_tool":
            text = remove_note(state["user_id"], **call["args"])
        elif call["name"] == "show_notes_tool":
            text = list_notes(state["user_id"])
        elif call["name"] == "word_count_tool":
            text = word_count_tool.invoke(call["args"])
            log_usage(call["name"])
        else:
            continue
        replies.append(ToolMessage(tool_call_id=call["id"], content=text))
    return {"messages": replies}
'''


def test_a_stub_tool_does_what_the_projects_branch_on_its_name_calls(
    scan_files: ScanFiles,
) -> None:
    verdicts = tool_verdicts(scan_files, {"agent.py": GRAPH})
    assert verdicts["delete_note_tool"][0] == "write"
    assert verdicts["show_notes_tool"] == ("read", set())
    # a tool with a body of its own does that; the branch's bookkeeping is the loop's
    assert verdicts["word_count_tool"] == ("read", set())
