"""docs/configuration.md documents every key of the config schema, and is generated from it.

The key list, types and allowed values come from agentguard/data/config.schema.json; what each
key means is written below, next to the generator. Regenerate after changing either:

    python -m tests.test_readme_config
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from .test_readme import check_in

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "agentguard" / "data" / "config.schema.json"
REFERENCE = ROOT / "docs" / "configuration.md"
README = ROOT / "README.md"

RULE_CODE_PATTERN = "^(ALL|AG[0-9]{0,3})$"

# What each key does, in Markdown. Defaults are stated here because the schema holds none.
MEANINGS: dict[str, str] = {
    "select": """\
Rules to report: codes (`AG201`), prefixes (`AG2` is every AG2xx rule) or `ALL`. Default:
every rule. `--select` on the command line replaces this list. Between `select` and `ignore`,
the longest matching prefix wins, as in ruff: `select = ["AG2"]` with `ignore = ["AG204"]`
reports AG201, AG202 and AG203.""",
    "ignore": """\
Rules not to report, as codes or prefixes. `--ignore` on the command line adds to this list.""",
    "extend-select": """\
Codes or prefixes added to `select` (to the default, every rule, when `select` is not set), as
in ruff: useful next to a `select` that narrows the set, or to bring back a rule an `ignore`
prefix drops (`ignore = ["AG2"]` with `extend-select = ["AG201"]` reports AG201, the longer
prefix). `--select` on the command line replaces both.""",
    "include": """\
Gitignore-style patterns, relative to the project root: when set, only the files that match
one are scanned. Default: every Python file (`.py`, `.pyi`) and every JSON or YAML file
(`.json`, `.yaml`, `.yml`) under the paths given.""",
    "exclude": """\
Files and folders never scanned; replaces the default list. A plain name (`.venv`; `build/`
for folders only) matches at any depth, anything else is a gitignore-style pattern relative to
the project root. Default: `.git`, `.hg`, `.svn`, `.venv`, `venv`, `.tox`, `.nox`,
`node_modules`, `__pycache__`, `__pypackages__`, `.mypy_cache`, `.ruff_cache`,
`.pytest_cache`, `.agentguard_cache`, `build`, `dist`, `site-packages`. To keep the defaults
and add your own, use `extend-exclude`.""",
    "extend-exclude": """\
More files and folders never scanned, added to `exclude` (to its defaults when `exclude` is
not set). Same pattern forms as `exclude`.""",
    "respect-gitignore": """\
Whether files your `.gitignore` files ignore are left out. Default: `true`; a `.gitignore` in
a subfolder applies to that folder, as in git.""",
    "prefilter": """\
Deprecated; it has no effect. Every file is parsed (from the cache when unchanged), so every
syntax error is reported whatever this key says. It is still accepted so that an existing
config keeps working, and every run that reads it says so on stderr; remove it.""",
    "per-file-ignores": """\
A table from a file pattern to the codes or prefixes not reported in matching files:
`{ "scripts/*" = ["AG9"], "conftest.py" = ["ALL"] }`. A pattern is matched (shell-style,
`fnmatch`) against the path relative to the project root and against the file name.""",
    "fail-on": """\
The lowest severity that makes `agentguard check` exit 1. Default: `error`. `--fail-on` on the
command line overrides it; `--exit-zero` always exits 0.""",
    "max-file-size": """\
Files larger than this many bytes are not read; the run names each one it skipped, with its
size. Default: `2000000` (2 MB).""",
    "min-confidence": """\
Findings below this confidence are not reported. Default: `low` (everything). Each finding's
confidence is printed in its text header and given in the JSON output.""",
    "jobs": """\
Processes that parse files in every command that scans (`check`, `fix`, `report`,
`baseline`). Default: `0`, one per core. `--jobs N` on the command line overrides it.""",
    "cache-dir": """\
