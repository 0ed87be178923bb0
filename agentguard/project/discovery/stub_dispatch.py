"""The work a project's own loop does for a tool declared as a stub.

A project may declare its tools to a framework only for their schemas, with bodies that do
nothing (``pass``, a constant), and run the model's calls in its own loop, branching on
the tool's name::

    @tool
    async def delete_note_tool(note_id: int) -> str:
        \"\"\"Deletes a note.\"\"\"
        pass  # the work is done in call_tools

    async def call_tools(state):
        for call in state["messages"][-1].tool_calls:
            if call["name"] == "delete_note_tool":
                message = await delete_note(user_id, **call["args"])

What the branch on the tool's name calls is what the tool does. Only a stub is given its
branch's work: a tool whose function does something runs that, and a branch on the same
name elsewhere may be anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.project.discovery.dispatch import branches_by_name
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def add_branch_work(project: ProjectIndex, tools: list[ToolFacts]) -> None:
    """Give each stub tool the project functions its module's branches on its name call."""
    for tool in tools:
        if tool.inline is not None or tool.delegate is not None or len(tool.functions) != 1:
            continue
        function = tool.functions[0]
        facts = project.module_of(function)
        if facts is None or project.calls_in(function):
            continue
        for handler, body in branches_by_name(project, facts).get(tool.name, []):
            if handler == function:
                continue
            for target in project.targets_on_lines(handler, body.line, body.end_line, facts):
                if target not in tool.functions and target != handler:
                    tool.functions.append(target)
