"""Human output: location, code, message, the offending lines, the evidence chain."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from agentguard.diagnostics import PARTLY_READ, Finding, Location
from agentguard.output import RenderOptions
from agentguard.output.columns import ColumnMapper
from agentguard.output.rule_docs import rule_doc_url

if TYPE_CHECKING:
    from agentguard.engine.scan_result import ScanResult

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _source_lines(root: Path, finding: Finding, cache: dict[str, list[str]]) -> list[str]:
    if finding.path not in cache:
        try:
            text = (root / finding.path).read_text(encoding="utf-8", errors="replace")
            cache[finding.path] = text.splitlines()
        except OSError:
            cache[finding.path] = []
    return cache[finding.path]


def render(result: ScanResult, stream: TextIO, options: RenderOptions) -> None:
    console = Console(
        file=stream,
        force_terminal=options.color,
        no_color=not options.color,
        highlight=False,
        width=options.width or (None if options.color else 120),
        soft_wrap=not options.color,
    )
    cache: dict[str, list[str]] = {}
    paths = result.paths  # every path relative to the repository root
    columns = ColumnMapper(paths.base)
    shown = [(scanned, paths.finding(scanned)) for scanned in result.findings]
    sharing = _sharing([finding for _, finding in shown])
    for scanned, finding in [] if options.statistics else shown:
        style = SEVERITY_STYLE[finding.severity.value]
        where = (
            f"{finding.path}:{finding.span.line}:"
            f"{columns.column(finding.path, finding.span.line, finding.span.column)}"
        )
        _header(
            console,
            f"[bold]{escape(where)}[/]: [{style}]{finding.code}[/] "
            f"{escape(finding.message)} [dim]\\[{finding.name}, {finding.severity.value}, "
            f"confidence {finding.confidence.value}][/]",
        )
        if options.show_source:
            lines = _source_lines(paths.base, finding, cache)
            start, end = finding.span.line, min(finding.span.end_line, finding.span.line + 3)
            for number in range(start, end + 1):
                if 0 < number <= len(lines):
                    console.print(
                        f"  [dim]{number:>5} |[/] {escape(lines[number - 1])}",
                        no_wrap=True,
                        overflow="ellipsis",
                        crop=True,
                    )
            if start == end and 0 < start <= len(lines):
                span = finding.span
                first = columns.column(finding.path, span.line, span.column)
                last = columns.column(finding.path, span.line, span.end_column)
                pad = " " * (first - 1)
                width = max(1, last - first)
                # Cut where the code line above is cut, never wrapped under it.
                console.print(
                    f"  [dim]      |[/] {pad}[{style}]{'^' * width}[/]",
                    no_wrap=True,
                    overflow="crop",
                    crop=True,
                )
        for step in finding.evidence:
            where = f" ({step.location})" if step.location else ""
            note(console, "evidence", f"{escape(step.label)}[dim]{escape(where)}[/]")
        if finding.related:
            cause = finding.related[0]
            others = [f for f in sharing.get((finding.code, cause), []) if f is not finding]
            if others:
                tools = sorted({f.tool for f in others if f.tool})
                named = f" (tools {', '.join(f'`{t}`' for t in tools)})" if tools else ""
                note(
                    console,
                    f"one cause shared with {_plural(len(others), 'other finding')}{escape(named)}",
                    f"[dim]{escape(str(cause))}[/]",
                )
            else:
                note(console, "related", f"[dim]{escape(str(cause))}[/]")
        offered = finding.fix or result.fix_offer(scanned)
        if offered is not None:
            note(
                console,
                f"fix available ({offered.applicability.value})",
                escape(offered.description),
            )
        # A pip user has no docs/ folder: name the installed command, and the published
        # page only when its base URL is configured.
        url = rule_doc_url(finding.code)
        note(
            console,
            "docs",
            f"[dim]agentguard rule {finding.code}" + (f" ({escape(url)})" if url else "") + "[/]",
        )
        console.print()
    for line, style in closing_lines(result, options):
        console.print(f"[{style}]{escape(line)}[/]" if style else escape(line))


def closing_lines(result: ScanResult, options: RenderOptions) -> list[tuple[str, str]]:
    """What follows the findings, each line with its style: the files skipped, the count of
    each rule's findings (``--statistics``, as ruff prints them: ``[*]`` marks a rule with
    a fix), and the summary (left out by ``--quiet``)."""
    lines: list[tuple[str, str]] = []
    for problem in result.paths.problems(result.problems):
        if not problem.reported:
            done = "partly read" if problem.kind == PARTLY_READ else "skipped"
            lines.append((f"{done} {problem.path}: {problem.reason}", "yellow"))
    if options.statistics:
        counts = Counter(f.code for f in result.findings)
        names = {f.code: f.name for f in result.findings}
        fixable = {f.code for f in result.findings if (f.fix or result.fix_offer(f)) is not None}
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            marker = "[*] " if code in fixable else "    "
            lines.append((f"{count:>5}  {code}  {marker}{names[code]}", ""))
    if options.quiet:
        return lines
    tools_with_findings = len({f.tool for f in result.findings if f.tool})
    total = len(result.findings)
    summary = (
        f"{_plural(total, 'finding')} in {_plural(tools_with_findings, 'tool')}, "
        f"{_plural(result.files_scanned, 'file')}"
    )
    extras = [f"{_plural(result.tools, 'tool')} found"]
    if result.suppressed:
        extras.append(f"{len(result.suppressed)} suppressed")
    skipped = sum(1 for p in result.problems if not p.reported and p.kind != PARTLY_READ)
    if skipped:
        extras.append(f"{skipped} skipped")
    partly = sum(1 for p in result.problems if p.kind == PARTLY_READ)
    if partly:
        extras.append(f"{partly} partly read")
    summary += f" ({', '.join(extras)})"
    lines.append((summary, "bold" if total else "green"))
    if not result.tools and result.files_scanned:
        # a zero is never silent: nothing was checked for replay safety
        lines.append(
            (
                f"warning: 0 tools found in {_plural(result.files_scanned, 'file')}: "
                "no tool was checked (AG003 names each place tools are handed to a model "
                "or an agent that no tool was traced from)",
                "yellow",
            )
        )
    return lines


def _header(console: Console, markup: str) -> None:
    """A finding's first line; in a terminal, the rest of it wraps indented under it, so
    that each finding starts at the first column and nothing else does."""
    if console.soft_wrap:
        console.print(markup)
        return
    lines = Text.from_markup(markup).wrap(console, max(20, console.width - 2))
    for number, line in enumerate(lines):
        console.print(Text("  ") + line if number else line)


# A label this long takes its own width from the text: its text wraps under the label instead.
HANGING_LABEL = 24


def note(console: Console, label: str, body: str) -> None:
    """``  = label: body`` (``body`` in markup). In a terminal, a body too long for the line
    wraps under itself, indented, never back at the first column."""
    if console.soft_wrap:  # not a terminal: one line, whatever its length
        console.print(f"  [dim]= {label}:[/] {body}")
        return
    head = Text.from_markup(f"  [dim]= {label}:[/]")
    if head.cell_len > HANGING_LABEL:
        console.print(Padding(Text.from_markup(f"[dim]= {label}:[/] {body}"), (0, 0, 0, 2)))
        return
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row(head, Text.from_markup(body))
    console.print(grid)


def _sharing(findings: list[Finding]) -> dict[tuple[str, Location], list[Finding]]:
    """Findings of one rule resting on the same cause (their first related location): a
    helper or handler shared by several tools gives each tool its own finding."""
    groups: dict[tuple[str, Location], list[Finding]] = {}
    for finding in findings:
        if finding.related:
            groups.setdefault((finding.code, finding.related[0]), []).append(finding)
    return groups


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