Where every command that scans keeps the cache of per-file facts and recorded runs, and
what `agentguard clean` removes: absolute (`~` allowed), or relative to the project root.
Default: a folder named after the project's path in the user's cache,
`$AGENTGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/agentguard`, else `~/.cache/agentguard`
(`%LOCALAPPDATA%\\agentguard\\Cache` on Windows). A folder inside the scanned tree is refused
with a warning and the check runs without a cache: a checkout could commit entries there
and so decide what is reported about it (`agentguard clean` removes the `.agentguard_cache/`
earlier versions kept in the project). `--cache-dir` on the command line overrides it.""",
    "baseline": """\
The baseline file (`agentguard baseline create FILE`) that `agentguard check` compares with
when `--baseline` is not given, relative to the folder of the config file:
`baseline = "agentguard-baseline.json"`. The pre-commit hook and the GitHub Action read it
here, so a committed baseline needs no extra arguments. Default: none.""",
    "ledger-functions": """\
Qualified names of your own functions that durably record a tool call before it runs
(`"app.audit.record_start"`; `*` matches within a dotted name). A tool that calls one before
its side effect has a ledger entry written first (AG301), as a `@guarded` tool does.""",
    "read-only-mcp-servers": """\
Remote MCP servers whose tools only read, named by the `name=` an OpenAI Agents SDK MCP client
is built with or the `url` in its `params`. Their client's `max_retry_attempts` re-sends only
reads, so the timeout-retry rule (AG402) does not flag it. A remote server's tools cannot be seen
from the code, so only this declaration can tell agentguard they are safe to re-send.""",
    "test-paths": """\
More files or folders that hold tests (gitignore-style patterns, relative to the project root),
besides `test_*.py`, `*_test.py`, `conftest.py` and anything under `tests/` or `test/`. The
eval-coverage rule (AG801) looks for fault-injection tests there.""",
    "frameworks": """\
Teach agentguard how your own framework, or a wrapper around one, declares tools. Each key is
a framework name; a list joins the built-in framework's list of the same name (a new name adds
a framework). Keys per framework: `decorators`, `factories`, `base_classes`, `registries`,
`structural_bases`, `metadata_kwarg`, `annotations_kwarg`, `plugin_entries`, `lowlevel`, as in
the built-in frameworks catalogue (schema: `agentguard/data/frameworks.schema.json`); any other
key is an error that names it.

```toml
[tool.agentguard.frameworks.acme]
decorators = ["acme.agents.tool"]
```""",
    "effects": """\
Teach agentguard your own clients' side effects. `sinks` are calls that change the world:
`match` (qualified names, `*` globs), `effect` (`write`, `network_write`, `destructive`,
`exec`, `payment`, `message`, `unknown`, or `http`/`sql`/`file_open`/`graphql`, judged from
the call's arguments: method, statement, mode, GraphQL document), `idempotent`, `key` (how the
call takes an idempotency key: `kwarg`, `header`, `option` or `sql_conflict`, or `arg` with
`field` for a field of a JavaScript options object, `{arg = -1, field = "idempotencyKey"}`) and
the schema's other fields (`method`, `method_from` (`arg`, `kwarg`, `field`), `remote`,
`confidence`, `receiver_hint`, `ecosystem` (`python`, the default, or `npm` for a sink of
TypeScript and JavaScript code, named `npm:<package>.<export>` or `node:<module>.<name>`),
`only_with`: a sink only when keyword arguments are written with these values, as
`NamedTemporaryFile(delete=False)`). Your sinks take precedence over the built-in ones, in
either language. `reads` lists calls that only
read; `verbs` adds words to the verb lists that name writes and reads; `keys` adds the
keyword and header names an idempotency key is passed by (`kwargs`, `headers`), calls whose
result is new on every call (`fresh_calls`) or hashes its input (`hash_calls`), and name parts
that scope a key to a user or run (`scope_words`); `sql` adds first words of statements that
write or only read (`write_verbs`, `read_verbs`); `url_name_words` adds name parts that say a
name holds a URL. Schema: `agentguard/data/effects.schema.json`.

