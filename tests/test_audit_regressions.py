"""Patterns seen in real agent projects that the analyser got wrong (code written for these tests)."""

from __future__ import annotations

from tests.conftest import ScanFiles


def codes(result: object, code: str) -> list[tuple[str, int, str | None]]:
    return [
        (f.location.path, f.location.span.line, f.tool)
        for f in result.findings  # type: ignore[attr-defined]
        if f.code == code
    ]


def test_classmethod_constructing_cls_does_not_crash(scan_files: ScanFiles) -> None:
    result = scan_files(
        {
            "app/store.py": (
                "import sqlite3\n"
                "from pydantic_ai import Agent, RunContext\n\n"
                "class Store:\n"
                "    def __init__(self, con):\n"
                "        self.con = con\n\n"
                "    @classmethod\n"
                "    def open(cls, path: str) -> 'Store':\n"
                "        return cls(sqlite3.connect(path))\n\n"
                "agent = Agent('openai:gpt-4o', deps_type=Store)\n\n"
                "@agent.tool\n"
                "def count_notes(ctx: RunContext[Store]) -> int:\n"
                "    return 3\n"
            )
        }
    )
    assert not result.problems
    assert [t.name for t in result.project.tools] == ["count_notes"]
