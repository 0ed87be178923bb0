"""Forms found by auditing agent-framework toolkits nobody here labelled: Agno ``Toolkit``
subclasses (the tool list built with ``append`` under option flags), a client an
attribute holds because a method of the class built it, pathlib writes on a path a
helper handed back in a tuple, and report rows of two tools with one name."""

from __future__ import annotations

from agentguard.report.model import build_report

from .conftest import ScanFiles, only_tool
from .test_tool_discovery import discover, line_of

NOTES_KIT = """\
from pathlib import Path
from typing import Any, List, Tuple

from agno.tools import Toolkit


class NotesTools(Toolkit):
    def __init__(self, folder: str, allow_delete: bool = False, **kwargs):
        self.folder = Path(folder)
        tools: List[Any] = [self.read_note]
        if allow_delete:
            tools.append(self.remove_note)
        tools.extend([self.save_note])
        super().__init__(name="notes", tools=tools, **kwargs)

    def _locate(self, name: str) -> Tuple[bool, Path]:
        target = (self.folder / name).resolve()
        return target.is_relative_to(self.folder), target

    def read_note(self, name: str) -> str:
        \"\"\"Read a note.\"\"\"
        ok, path = self._locate(name)
        return path.read_text() if ok else "not allowed"

    def save_note(self, name: str, text: str) -> str:
        \"\"\"Save a note.\"\"\"
        ok, path = self._locate(name)
        if not ok:
            return "not allowed"
        path.write_text(text)
        return "saved"

    def remove_note(self, name: str) -> str:
        \"\"\"Delete a note.\"\"\"
        ok, path = self._locate(name)
        if ok:
            path.unlink()
        return "removed"

    def helper_never_listed(self) -> None:
        self.folder.mkdir(exist_ok=True)
"""


def test_agno_toolkit_methods_appended_to_the_tool_list_are_tools() -> None:
    tools = discover({"notes/kit.py": NOTES_KIT})
    assert {t.name: (t.framework, t.anchor.span.line) for t in tools} == {
        "read_note": ("agno", line_of(NOTES_KIT, "def read_note")),
        "save_note": ("agno", line_of(NOTES_KIT, "def save_note")),
        "remove_note": ("agno", line_of(NOTES_KIT, "def remove_note")),
    }


def test_path_writes_on_a_path_a_helper_returned_are_judged() -> None:
    tools = {t.name: t for t in discover({"notes/kit.py": NOTES_KIT})}
    assert [e.kind for e in tools["read_note"].effects] == []
    assert [(e.kind, e.sink) for e in tools["save_note"].effects] == [("write", "path.write_text")]
    assert [(e.kind, e.sink) for e in tools["remove_note"].effects] == [
        ("destructive", "path.unlink")
    ]


AGNO_DECORATED = """\
import httpx
from agno.agent import Agent
from agno.tools import tool


@tool(name="post_status")
def post_status(text: str) -> str:
    \"\"\"Post a status update.\"\"\"
    return httpx.post("https://status.example/api/updates", json={"text": text}).text


def lookup(city: str) -> str:
    \"\"\"Look up the weather.\"\"\"
    return httpx.get(f"https://weather.example/{city}").text


agent = Agent(tools=[post_status, lookup])
"""


def test_agno_tool_decorator_and_agent_tool_list() -> None:
    tools = {t.name: t for t in discover({"bot/agent.py": AGNO_DECORATED})}
    assert sorted(tools) == ["lookup", "post_status"]
    assert {t.framework for t in tools.values()} == {"agno"}
    assert [e.kind for e in tools["post_status"].effects] == ["network_write"]
    assert tools["lookup"].effects == []


REPO_KIT = """\
from typing import Any, List, Optional

from agno.tools import Toolkit
from github import Auth, Github, GithubException


class RepoTools(Toolkit):
    def __init__(self, token: Optional[str] = None, base_url: Optional[str] = None, **kwargs):
        self.token = token
        self.base_url = base_url
        self.gh = self.connect()
        tools: List[Any] = [self.open_repository, self.repository_topics]
        super().__init__(name="repos", tools=tools, **kwargs)

    def connect(self):
        auth = Auth.Token(self.token or "")
        if self.base_url:
            return Github(base_url=self.base_url, auth=auth)
        return Github(auth=auth)

    def open_repository(self, name: str, org: Optional[str] = None) -> str:
        \"\"\"Create a repository.\"\"\"
        try:
            if org:
                made = self.gh.get_organization(org).create_repo(name=name)
            else:
                made = self.gh.get_user().create_repo(name=name)
            return made.full_name
        except GithubException:
            return "could not create the repository"

    def repository_topics(self, name: str) -> str:
        \"\"\"List a repository's topics.\"\"\"
        return ", ".join(self.gh.get_repo(name).get_topics())
"""


