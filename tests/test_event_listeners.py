"""An event emitter's listeners (pyee's ``EventEmitter``, which Playwright's page objects
are) are callbacks kept in the process: removing one deletes nothing anywhere."""

from __future__ import annotations

from .conftest import ScanFiles
from .test_effects import effects_of

WAIT = """\
from langchain_core.tools import tool
from playwright.async_api import Page

PAGE: Page


@tool
async def wait_for_quiet(timeout: float) -> str:
    \"\"\"Wait until the page makes no more requests.\"\"\"
    page = PAGE
    seen = []

    def on_request(request):
        seen.append(request)

    page.on("request", on_request)
    await page.wait_for_timeout(timeout)
    page.remove_listener("request", on_request)
    return str(len(seen))
"""


def test_removing_an_event_listener_is_no_destructive_call(scan_files: ScanFiles) -> None:
    kinds = {e.kind for e in effects_of(scan_files, {"web/wait.py": WAIT}, "wait_for_quiet")}
    assert "destructive" not in kinds
