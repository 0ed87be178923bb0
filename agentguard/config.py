"""Configuration: ``[tool.agentguard]`` in pyproject.toml, or agentguard.toml, validated by
the JSON Schema shipped in the package. Errors name the file and the key."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    "__pycache__",
    "__pypackages__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".agentguard_cache",
    "build",
    "dist",
    "site-packages",
)
DEFAULT_MAX_FILE_SIZE = 2_000_000


class ConfigError(Exception):
    """A configuration problem; the CLI prints it and exits 2."""


@dataclass
class Config:
    root: Path
    source: Path | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    fail_on: str = "error"
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    min_confidence: str = "low"
    jobs: int = 0
    cache_dir: str | None = None
    baseline: str | None = None
    test_paths: list[str] = field(default_factory=list)
    read_only_mcp_servers: list[str] = field(default_factory=list)
    catalog_extensions: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """Part of every cache key: a config change invalidates cached facts."""
        return hashlib.sha256(json.dumps(self.raw, sort_keys=True).encode()).hexdigest()[:16]


def _schema_errors(section: dict[str, Any]) -> list[Any]:
    # jsonschema takes a third of a second to import: only a config with settings needs it.
    import jsonschema

    return sorted(
        jsonschema.Draft202012Validator(config_schema()).iter_errors(section),
        key=lambda e: list(e.absolute_path),
    )


@cache
def config_schema() -> dict[str, Any]:
    text = (Path(__file__).resolve().parent / "data" / "config.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def find_config(start: Path) -> tuple[Path | None, dict[str, Any]]:
    """The nearest agentguard.toml, or pyproject.toml with [tool.agentguard], at or above start."""
    current = start if start.is_dir() else start.parent
    for folder in (current, *current.parents):
        dedicated = folder / "agentguard.toml"
        if dedicated.is_file():
            return dedicated, _read_toml(dedicated)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            data = _read_toml(pyproject)
            section = data.get("tool", {}).get("agentguard")
            if section is not None:
                return pyproject, {"tool": {"agentguard": section}}
        if (folder / ".git").exists():
            break
    return None, {}


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def load_config(
    paths: list[Path], explicit: Path | None = None, overrides: dict[str, Any] | None = None
) -> Config:
    start = paths[0].resolve() if paths else Path.cwd()
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"{explicit}: config file not found")
        source: Path | None = explicit
        data = _read_toml(explicit)
    else:
        source, data = find_config(start)
    section: dict[str, Any] = data
    if source is not None and source.name == "pyproject.toml":
        section = data.get("tool", {}).get("agentguard", {})
    elif source is not None and "tool" in data and "agentguard" in data["tool"]:
        section = data["tool"]["agentguard"]
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: [tool.agentguard] must be a table")
    errors = _schema_errors(section) if section else []
    if errors:
        first = errors[0]
        key = ".".join(str(p) for p in first.absolute_path)
        if first.validator == "additionalProperties" and isinstance(first.instance, dict):
            allowed = set(first.schema.get("properties", {}))
            unknown = sorted(k for k in first.instance if k not in allowed)
            where = f"{key}." if key else ""
            raise ConfigError(
                f"{source}: unknown key `{where}{unknown[0]}` "
                f"(allowed: {', '.join(sorted(allowed))})"
            )
        raise ConfigError(f"{source}: invalid value for `{key or '(top level)'}`: {first.message}")
    root = source.parent if source is not None else (start if start.is_dir() else start.parent)
    if not paths:
        root = Path.cwd()
    config = Config(root=root, source=source, raw=dict(section))
    # As in ruff, `extend-select` adds to `select`, or to the default (every rule) without one.
    extended = list(section.get("extend-select", []))
    config.select = list(section.get("select", ["ALL"] if extended else [])) + extended
    config.ignore = list(section.get("ignore", []))
    config.include = list(section.get("include", []))
    config.exclude = list(section.get("exclude", DEFAULT_EXCLUDE)) + list(
        section.get("extend-exclude", [])
    )
    config.respect_gitignore = section.get("respect-gitignore", True)
    config.per_file_ignores = dict(section.get("per-file-ignores", {}))
    config.fail_on = section.get("fail-on", "error")
    config.max_file_size = section.get("max-file-size", DEFAULT_MAX_FILE_SIZE)
    config.min_confidence = section.get("min-confidence", "low")
    config.jobs = section.get("jobs", 0)
    config.cache_dir = section.get("cache-dir")
    config.baseline = section.get("baseline")
    config.test_paths = list(section.get("test-paths", []))
    config.read_only_mcp_servers = list(section.get("read-only-mcp-servers", []))
    extensions: dict[str, Any] = {}
    for key in ("frameworks", "effects", "retries", "checklist"):
        if key in section:
            extensions[key] = section[key]
    if "tool-functions" in section:
        extensions["tool_functions"] = section["tool-functions"]
    if "ledger-functions" in section:
        extensions["ledger_functions"] = section["ledger-functions"]
    config.catalog_extensions = extensions
    for key, value in (overrides or {}).items():
        if value is not None:
            setattr(config, key, value)
    return config
