"""The rule selection of a run, checked before anything is scanned."""

from __future__ import annotations

from collections.abc import Sequence

from agentguard.checks.base import unknown_selection
from agentguard.config import Config, ConfigError


def check_selection(config: Config, select: Sequence[str], ignore: Sequence[str]) -> None:
    """Raise ConfigError naming the first unknown code, in the options or the config file."""
    named: list[tuple[str, Sequence[str]]] = [("--select", select), ("--ignore", ignore)]
    where = str(config.source) if config.source is not None else "config"
    for key in ("select", "extend-select", "ignore", "extend-ignore"):
        value = config.raw.get(key)
        if isinstance(value, list):
            named.append((f"{where}: `{key}`", [str(code) for code in value]))
    per_file = config.raw.get("per-file-ignores")
    if isinstance(per_file, dict):
        for pattern, codes in per_file.items():
            if isinstance(codes, list):
                named.append(
                    (f"{where}: `per-file-ignores` for {pattern!r}", [str(c) for c in codes])
                )
    for label, codes in named:
        problem = unknown_selection(codes, label)
        if problem is not None:
            raise ConfigError(problem)
