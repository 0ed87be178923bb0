"""`agentguard fix`: diffs, writes and patches that never break code and reach a fixpoint."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.checks.declarations.ag101_undeclared_tool_semantics import (
    UndeclaredToolSemantics,
)
from agentguard.checks.meta.meta_rules import UnusedSuppression
from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine.apply_fixes import run_fixes, write_changes
from agentguard.engine.fix_edits import fix_offer
from agentguard.engine.pipeline import scan
from agentguard.fixes.context import FixContext

from .conftest import FIXTURES, write_project

runner = CliRunner()
FIXTURE_PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())

TOOL = (
    "import requests\n"
    "from langchain_core.tools import tool\n\n"
    "@tool\n"
    "def create_order(cart_id: str) -> dict:\n"
    '    """Create an order."""\n'
    '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
)
UNUSED_SUPPRESSION = (
    "def lookup(order_id: str) -> str:  # agentguard: ignore[AG201] legacy\n    return order_id\n"
)


def make_project(tmp_path: Path, files: dict[str, str]) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write_project(project, files)
    return project


def copy_fixture(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copytree(source, target)
    (target / ".git").mkdir(exist_ok=True)
    return target


def signature(project: Path) -> set[tuple[str, str, str | None]]:
    result = scan([project], load_config([project]), with_fixes=False)
    return {(f.code, f.path, f.tool) for f in result.findings}


@pytest.mark.parametrize("fixture", FIXTURE_PROJECTS, ids=lambda p: p.name)
def test_fixture_fixes_keep_code_valid_and_reach_a_fixpoint(fixture: Path, tmp_path: Path) -> None:
    project = copy_fixture(fixture, tmp_path)
    before = signature(project)
    result = runner.invoke(app, ["fix", str(project), "--write", "--unsafe-fixes"])
    assert result.exit_code == 0, result.output
    for path in project.rglob("*.py"):
        compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True)
    after = signature(project)
    assert after <= before, f"new findings: {after - before}"
    config = load_config([project])
    again = run_fixes([project], config, unsafe=True)
    assert again.changes == []
    second = runner.invoke(app, ["fix", str(project), "--unsafe-fixes"])
    assert second.exit_code == 0
    assert second.stdout == ""


@pytest.mark.parametrize("fixture", FIXTURE_PROJECTS, ids=lambda p: p.name)
def test_fixed_findings_are_gone_on_recheck(fixture: Path, tmp_path: Path) -> None:
    project = copy_fixture(fixture, tmp_path)
    run = run_fixes([project], load_config([project]), unsafe=True)
    fixed = {(f.code, f.path, f.tool) for change in run.changes for f in change.fixed}
    write_changes(run.changes)
    assert fixed.isdisjoint(signature(project))


def test_emit_patch_applies_with_git(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    project = copy_fixture(FIXTURES / "shop-agent", tmp_path)
    shutil.rmtree(project / ".git")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    patch = tmp_path / "fixes.patch"
    result = runner.invoke(app, ["fix", str(project), "--unsafe-fixes", "--emit-patch", str(patch)])
    assert result.exit_code == 1  # there was something to fix
    assert patch.read_text(encoding="utf-8").startswith("--- a/")
    subprocess.run(["git", "apply", "--check", str(patch)], cwd=project, check=True)
    subprocess.run(["git", "apply", str(patch)], cwd=project, check=True)
    assert runner.invoke(app, ["fix", str(project), "--unsafe-fixes"]).stdout == ""


def test_diff_mode_changes_nothing_and_exits_1(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"agent.py": UNUSED_SUPPRESSION})
    result = runner.invoke(app, ["fix", str(project)])
    assert result.exit_code == 1
    assert "-def lookup(order_id: str) -> str:  # agentguard: ignore[AG201] legacy" in result.stdout
    assert "+def lookup(order_id: str) -> str:\n" in result.stdout
    assert (project / "agent.py").read_text(encoding="utf-8") == UNUSED_SUPPRESSION


def test_clean_project_prints_nothing_and_exits_0(tmp_path: Path) -> None:
    project = make_project(
        tmp_path, {"agent.py": "def add(a: int, b: int) -> int:\n    return a + b\n"}
    )
    result = runner.invoke(app, ["fix", str(project)])
    assert result.exit_code == 0
    assert result.stdout == ""


def test_unsafe_fixes_need_the_flag(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"agent.py": TOOL})
    safe_only = runner.invoke(app, ["fix", str(project)])
    assert safe_only.exit_code == 0
    assert safe_only.stdout == ""
    assert "--unsafe-fixes" in safe_only.stderr
    unsafe = runner.invoke(app, ["fix", str(project), "--unsafe-fixes"])
    assert unsafe.exit_code == 1
    assert "+@guarded(" in unsafe.stdout


def test_select_and_ignore_restrict_which_rules_fix(tmp_path: Path) -> None:
    files = {"agent.py": TOOL, "legacy.py": UNUSED_SUPPRESSION}
    project = make_project(tmp_path, files)
    only_ag002 = runner.invoke(app, ["fix", str(project), "--unsafe-fixes", "--select", "AG002"])
    assert "legacy.py" in only_ag002.stdout and "agent.py" not in only_ag002.stdout
    no_ag002 = runner.invoke(app, ["fix", str(project), "--unsafe-fixes", "--ignore", "AG002"])
    assert "agent.py" in no_ag002.stdout and "legacy.py" not in no_ag002.stdout


def test_check_fix_applies_safe_fixes_and_reports_the_rest(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"agent.py": TOOL, "legacy.py": UNUSED_SUPPRESSION})
    result = runner.invoke(app, ["check", str(project), "--fix", "--format", "json"])
    assert result.exit_code == 1
    assert "agentguard: ignore" not in (project / "legacy.py").read_text(encoding="utf-8")
    assert (project / "agent.py").read_text(encoding="utf-8") == TOOL  # unsafe: left alone
    assert '"AG101"' in result.stdout and '"AG002"' not in result.stdout


def test_crlf_and_permissions_are_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path, {})
    target = project / "agent.py"
    target.write_bytes(TOOL.replace("\n", "\r\n").encode())
    target.chmod(0o640)
    runner.invoke(app, ["fix", str(project), "--write", "--unsafe-fixes"])
    data = target.read_bytes()
    assert b"@guarded(" in data
    assert data.count(b"\n") == data.count(b"\r\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not [p for p in project.iterdir() if p.name.endswith(".agentguard")]


def test_file_changed_on_disk_is_not_overwritten(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"agent.py": UNUSED_SUPPRESSION})
    run = run_fixes([project], load_config([project]))
    edited = UNUSED_SUPPRESSION + "# edited meanwhile\n"
    (project / "agent.py").write_text(edited, encoding="utf-8")
    problems = write_changes(run.changes)
    assert [p.path for p in problems] == ["agent.py"]
    assert (project / "agent.py").read_text(encoding="utf-8") == edited


def test_fix_that_breaks_syntax_is_rolled_back_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(rule: object, finding: object, ctx: FixContext) -> str:
        return ctx.text.replace("def lookup", "def lookup(", 1)

    monkeypatch.setattr(UnusedSuppression, "fixed_text", broken)
    project = make_project(tmp_path, {"agent.py": UNUSED_SUPPRESSION})
    result = runner.invoke(app, ["fix", str(project), "--write"])
    assert result.exit_code == 1
    assert "rolled back" in result.stderr
    assert (project / "agent.py").read_text(encoding="utf-8") == UNUSED_SUPPRESSION


def test_guarded_import_merges_into_existing_runtime_import(tmp_path: Path) -> None:
    code = TOOL.replace(
        "from langchain_core.tools import tool\n",
        "from langchain_core.tools import tool\n\nfrom agentguard.runtime import current_call\n",
    )
    project = make_project(tmp_path, {"agent.py": code})
    run = run_fixes([project], load_config([project]), unsafe=True)
    text = run.changes[0].after
    assert "from agentguard.runtime import Runtime, SQLiteLedger, current_call, guarded\n" in text
    assert text.count("from agentguard.runtime import") == 1
    assert "current_call" in text and "guarded" in text


def test_guarded_reuses_the_projects_runtime(tmp_path: Path) -> None:
    files = {
        "app/__init__.py": "",
        "app/setup.py": (
            "from agentguard.runtime import Runtime, SQLiteLedger\n\n"
            'runtime = Runtime(ledger=SQLiteLedger("ledger.db"))\n'
        ),
        "app/tools.py": TOOL,
    }
    project = make_project(tmp_path, files)
    run = run_fixes([project], load_config([project]), unsafe=True)
    text = next(c.after for c in run.changes if c.path == "app/tools.py")
    assert "from app.setup import runtime\n" in text
    assert "Runtime(" not in text


def test_many_tools_in_one_file_share_one_import(tmp_path: Path) -> None:
    second = TOOL.split("\n\n", 1)[1].replace("create_order", "create_refund")
    project = make_project(tmp_path, {"agent.py": TOOL + "\n\n" + second})
    run = run_fixes([project], load_config([project]), unsafe=True)
    text = run.changes[0].after
    assert text.count("@guarded(") == 2
    assert text.count("from agentguard.runtime import") == 1
    assert text.count("runtime = Runtime(") == 1
    compile(text, "agent.py", "exec")


def test_mcp_dict_annotations_stay_dicts(tmp_path: Path) -> None:
    code = (
        "import requests\n"
        "from mcp.server.fastmcp import FastMCP\n\n"
        'mcp = FastMCP("shop")\n\n'
        '@mcp.tool(annotations={"readOnlyHint": True})\n'
        "def get_order(order_id: str) -> dict:\n"
        '    return requests.get(f"https://shop.example/orders/{order_id}").json()\n\n'
        "@mcp.tool()\n"
        "def create_order(cart_id: str) -> dict:\n"
        '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
    )
    project = make_project(tmp_path, {"agent.py": code})
    run = run_fixes([project], load_config([project]))  # MCP hints are a safe fix
    text = run.changes[0].after
    assert '"idempotentHint": False' in text
    assert "ToolAnnotations" not in text


def test_suppression_next_to_another_comment_keeps_it(tmp_path: Path) -> None:
    code = "x = 1  # noqa: E501  # agentguard: ignore[AG201] legacy\n"
    project = make_project(tmp_path, {"agent.py": code})
    run = run_fixes([project], load_config([project]))
    assert run.changes[0].after == "x = 1  # noqa: E501\n"


def test_fix_is_shown_in_json_output(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"agent.py": UNUSED_SUPPRESSION})
    result = runner.invoke(app, ["check", str(project), "--format", "json"])
    assert '"applicability": "safe"' in result.stdout


MCP_AND_LANGCHAIN = {
    "server.py": (
        "import requests\n"
        "from mcp.server.fastmcp import FastMCP\n\n"
        'mcp = FastMCP("shop")\n\n'
        "@mcp.tool()\n"
        "def create_order(cart_id: str) -> dict:\n"
        '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n'
    ),
    "agent.py": TOOL.replace("create_order", "create_refund"),
}


def test_text_output_names_each_findings_fix_without_building_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def must_not_run(rule: object, finding: object, ctx: FixContext) -> str:
        raise AssertionError("text output built a fix's edits")

    monkeypatch.setattr(UndeclaredToolSemantics, "fixed_text", must_not_run)
    project = make_project(tmp_path, MCP_AND_LANGCHAIN)
    result = runner.invoke(app, ["check", str(project), "--select", "AG101"])
    blocks = result.stdout.split("\n\n")
    mcp = next(b for b in blocks if "server.py" in b and "AG101" in b)
    langchain = next(b for b in blocks if "agent.py" in b and "AG101" in b)
    assert "= fix available (safe): Declare the tool's MCP annotations" in mcp
    assert "= fix available (unsafe): Wrap the tool in @guarded(risk='write'" in langchain


def test_text_output_names_fixes_without_importing_libcst() -> None:
    """Importing LibCST costs more than a whole text-output scan: only the outputs that
    print edits (JSON, SARIF) and the fixer may load it."""
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from agentguard.cli import app\n"
        "out = CliRunner().invoke(app, ['check', *sys.argv[1:], '--no-cache']).stdout\n"
        "print(json.dumps(['fix available' in out or '\"edits\"' in out, 'libcst' in sys.modules]))\n"
    )
    fixture = str(FIXTURES / "shop-agent")

    def run(*args: str) -> list[bool]:
        completed = subprocess.run(
            [sys.executable, "-c", code, fixture, *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return list(json.loads(completed.stdout))

    assert run() == [True, False]  # fixes named, LibCST never imported
    assert run("--format", "json") == [True, True]  # edits built: the check can see LibCST


def test_json_and_sarif_carry_the_edits_with_per_finding_applicability(tmp_path: Path) -> None:
    project = make_project(tmp_path, MCP_AND_LANGCHAIN)
    data = json.loads(
        runner.invoke(app, ["check", str(project), "--select", "AG101", "-f", "json"]).stdout
    )
    fixes = {f["path"]: f["fix"] for f in data["findings"]}
    assert fixes["server.py"]["applicability"] == "safe"
    assert fixes["agent.py"]["applicability"] == "unsafe"
    assert any("@guarded(" in e["replacement"] for e in fixes["agent.py"]["edits"])
    sarif = json.loads(
        runner.invoke(app, ["check", str(project), "--select", "AG101", "-f", "sarif"]).stdout
    )
    changes = [r["fixes"] for r in sarif["runs"][0]["results"]]
    assert len(changes) == 2 and all(c[0]["artifactChanges"] for c in changes)


def test_rules_show_both_applicabilities_where_a_rule_has_two() -> None:
    listing = json.loads(runner.invoke(app, ["rules", "--format", "json"]).stdout)
    ag101 = next(r for r in listing if r["code"] == "AG101")
    assert ag101["fix_detail"] == "safe (MCP, certain effects) / unsafe"
    assert (
        "fix: safe (MCP, certain effects) / unsafe" in runner.invoke(app, ["rule", "AG101"]).stdout
    )


def test_symlinked_file_is_written_through(tmp_path: Path) -> None:
    if os.name == "nt":
        pytest.skip("symlinks need privileges on Windows")
    project = make_project(tmp_path, {"real/agent.py": UNUSED_SUPPRESSION})
    (project / "link.py").symlink_to(project / "real" / "agent.py")
    runner.invoke(app, ["fix", str(project / "link.py"), "--write"])
    assert (project / "link.py").is_symlink()


@pytest.mark.parametrize("fixture", FIXTURE_PROJECTS, ids=lambda p: p.name)
def test_text_and_json_agree_on_which_findings_have_a_fix(fixture: Path) -> None:
    result = scan([fixture], load_config([fixture]), with_fixes=True)
    offered = {
        (f.code, str(f.location)): offer.applicability
        for f in result.findings
        if (offer := fix_offer(f, result.project)) is not None
    }
    built = {(f.code, str(f.location)): f.fix.applicability for f in result.findings if f.fix}
    assert offered == built


def test_runtime_is_not_imported_from_a_folder_python_cannot_import(tmp_path: Path) -> None:
    files = {
        "support-desk/desk/setup.py": (
            "from agentguard.runtime import Runtime, SQLiteLedger\n\n"
            'runtime = Runtime(ledger=SQLiteLedger("ledger.db"))\n'
        ),
        "shop/agent.py": TOOL,
    }
    project = make_project(tmp_path, files)
    run = run_fixes([project], load_config([project]), unsafe=True)
    text = next(c.after for c in run.changes if c.path == "shop/agent.py")
    assert "@guarded(" in text and "support-desk" not in text
    compile(text, "agent.py", "exec")


def _tool_catching(caught: str, method: str, returned: str = "str(e)") -> str:
    return (
        "import requests\n"
        "from langchain_core.tools import tool\n\n"
        "@tool\n"
        "def sync_account(account_id: str) -> dict:\n"
        '    """Sync an account."""\n'
        "    try:\n"
        f'        return requests.{method}(f"https://crm.example/accounts/{{account_id}}").json()\n'
        f"    except {caught} as e:\n"
        f"        return {{'error': {returned}}}\n"
    )


@pytest.mark.parametrize(
    ("caught", "method", "code", "retryable"),
    [
        ("requests.ConnectTimeout", "post", "TRANSIENT_NETWORK", True),
        ("requests.Timeout", "post", "SIDE_EFFECT_UNCERTAIN", False),
        ("requests.Timeout", "get", "TIMEOUT", True),
        ("requests.HTTPError", "post", "SIDE_EFFECT_UNCERTAIN", False),
        ("ValueError", "get", "TOOL_CRASH", False),
    ],
)
def test_raw_error_fix_picks_the_code_from_the_exception_and_the_tools_effects(
    caught: str, method: str, code: str, retryable: bool, tmp_path: Path
) -> None:
    project = make_project(tmp_path, {"agent.py": _tool_catching(caught, method)})
    run = run_fixes([project], load_config([project]), select=["AG601"], unsafe=True)
    text = run.changes[0].after
    writes = method == "post"
    assert f"return tool_error('sync_account', e, writes={writes})" in text
    assert "str(e)" not in text  # the helper keeps a scrubbed summary, never the raw text
    namespace: dict[str, object] = {}
    exec(compile(text, "agent.py", "exec"), namespace)  # the file fixed, not the user's code
    exception = eval(f"{caught}('boom')", namespace)
    observation = namespace["tool_error"]("sync_account", exception, writes=writes)  # type: ignore[operator]
    assert (observation["code"], observation["retryable"]) == (code, retryable)


def test_raised_tool_exception_with_raw_text_is_not_rewritten(tmp_path: Path) -> None:
    code = _tool_catching("Exception", "post").replace(
        "        return {'error': str(e)}\n", "        raise ToolException(str(e))\n"
    )
    code = code.replace("import tool\n", "import ToolException, tool\n")
    project = make_project(tmp_path, {"agent.py": code})
    assert "AG601" in {f.code for f in scan([project], load_config([project])).findings}
    run = run_fixes([project], load_config([project]), select=["AG601"], unsafe=True)
    assert run.changes == []


def test_class_based_tool_gets_guarded_on_its_own_methods_only(tmp_path: Path) -> None:
    code = (
        "import requests\n"
        "from crewai.tools import BaseTool\n\n\n"
        "class BookingTool(BaseTool):\n"
        "    def _run(self, hotel_id: str) -> str:\n"
        '        return requests.post(f"https://hotels.example/{hotel_id}/bookings").text\n\n\n'
        "class BookHotel(BookingTool):\n"
        '    name: str = "Book Hotel"\n'
        '    description: str = "Book a hotel"\n\n\n'
        "class CancelBooking(BaseTool):\n"
        '    name: str = "Cancel Booking"\n'
        '    description: str = "Cancel a booking"\n\n'
        "    def _run(self, booking_id: str) -> str:\n"
        '        return requests.delete(f"https://hotels.example/bookings/{booking_id}").text\n\n'
        "    async def _arun(self, booking_id: str) -> str:\n"
        "        return self._run(booking_id)\n"
    )
    project = make_project(tmp_path, {"tools.py": code})
    run = run_fixes([project], load_config([project]), unsafe=True, select=["AG101"])
    text = run.changes[0].after
    compile(text, "tools.py", "exec")
    # Cancel Booking's own _run is guarded, named after the tool and indented as a method;
    # its _arun only hands over to _run (guarding both would journal one call twice); the
    # shared base class other tools inherit _run from is left for a person.
    assert text.count('name="Cancel Booking",\n    )\n    def _run') == 1
    assert "@guarded" not in text.split("async def _arun")[1]
    assert "@guarded" not in text.split("class CancelBooking")[0]
    remaining = {f.tool for f in signature_findings(project, run)}
    assert "Cancel Booking" not in remaining and "Book Hotel" in remaining


def signature_findings(project: Path, run: object) -> list:  # type: ignore[type-arg]
    write_changes(run.changes)  # type: ignore[attr-defined]
    return [f for f in scan([project], load_config([project])).findings if f.code == "AG101"]


def test_profile_shows_the_time_of_fix_edits_only_for_formats_that_print_them() -> None:
    target = str(FIXTURES / "shop-agent")
    as_json = runner.invoke(app, ["check", target, "--no-cache", "--profile", "-f", "json"])
    as_text = runner.invoke(app, ["check", target, "--no-cache", "--profile", "-f", "text"])
    assert "fix edits" in as_json.stderr
    assert "fix edits" not in as_text.stderr


KEY_TOOL = (
    "import httpx\n"
    "from langchain_core.tools import tool\n\n"
    "@tool\n"
    "def create_order(cart_id: str, {extra}) -> str:\n"
    '    """Create an order."""\n'
    '    r = httpx.post("https://shop.example/orders", json={{"cart": cart_id}},\n'
    '                   headers={{"Idempotency-Key": {key}}})\n'
    "    return r.text\n"
)


def test_a_key_parameter_that_also_carries_the_cart_gets_no_fix(tmp_path: Path) -> None:
    """``f"order-{cart_id}"`` is AG202, but binding ``cart_id`` to the runtime's key would
    send the key as the cart: no fix is offered or written."""
    source = KEY_TOOL.format(extra="note: str = ''", key='f"order-{cart_id}"')
    project = make_project(tmp_path, {"agent.py": source})
    result = scan([project], load_config([project]), with_fixes=True)
    (finding,) = [f for f in result.findings if f.code == "AG202"]
    # A retry that repeats the cart repeats the key: the message says what is wrong instead.
    assert "from the model-supplied parameter `cart_id` alone" in finding.message
    assert "invents" not in finding.message
    assert fix_offer(finding, result.project) is None and finding.fix is None
    fixed = runner.invoke(app, ["fix", str(project), "--unsafe-fixes", "--select", "AG202"])
    assert fixed.exit_code == 0 and fixed.stdout == ""


def test_a_parameter_that_is_only_the_key_is_taken_from_the_runtime(tmp_path: Path) -> None:
    source = KEY_TOOL.format(extra="request_key: str", key="request_key")
    project = make_project(tmp_path, {"agent.py": source})
    fixed = runner.invoke(app, ["fix", str(project), "--unsafe-fixes", "--select", "AG202"])
    assert fixed.exit_code == 1
    assert "-def create_order(cart_id: str, request_key: str) -> str:" in fixed.stdout
    assert "+    request_key = current_call().idempotency_key" in fixed.stdout


def test_no_annotation_fix_for_a_tool_registered_in_another_file(tmp_path: Path) -> None:
    # The tool is registered by a loop over rows in main.py: one call registers every row,
    # so no single edit declares this tool's hints; the fix is not offered.
    notes = (
        "import sqlite3\n\n\n"
        "def add_note(text: str) -> str:\n"
        "    sqlite3.connect('n.db').execute('INSERT INTO notes VALUES (?)', (text,))\n"
        "    return 'ok'\n\n\n"
        "def rows() -> list:\n"
        "    for _ in range(1):\n"
        "        print('registering the note tools')\n"
        "    return [(add_note, 'notes_add', 'Add a note')]\n"
    )
    main = (
        "from fastmcp import FastMCP\n"
        "from fastmcp.tools import Tool\n\n"
        "from app.notes import rows\n\n"
        "mcp = FastMCP('desk')\n\n\n"
        "def serve() -> None:\n"
        "    for func, name, description in rows():\n"
        "        mcp.add_tool(Tool.from_function(func, name=name, description=description))\n"
    )
    project = make_project(
        tmp_path, {"app/__init__.py": "", "app/notes.py": notes, "app/main.py": main}
    )
    result = scan([project], load_config([project]), with_fixes=False)
    (finding,) = [f for f in result.findings if f.code == "AG101"]
    assert finding.tool == "notes_add"
    assert fix_offer(finding, result.project) is None
    fixed = runner.invoke(app, ["fix", str(project)])
    assert fixed.exit_code == 0
    assert (project / "app/notes.py").read_text(encoding="utf-8") == notes
