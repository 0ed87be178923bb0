"""The checklist report as JSON (the same data the Markdown and HTML pages show), described by
``agentguard/data/report.schema.json``."""

from __future__ import annotations

import json
from typing import TextIO

from agentguard.report.model import Report


def render(report: Report, stream: TextIO) -> None:
    json.dump(report.to_dict(), stream, indent=2)
    stream.write("\n")
