"""Module names from package roots: a project's own absolute imports resolve whatever folder
its packages sit in (src layout, monorepo libraries, a service folder below the scan root)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.engine.pipeline import scan
from agentguard.engine.speed import FactOptions
from agentguard.project.project_model import ProjectModel

from .conftest import ScanFiles, write_project

# A tool in one module that sends mail through a helper in another, imported absolutely.
TOOL = textwrap.dedent(
    '''
    from langchain_core.tools import tool

    from {package}.mailer import deliver


    @tool
    def notify_customer(address: str, body: str) -> str:
        """Tell the customer their order shipped."""
        return deliver(address, body)
    '''
)
MAILER = textwrap.dedent(
    """
    import smtplib


    def deliver(address: str, body: str) -> str:
        with smtplib.SMTP("mail.internal") as smtp:
            smtp.sendmail("shop@example.com", [address], body)
        return "sent"
    """
)


def tool_sinks(project: ProjectModel, tool: str = "notify_customer") -> set[str]:
    found = [t for t in project.tools if t.name == tool]
    assert found, [t.name for t in project.tools]
    return {effect.sink for effect in found[0].effects}


def sinks(scan_files: ScanFiles, files: dict[str, str], tool: str = "notify_customer") -> set[str]:
    return tool_sinks(scan_files(files).project, tool)


def has_smtp(sinks_found: set[str]) -> bool:
    return any("smtplib" in sink for sink in sinks_found)


def sent_and_named(scan_files: ScanFiles, files: dict[str, str]) -> set[str]:
    """Check that the tool's mail is followed; the project's module names."""
    project = scan_files(files).project
    assert has_smtp(tool_sinks(project))
    return {m.module for m in project.modules.values()}


def test_a_src_layout_project_declared_in_pyproject_follows_its_own_imports(
    scan_files: ScanFiles,
) -> None:
    files = {
        "pyproject.toml": '[project]\nname = "shop"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
        "src/shop/__init__.py": "",
        "src/shop/agent.py": TOOL.format(package="shop"),
        "src/shop/mailer.py": MAILER,
    }
    names = sent_and_named(scan_files, files)
    assert "shop.agent" in names and not any(n.startswith("src.") for n in names)


# A packaging file, and the folder its package is declared in (or found in, for ``src``).
DECLARED = {
    "src-found": ("pyproject.toml", '[project]\nname = "shop"\n', "src"),
    "hatch-packages": (
        "pyproject.toml",
        '[tool.hatch.build.targets.wheel]\npackages = ["python/shop"]\n',
        "python",
    ),
    "setup-cfg": (
        "setup.cfg",
        "[metadata]\nname = shop\n\n[options]\npackage_dir =\n    =lib\n",
        "lib",
    ),
    "setup-py": (
        "setup.py",
        "from setuptools import find_packages, setup\n\n"
        'setup(name="shop", package_dir={"": "code"}, packages=find_packages("code"))\n',
        "code",
    ),
}


@pytest.mark.parametrize("declared", DECLARED.values(), ids=DECLARED.keys())
def test_a_packaging_file_declares_the_root(
    scan_files: ScanFiles, declared: tuple[str, str, str]
) -> None:
    config, text, folder = declared
    files = {
        config: text,
        f"{folder}/shop/__init__.py": "",
        f"{folder}/shop/agent.py": TOOL.format(package="shop"),
        f"{folder}/shop/mailer.py": MAILER,
    }
    assert has_smtp(sinks(scan_files, files))


def test_each_library_of_a_monorepo_is_named_from_its_own_packaging_file(
    scan_files: ScanFiles,
) -> None:
    files = {
        "libs/agents/pyproject.toml": '[tool.poetry]\nname = "agents"\npackages = [{include = "agents", from = "src"}]\n',
        "libs/agents/src/agents/__init__.py": "",
        "libs/agents/src/agents/support.py": TOOL.format(package="mail"),
        "libs/mail/pyproject.toml": '[project]\nname = "mail"\n',
        "libs/mail/mail/__init__.py": "",
        "libs/mail/mail/mailer.py": MAILER,
    }
    assert has_smtp(sinks(scan_files, files))


def test_a_service_folder_is_named_from_what_its_imports_call_it(scan_files: ScanFiles) -> None:
    # No packaging file: ``from app.mailer import deliver`` says ``services/api`` is the root.
    files = {
        "services/api/app/__init__.py": "",
        "services/api/app/agent.py": TOOL.format(package="app"),
        "services/api/app/mailer.py": MAILER,
    }
    assert has_smtp(sinks(scan_files, files))


# Projects that import their modules by the names the scan root gives them; each keeps
# those names, whatever else the project imports.
NAMED_FROM_SCAN_ROOT = {
    # ``services.api.app.mailer`` is imported as written: no other root is looked for, and
    # a third-party package that shares a folder's name (``app``) changes nothing.
    "path-name": (
        {
            "services/__init__.py": "",
            "services/api/__init__.py": "",
            "services/api/app/__init__.py": "",
            "services/api/app/agent.py": TOOL.format(package="services.api.app"),
            "services/api/app/mailer.py": MAILER,
            "scripts/other.py": "from app.mailer import deliver\n",
        },
        "services.api.app.mailer",
    ),
    # ``corp/`` has no ``__init__.py`` (a namespace package): the project imports
    # ``corp.mail.mailer``, and a third-party ``mail`` import does not rename it.
    "namespace-package": (
        {
            "pyproject.toml": '[project]\nname = "corp-mail"\n',
            "corp/mail/__init__.py": "",
            "corp/mail/agent.py": TOOL.format(package="corp.mail"),
            "corp/mail/mailer.py": MAILER,
            "corp/mail/other.py": "from mail.mailer import something_else\n",
        },
        "corp.mail.mailer",
    ),
    # ``src`` holds no ``__init__.py`` but the project imports ``src.shop.mailer``: the
    # files keep the names the scan root gives them.
    "src-as-package": (
        {
            "pyproject.toml": '[project]\nname = "shop"\n',
            "src/shop/__init__.py": "",
            "src/shop/agent.py": TOOL.format(package="src.shop"),
            "src/shop/mailer.py": MAILER,
        },
        "src.shop.mailer",
    ),
}


@pytest.mark.parametrize("case", NAMED_FROM_SCAN_ROOT.values(), ids=NAMED_FROM_SCAN_ROOT.keys())
def test_a_module_imported_by_its_scan_root_name_keeps_it(
    scan_files: ScanFiles, case: tuple[dict[str, str], str]
) -> None:
    files, module = case
    assert module in sent_and_named(scan_files, files)


# A package folder scanned by itself (it holds ``__init__.py``): its modules import each
# other by the package's name, which the scan root's folder name does not give.
SERVER = textwrap.dedent(
    """
    from mcp.server.fastmcp import FastMCP

    mcp = FastMCP("shop")
    """
)
MCP_TOOL = textwrap.dedent(
    '''
    import smtplib

    from {package}.core.server import mcp


    @mcp.tool()
    def notify_customer(address: str, body: str) -> str:
        """Tell the customer their order shipped."""
        with smtplib.SMTP("mail.internal") as smtp:
            smtp.sendmail("shop@example.com", [address], body)
        return "sent"
    '''
)


def test_a_package_scanned_by_itself_is_named_by_its_own_imports(scan_files: ScanFiles) -> None:
    files = {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/server.py": SERVER,
        "tools/__init__.py": "",
        "tools/mail.py": MCP_TOOL.format(package="shop"),
        "main.py": "from shop.core.server import mcp\nimport shop.tools.mail\n",
    }
    names = sent_and_named(scan_files, files)
    assert {"shop.core.server", "shop.tools.mail"} <= names


def test_a_third_party_import_does_not_name_a_package_scanned_by_itself(
    scan_files: ScanFiles,
) -> None:
    # ``core.server`` is also the tail of a third-party import that names nothing the
    # module defines: the files keep their names.
    files = {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/server.py": SERVER,
        "tools/__init__.py": "",
        "tools/mail.py": MCP_TOOL.format(package="core").replace("from core.", "from .."),
        "main.py": "from vendor.core.server import Handler\n",
    }
    names = {m.module for m in scan_files(files).project.modules.values()}
    assert "core.server" in names and not any(n.startswith("vendor.") for n in names)


# A script that puts its own folder on ``sys.path`` before importing its helpers: that
# folder is an import root even though it holds ``__init__.py``.
SYS_PATH_FORMS = {
    "os-path": "sys.path.append(os.path.dirname(os.path.abspath(__file__)))",
    "pathlib": "sys.path.insert(0, str(Path(__file__).resolve().parent))",
}


@pytest.mark.parametrize("line", SYS_PATH_FORMS.values(), ids=SYS_PATH_FORMS.keys())
def test_a_folder_a_module_puts_on_sys_path_is_an_import_root(
    scan_files: ScanFiles, line: str
) -> None:
    head = f"import os\nimport sys\nfrom pathlib import Path\n\n{line}\n"
    files = {
        "shop_agent/__init__.py": "",
        "shop_agent/server.py": head + TOOL.format(package="helpers"),
        "shop_agent/helpers/__init__.py": "",
        "shop_agent/helpers/mailer.py": MAILER,
    }
    assert "helpers.mailer" in sent_and_named(scan_files, files)


def test_a_parent_folder_put_on_sys_path_names_from_there(scan_files: ScanFiles) -> None:
    head = "import os\nimport sys\n\nsys.path.append(os.path.dirname(os.path.dirname(__file__)))\n"
    files = {
        "app/__init__.py": "",
        "app/shop/__init__.py": "",
        "app/shop/server.py": head + TOOL.format(package="shop.helpers"),
        "app/shop/helpers/__init__.py": "",
        "app/shop/helpers/mailer.py": MAILER,
    }
    assert "shop.helpers.mailer" in sent_and_named(scan_files, files)


def test_a_script_importing_the_module_beside_it_by_its_bare_name_names_it(
    scan_files: ScanFiles,
) -> None:
    """``import mailer`` in ``scripts/notify/run.py`` beside ``mailer.py``: run as a script,
    its folder is on ``sys.path``, so ``mailer`` is that file."""
    tool = TOOL.replace("from {package}.mailer import deliver", "import mailer").replace(
        "return deliver(", "return mailer.deliver("
    )
    files = {"scripts/notify/run.py": tool, "scripts/notify/mailer.py": MAILER}
    assert "mailer" in sent_and_named(scan_files, files)


def test_two_script_folders_with_modules_of_one_name_keep_distinct_names(
    scan_files: ScanFiles,
) -> None:
    """``examples/a/run.py`` and ``examples/b/run.py`` each import ``agents`` from beside
    them: one folder may be named as its scripts name it, never both, so no two files
    share a module name (one would hide the other)."""
    files = {
        "examples/shop/run.py": "from agents import shop_agent\n",
        "examples/shop/agents.py": "shop_agent = object()\n",
        "examples/bank/run.py": "from agents import bank_agent\n",
        "examples/bank/agents.py": "bank_agent = object()\n",
    }
    names = [m.module for m in scan_files(files).project.modules.values()]
    assert len(names) == len(set(names))


def test_which_script_folder_keeps_a_shared_module_name_does_not_depend_on_the_hash_seed(
    tmp_path: Path,
) -> None:
    """Two script folders each import ``mailer`` from beside them: the first by path
    (``examples/bank``) keeps the bare name, at any hash seed, so a check reports the same
    module names (and so the same findings) on every run."""
    project = tmp_path / "project"
    for folder in ("examples/shop", "examples/bank"):
        tool = TOOL.replace("from {package}.mailer import deliver", "from mailer import deliver")
        write_project(project, {f"{folder}/run.py": tool, f"{folder}/mailer.py": MAILER})
    (project / ".git").mkdir()
    show_names = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agentguard.config import load_config\n"
        "from agentguard.engine.pipeline import scan\n"
        "root = Path(sys.argv[1])\n"
        "project = scan([root], load_config([root])).project\n"
        "print(sorted((m.path, m.module) for m in project.modules.values()))\n"
    )
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        done = subprocess.run(
            [sys.executable, "-c", show_names, str(project)],
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            text=True,
            timeout=120,
            check=True,
        )
        seen.add(done.stdout)
    assert len(seen) == 1, seen
    assert "('examples/bank/mailer.py', 'mailer')" in seen.pop()


def _scan_counting(project: Path) -> tuple[ProjectModel, int]:
    """The project of a check of ``project`` and how many parses it made."""
    options = FactOptions()
    result = scan([project], load_config([project]), facts=options)
    assert options.stats is not None
    return result.project, options.stats.parsed


def test_names_guessed_from_the_text_spare_the_second_parse(tmp_path: Path) -> None:
    # ``from app.mailer import deliver`` names ``services/api`` the root: the text shows it
    # before any file is parsed, so each file is parsed once, under its final name.
    files = {
        "services/api/app/agent.py": TOOL.format(package="app"),
        "services/api/app/mailer.py": MAILER,
    }
    (tmp_path / ".git").mkdir()
    write_project(tmp_path, files)
    project, parsed = _scan_counting(tmp_path)
    assert parsed == len(files)
    assert {m.module for m in project.modules.values()} == {"app.agent", "app.mailer"}
    assert has_smtp(tool_sinks(project))


def test_a_wrong_guess_is_parsed_again_under_the_name_the_facts_give(tmp_path: Path) -> None:
    # An import in a docstring is no import: the text's guess names ``services/api`` the
    # root, the facts (a relative import only) do not, and the files guessed wrong are
    # parsed again.
    files = {
        "services/api/app/agent.py": TOOL.format(package=""),
        "services/api/app/mailer.py": MAILER,
        "services/api/app/notes.py": '"""Use it as:\nfrom app.mailer import deliver\n"""\n',
    }
    (tmp_path / ".git").mkdir()
    write_project(tmp_path, files)
    project, parsed = _scan_counting(tmp_path)
    assert parsed > len(files)
    assert "services.api.app.mailer" in {m.module for m in project.modules.values()}
    assert has_smtp(tool_sinks(project))


# One repository of several small agents, each run as a script from its own folder, each
# with a ``utils`` package of its own: one sends mail, the other posts to an API.
POSTER = textwrap.dedent(
    """
    import requests


    def deliver(address: str, body: str) -> str:
        requests.post("https://api.example.com/notices", json={"to": address, "body": body})
        return "posted"
    """
)


def _agent_files(folder: str, helper: str, packaging: bool = False) -> dict[str, str]:
    files = {
        f"{folder}/main.py": TOOL.format(package="utils"),
        f"{folder}/utils/__init__.py": "",
        f"{folder}/utils/mailer.py": helper,
    }
    if packaging:
        files[f"{folder}/pyproject.toml"] = f'[project]\nname = "{folder}"\n'
    return files


def _sinks_by_folder(scan_files: ScanFiles, files: dict[str, str]) -> dict[str, set[str]]:
    project = scan_files(files).project
    names = [m.module for m in project.modules.values()]
    assert len(names) == len(set(names)), names
    return {
        tool.path.split("/", 1)[0]: {effect.sink for effect in tool.effects}
        for tool in project.tools
    }


@pytest.mark.parametrize("packaging", [False, True], ids=["scripts", "packaged"])
def test_each_agent_of_a_repository_calls_its_own_helpers_of_a_shared_name(
    scan_files: ScanFiles, packaging: bool
) -> None:
    """``from utils.mailer import deliver`` in ``shop_bot/main.py`` is ``shop_bot/utils/
    mailer.py``: the script's own folder comes first on ``sys.path``, whatever the other
    agent beside it holds under the same name (both folders cannot be named ``utils``)."""
    files = {
        **_agent_files("shop_bot", MAILER, packaging),
        **_agent_files("bank_bot", POSTER, packaging),
    }
    found = _sinks_by_folder(scan_files, files)
    assert set(found) == {"shop_bot", "bank_bot"}, found
    assert has_smtp(found["shop_bot"]) and not any("requests" in s for s in found["shop_bot"])
    assert any("requests" in s for s in found["bank_bot"]) and not has_smtp(found["bank_bot"])


def test_a_folder_beside_a_script_named_like_a_library_is_not_taken_for_it(
    scan_files: ScanFiles,
) -> None:
    """``import requests`` in ``demos/run.py`` is the library while ``demos/requests/`` holds
    no module of that name (a folder of examples about it, no package)."""
    tool = (
        TOOL.format(package="demos_helpers")
        .replace("from demos_helpers.mailer import deliver", "import requests")
        .replace(
            "return deliver(address, body)",
            'requests.post("https://api.example.com/n", json={"to": address})\n    return "ok"',
        )
    )
    files = {"demos/run.py": tool, "demos/requests/retry_demo.py": "import requests\n"}
    found = _sinks_by_folder(scan_files, files)
    assert any("requests" in s for s in found["demos"]), found


def test_an_import_in_other_letter_case_names_the_folder_so_spelled(scan_files: ScanFiles) -> None:
    """``from jarvis.mailer import deliver`` beside a ``Jarvis/`` package and no ``jarvis``:
    the folder was renamed on a case-insensitive disk and the checkout kept the old case."""
    files = {
        "Jarvis/__init__.py": "",
        "Jarvis/agent.py": TOOL.format(package="jarvis"),
        "Jarvis/mailer.py": MAILER,
    }
    assert has_smtp(sinks(scan_files, files))


def test_the_standard_library_is_not_taken_for_a_folder_in_other_letter_case(
    scan_files: ScanFiles,
) -> None:
    tool = (
        TOOL.format(package="x")
        .replace("from x.mailer import deliver", "import smtplib")
        .replace(
            "return deliver(address, body)",
            'smtplib.SMTP("mail.internal").sendmail("a@example.com", [address], body)\n'
            '    return "sent"',
        )
    )
    files = {"app/agent.py": tool, "Smtplib/__init__.py": "", "Smtplib/notes.py": "X = 1\n"}
    assert has_smtp(sinks(scan_files, files))


def test_a_module_beside_named_like_its_folder_does_not_take_the_folders_imports(
    scan_files: ScanFiles,
) -> None:
    """``from core.mailer import deliver`` in ``core/agent.py`` beside ``core/core.py``: the
    scan root holds all of ``core.mailer``, the folder only ``core``; the root decides."""
    files = {
        "main.py": "from core.agent import notify_customer\n",
        "core/core.py": "VERSION = 1\n",
        "core/agent.py": TOOL.format(package="core"),
        "core/mailer.py": MAILER,
    }
    assert has_smtp(sinks(scan_files, files))


def test_a_project_module_named_like_a_library_does_not_take_the_librarys_deeper_imports(
    scan_files: ScanFiles,
) -> None:
    """``app/mcp/server.py`` imports ``from mcp.server.fastmcp import FastMCP``: Python imports
    the whole dotted module or fails, and ``app/mcp/server.py`` is a module with nothing
    below it, so ``mcp`` is the installed SDK. The server it builds, imported by the tool
    modules as ``from app.mcp import mcp``, registers their tools."""
    files = {
        "app/mcp/__init__.py": "from app.mcp.server import mcp\n",
        "app/mcp/server.py": (
            "from mcp.server.fastmcp import FastMCP\n\nmcp = FastMCP(name='helpers')\n"
        ),
        "app/tools/__init__.py": "from app.tools import clock\n",
        "app/tools/clock.py": textwrap.dedent(
            '''
            from datetime import datetime, timezone

            from app.mcp import mcp


            @mcp.tool()
            def current_time() -> str:
                """The time now, in UTC."""
                return datetime.now(timezone.utc).isoformat()
            '''
        ),
        "app/main.py": "from app.mcp import mcp\n\nif __name__ == '__main__':\n    mcp.run()\n",
    }
    result = scan_files(files)
    assert [tool.name for tool in result.project.tools] == ["current_time"]
