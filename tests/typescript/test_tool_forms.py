"""TypeScript tool forms met in MCP servers written by hand, each on a small project of
``fixtures/ts-tool-forms``: what ``agentguard report`` lists as tools, and what it says each
one does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..conftest import FIXTURES

FORMS = FIXTURES / "ts-tool-forms"
# The dependencies of a small MCP server on the TypeScript SDK.
MCP_SERVER = {"@modelcontextprotocol/sdk": "^1", "zod": "^3"}


def tools_of(project: Path) -> dict[str, dict[str, Any]]:
    """The tools the report lists, by name; each name listed once."""
    done = subprocess.run(
        [sys.executable, "-m", "agentguard", "report", str(project), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    tools = json.loads(done.stdout)["tools"]
    by_name = {tool["name"]: tool for tool in tools}
    assert len(by_name) == len(tools), sorted(tool["name"] for tool in tools)
    return by_name


def vercel_agent(tools: str) -> str:
    """An agent module handing the tools ``./tools`` exports as ``tools`` to the Vercel AI
    SDK's ``generateText``."""
    return (
        "import { generateText } from 'ai'\n"
        "import { openai } from '@ai-sdk/openai'\n"
        f"import {{ {tools} }} from './tools'\n"
        "export const run = (prompt: string) =>\n"
        f"  generateText({{ model: openai('gpt-4o'), tools: {tools}, prompt }})\n"
    )


def small_project(root: Path, dependencies: dict[str, str], sources: dict[str, str]) -> Path:
    """A package at ``root`` with these npm dependencies and files under ``src/``."""
    manifest = {"name": root.name, "type": "module", "dependencies": dependencies}
    for relative, text in sources.items():
        (root / "src" / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / relative).write_text(text)
    (root / "package.json").write_text(json.dumps(manifest))
    return root


def test_tools_built_by_factories_and_kept_in_the_servers_map_are_found() -> None:
    """A factory returning the project's own tool record (``defineTool({name, schema,
    handler})``), registered in a loop into a Map the ``CallTool`` handler looks up: each
    record is a tool running its handler; a factory nothing calls registers nothing."""
    tools = tools_of(FORMS / "tool-map")
    assert set(tools) == {"archive_page", "list_pages"}
    assert tools["archive_page"]["path"].endswith("src/tools/archive-page.ts")
    assert tools["archive_page"]["risk"]["value"] != "read"
    assert tools["archive_page"]["effects"] != []


def test_asking_what_a_path_is_or_holds_is_no_effect() -> None:
    """``fs.access``, ``fs.readdir`` and ``fs.stat`` read: a tool listing files is read only,
    not unknown."""
    tools = tools_of(FORMS / "tool-map")
    assert tools["list_pages"]["effects"] == []
    assert tools["list_pages"]["risk"]["value"] == "read"


def test_an_argument_check_before_a_switch_case_is_not_the_tool() -> None:
    """``if (!isPostNoticeArgs(args)) throw ...`` opens the case: the case's own work (its
    POST) is the tool's, not the type guard's."""
    tools = tools_of(FORMS / "guarded-switch")
    assert set(tools) == {"post_notice", "list_notices"}
    assert tools["post_notice"]["effects"] != []
    assert tools["post_notice"]["risk"]["value"] != "read"
    assert tools["list_notices"]["effects"] == []


def test_a_run_context_typed_by_assertion_reaches_the_sdk_its_type_declares() -> None:
    """``experimental_context as AgentContext`` (an object ``type`` exported through a barrel's
    ``export *``), whole or destructured: its ``cms`` field is the package's client (through
    the alias ``type CmsClient = AcmeCms<...>``), whose ``createArticle`` and
    ``sendMessage`` write."""
    tools = tools_of(FORMS / "context-sdk")
    assert set(tools) == {"publishArticleTool", "notifyDeskTool", "previewLinkTool"}
    for name in ("publishArticleTool", "notifyDeskTool"):
        assert tools[name]["effects"] == ["network_write"], name
        assert tools[name]["risk"]["value"] != "read"


def test_a_builder_made_by_a_static_factory_is_no_write() -> None:
    """``UrlForge.create(base).addPath(...).addQuery(...).build()``: an object built in
    memory, whatever its methods are called."""
    tools = tools_of(FORMS / "context-sdk")
    assert tools["previewLinkTool"]["effects"] == []
    assert tools["previewLinkTool"]["risk"]["value"] == "read"


def test_a_write_on_a_module_a_project_loader_imports_at_run_time_is_never_read() -> None:
    """``const journal = await loadApp("journal"); journal.addEntry(...)``, where ``loadApp``
    imports the app's helpers on first use: what ``addEntry`` does is out of sight, so the
    tool is unknown, not read; a tool calling no write verb there stays read."""
    tools = tools_of(FORMS / "lazy-modules")
    assert set(tools) == {"journal", "clock"}
    assert tools["journal"]["risk"]["value"] != "read"
    assert tools["clock"]["risk"]["value"] == "read"