```toml
[[tool.agentguard.effects.sinks]]
match = ["app.orders_client.OrdersClient.create"]
effect = "network_write"
idempotent = false
key = { kwarg = "idem_key" }
```""",
    "retries": """\
Teach agentguard your own retry constructs, so that the retry rules (AG9xx) see them:
`decorators`, `wrappers`, `http_retry`, `global`, `node_retry` (each entry: `match` and the
construct's details), `client_retry` (a client constructor or session class and the argument
or mounted adapter carrying its retry setting: `setting`, `holders`, `requires_kwarg`,
`mount`), `transient_exceptions`, `transient_statuses` (HTTP statuses that say a request was
not processed: a loop that sends again only on them is fine), `catch_all_exceptions`. Lists
are added to the built-in ones. Schema: `agentguard/data/retries.schema.json`.

```toml
[[tool.agentguard.retries.decorators]]
match = ["acme.resilience.retrying"]
library = "acme"
```""",
    "checklist": """\
Teach agentguard what the checklist rules (AG3xx-AG8xx) know: for example, under `timeouts`,
your own SDK's timeout classes (`exceptions`), the broader errors that include one
(`transport_errors`, a table from the class to what it includes), the keyword arguments that
set a timeout (`timeout_kwargs`) and the words that say an outcome is unknown
(`uncertain_pattern`). Lists are added to the built-in ones, tables merge, a pattern replaces
the built-in one. Schema: `agentguard/data/checklist.schema.json`.

```toml
[tool.agentguard.checklist.timeouts]
exceptions = ["acme_sdk.errors.DeadlineError"]
transport_errors = { "acme_sdk.errors.NetworkError" = "acme_sdk.errors.DeadlineError" }
```""",
    "tool-functions": """What every framework's tools share: `injected_params` (parameters your framework or executor
fills in itself, never the model's arguments; `self` and `cls` always are),
`declaration_decorators` (decorators whose keyword arguments declare a tool's `risk`,
`idempotency` and `replay`, as `@guarded` does; `*` globs allowed) and `annotation_hints`
(the MCP annotation names that set `read_only`, `destructive`, `idempotent_hint` or
`open_world`), `option_hints` (keywords of a tool's decorator or registration call that
declare it outright, as a registry's `side_effect=` flag does: `side_effect`, `read_only`,
`destructive`, `idempotent_hint`), `field_validators` (validators a model runs on its input
before it is built, as pydantic's `@model_validator(mode="before")` does: what they store under
a field's name, `values["client"] = Client(...)`, types that field) and
`context_carriers` (`attributes`: a generic class your framework hands a tool, by the
attribute that holds the dependencies its first type argument types, as `RunContext[Deps]`
makes `ctx.deps` a `Deps`; `packages`: where such a class is imported from),
`spec_sinks` (model API calls that take your tools' specs: `match`, the callees, `*` globs
allowed, and `kwargs`, the keywords holding the specs, which are followed back to the tool
classes that write them), `answer_schemas` (model API calls that take the schema the answer
must fit, the same way: a field of that model typed as a union of models each tagged by a
`Literal` string makes each member a tool named by its tag) and `module_scans` (calls that import a module chosen at run time
or list its members: a function making one that keeps the subclasses of a class it is
handed loads tools by name). Lists
are added to the built-in ones of `rules/frameworks.yaml`. Schema: the `tool_functions`
section of `agentguard/data/frameworks.schema.json`.

```toml
[tool.agentguard.tool-functions]
injected_params = ["deps"]
declaration_decorators = ["acme.policy.declared"]
```""",
}


def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return loaded


def describe_type(spec: dict[str, Any]) -> str:
    """A reader's name for a schema fragment: "list of rule codes", "one of `a`, `b`"..."""
    if "enum" in spec:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in spec["enum"])
    kind = spec.get("type")
    if kind == "array":
        items = spec.get("items", {})
        if items.get("pattern") == RULE_CODE_PATTERN:
            return "list of rule codes or prefixes"
        return f"list of {describe_type(items)}s"
    if kind == "object":
        values = spec.get("additionalProperties")
        if isinstance(values, dict):
            return "table of " + describe_type(values).replace("list of", "lists of", 1)
        return "table"
    if kind == "integer" and "minimum" in spec:
        return f"integer, at least {spec['minimum']}"
    if kind == "boolean":
        return "`true` or `false`"
    return str(kind or "value")


