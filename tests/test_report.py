"""The checklist report: verdicts with evidence, the tool table, and a self-contained page."""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from agentguard.checks.base import QUESTIONS, Invalid, Valid
from agentguard.checks.evals.ag801_no_replay_safety_eval import NoReplaySafetyEval
from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.report import render_report
from agentguard.report.model import FAIL, NOT_APPLICABLE, PASS, VERDICTS, Report, build_report

from .conftest import FIXTURES, ScanFiles

REPORT_SCHEMA = Path(__file__).resolve().parents[1] / "agentguard" / "data" / "report.schema.json"

SHOP = FIXTURES / "shop-agent"

GUARDED = """\
import requests
from langchain_core.tools import tool
from agentguard.runtime import Runtime, SQLiteLedger, current_call, guarded

runtime = Runtime(ledger=SQLiteLedger("ledger.db"))


@tool
@guarded(runtime, risk="write", idempotency="conditional", replay="never",
         key=lambda call: f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}")
def create_order(cart_id: str) -> dict:
    \"\"\"Place an order for the cart.\"\"\"
    headers = {"Idempotency-Key": current_call().idempotency_key}
    return requests.post("https://shop.example/orders", json={"cart": cart_id},
                         headers=headers).json()
"""

READ_ONLY = """\
import requests
from langchain_core.tools import tool


@tool
def order_status(order_id: str) -> dict:
    \"\"\"Look up an order.\"\"\"
    return requests.get(f"https://shop.example/orders/{order_id}").json()
"""


def shop_report() -> Report:
    return build_report(scan([SHOP], load_config([SHOP])))


def rendered(report: Report, fmt: str) -> str:
    stream = io.StringIO()
    render_report(report, fmt, stream)
    return stream.getvalue()


def test_shop_agent_answers_every_question_with_evidence() -> None:
    report = shop_report()
    verdicts = {q.id: q for q in report.questions}
    assert set(verdicts) == set(QUESTIONS)
    assert all(q.verdict in VERDICTS and q.summary for q in report.questions)
    # The incident: undeclared, unkeyed create_order behind a global retry.
    for qid, code in (("Q1", "AG101"), ("Q2", "AG201"), ("retry", "AG901")):
        assert verdicts[qid].verdict == FAIL
        assert any(e.code == code and e.path and e.line for e in verdicts[qid].findings)
    assert verdicts["meta"].verdict == PASS


def test_tool_table_marks_inferred_values_and_spares_read_only_tools() -> None:
    tools = {t.name: t for t in shop_report().tools}
    assert set(tools) == {"create_order", "order_status", "orders_for_cart"}
    create = tools["create_order"]
    assert create.framework == "langchain"
    assert create.idempotency.source == "inferred" and create.idempotency.value == "non-idempotent"
    assert create.key.status == "bad" and "AG201" in create.key.value
    assert {"AG101", "AG201"} <= {f.code for f in create.findings}
    for name in ("order_status", "orders_for_cart"):
        assert tools[name].findings == []
        assert tools[name].key.value.startswith("n/a")
        assert tools[name].replay.status == "good"


def test_a_guarded_tool_reports_declared_values_and_runtime_answers(
    scan_files: ScanFiles,
) -> None:
    report = build_report(scan_files({"agent.py": GUARDED}))
    (tool,) = report.tools
    assert (tool.risk.value, tool.idempotency.value, tool.replay.value) == (
        "write",
        "conditional",
        "never",
    )
    assert tool.risk.source.startswith("declared")
    assert tool.key.status == "good"
    assert tool.ledger.source == "runtime" or tool.ledger.status == "good"
    q1 = next(q for q in report.questions if q.id == "Q1")
    assert q1.verdict == PASS
    assert any("guarded" in e.text for e in q1.evidence)


def test_read_only_project_questions_are_not_applicable(scan_files: ScanFiles) -> None:
    report = build_report(scan_files({"agent.py": READ_ONLY}))
    verdicts = {q.id: q.verdict for q in report.questions}
    for qid in ("Q1", "Q2", "Q3", "Q8", "retry"):
        assert verdicts[qid] == NOT_APPLICABLE, qid


def test_markdown_report_has_the_checklist_and_tool_tables(shop_agent: Path) -> None:
    # A copy that is a repository of its own: paths are shown relative to its root.
    text = rendered(build_report(scan([shop_agent], load_config([shop_agent]))), "markdown")
    assert text.startswith("# agentguard checklist: shop-agent")
    for qid in QUESTIONS:
        assert re.search(rf"^\| {re.escape(qid)} \|", text, re.M), qid
    tool_rows = [line for line in text.splitlines() if line.startswith("| **")]
    assert len(tool_rows) == 3
    assert all(row.count(" | ") == 11 for row in tool_rows)
    assert "`shop_agent/tools.py:19` AG201" in text