def test_tools_a_call_handler_looks_up_in_a_table_of_handlers_by_name_are_found() -> None:
    """``ListTools`` lists ``Tool`` constants of one module; ``CallTool`` runs
    ``handlers[request.params.name]`` from ``{add_shift: addShift, ...}``: each name runs
    the handler the table gives it, in the module that defines it."""
    tools = tools_of(FORMS / "handler-table")
    assert set(tools) == {"add_shift", "list_shifts", "cancel_shift"}
    assert tools["add_shift"]["path"].endswith("src/handlers/shifts.ts")
    assert tools["add_shift"]["effects"] == ["network_write"]
    assert tools["cancel_shift"]["effects"] == ["destructive"]
    assert tools["list_shifts"]["effects"] == []


def test_tool_classes_of_a_project_base_named_like_a_frameworks_are_found() -> None:
    """``class OpenTicketTool extends BaseTool`` with ``name``, ``inputSchema`` and
    ``execute``, where ``BaseTool`` is the project's own abstract class (no framework's,
    though LangChain has one so named), kept in a Map by name: each subclass is a tool."""
    tools = tools_of(FORMS / "tool-classes")
    assert set(tools) == {"open_ticket", "search_tickets"}
    assert tools["open_ticket"]["effects"] == ["network_write"]
    assert tools["search_tickets"]["effects"] == []


def test_tool_names_held_by_a_constant_object_of_another_module_are_followed() -> None:
    """``name: GreenhouseTools.SET_WATERING`` in the listing and ``if (name ===
    GreenhouseTools.SET_WATERING)`` in the dispatch, the object imported from ``names.ts``
    (``{...} as const``): the tools are named by the strings it holds."""
    tools = tools_of(FORMS / "constant-names")
    assert set(tools) == {"set_watering", "read_sensors"}
    assert tools["set_watering"]["risk"]["value"] != "read"
    assert tools["read_sensors"]["effects"] == []


def test_a_commonjs_server_is_read_through_its_requires() -> None:
    """Plain JavaScript with ``require``: ``const { Server } = require(...)``, a module
    required whole (``pantry.shelveItem(args)``) and a renamed constant object
    (``const { ToolNames: Names } = require("./names")``, ``Object.freeze({...})``)."""
    tools = tools_of(FORMS / "commonjs-names")
    assert set(tools) == {"shelve_item", "count_items"}
    assert tools["shelve_item"]["path"].endswith("src/pantry.js")
    assert tools["shelve_item"]["effects"] == ["network_write"]
    assert tools["count_items"]["effects"] == []


def test_tools_returned_in_an_object_by_a_factory_are_named_by_their_keys() -> None:
    """``return {placeHold: tool({...}), searchTitles: tool({...})}`` from a function that
    binds the tools to a client: each tool takes its key's name."""
    tools = tools_of(FORMS / "returned-tools")
    assert set(tools) == {"placeHold", "searchTitles"}
    assert tools["placeHold"]["effects"] == ["network_write"]
    assert tools["searchTitles"]["effects"] == []


def test_a_function_tool_answered_by_a_switch_case_of_its_own_is_found() -> None:
    """Responses API function specs (``{type: "function", name, parameters}``) answered by a
    local ``switch (name)``: a case returning data itself (``case "openingHours": return
    OPENING_HOURS``) is the tool, doing nothing; a case handing over to a function is that
    function."""
    tools = tools_of(FORMS / "answering-switch")
    assert set(tools) == {"openingHours", "bookTour"}
    assert tools["openingHours"]["effects"] == []
    assert tools["bookTour"]["effects"] == ["network_write"]


def test_a_table_of_handlers_keyed_by_the_tools_own_names_is_followed() -> None:
    """``{[bookStayTool.name]: (args) => desk.bookStay(...)}``, keyed by the ``name`` of
    ``Tool`` constants imported from another module, looked up by the ``CallTool`` handler
    (a function of a third module): each arrow is its tool's handler."""
    tools = tools_of(FORMS / "computed-keys")
    assert set(tools) == {"book_stay", "free_runs"}
    assert tools["book_stay"]["effects"] == ["network_write"]
    assert tools["free_runs"]["effects"] == []


def test_a_table_keyed_by_the_tools_own_names_naming_handler_functions_is_followed() -> None:
    """``{[OPEN_SLOTS_TOOL.name]: handleOpenSlots}``: handlers imported from the modules that
    also define each tool's ``Tool`` constant, listed by a ``ListTools`` handler of a third
    module and looked up by its ``CallTool`` handler. Each handler is its tool, reported where
    it is written, whatever its tool is called (``openSlots`` has no function of that name), though a
    namespace of the services holds functions named like two of the tools."""
    project = FORMS / "computed-key-handlers"
    tools = tools_of(project)
    assert set(tools) == {"openSlots", "reserveGrooming", "cancelWalk"}
    assert tools["openSlots"]["path"].endswith("src/tools/groomings/slots.ts")
    assert tools["reserveGrooming"]["path"].endswith("src/tools/groomings/reserve.ts")
    assert tools["cancelWalk"]["path"].endswith("src/tools/walks/cancel.ts")
    assert tools["openSlots"]["risk"]["value"] == "read"
    assert tools["reserveGrooming"]["effects"] == ["network_write"]
    assert tools["cancelWalk"]["effects"] == ["destructive"]


