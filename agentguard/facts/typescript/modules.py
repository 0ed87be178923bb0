"""Provisional: replaced by the module resolution of the ts-modules branch."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

TS_SUFFIXES: tuple[str, ...] = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_BUILTINS = frozenset({"fs", "fs/promises", "child_process", "path", "os", "http", "https", "net", "crypto", "util", "url", "stream", "events", "buffer", "zlib", "timers", "timers/promises", "readline", "process"})


def ts_module_name(rel_path: str) -> str:
    for suffix in (".d.ts", *TS_SUFFIXES):
        if rel_path.endswith(suffix):
            rel_path = rel_path[: -len(suffix)]
            break
    parts = [p.replace(".", "_").replace("-", "_") for p in rel_path.split("/") if p]
    if parts and parts[-1] == "index" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts) or "index"


@dataclass(frozen=True, slots=True)
class TsModuleMap:
    def resolve(self, importer: str, specifier: str) -> str:
        if specifier.startswith("."):
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
            return ts_module_name(joined)
        bare = specifier.removeprefix("node:")
        if bare in _BUILTINS:
            return f"node:{bare}"
        for suffix in (".js", ".mjs", ".cjs", ".ts"):
            if specifier.endswith(suffix):
                specifier = specifier[: -len(suffix)]
        return f"npm:{specifier}"

    def fingerprint(self) -> str:
        return ""


EMPTY_TS_MODULE_MAP = TsModuleMap()
