"""Open-world effects: a call that leaves the project and that the catalogue does not know is
judged by its verb, and what cannot be judged is shown as unknown, never as safe.

Each case is a small tool calling a client the way its library's documentation shows; the
assertions are what a user sees: the tool's effects, its report row and its findings.
"""

from __future__ import annotations

import textwrap

import pytest

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.report.model import build_report

from .conftest import FIXTURES, ScanFiles, kinds_and_codes, only_tool, tool_module, tool_verdicts

GOOGLE = "from googleapiclient.discovery import build"
GOOGLE_SERVICE = 'service = build("calendar", "v3")'
SLACK = "from slack_sdk import WebClient"
SLACK_CLIENT = 'client = WebClient(token="xoxb-1")'

# (id, imports, prelude, body, effect kinds, whether AG201 fires)
CASES = [
    # Google API discovery clients: the request a chain executes decides.
    (
        "calendar-events-insert",
        GOOGLE,
        GOOGLE_SERVICE,
        'return service.events().insert(calendarId="primary", body={"summary": value}).execute()',
        ["network_write"],
        True,
    ),
    (
        "calendar-events-list",
        GOOGLE,
        GOOGLE_SERVICE,
        'return service.events().list(calendarId="primary", q=value).execute()',
        [],
        False,
    ),
    (
        "gmail-messages-send",
        GOOGLE,
        'service = build("gmail", "v1")',
        'return service.users().messages().send(userId="me", body={"raw": value}).execute()',
        ["network_write"],
        True,
    ),
    (
        "gmail-drafts-get",
        GOOGLE,
        'service = build("gmail", "v1")',
        'return service.users().drafts().get(userId="me", id=value).execute()',
        [],
        False,
    ),
    (
        "sheets-values-get-held-in-a-variable",
        GOOGLE,
        'service = build("sheets", "v4")',
        'request = service.spreadsheets().values().get(spreadsheetId=value, range="A1:B2")\n'
        "return request.execute()",
        [],
        False,
    ),
    (
        "sheets-values-append",
        GOOGLE,
        'service = build("sheets", "v4")',
        "return service.spreadsheets().values().append(\n"
        '    spreadsheetId=value, range="A1", valueInputOption="RAW", body={"values": [[1]]}\n'
        ").execute()",
        ["network_write"],
        True,
    ),
    (
        "drive-files-delete",
        GOOGLE,
        'service = build("drive", "v3")',
        "return service.files().delete(fileId=value).execute()",
        ["destructive"],
        False,
    ),
    (
        "tasks-tasks-patch-over-many-lines",
        GOOGLE,
        'service = build("tasks", "v1")',
        "return (\n"
        "    service.tasks()\n"
        "    .patch(\n"
        '        tasklist="@default",\n'
        "        task=value,\n"
        '        body={"status": "completed", "notes": "closed by the assistant after review"},\n'
        "    )\n"
        "    .execute()\n"
        ")",
        ["write"],
        False,
    ),
    # slack_sdk: the first real verb of the method (chat_postMessage posts).
    (
        "slack-chat-scheduleMessage",
        SLACK,
        SLACK_CLIENT,
        'return client.chat_scheduleMessage(channel="C1", text=value, post_at=1700000000)',
        ["network_write"],
        True,
    ),
    (
        "slack-conversations-history",
        SLACK,
        SLACK_CLIENT,
        'return client.conversations_history(channel="C1", limit=value)',
        [],
        False,
    ),
    (
        "slack-async-reactions-add",
        "from slack_sdk.web.async_client import AsyncWebClient",
        'client = AsyncWebClient(token="xoxb-1")',
        'return client.reactions_add(channel="C1", name="eyes", timestamp=value)',
        ["network_write"],
        True,
    ),
    # python-gitlab: the first verb of a batch method decides.
    (
        "batch-create",
        "import gitlab",
        'gl_client = gitlab.Gitlab("https://gitlab.example", private_token="t")',
        'return gl_client.batch_create_issues([{"title": value}])',
        ["network_write"],
        True,
    ),
    # A noun alone reads: a maps client's place details, a JIRA issue by key.
    (
        "maps-place",
        "import googlemaps",
        'maps_client = googlemaps.Client(key="k")',
        "return maps_client.place(place_id=value)",
        [],
        False,
    ),
    (
        "jira-issue",
        "from jira import JIRA",
        'jira = JIRA("https://jira.example")',
        "return jira.issue(value).fields.summary",
        [],
        False,
    ),
    # Operation ids named after their HTTP method, then their own verb (an OpenAPI client):
    # the verb after the method decides; the method word alone is the verb.
    (
        "openapi-post-then-set",
        "from scheduler_client.api.job_api import JobApi",
        "jobs_client = JobApi()",
        'return jobs_client.post_set_job_state(job_id=value, state="paused")',
        ["write"],
        False,
    ),
    (
        "openapi-post-alone-creates",
        "from scheduler_client.api.job_api import JobApi",
        "jobs_client = JobApi()",
        "return jobs_client.post_job_run(job_id=value)",
        ["network_write"],
        True,
    ),
    # save() on an object just built creates it.
    (
        "save-on-object-just-built",
        "from simple_salesforce import Contact",
        "",
        "contact = Contact(last_name=value)\ncontact.save()\nreturn contact",
        ["network_write"],
        True,
    ),
    # Stripe's webhook helper checks a signature and parses the event: nothing is sent.
    (
        "stripe-webhook-event",
        "import stripe",
        "",
        'return stripe.Webhook.construct_event(value, "sig", "whsec_x")',
        [],
        False,
    ),
    # AppOpener starts a desktop application by name, or ends it.
    (
        "appopener-open",
        "from AppOpener import open",
        "",
        "open(value, match_closest=True)\nreturn 'opened'",
        ["exec"],
        False,
    ),
    (
        "appopener-close",
        "from AppOpener import close",
        "",
        "close(value)\nreturn 'closed'",
        ["destructive"],
        False,
    ),
    # psutil: a process's state is read; ending it deletes.
    (
        "psutil-process-state",
        "import psutil",
        "",
        "proc = psutil.Process(int(value))\n"
        "return {'created': proc.create_time(), 'cpu': proc.cpu_percent(interval=0.0), "
        "'kids': len(proc.children()), 'memory': psutil.virtual_memory().percent}",
        [],
        False,
    ),
    (
        "psutil-process-kill",
        "import psutil",
        "",
        "psutil.Process(int(value)).kill()\nreturn 'killed'",
        ["destructive"],
        False,
    ),
    # Chainlit's chat UI is the conversation: a message shown there changes nothing else.
    (
        "chainlit-message-shown",
        "import chainlit as cl",
        "",
        "import asyncio\n"
        "asyncio.run(cl.Message(content=value, elements=[cl.Image(url=value)]).send())\n"
        "return 'shown'",
        [],
        False,
    ),
    # A date spelled out from what a client answered changes nothing; a filter asks.
    (
        "datetime-spelled-out",
        "import discord",
        "def describe(channel: discord.TextChannel) -> str:\n"
        "    return channel.name + channel.created_at.isoformat()",
        "return describe(value)",
        [],
        False,
    ),
    (
        "filter-asks",
        "from todoist_api_python.api import TodoistAPI",
        'api = TodoistAPI("token")',
        "return api.filter_tasks(query=value)",
        [],
        False,
    ),
]


