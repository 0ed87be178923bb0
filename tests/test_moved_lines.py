"""A recorded run answers for files whose facts changed only in line numbers, and only there."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine import FactOptions, ScanResult, scan
from agentguard.parallel import source_facts
from agentguard.prefilter import Prefilter
from agentguard.python.facts import ModuleFacts, line_layout
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
        "linked again: since the newest recorded run, "
        "order_desk/status.py changed in more than line numbers"
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
    status.write_text(
        STATUS + "\n\ndef order_link(order_id: int) -> str:\n    return str(order_id)\n"
    )
    relinked = check(desk, cache_dir)
    assert not relinked.from_record
    # The files parsed last time, unchanged, were not searched again; the ones left out
    # were (their bytes were not recorded).
    assert sorted(searched) == sorted(["order_desk/status.py", *left_out])
    assert "order_desk/tools.py" not in searched
    monkeypatch.undo()
    assert shown(relinked) == shown(check(desk, None))
