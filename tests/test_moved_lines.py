"""A recorded run answers for files whose facts changed only in line numbers or in functions
that no rule starts from and that the rules did not read or nothing refers to, and only
there; any other edit links the project again, with the findings a fresh run gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.parallel import source_facts
from agentguard.engine.pipeline import FactOptions, ScanResult, _still_parsed, scan
from agentguard.engine.run_memo import RunRecord
from agentguard.facts.module_facts import ModuleFacts, line_layout
from agentguard.knowledge.catalog import load_catalog
from agentguard.prefilter import Prefilter
from agentguard.python.function_parts import split_functions
from tests.conftest import write_project

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


def check(project: Path, cache_dir: Path | None, prefilter: bool = True) -> ScanResult:
    options = FactOptions(
        jobs=1, cache_dir=cache_dir, record_runs=cache_dir is not None, prefilter=prefilter
    )
    return scan([project], load_config([project]), facts=options)


def shown(result: ScanResult) -> list[tuple[str, str, int, str | None, str]]:
    return [(f.code, f.path, f.span.line, f.tool, f.message) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["prefilter", "every-file"])
def test_comments_in_a_helper_no_output_names_reuse_the_record(
    desk: Path, tmp_path: Path, prefilter: bool
) -> None:
    cache_dir = tmp_path / "cache"
    first = check(desk, cache_dir, prefilter)
    assert first.findings and "order_desk/receipts.py" in first.python_paths
    assert all(f.path != "order_desk/receipts.py" for f in first.findings)
    receipts = desk / "order_desk/receipts.py"
    receipts.write_text(
        "# Receipt text for the order desk.\n\n" + RECEIPTS.replace("\n\n\n", "\n\n\n# header\n")
    )
    second = check(desk, cache_dir, prefilter)
    assert second.from_record
    assert "1 changed file(s) differ from a recorded run only in line numbers" in (
        second.record_note
    )
    assert shown(second) == shown(first) == shown(check(desk, None, prefilter))
    # The brought-up-to-date record answers the next run as an unchanged tree.
    third = check(desk, cache_dir, prefilter)
    assert third.from_record and third.record_note.startswith("no input changed")


def test_a_side_effect_added_to_a_helper_is_found(desk: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    first = check(desk, cache_dir)
    assert not [f for f in first.findings if f.tool == "order_status" and f.code == "AG201"]
    (desk / "order_desk/status.py").write_text(
        STATUS.replace("httpx.get(", "httpx.post(").replace('.json()["state"]', ".text")
    )
    second = check(desk, cache_dir)
    assert not second.from_record
    assert first.record_note.startswith("no run was recorded")
    assert second.record_note == (
        "linked again: since the newest recorded run, order_desk/status.py changed in more "
        "than line numbers: `order_state` is read by the rules (a tool or a retry reaches it)"
    )
    assert shown(second) == shown(check(desk, None))
    assert shown(second) != shown(first)
    assert [f for f in second.findings if f.tool == "order_status" and f.code == "AG201"]


def test_a_comment_above_a_finding_moves_it(desk: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    first = check(desk, cache_dir)
    tools = desk / "order_desk/tools.py"
    tools.write_text("# The order desk's tools.\n" + TOOLS)
    second = check(desk, cache_dir)
    assert not second.from_record
    assert "order_desk/tools.py changed, and an output names it" in second.record_note
    moved = [
        (code, path, line + 1, tool, message) for code, path, line, tool, message in shown(first)
    ]
    assert shown(second) == moved == shown(check(desk, None))


def test_a_file_parsed_for_a_word_in_a_comment_is_left_out_once_it_goes(
    desk: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    notes = desk / "order_desk/notes.py"
    notes.write_text("# Notes the agent tool keeps.\nNOTES: list[str] = []\n")
    first = check(desk, cache_dir)
    assert first.project is not None and "order_desk/notes.py" in first.project.modules
    notes.write_text("# Notes kept between runs.\nNOTES: list[str] = []\n")
    second = check(desk, cache_dir)
    assert not second.from_record
    assert second.record_note.endswith("order_desk/notes.py no longer names a seed word")
    assert second.project is not None and "order_desk/notes.py" not in second.project.modules
    assert shown(second) == shown(first)


def facts_of(text: str) -> ModuleFacts:
    facts = source_facts(text.encode(), "order_desk/receipts.py", False)
    assert isinstance(facts, ModuleFacts)
    return facts


@pytest.mark.parametrize(
    "edited",
    [
        "# Receipt text.\n" + RECEIPTS,
        RECEIPTS.replace("\n\n\n", "\n\n\n\n\n"),
        RECEIPTS + "\n# end of receipts\n",
    ],
    ids=["comment-on-top", "blank-lines-between", "comment-at-the-end"],
)
def test_comments_and_blank_lines_change_only_line_numbers(edited: str) -> None:
    assert facts_of(edited) != facts_of(RECEIPTS)
    assert line_layout(facts_of(RECEIPTS)) == line_layout(facts_of(edited))


@pytest.mark.parametrize(
    "edited",
    [
        RECEIPTS.replace('"thank you"', '"thanks"'),
        RECEIPTS.replace("cart_id: int) -> str", "cart: int) -> str").replace(
            "{cart_id}", "{cart}"
        ),
        # The same functions in the other order: a line that was after another is before it.
        RECEIPTS.split("\n\n\n")[1] + "\n\n" + RECEIPTS.split("\n\n\n")[0] + "\n",
        RECEIPTS.replace(
            "def header(cart_id: int) -> str:\n",
            'def header(cart_id: int) -> str:\n    """Header."""\n',
        ),
        RECEIPTS.replace(
            '[header(cart_id), "thank you"]', '[\n        header(cart_id), "thank you"]'
        ),
        "# agentguard: ignore[AG101]\n" + RECEIPTS,
    ],
    ids=["string", "parameter", "order", "docstring", "line-break-in-call", "suppression"],
)
def test_any_other_change_is_a_change(edited: str) -> None:
    assert line_layout(facts_of(RECEIPTS)) != line_layout(facts_of(edited))


def test_a_relink_searches_only_the_changed_files_for_seed_words(
    desk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_dir = tmp_path / "cache"
    first = check(desk, cache_dir)
    assert first.project is not None
    left_out = [rel for rel in first.python_paths if rel not in first.project.modules]
    searched: list[str] = []
    original = Prefilter.is_seed

    def counting(self: Prefilter, rel: str, data: bytes) -> bool:
        if rel not in self._seeds:
            searched.append(rel)
        return original(self, rel, data)

    monkeypatch.setattr(Prefilter, "is_seed", counting)
    status = desk / "order_desk/status.py"
    status.write_text(STATUS.replace("/orders/", "/order/"))
    relinked = check(desk, cache_dir)
    assert not relinked.from_record
    # The files parsed last time, unchanged, were not searched again; the ones left out
    # were (their bytes were not recorded).
    assert sorted(searched) == sorted(["order_desk/status.py", *left_out])
    assert "order_desk/tools.py" not in searched
    monkeypatch.undo()
    assert shown(relinked) == shown(check(desk, None))


def test_a_relink_walks_only_the_changed_files_for_the_files_they_refer_to(
    desk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_dir = tmp_path / "cache"
    check(desk, cache_dir)
    walked: list[str] = []
    original = Prefilter.follow

    def counting(self: Prefilter, facts: ModuleFacts) -> frozenset[int]:
        if facts.path not in self._referrals:
            walked.append(facts.path)
        return original(self, facts)

    monkeypatch.setattr(Prefilter, "follow", counting)
    # Answered by the record: receipts.py's referrals may differ now, so they are not kept.
    edit_receipts(desk, RECEIPTS + UNUSED)
    assert check(desk, cache_dir).from_record
    walked.clear()
    (desk / "order_desk/status.py").write_text(STATUS.replace("/orders/", "/order/"))
    relinked = check(desk, cache_dir)
    assert not relinked.from_record
    assert sorted(set(walked)) == ["order_desk/receipts.py", "order_desk/status.py"]
    monkeypatch.undo()
    assert relinked.project is not None and fresh_modules(desk) == set(relinked.project.modules)
    assert shown(relinked) == shown(check(desk, None))


def fresh_modules(project: Path) -> set[str]:
    result = check(project, None)
    assert result.project is not None
    return set(result.project.modules)


UNUSED = '''

def gift_note(cart_id: int, text: str) -> str:
    """A note printed on the gift receipt (not used yet)."""
    lines = [f"cart {cart_id}", text.strip()]
    return "\\n".join(lines)
'''


def edit_receipts(project: Path, text: str) -> None:
    (project / "order_desk/receipts.py").write_text(text)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (RECEIPTS, RECEIPTS + UNUSED),
        (RECEIPTS + UNUSED, RECEIPTS),
        (RECEIPTS + UNUSED, RECEIPTS + UNUSED.replace("text.strip()", "text.upper()")),
        # Inserted between two functions: the ones after it move down.
        (RECEIPTS, RECEIPTS.replace("\n\n\ndef header", UNUSED + "\n\ndef header")),
    ],
    ids=["added", "removed", "edited", "inserted"],
)
@pytest.mark.parametrize("prefilter", [True, False], ids=["prefilter", "every-file"])
def test_an_unused_helper_edited_reuses_the_record(
    desk: Path, tmp_path: Path, before: str, after: str, prefilter: bool
) -> None:
    cache_dir = tmp_path / "cache"
    edit_receipts(desk, before)
    first = check(desk, cache_dir, prefilter)
    edit_receipts(desk, after)
    second = check(desk, cache_dir, prefilter)
    assert second.from_record, second.record_note
    assert "or in functions no rule starts from or reads" in second.record_note
    assert shown(second) == shown(first) == shown(check(desk, None, prefilter))
    third = check(desk, cache_dir, prefilter)
    assert third.from_record and third.record_note.startswith("no input changed")


RETRYING = """

