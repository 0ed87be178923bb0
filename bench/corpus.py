"""Build (or locate) the benchmark corpus: the ``.py`` files of agent frameworks from PyPI.

The packages are installed with pip into a scratch folder outside the repository, then
only their ``.py`` files are copied into ``<scratch>/corpus`` (no config files, so no tool
picks up a package's own lint settings). A second call finds the corpus and reuses it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Agent frameworks and the clients they are built on; together about 5,800 .py files.
REQUIREMENTS = (
    "langchain",
    "langgraph",
    "crewai",
    "llama-index-core",
    "autogen-agentchat",
    "pydantic-ai",
    "smolagents",
    "openai-agents",
    "mcp",
)
PACKAGES = (
    "langchain",
    "langchain_core",
    "langchain_protocol",
    "langgraph",
    "langgraph_sdk",
    "autogen_agentchat",
    "autogen_core",
    "smolagents",
    "mcp",
    "agents",
    "pydantic_ai",
    "crewai",
    "crewai_cli",
    "crewai_core",
    "llama_index",
    "fastmcp",
    "instructor",
    "openai",
    "langsmith",
    "chromadb",
    "huggingface_hub",
    "opentelemetry",
    "logfire",
    "sqlalchemy",
)


def build_corpus(scratch: Path) -> Path:
    """The corpus folder under ``scratch``, installing and copying it on first use."""
    corpus = scratch / "corpus"
    done = corpus / ".complete"
    if done.exists():
        return corpus
    site = scratch / "site"
    if not site.exists():
        print(f"installing the corpus packages into {site} ...", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--target",
                str(site),
                *list(REQUIREMENTS),
            ],
            check=True,
        )
    if corpus.exists():
        shutil.rmtree(corpus)
    for package in PACKAGES:
        source = site / package
        if not source.is_dir():
            continue
        for path in source.rglob("*.py"):
            target = corpus / path.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    done.write_text("")
    return corpus


def python_files(corpus: Path) -> list[Path]:
    return sorted(corpus.rglob("*.py"))


def half_corpus(scratch: Path, corpus: Path) -> Path:
    """Every other file of the corpus (in path order), at the same relative paths, under
    ``<scratch>/half-corpus``: the same kind of code in half the amount, to see how the
    cost grows with the number of files."""
    half = scratch / "half-corpus"
    done = half / ".complete"
    if done.exists():
        return half
    if half.exists():
        shutil.rmtree(half)
    for path in python_files(corpus)[::2]:
        target = half / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    done.write_text("")
    return half


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Build (or find) the benchmark corpus under SCRATCH and print its size."
    )
    parser.add_argument(
        "scratch",
        type=Path,
        nargs="?",
        default=Path(tempfile.gettempdir()) / "agentguard-bench",
        help="scratch folder outside the repository (default: $TMPDIR/agentguard-bench)",
    )
    folder = build_corpus(parser.parse_args().scratch.resolve())
    print(folder, len(python_files(folder)))


if __name__ == "__main__":
    main()
