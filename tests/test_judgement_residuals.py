"""Residual judgement errors on code nobody tuned to: a tool that changes the run context
its framework hands it, and calls on objects whose origin is unknown. Each case is a small
agent project written for the test; the assertions are the verdict a user reads in the
report (the tool's risk) and the findings it gets."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles, tool_verdicts

# -- a tool named for a change that makes it in the run context is a local write ----------

AIRLINE = {
    "tools.py": textwrap.dedent(
        '''
        from agents import RunContextWrapper, function_tool


        class Booking:
            seat: str | None = None
            status: str | None = None


        @function_tool
        async def update_seat(context: RunContextWrapper[Booking], seat: str) -> str:
            """Move the passenger to another seat."""
            context.context.seat = seat
            return f"seat {seat}"


        @function_tool
        async def cancel_booking(context: RunContextWrapper[Booking]) -> str:
            """Cancel the booking."""
            booking = context.context
            booking.status = "cancelled"
            return "cancelled"


        @function_tool
        async def get_booking_status(context: RunContextWrapper[Booking], code: str) -> str:
            """Look up the booking status."""
            context.context.status = context.context.status or "confirmed"
            return context.context.status
        '''
    )
}


def test_tool_named_for_a_change_to_its_run_context_is_not_read(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, AIRLINE)
    for name in ("update_seat", "cancel_booking"):
        risk, codes = verdicts[name]
        assert risk == "write", name
        # the state lives in the process: no remote write, no key to ask for
        assert "AG201" not in codes, name


def test_lookup_that_notes_what_it_found_in_the_context_stays_read(scan_files: ScanFiles) -> None:
    risk, codes = tool_verdicts(scan_files, AIRLINE)["get_booking_status"]
    assert risk == "read"
    assert not codes & {"AG101", "AG102", "AG201"}
