"""The modules Node.js builds in: an import of one names the runtime, not a package.

Language knowledge, read by the TypeScript front end's module resolution
(``agentguard.facts.typescript.modules``): ``import { readFile } from "fs/promises"`` and
``"node:fs/promises"`` both name ``node:fs/promises``, never an npm package."""

from __future__ import annotations

# Importable bare or with the "node:" scheme (Node 22), their public subpaths included.
NODE_BUILTINS: frozenset[str] = frozenset(
    {
        "assert",
        "assert/strict",
        "async_hooks",
        "buffer",
        "child_process",
        "cluster",
        "console",
        "constants",
        "crypto",
        "dgram",
        "diagnostics_channel",
        "dns",
        "dns/promises",
        "domain",
        "events",
        "fs",
        "fs/promises",
        "http",
        "http2",
        "https",
        "inspector",
        "inspector/promises",
        "module",
        "net",
        "os",
        "path",
        "path/posix",
        "path/win32",
        "perf_hooks",
        "process",
        "punycode",
        "querystring",
        "readline",
        "readline/promises",
        "repl",
        "stream",
        "stream/consumers",
        "stream/promises",
        "stream/web",
        "string_decoder",
        "sys",
        "timers",
        "timers/promises",
        "tls",
        "trace_events",
        "tty",
        "url",
        "util",
        "util/types",
        "v8",
        "vm",
        "wasi",
        "worker_threads",
        "zlib",
    }
)

# Only with the scheme: a bare "test" or "sqlite" is an npm package of that name.
NODE_SCHEME_ONLY_BUILTINS: frozenset[str] = frozenset({"sea", "sqlite", "test", "test/reporters"})
