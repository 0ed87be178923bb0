"""A resource built lazily on first use (``if self.session is None: ... self.session =
...``) is the object's set-up, made once: a tool that reaches it through a getter does not
make its effects, and a retry does not repeat them."""

from __future__ import annotations

from .conftest import ScanFiles
from .test_effects import effects_of

BROWSER = """\
import subprocess

import httpx
from langchain_core.tools import tool


class Browser:
    def __init__(self):
        self.process = None
        self.client = httpx.Client()

    def _launch(self):
        self.process = subprocess.Popen(["chromium", "--headless"])
        return self.process

    def ensure(self):
        if self.process is None:
            return self._launch()
        return self.process

    def page(self, url: str) -> str:
        self.ensure()
        return self.client.get(url).text

    def submit(self, url: str, form: dict) -> str:
        if not self.process:
            self._launch()
        return self.client.post(url, data=form).text


BROWSER_INSTANCE = Browser()


@tool
def read_page(url: str) -> str:
    \"\"\"Read a page.\"\"\"
    return BROWSER_INSTANCE.page(url)


@tool
def submit_form(url: str, form: dict) -> str:
    \"\"\"Submit a form.\"\"\"
    return BROWSER_INSTANCE.submit(url, form)
"""


def test_a_lazily_launched_process_is_not_the_effect_of_a_tool_using_it(
    scan_files: ScanFiles,
) -> None:
    files = {"web/tools.py": BROWSER}
    assert {e.kind for e in effects_of(scan_files, files, "read_page")} <= {"read"}
    assert {e.kind for e in effects_of(scan_files, files, "submit_form")} == {"network_write"}