def test_a_service_reached_through_a_context_type_is_judged_by_what_its_methods_send() -> None:
    """``ctx.clinic.bookAppointment(...)`` with ``ctx: ToolContext`` (an object ``type``
    whose ``clinic`` is the service's interface): the class implementing it POSTs through
    its ``fetchFromApi`` helper, the method choosing the POST naming what it does; its
    ``findSlots`` reads, a field typed ``z.infer<...>`` being data, not a package's object."""
    tools = tools_of(FORMS / "service-helper")
    assert set(tools) == {"book_appointment", "find_slots"}
    assert tools["book_appointment"]["effects"] == ["network_write"]
    assert tools["find_slots"]["effects"] == []
    assert tools["find_slots"]["risk"]["value"] == "read"


def test_records_of_a_table_keyed_by_tool_name_are_tools() -> None:
    """``const toolDefinitions = {publish_page: {description, inputSchema, handler}}``, the
    listing and the dispatch both walking the table: each record is a tool named by its key,
    running its handler."""
    tools = tools_of(FORMS / "keyed-records")
    assert set(tools) == {"publish_page", "recent_changes"}
    assert tools["publish_page"]["effects"] == ["network_write"]
    assert tools["recent_changes"]["effects"] == []


def test_a_client_destructured_from_what_a_helper_returns_is_that_client() -> None:
    """``const { drive } = await workspaceClients(token)`` with the helper returning ``{ drive,
    calendar: google.calendar(...) }`` (``drive`` bound to ``google.drive(...)`` first):
    ``drive`` is the Drive client, so the note it creates is a remote write and its listing
    reads."""
    tools = tools_of(FORMS / "destructured-clients")
    assert set(tools) == {"createNote", "listNotes"}
    assert tools["createNote"]["effects"] == ["network_write"]
    assert tools["listNotes"]["effects"] == []


def test_a_supabase_client_two_getters_return_is_judged_by_its_query() -> None:
    """``const db = await getServerDb()``, where ``getServerDb`` returns what another
    project function returns, ``createServerClient(...)`` of ``@supabase/ssr``: ``db`` is that
    client, so ``db.from(t).update(...)`` writes the application's database, an insert adds
    a row, a delete removes one and a ``select`` reads. Building the client is no effect."""
    tools = tools_of(FORMS / "supabase-getters")
    assert set(tools) == {"mark_shipped", "add_order_note", "remove_order_note", "find_order"}
    assert tools["mark_shipped"]["effects"] == ["write"]
    assert tools["mark_shipped"]["idempotency"]["value"] == "idempotent"
    assert tools["add_order_note"]["effects"] == ["write"]
    assert tools["add_order_note"]["idempotency"]["value"] == "non-idempotent"
    assert tools["remove_order_note"]["effects"] == ["destructive"]
    assert tools["find_order"]["effects"] == []


def test_a_helper_a_case_calls_through_its_parameter_is_what_the_server_hands_it() -> None:
    """``case "water_plant": return apiPost(...)`` in a module's ``handle(name, args,
    apiGet, apiPost)``, which the server calls as ``handler.handle(name, args, apiGet,
    apiPost)`` on a module looked up in a table: the case runs the server's POST helper, a
    remote write, and the reading case its GET helper. Before, a call through a parameter
    was no effect at all."""
    tools = tools_of(FORMS / "handed-helpers")
    assert set(tools) == {"get_plant", "water_plant", "repot_plant"}
    assert tools["water_plant"]["effects"] == ["network_write"]
    assert tools["get_plant"]["effects"] == []


def test_each_case_reaching_the_same_helper_is_judged_at_its_own_call() -> None:
    """``water_plant`` and ``repot_plant`` both reach the one POST of the server's
    ``apiPost``: each case is judged by its own call, so the second case to reach it is a
    write too, not "read" because the first case's call was the one remembered."""
    tools = tools_of(FORMS / "handed-helpers")
    assert tools["repot_plant"]["effects"] == ["network_write"]
    assert tools["repot_plant"]["risk"]["value"] != "read"


def test_records_a_foreach_registers_by_destructured_fields_are_tools() -> None:
    """``slotTools.forEach(({ name, config, handler }) => server.registerTool(name, config,
    handler))`` over default-exported constants of other modules: each record is a tool,
    named by its ``name`` field and running its ``handler``. A date the handler computes
    with an in-memory library (``dayjs(day).add(1, "day")``) is no write."""
    tools = tools_of(FORMS / "each-records")
    assert set(tools) == {"bookSlot", "openSlots"}
    assert tools["bookSlot"]["path"].endswith("src/tools/bookSlot.ts")
    assert tools["bookSlot"]["effects"] == ["network_write"]
    assert tools["openSlots"]["effects"] == []


def test_records_built_by_a_class_that_writes_their_tool_spec_are_tools() -> None:
    """``export default Skill.define({ name, about, args, run })``: the class a static
    factory builds writes a tool spec (name, description, ``input_schema``) from its config,
    so each config is a tool named by its ``name`` and run by its ``run``, whatever the
    config calls its fields; a class of the same shape that writes no spec makes none.
    Each default-exported config is read once: one tool each."""
    tools = tools_of(FORMS / "spec-writing-records")
    assert set(tools) == {"send_invoice", "list_invoices"}
    assert tools["send_invoice"]["effects"] == ["network_write"]
    assert tools["list_invoices"]["effects"] == []