def test_a_client_built_by_the_class_own_method_is_the_attribute_type() -> None:
    tools = {t.name: t for t in discover({"repos/kit.py": REPO_KIT})}
    assert {e.kind for e in tools["open_repository"].effects} == {"network_write"}
    assert tools["repository_topics"].effects == []


TWO_KITS = {
    "kits/__init__.py": "",
    "kits/local.py": """\
from pathlib import Path

from agno.tools import Toolkit


class LocalFiles(Toolkit):
    def __init__(self, **kwargs):
        super().__init__(name="local", tools=[self.delete_file], **kwargs)

    def delete_file(self, name: str) -> str:
        \"\"\"Delete a local file.\"\"\"
        Path("/srv/files", name).unlink()
        return "deleted"
""",
    "kits/remote.py": """\
import httpx

from agno.tools import Toolkit


class RemoteFiles(Toolkit):
    \"\"\"Files kept on the team's file service.\"\"\"

    base_url = "https://files.example"

    def __init__(self, token: str, **kwargs):
        self.http = httpx.Client(base_url=self.base_url, headers={"Authorization": token})
        kept = [self.delete_file]
        super().__init__(name="remote", tools=kept, **kwargs)

    def delete_file(self, name: str) -> str:
        \"\"\"Delete a remote file.\"\"\"
        try:
            self.http.delete(f"/files/{name}", timeout=5)
        except httpx.HTTPError as exc:
            return f"failed: {exc}"
        return "deleted"
""",
}


def test_report_rows_of_two_tools_with_one_name_keep_their_own_findings(
    scan_files: ScanFiles,
) -> None:
    report = build_report(scan_files(TWO_KITS))
    rows = {row.path: row for row in report.tools if row.name == "delete_file"}
    assert sorted(rows) == ["kits/local.py", "kits/remote.py"]
    local = {e.path for e in rows["kits/local.py"].findings}
    remote = {e.path for e in rows["kits/remote.py"].findings}
    assert local == {"kits/local.py"}
    assert remote == {"kits/remote.py"}
    assert any("AG601" in e.text for e in rows["kits/remote.py"].findings)
    assert not any("AG601" in e.text for e in rows["kits/local.py"].findings)


REPORTS = """\
import io

from docx import Document
from langchain_core.tools import tool


@tool
def draft_report(title: str, body: str) -> bytes:
    \"\"\"Build a Word report and return its bytes.\"\"\"
    document = Document()
    document.add_heading(title)
    for part in body.split("\\n\\n"):
        document.add_paragraph(part)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


@tool
def file_report(title: str) -> str:
    \"\"\"Build a Word report and file it on the share.\"\"\"
    document = Document()
    document.add_heading(title)
    document.save(f"/srv/share/{title}.docx")
    return "filed"
"""


def test_a_document_built_and_saved_into_memory_writes_nothing() -> None:
    tools = {t.name: t for t in discover({"office/tools.py": REPORTS})}
    assert tools["draft_report"].effects == []
    assert tools["file_report"].effects != []


BROWSER = """\
from crewai.tools import BaseTool
from selenium import webdriver


class PageText(BaseTool):
    name: str = "Page text"
    description: str = "Read the visible text of a page, logged in with a session cookie."

    def _run(self, url: str, cookie: dict) -> str:
        driver = webdriver.Chrome()
        driver.get(url)
        driver.add_cookie(cookie)
        driver.get(url)
        return driver.find_element("tag name", "body").text
"""


def test_a_cookie_set_in_the_local_browser_is_no_remote_write(scan_files: ScanFiles) -> None:
    result = scan_files({"web/tools.py": BROWSER})
    assert [t.name for t in result.project.tools] == ["Page text"]
    assert result.project.tools[0].effects == []
    assert not [f for f in result.findings if f.code in {"AG101", "AG201"}]