@pytest.mark.parametrize(
    ("imports", "prelude", "body", "kinds", "keyless"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_external_calls_are_judged_by_their_verb(
    scan_files: ScanFiles,
    imports: str,
    prelude: str,
    body: str,
    kinds: list[str],
    keyless: bool,
) -> None:
    found, codes = kinds_and_codes(scan_files, tool_module(imports, prelude, body))
    assert found == kinds
    assert ("AG201" in codes) is keyless
    assert ("AG101" in codes) is bool(kinds)


def test_a_call_nothing_can_judge_is_unknown_not_safe(scan_files: ScanFiles) -> None:
    files = tool_module(SLACK, SLACK_CLIENT, "return client.users_profile(user=value)")
    tool, result = only_tool(scan_files, files)
    assert [e.kind for e in tool.effects] == ["unknown"]
    findings = [(f.code, f.severity.value) for f in result.findings]
    assert findings == [("AG104", "info")]
    assert "client.users_profile" in result.findings[0].message
    assert "[tool.agentguard.effects]" in result.findings[0].message
    (row,) = build_report(result).tools
    assert row.risk.value == "unknown"
    assert row.replay.value.startswith("unknown")
    assert row.replay.status == "unknown"


def test_a_declared_tool_gets_no_unjudged_finding(scan_files: ScanFiles) -> None:
    files = tool_module(
        SLACK + "\nfrom agentguard.runtime import guarded\nfrom app.runtime import runtime",
        SLACK_CLIENT,
        "return client.users_profile(user=value)",
    )
    files["agent.py"] = files["agent.py"].replace(
        "@tool\n",
        '@tool\n@guarded(runtime, risk="read", idempotency="idempotent", replay="auto")\n',
    )
    assert "AG104" not in {f.code for f in scan_files(files).findings}


def test_results_of_a_judged_call_are_not_unknown(scan_files: ScanFiles) -> None:
    body = 'return client.conversations_list(limit=value).get("channels")'
    found, codes = kinds_and_codes(scan_files, tool_module(SLACK, SLACK_CLIENT, body))
    assert (found, codes) == ([], [])


def test_a_client_handed_out_is_not_judged_itself(scan_files: ScanFiles) -> None:
    body = 'bucket = s3_resource.Bucket("b")\nreturn bucket.objects_listing(value)'
    prelude = 's3_resource = boto3.resource("s3")'
    found, _ = kinds_and_codes(scan_files, tool_module("import boto3", prelude, body))
    assert found == ["unknown"]  # the listing is unknown; handing out the bucket is no call


def test_an_answer_only_converted_is_no_handle_the_call_stays_unknown(
    scan_files: ScanFiles,
) -> None:
    # An OpenAPI-generated client: the operation names no verb, and its answer is only
    # turned into a dict; the call is what acted, so it stays unknown, never read.
    body = "answer = client.users_profile(user=value)\nreturn str(answer.to_dict())"
    found, codes = kinds_and_codes(scan_files, tool_module(SLACK, SLACK_CLIENT, body))
    assert (found, codes) == (["unknown"], ["AG104"])


def test_an_answer_read_as_a_mapping_is_no_handle_the_call_stays_unknown(
    scan_files: ScanFiles,
) -> None:
    # A graph driver's session runs a statement the caller wrote; its result is only read
    # (``keys()``, iterated): reading an answer does not make the call a handle factory.
    body = (
        "with graph.session() as session:\n"
        "    result = session.run(value)\n"
        "    rows = [list(record) for record in result]\n"
        "    return [list(result.keys()), *rows]"
    )
    prelude = 'graph = GraphDatabase.driver("bolt://graph.example:7687")'
    module = tool_module("from graphdb import GraphDatabase", prelude, body)
    found, codes = kinds_and_codes(scan_files, module)
    assert (found, codes) == (["unknown"], ["AG104"])


def test_an_answer_read_by_its_keys_is_no_handle_the_call_stays_unknown(
    scan_files: ScanFiles,
) -> None:
    # ``ack = client.request_task(...)``, then ``ack.get("task_id")``: the answer's fields are
    # read; the call that answered is what acted, and no name says what it does.
    body = 'ack = client.request_task(capability=value)\nreturn str(ack.get("task_id"))'
    module = tool_module(SLACK, SLACK_CLIENT, body)
    found, codes = kinds_and_codes(scan_files, module)
    assert (found, codes) == (["unknown"], ["AG104"])


@pytest.mark.parametrize(
    ("body", "kinds"),
    [
        ("return client.message(value)", []),  # looks a message up by its id
        ('return client.message(value, "Deploy finished")', ["unknown"]),  # hands it a text
        ('return client.comment(value, body={"text": "+1"})', ["unknown"]),
    ],
)
def test_a_noun_named_method_handed_content_is_no_lookup(
    scan_files: ScanFiles, body: str, kinds: list[str]
) -> None:
    found, _ = kinds_and_codes(scan_files, tool_module(SLACK, SLACK_CLIENT, body))
    assert found == kinds


def test_oauth_token_file_refresh_is_not_a_side_effect(scan_files: ScanFiles) -> None:
    prelude = """
    def _get_credentials(token_path: str) -> object:
        creds = Credentials.from_authorized_user_file(token_path)
        creds.refresh(Request())
        with open(token_path, "w") as token:
            token.write(creds.to_json())
        return creds
    """
    body = (
        'service = build("gmail", "v1", credentials=_get_credentials("token.json"))\n'
        'return service.users().messages().list(userId="me", q=value).execute()'
    )
    imports = (
        GOOGLE
        + "\nfrom google.auth.transport.requests import Request"
        + "\nfrom google.oauth2.credentials import Credentials"
    )
    found, codes = kinds_and_codes(scan_files, tool_module(imports, prelude, body))
    assert (found, codes) == ([], [])


def test_a_credential_provider_built_for_a_client_is_not_a_side_effect(
    scan_files: ScanFiles,
) -> None:
    # the client is connected with a credential provider that an identity library builds
    # (``create_from_service_principal``): the tool only reads through that client
    prelude = """
    def _create_principal_provider() -> object:
        return create_from_service_principal("client-id", "secret", "tenant")

    def create_credential_provider() -> object:
        return _create_principal_provider()

    def get_connection() -> Redis:
        return Redis(host="cache.internal", credential_provider=create_credential_provider())
    """
    body = "return get_connection().get(value)"
    imports = "from redis import Redis\nfrom idlib.providers import create_from_service_principal"
    found, codes = kinds_and_codes(scan_files, tool_module(imports, prelude, body))
    assert (found, codes) == ([], [])


def test_a_tool_that_creates_a_credential_remotely_still_writes(scan_files: ScanFiles) -> None:
    # a credential made on a remote service by a helper that names no provider object
    prelude = """
    def create_credential(name: str) -> object:
        return requests.post("https://iam.example.com/credentials", json={"name": name})
    """
    body = "return create_credential(value)"
    found, codes = kinds_and_codes(scan_files, tool_module("import requests", prelude, body))
    assert found == ["network_write"] and "AG101" in codes


def test_a_stored_api_key_read_back_is_not_a_side_effect(scan_files: ScanFiles) -> None:
    # the key store makes its folder when missing on every load: how the program signs in,
    # not what the tool does
    prelude = """
    def _key_store() -> dict:
        folder = os.path.expanduser("~/.quotes")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "keys.json"), "a+") as handle:
            handle.seek(0)
            return json.loads(handle.read() or "{}")

    def get_api_key(name: str) -> str:
        return os.environ.get(name) or _key_store()[name]
    """
    body = 'return requests.get("https://quotes.example/v1/quotes", params={"q": value, "key": get_api_key("QUOTES_KEY")}).text'
    imports = "import json\nimport os\n\nimport requests"
    found, codes = kinds_and_codes(scan_files, tool_module(imports, prelude, body))
    assert (found, codes) == ([], [])


def test_a_file_the_tool_writes_is_still_a_write(scan_files: ScanFiles) -> None:
    body = 'with open(f"reports/{value}.txt", "w") as out:\n    out.write(value)\nreturn "ok"'
    found, codes = kinds_and_codes(scan_files, tool_module("", "", body))
    assert found == ["write"] and "AG101" in codes


@pytest.mark.parametrize(
    ("body", "kinds"),
    [
        ('command = f"kubectl describe pod {value}"\nreturn check_output(command.split())', []),
        ('return check_output(["kubectl", "logs", "--previous", value])', []),
        ('return check_output(["git", "status", "--short"], cwd=value)', []),
        ('return check_output(["kubectl", "delete", "pod", value])', ["exec"]),
        ("return check_output(value.split())", ["exec"]),
        ('return check_output(f"kubectl get pods; {value}", shell=True)', ["exec"]),
        # a program no catalogue knows: its literal subcommand names the operation
        ('return check_output(["quotes", "search", value, "--format", "json"])', []),
        (
            'cmd = ["quotes", "list", "--limit", "5"]\ncmd += ["--tag", value]\nreturn check_output(cmd)',
            [],
        ),
        ('return check_output(["quotes", "publish", value])', ["exec"]),
        # a command run to print data: an output format and no verb that writes
        ('return check_output(["quotes", "markets", "--format", "json", "-n", value])', []),
        ('return check_output(["quotes", "recommend", "-s", value, "--format=yaml"])', []),
        ('return check_output(["quotes", "trending", value, "--json"])', []),
        ('return check_output(["quotes", "publish", value, "--format", "json"])', ["exec"]),
        ('return check_output(["quotes", "markets", "-o", value])', ["exec"]),
        # command groups of no verb before the operation
        ('return check_output(["netctl", "wifi", "show", "interfaces"])', []),
        ('return check_output(["netctl", "wifi", "remove", value])', ["exec"]),
        ('return check_output(["hubctl", "issue", "create", value])', ["exec"]),
        ('return check_output(["quotes", "commit", value])', ["exec"]),
        ('return check_output(["quotes", "read_all.sh", value])', ["exec"]),
        # a program that only reads, whatever options it is given
        ('return check_output(["grep", "-rn", value, "."])', []),
        ('return check_output(["ls"])', []),
        ('return check_output(f"grep -c {value} notes.txt > count.txt", shell=True)', ["exec"]),
        ('return check_output(["find", ".", "-name", value, "-delete"])', ["exec"]),
        # errors joined to the output, or discarded: still only printed
        ('return check_output("quotes list --limit 5 2>&1", shell=True)', []),
        ('return check_output("quotes list 2>/dev/null", shell=True)', []),
        ('return check_output("quotes list 2> errors.txt", shell=True)', ["exec"]),
        # a program that reads unless given one of its writing options
        ('return check_output(["journalctl", "-k", "--no-pager", "-n", "300"])', []),
        ('return check_output(["journalctl", "--vacuum-time", value])', ["exec"]),
        ('return check_output(["dmesg", "--clear"])', ["exec"]),
        ('return check_output(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])', []),
        # each literal command a loop runs
        (
            'out = ""\nfor command in [["dmesg", "--ctime"], ["journalctl", "-k"]]:\n'
            "    out += check_output(command)\nreturn out",
            [],
        ),
        (
            'out = ""\nfor command in [["dmesg", "--ctime"], ["dmesg", "-C"]]:\n'
            "    out += check_output(command)\nreturn out",
            ["exec"],
        ),
    ],
    ids=[
        "describe",
        "logs",
        "git-status",
        "delete",
        "model-command",
        "shell-chain",
        "unknown-program-search",
        "unknown-program-list-built",
        "unknown-program-publish",
        "unknown-program-noun-printing-json",
        "unknown-program-word-printing-yaml",
        "unknown-program-json-flag",
        "unknown-program-publish-printing-json",
        "unknown-program-output-file",
        "unknown-program-group-show",
        "unknown-program-group-remove",
        "unknown-program-group-named-like-a-read",
        "unknown-program-commit",
        "unknown-program-script",
        "read-program-grep",
        "read-program-alone",
        "read-program-redirected",
        "find-may-delete",
        "stderr-joined",
        "stderr-discarded",
        "stderr-to-a-file",
        "read-unless-reading",
        "read-unless-vacuum",
        "read-unless-clear",
        "read-unless-query-csv",
        "loop-of-reading-commands",
        "loop-with-a-clearing-command",
    ],
)
def test_a_literal_read_only_command_is_a_read(
    scan_files: ScanFiles, body: str, kinds: list[str]
) -> None:
    found, _ = kinds_and_codes(
        scan_files, tool_module("from subprocess import check_output", "", body)
    )
    assert found == kinds


def test_a_user_catalogue_entry_teaches_an_unknown_call(scan_files: ScanFiles) -> None:
    files = tool_module(SLACK, SLACK_CLIENT, "return client.users_profile(user=value)")
    files["pyproject.toml"] = (
        '[tool.agentguard.effects]\nreads = ["slack_sdk.WebClient.users_profile"]\n'
    )
    found, codes = kinds_and_codes(scan_files, files)
    assert (found, codes) == ([], [])


def test_sql_text_not_readable_statically_is_never_read_because_of_a_name(
    scan_files: ScanFiles,
) -> None:
    source = (
        "import psycopg\n"
        "from langchain_core.tools import tool\n\n"
        "@tool\n"
        "def search_records(statement: str) -> list:\n"
        '    """Search the records with a SQL statement."""\n'
        '    with psycopg.connect("postgresql://db/app") as conn:\n'
        "        return conn.execute(statement).fetchall()\n"
    )
    tool, result = only_tool(scan_files, {"agent.py": source})
    # named to search: not a write finding (precision first), but not read either
    assert [e.kind for e in tool.effects] == ["unknown"]
    assert {f.code for f in result.findings} == {"AG104"}
    renamed = source.replace("search_records", "run_statement").replace("Search the", "Run on")
    result = scan_files({"agent.py": renamed})
    assert [e.kind for e in result.project.tools[0].effects] == ["write"]


def test_save_on_a_project_object_is_followed_not_guessed(scan_files: ScanFiles) -> None:
    source = (
        "from langchain_core.tools import tool\n\n"
        "class Note:\n"
        "    def __init__(self, text: str) -> None:\n"
        "        self.text = text\n\n"
        "    def save(self) -> None:\n"
        "        print(self.text)\n\n"
        "@tool\n"
        "def act(value: str) -> str:\n"
        '    """Keep a note."""\n'
        "    Note(value).save()\n"
        '    return "ok"\n'
    )
    result = scan_files({"agent.py": source})
    assert result.project.tools[0].effects == []
    # followed: a save that writes a file is the tool's write
    writing = source.replace("print(self.text)", 'open("notes.txt", "a").write(self.text)')
    result = scan_files({"agent.py": writing})
    assert [(e.kind, e.sink) for e in result.project.tools[0].effects] == [("write", "open")]


# SDK families, each call written as its library's documentation shows it:
# (id, module source after the langchain import, effect kinds of tool `act`)
SDK_FAMILIES = [
    (
        "aiosmtplib-send",
        "import aiosmtplib\n\n@tool\nasync def act(value: str) -> None:\n"
        '    """Mail."""\n    await aiosmtplib.send(value, hostname="127.0.0.1", port=25)\n',
        ["message"],
    ),
    (
        "ipython-run-cell",
        "@tool\ndef act(value: str) -> None:\n"
        '    """Run a cell."""\n    get_ipython().run_cell(value)\n',
        ["exec"],
    ),
    (
        "docker-containers-run",
        "import docker\n\nclient = docker.from_env()\n\n@tool\ndef act(value: str) -> str:\n"
        '    """Run."""\n    return client.containers.run("ubuntu:latest", value)\n',
        ["exec"],
    ),
    (
        "docker-containers-list",
        "import docker\n\nclient = docker.from_env()\n\n@tool\ndef act(value: str) -> list:\n"
        '    """List."""\n    return client.containers.list(all=bool(value))\n',
        [],
    ),
    (
        "boto3-resource-object-put",
        'import boto3\n\ns3 = boto3.resource("s3")\n\n@tool\ndef act(value: str) -> None:\n'
        '    """Store."""\n    s3.Object("mybucket", value).put(Body=b"testing")\n',
        ["write"],
    ),
    (
        "python-gitlab-manager-create",
        "import gitlab\n\n"
        'gl = gitlab.Gitlab("https://gitlab.example.com", private_token="t")\n\n'
        "@tool\ndef act(value: str) -> None:\n"
        '    """File an issue."""\n'
        "    project = gl.projects.get(1)\n"
        '    project.issues.create({"title": value})\n',
        ["network_write"],
    ),
    (
        "pathlib-open-write",
        "from pathlib import Path\n\n@tool\ndef act(value: str) -> None:\n"
        '    """Write."""\n    with Path("out.txt").open("w") as fh:\n        fh.write(value)\n',
        ["write"],
    ),
    (
        "pathlib-open-read",
        "from pathlib import Path\n\n@tool\ndef act(value: str) -> str:\n"
        '    """Read."""\n    with Path(value).open() as fh:\n        return fh.read()\n',
        [],
    ),
    (
        "open-mode-in-a-variable",
        "@tool\ndef act(value: str, append: bool = False) -> None:\n"
        '    """Write."""\n    mode = "a" if append else "w"\n'
        '    with open("out.txt", mode) as fh:\n        fh.write(value)\n',
        ["write"],
    ),
]


@pytest.mark.parametrize(
    ("source", "kinds"), [c[1:] for c in SDK_FAMILIES], ids=[c[0] for c in SDK_FAMILIES]
)
def test_sdk_families(scan_files: ScanFiles, source: str, kinds: list[str]) -> None:
    files = {"agent.py": "from langchain_core.tools import tool\n" + source}
    found, codes = kinds_and_codes(scan_files, files)
    assert found == kinds
    assert ("AG101" in codes) is bool(kinds)


def test_report_counts_unjudged_tools_apart_from_write_tools(scan_files: ScanFiles) -> None:
    files = tool_module(SLACK, SLACK_CLIENT, "return client.users_profile(user=value)")
    report = build_report(scan_files(files))
    (q1,) = [q for q in report.questions if q.id == "Q1"]
    assert "1 with effects not judged" in q1.summary
    assert "write tools flagged" not in q1.summary
    (row,) = report.tools
    assert "read-only" not in " ".join(str(getattr(row, f).value) for f in ("key", "ledger"))


@pytest.mark.parametrize(
    "call",
    [
        "llm_client.generate(prompt=value)",
        "llm_client.models.embed_content(model='text-embedding-004', contents=value)",
        "vision_client.detect_labels(image=value)",
        "llm_client.close()",
        "llm_client.disconnect()",
    ],
    ids=["generate", "embed", "detect", "close-is-plumbing", "disconnect-is-plumbing"],
)
def test_model_client_calls_are_no_side_effect(scan_files: ScanFiles, call: str) -> None:
    files = tool_module("from app.models import llm_client, vision_client", "", f"return {call}")
    assert kinds_and_codes(scan_files, files) == ([], [])


def test_a_derived_local_cache_of_remote_state_is_no_side_effect(scan_files: ScanFiles) -> None:
    prelude = """
    def save_cache(rows: list) -> None:
        with open(CACHE_FILE, "w") as fh:
            json.dump(rows, fh)
    """
    body = (
        'rows = client.conversations_list(limit=value)["channels"]\nsave_cache(rows)\nreturn rows'
    )
    files = tool_module(
        SLACK + "\nimport json",
        SLACK_CLIENT + '\nCACHE_FILE = "channels.json"\n' + textwrap.dedent(prelude),
        body,
    )
    assert kinds_and_codes(scan_files, files) == ([], [])


def test_no_write_found_is_not_every_tool_read_only_when_effects_are_unknown(
    scan_files: ScanFiles,
) -> None:
    files = tool_module(SLACK, SLACK_CLIENT, "return client.users_profile(user=value)")
    report = build_report(scan_files(files))
    (q3,) = [q for q in report.questions if q.id == "Q3"]
    assert "read-only" not in q3.summary
    assert "1 of 1 tools make calls whose effects could not be judged" in q3.summary


def test_a_project_without_tools_says_so(scan_files: ScanFiles) -> None:
    report = build_report(
        scan_files({"util.py": "def add(a: int, b: int) -> int:\n    return a + b\n"})
    )
    (q3,) = [q for q in report.questions if q.id == "Q3"]
    assert q3.summary == "no tools found"


def test_a_local_copy_refreshed_through_a_helper_is_no_side_effect(scan_files: ScanFiles) -> None:
    prelude = """
    def save_board(board: dict) -> None:
        with open(f"boards/{board['id']}.json", "w") as fh:
            json.dump(board, fh)

    def refresh_board(board: dict) -> dict:
        save_board(board)
        return board
    """
    body = "return refresh_board(client.conversations_info(channel=value))"
    files = tool_module(
        SLACK + "\nimport json", SLACK_CLIENT + "\n" + textwrap.dedent(prelude), body
    )
    assert kinds_and_codes(scan_files, files) == ([], [])
    # the same write made directly by a tool is its side effect
    direct = files["agent.py"].replace("return refresh_board(", "return save_board(")
    found, codes = kinds_and_codes(scan_files, {"agent.py": direct})
    assert found == ["write"] and "AG101" in codes


# A write verb on a receiver the write-verb heuristic does not trust is never taken for a read:
# (id, imports, prelude, body, effect kinds)
UNTRUSTED_RECEIVERS = [
    # a local bound to what an imported factory returned, with no client-like name
    (
        "factory-answer-publish",
        "from amqp_kit import connect",
        "",
        'channel_handle = connect("amqp://broker")\nchannel_handle.publish(value)\nreturn "ok"',
        ["unknown"],
    ),
    (
        "loaded-workbook-save",
        "import openpyxl",
        "",
        'wb = openpyxl.load_workbook("report.xlsx")\nwb.save("report.xlsx")\nreturn "ok"',
        ["unknown"],
    ),
    # a receiver named like a service (and like a standard-library module): its write verb
    (
        "service-name-shadowing-a-module",
        "from gcal_kit import make_client",
        "",
        "calendar = make_client()\nreturn calendar.create_event(summary=value)",
        ["network_write"],
    ),
    (
        "module-level-service",
        "from drive_kit import make_client",
        "drive = make_client()",
        "return drive.create(name=value)",
        ["network_write"],
    ),
    # what stays in the process, whatever the verb
    (
        "data-frame-drop",
        "import pandas as pd",
        "",
        'frame = pd.read_csv(value)\nframe.drop(columns=["id"], inplace=True)\n'
        "return frame.to_string()",
        [],
    ),
    (
        "json-answer-updated",
        "import requests",
        "",
        "data = requests.get(value, timeout=10).json()\ndata.update({'source': value})\n"
        "data.pop('token', None)\nreturn data",
        [],
    ),
    (
        "graph-library-add-edge",
        "import networkx as nx",
        "",
        "graph = nx.Graph()\ngraph.add_edge(value, 'root')\nreturn str(nx.shortest_path(graph, value, 'root'))",
        [],
    ),
    (
        "tensor-library-empties-its-cache",
        "import torch",
        "",
        "torch.cuda.empty_cache()\nreturn str(torch.tensor([1.0]).sum())",
        [],
    ),
    (
        "graph-library-writes-a-file",
        "import networkx as nx",
        "",
        "graph = nx.Graph()\ngraph.add_edge(value, 'root')\nnx.write_gml(graph, 'graph.gml')\n"
        "return 'saved'",
        ["write"],
    ),
    (
        "workbook-built-then-saved-to-a-file",
        "from openpyxl import Workbook",
        "",
        "book = Workbook()\nsheet = book.create_sheet('data')\nsheet.append([value])\n"
        "book.save('data.xlsx')\nreturn 'data.xlsx'",
        ["write"],
    ),
    (
        "data-frame-insert",
        "import pandas as pd",
        "",
        'frame = pd.DataFrame({"a": [value]})\nframe.insert(0, "b", [value])\nreturn frame.to_string()',
        [],
    ),
    (
        "standard-library-queue",
        "import queue",
        "",
        "jobs = queue.Queue()\njobs.put(value)\nreturn jobs.get()",
        [],
    ),
]


@pytest.mark.parametrize(
    ("imports", "prelude", "body", "kinds"),
    [case[1:] for case in UNTRUSTED_RECEIVERS],
    ids=[case[0] for case in UNTRUSTED_RECEIVERS],
)
def test_a_write_verb_on_an_untrusted_receiver_is_not_read(
    scan_files: ScanFiles, imports: str, prelude: str, body: str, kinds: list[str]
) -> None:
    found, codes = kinds_and_codes(scan_files, tool_module(imports, prelude, body))
    assert found == kinds
    if kinds == ["unknown"]:
        assert codes == ["AG104"]  # shown as unknown, with no write finding
    if not kinds or kinds == ["write"]:
        assert "AG201" not in codes  # nothing created remotely


ANY_FIELD_TOOLS = """
from typing import Any

from langchain_core.tools import BaseTool


class PublishNote(BaseTool):
    name: str = "publish_note"
    description: str = "Publish a note."
    agent: Any = None

    def _run(self, text: str) -> str:
        return str(self.agent.post("/notes", {"text": text}))


class SyncNotes(BaseTool):
    name: str = "sync_notes"
    description: str = "Sync notes with the relay."
    agent: Any = None

    def _run(self, relay: str) -> str:
        return str(self.agent.relay_sync(relay))


class ListNotes(BaseTool):
    name: str = "list_notes"
    description: str = "List notes."
    agent: Any = None

    def _run(self, tag: str) -> str:
        return str(self.agent.get_notes(tag=tag))
"""


def test_a_write_verb_on_an_attribute_declared_to_hold_anything_is_unknown(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"notes_tools.py": ANY_FIELD_TOOLS})
    kinds = {t.name: sorted(e.kind for e in t.effects) for t in result.project.tools}
    assert kinds == {"publish_note": ["unknown"], "sync_notes": ["unknown"], "list_notes": []}
    assert {f.code for f in result.findings if f.tool == "publish_note"} == {"AG104"}


def test_a_handle_from_a_client_attribute_built_by_a_method_is_judged(
    scan_files: ScanFiles,
) -> None:
    # ``self.client`` is what a method returns (``GraphServiceClient(...)``); the request
    # builder it hands out, held in a local, sends the reply: never a read.
    source = textwrap.dedent(
        """\
        from langchain_core.tools import tool
        from msgraph import GraphServiceClient


        class Mailbox:
            def __init__(self, credentials: object) -> None:
                self.client = self._graph_client(credentials)

            def _graph_client(self, credentials: object) -> object:
                return GraphServiceClient(credentials=credentials)

            async def answer(self, message_id: str, text: str) -> str:
                message = self.client.me.messages.by_message_id(message_id)
                await message.reply.post(text)
                return "sent"


        mailbox = Mailbox(None)


        @tool
        async def act(value: str) -> object:
            \"\"\"Reply to a mail.\"\"\"
            return await mailbox.answer(value, "thanks")
        """
    )
    found, codes = kinds_and_codes(scan_files, {"agent.py": source})
    assert found == ["network_write"]
    assert "AG201" in codes


def test_a_verb_after_a_preposition_names_a_thing_not_the_call(scan_files: ScanFiles) -> None:
    # pyowm's ``weather_at_place(city)`` looks the weather up at a place; it places nothing
    prelude = 'owm = OWM("key")'
    body = "manager = owm.weather_manager()\nreturn manager.weather_at_place(value).weather"
    found, codes = kinds_and_codes(scan_files, tool_module("from pyowm import OWM", prelude, body))
    assert "network_write" not in found
    assert not {"AG101", "AG201"} & set(codes)
    # the verb before a preposition still says what the call does
    body = "manager = owm.weather_manager()\nreturn manager.send_to_station(value)"
    found, codes = kinds_and_codes(scan_files, tool_module("from pyowm import OWM", prelude, body))
    assert found == ["network_write"]


def test_a_list_held_under_a_literal_key_is_changed_in_the_process(scan_files: ScanFiles) -> None:
    # ``session`` is named like a client, but ``session["history"]`` is a value its mapping
    # holds: appending to it sends nothing
    prelude = "SESSIONS: dict = {}"
    body = 'session = SESSIONS[value]\nsession["history"].append(value)\nreturn "ok"'
    found, codes = kinds_and_codes(scan_files, tool_module("", prelude, body))
    assert (found, codes) == ([], [])
    # a client's own write on the same receiver is still one
    body = "session = SESSIONS[value]\nreturn session.create_order(value)"
    found, _ = kinds_and_codes(scan_files, tool_module("", prelude, body))
    assert found == ["network_write"]


def test_a_haystack_secret_resolved_is_read(scan_files: ScanFiles) -> None:
    source = textwrap.dedent(
        """\
        import requests
        from haystack.utils import Secret
        from langchain_core.tools import tool


        class Issues:
            def __init__(self, github_token: Secret) -> None:
                self.github_token = github_token

            def fetch(self, url: str) -> dict:
                token = self.github_token.resolve_value()
                headers = {"Authorization": f"Bearer {token}"}
                return requests.get(url, headers=headers, timeout=10).json()


        issues = Issues(Secret.from_env_var("GITHUB_TOKEN"))


        @tool
        def act(value: str) -> object:
            \"\"\"Read an issue.\"\"\"
            return issues.fetch(value)
        """
    )
    found, codes = kinds_and_codes(scan_files, {"agent.py": source})
    assert (found, codes) == ([], [])


@pytest.mark.parametrize(
    ("decorator", "annotation"),
    [
        ("@asynccontextmanager", "AsyncGenerator[Runner, None]"),
        ("", "AbstractAsyncContextManager[Runner]"),
    ],
)
def test_what_a_context_manager_yields_is_typed_by_its_annotation(
    scan_files: ScanFiles, decorator: str, annotation: str
) -> None:
    # ``async with self._open() as runner``: the runner is the class the annotation names,
    # so a call on it is that class's method (here a shell run), never a read
    source = textwrap.dedent(
        f"""\
        import subprocess
        from collections.abc import AsyncGenerator
        from contextlib import AbstractAsyncContextManager, asynccontextmanager

        from langchain_core.tools import tool


        class Runner:
            def execute(self, command: str) -> str:
                return subprocess.run(command, shell=True, capture_output=True).stdout


        class Shell:
            {decorator}
            async def _open(self) -> {annotation}:
                yield Runner()

            async def run(self, command: str) -> str:
                async with self._open() as runner:
                    return runner.execute(command)


        shell = Shell()


        @tool
        async def act(value: str) -> object:
            \"\"\"Run a command.\"\"\"
            return await shell.run(value)
        """
    )
    found, _ = kinds_and_codes(scan_files, {"agent.py": source})
    assert found == ["exec"]


def test_what_an_in_process_object_hands_out_lives_in_the_process(scan_files: ScanFiles) -> None:
    # the active sheet of an openpyxl workbook is changed in memory; only the save writes
    body = 'book = Workbook()\nsheet = book.active\nsheet.append([value])\nbook.save("out.xlsx")\nreturn "ok"'
    found, codes = kinds_and_codes(
        scan_files, tool_module("from openpyxl import Workbook", "", body)
    )
    assert found == ["write"]
    assert "AG201" not in codes


def test_an_interface_declared_for_an_attribute_says_what_its_manager_binds(
    scan_files: ScanFiles,
) -> None:
    # ``self._factory: Factory = ...`` declares the attribute's type, whatever the value's
    # first choice holds; the abstract ``open`` says what ``async with`` binds (a Runner,
    # a Protocol): what runs the command is out of sight, so the tool is unknown, not read
    source = textwrap.dedent(
        """\
        from abc import ABC, abstractmethod
        from contextlib import AbstractAsyncContextManager
        from typing import Protocol

        from langchain_core.tools import tool


        class Runner(Protocol):
            async def exec(self, argv: list[str]) -> str: ...


        class Factory(ABC):
            @abstractmethod
            def open(self) -> AbstractAsyncContextManager[Runner]: ...


        class Shell:
            def __init__(self, backend: "Runner | Factory") -> None:
                self._factory: Factory = backend if isinstance(backend, Factory) else make(backend)

            async def run(self, command: str) -> str:
                async with self._factory.open() as runner:
                    return await runner.exec(command.split())


        def make(runner: Runner) -> Factory:
            raise NotImplementedError


        shell = Shell(None)


        @tool
        async def act(value: str) -> object:
            \"\"\"Run a command.\"\"\"
            return await shell.run(value)
        """
    )
    found, _ = kinds_and_codes(scan_files, {"agent.py": source})
    assert found == ["unknown"]


@pytest.mark.parametrize(
    ("body", "kinds", "keyed"),
    [
        ("return r.hgetall(value)", [], False),
        ("return [k for k in r.scan_iter(match=value)]", [], False),
        ('return r.execute_command("FT._LIST")', [], False),
        ('return r.execute_command("FT.INFO", value)', [], False),
        ("return r.hdel(value, 'field')", ["destructive"], False),
        ("return r.sadd(value, 'member')", ["write"], False),
        ("return r.rpush(value, 'item')", ["write"], True),
    ],
    ids=["hgetall", "scan-iter", "command-list", "command-info", "hdel", "sadd", "rpush"],
)
def test_redis_commands_are_judged_by_what_they_do(
    scan_files: ScanFiles, body: str, kinds: list[str], keyed: bool
) -> None:
    prelude = 'r = Redis(host="cache.internal")'
    found, codes = kinds_and_codes(
        scan_files, tool_module("from redis import Redis", prelude, body)
    )
    assert found == kinds
    assert ("AG201" in codes) == keyed


def test_a_write_verb_on_an_untyped_parameter_is_unknown_never_a_read(
    scan_files: ScanFiles,
) -> None:
    """``ctx.messenger.send_message(text)`` on a parameter nothing types: whatever it is
    handed at run time decides. The tool is unknown, not read-only and safe to replay; a
    list handed in and appended to stays in the process."""
    source = """\
from langchain_core.tools import tool


@tool
def send_note(text: str, ctx=None) -> str:
    \"\"\"Send a note.\"\"\"
    return str(ctx.messenger.send_message(text))


@tool
def collect(text: str, seen=None) -> str:
    \"\"\"Remember a word.\"\"\"
    seen.append(text)
    return text
"""
    report = build_report(scan_files({"tools.py": source}))
    risks = {row.name: row.risk.value for row in report.tools}
    assert risks == {"send_note": "unknown", "collect": "read"}


def test_a_write_verb_handed_only_named_fields_from_a_mapping_writes(
    scan_files: ScanFiles,
) -> None:
    """``collection.update(**fields)`` on what a client's ``get_collection`` handed out: a
    write verb given named fields only (from a mapping), as ``update(ids=...)`` would be."""
    source = """\
import vectordb
from langchain_core.tools import tool

client = vectordb.Client()


@tool
def update_documents(collection_name: str, ids: list[str], documents: list[str]) -> str:
    \"\"\"Update documents in a collection.\"\"\"
    collection = client.get_collection(collection_name)
    fields = {"ids": ids, "documents": documents}
    collection.update(**fields)
    return "updated"
"""
    report = build_report(scan_files({"tools.py": source}))
    assert {row.name: row.risk.value for row in report.tools} == {"update_documents": "write"}


MCP_RELAY = """\
import asyncio

from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.server.fastmcp import FastMCP

server = FastMCP("editor-bridge")


async def _relay(url: str, operation: str, arguments: dict):
    async with sse_client(url) as (reader, writer):
        async with ClientSession(reader, writer) as session:
            await session.initialize()
            return await session.call_tool(operation, arguments)


def forward(operation: str, arguments: dict):
    return asyncio.run(_relay("http://127.0.0.1:63342/sse", operation, arguments))


@server.tool()
def act(path: str) -> str:
    return str(forward(OPERATION, {"path": path}))
"""


@pytest.mark.parametrize(
    ("operation", "kinds"),
    [("get_file_text_by_path", []), ("create_new_file", ["network_write"])],
    ids=["get", "create"],
)
def test_an_mcp_client_calling_a_tool_is_judged_by_the_tool_it_names(
    scan_files: ScanFiles, operation: str, kinds: list[str]
) -> None:
    """A tool that relays to another MCP server (``session.call_tool("create_new_file",
    ...)`` through the project's helpers) does what the named tool does; the handshake
    (``session.initialize()``) changes nothing."""
    source = MCP_RELAY.replace("OPERATION", repr(operation))
    found, codes = kinds_and_codes(scan_files, {"bridge.py": source})
    assert found == kinds
    assert ("AG104" in codes) is False


WALLET_PRELUDE = """\
def node():
    w3 = Web3(Web3.HTTPProvider("https://rpc.example"))
    return w3
"""


@pytest.mark.parametrize(
    ("body", "kinds"),
    [
        ("w3 = node()\nreturn w3.from_wei(w3.eth.get_balance(value), 'ether')", []),
        (
            "w3 = node()\n"
            "tx = {'to': w3.to_checksum_address(value), 'value': w3.to_wei(1, 'ether')}\n"
            "signed = w3.eth.account.sign_transaction(tx, KEY)\n"
            "return w3.eth.send_raw_transaction(signed.raw_transaction).hex()",
            ["network_write"],
        ),
    ],
    ids=["balance", "transfer"],
)
def test_a_client_a_project_getter_builds_in_a_local_is_typed_in_its_callers(
    scan_files: ScanFiles, body: str, kinds: list[str]
) -> None:
    """``w3 = Web3(...); return w3`` in a getter: the caller's ``w3`` holds a ``Web3``, so a
    transfer it sends is a remote write, never read for want of a type; its conversions,
    local signing and ``eth.get_*`` queries read."""
    found, _ = kinds_and_codes(
        scan_files, tool_module("from web3 import Web3\nKEY = 'k'", WALLET_PRELUDE, body)
    )
    assert found == kinds


def test_a_write_verb_on_what_a_project_function_returned_is_unknown_never_a_read(
    scan_files: ScanFiles,
) -> None:
    """``hub = messenger(); hub.send_message(...)`` where ``messenger()`` hands back
    whatever a plug-in module chosen at run time builds: of no known kind, so the send is
    unknown, never a read."""
    prelude = """\
def messenger():
    return importlib.import_module(os.environ["MESSENGER"]).connect()
"""
    body = "hub = messenger()\nreturn hub.send_message(value)"
    found, codes = kinds_and_codes(
        scan_files, tool_module("import importlib\nimport os", prelude, body)
    )
    # the send, and the plug-in module's own ``connect()``: both unknown
    assert found and set(found) == {"unknown"}
    assert "AG104" in codes


@pytest.mark.parametrize(
    ("imports", "prelude", "body", "kinds"),
    [
        # a plug-in module's entry point, imported by a name the caller gives
        (
            "import importlib",
            "",
            'plugin = importlib.import_module(value)\nentry = getattr(plugin, "main")\n'
            "return entry({'id': 1})",
            ["unknown"],
        ),
        # a function of the module picked by a name the model gives
        ("", "", "handler = globals()[value]\nreturn handler()", ["unknown"]),
        # a hook a mapping filled at run time answers
        ("", "HOOKS = {}", "run = HOOKS.get(value)\nreturn run()", ["unknown"]),
        # an attribute of an object of no known kind
        (
            "import importlib",
            "",
            "step = importlib.import_module(value).run\nreturn step()",
            ["unknown"],
        ),
        # a project dict of functions is followed: its one function reads
        (
            "import requests",
            "def fetch(q):\n    return requests.get('https://api.example.com', params={'q': q})\n\n\n"
            "TABLE = {'fetch': fetch}",
            "handler = TABLE[value]\nreturn handler(value)",
            [],
        ),
        # a package function renamed is that function
        ("import json", "", "dump = json.dumps\nreturn dump({'v': value})", []),
        # a table of Python's own functions computes in the process, whichever is picked
        (
            "import math",
            "FUNCTIONS = {'sqrt': math.sqrt, 'abs': abs, 'pi': math.pi}",
            "fn = FUNCTIONS[value]\nreturn fn(4)",
            [],
        ),
    ],
    ids=[
        "getattr-of-module",
        "globals-item",
        "mapping-get",
        "attribute",
        "project-table",
        "alias",
        "standard-table",
    ],
)
def test_a_callable_looked_up_at_run_time_is_unknown_never_a_read(
    scan_files: ScanFiles, imports: str, prelude: str, body: str, kinds: list[str]
) -> None:
    """``handler = registry[name]; handler(payload)``: what runs is whatever the lookup
    answers, which no call edge names, so the tool's effect is unknown (AG104), never a
    read reported safe to replay; a lookup the scan follows is judged by what it reaches."""
    found, codes = kinds_and_codes(scan_files, tool_module(imports, prelude, body))
    assert found == kinds
    assert ("AG104" in codes) == (kinds == ["unknown"])


@pytest.mark.parametrize(
    ("imports", "prelude", "body", "kinds", "why"),
    [
        # a package's client a project getter declares it returns: the query chain is
        # the catalogue's (Supabase's delete by filter)
        (
            "import os\nfrom supabase import Client, create_client",
            'def get_db() -> Client:\n    return create_client(os.environ["URL"], os.environ["KEY"])',
            'return get_db().table("notes").delete().eq("id", value).execute()',
            ["destructive"],
            None,
        ),
        # a client the catalogue does not know, built by an imported package's call the
        # helper returns: the chain is that package's, judged by its verb as if written
        # on `connect("notes")` itself; a delete, never a read
        (
            "from somedb import connect",
            'def get_db():\n    return connect("notes")',
            'return get_db().collection("notes").document(value).delete()',
            ["destructive"],
            None,
        ),
        # a client of no known kind (what a project method of an object answers): the
        # delete acts on what `document(...)` built, which judged nothing; unknown
        (
            "from somedb import connect",
            'class Pool:\n    def get(self):\n        return connect("notes")\n\n\n'
            "def get_db():\n    return Pool().get()",
            'return get_db().collection("notes").document(value).delete()',
            ["unknown"],
            "a write verb on what a call of no verb built",
        ),
    ],
    ids=["typed-client", "package-client", "untyped-client"],
)
def test_a_write_verb_on_a_query_built_from_a_helpers_client_is_never_a_read(
    scan_files: ScanFiles, imports: str, prelude: str, body: str, kinds: list[str], why: str | None
) -> None:
    """``get_db().table("notes").delete()``, ``get_db().collection("notes").document(id)
    .delete()``: the delete acts on what was built from what the helper returned. Judged by the catalogue when the helper's answer has a known type, and
    unknown (AG104 saying why) when not; before, a method on what a call returned was taken
    for handling a judged answer, a read."""
    result = scan_files(tool_module(imports, prelude, body))
    (tool,) = [t for t in result.project.tools if t.name == "act"]
    assert sorted(e.kind for e in tool.effects) == kinds
    if why is not None:
        (unjudged,) = [f for f in result.findings if f.code == "AG104"]
        assert why in unjudged.message


NOTES_PRELUDE = """\
class NotesApi:
    def __init__(self):
        self.http = httpx.Client(base_url="https://notes.example")

    def apply_retention_rule(self, note_id):
        return self.http.delete(f"/notes/{note_id}").json()

    def fetch_note(self, note_id):
        return self.http.get(f"/notes/{note_id}").json()


CLIENTS = {"eu": NotesApi(), "us": NotesApi()}


def pick_client(region):
    return CLIENTS.get(region) or CLIENTS["eu"]
"""


@pytest.mark.parametrize(
    ("body", "kinds"),
    [
        ('return pick_client("eu").apply_retention_rule(value)', ["destructive"]),
        (
            'client = pick_client("eu")\nreturn client.apply_retention_rule(value)',
            ["destructive"],
        ),
        ('return pick_client("eu").fetch_note(value)', []),
    ],
    ids=["chained", "through-a-local", "read"],
)
def test_a_method_called_on_what_a_project_function_returned_runs_the_projects_method(
    scan_files: ScanFiles, body: str, kinds: list[str]
) -> None:
    """``pick_client(region).apply_retention_rule(id)``: the helper hands back a
    client of no type it names; the one project class defining a method of that
    several-word name is what runs, so its delete is found, never taken for a read of
    the helper's answer."""
    found, _ = kinds_and_codes(scan_files, tool_module("import httpx", NOTES_PRELUDE, body))
    assert found == kinds


@pytest.mark.parametrize(
    ("body", "kinds"),
    [
        ("return PROXY.create_object(value, {'type': 'Box'})", ["network_write"]),
        ("return PROXY.delete_object(value)", ["destructive"]),
        ("return PROXY.get_objects(value)", []),
        ("return PROXY.ping()", []),
        ("return PROXY.recompute_scene(value)", ["unknown"]),
    ],
    ids=["create", "delete", "get", "ping", "no-verb"],
)
def test_a_method_called_on_an_xml_rpc_proxy_is_the_remote_procedure_it_names(
    scan_files: ScanFiles, body: str, kinds: list[str]
) -> None:
    """``xmlrpc.client.ServerProxy`` is from the standard library, but what its methods do
    happens on the server: each is judged by its name as an RPC operation is."""
    prelude = 'PROXY = xmlrpc.client.ServerProxy("http://127.0.0.1:9875", allow_none=True)'
    found, _ = kinds_and_codes(scan_files, tool_module("import xmlrpc.client", prelude, body))
    assert found == kinds


SERVICE_TOOLS = '''\
import subprocess

from langchain_core.tools import tool


def _run(args: list[str], timeout: int = 10) -> str:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timed out"
    return done.stdout


def _systemctl(verb: str, unit: str) -> str:
    return _run(["systemctl", verb, unit])


@tool
def service_state(unit: str) -> str:
    """Whether a unit is running."""
    return _run(["systemctl", "is-active", unit])


@tool
def service_details(unit: str) -> str:
    """A unit's properties."""
    command = ["systemctl", "show", unit, "--no-pager"]
    return _run(command)


@tool
def restart_service(unit: str) -> str:
    """Restart a unit."""
    return _run(["sudo", "systemctl", "restart", unit], timeout=30)


@tool
def stop_service(unit: str) -> str:
    """Stop a unit."""
    return _systemctl("stop", unit)


@tool
def run_command(command: str) -> str:
    """Run a shell command."""
    return _run(command.split())
'''


def test_a_helper_running_the_command_it_is_handed_is_judged_by_each_callers_command(
    scan_files: ScanFiles,
) -> None:
    result = scan_files({"ops_tools.py": SERVICE_TOOLS})
    kinds = {tool.name: sorted({e.kind for e in tool.effects}) for tool in result.project.tools}
    assert kinds == {
        "service_state": [],
        "service_details": [],
        "restart_service": ["exec"],
        "stop_service": ["exec"],
        "run_command": ["exec"],
    }
    read_tools = {"service_state", "service_details"}
    assert not [f for f in result.findings if f.tool in read_tools]


def test_a_helper_handing_its_command_on_is_judged_by_its_callers_command(
    scan_files: ScanFiles,
) -> None:
    """``def _sh(args): return _run(args)``: the command ``_sh`` hands on is its own
    parameter, so each of ``_sh``'s callers decides: a read-only command starts no effect,
    a restart is an execution."""
    source = (
        SERVICE_TOOLS.split("@tool", 1)[0]
        + '''def _sh(args: list[str]) -> str:
    return _run(args)


@tool
def unit_state(unit: str) -> str:
    """Whether a unit is running."""
    return _sh(["systemctl", "is-active", unit])


@tool
def reload_unit(unit: str) -> str:
    """Reload a unit's configuration."""
    return _sh(["systemctl", "reload", unit])
'''
    )
    result = scan_files({"ops_tools.py": source})
    kinds = {tool.name: sorted({e.kind for e in tool.effects}) for tool in result.project.tools}
    assert kinds == {"unit_state": [], "reload_unit": ["exec"]}
    assert not [f for f in result.findings if f.tool == "unit_state"]


GIT_TOOLS = '''\
import subprocess

from langchain_core.tools import tool


def _git(repo: str, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60)
    return done.stdout + done.stderr


def _git_here(*args: str) -> str:
    return _git(".", *args)


def _tracker(*args: str) -> str:
    return subprocess.run(["trackctl", *args], capture_output=True, text=True).stdout


def _search(pattern: str, path: str) -> str:
    excluded = ["-g", "!node_modules"]
    done = subprocess.run(["rg", "-n"] + excluded + [pattern, path], capture_output=True, text=True)
    return done.stdout


@tool
def branch_report(repo: str) -> str:
    """The current branch and what it adds over main."""
    current = _git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    return current + _git(repo, "log", f"main..{current}", "--oneline")


@tool
def working_tree_status() -> str:
    """What changed in the working tree."""
    return _git_here("status", "--short")


@tool
def push_branch(repo: str, branch: str) -> str:
    """Push a branch to origin."""
    return _git(repo, "push", "origin", branch)


@tool
def commit_all(message: str) -> str:
    """Commit every change."""
    return _git_here("commit", "-am", message)


@tool
def search_code(pattern: str) -> str:
    """Lines of the repository matching a pattern."""
    return _search(pattern, ".")


@tool
def open_issues() -> str:
    """The tracker's open issues."""
    return _tracker("issue", "list", "--open")


@tool
def file_issue(title: str) -> str:
    """File an issue in the tracker."""
    return _tracker("issue", "create", title)
'''


def test_a_command_a_helper_extends_with_its_callers_arguments_is_judged_by_each_caller(
    scan_files: ScanFiles,
) -> None:
    """``def _git(repo, *args): subprocess.run(["git", *args])``: each caller's arguments
    finish the command, also through a helper handing its own ``*args`` on, so ``git log``
    and ``git status`` start no effect while ``git push`` and ``git commit`` are executions.
    A command list built by adding lists (``["rg", "-n"] + excluded + [...]``) is read from
    the list it starts with. Before, every one of these tools was an execution."""
    result = scan_files({"git_tools.py": GIT_TOOLS})
    kinds = {tool.name: sorted({e.kind for e in tool.effects}) for tool in result.project.tools}
    assert kinds == {
        "branch_report": [],
        "working_tree_status": [],
        "push_branch": ["exec"],
        "commit_all": ["exec"],
        "search_code": [],
        # a command group whose name reads like a verb, then the operation
        "open_issues": [],
        "file_issue": ["exec"],
    }
    read_tools = {"branch_report", "working_tree_status", "search_code", "open_issues"}
    assert not [f for f in result.findings if f.tool in read_tools]


def test_a_strings_own_methods_on_an_untyped_local_are_no_effect(scan_files: ScanFiles) -> None:
    """``service = service.strip()`` leaves ``service`` of no annotated type, and its name
    is a client's (``service = build("gmail", "v1")``); ``service.endswith(...)`` is still a
    string's own method: the tool reads, it is not unknown."""
    source = (
        "from langchain_core.tools import tool\n\n\n"
        "def _unit_name(service: str) -> str:\n"
        "    service = service.strip()\n"
        '    if not service.endswith(".service"):\n'
        '        service = service + ".service"\n'
        "    return service\n\n\n"
        "@tool\n"
        "def unit_label(unit: str) -> str:\n"
        '    """The full name of a systemd unit."""\n'
        "    return _unit_name(unit).upper()\n"
    )
    tool, result = only_tool(scan_files, {"units.py": source})
    assert tool.effects == []
    assert not result.findings


def test_a_method_strings_share_with_clients_is_a_strings_own_when_handed_string_literals(
    scan_files: ScanFiles,
) -> None:
    """``order["delivered_at"].replace("Z", "+00:00")`` on a row read from SQLite is the
    string's own ``replace``: the lookup tool reads and gets no write finding. A path's
    ``replace("orders.json")`` (a rename, one literal) is still the tool's write."""
    source = (
        "import sqlite3\n"
        "from datetime import datetime\n"
        "from pathlib import Path\n\n"
        "from langchain_core.tools import tool\n\n\n"
        "@tool\n"
        "def get_order(order_id: int) -> dict:\n"
        '    """One order and how long ago it was delivered."""\n'
        '    con = sqlite3.connect("file:orders.db?mode=ro", uri=True)\n'
        '    row = con.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()\n'
        "    order = dict(row)\n"
        '    delivered = datetime.fromisoformat(order["delivered_at"].replace("Z", "+00:00"))\n'
        '    order["parts"] = order["items"].split(",")\n'
        '    order["delivered"] = delivered.isoformat()\n'
        "    return order\n\n\n"
        "@tool\n"
        "def publish_orders(draft: str) -> str:\n"
        '    """Publish the drafted order list."""\n'
        '    Path(draft).replace("orders.json")\n'
        '    return "published"\n'
    )
    result = scan_files({"orders.py": source})
    tools = {tool.name: tool for tool in result.project.tools}
    assert tools["get_order"].effects == []
    assert not [f for f in result.findings if f.tool == "get_order"]
    assert tools["publish_orders"].effects


def test_an_object_chosen_at_run_time_runs_the_method_of_every_class_it_may_be() -> None:
    """runner-desk: the executor a tool calls ``submit`` on comes from a factory that
    returns one of two classes (in one expression or on two paths), from a table of both, or from the constructor of the
    service that keeps it; any of them may run, the farm's POST among them, so each launch
    tool is a remote write, never a read. A hook loaded from a module named at run time is
    unknown."""
    project = FIXTURES / "runner-desk"
    report = build_report(scan([project], load_config([project])))
    risks = {row.name: row.risk.value for row in report.tools}
    assert risks == {
        "launch_job": "network_write",
        "launch_named": "network_write",
        "launch_on": "network_write",
        "start_release": "network_write",
        "job_status": "read",
        "run_hook": "unknown",
    }


def test_a_client_the_enclosing_function_binds_is_that_client_in_its_nested_tools(
    scan_files: ScanFiles,
) -> None:
    """Tools defined inside the function that connects their client (``fs = connect(url)``,
    then ``def make_folder(path): fs.mkdir(path)``) call that client: its write verbs, a
    file system's commands among them (``mkdir``, ``touch``, ``cp``), are never reads,
    through a lambda handed to a helper too; its listing reads."""
    source = """\
from pydantic_ai import Agent, FunctionToolset
from remotefs import connect


def guarded(call):
    try:
        return call()
    except Exception as e:
        return f"error: {e}"


def build_toolset(url: str) -> FunctionToolset:
    fs = connect(url)

    def make_folder(path: str) -> str:
        return guarded(lambda: fs.mkdir(path))

    def touch_file(path: str) -> str:
        return fs.touch(path)

    def save_text(path: str, text: str) -> str:
        return guarded(lambda: fs.write_file(path, text))

    def list_folder(path: str) -> list:
        return fs.ls(path)

    toolset = FunctionToolset()
    for function in (make_folder, touch_file, save_text, list_folder):
        toolset.add_function(function)
    return toolset


agent = Agent("openai:gpt-4o", toolsets=[build_toolset("ws://files")])
"""
    verdicts = tool_verdicts(scan_files, {"files/agent.py": source})
    risks = {name: risk for name, (risk, _) in verdicts.items()}
    assert risks == {
        "make_folder": "unknown",
        "touch_file": "unknown",
        "save_text": "unknown",
        "list_folder": "read",
    }


def test_a_write_verb_on_a_local_one_branch_binds_to_what_a_client_handed_out_is_a_write(
    scan_files: ScanFiles,
) -> None:
    """``role = None``, then ``role = guild.get_role(...)`` in one branch and ``role = r``
    (an item of ``guild.roles``) in the other: ``role.edit(...)`` may edit what the client
    handed out, whichever binding comes last in the source, so it is a write, not a read."""
    source = '''
import discord
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("guild")
bot = discord.Client(intents=discord.Intents.default())


@mcp.tool()
async def rename_role(guild_id: int, role_ref: str, name: str) -> str:
    """Rename a role, given its id or its current name."""
    guild = bot.get_guild(guild_id)
    role = None
    if role_ref.isdigit():
        role = guild.get_role(int(role_ref))
    else:
        for candidate in guild.roles:
            if candidate.name == role_ref:
                role = candidate
                break
    if role is None:
        return "no such role"
    await role.edit(name=name)
    return "renamed"
'''
    verdicts = tool_verdicts(scan_files, {"server.py": source})
    assert verdicts["rename_role"][0] == "write"