def header_with_retries(cart_id: int) -> str:
    for _ in range(3):
        try:
            return header(cart_id)
        except OSError:
            continue
    return ""
"""
POSTING = """

def post_receipt(cart_id: int) -> None:
    import httpx

    httpx.post("https://shop.example/receipts", json={"cart": cart_id})
"""
SUPPRESSED = """

def footer(cart_id: int) -> str:
    return "bye"  # agentguard: ignore[AG301]
"""


@pytest.mark.parametrize(
    ("after", "why"),
    [
        (
            RECEIPTS.replace('"thank you"', '"thanks"'),
            "`receipt_lines` is read by the rules (a tool or a retry reaches it)",
        ),
        (
            RECEIPTS.replace('f"cart {cart_id}"', 'f"Cart {cart_id}"'),
            "`header` is read by the rules (a tool or a retry reaches it)",
        ),
        (
            RECEIPTS + "\n\ndef cart(cart_id: int) -> str:\n    return str(cart_id)\n",
            "`cart` of an edited function is named in order_desk/receipts.py",
        ),
        (RECEIPTS + RETRYING, "`header_with_retries` may matter to a rule: `header_with_"),
        (RECEIPTS + POSTING, "outside its functions"),
        (RECEIPTS + SUPPRESSED, "it holds a suppression comment"),
        ("import time\n\n" + RECEIPTS, "outside its functions"),
    ],
    ids=[
        "reached",
        "reached-through-a-helper",
        "named-in-the-file",
        "retry-loop",
        "local-import",
        "suppression",
        "import",
    ],
)
def test_any_other_edit_links_again(desk: Path, tmp_path: Path, after: str, why: str) -> None:
    cache_dir = tmp_path / "cache"
    first = check(desk, cache_dir)
    edit_receipts(desk, after)
    second = check(desk, cache_dir)
    assert not second.from_record
    assert first.project is not None
    assert why in second.record_note
    assert shown(second) == shown(check(desk, None))


UNREACHED = """

