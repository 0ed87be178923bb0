"""`agentguard ledger`: inspect the runtime ledger and resolve uncertain calls by hand.

Mounted by the main CLI with ``app.add_typer(ledger_app, name="ledger")``.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit, urlunsplit

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentguard.runtime.ledger import Ledger, LedgerEntry

ledger_app = typer.Typer(
    name="ledger",
    help="Inspect the agentguard runtime ledger: uncertain calls, a call's history, resolution.",
    no_args_is_help=True,
)

DEFAULT_LEDGER_URL = "sqlite:///agentguard-ledger.db"


class OutputFormat(str, Enum):
    TABLE = "table"
    JSON = "json"


class Resolution(str, Enum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"


LedgerUrl = Annotated[
    str,
    typer.Option(
        "--ledger",
        "-l",
        envvar="AGENTGUARD_LEDGER",
        help="Ledger URL: sqlite:///PATH or postgresql://...",
    ),
]
Format = Annotated[OutputFormat, typer.Option("--format", "-f", help="table or json")]

_STATUS_STYLE = {
    "succeeded": "green",
    "failed": "red",
    "uncertain": "bold yellow",
    "started": "cyan",
    "planned": "dim",
    "approved": "blue",
}


def _open(url: str, *, read_only: bool = False) -> Ledger:
    """The ledger at ``url``. ``read_only`` (list, show, find): a PostgreSQL ledger that is
    not there is an error, as a missing SQLite file is, and nothing is written to it."""
    # The runtime is imported by the ledger commands only: `check` never needs it.
    from agentguard.runtime.ledger import LedgerMissing, open_ledger

    if url.startswith("sqlite:///"):
        # Opening a SQLite file creates it: run from the wrong folder during an incident, an
        # empty new ledger would say that nothing is uncertain.
        path = Path(url[len("sqlite:///") :])
        if not path.is_file():
            typer.echo(
                f"error: no ledger at {path}"
                + (f" (in {Path.cwd()})" if not path.is_absolute() else "")
                + "; pass --ledger sqlite:///PATH of the agent's ledger file",
                err=True,
            )
            raise typer.Exit(2)
    try:
        return open_ledger(url, read_only=read_only)
    except LedgerMissing as exc:
        form = "sqlite:///PATH" if url.startswith("sqlite:") else "postgresql://...?schema=NAME"
        typer.echo(f"error: {exc}; pass --ledger {form} of the agent's ledger", err=True)
        raise typer.Exit(2) from exc
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--ledger") from exc
    except Exception as exc:
        shown = _without_password(url)
        detail = str(exc).replace(url, shown)
        typer.echo(f"error: cannot open ledger {shown}: {detail}", err=True)
        raise typer.Exit(2) from exc


def _without_password(url: str) -> str:
    """``url`` with its password masked: error messages end up in CI logs and tickets."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def _console(min_width: int = 0) -> Console:
    """A console at least ``min_width`` wide: a table that needs more than the terminal (or
    the 80 columns of a pipe) keeps one line per row, which the terminal may wrap, rather than
    folding a call id over several lines."""
    width = Console().width
    return Console(soft_wrap=False, width=max(width, min_width))


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, sort_keys=True))


_ENTRY_COLUMNS = ("call_id", "tool", "status", "error", "attempts", "run", "started", "key")


def _entry_cells(entry: LedgerEntry) -> list[str]:
    return [
        entry.call_id,
        entry.tool_name,
        entry.status.value,
        entry.error_code or "",
        str(entry.attempts),
        entry.run_id,
        entry.to_dict()["started_at"] or "",
        entry.idempotency_key,
    ]


def _entries_table(rows: list[list[str]], title: str) -> tuple[Table, int]:
    """The table of ``rows`` (cells of ``_entry_cells``) and the width it needs unfolded."""
    table = Table(title=title, show_lines=False)
    for column in _ENTRY_COLUMNS:
        table.add_column(column, no_wrap=True, overflow="ignore")
    widths = [len(column) for column in _ENTRY_COLUMNS]
    for cells in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, cells, strict=True)]
        style = _STATUS_STYLE.get(cells[2], "")
        table.add_row(*cells[:2], f"[{style}]{cells[2]}[/]" if style else cells[2], *cells[3:])
    # each cell has a space of padding either side, and a border between columns and at the ends
    return table, sum(widths) + 3 * len(widths) + 1


def _emit_entries(entries: list[LedgerEntry], output: OutputFormat, title: str) -> None:
    if output is OutputFormat.JSON:
        _print_json([entry.to_dict() for entry in entries])
        return
    if not entries:
        _console().print(f"{title}: no entries")
        return
    table, width = _entries_table([_entry_cells(entry) for entry in entries], title)
    _console(width).print(table)