SEARCH_FAMILY = {
    "search/__init__.py": "",
    "search/base.py": """\
from abc import ABC, abstractmethod
from typing import Any

import requests
from crewai.tools import BaseTool


class SearchBase(BaseTool, ABC):
    endpoint: str = ""

    def _run(self, q: str) -> Any:
        return self._shape(requests.get(self.endpoint, params={"q": q}, timeout=10).json())

    @abstractmethod
    def _shape(self, response: dict) -> Any: ...
""",
    "search/news.py": """\
from search.base import SearchBase


class NewsSearch(SearchBase):
    name: str = "News search"
    description: str = "Search recent news articles."
    endpoint: str = "https://search.example/news"

    def _shape(self, response: dict) -> list:
        return response.get("articles", [])
""",
    "search/images.py": """\
from search.base import SearchBase


class ImageSearch(SearchBase):
    \"\"\"Image search, safe-search on unless configured off.\"\"\"

    safe_only: bool = True
    endpoint: str = "https://search.example/images"
    description: str = (
        "Search images by keywords; returns image URLs, never the images themselves."
    )
    name: str = "Image search"

    def _shape(self, response: dict) -> list:
        hits = response.get("hits", [])
        if self.safe_only:
            hits = [hit for hit in hits if not hit.get("adult")]
        return [hit["url"] for hit in hits]
""",
}


def test_tool_classes_sharing_a_base_run_are_each_a_tool(scan_files: ScanFiles) -> None:
    result = scan_files(SEARCH_FAMILY)
    assert sorted((t.name, t.path) for t in result.project.tools) == [
        ("Image search", "search/images.py"),
        ("News search", "search/news.py"),
    ]
    assert not [f for f in result.findings if f.code == "AG003"]


PRIVATE_RECORD = """\
from dataclasses import dataclass

from langchain_core.tools import tool
from slack_sdk import WebClient

client = WebClient()


@dataclass(frozen=True)
class _Channel:
    id: str
    name: str | None = None


@tool
def channel_names() -> list:
    \"\"\"List the workspace's channels.\"\"\"
    found = client.conversations_list()
    return [_Channel(id=c["id"], name=c["name"]) for c in found["channels"]]
"""


def test_a_private_record_class_built_in_the_tool_is_no_unknown_call(
    scan_files: ScanFiles,
) -> None:
    # a module named like a service (``slack.py``) holding a private record class
    tool, result = only_tool(scan_files, {"chat/__init__.py": "", "chat/slack.py": PRIVATE_RECORD})
    assert [e.kind for e in tool.effects] == []
    assert not [f for f in result.findings if f.code == "AG104"]


BROWSER_SPEC = """\
from playwright.async_api import Browser, Page
from llama_index.core.tools.tool_spec.base import BaseToolSpec


class PageToolSpec(BaseToolSpec):
    spec_functions = ["open_url", "page_html", "press"]

    def __init__(self, browser: Browser) -> None:
        self.browser = browser

    async def _page(self) -> Page:
        context = await self.browser.new_context()
        return await context.new_page()

    async def open_url(self, url: str) -> str:
        \"\"\"Open a web page.\"\"\"
        page = await self._page()
        await page.goto(url)
        return page.url

    async def page_html(self) -> str:
        \"\"\"Return the current page's HTML.\"\"\"
        page = await self._page()
        return await page.content()

    async def press(self, selector: str) -> str:
        \"\"\"Click an element.\"\"\"
        page = await self._page()
        await page.click(selector)
        return "clicked"
"""


def test_navigating_and_reading_a_local_browser_page_reads() -> None:
    tools = {t.name: t for t in discover({"web/spec.py": BROWSER_SPEC})}
    assert tools["open_url"].effects == []
    assert tools["page_html"].effects == []
    # a click may submit a form: honest unknown, never "read"
    assert [e.kind for e in tools["press"].effects] == ["unknown"]


LOOPED = """\
from github import Github
from langchain_core.tools import tool

gh = Github()


@tool
def reword_comment(repo_name: str, comment_id: int, body: str) -> str:
    \"\"\"Edit one pull-request review comment.\"\"\"
    repo = gh.get_repo(repo_name)
    comment = None
    for comment in repo.get_pulls_comments():
        if comment.id == comment_id:
            comment.edit(body)
    return "done" if comment else "not found"


@tool
def comment_authors(repo_name: str) -> list:
    \"\"\"List who commented on pull requests.\"\"\"
    authors = []
    for comment in gh.get_repo(repo_name).get_pulls_comments():
        authors.append(comment.user.login)
    return authors
"""


def test_a_write_on_each_object_an_external_listing_hands_out_is_judged() -> None:
    tools = {t.name: t for t in discover({"review/tools.py": LOOPED})}
    assert [(e.kind, e.sink) for e in tools["reword_comment"].effects] == [
        ("write", "comment.edit")
    ]
    assert tools["comment_authors"].effects == []
