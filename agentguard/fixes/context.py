"""What a rule's edit builder reads: the finding's file, its lazily parsed LibCST tree, and
what builders derive from the whole project once per run.

This module does not import LibCST: rule modules name these types while text output, which
never builds edits, imports every rule. The tree is parsed on first use, so LibCST parses
only the files being fixed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from agentguard.fixes.text import char_column

if TYPE_CHECKING:
    import libcst as cst

    from agentguard.facts.module_facts import ModuleFacts
    from agentguard.fixes.cst_tools import ParsedFile
    from agentguard.project.project_model import ProjectModel
    from agentguard.project.tool_facts import ToolFacts

# Where the names the fixes add (guarded, current_call, Runtime...) are imported from.
RUNTIME_MODULE = "agentguard.runtime"
# The width the fixes lay new code out for when the project configures none (black's, ruff's).
DEFAULT_LINE_LENGTH = 88
# Where a formatter's line length is read, in ruff's order of precedence within a folder.
FORMATTER_CONFIGS = (
    (".ruff.toml", ("line-length",)),
    ("ruff.toml", ("line-length",)),
    ("pyproject.toml", ("tool", "ruff", "line-length")),
    ("pyproject.toml", ("tool", "black", "line-length")),
)


def formatter_line_length(root: Path) -> int:
    """The project's line length: ruff's or black's setting in the closest folder from
    ``root`` up to the repository's top that sets one; 88 otherwise."""
    for folder in (root, *root.parents):
        for name, keys in FORMATTER_CONFIGS:
            value: Any = _read_toml(folder / name)
            for key in keys:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        if (folder / ".git").exists():
            break
    return DEFAULT_LINE_LENGTH


def _read_toml(path: Path) -> dict[str, Any]:
    """The file's TOML, or nothing: a formatter's config that does not parse is not ours to
    report, and the fixes fall back to the default width."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


Derived = TypeVar("Derived")


class ProjectFixFacts:
    """What builders derive from the whole project, once per run rather than per fix."""

    def __init__(self, project: ProjectModel, root: Path | None = None) -> None:
        self.project = project
        self.root = root
        self._derived: dict[Callable[[ProjectModel], Any], Any] = {}

    @cached_property
    def first_party(self) -> frozenset[str]:
        """Top-level package names of the project (their imports form the last group)."""
        return frozenset(m.module.split(".", 1)[0] for m in self.project.modules.values())

    @cached_property
    def line_length(self) -> int:
        """The width new code is laid out for: the project's formatter setting."""
        return formatter_line_length(self.root.resolve()) if self.root else DEFAULT_LINE_LENGTH

    def once(self, derive: Callable[[ProjectModel], Derived]) -> Derived:
        """``derive(project)``, computed on the first call of this run and reused after."""
        if derive not in self._derived:
            self._derived[derive] = derive(self.project)
        return cast("Derived", self._derived[derive])


@dataclass
class FixContext:
    """The finding's file (text, facts, lazy LibCST tree) and the project's fix facts."""

    path: str
    text: str
    shared: ProjectFixFacts
    _parsed: ParsedFile | None = field(default=None, repr=False)

    @property
    def project(self) -> ProjectModel:
        return self.shared.project

    @property
    def parsed(self) -> ParsedFile:
        if self._parsed is None:
            from agentguard.fixes.cst_tools import ParsedFile

            self._parsed = ParsedFile(self.text)
        return self._parsed

    @property
    def first_party(self) -> frozenset[str]:
        return self.shared.first_party

    @property
    def line_length(self) -> int:
        return self.shared.line_length

    @property
    def facts(self) -> ModuleFacts | None:
        return self.project.modules.get(self.path)

    def char_col(self, line: int, byte_column: int) -> int:
        lines = self.parsed.lines
        return char_column(lines[line - 1], byte_column) if 0 < line <= len(lines) else byte_column

    def node_at(self, line: int, byte_column: int, kinds: tuple[type, ...]) -> cst.CSTNode | None:
        """The outermost node of one of ``kinds`` that starts where an ``ast`` span starts."""
        for node in self.parsed.nodes_at(line, self.char_col(line, byte_column)):
            if isinstance(node, kinds):
                return node
        return None

    def tool_function(self, tool: ToolFacts) -> cst.FunctionDef | None:
        if not tool.functions:
            return None
        entry = self.project.functions.get(tool.functions[0])
        if entry is None or entry[1].path != self.path:
            return None
        fn = entry[0]
        return self.parsed.function_at(fn.name, fn.name_span.line)