def render(config_schema: dict[str, Any]) -> str:
    keys: dict[str, dict[str, Any]] = config_schema["properties"]
    lines = [
        "# Configuration reference",
        "",
        "<!-- Generated by `python -m tests.test_readme_config` from",
        "agentguard/data/config.schema.json and the meanings in tests/test_readme_config.py;",
        "edit those, not this file. -->",
        "",
        "agentguard reads `[tool.agentguard]` in `pyproject.toml`, or `agentguard.toml` (the",
        "same keys at the top level, or under `[tool.agentguard]`): the nearest one at or above",
        "the first path scanned, up to the repository root. `--config FILE` names one",
        "explicitly. An unknown key or a wrong value stops the run with exit code 2 and a",
        "message naming the file and the key. Paths and patterns are relative to the folder",
        "that holds the configuration file (the project root), as in ruff, even where the",
        "outputs show paths relative to the repository root above it.",
        "",
        "| key | value |",
        "| --- | --- |",
    ]
    lines += [f"| [`{key}`](#{key}) | {describe_type(spec)} |" for key, spec in keys.items()]
    for key, spec in keys.items():
        lines += ["", f"## {key}", "", f"*{describe_type(spec)}*", "", MEANINGS[key]]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render(schema())
    if argv == ["--check"]:
        return 0 if REFERENCE.read_text(encoding="utf-8") == text else 1
    REFERENCE.write_text(text, encoding="utf-8")
    return 0


def test_every_schema_key_has_a_meaning_and_no_meaning_is_stale() -> None:
    keys = set(schema()["properties"])
    assert not keys - set(MEANINGS), f"undocumented config keys: {sorted(keys - set(MEANINGS))}"
    assert not set(MEANINGS) - keys, f"documented keys not in the schema: {set(MEANINGS) - keys}"


def test_the_committed_reference_is_generated_from_the_schema() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render(schema()), (
        "docs/configuration.md is out of date: run `python -m tests.test_readme_config`"
    )


def test_the_reference_gives_every_key_a_section_and_the_readme_links_it() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    for key in schema()["properties"]:
        assert f"\n## {key}\n" in text, key
    assert "(docs/configuration.md)" in README.read_text(encoding="utf-8")


def toml_examples() -> list[tuple[str, str]]:
    """Every TOML block of the README and the reference, named by file and position."""
    found = []
    for path in (p for p in (README, REFERENCE) if p.exists()):
        blocks = re.findall(r"```toml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
        found += [(f"{path.name}#{n}", block) for n, block in enumerate(blocks)]
    return found


AGENT = """\
import requests
from langchain_core.tools import tool


@tool
def create_order(cart_id: str) -> dict:
    \"\"\"Place an order for the cart.\"\"\"
    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()
"""


@pytest.mark.parametrize(("where", "example"), toml_examples())
def test_every_toml_example_is_a_configuration_agentguard_accepts(
    tmp_path: Path, where: str, example: str
) -> None:
    assert "[tool.agentguard" in example, f"{where}: show the section a user pastes it into"
    (tmp_path / "pyproject.toml").write_text(example, encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    done = check_in(tmp_path, ".")
    assert done.returncode in (0, 1), f"{where}: {done.stdout}{done.stderr}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
