"""Raw exception text sent from code several tools share (a helper, the ``except`` around a
low-level server's dispatch branches) is reported once per tool, in the tool, with the
shared cause as related location; each tool's finding is suppressible on its own."""

from __future__ import annotations

import io
import json

from agentguard.output import RenderOptions
from agentguard.output import sarif as sarif_output
from agentguard.output import text as text_output
from tests.conftest import ScanFiles, line_of, sqlite_mcp_server

INLINE_SERVER = sqlite_mcp_server(
    "notes",
    {"add_note": "Add a note", "count_notes": "Count notes"},
    """
    try:
        if name == "add_note":
            _run("INSERT INTO notes (body) VALUES (?)", arguments["body"])
            return [TextContent(type="text", text="added")]
        elif name == "count_notes":
            rows = _run("SELECT count(*) FROM notes")
            return [TextContent(type="text", text=str(rows[0][0]))]
        raise ValueError(f"unknown tool {name}")
    except sqlite3.Error as e:
        return [TextContent(type="text", text=f"Database error: {e}")]
    except Exception as e:
        return [TextContent(type="text", text=f"Error: {str(e)}")]
    """,
)


def test_each_inline_branch_gets_one_finding_in_its_branch(scan_files: ScanFiles) -> None:
    result = scan_files({"server.py": INLINE_SERVER}, select=("AG601",))
    found = sorted((f.tool, f.span.line, [r.span.line for r in f.related]) for f in result.findings)
    handlers = [line_of(INLINE_SERVER, "Database error"), line_of(INLINE_SERVER, '"Error: {')]
    assert found == [
        ("add_note", line_of(INLINE_SERVER, '_run("INSERT'), handlers),
        ("count_notes", line_of(INLINE_SERVER, '_run("SELECT'), handlers),
    ]
    add_note = next(f for f in result.findings if f.tool == "add_note")
    assert add_note.severity.value == "error"  # the branch writes
    assert "`except` in `call_tool`" in add_note.message


def test_one_branch_finding_is_suppressed_in_that_branch_only(scan_files: ScanFiles) -> None:
    quiet = INLINE_SERVER.replace(
        '            rows = _run("SELECT count(*) FROM notes")\n',
        '            rows = _run("SELECT count(*) FROM notes")  # agentguard: ignore[AG601] a count\n',
    )
    result = scan_files({"server.py": quiet}, select=("AG601",))
    assert [f.tool for f in result.findings] == ["add_note"]
    assert [f.tool for f in result.suppressed] == ["count_notes"]


SHARED_HELPER = """\
import requests
from langchain_core.tools import BaseTool


class CrmClient:
    def _send(self, method: str, path: str, body: dict | None = None) -> dict:
        try:
            response = requests.request(method, f"https://crm.example{path}", json=body, timeout=10)
            response.raise_for_status()
            return response.json()
        except requests.RequestException as exc:
            return {"ok": False, "error": str(exc)}

    def get(self, path: str) -> dict:
        return self._send("GET", path)

    def post(self, path: str, body: dict) -> dict:
        return self._send("POST", path, body)


client = CrmClient()


class FindContactTool(BaseTool):
    name: str = "find_contact"
    description: str = "Find a contact by email."

    def _run(self, email: str) -> dict:
        return client.get(f"/contacts?email={email}")


class AddNoteTool(BaseTool):
    name: str = "add_note"
    description: str = "Add a note to a contact."

    def _run(self, contact_id: str, text: str) -> dict:
        result = client.post(f"/contacts/{contact_id}/notes", {"text": text})
        return {"note": result}


def audit(path: str) -> None:
    client.get(path)
"""


def test_a_helper_shared_by_two_tools_gives_each_tool_its_finding(scan_files: ScanFiles) -> None:
    result = scan_files({"crm.py": SHARED_HELPER}, select=("AG601",))
    handler = line_of(SHARED_HELPER, '"error": str(exc)')
    found = sorted(
        (f.tool, f.span.line, [r.span.line for r in f.related], f.severity.value)
        for f in result.findings
    )
    assert found == [
        ("add_note", line_of(SHARED_HELPER, "result = client.post("), [handler], "error"),
        # a read: a warning, still in the tool
        ("find_contact", line_of(SHARED_HELPER, "return client.get("), [handler], "warning"),
    ]
    add_note = next(f for f in result.findings if f.tool == "add_note")
    # the chain from the tool through `post` to `_send`, then the handler itself
    assert [s.label for s in add_note.evidence] == [
        "`_run` calls `post`",
        "`post` calls `_send`",
        "helper `_send`",
    ]
    assert len({f.fingerprint for f in result.findings}) == 2


