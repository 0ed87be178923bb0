from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.engine.scan_result import ScanResult
from agentguard.project.tool_facts import ToolFacts
from agentguard.report.model import build_report

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

ScanFiles = Callable[..., ScanResult]


def write_project(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def line_of(source: str, fragment: str) -> int:
    """The 1-based number of the first line of ``source`` that contains ``fragment``."""
    return next(i for i, line in enumerate(source.splitlines(), 1) if fragment in line)


def sqlite_mcp_server(name: str, tools: Mapping[str, str], dispatch: str) -> str:
    """``server.py``: a low-level MCP server ``name`` listing ``tools`` (name -> description)
    whose ``call_tool`` body is ``dispatch``; every branch can share ``_run(sql, *params)``,
    which runs a statement on a SQLite connection and commits."""
    listed = "".join(
        f'        Tool(name="{tool}", description="{text}", inputSchema={{}}),\n'
        for tool, text in tools.items()
    )
    return (
        "import sqlite3\n\n"
        "from mcp.server.lowlevel import Server\n"
        "from mcp.types import TextContent, Tool\n\n"
        f'server = Server("{name}")\n'
        f'conn = sqlite3.connect("{name}.db")\n\n\n'
        "def _run(sql: str, *params: object) -> list[tuple]:\n"
        "    rows = conn.execute(sql, params).fetchall()\n"
        "    conn.commit()\n"
        "    return rows\n\n\n"
        "@server.list_tools()\n"
        "async def list_tools() -> list[Tool]:\n"
        f"    return [\n{listed}    ]\n\n\n"
        "@server.call_tool()\n"
        "async def call_tool(name: str, arguments: dict) -> list[TextContent]:\n"
        + textwrap.indent(textwrap.dedent(dispatch).strip("\n"), "    ")
        + "\n"
    )


def tool_module(
    imports: str, prelude: str, body: str, name: str = "act", is_async: bool = False
) -> dict[str, str]:
    """A module ``agent.py`` with one LangChain tool ``name(value)`` whose body is ``body``,
    after ``imports`` and module-level ``prelude``."""
    define = "async def" if is_async else "def"
    source = (
        "from langchain_core.tools import tool\n"
        + textwrap.dedent(imports).strip()
        + "\n\n"
        + textwrap.dedent(prelude).strip()
        + f"\n\n@tool\n{define} {name}(value: str) -> object:\n"
        + '    """Do the thing."""\n'
        + textwrap.indent(textwrap.dedent(body).strip(), "    ")
        + "\n"
    )
    return {"agent.py": source}


@pytest.fixture
def scan_files(tmp_path: Path) -> ScanFiles:
    """Write files into a fresh project folder and scan it."""

    def run(files: Mapping[str, str], select: tuple[str, ...] = (), **config: object) -> ScanResult:
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        (project / ".git").mkdir(exist_ok=True)  # stop config lookup here
        write_project(project, files)
        cfg = load_config([project])
        for key, value in config.items():
            setattr(cfg, key, value)
        return scan([project], cfg, select=list(select))

    return run


def only_tool(scan_files: ScanFiles, files: Mapping[str, str]) -> tuple[ToolFacts, ScanResult]:
    """The one tool a project of ``files`` has, and the scan that found it."""
    result = scan_files(files)
    (tool,) = result.project.tools
    return tool, result


def kinds_and_codes(
    scan_files: ScanFiles, files: Mapping[str, str], tool: str = "act"
) -> tuple[list[str], list[str]]:
    """The kinds of the effects of the tool named ``tool``, and the codes of the scan's
    findings, each sorted."""
    result = scan_files(files)
    (found,) = [t for t in result.project.tools if t.name == tool]
    return sorted(e.kind for e in found.effects), sorted({f.code for f in result.findings})


def tool_verdicts(scan_files: ScanFiles, files: dict[str, str]) -> dict[str, tuple[str, set[str]]]:
    """Each tool's reported risk and the codes of its findings, by tool name."""
    result = scan_files(files)
    report = build_report(result)
    codes: dict[str, set[str]] = {}
    for finding in result.findings:
        if finding.tool:
            codes.setdefault(finding.tool, set()).add(finding.code)
    return {row.name: (row.risk.value, codes.get(row.name, set())) for row in report.tools}


@pytest.fixture(autouse=True)
def user_cache_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every cache a test's check keeps by default (the user's cache folder) is in a
    temporary folder: no test reads or writes the real one, or another session's."""
    from agentguard.engine.fact_cache import CACHE_ROOT_ENV

    monkeypatch.setenv(CACHE_ROOT_ENV, str(tmp_path_factory.getbasetemp() / "user-cache"))


@pytest.fixture
def shop_agent(tmp_path: Path) -> Path:
    """A private copy of the shop-agent fixture (no cache folder), to change and rescan."""
    from agentguard.engine.fact_cache import CACHE_DIR_NAME

    target = tmp_path / "shop-agent"
    shutil.copytree(FIXTURES / "shop-agent", target, ignore=shutil.ignore_patterns(CACHE_DIR_NAME))
    (target / ".git").mkdir(exist_ok=True)
    return target
