"""AG601's fix keeps what the model needs from an exception: the error code of agentguard's
taxonomy (as the runtime classifies it), whether calling again can help, and a safe summary
(its type and a bounded message with URLs and credentials removed)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests

from agentguard.checks.observations.error_taxonomy import helper_source
from agentguard.runtime.errors import TRANSIENT_CODES, classify_exception
from tests.fixed_agent import run_in_agent

REPO = Path(__file__).resolve().parent.parent


def http_error(status: int) -> requests.HTTPError:
    response = requests.Response()
    response.status_code = status
    return requests.HTTPError(f"{status} error", response=response)


EXCEPTIONS = [
    requests.ConnectTimeout("connect timed out"),
    requests.ReadTimeout("read timed out"),
    requests.Timeout("timed out"),
    requests.ConnectionError("connection aborted"),
    requests.exceptions.MissingSchema("no schema"),
    httpx.ConnectError("refused"),
    httpx.ConnectTimeout("connect timed out"),
    httpx.ReadTimeout("read timed out"),
    httpx.RemoteProtocolError("peer closed"),
    TimeoutError(),
    ConnectionRefusedError(),
    ConnectionResetError(),
    PermissionError("denied"),
    FileNotFoundError("missing"),
    http_error(400),
    http_error(401),
    http_error(404),
    http_error(408),
    http_error(429),
    http_error(500),
    http_error(502),
    requests.RequestException("failed"),
    requests.HTTPError("no response"),
    ValueError("bad input"),
    KeyError("id"),
]


@pytest.fixture(scope="module")
def tool_error() -> Any:
    namespace: dict[str, Any] = {"re": re}
    exec(compile(helper_source("'"), "<tool_error>", "exec"), namespace)
    return namespace["tool_error"]


@pytest.mark.parametrize("writes", [False, True])
@pytest.mark.parametrize("error", EXCEPTIONS, ids=lambda e: f"{type(e).__name__}:{e}")
def test_the_fix_classifies_as_the_runtime_does(
    tool_error: Any, error: BaseException, writes: bool
) -> None:
    failure = classify_exception(error)
    expected = "SIDE_EFFECT_UNCERTAIN" if writes and failure.may_have_applied else failure.code
    observation = tool_error("create_order", error, writes=writes)
    assert observation["code"] == str(expected)
    assert observation["retryable"] is (expected in TRANSIENT_CODES)
    assert observation["ok"] is False


def test_the_summary_names_the_type_and_keeps_no_url_or_secret(tool_error: Any) -> None:
    error = requests.ConnectionError(
        "HTTPSConnectionPool(host='orders.internal.example'): Max retries exceeded with url: "
        "https://orders.internal.example/v1/orders?api_key=sk_live_123 (token=abc123) " + "x" * 500
    )
    content = tool_error("create_order", error, writes=False)["content"]
    assert "ConnectionError" in content
    assert "https://" not in content and "sk_live_123" not in content and "abc123" not in content
    assert len(content) < 400
    assert "unlikely to help" not in content


CALL_THE_TOOL = """
import json, sys
import requests

def get(url, **kwargs):
    raise requests.ConnectTimeout(
        "HTTPSConnectionPool(host='tickets.internal.example'): connect timeout=10 "
        "for https://tickets.internal.example/v2/tickets/t1?token=s3cret"
    )

requests.get = get
from desk import tools
print(json.dumps(tools.ticket_status.invoke({"ticket_id": "t1"})))
"""


def test_a_fixed_read_tool_tells_the_model_a_transient_error_may_be_retried(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from agentguard.cli import app

    project = tmp_path / "quotes-agent"
    shutil.copytree(REPO / "fixtures" / "quotes-agent", project)
    result = CliRunner().invoke(
        app, ["fix", "--write", "--unsafe-fixes", "--select", "AG601", str(project)]
    )
    assert result.exit_code == 0, result.output
    observation = json.loads(run_in_agent(CALL_THE_TOOL, project, tmp_path))
    assert observation["code"] == "TRANSIENT_NETWORK" and observation["retryable"] is True
    assert "ConnectTimeout" in observation["content"]
    assert "s3cret" not in observation["content"] and "https://" not in observation["content"]
