"""Every Python file of a scan is parsed: a tool's helpers are found wherever they are, and
every syntax error is reported, in code no tool reaches too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.engine.scan_result import ScanResult
from agentguard.engine.speed import FactOptions

from .conftest import FIXTURES, write_project

MONOREPO = FIXTURES / "monorepo-support-desk"
# A Python 2 script nobody imports.
PYTHON2_SCRIPT = 'import csv\n\n\ndef main(path):\n    print "importing", path\n'

runner = CliRunner()


def lines(result: ScanResult) -> list[str]:
    return [f"{f.code} {f.path}:{f.span.line} {f.tool}" for f in result.findings]


def scanned(project: Path, jobs: int = 1) -> ScanResult:
    return scan([project], load_config([project]), facts=FactOptions(jobs=jobs))


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    project = tmp_path / MONOREPO.name
    shutil.copytree(MONOREPO, project)
    write_project(project, {"legacy/__init__.py": "", "legacy/import_customers.py": PYTHON2_SCRIPT})
    return project


def test_a_syntax_error_in_code_no_tool_reaches_is_reported(monorepo: Path) -> None:
    result = scanned(monorepo)
    assert "AG000 legacy/import_customers.py:5 None" in lines(result)
    checked = runner.invoke(app, ["check", str(monorepo), "--no-cache", "--select", "AG000"])
    assert checked.exit_code == 1
    assert "legacy/import_customers.py:5:5: AG000" in checked.stdout


def test_helpers_a_tool_reaches_are_found_in_modules_that_never_mention_agents(
    monorepo: Path,
) -> None:
    result = scanned(monorepo)
    # The mail helper sits in a module with no agent word in it; its POST is the evidence.
    # Each finding is in the tool, its cause (the sink) the related location.
    mail = [f for f in result.findings if f.code == "AG201" and f.tool == "email_customer"]
    assert [(r.path, r.span.line) for f in mail for r in f.related] == [("common/mail.py", 13)]
    assert [f.path for f in mail] == ["support_assistant/tools.py"]
    # billing/__init__.py re-exports the gateway class: the refund reaches its POST.
    refund = [f for f in result.findings if f.tool == "refund_order" and f.code == "AG201"]
    assert [(r.path, r.span.line) for f in refund for r in f.related] == [
        ("billing/gateway.py", 13)
    ]
    assert "POST httpx.Client.post" in refund[0].message
    assert refund[0].confidence.value == "high"


def test_no_prefilter_is_still_accepted_and_says_it_is_deprecated(monorepo: Path) -> None:
    plain = runner.invoke(app, ["check", str(monorepo), "--no-cache", "--exit-zero"])
    flag = runner.invoke(
        app, ["check", str(monorepo), "--no-cache", "--exit-zero", "--no-prefilter"]
    )
    assert plain.exit_code == flag.exit_code == 0
    assert flag.stdout == plain.stdout
    assert "--no-prefilter is deprecated and has no effect" in flag.stderr
    assert "deprecated" not in plain.stderr
    assert "--no-prefilter" not in runner.invoke(app, ["check", "--help"]).stdout


def test_the_prefilter_setting_is_still_accepted_and_says_it_is_deprecated(
    monorepo: Path,
) -> None:
    plain = runner.invoke(app, ["check", str(monorepo), "--no-cache", "--exit-zero"])
    (monorepo / "agentguard.toml").write_text("prefilter = false\n", encoding="utf-8")
    configured = runner.invoke(app, ["check", str(monorepo), "--no-cache", "--exit-zero"])
    assert configured.exit_code == 0
    assert configured.stdout == plain.stdout
    assert "`prefilter` is deprecated and has no effect" in configured.stderr


def test_a_long_chain_of_imports_is_checked_alike_in_the_worker_pool(tmp_path: Path) -> None:
    # A tool that calls forty step modules, each calling a client module only it imports,
    # beside thirty modules no tool imports.
    steps = 40
    agent = "from langchain_core.tools import tool\n"
    agent += "".join(f"from app.steps.step{n} import step{n}\n" for n in range(steps))
    agent += '\n\n@tool\ndef place_order(cart_id: str) -> list:\n    """Place the order."""\n'
    agent += f"    return [{', '.join(f'step{n}(cart_id)' for n in range(steps))}]\n"
    files = {"app/agent.py": agent}
    for n in range(steps):
        files[f"app/steps/step{n}.py"] = (
            f"from app.clients.client{n} import send{n}\n\n\n"
            f"def step{n}(cart_id: str) -> dict:\n    return send{n}(cart_id)\n"
        )
        method = "post" if n == steps - 1 else "get"
        files[f"app/clients/client{n}.py"] = (
            "import requests\n\n\n"
            f"def send{n}(cart_id: str) -> dict:\n"
            f'    return requests.{method}("https://shop.example/carts/" + cart_id).json()\n'
        )
    for n in range(30):
        files[f"reports/report{n}.py"] = (
            f"def total{n}(values: list) -> int:\n    return sum(values)\n"
        )
    write_project(tmp_path, files)
    one, two = scanned(tmp_path, jobs=1), scanned(tmp_path, jobs=2)
    assert lines(one) == lines(two)
    (write,) = [f for f in one.findings if f.code == "AG201"]
    # reported in the tool at its call of the last step; the client's POST is the cause
    assert (write.path, write.tool) == ("app/agent.py", "place_order")
    assert write.span.column == agent.splitlines()[-1].index(f"step{steps - 1}(") + 1
    assert [(r.path, r.span.line) for r in write.related] == [
        (f"app/clients/client{steps - 1}.py", 5)
    ]
    assert one.files_scanned == two.files_scanned == len(files)


def test_a_module_imported_whole_and_named_in_a_tool_list_is_checked(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/assistant.py": (
                "import app.billing\nfrom agents import Agent\n\n"
                'assistant = Agent(name="billing", tools=[app.billing.refund])\n'
            ),
            "app/billing.py": (
                "import requests\n\n\n"
                "def refund(order_id: str) -> dict:\n"
                '    return requests.post(f"https://pay.example/{order_id}/refunds").json()\n'
            ),
        },
    )
    assert "AG201 app/billing.py:5 refund" in lines(scanned(tmp_path))


def test_test_paths_make_a_folder_of_replay_checks_count_as_tests(tmp_path: Path) -> None:
    project = tmp_path / "refunds-project"
    shutil.copytree(FIXTURES / "langgraph-refunds", project)
    (project / "qa").mkdir()
    (project / "tests" / "test_tools.py").rename(project / "qa" / "replay_checks.py")

    def eval_findings() -> list[str]:
        result = scan([project], load_config([project]))
        return [f"{f.code} {f.tool}" for f in result.findings if f.code == "AG801"]

    # Out of a test folder, the fault-injection test is not seen as one.
    assert eval_findings() == ["AG801 cancel_subscription"]
    (project / "agentguard.toml").write_text('test-paths = ["qa/"]\n', encoding="utf-8")
    assert eval_findings() == []