def test_records_a_loop_destructures_into_renamed_locals_are_tools() -> None:
    """``for (const { id: toolName, summary: about, shape, run: handle } of pantryTools)
    server.tool(toolName, about, shape, handle)``: the locals are the records' fields under
    other names, so each record is a tool named by its ``id`` and described by its
    ``summary``."""
    tools = tools_of(FORMS / "renamed-records")
    assert set(tools) == {"restock_item", "list_items"}
    assert tools["restock_item"]["effects"] == ["network_write"]
    assert tools["list_items"]["effects"] == []


def test_the_actions_an_agent_kit_plugin_lists_are_tools() -> None:
    """``createGardenPlugin()`` returns ``{ name, actions: [{ name, description, handler }] }``,
    the plugin interface agent kits document: each action is a tool named by its record and
    run by its handler."""
    tools = tools_of(FORMS / "plugin-actions")
    assert set(tools) == {"GARDEN_WATER_BED", "GARDEN_MOISTURE"}
    assert tools["GARDEN_WATER_BED"]["effects"] == ["network_write"]
    assert tools["GARDEN_MOISTURE"]["effects"] == []


def test_what_a_branch_calls_through_a_barrel_of_barrels_is_followed() -> None:
    """``import { openValve } from "./operations/exports.js"``, where that module only says
    ``export * from "./openValve.js"`` (and re-exports another barrel): the branch runs the
    function of that name the barrel's modules define, so its POST is the tool's effect,
    never "read"."""
    tools = tools_of(FORMS / "barrel-operations")
    assert set(tools) == {"water_bed", "read_moisture"}
    assert tools["water_bed"]["effects"] == ["network_write"]
    assert tools["water_bed"]["risk"]["value"] != "read"
    assert tools["read_moisture"]["effects"] == []


def test_callbacks_handed_through_a_wrapper_are_each_a_tool_judged_by_the_client_it_calls() -> None:
    """``registerTool(name, config, answered(async (args) => client.x(...)))``: each
    callback the shared wrapper runs is its own tool, not the wrapper once. The client is
    typed ``ReturnType<typeof makeClient>``, an object of request functions calling
    ``options.fetcher ?? fetch``: the POST and the DELETE are the writing tools' own, and
    the lookups read."""
    tools = tools_of(FORMS / "wrapped-callbacks")
    assert set(tools) == {"zone_readings", "list_schedules", "start_irrigation", "delete_schedule"}
    assert tools["zone_readings"]["path"].endswith("src/server.ts")
    assert tools["zone_readings"]["risk"]["value"] == "read"
    assert tools["list_schedules"]["risk"]["value"] == "read"
    assert tools["start_irrigation"]["risk"]["value"] != "read"
    assert tools["start_irrigation"]["effects"] != []
    assert tools["delete_schedule"]["risk"]["value"] != "read"


def test_a_supabase_client_a_project_helper_returns_and_a_tool_reusing_another_are_judged() -> None:
    """``const db = await createClient()``, the project's helper returning the
    ``@supabase/ssr`` client: ``db.from("tickets").update(...)`` is the catalogue's
    update, not a read. ``closeTicketTool.func(...)`` runs the function the other tool's
    options hold, so the factory's tool writes too. A query that selects and then filters
    and orders (``.order("created_at", {...})``) only reads."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentguard",
            "report",
            str(FORMS / "ticket-desk"),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    risks = {
        (tool["name"], tool["path"].rsplit("/", 1)[-1], tool["line"]): tool["risk"]["value"]
        for tool in json.loads(done.stdout)["tools"]
    }
    assert risks == {
        ("close_ticket", "closeTicket.ts", 9): "write",
        ("close_ticket", "closeTicket.ts", 30): "write",
        ("recent_tickets", "recentTickets.ts", 10): "read",
    }


def test_a_clients_requests_run_on_a_queue_are_judged_by_the_method_each_caller_names() -> None:
    """A client whose every request goes through ``send(verb, route)``, which runs
    ``this.http.request<T>({method: verb, ...})`` inside ``this.lane.add(async () => ...)``
    on a ``p-queue``: the GET reads, the POST writes and the DELETE destroys. Three forms
    meet here: ``await x.request<T>(...)`` (the grammar reads the call as one of ``await
    x.request``), a field declared ``AxiosInstance`` that the constructor fills with
    ``axios.create(...)``, and a queue's ``add`` handed the code it runs (not a write of its
    own). Before, the reading tool was a guessed remote write."""
    tools = tools_of(FORMS / "queued-client")
    assert set(tools) == {"list_beds", "plant_bed", "clear_bed"}
    assert tools["list_beds"]["effects"] == []
    assert tools["list_beds"]["risk"]["value"] == "read"
    assert tools["plant_bed"]["effects"] == ["network_write"]
    assert tools["plant_bed"]["idempotency"]["value"] == "non-idempotent"
    assert tools["clear_bed"]["effects"] == ["destructive"]


def test_spec_records_an_own_agent_loop_hands_the_model_are_tools_run_by_the_code_they_hold() -> (
    None
):
    """``this.llm.chat.completions.create({tools: this.skills})`` in a project class whose
    constructor keeps the ``skills`` its options were built with; ``new Steward({skills:
    [listReleases, publishRelease]})`` hands it records, each an OpenAI spec plus the
    ``run`` function that answers it. Each record is a tool named by its spec and judged by
    the code it holds: before, the field written ``this.skills`` was not followed and no tool
    was found (AG003 only). A helper beside a record (``releaseTitle``) is no second tool of
    the record's name: the record runs the function it holds."""
    tools = tools_of(FORMS / "own-agent-loop")
    assert set(tools) == {"list_releases", "publish_release"}
    assert tools["list_releases"]["effects"] == []
    assert tools["publish_release"]["effects"] == ["network_write"]
    assert tools["publish_release"]["path"].endswith("src/tools/publish-release.ts")