def legacy_total(cart_id: int) -> str:
    return format_total(cart_id)


def format_total(cart_id: int) -> str:
    return f"total for cart {cart_id}"


class ReceiptPrinter:
    def __init__(self, width: int) -> None:
        self.width = width

    def line(self, text: str) -> str:
        return text.ljust(self.width)

    @property
    def margin(self) -> int:
        return self.width // 10
"""


@pytest.mark.parametrize(
    "after",
    [
        RECEIPTS + UNREACHED.replace("total for cart", "cart total"),
        RECEIPTS + UNREACHED.replace("text.ljust(self.width)", "text.rjust(self.width)"),
        RECEIPTS + UNREACHED.replace("self.width // 10", "self.width // 8"),
    ],
    ids=["called-function", "method", "property"],
)
def test_code_no_tool_reaches_edited_reuses_the_record(
    desk: Path, tmp_path: Path, after: str
) -> None:
    # ``format_total`` is called, and the printer's method may be: nothing a rule reads.
    cache_dir = tmp_path / "cache"
    edit_receipts(desk, RECEIPTS + UNREACHED)
    first = check(desk, cache_dir)
    edit_receipts(desk, after)
    second = check(desk, cache_dir)
    assert second.from_record, second.record_note
    assert shown(second) == shown(first) == shown(check(desk, None))


def test_a_method_a_tool_reaches_edited_links_again(desk: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    client = """import httpx


class ShopClient:
    def __init__(self) -> None:
        self.http = httpx.Client(base_url="https://shop.example")

    def cancel(self, order_id: int) -> str:
        return self.http.get(f"/orders/{order_id}").text
