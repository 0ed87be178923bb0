"""The prefilter: only files that can matter are parsed, and nothing a tool reaches is lost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine.pipeline import FactOptions, ScanResult, scan
from agentguard.knowledge.catalog import load_catalog
from agentguard.prefilter import Prefilter, catalog_words, pack_referrals, unpack_referrals

from .conftest import FIXTURES, write_project

MONOREPO = FIXTURES / "monorepo-support-desk"
# The parts of the monorepo no tool reaches: invoices, the nightly revenue job, a package
# docstring.
UNREACHED = ["billing/invoices.py", "billing/reports.py", "common/__init__.py"]
# A Python 2 script nobody imports.
PYTHON2_SCRIPT = 'import csv\n\n\ndef main(path):\n    print "importing", path\n'

runner = CliRunner()


def lines(result: ScanResult) -> list[str]:
    return [f"{f.code} {f.path}:{f.span.line} {f.tool}" for f in result.findings]


def scanned(project: Path, *, prefilter: bool, jobs: int = 1) -> tuple[ScanResult, FactOptions]:
    options = FactOptions(jobs=jobs, prefilter=prefilter)
    return scan([project], load_config([project]), facts=options), options


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    project = tmp_path / MONOREPO.name
    shutil.copytree(MONOREPO, project)
    write_project(project, {"legacy/__init__.py": "", "legacy/import_customers.py": PYTHON2_SCRIPT})
    return project


def test_helpers_a_tool_reaches_are_parsed_and_the_rest_is_left_out(monorepo: Path) -> None:
    result, options = scanned(monorepo, prefilter=True)
    assert options.stats is not None
    assert options.stats.skipped == sorted(
        [*UNREACHED, "legacy/__init__.py", "legacy/import_customers.py"]
    )
    # The mail helper sits in a module with no agent word in it: the tool's import of it
    # brings it in, and its POST is the evidence.
    mail = [f for f in result.findings if f.code == "AG201" and f.tool == "email_customer"]
    assert [(f.path, f.span.line) for f in mail] == [("common/mail.py", 13)]
    # billing/__init__.py re-exports the gateway class: both files are parsed.
    assert {"billing/__init__.py", "billing/gateway.py"} <= set(result.model.modules)
    assert result.files_scanned == 10


def test_left_out_files_change_no_finding_but_their_syntax_errors(monorepo: Path) -> None:
    filtered, _ = scanned(monorepo, prefilter=True)
    everything, options = scanned(monorepo, prefilter=False)
    assert options.stats is not None and options.stats.skipped == []
    assert "AG000 legacy/import_customers.py:5 None" in lines(everything)
    assert lines(filtered) == [line for line in lines(everything) if not line.startswith("AG000")]


def test_no_prefilter_flag_and_config_setting_parse_every_file(monorepo: Path) -> None:
    default = runner.invoke(app, ["check", str(monorepo), "--no-cache", "--exit-zero"])
    assert "AG000" not in default.stdout
    flag = runner.invoke(app, ["check", str(monorepo), "--no-cache", "--no-prefilter"])
    assert "legacy/import_customers.py:5" in flag.stdout and "AG000" in flag.stdout
    (monorepo / "agentguard.toml").write_text("prefilter = false\n", encoding="utf-8")
    configured = runner.invoke(app, ["check", str(monorepo), "--no-cache", "--exit-zero"])
    assert "AG000" in configured.stdout


def test_a_recorded_run_is_not_replayed_for_the_other_setting(monorepo: Path) -> None:
    cache = ["--cache-dir", str(monorepo.parent / "cache"), "--exit-zero"]
    first = runner.invoke(app, ["check", str(monorepo), *cache])
    assert first.exit_code == 0 and "AG000" not in first.stdout
    second = runner.invoke(app, ["check", str(monorepo), *cache, "--no-prefilter"])
    assert "AG000" in second.stdout


def test_profile_says_how_many_files_were_left_out(monorepo: Path) -> None:
    result = runner.invoke(app, ["check", str(monorepo), "--no-cache", "--exit-zero", "--profile"])
    assert "left out by the prefilter 5" in result.output


def test_imports_are_followed_inside_the_worker_pool(tmp_path: Path) -> None:
    # A tool that calls forty step modules, each calling a client module only it imports,
    # beside thirty modules no tool imports: the pool is fed as facts arrive.
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
    one, one_options = scanned(tmp_path, prefilter=True, jobs=1)
    two, two_options = scanned(tmp_path, prefilter=True, jobs=2)
    assert one_options.stats is not None and two_options.stats is not None
    assert two_options.stats.jobs == 2
    expected_skipped = sorted(f"reports/report{n}.py" for n in range(30))
    assert one_options.stats.skipped == two_options.stats.skipped == expected_skipped
    assert lines(one) == lines(two)
    assert f"AG201 app/clients/client{steps - 1}.py:5 place_order" in lines(one)


def test_seed_words_come_from_the_catalogues_and_the_users_extensions() -> None:
    builtin = catalog_words(load_catalog())
    assert {"smolagents", "langgraph", "crewai", "kernel_function"} <= builtin
    # client libraries and common words are not seeds: ``requests`` is a sink, not an agent
    assert not {"requests", "urllib3", "__call__", "server", "task"} & builtin
    extended = load_catalog({"frameworks": {"acme": {"decorators": ["acme_llm.expose"]}}})
    assert {"acme_llm", "expose"} <= catalog_words(extended)


def test_a_users_framework_makes_its_files_seeds(tmp_path: Path) -> None:
    catalog = load_catalog({"frameworks": {"acme": {"decorators": ["acme_llm.expose"]}}})
    prefilter = Prefilter(catalog, ["shop/orders.py"])
    source = b"from acme_llm import expose\n\n@expose\ndef place(cart_id):\n    pass\n"
    assert prefilter.is_seed("shop/orders.py", source)
    assert not Prefilter(load_catalog(), ["shop/orders.py"]).is_seed("shop/orders.py", source)
    assert Prefilter(load_catalog(), []).is_seed("tests/test_orders.py", b"def test_x(): pass\n")


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_counts_left_out_files_once(monorepo: Path, jobs: int) -> None:
    seen: list[tuple[int, int]] = []
    options = FactOptions(jobs=jobs, progress=lambda done, total: seen.append((done, total)))
    scan([monorepo], load_config([monorepo]), facts=options)
    assert sum(done for done, _ in seen) == 10
    assert {total for _, total in seen} == {10}


def test_a_module_imported_whole_and_named_in_a_tool_list_is_parsed(tmp_path: Path) -> None:
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
    result, options = scanned(tmp_path, prefilter=True)
    assert options.stats is not None and "app/billing.py" not in options.stats.skipped
    assert "AG201 app/billing.py:5 refund" in lines(result)


def test_a_class_re_exported_by_a_package_is_followed_to_its_methods(monorepo: Path) -> None:
    result, _ = scanned(monorepo, prefilter=True)
    refund = [f for f in result.findings if f.tool == "refund_order" and f.code == "AG201"]
    assert [(f.path, f.span.line) for f in refund] == [("billing/gateway.py", 13)]
    assert "POST httpx.Client.post" in refund[0].message
    assert refund[0].confidence.value == "high"


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


def test_a_file_named_on_the_command_line_is_always_checked(monorepo: Path) -> None:
    script = monorepo / "legacy" / "import_customers.py"
    named = runner.invoke(app, ["check", str(script), "--no-cache"])
    assert "AG000" in named.stdout
    folder = runner.invoke(app, ["check", str(monorepo / "legacy"), "--no-cache", "--exit-zero"])
    assert "AG000" not in folder.stdout


def test_referrals_pack_into_one_table_and_back() -> None:
    referrals = {0: [5, 2], 3: [], 7: [1]}
    table = pack_referrals(referrals)
    assert isinstance(table, bytes)
    assert unpack_referrals(table) == {0: (2, 5), 3: (), 7: (1,)}
    # A table cut short (a damaged record) gives the entries it still holds whole.
    assert unpack_referrals(table[:-5]) == {0: (2, 5), 3: ()}
    assert unpack_referrals(b"") == {}