def test_a_zod_union_of_tagged_objects_the_model_answers_with_is_a_choice_of_tools() -> None:
    """``generateObject({schema: stepSchema})`` with ``stepSchema`` a
    ``z.discriminatedUnion("kind", [...])`` of objects tagged ``z.literal(...)`` in another
    module (one member a constant of that module): each member is a tool named by its tag,
    run by the ``case`` of the switch on
    ``step.kind`` in the loop that asks for the answer. A console badge that switches on the
    same tags, but neither asks for the answer nor imports from what does, is not taken
    for the dispatch."""
    tools = tools_of(FORMS / "answer-union")
    assert set(tools) == {"lookup", "file_ticket", "reply"}
    assert {tool["path"].rsplit("/", 1)[-1] for tool in tools.values()} == {"triage.ts"}
    assert tools["file_ticket"]["effects"] == ["network_write"]
    assert tools["lookup"]["effects"] == []


def test_a_zod_union_no_model_answers_with_is_no_tool(tmp_path: Path) -> None:
    """The same tagged union parsing a web request's body is a validation schema: nothing
    hands it to a model, so no tool is found."""
    project = tmp_path / "webhook"
    (project / "src").mkdir(parents=True)
    (project / "package.json").write_text('{"name": "webhook", "dependencies": {"zod": "^3"}}')
    (project / "src" / "hook.ts").write_text(
        'import { z } from "zod";\n'
        'const event = z.discriminatedUnion("kind", [\n'
        '  z.object({ kind: z.literal("paid"), id: z.string() }),\n'
        '  z.object({ kind: z.literal("refunded"), id: z.string() }),\n'
        "]);\n"
        "export async function handle(body: unknown): Promise<void> {\n"
        "  const e = event.parse(body);\n"
        "  switch (e.kind) {\n"
        '    case "paid": await fetch(`/ledger/${e.id}`, { method: "POST" }); break;\n'
        '    case "refunded": await fetch(`/ledger/${e.id}`, { method: "DELETE" }); break;\n'
        "  }\n"
        "}\n"
    )
    assert tools_of(project) == {}


def test_claude_agent_sdk_tools_are_found_with_their_annotations() -> None:
    """``tool(name, description, shape, handler, {annotations})`` of the Claude Agent SDK,
    collected by ``createSdkMcpServer({tools})``: each is a tool named by its first argument,
    run by its handler, and declared by the annotations of its last."""
    tools = tools_of(FORMS / "claude-sdk-tools")
    assert set(tools) == {"list_dogs", "book_walk"}
    assert tools["list_dogs"]["effects"] == []
    assert tools["list_dogs"]["risk"]["source"] != "inferred"
    assert tools["book_walk"]["effects"] == ["network_write"]


def test_tool_definitions_paired_with_their_handlers_in_a_list_are_found() -> None:
    """A low-level server that keeps ``[definition, handler]`` pairs (one a definition
    object with a name and an input schema, the other its handler, or a lambda calling a
    handler imported under another name), lists the definitions and looks the handlers up
    by name: each definition is a tool run by its handler."""
    tools = tools_of(FORMS / "paired-handlers")
    assert set(tools) == {"list_entries", "add_entry", "remove_entry"}
    assert tools["list_entries"]["risk"]["value"] == "read"
    assert tools["add_entry"]["effects"] == ["network_write"]
    assert tools["remove_entry"]["risk"]["value"] == "destructive"
    assert tools["remove_entry"]["path"].endswith("src/tools/remove.ts")


def test_a_session_a_client_opens_on_first_use_is_set_up_not_the_tools_effect() -> None:
    """``if (!this.accessToken) await this.login()``, ``login`` setting the token: the POST
    that opens the session runs once for the client, so a tool that only reads through it
    reads, while the tool that posts a report still writes."""
    tools = tools_of(FORMS / "lazy-session")
    assert tools["recent_sightings"]["effects"] == []
    assert tools["recent_sightings"]["risk"]["value"] == "read"
    assert tools["report_sighting"]["effects"] == ["network_write"]


def test_a_request_method_a_closure_takes_from_its_enclosing_function_is_chosen_by_its_callers() -> (
    None
):
    """``call(path, body, method = "GET")`` sends through a nested ``send`` closure that
    uses ``method`` (to retry it): each caller's argument, or the default, decides what the
    request does, as when ``call`` sends itself. Before, every tool was a guessed write."""
    tools = tools_of(FORMS / "closure-method")
    assert tools["find_recipes"]["effects"] == []
    assert tools["save_recipe"]["effects"] == ["network_write"]
    assert tools["remove_recipe"]["risk"]["value"] == "destructive"


def test_a_date_of_an_in_memory_package_bound_to_a_local_first_is_no_effect() -> None:
    """``const anchor = dayjs(day).startOf("day")``, then ``anchor.subtract(...).startOf("day")``: the
    object of a date package lives in the process, however its methods are named, when it
    is bound to a local before its methods are called as when it is not."""
    tools = tools_of(FORMS / "date-locals")
    assert tools["shift_window"]["effects"] == []
    assert tools["shift_window"]["risk"]["value"] == "read"