"""
    (desk / "order_desk/client.py").write_text(client)
    (desk / "order_desk/status.py").write_text(
        "from order_desk.client import ShopClient\n\n\n"
        "def order_state(order_id: int) -> str:\n"
        "    return ShopClient().cancel(order_id)\n"
    )
    first = check(desk, cache_dir)
    (desk / "order_desk/client.py").write_text(
        client.replace(
            'self.http.get(f"/orders/{order_id}").text',
            'self.http.delete(f"/orders/{order_id}").text',
        )
    )
    second = check(desk, cache_dir)
    assert not second.from_record
    assert second.record_note.endswith(
        "`cancel` is read by the rules (a tool or a retry reaches it)"
    )
    assert shown(second) == shown(check(desk, None)) != shown(first)


def test_a_timeout_handled_in_an_unused_helper_is_reported(desk: Path, tmp_path: Path) -> None:
    # AG401 judges every function that catches a timeout around a write, called or not.
    cache_dir = tmp_path / "cache"
    check(desk, cache_dir)
    (desk / "order_desk/status.py").write_text(
        STATUS
        + """

def refund_payment(order_id: int) -> dict:
    try:
        httpx.post("https://pay.example/refunds", json={"order": order_id}, timeout=5)
    except httpx.TimeoutException as exc:
        return {"ok": False, "error": f"refund failed: {exc}"}
    return {"ok": True}
