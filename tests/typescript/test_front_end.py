"""The TypeScript and JavaScript front end, as a user meets it: ``agentguard check`` and
``agentguard report`` on TypeScript agent code find the tools each framework's documented
form registers, read their declarations, and check them with the Python rules, in one scan
with the Python beside them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from ..conftest import FIXTURES, write_project

HELPDESK = FIXTURES / "ts-helpdesk"


def agentguard(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentguard", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def report(root: Path) -> dict[str, Any]:
    done = agentguard("report", str(root), "--format", "json")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def findings(root: Path) -> list[dict[str, Any]]:
    done = agentguard("check", str(root), "--format", "json", "--no-cache", "--exit-zero")
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["findings"])


def tools_by_name(root: Path) -> dict[str, dict[str, Any]]:
    tools = report(root)["tools"]
    names = [tool["name"] for tool in tools]
    assert len(names) == len(set(names)), f"a tool listed twice: {names}"
    return {tool["name"]: tool for tool in tools}


def test_a_mixed_repository_is_one_scan_with_the_tools_of_both_languages() -> None:
    tools = tools_by_name(HELPDESK)
    assert set(tools) == {
        "create_ticket",
        "get_ticket",
        "close_ticket",
        "post_reply",
        "page_on_call",
    }
    assert tools["page_on_call"]["path"].endswith("agent/escalate.py")
    # the TypeScript tools are anchored in their callbacks, not in the generated schema file
    for name in ("create_ticket", "get_ticket", "close_ticket"):
        assert tools[name]["path"].endswith("src/index.ts")
    # a server handed to a function whose parameter says nothing of its type
    assert tools["post_reply"]["path"].endswith("src/tools/replies.ts")


def test_mcp_annotations_of_each_registration_form_are_declarations() -> None:
    tools = tools_by_name(HELPDESK)
    # registerTool's config object, and the annotations argument of server.tool
    assert tools["get_ticket"]["risk"]["value"] == "read"
    assert tools["get_ticket"]["risk"]["source"] != "inferred"
    assert tools["close_ticket"]["idempotency"]["value"] == "idempotent"
    assert tools["close_ticket"]["idempotency"]["source"] != "inferred"
    assert tools["create_ticket"]["risk"]["source"] == "inferred"


def test_raw_error_text_in_a_typescript_tool_result_is_reported_where_it_is_written() -> None:
    raw = [f for f in findings(HELPDESK) if f["code"] == "AG601"]
    assert len(raw) == 1
    assert raw[0]["path"].endswith("src/index.ts")
    assert raw[0]["line"] == 37  # the catch's return, in get_ticket
    assert "${error}" in raw[0]["message"]


def test_test_files_register_no_tools() -> None:
    assert "fake_refund" not in tools_by_name(HELPDESK)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "agent.ts": """
                    import { tool, generateText } from "ai";
                    import { z } from "zod";

                    export const lookupOrder = tool({
                      description: "Look an order up.",
                      inputSchema: z.object({ id: z.string() }),
                      execute: async ({ id }) => ({ id, status: "shipped" }),
                    });
                """
            },
            {"lookupOrder"},
            id="vercel-ai-sdk-tool",
        ),
        pytest.param(
            {
                "tools.ts": """
                    import { createTool } from "@mastra/core/tools";
                    import { z } from "zod";

                    export const weather = createTool({
                      id: "get-weather",
                      description: "Current weather for a city",
                      inputSchema: z.object({ city: z.string() }),
                      execute: async ({ context }) => ({ city: context.city, temperature: 21 }),
                    });
                """
            },
            {"get-weather"},
            id="mastra-create-tool",
        ),
        pytest.param(
            {
                "search.ts": """
                    import { StructuredTool } from "@langchain/core/tools";
                    import { z } from "zod";

                    export class DocsSearch extends StructuredTool {
                      name = "docs_search";
                      description = "Search the product documentation";
                      schema = z.object({ query: z.string() });

                      async _call({ query }: { query: string }): Promise<string> {
                        return `no results for ${query}`;
                      }
                    }
                """
            },
            {"docs_search"},
            id="langchain-js-structured-tool",
        ),
        pytest.param(
            {
                "server.mjs": """
                    import { FastMCP } from "fastmcp";

                    const server = new FastMCP({ name: "notes", version: "1.0.0" });
                    server.addTool({
                      name: "list_notes",
                      description: "List the notes",
                      annotations: { readOnlyHint: true },
                      execute: async () => "[]",
                    });
                """
            },
            {"list_notes"},
            id="fastmcp-javascript",
        ),
        pytest.param(
            {
                "server.ts": """
                    import { Server } from "@modelcontextprotocol/sdk/server/index.js";
                    import {
                      CallToolRequestSchema,
                      ListToolsRequestSchema,
                    } from "@modelcontextprotocol/sdk/types.js";
                    import { archiveProject } from "./projects.js";

                    const server = new Server({ name: "pm", version: "1" }, { capabilities: { tools: {} } });

                    server.setRequestHandler(ListToolsRequestSchema, async () => ({
                      tools: [
                        { name: "archive_project", description: "Archive a project", inputSchema: { type: "object" } },
                      ],
                    }));

                    server.setRequestHandler(CallToolRequestSchema, async (request) => {
                      switch (request.params.name) {
                        case "archive_project":
                          return archiveProject(request.params.arguments);
                        default:
                          throw new Error("unknown tool");
                      }
                    });
                """,
                "projects.ts": """
                    export async function archiveProject(args: unknown) {
                      return { content: [{ type: "text", text: "archived" }] };
                    }
                """,
            },
            {"archive_project"},
            id="low-level-server-switch",
        ),
    ],
)
def test_each_framework_form_is_found(
    tmp_path: Path, files: dict[str, str], expected: set[str]
) -> None:
    write_project(tmp_path, {name: dedent(text) for name, text in files.items()})
    tools = report(tmp_path)["tools"]
    found = {tool["name"] for tool in tools}
    assert found == expected


def test_a_file_the_parser_cannot_fully_read_still_yields_the_rest(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "server.ts": (
                'import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";\n'
                'const server = new McpServer({ name: "x", version: "1" });\n'
                "export type * from './types';\n"
                "const broken = (a: number => a;\n"
                'server.tool("ping", "Answer pong", async () => ({ content: [] }));\n'
            )
        },
    )
    assert [tool["name"] for tool in report(tmp_path)["tools"]] == ["ping"]
    done = agentguard("check", str(tmp_path), "--no-cache")
    assert "partly read server.ts: line 3 could not be parsed" in done.stdout
    assert "AG000" not in done.stdout


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(
            {
                "tools.ts": """
                    import { createTool } from "@mastra/core/tools";
                    import { z } from "zod";
                    import { store } from "./store.js";

                    export const profile = createTool({
                      id: "get_profile",
                      description: "A user's profile",
                      inputSchema: z.object({ userId: z.string() }),
                      execute: async ({ context }) => {
                        const key = `profile:${context.userId}`;
                        const cached = await store.get(key);
                        if (cached) return cached;
                        const fresh = await fetch(`https://people.example/users/${context.userId}`);
                        const body = await fresh.json();
                        await store.set(key, body, 3600);
                        return body;
                      },
                    });
                """,
                "store.ts": """
                    import { makeStore } from "./kv.js";
                    export const store = makeStore();
                """,
            },
            id="typescript",
        ),
        pytest.param(
            {
                "tools.py": """
                    import httpx
                    from langchain_core.tools import tool
                    from app_store import store


                    @tool
                    def get_profile(user_id: str) -> dict:
                        \"\"\"A user's profile.\"\"\"
                        key = f"profile:{user_id}"
                        cached = store.get(key)
                        if cached:
                            return cached
                        body = httpx.get(f"https://people.example/users/{user_id}").json()
                        store.set(key, body, 3600)
                        return body
                """
            },
            id="python",
        ),
    ],
)
def test_a_read_through_cache_filled_with_what_was_read_is_no_write(
    tmp_path: Path, files: dict[str, str]
) -> None:
    write_project(tmp_path, {name: dedent(text) for name, text in files.items()})
    (tool,) = report(tmp_path)["tools"]
    assert tool["risk"]["value"] == "read"
    assert not [f for f in findings(tmp_path) if f["code"] in {"AG101", "AG201"}]


def test_a_switch_case_that_falls_through_and_a_nested_handler_are_followed(
    tmp_path: Path,
) -> None:
    write_project(
        tmp_path,
        {
            "server.ts": dedent(
                """
                import { Server } from "@modelcontextprotocol/sdk/server/index.js";
                import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
                import { google } from "googleapis";

                const TOOLS = [
                  { name: "send_email", description: "Send a message", inputSchema: {} },
                  { name: "draft_email", description: "Save a draft", inputSchema: {} },
                ];

                export async function serve(auth: unknown) {
                  const gmail = google.gmail({ version: "v1", auth });
                  const server = new Server({ name: "mail", version: "1" }, { capabilities: {} });
                  server.setRequestHandler(CallToolRequestSchema, async (request) => {
                    const { name, arguments: args } = request.params;
                    async function deliver(kind: "send" | "draft", raw: string) {
                      if (kind === "send") {
                        await gmail.users.messages.send({ userId: "me", requestBody: { raw } });
                      } else {
                        await gmail.users.drafts.create({ userId: "me", requestBody: { message: { raw } } });
                      }
                      return { content: [{ type: "text", text: "done" }] };
                    }
                    switch (name) {
                      case "send_email":
                      case "draft_email":
                        return deliver(name === "send_email" ? "send" : "draft", String(args?.raw));
                      default:
                        throw new Error(`unknown tool ${name}`);
                    }
                  });
                  return TOOLS;
                }
                """
            )
        },
    )
    tools = tools_by_name(tmp_path)
    assert set(tools) == {"send_email", "draft_email"}
    for tool in tools.values():
        assert "message" in tool["effects"]


def test_a_query_builder_reads_and_an_insert_writes_through_a_project_factory(
    tmp_path: Path,
) -> None:
    write_project(
        tmp_path,
        {
            "tools.ts": dedent(
                """
                import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
                import { drizzle } from "drizzle-orm/d1";
                import { z } from "zod";
                import { items } from "./schema.js";

                function database(env: any) {
                  return drizzle(env.DB);
                }

                export function register(server: McpServer, env: any) {
                  server.tool("list_items", "Items by name", {}, async () => {
                    const db = database(env);
                    const rows = await db.select().from(items).orderBy(items.name);
                    return { content: [{ type: "text", text: JSON.stringify(rows) }] };
                  });
                  server.tool("add_item", "Add an item", { name: z.string() }, async ({ name }) => {
                    const db = database(env);
                    await db.insert(items).values({ name });
                    return { content: [{ type: "text", text: "added" }] };
                  });
                }
                """
            ),
            "schema.ts": "export const items = { name: 'name' };\n",
        },
    )
    tools = tools_by_name(tmp_path)
    assert tools["list_items"]["risk"]["value"] == "read"
    assert tools["add_item"]["risk"]["value"] == "write"
    # the app's own database: a local write, no idempotency key asked of it
    assert not [f for f in findings(tmp_path) if f["code"] == "AG201"]


def test_node_sqlite3_statements_are_judged_by_their_text(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "server.ts": dedent(
                """
                import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
                import sqlite3 from "sqlite3";
                import { z } from "zod";

                const db = new sqlite3.Database("notes.db");
                const server = new McpServer({ name: "notes", version: "1" });

                server.tool("list_notes", "All notes", {}, async () => {
                  const rows = await new Promise((resolve, reject) =>
                    db.all("SELECT id, body FROM notes", (err, found) => (err ? reject(err) : resolve(found))),
                  );
                  return { content: [{ type: "text", text: JSON.stringify(rows) }] };
                });

                server.tool("add_note", "Add a note", { body: z.string() }, async ({ body }) => {
                  await new Promise((resolve, reject) =>
                    db.run("INSERT INTO notes (body) VALUES (?)", [body], (err) => (err ? reject(err) : resolve(null))),
                  );
                  return { content: [{ type: "text", text: "saved" }] };
                });
                """
            )
        },
    )
    tools = tools_by_name(tmp_path)
    assert tools["list_notes"]["risk"]["value"] == "read"
    assert tools["add_note"]["risk"]["value"] == "write"


def test_a_tool_the_client_answers_is_still_a_tool(tmp_path: Path) -> None:
    # The Vercel AI SDK forwards a tool with no `execute` to the client: the model still
    # calls it, so it is listed, anchored at its registration, doing nothing here.
    write_project(
        tmp_path,
        {
            "tools.ts": dedent(
                """
                import { tool } from "ai";
                import { z } from "zod";

                export const askForConfirmation = tool({
                  description: "Ask the user to confirm before anything is sent",
                  inputSchema: z.object({ message: z.string() }),
                });
                """
            )
        },
    )
    (tool,) = report(tmp_path)["tools"]
    assert tool["name"] == "askForConfirmation"
    assert tool["line"] == 5
    assert tool["effects"] == []


def test_a_statement_on_a_connection_no_driver_names_is_judged_by_its_text(
    tmp_path: Path,
) -> None:
    write_project(
        tmp_path,
        {
            "server.ts": dedent(
                """
                import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
                import { z } from "zod";
                import { getConnection } from "./db.js";

                const server = new McpServer({ name: "crm", version: "1" });

                server.tool("add_customer", "Add a customer", { name: z.string() }, async ({ name }) => {
                  const conn = getConnection();
                  await conn.execute("INSERT INTO customers (name) VALUES (?)", [name]);
                  return { content: [{ type: "text", text: "added" }] };
                });

                server.tool("count_customers", "How many customers", {}, async () => {
                  const conn = getConnection();
                  const rows = await conn.query("SELECT COUNT(*) AS n FROM customers");
                  return { content: [{ type: "text", text: String(rows[0].n) }] };
                });
                """
            ),
            "db.ts": "let connection: any;\nexport function getConnection() { return connection; }\n",
        },
    )
    tools = tools_by_name(tmp_path)
    assert tools["add_customer"]["risk"]["value"] == "write"
    assert tools["count_customers"]["risk"]["value"] == "read"
    high = [f for f in findings(tmp_path) if f["code"] == "AG101"]
    assert [f["confidence"] for f in high] == ["high"]


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(
            {
                "tools.ts": """
                    import { tool } from "ai";
                    import { z } from "zod";
                    import { flushAuditEvents } from "./audit.js";

                    export const listLabels = tool({
                      description: "The mailbox's labels",
                      inputSchema: z.object({}),
                      execute: async () => {
                        const response = await fetch("https://mail.example/labels");
                        await flushAuditEvents();
                        return response.json();
                      },
                    });
                """,
                "audit.ts": """
                    const pending: unknown[] = [];
                    export async function flushAuditEvents() {
                      await fetch("https://audit.example/batch", {
                        method: "POST",
                        body: JSON.stringify(pending.splice(0)),
                      });
                    }
                """,
            },
            id="typescript",
        ),
        pytest.param(
            {
                "tools.py": """
                    import httpx
                    from langchain_core.tools import tool
                    from telemetry import send_metrics


                    @tool
                    def list_labels() -> list:
                        \"\"\"The mailbox's labels.\"\"\"
                        labels = httpx.get("https://mail.example/labels").json()
                        send_metrics("labels.listed", 1)
                        return labels
                """,
                "telemetry.py": """
                    import httpx


                    def send_metrics(name: str, value: int) -> None:
                        httpx.post("https://metrics.example/v1", json={"name": name, "value": value})
                """,
            },
            id="python",
        ),
    ],
)
def test_a_helper_that_delivers_logs_or_metrics_is_no_effect_of_the_tool(
    tmp_path: Path, files: dict[str, str]
) -> None:
    write_project(tmp_path, {name: dedent(text) for name, text in files.items()})
    (tool,) = report(tmp_path)["tools"]
    assert tool["risk"]["value"] == "read"


def test_tools_named_by_an_enum_member_are_dispatched_by_it(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "server.ts": dedent(
                """
                import { Server } from "@modelcontextprotocol/sdk/server/index.js";
                import { CallToolRequestSchema, Tool } from "@modelcontextprotocol/sdk/types.js";

                enum ToolName {
                  CREATE_TABLE = "create_table",
                  READ_QUERY = "read_query",
                }

                export const TOOLS: Tool[] = [
                  { name: ToolName.CREATE_TABLE, description: "Create a table", inputSchema: { type: "object" } },
                  { name: ToolName.READ_QUERY, description: "Run a SELECT", inputSchema: { type: "object" } },
                ];

                const server = new Server({ name: "db", version: "1" }, { capabilities: { tools: {} } });
                server.setRequestHandler(CallToolRequestSchema, async (request) => {
                  switch (request.params.name) {
                    case ToolName.CREATE_TABLE: {
                      await fetch("https://db.example/tables", { method: "POST" });
                      return { content: [{ type: "text", text: "created" }] };
                    }
                    case ToolName.READ_QUERY: {
                      const rows = await fetch("https://db.example/query");
                      return { content: [{ type: "text", text: await rows.text() }] };
                    }
                    default:
                      throw new Error("unknown tool");
                  }
                });
                """
            )
        },
    )
    tools = tools_by_name(tmp_path)
    assert tools["create_table"]["risk"]["value"] == "network_write"
    assert tools["read_query"]["risk"]["value"] == "read"


def test_a_realtime_agent_tool_is_found(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "agent.ts": dedent(
                """
                import { RealtimeAgent, tool } from "@openai/agents/realtime";
                import { z } from "zod";

                export const concierge = new RealtimeAgent({
                  name: "concierge",
                  instructions: "Help the guest",
                  tools: [
                    tool({
                      name: "book_table",
                      description: "Book a table",
                      parameters: z.object({ time: z.string() }),
                      execute: async ({ time }) => {
                        await fetch("https://restaurant.example/bookings", { method: "POST", body: time });
                        return "booked";
                      },
                    }),
                  ],
                });
                """
            )
        },
    )
    (tool,) = report(tmp_path)["tools"]
    assert tool["name"] == "book_table"
    assert tool["risk"]["value"] == "network_write"


def test_a_regular_expression_matched_against_input_is_no_write(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "tools.ts": dedent(
                """
                import { tool } from "ai";
                import { z } from "zod";

                export const fileId = tool({
                  description: "The file id a link names",
                  inputSchema: z.object({ url: z.string() }),
                  execute: async ({ url }) => /(F[A-Z0-9]{6,})/.exec(url)?.[1] ?? null,
                });
                """
            )
        },
    )
    (tool,) = report(tmp_path)["tools"]
    assert tool["risk"]["value"] == "read"
    assert findings(tmp_path) == []


def test_an_html_document_and_a_string_changed_in_memory_are_no_writes(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "tools.ts": dedent(
                """
                import { tool } from "ai";
                import { load } from "cheerio";
                import { z } from "zod";

                export const pageText = tool({
                  description: "The visible text of a page",
                  inputSchema: z.object({ url: z.string() }),
                  execute: async ({ url }) => {
                    const html = await (await fetch(url)).text();
                    const $ = load(html);
                    $("script").remove();
                    return $("body").text().replace(/\\s+/g, " ").trim();
                  },
                });
                """
            )
        },
    )
    (tool,) = report(tmp_path)["tools"]
    assert tool["risk"]["value"] == "read"


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(
            {
                "src/tools.ts": """
                    import { Tool } from "@modelcontextprotocol/sdk/types.js";
                    export const TOOLS: Tool[] = [
                      { name: "create_invoice", description: "Create an invoice", inputSchema: { type: "object" } },
                      { name: "list_invoices", description: "List invoices", inputSchema: { type: "object" } },
                    ];
                """,
                "src/handlers.ts": """
                    export async function handleToolCall(name: string, args: unknown) {
                      switch (name) {
                        case "create_invoice": {
                          const made = await fetch("https://billing.example/invoices", { method: "POST", body: JSON.stringify(args) });
                          return { content: [{ type: "text", text: await made.text() }] };
                        }
                        case "list_invoices": {
                          const listed = await fetch("https://billing.example/invoices");
                          return { content: [{ type: "text", text: await listed.text() }] };
                        }
                        default:
                          throw new Error(`unknown tool ${name}`);
                      }
                    }
                """,
            },
            id="typescript",
        ),
        pytest.param(
            {
                "billing/tools.py": """
                    from mcp.types import Tool

                    TOOLS = [
                        Tool(name="create_invoice", description="Create an invoice", inputSchema={"type": "object"}),
                        Tool(name="list_invoices", description="List invoices", inputSchema={"type": "object"}),
                    ]
                """,
                "billing/handlers.py": """
                    import httpx


                    async def handle_tool_call(name: str, arguments: dict) -> str:
                        async with httpx.AsyncClient() as client:
                            if name == "create_invoice":
                                made = await client.post("https://billing.example/invoices", json=arguments)
                                return made.text
                            elif name == "list_invoices":
                                listed = await client.get("https://billing.example/invoices")
                                return listed.text
                        raise ValueError(name)
                """,
            },
            id="python",
        ),
    ],
)
def test_tools_listed_in_one_module_and_dispatched_in_another(
    tmp_path: Path, files: dict[str, str]
) -> None:
    write_project(tmp_path, {name: dedent(text) for name, text in files.items()})
    tools = tools_by_name(tmp_path)
    assert set(tools) == {"create_invoice", "list_invoices"}
    assert "handlers" in tools["create_invoice"]["path"]
    assert tools["create_invoice"]["risk"]["value"] == "network_write"
    assert tools["list_invoices"]["risk"]["value"] == "read"


def test_an_untyped_client_handed_on_through_helpers_keeps_its_type(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "labels.ts": dedent(
                """
                export async function createLabel(gmail: any, name: string) {
                  const made = await gmail.users.labels.create({ userId: "me", requestBody: { name } });
                  return made.data;
                }

                export async function getOrCreateLabel(gmail: any, name: string) {
                  const listed = await gmail.users.labels.list({ userId: "me" });
                  const found = listed.data.labels?.find((label: any) => label.name === name);
                  return found ?? (await createLabel(gmail, name));
                }
                """
            ),
            "server.ts": dedent(
                """
                import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
                import { google } from "googleapis";
                import { z } from "zod";
                import { getOrCreateLabel } from "./labels.js";

                const gmail = google.gmail({ version: "v1" });
                const server = new McpServer({ name: "mail", version: "1" });
                server.tool("label", "Find or make a label", { name: z.string() }, async ({ name }) => {
                  const label = await getOrCreateLabel(gmail, name);
                  return { content: [{ type: "text", text: String(label?.id) }] };
                });
                """
            ),
        },
    )
    (tool,) = report(tmp_path)["tools"]
    assert tool["risk"]["value"] == "network_write"


def test_an_object_a_service_answered_with_acts_on_that_service(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "server.ts": dedent(
                """
                import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
                import { LinearClient } from "@linear/sdk";
                import { z } from "zod";

                class Tracker {
                  private client: LinearClient;
                  constructor(apiKey: string) {
                    this.client = new LinearClient({ apiKey });
                  }
                  async rename(id: string, title: string) {
                    const issue = await this.client.issue(id);
                    const labels = await issue.labels();
                    labels.nodes.push(labels.nodes[0]);
                    return issue.update({ title });
                  }
                }

                const tracker = new Tracker("key");
                const server = new McpServer({ name: "tracker", version: "1" });
                server.tool("rename_issue", "Rename an issue", { id: z.string(), title: z.string() }, async ({ id, title }) => {
                  await tracker.rename(id, title);
                  return { content: [{ type: "text", text: "renamed" }] };
                });
                """
            )
        },
    )
    (tool,) = report(tmp_path)["tools"]
    assert tool["risk"]["value"] == "write"


def test_a_call_through_an_interface_reaches_the_class_that_implements_it(
    tmp_path: Path,
) -> None:
    write_project(
        tmp_path,
        {
            "src/db/adapter.ts": dedent(
                """
                export interface DbAdapter {
                  all(query: string, params?: unknown[]): Promise<unknown[]>;
                  run(query: string, params?: unknown[]): Promise<void>;
                }
                """
            ),
            "src/db/sqlite.ts": dedent(
                """
                import sqlite3 from "sqlite3";
                import { DbAdapter } from "./adapter.js";

                export class SqliteAdapter implements DbAdapter {
                  private db: sqlite3.Database = new sqlite3.Database("data.db");
                  async all(query: string, params: unknown[] = []) {
                    return new Promise<unknown[]>((resolve, reject) =>
                      this.db.all(query, params, (err, rows) => (err ? reject(err) : resolve(rows))),
                    );
                  }
                  async run(query: string, params: unknown[] = []) {
                    return new Promise<void>((resolve, reject) =>
                      this.db.run(query, params, (err) => (err ? reject(err) : resolve())),
                    );
                  }
                }
                """
            ),
            "src/server.ts": dedent(
                """
                import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
                import { z } from "zod";
                import { DbAdapter } from "./db/adapter.js";
                import { SqliteAdapter } from "./db/sqlite.js";

                const adapter: DbAdapter = new SqliteAdapter();
                const server = new McpServer({ name: "notes", version: "1" });

                server.tool("add_note", "Add a note", { text: z.string() }, async ({ text }) => {
                  await adapter.run("INSERT INTO notes (text) VALUES (?)", [text]);
                  return { content: [{ type: "text", text: "added" }] };
                });

                server.tool("count_notes", "Count the notes", {}, async () => {
                  const rows = await adapter.all("SELECT COUNT(*) AS n FROM notes");
                  return { content: [{ type: "text", text: JSON.stringify(rows) }] };
                });
                """
            ),
        },
    )
    tools = tools_by_name(tmp_path)
    assert tools["add_note"]["risk"]["value"] == "write"
    assert tools["count_notes"]["risk"]["value"] == "read"


def test_a_suppression_comment_on_the_line_silences_that_finding() -> None:
    done = agentguard("check", str(HELPDESK), "--format", "json", "--no-cache", "--exit-zero")
    result = json.loads(done.stdout)
    assert result["summary"]["suppressed"] == 1
    replies = [f for f in result["findings"] if f["path"].endswith("replies.ts")]
    assert "AG201" not in {f["code"] for f in replies}
    assert "AG002" not in {f["code"] for f in replies}


SUPPORT_TABLE = """\
import { z } from "zod";