def test_records_each_tool_module_pushes_onto_a_shared_list_are_tools() -> None:
    """``pantryTools.push(removeItem)`` at the top of each tool's own module, onto a list
    another module exports (through a barrel), registered by ``pantryTools.forEach((tool) =>
    server.tool(tool.name, ...))``: each pushed record is a tool, named by its ``name``
    field and judged by the function it holds."""
    tools = tools_of(FORMS / "pushed-records")
    assert set(tools) == {"list_items", "remove_item"}
    assert tools["remove_item"]["path"].endswith("src/tools/removeItem.ts")
    assert tools["remove_item"]["effects"] == ["destructive"]
    assert tools["list_items"]["effects"] == []


def test_linear_queries_named_by_what_they_fetch_are_reads_and_its_creates_writes() -> None:
    """The Linear SDK names its queries by what they fetch (``issueLabels()``, ``user(id)``)
    and its mutations verb-first (``createIssue``): a query starting with a word that is
    also a verb (``issue``) is no write, and a one-word query is no unknown."""
    tools = tools_of(FORMS / "linear-queries")
    assert tools["listLabels"]["effects"] == []
    assert tools["whoIs"]["effects"] == []
    assert tools["fileBug"]["effects"] == ["network_write"]


NOTEBOOK_SERVER = """\
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { promises as fs } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'

const NOTES_DIR = path.join(os.homedir(), 'notebook')

class Notebook {
  private async ensureDir(): Promise<void> {
    await fs.mkdir(NOTES_DIR, { recursive: true })
  }

  async names(): Promise<string[]> {
    await this.ensureDir()
    return fs.readdir(NOTES_DIR)
  }

  async write(name: string, text: string): Promise<void> {
    await this.ensureDir()
    await fs.writeFile(path.join(NOTES_DIR, name), text)
  }
}

const notebook = new Notebook()
const server = new McpServer({ name: 'notebook', version: '1.0.0' })

server.tool('list_notes', 'List the notes', {}, async () => ({
  content: [{ type: 'text' as const, text: (await notebook.names()).join('\\n') }],
}))

server.tool('write_note', 'Write a note', { name: z.string(), text: z.string() }, async ({ name, text }) => {
  await notebook.write(name, text)
  return { content: [{ type: 'text' as const, text: 'saved' }] }
})
"""


def test_a_fixed_folder_a_class_makes_when_missing_is_set_up_of_its_reads(tmp_path: Path) -> None:
    """``fs.mkdir(NOTES_DIR, { recursive: true })`` before listing the folder is set-up: the
    listing tool reads; the tool writing a file there writes."""
    project = small_project(tmp_path / "notebook", MCP_SERVER, {"server.ts": NOTEBOOK_SERVER})
    tools = tools_of(project)
    assert tools["list_notes"]["effects"] == []
    assert tools["write_note"]["effects"] == ["write"]


TASKS_SERVER = """\
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'

// kept for the life of the server: every later call sees what a tool changed
const tasks: Map<string, string> = new Map()

const server = new McpServer({ name: 'tasks', version: '1.0.0' })

server.tool('add_task', 'Add a task', { id: z.string(), title: z.string() }, async ({ id, title }) => {
  tasks.set(id, title)
  return { content: [{ type: 'text' as const, text: 'added' }] }
})

server.tool('drop_task', 'Drop a task', { id: z.string() }, async ({ id }) => {
  tasks.delete(id)
  return { content: [{ type: 'text' as const, text: 'dropped' }] }
})

server.tool('show_task', 'Show a task', { id: z.string() }, async ({ id }) => {
  const found = new Map(tasks).get(id)
  return { content: [{ type: 'text' as const, text: found ?? 'none' }] }
})
"""


def test_a_map_the_module_keeps_across_calls_is_written_by_set_and_delete(tmp_path: Path) -> None:
    """``tasks.set(id, title)`` and ``tasks.delete(id)`` on a module's ``new Map()`` change
    what every later call sees: a local write, as for a Python module's dict."""
    project = small_project(tmp_path / "tasks", MCP_SERVER, {"server.ts": TASKS_SERVER})
    tools = tools_of(project)
    assert tools["add_task"]["effects"] == ["write"]
    assert tools["drop_task"]["effects"] == ["write"]
    assert tools["show_task"]["effects"] == []


CONVEX_TOOLS = """\
import { tool } from 'ai'
import { fetchMutation, fetchQuery } from 'convex/nextjs'
import { z } from 'zod'
import { api } from '../convex/_generated/api'

export const noteTools = {
  save_note: tool({
    description: 'Save a note for later',
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      await fetchMutation(api.notes.create, { text })
      return 'saved'
    },
  }),
  list_notes: tool({
    description: 'List the saved notes',
    parameters: z.object({}),
    execute: async () => JSON.stringify(await fetchQuery(api.notes.list, {})),
  }),
  tidy_notes: tool({
    description: 'Tidy the notes',
    parameters: z.object({}),
    execute: async () => {
      await fetchMutation(api.notes.tidy, {})
      return 'done'
    },
  }),
}
"""


