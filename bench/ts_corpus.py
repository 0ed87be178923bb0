"""Build (or locate) the TypeScript benchmark corpus: the ``.ts`` and ``.tsx`` files of agent
and MCP code from public GitHub repositories, each at a pinned commit.

The repositories must already be on this machine as bare git directories ("mirrors"), one
per repository at ``<mirrors>/<owner>+<name>/repo`` (``--mirrors``, default
``$AGENTGUARD_TS_MIRRORS``). Each pinned commit is read with git and only the
``.ts`` / ``.tsx`` files of the listed folders are written into ``<scratch>/ts-corpus/<owner>+<name>/``
(no ``package.json``, ``tsconfig.json`` or lint config, so no tool picks up a project's own
settings). A second call finds the corpus and reuses it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SUFFIXES = (".ts", ".tsx")


@dataclass(frozen=True)
class Source:
    """One repository at one commit, and the folders of it the corpus takes ("" is all)."""

    repo: str  # owner/name on GitHub
    commit: str
    folders: tuple[str, ...] = ("",)

    @property
    def slug(self) -> str:
        return self.repo.replace("/", "+")


# Together 4,790 files (41.0 MB): an MCP SDK, an LLM/tool-calling SDK with its
# providers, and an agents SDK with its examples.
SOURCES = (
    Source("modelcontextprotocol/typescript-sdk", "3924de99df834302d89f5997a1b64ca268282284"),
    Source("vercel/ai", "ed857f50f112e23930b0c2dd8d532cc8bebbc911", ("packages",)),
    Source("openai/openai-agents-js", "6d0c61a5f62a5ed8142996a25b33446c810f84b3"),
)


def default_scratch() -> Path:
    return Path(tempfile.gettempdir()) / "agentguard-bench"


def mirror_of(mirrors: Path, source: Source) -> Path:
    """The bare git directory of ``source`` under ``mirrors``, or a clear error."""
    git_dir = mirrors / source.slug / "repo"
    present = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{source.commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if present.returncode != 0:
        raise SystemExit(
            f"the TypeScript corpus needs github.com/{source.repo} at {source.commit} as a "
            f"bare git directory at {git_dir} (fetch or clone it there first: "
            f"git clone --bare https://github.com/{source.repo} {git_dir}); it is missing "
            "or lacks that commit"
        )
    return git_dir


def extract_source(git_dir: Path, source: Source, target: Path) -> int:
    """Write the ``.ts``/``.tsx`` files of ``source``'s folders under ``target``; how many.

    The files are listed with ``git ls-tree`` and read with ``git cat-file``, not
    ``git archive``: a partial mirror may lack large blobs the corpus does not need."""
    listing = subprocess.run(
        [
            "git",
            "--git-dir",
            str(git_dir),
            "ls-tree",
            "-r",
            "-z",
            source.commit,
            "--",
            *[folder for folder in source.folders if folder],
        ],
        capture_output=True,
        check=True,
    ).stdout
    wanted: list[tuple[str, str]] = []  # (blob id, path)
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, name = entry.decode().split("\t", 1)
        kind, blob = meta.split()[1:3]
        if kind == "blob" and name.endswith(SUFFIXES) and "node_modules/" not in name:
            wanted.append((blob, name))
    blobs = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(f"{blob}\n" for blob, _ in wanted).encode(),
        capture_output=True,
        check=True,
    ).stdout
    offset = 0
    for _blob, name in wanted:
        header_end = blobs.index(b"\n", offset)
        header = blobs[offset:header_end].split()
        if len(header) != 3:
            raise SystemExit(f"{source.repo}: blob of {name} missing from {git_dir}")
        size = int(header[2])
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blobs[header_end + 1 : header_end + 1 + size])
        offset = header_end + 1 + size + 1  # the blob is followed by a newline
    return len(wanted)


def build_ts_corpus(scratch: Path, mirrors: Path | None) -> Path:
    """The corpus folder under ``scratch``, extracted from the mirrors on first use."""
    corpus = scratch / "ts-corpus"
    done = corpus / ".complete"
    if done.exists():
        return corpus
    if mirrors is None:
        raise SystemExit(
            "the TypeScript corpus is not built yet: pass --mirrors (or set "
            "AGENTGUARD_TS_MIRRORS) to the folder holding <owner>+<name>/repo bare git "
            f"directories of: {', '.join(source.repo for source in SOURCES)}"
        )
    git_dirs = [mirror_of(mirrors, source) for source in SOURCES]
    if corpus.exists():
        shutil.rmtree(corpus)
    for git_dir, source in zip(git_dirs, SOURCES, strict=True):
        count = extract_source(git_dir, source, corpus / source.slug)
        print(f"{source.repo} {source.commit[:12]}: {count:,} files", file=sys.stderr)
    done.write_text("")
    return corpus


def typescript_files(corpus: Path) -> list[Path]:
    return sorted(path for path in corpus.rglob("*") if path.suffix in SUFFIXES)


def mirrors_argument(parser: argparse.ArgumentParser) -> None:
    from_env = os.environ.get("AGENTGUARD_TS_MIRRORS")
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=Path(from_env) if from_env else None,
        help="folder of <owner>+<name>/repo bare git directories of the corpus's "
        "repositories (default: $AGENTGUARD_TS_MIRRORS); needed only to build the corpus",
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Build (or find) the TypeScript benchmark corpus under SCRATCH and print "
        "its size."
    )
    parser.add_argument(
        "scratch",
        type=Path,
        nargs="?",
        default=default_scratch(),
        help="scratch folder outside the repository (default: $TMPDIR/agentguard-bench)",
    )
    mirrors_argument(parser)
    args = parser.parse_args()
    folder = build_ts_corpus(args.scratch.resolve(), args.mirrors)
    files = typescript_files(folder)
    size = sum(path.stat().st_size for path in files)
    print(folder, len(files), f"{size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