def test_text_output_says_the_findings_share_one_cause(scan_files: ScanFiles) -> None:
    result = scan_files({"crm.py": SHARED_HELPER}, select=("AG601",))
    stream = io.StringIO()
    text_output.render(result, stream, RenderOptions(color=False))
    out = stream.getvalue()
    handler = "crm.py:{}".format(line_of(SHARED_HELPER, '"error": str(exc)'))
    assert out.count("one cause shared with 1 other finding") == 2
    assert f"(tools `find_contact`): {handler}" in out
    assert f"(tools `add_note`): {handler}" in out


def test_sarif_names_the_shared_cause_as_a_related_location(scan_files: ScanFiles) -> None:
    result = scan_files({"crm.py": SHARED_HELPER}, select=("AG601",))
    stream = io.StringIO()
    sarif_output.render(result, stream, RenderOptions(color=False))
    runs = json.loads(stream.getvalue())["runs"]
    handler = line_of(SHARED_HELPER, '"error": str(exc)')
    for entry in runs[0]["results"]:
        related = entry["relatedLocations"]
        first = related[0]
        assert first["physicalLocation"]["region"]["startLine"] == handler
        assert first["message"]["text"] == "helper `_send`"
        # the cause is listed once, with its evidence label
        lines = [r["physicalLocation"]["region"]["startLine"] for r in related]
        assert lines.count(handler) == 1


ERROR_HELPERS = """\
import httpx
from llama_index.core.tools.tool_spec.base import BaseToolSpec


class TicketToolSpec(BaseToolSpec):
    spec_functions = ["open_ticket", "assign_ticket", "close_ticket"]

    def _describe(self, error: Exception) -> str:
        return f"{type(error).__name__}: {error}"

    def _failure(self, error: Exception) -> dict:
        return {"ok": False, "message": self._describe(error)}

    def _quiet(self, error: Exception) -> dict:
        return {"ok": False, "message": type(error).__name__}

    def open_ticket(self, title: str) -> dict:
        \"\"\"Open a ticket.\"\"\"
        try:
            return httpx.post("https://tickets.example/api", json={"title": title}).json()
        except httpx.HTTPError as e:
            return self._failure(e)

    def assign_ticket(self, ticket_id: str, user: str) -> dict:
        \"\"\"Assign a ticket.\"\"\"
        try:
            return httpx.put(f"https://tickets.example/api/{ticket_id}", json={"to": user}).json()
        except httpx.HTTPError as e:
            return {"assigned": False, "detail": self._failure(e)}

    def close_ticket(self, ticket_id: str) -> dict:
        \"\"\"Close a ticket.\"\"\"
        try:
            return httpx.delete(f"https://tickets.example/api/{ticket_id}").json()
        except httpx.HTTPError as e:
            return self._quiet(e)
"""


def test_error_text_through_chained_self_helpers(scan_files: ScanFiles) -> None:
    result = scan_files({"tickets.py": ERROR_HELPERS}, select=("AG601",))
    found = [(f.tool, f.span.line) for f in result.findings]
    # _failure hands the exception to _describe, which formats it; _quiet names its type
    assert found == [
        ("open_ticket", line_of(ERROR_HELPERS, "return self._failure(e)")),
        ("assign_ticket", line_of(ERROR_HELPERS, '"detail": self._failure(e)')),
    ]


BATCH_TOOL = """\
from langchain_core.tools import tool


def parse_rows(rows: list) -> list:
    return [dict(r) for r in rows]


@tool
def import_batches(batches: list) -> dict:
    \"\"\"Parse several batches of rows.\"\"\"
    results = []
    failed = 0
    for batch in batches:
        error = None
        try:
            rows = parse_rows(batch)
        except Exception as e:
            rows = None
            error = str(e)
            failed += 1
        results.append({"rows": rows, "error": error})
    summary = {"batches": len(batches), "failed": failed, "results": results}
    return summary


@tool
def count_batches(batches: list) -> int:
    \"\"\"Count the batches that parse.\"\"\"
    failures = []
    for batch in batches:
        try:
            parse_rows(batch)
        except Exception as e:
            message = str(e)
            failures.append(message)
    return len(failures)
"""


def test_error_text_collected_into_a_returned_container(scan_files: ScanFiles) -> None:
    result = scan_files({"batches.py": BATCH_TOOL}, select=("AG601",))
    found = [(f.tool, f.span.line) for f in result.findings]
    # count_batches returns only how many failed: no text reaches the model
    assert found == [("import_batches", line_of(BATCH_TOOL, "return summary"))]