def test_links_use_the_link_base(shop_agent: Path) -> None:
    report = build_report(
        scan([shop_agent], load_config([shop_agent])), link_base="https://example.org/blob/abc/"
    )
    assert "(https://example.org/blob/abc/shop_agent/tools.py#L16)" in rendered(report, "markdown")
    assert 'href="https://example.org/blob/abc/shop_agent/tools.py#L16"' in rendered(report, "html")


def test_json_report_round_trips() -> None:
    data = json.loads(rendered(shop_report(), "json"))
    assert [q["id"] for q in data["questions"]][:2] == ["Q1", "Q2"]
    create = next(t for t in data["tools"] if t["name"] == "create_order")
    assert create["worst"] == "error"
    assert create["key"]["status"] == "bad"


class PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []
        self.errors: list[str] = []
        self.data: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in {"meta", "input", "br", "wbr", "img", "link", "hr"}:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.open[-3:]})")
        else:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        self.data.append(data)


def parse(page: str) -> PageParser:
    parser = PageParser()
    parser.feed(page)
    parser.close()
    return parser


def test_html_page_is_well_formed_with_questions_and_a_sortable_filterable_table() -> None:
    page = rendered(shop_report(), "html")
    parser = parse(page)
    assert parser.errors == [] and parser.open == []
    tags = parser.tags
    assert ("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}) in tags
    articles = [a for t, a in tags if t == "article"]
    assert [a["id"] for a in articles] == [f"q-{q}" for q in QUESTIONS]
    assert {a["data-verdict"] for a in articles} <= set(VERDICTS)
    rows = [a for t, a in tags if t == "tr" and "data-findings" in a]
    assert len(rows) == 3
    assert sum(1 for t, a in tags if t == "th" and "data-key" in a) == 12
    assert any(t == "input" and a.get("id") == "tool-filter" for t, a in tags)
    assert any(t == "select" and a.get("id") == "tool-status" for t, a in tags)
    # Findings grouped under their question.
    q2 = page[page.index('id="q-Q2"') : page.index('id="q-Q3"')]
    assert "AG201" in q2 and "AG901" not in q2


def test_html_page_loads_nothing_from_outside() -> None:
    page = rendered(shop_report(), "html")
    parser = parse(page)
    for tag, attrs in parser.tags:
        assert tag not in {"link", "img", "iframe", "object", "embed"}, tag
        if tag == "script":
            assert "src" not in attrs
        for name in ("src", "srcset", "data", "poster"):
            assert name not in attrs, (tag, name)
        if tag == "a":
            href = attrs.get("href") or ""
            assert not re.match(r"(?i)^[a-z][a-z0-9+.-]*:", href), href  # no link-base given
    assert not re.search(r"(?i)@import|url\s*\(|https?://|//[a-z0-9-]+\.", page)
    assert re.search(r"(?i)fetch\(|XMLHttpRequest|import\(", page) is None


def test_html_escapes_scanned_text(scan_files: ScanFiles) -> None:
    tricky = (
        READ_ONLY.replace("order_status", "status_x").replace(
            "import requests\n", "import requests\nimport requests as r\n"
        )
        + GUARDED.replace("create_order", "create_x").split("runtime = ", 1)[0]
    )
    report = build_report(scan_files({"agent.py": GUARDED, "<b>evil</b>.py": tricky}))
    page = rendered(report, "html")
    assert "<b>evil</b>" not in page
    assert parse(page).errors == []


@pytest.mark.parametrize("fmt", ["markdown", "html", "json"])
def test_cli_report_writes_each_format(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"report.{fmt}"
    run = CliRunner().invoke(app, ["report", str(SHOP), "--format", fmt, "-o", str(out)])
    assert run.exit_code == 0, run.output
    text = out.read_text(encoding="utf-8")
    assert "create_order" in text


def test_cli_report_rejects_an_unknown_format() -> None:
    run = CliRunner().invoke(app, ["report", str(SHOP), "--format", "pdf"])
    assert run.exit_code == 2


@pytest.mark.parametrize(
    "project", sorted(p for p in FIXTURES.iterdir() if p.is_dir()), ids=lambda p: p.name
)
def test_every_fixture_gets_a_consistent_report(project: Path) -> None:
    result = scan([project], load_config([project]))
    report = build_report(result)
    assert len(report.tools) == len(result.project.tools)
    assert sum(q.counts["findings"] for q in report.questions) == len(result.findings)
    for q in report.questions:
        if q.id != "meta":  # unreadable files make meta partial without a finding
            assert (q.verdict in {FAIL, "partial"}) == bool(q.findings), q
    page = rendered(report, "html")
    assert parse(page).errors == []
    assert json.loads(rendered(report, "json"))["findings"] == len(result.findings)


EVAL_EXAMPLES = [
    pytest.param(example, id=f"{kind}-{index}")
    for kind, examples in (
        ("valid", NoReplaySafetyEval.VALID),
        ("invalid", NoReplaySafetyEval.INVALID),
    )
    for index, example in enumerate(examples)
]


@pytest.mark.parametrize("example", EVAL_EXAMPLES)
def test_eval_column_gives_ag801s_verdict(example: Valid | Invalid, scan_files: ScanFiles) -> None:
    """The report's eval column and AG801 answer Q8 the same way for every tool. The report
    used to look for its own sign of a test (a test module importing the runtime's testing
    helpers) and called a test that AG801 accepts "tested, no timeout fault"."""
    result = scan_files({example.filename: example.code, **example.files})
    flagged = {f.tool for f in result.findings if f.code == "AG801"}
    rows = {row.name: row.eval for row in build_report(result).tools}
    writers = [t.name for t in result.project.tools if t.writes()]
    assert writers
    for name in writers:
        assert rows[name].status == ("bad" if name in flagged else "good"), rows[name]


DISAGREEING_SERVER = '''
import httpx
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mcp = FastMCP("shop")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def create_order(cart_id: str) -> dict:
    """Create an order."""
    return httpx.post("https://shop.example/orders", json={"cart": cart_id}).json()


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, idempotentHint=False))
def set_address(order_id: str, address: str) -> dict:
    """Set the delivery address."""
    return httpx.put(f"https://shop.example/orders/{order_id}/address", json={"a": address}).json()


@mcp.tool()
def get_order(order_id: str) -> str:
    """Look an order up."""
    try:
        return httpx.get(f"https://shop.example/orders/{order_id}").text
    except Exception as exc:
        return f"Error: {exc}"


@mcp.tool()
def list_orders(customer_id: str) -> str:
    """List a customer's orders."""
    try:
        return httpx.get(f"https://shop.example/customers/{customer_id}/orders").text
    except Exception as exc:
        return f"Error: {exc}"
'''


def test_every_ratio_has_its_numerator_inside_its_denominator(scan_files: ScanFiles) -> None:
    report = build_report(scan_files({"server.py": DISAGREEING_SERVER}))
    for question in report.questions:
        for flagged, total in re.findall(r"(\d+) of (\d+) ", question.summary):
            assert int(flagged) <= int(total), (question.id, question.summary)
    q6 = next(q for q in report.questions if q.id == "Q6")
    assert "2 other tools flagged" in q6.summary, q6.summary


def test_a_tool_row_says_where_the_declaration_and_the_code_disagree(
    scan_files: ScanFiles,
) -> None:
    rows = {
        row.name: row for row in build_report(scan_files({"server.py": DISAGREEING_SERVER})).tools
    }
    declared_read = rows["create_order"]
    # the value stays a word of the column (what JSON readers compare); the note says why
    assert declared_read.risk.value == "read"
    assert declared_read.risk.status == "bad"
    assert declared_read.risk.note == "the code writes: network_write"
    assert declared_read.replay.value == "unsafe: repeats the write"
    declared_repeating = rows["set_address"]
    assert declared_repeating.idempotency.value == "non-idempotent"
    assert declared_repeating.idempotency.note == "the code's writes are idempotent"
    assert declared_repeating.replay.value == "safe: idempotent"
    assert "declaration says non-idempotent" in declared_repeating.replay.note


def test_the_disagreement_is_shown_in_every_report_format(scan_files: ScanFiles) -> None:
    report = build_report(scan_files({"server.py": DISAGREEING_SERVER}))
    assert "the code writes: network_write" in rendered(report, "html")
    assert "the code writes: network_write" in rendered(report, "markdown")
    data = json.loads(rendered(report, "json"))
    jsonschema.validate(data, json.loads(REPORT_SCHEMA.read_text()))
    row = next(row for row in data["tools"] if row["name"] == "create_order")
    assert row["risk"] == {
        "value": "read",
        "source": row["risk"]["source"],
        "status": "bad",
        "note": "the code writes: network_write",
    }