"""
    )
    second = check(desk, cache_dir)
    assert not second.from_record
    assert second.record_note.endswith("`refund_payment` handles a timeout")
    assert [f.code for f in second.findings if f.path == "order_desk/status.py"] == ["AG401"]
    assert shown(second) == shown(check(desk, None))


def test_a_new_function_a_schema_names_links_again(desk: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    (desk / "tools.json").write_text(
        '[{"type": "function", "function": {"name": "gift_note", "parameters": {}}}]'
    )
    check(desk, cache_dir)
    edit_receipts(desk, RECEIPTS + UNUSED)
    second = check(desk, cache_dir)
    assert not second.from_record
    assert "`gift_note` of an edited function is named in tools.json" in second.record_note
    assert shown(second) == shown(check(desk, None))


def test_a_suppression_added_in_an_unused_helper_is_reported_unused(
    desk: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    check(desk, cache_dir)
    edit_receipts(desk, RECEIPTS + SUPPRESSED)
    second = check(desk, cache_dir)
    assert [f.code for f in second.findings if f.path == "order_desk/receipts.py"] == ["AG002"]


def parts_of(text: str, path: str = "order_desk/receipts.py") -> dict[str, str]:
    facts = source_facts(text.encode(), path, path.startswith("tests/"))
    assert isinstance(facts, ModuleFacts)
    _, parts = split_functions(facts, load_catalog([]))
    return {qualname.rsplit(".", 1)[-1]: part.rule_entry for qualname, part in parts.items()}


def test_a_rule_may_start_from_what_the_facts_name_not_what_the_text_says() -> None:
    aliased = (
        "from langchain_core.tools import tool as make\n\n"
        "def wrap(fn):\n    return make(fn)\n\n"
        "def plain(x: int) -> int:\n    return x + 1\n"
    )
    entries = parts_of(aliased)
    # ``make`` is langchain_core.tools.tool: the word is in the resolved callee.
    assert entries["wrap"] == "it names the seed word 'tool'"
    assert entries["plain"] == ""


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        (
            "import app\n\n@app.hub.add\ndef f():\n    return 1\n",
            "`f` is decorated (`@app.hub.add`)",
        ),
        ("import functools\n\n@functools.cache\ndef f():\n    return 1\n", ""),
        ("def run(payload):\n    return payload\n", "`run` may be run by its name alone"),
        ("def f():\n    class Local:\n        pass\n    return Local\n", "it defines a class"),
        (
            "def f(name):\n    if name == 'refund':\n        return g()\n",
            "it holds a schema-shaped dict or a dispatch on a tool name",
        ),
        (
            "def f():\n    def inner():\n        while True:\n            try:\n"
            "                return 1\n            except OSError:\n                continue\n"
            "    return inner\n",
            "`inner` may retry",
        ),
        (
            "def f(name, args):\n    return HANDLERS[name](**args)\n",
            "`HANDLERS[name]` runs a function looked up by name",
        ),
        (
            "def f(name, args):\n    return getattr(ops, name)(args)\n",
            "`getattr` runs a function looked up by name",
        ),
        (
            "def f(name, args):\n    handler = REGISTRY.get(name)\n    return handler(args)\n",
            "`handler` runs a function looked up by name",
        ),
        ("import subprocess\n\ndef f(cmd):\n    return subprocess.run(cmd)\n", ""),
        (
            "def f(db, row):\n    db.execute('INSERT INTO tool_calls VALUES (?)', row)\n",
            "`db.execute` writes a tool-call record",
        ),
        ("def f(db, row):\n    db.execute('INSERT INTO orders VALUES (?)', row)\n", ""),
        (
            "def f():\n    return make_server(mask_error_details=True)\n",
            "`make_server` passes a setting that applies to every tool",
        ),
    ],
    ids=[
        "decorated",
        "standard-decorator",
        "plugin-entry",
        "class",
        "dispatch",
        "nested-retry",
        "lookup",
        "getattr",
        "registry-get",
        "run-not-by-name",
        "record",
        "other-sql",
        "project-setting",
    ],
)
def test_what_a_rule_may_start_from(text: str, entry: str) -> None:
    name = "run" if "def run" in text else "f"
    assert parts_of(text)[name] == entry


def test_test_functions_are_read_for_evals() -> None:
    text = "def test_refund_is_not_replayed():\n    assert True\n"
    assert parts_of(text, "tests/test_refunds.py")["test_refund_is_not_replayed"] == (
        "it is a test (evals are read from tests)"
    )


def test_a_helper_removed_with_the_only_reference_to_a_file_links_again(
    desk: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    (desk / "order_desk/utils.py").write_text(
        "def slugify(text: str) -> str:\n    return text.lower().replace(' ', '-')\n"
    )
    slugged = RECEIPTS + (
        "\n\ndef gift_slug(utils, text: str) -> str:\n    return utils.slugify(text)\n"
    )
    edit_receipts(desk, slugged)
    first = check(desk, cache_dir)
    # ``utils.slugify`` may be order_desk/utils.py: it is parsed for that call alone.
    assert first.project is not None and "order_desk/utils.py" in first.project.modules
    edit_receipts(desk, RECEIPTS)
    second = check(desk, cache_dir)
    assert not second.from_record
    assert second.record_note.endswith(
        "order_desk/utils.py may have been parsed only for an edited function"
    )
    assert second.project is not None and "order_desk/utils.py" not in second.project.modules
    assert shown(second) == shown(first)


def test_the_reason_given_is_the_edit_not_an_edit_undone(desk: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    check(desk, cache_dir)
    edit_receipts(desk, RECEIPTS.replace('f"cart {cart_id}"', 'f"Cart {cart_id}"'))
    check(desk, cache_dir)
    edit_receipts(desk, RECEIPTS)
    (desk / "order_desk/status.py").write_text(STATUS.replace("/orders/", "/order/"))
    third = check(desk, cache_dir)
    # Since the newest record, receipts.py (put back) and status.py changed; since the
    # one before it, status.py alone.
    assert third.record_note == (
        "linked again: since a recorded run, order_desk/status.py changed in more than line "
        "numbers: `order_state` is read by the rules (a tool or a retry reaches it)"
    )


def chain_record(seeds: set[str], referrers: dict[str, str]) -> RunRecord:
    return RunRecord(
        inputs={},
        findings=[],
        suppressed=[],
        problems=[],
        files_scanned=0,
        tools=[],
        python_paths=[],
        schema_paths=[],
        fixes_attached=False,
        seeds=frozenset(seeds),
        referrers=referrers,
    )


@pytest.mark.parametrize(
    ("referrers", "still_referred", "changed", "parsed"),
    [
        # util.py <- tools.py (a seed): the edited receipts.py is not on the way.
        ({"util.py": "tools.py"}, set(), {"receipts.py"}, True),
        # util.py <- receipts.py <- tools.py, and receipts.py still refers to it.
        ({"util.py": "receipts.py", "receipts.py": "tools.py"}, {"util.py"}, set(), True),
        # ... but no longer does: the edit took away the only way the run reached it.
        ({"util.py": "receipts.py", "receipts.py": "tools.py"}, set(), set(), False),
        # util.py <- status.py, itself changed: its references may have gone too.
        ({"util.py": "status.py", "status.py": "tools.py"}, set(), {"status.py"}, False),
        # No way back to a seed.
        ({"util.py": "helpers.py", "helpers.py": "util.py"}, set(), set(), False),
    ],
    ids=["from-a-seed", "edge-kept", "edge-removed", "through-a-changed-file", "cycle"],
)
def test_a_followed_file_stays_parsed_while_its_chain_to_a_seed_holds(
    referrers: dict[str, str], still_referred: set[str], changed: set[str], parsed: bool
) -> None:
    record = chain_record({"tools.py"}, referrers)
    assert _still_parsed("util.py", record, "receipts.py", still_referred, changed) is parsed
