"""A retry is a loop that can run the call again: a handler that leaves the loop (``break``,
``return``, ``raise``) is not a retry, one that goes on (swallows, sleeps, ``continue``) is."""

from __future__ import annotations

import textwrap

from .conftest import ScanFiles

# An agent that tries its fallback models in turn and stops at the first error: the POST that
# failed is never sent again, so nothing here is a retry (AG902/AG903 must stay quiet).
FALLBACK_AGENT = textwrap.dedent(
    '''
    import logging

    import requests
    from langchain_core.tools import tool

    log = logging.getLogger(__name__)
    MODELS = ["small", "large"]


    @tool
    def draft_reply(ticket_id: str, text: str) -> str:
        """Post a draft reply on a ticket."""
        answer = ""
        for attempt in range(3):
            try:
                answer = requests.post(
                    f"https://desk.example/tickets/{ticket_id}/drafts", json={"text": text}
                ).text
                break
            except Exception:
                log.warning("draft failed on attempt %s", attempt)
                {leave}
        return answer
    '''
)


def _retry_codes(scan_files: ScanFiles, leave: str) -> set[str]:
    source = FALLBACK_AGENT.replace("{leave}", leave)
    result = scan_files({"agent.py": source}, select=("AG902", "AG903"))
    return {f.code for f in result.findings}


def test_handler_that_breaks_out_of_the_loop_is_no_retry(scan_files: ScanFiles) -> None:
    assert _retry_codes(scan_files, "break") == set()


def test_handler_that_returns_or_raises_is_no_retry(scan_files: ScanFiles) -> None:
    assert _retry_codes(scan_files, 'return "could not post the draft"') == set()
    assert _retry_codes(scan_files, "raise") == set()


def test_handler_that_swallows_or_continues_is_a_retry(scan_files: ScanFiles) -> None:
    """The same loop whose handler lets it go round again sends the POST again."""
    assert _retry_codes(scan_files, "pass") == {"AG902", "AG903"}
    assert _retry_codes(scan_files, "continue") == {"AG902", "AG903"}


def test_break_inside_a_loop_of_the_handler_still_retries(scan_files: ScanFiles) -> None:
    """A ``break`` that leaves a loop nested in the handler leaves the retry loop going."""
    nested = "for _ in range(2):\n                    break"
    assert _retry_codes(scan_files, nested) == {"AG902", "AG903"}


def test_timeout_handler_that_breaks_is_not_reported_as_a_retry(scan_files: ScanFiles) -> None:
    """AG401 reads the same: a timeout handler that leaves the loop does not send again."""
    source = textwrap.dedent(
        '''
        import requests
        from langchain_core.tools import tool


        @tool
        def open_ticket(title: str) -> str:
            """Open a support ticket."""
            for attempt in range(3):
                try:
                    return requests.post(
                        "https://desk.example/tickets", json={"title": title}, timeout=10
                    ).text
                except requests.Timeout:
                    {leave}
            return "done"
        '''
    )
    quiet = scan_files({"agent.py": source.replace("{leave}", "break")}, select=("AG401",))
    assert not any("retries it" in f.message for f in quiet.findings)
    loud = scan_files({"agent.py": source.replace("{leave}", "continue")}, select=("AG401",))
    assert any("retries it" in f.message for f in loud.findings)