export const supportTools = [
  {
    name: "open_case",
    description: "Open a support case",
    shape: { subject: z.string() },
    run: async ({ subject }: { subject: string }) =>
      (await fetch("https://cases.example/cases", { method: "POST", body: JSON.stringify({ subject }) })).json(),
  },
  {
    name: "case_status",
    description: "The status of a support case",
    shape: { id: z.string() },
    run: async ({ id }: { id: string }) => (await fetch(`https://cases.example/cases/${id}`)).json(),
  },
];
"""


@pytest.mark.parametrize(
    "adapter",
    [
        # an MCP server registering each record, its callback calling the record's function
        (
            'import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";\n'
            'import { supportTools } from "./table.js";\n'
            'const server = new McpServer({ name: "support", version: "1.0.0" });\n'
            "for (const entry of supportTools) {\n"
            "  server.tool(entry.name, entry.description, entry.shape, async (args) => ({\n"
            '    content: [{ type: "text", text: JSON.stringify(await entry.run(args as never)) }],\n'
            "  }));\n"
            "}\n"
        ),
        # LangChain.js tools made of each record in a loop
        (
            'import { tool } from "@langchain/core/tools";\n'
            'import { z } from "zod";\n'
            'import { supportTools } from "./table.js";\n'
            "export function langchainTools() {\n"
            "  const made = [];\n"
            "  for (const entry of supportTools) {\n"
            "    made.push(tool(async (args) => JSON.stringify(await entry.run(args as never)), {\n"
            "      name: entry.name, description: entry.description, schema: z.object(entry.shape),\n"
            "    }));\n"
            "  }\n"
            "  return made;\n"
            "}\n"
        ),
    ],
    ids=["mcp", "langchain-js"],
)
def test_each_record_of_a_table_registered_in_a_loop_is_a_tool(
    tmp_path: Path, adapter: str
) -> None:
    """A table of tool records (name, description, shape, function) registered in a loop by
    a framework's call named by the record's field: one tool per record, at the record,
    running the record's function."""
    write_project(
        tmp_path,
        {
            "package.json": '{"type": "module"}\n',
            "src/table.ts": SUPPORT_TABLE,
            "src/adapter.ts": adapter,
        },
    )
    tools = {tool["name"]: tool for tool in report(tmp_path)["tools"]}
    assert set(tools) == {"open_case", "case_status"}
    assert tools["open_case"]["path"] == "src/table.ts"
    assert tools["open_case"]["effects"] != []
    assert tools["case_status"]["effects"] == []
