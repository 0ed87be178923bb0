"""The README tells a user the truth: its set-up commands, its runtime example, every command
and option it names, and every file it links to."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer

from agentguard.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 250
SETUP_COMMANDS = [
    "pip install . && agentguard check fixtures/shop-agent",
    'pip install ".[dev]" && python -m pytest',
]
# Written in parallel on another branch; checked like any other link once it exists.
PENDING_LINKS: set[str] = set()


def readme() -> str:
    return README.read_text(encoding="utf-8")


def fenced_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def prose(text: str) -> str:
    """The README without its fenced code blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def inline_code(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", prose(text))


def section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_readme_starts_with_the_two_setup_commands_and_says_what_each_does() -> None:
    text = readme()
    title, rest = text.split("\n", 1)
    assert title == "# agentguard"
    assert rest.lstrip("\n").startswith("```sh\n" + "\n".join(SETUP_COMMANDS) + "\n```\n")
    explanation = rest.split("\n```\n", 1)[1].strip().split("\n\n")[0]
    assert "exits 1" in explanation and "findings" in explanation
    assert "development dependencies" in explanation and "whole test suite" in explanation


def check_in(folder: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    """`agentguard check PATHS --no-cache` run from folder, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "agentguard", "check", *paths, "--no-cache"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_first_setup_command_exits_1_on_the_bundled_example_as_the_readme_says() -> None:
    done = check_in(ROOT, "fixtures/shop-agent")
    assert done.returncode == 1, done.stderr
    assert "AG201" in done.stdout


def test_the_readme_stays_short() -> None:
    lines = readme().count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; move detail to docs/"


def test_the_runtime_example_runs_as_written(tmp_path: Path) -> None:
    (example,) = fenced_blocks(section(readme(), "Runtime"), "python")
    script = tmp_path / "example.py"
    script.write_text(example, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # What its last comment promises: the first call succeeded, the second was answered
    # from the ledger, and the order service saw one order.
    assert done.stdout.split() == ["True", "True", "1"]
    assert (tmp_path / "agentguard-ledger.db").is_file()


def cli() -> Any:
    """The click command tree typer builds (typer ships its own copy of click)."""
    return typer.main.get_command(app)


def subcommands(command: Any) -> dict[str, Any]:
    found: dict[str, Any] = getattr(command, "commands", {})
    return found


def options_of(command: Any) -> set[str]:
    names = (
        opt
        for param in command.params
        for opt in (*param.opts, *getattr(param, "secondary_opts", ()))
    )
    return {name for name in names if name.startswith("-")}


def all_options(command: Any) -> set[str]:
    found = options_of(command)
    for sub in subcommands(command).values():
        found |= all_options(sub)
    return found


def invocations(text: str) -> list[list[str]]:
    """Every `agentguard ...` command line of the README, in shell blocks and inline code."""
    lines = [
        line.split(" #")[0] for block in fenced_blocks(text, "sh") for line in block.split("\n")
    ]
    lines += inline_code(text)
    found = []
    for line in lines:
        for part in line.split("&&"):
            words = shlex.split(part)
            if words[:1] == ["agentguard"]:
                found.append(words)
    return found


def test_every_agentguard_command_and_option_the_readme_shows_exists() -> None:
    found = invocations(readme())
    assert len(found) > 10  # the extraction works: the README shows many commands
    for words in found:
        command = cli()
        rest = words[1:]
        while subcommands(command) and rest and not rest[0].startswith("-"):
            assert rest[0] in subcommands(command), f"no command {rest[0]!r}: {' '.join(words)}"
            command = subcommands(command)[rest[0]]
            rest = rest[1:]
        assert not subcommands(command), f"incomplete command: {' '.join(words)}"
        for word in rest:
            if word.startswith("-") and word != "-":  # `-` alone: standard input
                name = word.split("=", 1)[0]
                assert name in options_of(command), f"no option {name} in {' '.join(words)}"


def test_every_option_the_readme_names_in_its_prose_exists() -> None:
    known = all_options(cli())
    named = [span.split()[0] for span in inline_code(readme()) if re.match(r"--?[a-z]", span)]
    assert named  # the README names options in its text
    for option in named:
        assert option in known, f"README names {option}, which no agentguard command has"


def test_every_file_module_and_link_the_readme_refers_to_exists() -> None:
    text = readme()
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert local
    for target in local:
        if target in PENDING_LINKS and not (ROOT / target).exists():
            continue
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"
    for module in re.findall(r"python -m ([\w.]+)", text):
        assert importlib.util.find_spec(module) is not None, f"no module {module}"
    for script in re.findall(r"python ([\w/]+\.py)", text):
        assert (ROOT / script).is_file(), f"no script {script}"