# An own OpenAI loop's dispatch binds each branch's result and returns it after the branches;
# one branch's helper returns the exception's text from its own ``except``.
RESULT_AFTER_BRANCHES = """\
import json

import requests
from openai import OpenAI

client = OpenAI()
SPECS = [
    {"type": "function", "function": {"name": "rename_board", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "list_boards", "parameters": {"type": "object"}}},
]


def _rename(board_id: str, title: str) -> dict:
    try:
        answer = requests.put(f"https://boards.example/api/{board_id}", json={"title": title}, timeout=10)
        return answer.json()
    except Exception as e:
        return {"error": f"could not rename: {str(e)}"}


def list_boards() -> list:
    return requests.get("https://boards.example/api", timeout=10).json()


def run_tool(name: str, arguments: dict) -> dict:
    if name == "rename_board":
        result = _rename(arguments["board_id"], arguments["title"])
    elif name == "list_boards":
        result = {"boards": list_boards()}
    else:
        result = {"error": "unknown tool"}
    return result


def ask(question: str) -> str:
    reply = client.chat.completions.create(model="gpt-4o", messages=[], tools=SPECS)
    for call in reply.choices[0].message.tool_calls or []:
        return json.dumps(run_tool(call.function.name, json.loads(call.function.arguments)))
    return reply.choices[0].message.content
"""


def test_a_result_a_branch_binds_and_the_dispatch_returns_after_its_branches_carries_the_helpers_text(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"agent.py": RESULT_AFTER_BRANCHES}, select=("AG601",))
    assert [f.tool for f in result.findings] == ["rename_board"]
    assert "`except` in `_rename`" in result.findings[0].message


# A hand-written loop whose branches each catch their own errors: one branch does the work
# itself, the other calls a function of its own name.
BRANCHES_CATCHING = """\
import json

import requests
from openai import OpenAI

client = OpenAI()
SPECS = [
    {"type": "function", "function": {"name": "pin_message", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "read_channel", "parameters": {"type": "object"}}},
]


def read_channel(channel: str) -> list:
    return requests.get(f"https://chat.example/api/{channel}", timeout=10).json()


class Assistant:
    def run_tool(self, name: str, arguments: dict) -> str:
        if name == "pin_message":
            try:
                requests.post("https://chat.example/api/pins", json=arguments, timeout=10)
                return "pinned"
            except Exception as e:
                return f"could not pin: {e}"
        elif name == "read_channel":
            try:
                return json.dumps(read_channel(arguments["channel"]))
            except Exception as e:
                return f"could not read: {e}"
        return "unknown tool"

    def ask(self, question: str) -> str:
        reply = client.chat.completions.create(model="gpt-4o", messages=[], tools=SPECS)
        for call in reply.choices[0].message.tool_calls or []:
            return self.run_tool(call.function.name, json.loads(call.function.arguments))
        return reply.choices[0].message.content
"""


def test_each_branch_of_a_hand_written_loop_catching_its_own_errors_is_reported_in_its_tool(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"agent.py": BRANCHES_CATCHING}, select=("AG601",))
    found = sorted((f.tool, f.span.line) for f in result.findings)
    assert found == [
        ("pin_message", line_of(BRANCHES_CATCHING, "could not pin")),
        ("read_channel", line_of(BRANCHES_CATCHING, "def read_channel")),
    ]


# Actions the model answers with in its text, run by the project's branches: where their
# results go is the project's choice (here, printed for the user), not the model's reply.
PROMPT_ACTIONS_TO_USER = '''
import json

import requests

OLLAMA = "http://localhost:11434/api/generate"
PROMPT = """Answer with one JSON action. ALLOWED ACTIONS:
- add_item: {"action": "add_item", "name": "string"}
- remove_item: {"action": "remove_item", "name": "string"}
INSTRUCTION: """


def run_action(action: dict) -> str:
    try:
        if action["action"] == "add_item":
            requests.post("https://pantry.example/items", json={"name": action["name"]}, timeout=10)
            return "added"
        elif action["action"] == "remove_item":
            requests.delete(f"https://pantry.example/items/{action['name']}", timeout=10)
            return "removed"
    except Exception as e:
        return f"failed: {e}"
    return "unknown action"


def handle(instruction: str) -> None:
    answer = requests.post(OLLAMA, json={"model": "llama3", "prompt": PROMPT + instruction}, timeout=60)
    print(run_action(json.loads(answer.json()["response"])))
'''


def test_a_prompt_actions_dispatcher_is_no_tool_call_runner_whose_answer_reaches_the_model(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"bot.py": PROMPT_ACTIONS_TO_USER}, select=("AG601",))
    assert sorted(t.name for t in result.project.tools) == ["add_item", "remove_item"]
    assert result.findings == []
