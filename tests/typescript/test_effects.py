"""TypeScript tools' side effects as a user sees them: the findings of `agentguard check` and
the effects `agentguard report` gives each tool of a small MCP server written in TypeScript."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import FIXTURES, write_project

PROJECT = FIXTURES / "ts-effects"


def _run(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "agentguard", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


def _codes_by_tool(directory: Path) -> dict[str, set[str]]:
    checked = _run("check", str(directory), "--format", "json", "--no-cache", "--exit-zero")
    found: dict[str, set[str]] = {tool: set() for tool in _tool_names(checked)}
    for finding in checked["findings"]:
        found.setdefault(finding.get("tool") or "", set()).add(finding["code"])
    return found


def _tool_names(checked: dict[str, Any]) -> list[str]:
    return [tool["name"] if isinstance(tool, dict) else tool for tool in checked["tools"]]


@pytest.fixture(scope="module")
def codes() -> dict[str, set[str]]:
    return _codes_by_tool(PROJECT)


@pytest.fixture(scope="module")
def effects() -> dict[str, list[str]]:
    report = _run("report", str(PROJECT), "--format", "json")
    return {tool["name"]: tool["effects"] for tool in report["tools"]}


@pytest.mark.parametrize(
    "tool",
    [
        "get_ticket",
        "list_tickets",
        "list_issues",
        "count_customers",
        "channel_history",
        "incident_status",
        "recent_outages",
        "read_runbook",
        # a POST its library documents as a read, whatever a pattern for every ``query``
        # (a SQL driver's) would say
        "team_free_busy",
    ],
)
def test_read_only_tools_get_no_write_finding(
    tool: str, codes: dict[str, set[str]], effects: dict[str, list[str]]
) -> None:
    assert tool in codes
    assert not codes[tool] & {"AG101", "AG201"}
    assert effects[tool] == []


@pytest.mark.parametrize("tool", ["open_ticket", "escalate_ticket", "add_ticket_note"])
def test_fetch_post_is_a_network_write_direct_or_through_a_helper(
    tool: str, codes: dict[str, set[str]], effects: dict[str, list[str]]
) -> None:
    """`fetch(url, {method: "POST"})` in the tool, or in a helper that spreads its caller's
    options (`{...options}`) or reads their method (`options.method ?? "GET"`)."""
    assert effects[tool] == ["network_write"]
    assert {"AG101", "AG201"} <= codes[tool]


def test_stripe_create_without_a_key_repeats_the_charge(codes: dict[str, set[str]]) -> None:
    assert {"AG101", "AG201"} <= codes["charge_customer"]


def test_stripe_create_with_an_idempotency_key_option_has_its_key(
    codes: dict[str, set[str]],
) -> None:
    assert "AG201" not in codes["refund_order"]
    assert "AG101" in codes["refund_order"]


def test_resend_send_with_an_idempotency_key_option_has_its_key(
    codes: dict[str, set[str]], effects: dict[str, list[str]]
) -> None:
    assert effects["email_customer"] == ["message"]
    assert "AG201" not in codes["email_customer"]


@pytest.mark.parametrize(
    ("tool", "effect"),
    [
        ("file_issue", "network_write"),
        ("post_status_update", "message"),
        ("open_incident", "network_write"),
        ("schedule_review", "network_write"),
        ("charge_customer", "payment"),
    ],
)
def test_library_writes_are_remote_and_lack_a_key(
    tool: str, effect: str, codes: dict[str, set[str]], effects: dict[str, list[str]]
) -> None:
    """Octokit, the Slack WebClient, an axios instance, googleapis and Stripe."""
    assert effects[tool] == [effect]
    assert {"AG101", "AG201"} <= codes[tool]


@pytest.mark.parametrize(
    ("tool", "effect"),
    [("save_customer_note", "write"), ("export_report", "write"), ("run_diagnostics", "exec")],
)
def test_local_writes_need_a_policy_but_no_key(
    tool: str, effect: str, codes: dict[str, set[str]], effects: dict[str, list[str]]
) -> None:
    """A Prisma create (the application's own store), a file written, a command run."""
    assert effects[tool] == [effect]
    assert "AG101" in codes[tool]
    assert "AG201" not in codes[tool]


def test_sql_statement_text_decides(
    codes: dict[str, set[str]], effects: dict[str, list[str]]
) -> None:
    assert effects["record_outage"] == ["write"]
    assert "AG101" in codes["record_outage"]
    assert effects["recent_outages"] == []


SMALL_SERVER = """\
import {{ McpServer }} from "@modelcontextprotocol/sdk/server/mcp.js";
{imports}
const server = new McpServer({{ name: "small", version: "1.0.0" }});
{setup}
server.registerTool("{name}", {{ description: "{name}" }}, async () => {{
{body}
  return {{ content: [] }};
}});
"""


def _small(tmp_path: Path, name: str, body: str, imports: str = "", setup: str = "") -> set[str]:
    source = SMALL_SERVER.format(imports=imports, setup=setup, name=name, body=body)
    write_project(tmp_path, {"package.json": '{"type": "module"}\n', "src/server.ts": source})
    return _codes_by_tool(tmp_path)[name]


def test_tagged_template_sql_is_judged_by_its_text(tmp_path: Path) -> None:
    imports = 'import postgres from "postgres";'
    setup = "const sql = postgres(process.env.DATABASE_URL!);"
    body = '  await sql`DELETE FROM sessions WHERE user_id = ${"u1"}`;'
    assert "AG101" in _small(tmp_path / "delete", "purge_sessions", body, imports, setup)
    body = "  await sql`SELECT id FROM sessions`;"
    assert not _small(tmp_path / "select", "list_sessions", body, imports, setup) & {"AG101"}


def test_octokit_request_takes_its_method_from_the_route(tmp_path: Path) -> None:
    imports = 'import { Octokit } from "@octokit/rest";'
    setup = "const octokit = new Octokit();"
    body = '  await octokit.request("POST /repos/{owner}/{repo}/issues", { owner: "a", repo: "b", title: "t" });'
    assert {"AG101", "AG201"} <= _small(tmp_path / "post", "file_bug", body, imports, setup)
    body = '  await octokit.request("GET /repos/{owner}/{repo}/issues", { owner: "a", repo: "b" });'
    assert not _small(tmp_path / "get", "list_bugs", body, imports, setup) & {"AG101", "AG201"}


def test_a_delay_helper_is_no_task_queue(tmp_path: Path) -> None:
    """Python's `*.delay` (Celery) judges no JavaScript call."""
    setup = "async function pause(timer: { delay(ms: number): Promise<void> }) { await timer.delay(500); }"
    body = "  await pause(globalThis as never);"
    assert not _small(tmp_path, "wait_a_bit", body, setup=setup) & {"AG101", "AG201"}


@pytest.mark.parametrize(
    ("helper", "method", "writes"),
    [
        ("fetch(url, { method: init.method, body: init.body })", "POST", True),
        ("fetch(url, init)", "DELETE", True),
        ("fetch(url, { ...init })", "GET", False),
        ("fetch(url, { ...init, method: 'PUT' })", "GET", True),
    ],
)
def test_a_helper_forwards_its_callers_method(
    tmp_path: Path, helper: str, method: str, writes: bool
) -> None:
    setup = f"async function send(url: string, init: RequestInit) {{ return {helper}; }}"
    body = f'  await send("https://tickets.example.com/api/tickets", {{ method: "{method}" }});'
    found = _small(tmp_path, "send_ticket", body, setup=setup)
    assert ("AG101" in found) is writes


def test_a_users_own_sink_judges_typescript_calls(tmp_path: Path) -> None:
    """A sink the user declares applies to TypeScript code too, ahead of the built-in ones."""
    write_project(
        tmp_path,
        {
            "agentguard.toml": (
                "[[effects.sinks]]\n"
                'match = ["npm:@acme/orders.OrdersClient.fulfil"]\n'
                'effect = "network_write"\n'
                "idempotent = false\n"
            )
        },
    )
    imports = 'import { OrdersClient } from "@acme/orders";'
    setup = "const orders = new OrdersClient();"
    body = '  await orders.fulfil({ sku: "A1" });'
    assert {"AG101", "AG201"} <= _small(tmp_path, "place_order", body, imports, setup)


@pytest.mark.parametrize(
    ("imports", "body"),
    [
        # a Node module that computes in memory, its module function and what it hands out
        (
            'import { createHash } from "node:crypto";',
            '  const digest = createHash("sha256").update("a@b.c").digest("hex");',
        ),
        # a provider factory whose result is called at once, or later
        (
            'import { createPerplexity } from "@ai-sdk/perplexity";',
            '  const model = createPerplexity({ apiKey: "k" })("sonar-pro");',
        ),
        (
            'import { createPerplexity } from "@ai-sdk/perplexity";',
            '  const perplexity = createPerplexity({ apiKey: "k" });\n'
            '  const model = perplexity("sonar-pro");',
        ),
        # usage records sent to an analytics package: telemetry of the call
        (
            'import { publishAiCall } from "@acme/tinybird-ai-analytics";',
            '  await publishAiCall({ model: "m", tokens: 12 });',
        ),
    ],
)
def test_factories_in_memory_modules_and_telemetry_are_no_write(
    tmp_path: Path, imports: str, body: str
) -> None:
    assert not _small(tmp_path, "research_person", body, imports) & {"AG101", "AG201"}


def test_a_publish_into_a_service_package_is_still_a_write(tmp_path: Path) -> None:
    imports = 'import { publishPost } from "@acme/blog-client";'
    body = '  await publishPost({ title: "t", body: "b" });'
    assert {"AG101", "AG201"} <= _small(tmp_path, "publish_post", body, imports)


@pytest.mark.parametrize(
    ("setup", "body"),
    [
        (
            "const mastra = new Mastra({});",
            '  await mastra.schedules.create({ agentId: "a", cron: "0 * * * *", prompt: "p" });',
        ),
        (
            "function schedules(context: { mastra: Mastra }): Schedules {\n"
            "  return context.mastra.schedules;\n}\n"
            "const mastra = new Mastra({});",
            "  const service = schedules({ mastra });\n"
            '  await service.create({ agentId: "a", cron: "0 * * * *", prompt: "p" });',
        ),
    ],
)
def test_mastra_schedules_are_the_applications_own_store(
    tmp_path: Path, setup: str, body: str
) -> None:
    """Mastra keeps schedules in the storage adapter the application configures: a local
    write that needs a policy, with no service downstream to take a key."""
    imports = (
        'import { Mastra } from "@mastra/core";\n'
        'import type { Schedules } from "@mastra/core/schedules";'
    )
    found = _small(tmp_path, "schedule_digest", body, imports, setup)
    assert "AG101" in found
    assert "AG201" not in found


def test_a_javascript_values_own_methods_are_judged_and_a_clients_are_not(
    tmp_path: Path,
) -> None:
    """`error.message.includes(...)` on an error typed by a library computes a value; a
    library's method that names no verb stays unknown (AG104)."""
    helper = (
        'import { APICallError } from "ai";\n'
        "export function isIncorrectKey(error: APICallError): boolean {\n"
        '  return error.message.trim().includes("Incorrect API key") || error.statusCode === 401;\n'
        "}\n"
    )
    write_project(tmp_path / "values", {"src/errors.ts": helper})
    imports = 'import { isIncorrectKey } from "./errors";'
    body = (
        '  try { JSON.parse("{}"); }\n'
        "  catch (error) { if (isIncorrectKey(error as never)) return { content: [] }; }\n"
    )
    assert "AG104" not in _small(tmp_path / "values", "check_key", body, imports)
    imports = 'import { widget } from "@acme/widgets";'
    body = '  await widget.spin("w1");\n'
    assert "AG104" in _small(tmp_path / "client", "spin_widget", body, imports)


@pytest.mark.parametrize(
    ("body", "writes"),
    [
        ('  await redis.set("claim:a1", "1", { nx: true, ex: 900 });', False),
        ('  await redis.set("share:a1", "u1", { ex: 900 });', True),
        ('  await redis.set("owner:a1", "u1");', True),
    ],
)
def test_a_key_set_if_absent_that_expires_claims_a_lease(
    tmp_path: Path, body: str, writes: bool
) -> None:
    """A key set only if absent and told to expire is a lock of the application's own that
    frees itself; a value that only expires, or stays, is a write to declare."""
    imports = 'import { Redis } from "@upstash/redis";'
    setup = "const redis = Redis.fromEnv();"
    assert ("AG101" in _small(tmp_path, "claim_cleanup", body, imports, setup)) is writes


def test_a_create_awaited_through_then_is_still_a_write(tmp_path: Path) -> None:
    """`createIssue(body).then(...)` awaits what the create answered: the call acted,
    unlike a factory whose object a chained call uses (`createPerplexity(opts)(model)`)."""
    imports = 'import { createIssue } from "@acme/tracker";'
    body = '  await createIssue({ title: "t" }).then((issue) => issue.id);'
    assert {"AG101", "AG201"} <= _small(tmp_path, "file_issue", body, imports)


def test_a_promisified_function_is_the_function_it_wraps(tmp_path: Path) -> None:
    """`const execAsync = promisify(exec)`: calling it runs the command, as `exec` would."""
    imports = 'import { exec } from "node:child_process";\nimport { promisify } from "node:util";'
    setup = "const execAsync = promisify(exec);"
    body = '  await execAsync("git push origin main");'
    assert "AG101" in _small(tmp_path, "push_branch", body, imports, setup)


CHAT_AGENT = """\
import {{ AIChatAgent }} from "@cloudflare/ai-chat";
import {{ streamText, tool }} from "ai";
import {{ z }} from "zod";

export class Assistant extends AIChatAgent<Env> {{
  async onChatMessage() {{
    return streamText({{
      model: "m",
      tools: {{
        remindLater: tool({{
          description: "Remind the user later",
          inputSchema: z.object({{ seconds: z.number(), note: z.string() }}),
          execute: async ({{ seconds, note }}) => {{
            {call}
            return "done";
          }},
        }}),
      }},
    }});
  }}
}}
"""


@pytest.mark.parametrize(
    ("call", "effect"),
    [
        ('this.schedule(seconds, "remind", note);', ["write"]),
        ('this.cancelSchedule("reminder-1");', ["destructive"]),
        ("this.setState({ note });", ["write"]),
        ("const tasks = this.getSchedules();", []),
    ],
)
def test_a_method_of_the_package_class_an_agent_extends_is_judged(
    tmp_path: Path, call: str, effect: list[str]
) -> None:
    """`this.schedule(...)` in a class extending Cloudflare's `AIChatAgent`: the SDK's own
    method, which keeps the schedule in the agent's SQLite (a local write, no key); the
    tool is named by its key in `tools: {...}`."""
    write_project(
        tmp_path,
        {"package.json": '{"type": "module"}\n', "src/agent.ts": CHAT_AGENT.format(call=call)},
    )
    report = _run("report", str(tmp_path), "--format", "json")
    assert {tool["name"]: tool["effects"] for tool in report["tools"]} == {"remindLater": effect}
    codes = _codes_by_tool(tmp_path)["remindLater"]
    assert ("AG101" in codes) is bool(effect)
    assert "AG201" not in codes


@pytest.mark.parametrize(
    ("name", "body", "expected"),
    [
        # a GraphQL mutation document: GraphQL's own word says it writes
        (
            "add_comment",
            "  await client.graphql(`mutation($id: ID!, $body: String!) {\n"
            "    addComment(input: { subjectId: $id, body: $body }) { clientMutationId }\n"
            "  }`, { id: args.id, body: args.body });",
            {"AG101", "AG201"},
        ),
        # an HTTP route names its method
        (
            "comment_on_pr",
            "  await client.request(`POST /repos/${args.repo}/pulls/${args.pr}/comments`, { body: args.body });",
            {"AG101", "AG201"},
        ),
        ("remove_label", '  await client.request("DELETE /repos/a/b/labels/bug");', {"AG101"}),
        ("list_labels", '  await client.request("GET /repos/a/b/labels");', set()),
    ],
)
def test_a_client_typed_any_is_judged_by_the_protocol_words_it_is_handed(
    tmp_path: Path, name: str, body: str, expected: set[str]
) -> None:
    """`client: any`: no type says what the call does, but a GraphQL `mutation` or a route
    `"POST /..."` does, whatever sends it."""
    setup = "declare const client: any;"
    codes = _small(tmp_path, name, body, "", setup)
    assert codes & {"AG101", "AG201"} == expected


def test_a_default_exported_helper_is_followed(tmp_path: Path) -> None:
    """`import send from "./send"` of `export default async function send(...)`: the tool's
    call reaches the helper's POST."""
    helper = (
        "export default async function dispatchJob(route: string, body: unknown) {\n"
        '  await fetch(`https://jobs.example/${route}`, { method: "POST", body: JSON.stringify(body) });\n'
        '  return "dispatched";\n'
        "}\n"
    )
    source = SMALL_SERVER.format(
        imports='import dispatchJob from "./dispatch.js";',
        setup="",
        name="start_job",
        body='  await dispatchJob("api/jobs", args);',
    )
    write_project(
        tmp_path,
        {
            "package.json": '{"type": "module"}\n',
            "src/server.ts": source,
            "src/dispatch.ts": helper,
        },
    )
    assert "AG101" in _codes_by_tool(tmp_path)["start_job"]


def test_a_statement_the_tool_refuses_unless_it_selects_only_reads(tmp_path: Path) -> None:
    """`if (!query.trim().toLowerCase().startsWith("select")) throw ...` before handing the
    model's SQL to a driver helper (which rewrites it first): the tool only reads. The same
    helper from a tool without the check runs whatever the model wrote."""
    helper = (
        'import pg from "pg";\n'
        "const client = new pg.Client();\n"
        "export async function runQuery(query: string): Promise<unknown[]> {\n"
        '  const prepared = query.replace(/\\?/g, "$1");\n'
        "  const result = await client.query(prepared);\n"
        "  return result.rows;\n"
        "}\n"
    )
    server = (
        'import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";\n'
        'import { z } from "zod";\n'
        'import { runQuery } from "./db.js";\n'
        'const server = new McpServer({ name: "db", version: "1.0.0" });\n'
        'server.registerTool("read_query", { inputSchema: { query: z.string() } }, async ({ query }) => {\n'
        '  if (!query.trim().toLowerCase().startsWith("select")) {\n'
        '    throw new Error("Only SELECT queries are allowed");\n'
        "  }\n"
        '  return { content: [{ type: "text", text: JSON.stringify(await runQuery(query)) }] };\n'
        "});\n"
        'server.registerTool("run_sql", { inputSchema: { query: z.string() } }, async ({ query }) => {\n'
        '  return { content: [{ type: "text", text: JSON.stringify(await runQuery(query)) }] };\n'
        "});\n"
    )
    write_project(
        tmp_path,
        {"package.json": '{"type": "module"}\n', "src/server.ts": server, "src/db.ts": helper},
    )
    report = _run("report", str(tmp_path), "--format", "json")
    effects = {tool["name"]: tool["effects"] for tool in report["tools"]}
    assert effects["read_query"] == []
    assert effects["run_sql"] != []


def test_a_request_whose_method_the_model_chooses_may_write(tmp_path: Path) -> None:
    """`client.request(url, { method })` with `method` from the tool's input: a generic HTTP
    executor, a write of unknown idempotency, never a read."""
    source = (
        'import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";\n'
        'import { z } from "zod";\n'
        "declare const client: any;\n"
        'const server = new McpServer({ name: "api", version: "1.0.0" });\n'
        'server.registerTool("call_api", { inputSchema: { path: z.string(), method: z.string() } },\n'
        "  async ({ path, method }) => {\n"
        "    const res = await client.request(`https://api.example${path}`, { method });\n"
        '    return { content: [{ type: "text", text: JSON.stringify(res.data) }] };\n'
        "  });\n"
    )
    write_project(tmp_path, {"package.json": '{"type": "module"}\n', "src/server.ts": source})
    assert "AG101" in _codes_by_tool(tmp_path)["call_api"]


def test_simple_git_listings_read_and_its_commits_write(tmp_path: Path) -> None:
    """``git.branchLocal()`` lists branches: a read, never unknown; ``git.commit(...)`` adds to
    the history, though a database connection's ``commit`` is plumbing."""
    source = """\
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { simpleGit } from "simple-git";
const server = new McpServer({ name: "notes", version: "1.0.0" });
const git = simpleGit();
server.registerTool("branches", { description: "List branches" }, async () => {
  await git.checkIsRepo();
  return { content: [{ type: "text", text: JSON.stringify(await git.branchLocal()) }] };
});
server.registerTool("commit_notes", { description: "Commit the notes" }, async () => {
  await git.commit("notes");
  return { content: [] };
});
"""
    write_project(tmp_path, {"package.json": '{"type": "module"}\n', "src/server.ts": source})
    report = _run("report", str(tmp_path), "--format", "json")
    effects = {tool["name"]: tool["effects"] for tool in report["tools"]}
    assert effects == {"branches": [], "commit_notes": ["write"]}


def test_an_api_key_store_making_its_folder_is_no_side_effect(tmp_path: Path) -> None:
    """A key read back from a store that makes its folder when missing: how the server signs
    in to the search API, not what the tool does."""
    imports = 'import fs from "fs/promises";\nimport { homedir } from "os";'
    setup = (
        "async function getApiKey(name: string): Promise<string | undefined> {\n"
        "  await fs.mkdir(`${homedir()}/.quotes`, { recursive: true });\n"
        "  const text = await fs.readFile(`${homedir()}/.quotes/keys.json`, 'utf-8');\n"
        "  return JSON.parse(text)[name];\n"
        "}"
    )
    body = (
        '  const key = await getApiKey("QUOTES_KEY");\n'
        "  await fetch(`https://quotes.example/v1/quotes?key=${key}`);"
    )
    assert not _small(tmp_path, "find_quotes", body, imports, setup) & {"AG101"}
