"""A check whose inputs are all unchanged is answered by the run memo; any change is checked
in full, from the cached facts, with the findings a fresh run gives."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine import fact_cache
from agentguard.engine.pipeline import scan
from agentguard.engine.scan_result import ScanResult
from agentguard.engine.speed import FactOptions

from .conftest import write_project


@pytest.fixture
def project(shop_agent: Path) -> Path:
    return shop_agent


def recorded_scan(
    project: Path, cache_dir: Path, select: list[str] | None = None, with_fixes: bool = False
) -> ScanResult:
    options = FactOptions(jobs=1, cache_dir=cache_dir, record_runs=True)
    return scan(
        [project],
        load_config([project]),
        select=select or [],
        facts=options,
        with_fixes=with_fixes,
    )


def fresh_scan(project: Path) -> ScanResult:
    return scan([project], load_config([project]))


def lines(result: ScanResult) -> list[str]:
    return [f"{f.code} {f.path}:{f.span.line} {f.tool} {f.message}" for f in result.findings]


def records(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*/runs/*.pickle"))


def test_an_unchanged_tree_is_answered_by_the_memo_even_after_a_fresh_clone(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    assert not first.from_memo and first.findings
    for path in project.rglob("*.py"):
        os.utime(path, (1_900_000_000, 1_900_000_000))  # new mtimes, same bytes
    second = recorded_scan(project, cache_dir)
    assert second.from_memo
    assert lines(second) == lines(first)
    assert second.found_tools == first.found_tools and second.tools > 0
    assert second.python_paths == first.python_paths
    assert second.files_scanned == first.files_scanned


def test_a_memo_answer_still_gives_the_project_model_to_whoever_asks(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    second = recorded_scan(project, cache_dir)
    assert second.from_memo
    # The report and the fixer read the model: linked now, from the cached facts.
    assert set(second.project.modules) == set(first.project.modules)
    assert [t.name for t in second.project.tools] == [t.name for t in first.project.tools]


def test_one_changed_byte_in_one_file_is_checked_again(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    flagged = first.findings[0]
    path = project / flagged.path
    # Suppress the first finding: only a real re-check can notice the comment.
    source = path.read_text(encoding="utf-8").splitlines(keepends=True)
    line = source[flagged.span.line - 1].rstrip("\n")
    source[flagged.span.line - 1] = f"{line}  # agentguard: ignore[{flagged.code}]\n"
    path.write_text("".join(source), encoding="utf-8")
    second = recorded_scan(project, cache_dir)
    assert not second.from_memo
    assert lines(second) != lines(first)
    assert any(f.code == flagged.code and f.path == flagged.path for f in second.suppressed)


def test_a_file_no_tool_reaches_that_becomes_a_tool_is_found(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    report = project / "reports" / "revenue.py"
    write_project(project, {"reports/revenue.py": "def total(values):\n    return sum(values)\n"})
    first = recorded_scan(project, cache_dir)
    report.write_text(
        "import requests\nfrom langchain_core.tools import tool\n\n\n@tool\n"
        "def publish_revenue(month: str) -> dict:\n"
        '    """Publish the revenue of a month to the finance API."""\n'
        '    return requests.post("https://finance.example/revenue", json={"m": month}).json()\n'
    )
    second = recorded_scan(project, cache_dir)
    assert not second.from_memo
    assert second.tools == first.tools + 1
    assert any(f.path == "reports/revenue.py" for f in second.findings)


def test_a_new_file_is_checked_again(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    recorded_scan(project, cache_dir)
    (project / "notes.py").write_text("NOTES = []\n")
    assert not recorded_scan(project, cache_dir).from_memo


def test_a_changed_config_or_user_catalogue_is_checked_again(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    recorded_scan(project, cache_dir)
    config = project / "agentguard.toml"
    config.write_text('min-confidence = "medium"\n', encoding="utf-8")
    assert not recorded_scan(project, cache_dir).from_memo
    assert recorded_scan(project, cache_dir).from_memo
    config.write_text(
        'min-confidence = "medium"\n\n[frameworks.acme]\ndecorators = ["acme_llm.expose"]\n',
        encoding="utf-8",
    )
    assert not recorded_scan(project, cache_dir).from_memo


def test_switching_back_to_an_earlier_version_reuses_its_record(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    path = project / first.findings[0].path
    original = path.read_bytes()
    path.write_bytes(original + b"\n# another branch\n")
    assert not recorded_scan(project, cache_dir).from_memo
    path.write_bytes(original)
    back = recorded_scan(project, cache_dir)
    assert back.from_memo
    assert lines(back) == lines(first)


def test_another_selection_or_fix_setting_is_another_run(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    everything = recorded_scan(project, cache_dir)
    only_keys = recorded_scan(project, cache_dir, select=["AG2"])
    assert not only_keys.from_memo
    assert {f.code[:3] for f in only_keys.findings} == {"AG2"}
    assert len(only_keys.findings) < len(everything.findings)
    with_edits = recorded_scan(project, cache_dir, with_fixes=True)
    assert not with_edits.from_memo
    again = recorded_scan(project, cache_dir, with_fixes=True)
    assert again.from_memo and again.fixes_attached
    assert [f.fix for f in again.findings] == [f.fix for f in with_edits.findings]
    assert any(f.fix is not None and f.fix.edits for f in again.findings)


@pytest.mark.parametrize(
    "garbage",
    [b"", b"not a pickle", pickle.dumps({"findings": []}), pickle.dumps(Path("/etc/passwd"))],
    ids=["empty", "text", "wrong-type", "foreign-class"],
)
def test_a_corrupt_record_is_ignored_and_rewritten(
    project: Path, tmp_path: Path, garbage: bytes
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(project, cache_dir)
    (record,) = records(cache_dir)
    record.write_bytes(garbage)
    rebuilt = recorded_scan(project, cache_dir)
    assert not rebuilt.from_memo
    assert lines(rebuilt) == lines(first)
    assert recorded_scan(project, cache_dir).from_memo


def test_a_record_naming_any_other_callable_is_never_run(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    recorded_scan(project, cache_dir)
    (record,) = records(cache_dir)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.mkdir, (str(marker),))

    record.write_bytes(pickle.dumps(Payload()))
    assert not recorded_scan(project, cache_dir).from_memo
    assert not marker.exists()


def test_the_cli_prints_the_same_report_from_a_memo_answer(project: Path) -> None:
    runner = CliRunner()
    outputs, notes = [], []
    for _ in range(2):
        result = runner.invoke(
            app, ["check", str(project), "--exit-zero", "--jobs", "1", "-f", "json", "--profile"]
        )
        assert result.exit_code == 0, result.output
        outputs.append(result.stdout)
        notes.append(result.stderr)
    assert "no run was recorded with these inputs" in notes[0]
    assert "no input changed since a recorded run" in notes[1]
    first, second = (json.loads(text) for text in outputs)
    assert second == first
    assert first["findings"] and first["tools"]
    assert records(fact_cache.default_cache_dir(project))
    text_runs = [
        runner.invoke(app, ["check", str(project), "--exit-zero", "--jobs", "1"]).stdout
        for _ in range(2)
    ]
    assert text_runs[0] == text_runs[1]
    assert "fix available" in text_runs[1]  # offers come from the record too


def test_no_cache_records_nothing(project: Path) -> None:
    result = CliRunner().invoke(app, ["check", str(project), "--exit-zero", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert not (fact_cache.default_cache_dir(project)).exists()


# A small order desk: two tools, the helpers they call, and code no tool reaches.
TOOLS = '''\
import httpx
from langchain_core.tools import tool

from order_desk.receipts import receipt_lines
from order_desk.status import order_state


@tool
def place_order(cart_id: int) -> dict:
    """Place the order for a cart."""
    response = httpx.post("https://shop.example/orders", json={"cart": cart_id})
    return {"order": response.json(), "receipt": receipt_lines(cart_id)}


@tool
def order_status(order_id: int) -> str:
    """Tell where an order is."""
    return order_state(order_id)
'''
RECEIPTS = """\
def receipt_lines(cart_id: int) -> list[str]:
    return [header(cart_id), "thank you"]


