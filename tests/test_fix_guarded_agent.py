"""The unsafe @guarded fix leaves an agent that runs: fixed with `agentguard fix --write
--unsafe-fixes`, the shop agent is imported and its tool called outside any run, against a
patched HTTP call (never the network), in a process of its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentguard.cli import app
from tests.fixed_agent import run_in_agent

REPO = Path(__file__).resolve().parent.parent

# Runs in the fixed project's process: the orders service answers one POST with a timeout
# and the next with an order, through a patched requests.Session.post.
CALL_THE_TOOL = """
import json, os, sys
import requests

answers = [requests.ReadTimeout("read timed out"), {"id": "o-1"}]
posts = []

class Response:
    def __init__(self, body):
        self.body = body
    def raise_for_status(self):
        pass
    def json(self):
        return self.body

def post(self, url, **kwargs):
    posts.append(url)
    answer = answers.pop(0)
    if isinstance(answer, Exception):
        raise answer
    return Response(answer)

requests.Session.post = post
from shop_agent import tools
created_at_import = sorted(os.listdir("."))
first = tools.create_order.invoke({"cart_id": "c1", "customer_id": "u1"})
second = tools.create_order.invoke({"cart_id": "c2", "customer_id": "u1"})
print(json.dumps({"created_at_import": created_at_import, "first": first, "second": second,
                  "posts": len(posts), "after": sorted(os.listdir("."))}))
"""


@pytest.fixture
def fixed_shop(tmp_path: Path) -> tuple[Path, str]:
    from typer.testing import CliRunner

    project = tmp_path / "shop-agent"
    shutil.copytree(REPO / "fixtures" / "shop-agent", project)
    result = CliRunner().invoke(app, ["fix", "--write", "--unsafe-fixes", str(project)])
    assert result.exit_code == 0, result.output
    return project, result.output


def test_the_fixed_agent_runs_outside_a_run_and_its_timeout_reaches_guarded(
    fixed_shop: tuple[Path, str], tmp_path: Path
) -> None:
    project, _ = fixed_shop
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    seen = run_in_agent(CALL_THE_TOOL, project, workdir)
    assert seen["created_at_import"] == []  # importing the module wrote nothing
    assert seen["posts"] == 2
    # The timeout is no longer answered by the tool's own "please retry": @guarded records it.
    first = seen["first"]
    assert "SIDE_EFFECT_UNCERTAIN" in str(first) and "please retry" not in str(first)
    assert "Order o-1 placed." in str(seen["second"])
    assert "agentguard-ledger.db" in seen["after"]  # created by the first call


def test_the_fix_removes_the_handler_and_names_every_follow_up(
    fixed_shop: tuple[Path, str],
) -> None:
    project, output = fixed_shop
    tools = (project / "shop_agent" / "tools.py").read_text()
    create_order = tools.split("def create_order", 1)[1].split("\n@tool", 1)[0]
    assert "except requests.Timeout" not in create_order
    for follow_up in (
        "remove the `except requests.Timeout` handler",
        "placeholder `key=`",
        "observation",
        "one shared module",
        "with runtime.run(",
        "current_call().idempotency_key",
        "reconcile=",
    ):
        assert follow_up in " ".join(output.split()), follow_up
    # Every line the fix wrote fits black's default width.
    assert max(len(line) for line in tools.splitlines()) <= 88


def test_the_guarded_fix_is_not_offered_while_a_helper_hides_the_timeout(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    (tmp_path / "agent.py").write_text(
        "import requests\n"
        "from langchain_core.tools import tool\n\n"
        "def place(cart_id: str) -> str:\n"
        "    try:\n"
        '        return requests.post("https://shop.example/orders", json={"c": cart_id}).text\n'
        "    except requests.Timeout:\n"
        '        return "failed, please retry"\n\n'
        "@tool\n"
        "def create_order(cart_id: str) -> str:\n"
        '    """Place an order."""\n'
        "    return place(cart_id)\n"
    )
    result = CliRunner().invoke(app, ["fix", "--unsafe-fixes", "--select", "AG101", str(tmp_path)])
    assert "@guarded" not in result.output