def test_a_convex_mutation_is_judged_by_its_function_reference_and_a_query_reads(
    tmp_path: Path,
) -> None:
    """``fetchMutation(api.notes.create, ...)`` creates (the reference's last part names the
    operation), ``fetchQuery`` reads, and a mutation whose name says nothing is unknown,
    never a read."""
    agent = vercel_agent("noteTools")
    project = small_project(
        tmp_path / "notes",
        {"ai": "^4", "convex": "^1", "zod": "^3"},
        {"tools.ts": CONVEX_TOOLS, "agent.ts": agent},
    )
    tools = tools_of(project)
    assert tools["save_note"]["effects"] == ["network_write"]
    assert tools["list_notes"]["effects"] == []
    assert tools["tidy_notes"]["effects"] == ["unknown"]


WIKI_SERVER = """\
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import axios from 'axios'
import { z } from 'zod'

const wiki = axios.create({ baseURL: 'https://wiki.example.com/api' })
const server = new McpServer({ name: 'wiki', version: '1.0.0' })

server.tool('get_space', 'Get a space', { id: z.string() }, async ({ id }) => {
  const answer = await wiki.post(`/spaces.info`, { id })
  return { content: [{ type: 'text' as const, text: JSON.stringify(answer.data) }] }
})

server.tool('page_history', 'A page history', { id: z.string() }, async ({ id }) => {
  const answer = await wiki.post(`/pages/${id}/revisions.history`, {})
  return { content: [{ type: 'text' as const, text: JSON.stringify(answer.data) }] }
})

server.tool('new_space', 'Make a space', { name: z.string() }, async ({ name }) => {
  const answer = await wiki.post(`/spaces.create`, { name })
  return { content: [{ type: 'text' as const, text: JSON.stringify(answer.data) }] }
})
"""


def test_an_rpc_style_post_written_as_a_template_is_judged_by_its_path(tmp_path: Path) -> None:
    """``post(`/spaces.info`)`` written as a template literal reads as the same path in
    quotes does; ``info`` and ``history`` ask, ``create`` writes."""
    project = small_project(
        tmp_path / "wiki", {**MCP_SERVER, "axios": "^1"}, {"server.ts": WIKI_SERVER}
    )
    tools = tools_of(project)
    assert tools["get_space"]["effects"] == []
    assert tools["page_history"]["effects"] == []
    assert tools["new_space"]["effects"] == ["network_write"]


BOARD_SERVER = """\
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { pickVerb } from './verbs'

class BoardApi {
  async request(url: string, options: { method: string; body?: unknown }): Promise<unknown> {
    const { method, body } = options
    const init: RequestInit = { method, headers: { 'Content-Type': 'application/json' } }
    if (body) init.body = JSON.stringify(body)
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30000) })
    return response.json()
  }

  async put(url: string, body: unknown): Promise<unknown> {
    return this.request(url, { method: 'PUT', body })
  }

  async get(url: string): Promise<unknown> {
    return this.request(url, { method: 'GET' })
  }

  async send(url: string, body: unknown): Promise<unknown> {
    const init: RequestInit = { method: pickVerb(body), body: JSON.stringify(body) }
    const response = await fetch(url, { ...init })
    return response.json()
  }
}

const api = new BoardApi()
const server = new McpServer({ name: 'boards', version: '1.0.0' })

server.tool('rename_card', 'Rename a card', { id: z.string(), name: z.string() }, async ({ id, name }) => {
  await api.put(`https://boards.example/cards/${id}`, { name })
  return { content: [{ type: 'text' as const, text: 'renamed' }] }
})

server.tool('show_card', 'Show a card', { id: z.string() }, async ({ id }) => {
  const card = await api.get(`https://boards.example/cards/${id}`)
  return { content: [{ type: 'text' as const, text: JSON.stringify(card) }] }
})

server.tool('sync_card', 'Sync a card', { id: z.string() }, async ({ id }) => {
  await api.send(`https://boards.example/cards/${id}/sync`, { id })
  return { content: [{ type: 'text' as const, text: 'synced' }] }
})
"""


def test_a_method_taken_from_the_callers_options_is_the_callers_and_an_unknown_one_no_read(
    tmp_path: Path,
) -> None:
    """``const { method } = options`` then ``fetch(url, { ...init })`` with ``init = {
    method }``: each caller's ``{ method: 'PUT' }`` decides. A method no reader can know
    (``pickVerb(body)``) is unknown: never a read."""
    verbs = "export const pickVerb = (body: unknown): string => (body ? 'POST' : 'GET')\n"
    project = small_project(
        tmp_path / "boards", MCP_SERVER, {"server.ts": BOARD_SERVER, "verbs.ts": verbs}
    )
    tools = tools_of(project)
    assert tools["rename_card"]["effects"] == ["network_write"]
    assert tools["show_card"]["effects"] == []
    assert tools["sync_card"]["effects"] == ["unknown"]


WEATHER_SERVICE = """\
export class WeatherService {
  private static instance: WeatherService
  private ready = false

  static getInstance(): WeatherService {
    if (!WeatherService.instance) WeatherService.instance = new WeatherService()
    return WeatherService.instance
  }

  async initialize(): Promise<void> {
    const probe = await fetch('https://weather.example/api/ping')
    this.ready = probe.ok
  }

  async forecast(city: string): Promise<string> {
    const answer = await fetch('https://weather.example/api/forecasts', {
      method: 'POST',
      body: JSON.stringify({ city }),
    })
    return answer.text()
  }
}
"""

