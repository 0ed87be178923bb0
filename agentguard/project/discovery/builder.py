"""The one place candidate tools become the project's tools.

Finders yield candidates one at a time; each is merged before its finder resumes, so a
finder (and every finder after it) sees through ``FoundTools`` what has been found so far.
"""

from __future__ import annotations

from agentguard.project.tool_facts import ToolFacts


class FoundTools:
    """The tools found so far, as the finders may ask about them."""

    def __init__(self, classes: set[str]) -> None:
        # The project's class names: two tool classes may share the entry method a common
        # base defines and still be two tools.
        self._classes = classes
        self._tools: list[ToolFacts] = []
        # The tools found so far by the functions they run (in the order found): a
        # candidate is merged with one of these, looked up rather than searched for.
        self._by_functions: dict[tuple[str, ...], list[ToolFacts]] = {}

    def any_runs(self, function: str) -> bool:
        """Whether a tool found so far runs ``function``."""
        return any(function in tool.functions for tool in self._tools)

    def runs_first(self, function: str) -> bool:
        """Whether a tool found so far runs ``function`` as its own work, not as one of
        the other functions a dispatch entry calls beside it."""
        return any(tool.functions[:1] == [function] for tool in self._tools)

    def functions(self) -> set[str]:
        """Every function a tool found so far runs."""
        return {function for tool in self._tools for function in tool.functions}

    def tools(self) -> list[ToolFacts]:
        """The tools found so far, in the order they were found."""
        return list(self._tools)

    def symbols(self) -> set[str]:
        return {tool.symbol for tool in self._tools}

    def named_in(self, name: str, path: str) -> bool:
        """Whether a tool called ``name`` is found in the file ``path``."""
        return any(tool.name == name and tool.path == path for tool in self._tools)

    def sorted(self) -> list[ToolFacts]:
        """The tools by file, line and name (the order every output lists them in)."""
        return sorted(self._tools, key=lambda t: (t.path, t.anchor.span.line, t.name))


class ToolBuilder(FoundTools):
    """Merges candidates: a function registered twice (decorated and listed, say) is one
    tool, the first registration's, gathering every declaration and option."""

    def add(self, candidate: ToolFacts) -> None:
        if candidate.inline is None:  # a dispatch branch is a tool of its own
            for existing in self._by_functions.get(tuple(candidate.functions), ()):
                if (
                    existing.symbol != candidate.symbol
                    and {
                        existing.symbol,
                        candidate.symbol,
                    }
                    <= self._classes
                ):
                    continue  # two tool classes sharing the ``_run`` a common base defines
                if existing.functions == candidate.functions and existing.functions:
                    existing.declarations += candidate.declarations
                    for key, value in candidate.options.items():
                        existing.options.setdefault(key, value)
                    return
        self._tools.append(candidate)
        self._by_functions.setdefault(tuple(candidate.functions), []).append(candidate)
