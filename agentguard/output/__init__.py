"""Output formats. Each module renders a :class:`ScanResult` to a stream."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult


@dataclass(frozen=True)
class RenderOptions:
    color: bool = False
    statistics: bool = False
    show_source: bool = True
    width: int | None = None
    quiet: bool = False  # findings only: no summary line


Renderer = Callable[["ScanResult", TextIO, RenderOptions], None]

# format name -> module under agentguard.output exposing render(result, stream, options)
# The formats that print each fix's edits (they build them with LibCST).
EDIT_FORMATS = frozenset({"json", "sarif"})

FORMAT_MODULES: dict[str, str] = {
    "text": "text",
    "concise": "concise",
    "json": "json_format",
    "sarif": "sarif",
    "github": "github",
    "markdown": "markdown",
    "junit": "junit",
}


def renderer(name: str) -> Renderer:
    module = importlib.import_module(f"agentguard.output.{FORMAT_MODULES[name]}")
    render: Renderer = module.render
    return render