SINGLETON_SERVER = """\
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { WeatherService } from './services/weather.js'

const weather = WeatherService.getInstance()
const server = new McpServer({ name: 'weather', version: '1.0.0' })

server.tool('forecast', 'The forecast for a city', { city: z.string() }, async ({ city }) => {
  await weather.initialize()
  return { content: [{ type: 'text' as const, text: await weather.forecast(city) }] }
})
"""


def test_the_object_a_class_hands_out_from_its_static_factory_is_of_that_class(
    tmp_path: Path,
) -> None:
    """``WeatherService.getInstance()`` declared to return a ``WeatherService``: what its
    methods do is followed (a POST that orders a forecast), not left unknown."""
    project = small_project(
        tmp_path / "weather",
        MCP_SERVER,
        {"services/weather.ts": WEATHER_SERVICE, "server.ts": SINGLETON_SERVER},
    )
    assert tools_of(project)["forecast"]["effects"] == ["network_write"]


MCP_CLIENT_AGENT = """\
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { tool } from 'ai'
import { z } from 'zod'

const client = new Client({ name: 'desk-agent', version: '1.0.0' })

async function runRemote(name: string, args: Record<string, unknown>) {
  const request = { method: 'tools/call', params: { name, arguments: args } }
  return client.request(request, CallToolResultSchema)
}

export const deskTools = {
  open_ticket: tool({
    description: 'Open a support ticket',
    parameters: z.object({ title: z.string() }),
    execute: async ({ title }) => JSON.stringify(await runRemote('create-ticket', { title })),
  }),
  ticket_status: tool({
    description: 'The status of a ticket',
    parameters: z.object({ id: z.string() }),
    execute: async ({ id }) =>
      JSON.stringify(await client.callTool({ name: 'get-ticket', arguments: { id } })),
  }),
  remote_tools: tool({
    description: 'What the desk server offers',
    parameters: z.object({}),
    execute: async () =>
      JSON.stringify(await client.request({ method: 'tools/list' }, ListToolsResultSchema)),
  }),
}
"""


def test_a_tool_run_on_an_mcp_server_through_the_client_is_judged_by_its_name(
    tmp_path: Path,
) -> None:
    """``client.request({method: 'tools/call', params: {name}})`` and ``client.callTool({
    name})`` run the server's tool: ``create-ticket`` creates, ``get-ticket`` reads; a
    ``tools/list`` request reads."""
    agent = vercel_agent("deskTools")
    project = small_project(
        tmp_path / "desk",
        {**MCP_SERVER, "ai": "^4"},
        {"tools.ts": MCP_CLIENT_AGENT, "agent.ts": agent},
    )
    tools = tools_of(project)
    assert tools["open_ticket"]["effects"] == ["network_write"]
    assert tools["ticket_status"]["effects"] == []
    assert tools["remote_tools"]["effects"] == []


def test_records_of_lists_spread_into_the_registered_list_are_tools() -> None:
    """``const tools = [...accountTools, ...dockTools]; for (const tool of tools)
    server.registerTool(tool.name, tool.config, tool.handler)``: each record of each list
    spread into the one the loop walks is a tool, judged by its handler."""
    tools = tools_of(FORMS / "spread-record-lists")
    assert set(tools) == {"sign-in-link", "return-bike", "nearby-docks"}
    assert tools["return-bike"]["effects"] == ["network_write"]
    assert tools["nearby-docks"]["effects"] == []


def test_a_default_exported_class_instance_sends_through_the_client_its_method_returns() -> None:
    """``export const outbox = new SmtpMailer()`` with ``SmtpMailer`` the default export of
    its module, whose ``deliver`` calls ``this.transport().sendMail(...)`` on the transport a
    method builds and returns: the tool sends mail."""
    tools = tools_of(FORMS / "default-export-mailer")
    assert tools["email_itinerary"]["effects"] == ["message"]
    assert tools["trip_status"]["effects"] == []


def test_records_keeping_their_spec_in_one_field_are_tools() -> None:
    """``export const deployTool: Handler = {definition: {name, description, inputSchema},
    execute: async (input) => ...}``: the record is a tool named by its spec, run by its
    ``execute``."""
    tools = tools_of(FORMS / "nested-spec-records")
    assert set(tools) == {"deploy_service", "service_status"}
    assert tools["deploy_service"]["effects"] == ["network_write"]
    assert tools["service_status"]["effects"] == []


def test_a_modules_default_export_building_a_tool_from_a_record_and_its_handler_is_a_tool() -> None:
    """``export default ({ guild }) => tool(async (args) => {...}, {name, description,
    schema})``, one per file of a folder a loader imports: each export is a tool named by
    its record. What it does to an object got from its parameter (``thread.delete()`` on
    ``guild.threads.cache.get(id)``) is unknown, never a read. A tool of no arguments gives
    the same builder no schema (``{name, description}``): a tool all the same."""
    tools = tools_of(FORMS / "default-export-builders")
    assert set(tools) == {"delete_thread", "thread_count", "current_time"}
    assert tools["delete_thread"]["effects"] == ["unknown"]
    assert tools["thread_count"]["effects"] == []
    assert tools["current_time"]["effects"] == []
