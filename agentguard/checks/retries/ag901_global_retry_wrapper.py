from __future__ import annotations

import re
from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.retries.shared import only_transient
from agentguard.diagnostics import Confidence, Finding, Severity
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import RetryUse, ToolFacts

DISPATCH_TEXT = re.compile(r"(\[\s*\w*name\w*\s*\]|\.(a?invoke|a?run|call_tool|on_invoke_tool)$)")
REGISTRY_SUBSCRIPT = re.compile(r"^(?P<registry>[A-Za-z_]\w*)\[")
GLOBAL_RECEIVER = re.compile(
    r"(?i)(agent|graph|executor|chain|app|workflow|crew|runnable|pipeline)"
)


class GlobalRetryWrapper(Rule):
    """
    ## What it does
    Flags one retry placed around the dispatch of every tool: `ToolRetryMiddleware()` with no
    `tools=` filter, `set_node_defaults(retry_policy=...)`, `.with_retry()` on an agent,
    graph or executor, a retry decorator on the function that dispatches tool calls by name,
    or `[t.with_retry() for t in tools]`. Reported only when a tool the retry can reach
    writes without being idempotent, and the message names those tools: the ones in the
    dict it dispatches through (`TOOLS[name]`) when that is known, else the ones defined
    in the code its file imports, else every such tool of the project.

    ## Why it matters
    A global retry cannot know which tool it is repeating. It is right for `search_docs` and
    wrong for `create_order`: the timeout of the order call is retried like any other error.

    ## Example
    ```python
    agent = create_agent(model, tools=[search_docs, create_order],
                         middleware=[ToolRetryMiddleware(max_retries=3)])
    ```

    ## Use instead
    Bind retries to each tool (`@guarded(retry=RetryPolicy(...))`, or
    `ToolRetryMiddleware(tools=["search_docs"])`) and retry only errors that are safe to retry.

    ## Fix safety
    No automatic fix.
    """

    code, name, question = "AG901", "global-retry-wrapper", "retry"
    severity = Severity.ERROR
    VALID = (
        Valid(
            "import requests\n"
            "from langchain.agents import create_agent\n"
            "from langchain.agents.middleware import ToolRetryMiddleware\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def search_docs(query: str) -> str:\n"
            '    """Search the docs."""\n'
            '    return requests.get("https://docs.example/search", params={"q": query}).text\n\n'
            'agent = create_agent("gpt-5", tools=[search_docs], middleware=[ToolRetryMiddleware(tools=["search_docs"])])\n'
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain.agents import create_agent\n"
            "from langchain.agents.middleware import ToolRetryMiddleware\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n\n'
            'agent = create_agent("gpt-5", tools=[create_order], middleware=[ToolRetryMiddleware(max_retries=3)])\n',
            span=(11, 65, 11, 99),
        ),
        Invalid(
            "import requests\n"
            "from tenacity import retry, stop_after_attempt\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n\n'
            'TOOLS = {"create_order": create_order}\n\n'
            "@retry(stop=stop_after_attempt(3))\n"
            "def run_tool(name: str, args: dict) -> object:\n"
            "    return TOOLS[name].invoke(args)\n",
            span=(12, 2, 12, 35),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        risky = [t for t in project.tools if t.non_idempotent_writes()]
        if not risky:
            return
        for use in project.retry_uses():
            reason = None
            reached: list[ToolFacts] | None = None
            confidence = Confidence.HIGH
            construct = use.construct
            if use.kind == "global" and construct is not None and use.call is not None:
                if only_transient(project, use):
                    continue  # connect errors / 429: nothing reached the service
                reason = construct.what
            elif use.kind == "with_retry" and use.call is not None:
                receiver = (use.call.receiver or "").split(".")[-1]
                tool_names = {t.name for t in project.tools} | {
                    f.rsplit(".", 1)[-1] for t in project.tools for f in t.functions
                }
                if receiver in tool_names:
                    continue
                if receiver in {"t", "tool", "tool_"} or GLOBAL_RECEIVER.search(receiver):
                    reason = f"`{use.call.text}()` re-runs every tool of `{receiver}` on failure"
                    confidence = Confidence.MEDIUM
            elif use.kind in {"decorator", "wrapper"} and use.function is not None:
                if project.tool_for_function(use.function) is not None:
                    continue
                dispatches = [
                    c for c in project.calls_in(use.function) if DISPATCH_TEXT.search(c.text)
                ]
                if dispatches:
                    reason = f"the retry re-runs `{dispatches[0].text}(...)`, which dispatches every tool"
                    confidence = Confidence.MEDIUM
                    reached = _registry_tools(project, use.function, dispatches[0].text)
            if reason is None:
                continue
            repeated = _repeated(project, use, risky, reached)
            if not repeated:
                continue  # the tools it can reach all read, or are idempotent
            names = ", ".join(f"`{t.name}`" for t in repeated[:3])
            yield self.finding(
                use.location,
                f"Global retry over all tools: {reason}; it also repeats non-idempotent tools ({names})",
                confidence=confidence,
                node_text=use.text,
            )


def _registry_tools(project: ProjectModel, function: str, dispatch: str) -> list[ToolFacts] | None:
    """The tools a dispatch through a module-level dict (``TOOLS[name].invoke``) can reach:
    those whose function is one of the dict's values; None when the dict is not known."""
    match = REGISTRY_SUBSCRIPT.match(dispatch)
    facts = project.module_of(function)
    if match is None or facts is None:
        return None
    name = match.group("registry")
    registry = project.module_variable(facts.imports.get(name) or f"{facts.module}.{name}")
    if registry is None or registry.kind != "dict" or not registry.items:
        return None
    targets = {value.qualname for value in registry.items.values() if value.qualname}
    return [t for t in project.tools if targets.intersection(t.functions)]


def _imported_modules(project: ProjectModel, path: str) -> set[str]:
    """The project modules a file imports, directly or through the modules it imports, and
    its own: the code a retry there can call into."""
    start = project.modules.get(path)
    if start is None:
        return set()
    seen = {start.module}
    pending = [start]
    while pending:
        facts = pending.pop()
        for qualname in facts.imports.values():
            parts = qualname.split(".")
            for cut in range(len(parts), 0, -1):
                imported = project.modules_by_name.get(".".join(parts[:cut]))
                if imported is not None:
                    if imported.module not in seen:
                        seen.add(imported.module)
                        pending.append(imported)
                    break
    return seen


def _repeated(
    project: ProjectModel, use: RetryUse, risky: list[ToolFacts], reached: list[ToolFacts] | None
) -> list[ToolFacts]:
    """The non-idempotent writing tools a global retry can repeat, for its message: those of
    the registry it dispatches through when that is known; else those defined in the code its
    file imports (two projects in one folder do not share tools); else every one."""
    if reached is not None:
        ids = {id(t) for t in reached}
        return [t for t in risky if id(t) in ids]
    modules = _imported_modules(project, use.location.path)
    near = [
        t
        for t in risky
        if any(
            (facts := project.module_of(f)) is not None and facts.module in modules
            for f in t.functions
        )
    ]
    return near or risky