@ledger_app.command("list")
def list_entries(
    ledger_url: LedgerUrl = DEFAULT_LEDGER_URL,
    run: Annotated[str | None, typer.Option("--run", help="only this run id")] = None,
    tool: Annotated[str | None, typer.Option("--tool", help="only this tool")] = None,
    status: Annotated[
        list[str] | None, typer.Option("--status", help="only these statuses (repeatable)")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
    output: Format = OutputFormat.TABLE,
) -> None:
    """List ledger entries, e.g. `--status uncertain` for calls that need checking."""
    statuses = None
    if status:
        try:
            from agentguard.runtime.ledger import Status

            statuses = [Status(value) for value in status]
        except ValueError as exc:
            valid = ", ".join(s.value for s in Status)
            raise typer.BadParameter(f"{exc}; choose from {valid}", param_hint="--status") from exc
    with _open(ledger_url, read_only=True) as ledger:
        entries = ledger.entries(run_id=run, tool_name=tool, status=statuses, limit=limit)
        _emit_entries(entries, output, "ledger entries")


@ledger_app.command("show")
def show(
    call_id: Annotated[str, typer.Argument(help="the call id from an observation or `list`")],
    ledger_url: LedgerUrl = DEFAULT_LEDGER_URL,
    output: Format = OutputFormat.TABLE,
) -> None:
    """Show one call and every transition it went through."""
    with _open(ledger_url, read_only=True) as ledger:
        entry = ledger.get(call_id)
        if entry is None:
            typer.echo(f"error: no ledger entry with call id {call_id}", err=True)
            raise typer.Exit(1)
        events = ledger.events(call_id)
    if output is OutputFormat.JSON:
        _print_json({"entry": entry.to_dict(), "events": [event.to_dict() for event in events]})
        return
    console = _console()
    details = Table(title=f"call {call_id}", show_header=False)
    details.add_column("field", style="bold")
    details.add_column("value", overflow="fold")
    for name, value in entry.to_dict().items():
        if isinstance(value, (dict, list)):
            value = json.dumps(value, sort_keys=True)
        details.add_row(name, "" if value is None else str(value))
    console.print(details)
    history = Table(title="transitions")
    for column in ("at", "from", "to", "actor", "detail"):
        history.add_column(column, overflow="fold")
    for event in events:
        data = event.to_dict()
        history.add_row(
            data["at"], event.from_status or "", event.to_status, event.actor, event.detail or ""
        )
    console.print(history)


@ledger_app.command("find")
def find(
    input_hash: Annotated[
        str | None, typer.Option("--input-hash", help="calls with exactly these arguments")
    ] = None,
    key: Annotated[
        str | None, typer.Option("--key", help="calls with this idempotency key")
    ] = None,
    ledger_url: LedgerUrl = DEFAULT_LEDGER_URL,
    output: Format = OutputFormat.TABLE,
) -> None:
    """Find calls by input hash or idempotency key: has the same input already run?"""
    if input_hash is None and key is None:
        raise typer.BadParameter("give --input-hash or --key")
    with _open(ledger_url, read_only=True) as ledger:
        entries = ledger.entries(input_hash=input_hash, idempotency_key=key)
        _emit_entries(entries, output, "matching calls")


def _by_hand(ledger_url: str, record: Callable[[Ledger], LedgerEntry]) -> LedgerEntry:
    """A person's decision recorded in the ledger; a refusal is a one-line error, exit 1."""
    with _open(ledger_url) as ledger:
        try:
            return record(ledger)
        except (LookupError, ValueError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc


@ledger_app.command("approve")
def approve(
    call_id: Annotated[str, typer.Argument(help="the call waiting for approval")],
    by: Annotated[str, typer.Option("--by", help="who approves it (recorded)")],
    note: Annotated[str | None, typer.Option("--note", help="why (recorded)")] = None,
    ledger_url: LedgerUrl = DEFAULT_LEDGER_URL,
    output: Format = OutputFormat.TABLE,
) -> None:
    """Approve a call that waits for approval; the agent's next call with its key runs it."""
    from agentguard.runtime.core import approve_call

    entry = _by_hand(ledger_url, lambda ledger: approve_call(ledger, call_id, by=by, note=note))
    if output is OutputFormat.JSON:
        _print_json(entry.to_dict())
    else:
        _console().print(f"{call_id} ({entry.tool_name}) approved by [bold]{by}[/]")


@ledger_app.command("resolve")
def resolve(
    call_id: Annotated[str, typer.Argument(help="the uncertain call")],
    outcome: Annotated[Resolution, typer.Option("--as", help="what a person established happened")],
    note: Annotated[str, typer.Option("--note", help="how it was established (recorded)")],
    actor: Annotated[str, typer.Option("--actor", help="who resolved it")] = "human",
    ledger_url: LedgerUrl = DEFAULT_LEDGER_URL,
    output: Format = OutputFormat.TABLE,
) -> None:
    """Record a person's resolution of an uncertain call as succeeded or failed."""
    from agentguard.runtime.core import resolve_call

    entry = _by_hand(
        ledger_url, lambda ledger: resolve_call(ledger, call_id, outcome.value, note, actor=actor)
    )
    if output is OutputFormat.JSON:
        _print_json(entry.to_dict())
    else:
        _console().print(f"{call_id} resolved as [bold]{entry.status.value}[/] by {actor}: {note}")
