"""Where a TypeScript import leads: relative paths, tsconfig aliases and baseUrl (extends
followed), workspace packages (dist/ mapped back to src/), Node built-ins and npm packages,
read from the fixture projects under fixtures/ts-modules/."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from agentguard.diagnostics import ScanProblem
from agentguard.engine.ts_projects import load_ts_module_map
from agentguard.facts.typescript.modules import (
    EMPTY_TS_MODULE_MAP,
    TS_SUFFIXES,
    TsModuleMap,
    ts_module_name,
)

from ..conftest import FIXTURES, write_project

TS_MODULES = FIXTURES / "ts-modules"
CONFIG_NAMES = ("package.json", "jsconfig.json")


def load(root: Path) -> tuple[TsModuleMap, list[ScanProblem]]:
    """The module map of ``root``, from the files a scan of it would find."""
    configs: list[tuple[str, str]] = []
    sources: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "node_modules"]
        for name in names:
            absolute = os.path.join(folder, name)
            rel = Path(absolute).relative_to(root).as_posix()
            if name in CONFIG_NAMES or (name.startswith("tsconfig") and name.endswith(".json")):
                configs.append((absolute, rel))
            elif name.endswith(TS_SUFFIXES):
                sources.append(rel)
    return load_ts_module_map(root, configs, sources)


@pytest.fixture(scope="module")
def monorepo() -> TsModuleMap:
    module_map, problems = load(TS_MODULES / "monorepo")
    # apps/agent extends @tsconfig/node20, which is not installed: left out quietly.
    assert problems == []
    return module_map


SERVER = "apps/agent/src/server.ts"
CORE_INDEX = "packages/core/src/index.ts"


@pytest.mark.parametrize(
    ("rel_path", "module"),
    [
        ("src/tools/email.ts", "src.tools.email"),
        ("src/tools/index.ts", "src.tools"),
        ("src/tools/index.js", "src.tools"),
        ("src/a.service.ts", "src.a_service"),
        ("send-email.ts", "send_email"),
        ("src/types.d.ts", "src.types"),
        ("src/App.tsx", "src.App"),
        ("lib/handler.mjs", "lib.handler"),
        ("app/api/[id]/route.ts", "app.api._id_.route"),
        ("index.ts", "index"),
    ],
)
def test_a_file_is_named_by_its_path(rel_path: str, module: str) -> None:
    assert ts_module_name(rel_path) == module


@pytest.mark.parametrize(
    ("importer", "specifier", "module"),
    [
        (SERVER, "./tools/refund.js", "apps.agent.src.tools.refund"),
        (SERVER, "./tools/refund", "apps.agent.src.tools.refund"),
        (SERVER, "./tools/refund.ts", "apps.agent.src.tools.refund"),
        (SERVER, "./tools/refund.mjs", "apps.agent.src.tools.refund"),
        (SERVER, "./config", "apps.agent.src.config"),
        (SERVER, "./config/index.js", "apps.agent.src.config"),
        (CORE_INDEX, "./tools/send-email.js", "packages.core.src.tools.send_email"),
        (CORE_INDEX, "../../billing/src/main", "packages.billing.src.main"),
        (CORE_INDEX, "..", "packages.core"),
        ("main.ts", "./agent.js", "agent"),
    ],
)
def test_relative_imports_name_the_project_file(
    monorepo: TsModuleMap, importer: str, specifier: str, module: str
) -> None:
    assert monorepo.resolve(importer, specifier) == module
    # Relative imports need no configuration at all.
    assert EMPTY_TS_MODULE_MAP.resolve(importer, specifier) == module


@pytest.mark.parametrize(
    ("specifier", "module"),
    [
        ("@/tools/orders", "apps.agent.src.tools.orders"),
        ("@/tools/orders.js", "apps.agent.src.tools.orders"),
        # An alias leads into the project even to a file the scan did not include.
        ("@/generated/client", "apps.agent.src.generated.client"),
        ("~config", "apps.agent.src.config"),
        # baseUrl (apps/agent) makes a bare path to a project file or folder a project import.
        ("src/tools/orders", "apps.agent.src.tools.orders"),
        ("src/tools", "apps.agent.src.tools"),
        ("src/no-such-file", "npm:src/no-such-file"),
    ],
)
def test_tsconfig_paths_and_base_url_lead_into_the_project(
    monorepo: TsModuleMap, specifier: str, module: str
) -> None:
    assert monorepo.resolve(SERVER, specifier) == module


def test_the_nearest_tsconfig_applies_with_what_it_extends(monorepo: TsModuleMap) -> None:
    # packages/core/tsconfig.json extends the root's base: its baseUrl (the root) and paths.
    assert monorepo.resolve(CORE_INDEX, "@acme/shared/ids") == "packages.shared.src.ids"
    assert monorepo.resolve(CORE_INDEX, "apps/agent/src/tools/orders") == (
        "apps.agent.src.tools.orders"
    )
    # apps/agent's own paths replace the base's; its files do not see "@/*" of another folder.
    assert monorepo.resolve(CORE_INDEX, "@/tools/orders") == "npm:@/tools/orders"
    # A file under no tsconfig.json (tsconfig.base.json is only extended) gets no aliases.
    assert monorepo.resolve("packages/billing/src/main.ts", "src/main") == "npm:src/main"


@pytest.mark.parametrize(
    ("specifier", "module"),
    [
        # "exports"["."] points at dist/; tsconfig's outDir dist / rootDir src maps it back.
        ("@acme/core", "packages.core.src"),
        ("@acme/core/utils", "packages.core.src.utils"),
        ("@acme/core/tools/send-email", "packages.core.src.tools.send_email"),
        # "main": build/esm/main.js, with no tsconfig: the build folder maps to src/.
        ("@acme/billing", "packages.billing.src.main"),
        # No "exports": a subpath is looked for in the package, then in its src/.
        ("@acme/shared/ids", "packages.shared.src.ids"),
        # No entry at all and no src/index: the package's folder.
        ("@acme/shared", "packages.shared"),
        ("legacy-mailer", "packages.legacy_mailer"),
    ],
)
def test_a_workspace_package_leads_to_its_source(
    monorepo: TsModuleMap, specifier: str, module: str
) -> None:
    assert monorepo.resolve(SERVER, specifier) == module


@pytest.mark.parametrize(
    ("specifier", "module"),
    [
        ("fs", "node:fs"),
        ("node:fs", "node:fs"),
        ("fs/promises", "node:fs/promises"),
        ("node:fs/promises", "node:fs/promises"),
        ("child_process", "node:child_process"),
        ("node:test", "node:test"),
        ("test", "npm:test"),
        ("@modelcontextprotocol/sdk/server/mcp.js", "npm:@modelcontextprotocol/sdk/server/mcp"),
        ("stripe", "npm:stripe"),
        ("lodash/fp.js", "npm:lodash/fp"),
        # A package whose name ends like a file keeps it.
        ("chart.js", "npm:chart.js"),
    ],
)
def test_built_ins_and_npm_packages(monorepo: TsModuleMap, specifier: str, module: str) -> None:
    assert monorepo.resolve(SERVER, specifier) == module
    assert EMPTY_TS_MODULE_MAP.resolve(SERVER, specifier) == module


def test_a_tsconfig_that_references_its_app_config_takes_its_aliases() -> None:
    module_map, problems = load(TS_MODULES / "web")
    assert problems == []
    # No baseUrl: the paths start at the tsconfig.app.json that sets them.
    assert module_map.resolve("src/App.tsx", "@/api/orders") == "src.api.orders"
    assert module_map.resolve("src/App.tsx", "react") == "npm:react"


def test_a_broken_config_is_named_and_the_rest_still_resolves() -> None:
    module_map, problems = load(TS_MODULES / "broken")
    assert sorted((p.path, p.reason) for p in problems) == [
        (
            "package.json",
            "invalid JSON: line 4 column 1: Expecting property name enclosed in double quotes",
        ),
        ("tsconfig.json", "invalid JSON: line 4 column 5: unexpected '\"'"),
    ]
    assert not any(p.reported for p in problems)
    assert module_map.resolve("src/index.ts", "./handler") == "src.handler"
    # the alias the broken tsconfig meant is unread, but no npm package is named `@/...`:
    # it leads to the one project file whose path ends so
    assert module_map.resolve("src/index.ts", "@/handler") == "src.handler"
    assert module_map.resolve("src/index.ts", "@/missing") == "npm:@/missing"


def test_extends_is_followed_into_node_modules_and_a_missing_file_is_named(
    tmp_path: Path,
) -> None:
    write_project(
        tmp_path,
        {
            # A shared config package: "${configDir}" is the folder of the extending config.
            "node_modules/@acme/tsconfig/base.json": """{
              "compilerOptions": {"baseUrl": "${configDir}", "paths": {"#/*": ["${configDir}/src/*"]}}
            }""",
            "tsconfig.json": '{"extends": "@acme/tsconfig/base.json"}',
            "src/agent.ts": "export const agent = {};\n",
            "src/tools/pay.ts": "export const pay = () => 1;\n",
            "tools/tsconfig.json": '{"extends": "../tsconfig.missing.json"}',
            "tools/cli.ts": "export {};\n",
        },
    )
    module_map, problems = load(tmp_path)
    assert module_map.resolve("src/agent.ts", "#/tools/pay") == "src.tools.pay"
    assert module_map.resolve("src/agent.ts", "src/tools/pay.js") == "src.tools.pay"
    # tools/ has a tsconfig.json of its own: the root's aliases do not apply there.
    assert module_map.resolve("tools/cli.ts", "#/tools/pay") == "npm:#/tools/pay"
    assert [(p.path, p.reason) for p in problems] == [
        ("tools/tsconfig.json", "extends '../tsconfig.missing.json', which is not found")
    ]


def test_the_fingerprint_follows_what_changes_answers(monorepo: TsModuleMap) -> None:
    again, _ = load(TS_MODULES / "monorepo")
    assert again.fingerprint() == monorepo.fingerprint()
    assert len({monorepo.fingerprint(), EMPTY_TS_MODULE_MAP.fingerprint()}) == 2
    copied = pickle.loads(pickle.dumps(monorepo))
    assert copied == monorepo and hash(copied) == hash(monorepo)
    assert copied.fingerprint() == monorepo.fingerprint()
    assert copied.resolve(SERVER, "@acme/core") == "packages.core.src"


def test_an_alias_whose_tsconfig_lies_outside_the_scan_leads_into_the_project(
    tmp_path: Path,
) -> None:
    # a subfolder of an app scanned alone: its `@/` imports are the app's own files
    write_project(
        tmp_path,
        {
            "utils/ai/tools.ts": 'import { track } from "@/utils/analytics/posthog";\n',
            "utils/analytics/posthog.ts": "export function track() {}\n",
            "utils/email/posthog.ts": "export function other() {}\n",
        },
    )
    module_map, _ = load(tmp_path)
    assert module_map.resolve("utils/ai/tools.ts", "@/utils/analytics/posthog") == (
        "utils.analytics.posthog"
    )
    # two files end so: which one is meant is not known
    assert module_map.resolve("utils/ai/tools.ts", "~/posthog") == "npm:~/posthog"


def test_an_alias_naming_the_scanned_folder_itself_leads_into_the_project(
    tmp_path: Path,
) -> None:
    # `agentguard check apps/web/utils`: `@/utils/email/provider` names the scanned folder
    root = tmp_path / "apps" / "web" / "utils"
    write_project(
        root,
        {
            "ai/tools.ts": 'import { createEmailProvider } from "@/utils/email/provider";\n',
            "email/provider.ts": "export function createEmailProvider() {}\n",
        },
    )
    module_map, _ = load(root)
    assert module_map.resolve("ai/tools.ts", "@/utils/email/provider") == "email.provider"
    assert module_map.resolve("ai/tools.ts", "@/web/utils/email/provider") == "email.provider"
    # a folder of another name is not the scanned one
    assert module_map.resolve("ai/tools.ts", "@/lib/email/provider") == "npm:@/lib/email/provider"