def header(cart_id: int) -> str:
    return f"cart {cart_id}"
"""
STATUS = """\
import httpx


def order_state(order_id: int) -> str:
    return httpx.get(f"https://shop.example/orders/{order_id}").json()["state"]
"""
UNUSED = '''

def gift_note(cart_id: int, text: str) -> str:
    """A note printed on the gift receipt (not used yet)."""
    lines = [f"cart {cart_id}", text.strip()]
    return "\\n".join(lines)
'''
TIMEOUT_HANDLED = """

def refund_payment(order_id: int) -> dict:
    try:
        httpx.post("https://pay.example/refunds", json={"order": order_id}, timeout=5)
    except httpx.TimeoutException as exc:
        return {"ok": False, "error": f"refund failed: {exc}"}
    return {"ok": True}
"""
SUPPRESSED = """

def footer(cart_id: int) -> str:
    return "bye"  # agentguard: ignore[AG301]
"""


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "order-desk"
    (root / ".git").mkdir(parents=True)
    write_project(
        root,
        {
            "order_desk/__init__.py": "",
            "order_desk/tools.py": TOOLS,
            "order_desk/receipts.py": RECEIPTS,
            "order_desk/status.py": STATUS,
        },
    )
    return root


def shown(result: ScanResult) -> list[tuple[str, str, int, str | None, str]]:
    return [(f.code, f.path, f.span.line, f.tool, f.message) for f in result.findings]


@pytest.mark.parametrize(
    ("path", "text", "seen"),
    [
        # Only line numbers change in a helper no output names.
        ("order_desk/receipts.py", "# Receipt text.\n\n" + RECEIPTS, None),
        # A comment above the tools: every finding in the file moves down a line.
        ("order_desk/tools.py", "# The order desk's tools.\n" + TOOLS, None),
        # A helper nothing calls, added.
        ("order_desk/receipts.py", RECEIPTS + UNUSED, None),
        # A side effect added to a helper a tool reaches: a new finding for that tool.
        (
            "order_desk/status.py",
            STATUS.replace("httpx.get(", "httpx.post(").replace('.json()["state"]', ".text"),
            ("AG201", "order_status"),
        ),
        # A timeout handled in a function nothing calls (AG401 judges every function).
        ("order_desk/status.py", STATUS + TIMEOUT_HANDLED, ("AG401", None)),
        # A suppression in a function nothing calls: reported as unused.
        ("order_desk/receipts.py", RECEIPTS + SUPPRESSED, ("AG002", None)),
    ],
    ids=[
        "comment-in-helper",
        "comment-above-findings",
        "unused-helper",
        "side-effect",
        "timeout",
        "suppression",
    ],
)
def test_every_edit_gives_the_findings_of_a_fresh_run(
    desk: Path, tmp_path: Path, path: str, text: str, seen: tuple[str, str | None] | None
) -> None:
    cache_dir = tmp_path / "cache"
    first = recorded_scan(desk, cache_dir)
    assert first.findings
    (desk / path).write_text(text, encoding="utf-8")
    second = recorded_scan(desk, cache_dir)
    assert not second.from_memo
    assert shown(second) == shown(fresh_scan(desk))
    if seen is not None:
        code, tool = seen
        new = [f for f in second.findings if (f.code, f.tool) == (code, tool)]
        assert new and not [f for f in first.findings if (f.code, f.tool) == (code, tool)]
    # The edited tree is recorded in turn.
    third = recorded_scan(desk, cache_dir)
    assert third.from_memo and shown(third) == shown(second)


def test_a_change_anywhere_in_agentguards_code_retires_the_run_records(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Upgrading agentguard to code with a fixed rule (not only a fixed engine) must not
    answer from a run recorded by the old code: the code digest covers the whole package."""
    from agentguard.engine import run_memo

    package = tmp_path / "agentguard"
    (package / "engine").mkdir(parents=True)
    (package / "checks").mkdir()
    rule = package / "checks" / "ag999_rule.py"
    rule.write_text("MESSAGE = 'old'\n")
    monkeypatch.setattr(run_memo, "__file__", str(package / "engine" / "run_memo.py"))
    run_memo.package_digest.cache_clear()
    before = run_memo.package_digest()
    rule.write_text("MESSAGE = 'fixed'\n")
    run_memo.package_digest.cache_clear()
    try:
        assert run_memo.package_digest() != before
    finally:
        run_memo.package_digest.cache_clear()
