"""The rule base class: a rule's code, docs, examples and judgement live in one class."""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from agentguard.diagnostics import (
    Applicability,
    Confidence,
    EvidenceStep,
    Finding,
    Fix,
    Location,
    Severity,
    Span,
    StepKind,
)

if TYPE_CHECKING:
    from agentguard.diagnostics import FixOffer
    from agentguard.fixes.context import FixContext
    from agentguard.project.passes import Pass
    from agentguard.project.project_model import ProjectModel
    from agentguard.project.tool_facts import ToolFacts

QUESTIONS: dict[str, str] = {
    "Q1": "Does every tool declare its idempotency, risk and replay policy?",
    "Q2": "Do write tools carry an idempotency key built by the runtime?",
    "Q3": "Is a ledger entry written before the external call?",
    "Q4": "Does a timeout after the request was sent become SIDE_EFFECT_UNCERTAIN?",
    "Q5": "Can recovery or resume replay the last write?",
    "Q6": "Does the observation tell the model whether it may retry?",
    "Q7": "Can the trace tell whether the same input already ran?",
    "Q8": "Does an eval cover 'non-idempotent tool times out and is not replayed'?",
    "retry": "Are retries bound to the tool and limited to errors that are safe to retry?",
    "meta": "Could every file be read, and is every suppression still needed?",
}


@dataclass(frozen=True)
class Valid:
    """Code that must produce no finding of the rule.

    ``files`` adds more files to the example project (path -> text), for rules that
    look across files (tests, manifests, helpers in other modules).
    """

    code: str
    filename: str = "agent.py"
    files: dict[str, str] = field(default_factory=dict)
    config: dict[str, object] = field(default_factory=dict)


# (line, column, end line, end column) of a finding: 1-based, end column exclusive, as Span.
SpanTuple = tuple[int, int, int, int]


@dataclass(frozen=True)
class Invalid:
    """Code on which the rule reports exactly one finding at ``span`` in ``filename``, plus
    one at each span of ``also`` (same file), and nothing else (Fixit checks ranges too).

    ``fixed`` is the expected text of ``filename`` after the rule's fix, where it has one.
    """

    code: str
    span: SpanTuple
    filename: str = "agent.py"
    also: tuple[SpanTuple, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    fixed: str | None = None
    message_contains: str | None = None
    config: dict[str, object] = field(default_factory=dict)

    @property
    def spans(self) -> list[SpanTuple]:
        """Every span the rule must report, in file order."""
        return sorted((self.span, *self.also))


def mcp_tool_ts(
    body: str,
    *imports: str,
    tool: str = "create_order",
    description: str = "Place an order",
    param: str = "cartId",
) -> str:
    """A TypeScript MCP server for a rule's examples: the SDK's ``McpServer``, each of
    ``imports`` (``'axios from "axios"'``) and zod imported, a server made, and one tool
    registered with ``server.registerTool`` taking the string ``param``, whose callback
    runs ``body`` (its statements, indented four spaces)."""
    lines = [
        'import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";',
        *(f"import {name};" for name in imports),
        'import { z } from "zod";',
        "",
        'const server = new McpServer({ name: "shop", version: "1.0.0" });',
        "",
        "server.registerTool(",
        f'  "{tool}",',
        f'  {{ description: "{description}", inputSchema: {{ {param}: z.string() }} }},',
        f"  async ({{ {param} }}) => {{",
        body.rstrip("\n"),
        "  },",
        ");",
        "",
    ]
    return "\n".join(lines)


# The TypeScript answer AG601 and AG603 both hold up as right: the error logged, and the
# model told that the order may exist and not to retry.
ORDER_OUTCOME_UNKNOWN_TS = mcp_tool_ts(
    "    try {\n"
    '      const response = await axios.post("https://shop.example/orders", { cartId });\n'
    '      return { content: [{ type: "text", text: `Order ${response.data.id} placed` }] };\n'
    "    } catch (err) {\n"
    '      console.error("create_order failed", err);\n'
    "      return {\n"
    '        content: [{ type: "text", text: "The order may have been placed. Check its status; do not retry." }],\n'
    "        isError: true,\n"
    "      };\n"
    "    }\n",
    'axios from "axios"',
)


class Rule:
    """Base class of every rule.

    Subclasses set the class attributes, write their docs in the docstring (sections
    "What it does", "Why it matters", "Example", "Use instead", "Fix safety") and
    implement :meth:`check`, which reads facts from the project model and yields findings.
    """

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    question: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.ERROR
    # What kind of defect the rule finds, for code-scanning tags: "reliability" (a side
    # effect applied twice or an agent misled), "security" (what an attacker or a prompt
    # injection can use), "meta" (agentguard's own: files it could not read, stale
    # suppressions). Meta rules are found by their question.
    category: ClassVar[str] = "reliability"
    fix_applicability: ClassVar[Applicability | None] = None
    # Where the applicability depends on the finding ("safe (MCP) / unsafe"); then
    # ``fix_applicability`` is the least safe of them.
    fix_applicability_detail: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()
    # The passes whose results the rule reads beyond the project model's own (its shared
    # judgements, ``agentguard.checks.judgement``): the engine has the build run them.
    reads: ClassVar[tuple[type[Pass[Any]], ...]] = ()

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def short_description(cls) -> str:
        if cls.summary:
            return cls.summary
        doc = cls.docs()
        marker = "## What it does"
        if marker in doc:
            body = doc.split(marker, 1)[1].strip()
            return " ".join(body.split("\n\n", 1)[0].split())
        return cls.name.replace("-", " ")

    @classmethod
    def fix_label(cls) -> str | None:
        """How safe the rule's fix is, for people: "safe", "unsafe", "safe (MCP) / unsafe"."""
        if cls.fix_applicability is None:
            return None
        return cls.fix_applicability_detail or cls.fix_applicability.value

    @classmethod
    def kind(cls) -> str:
        """The rule's category, "meta" for every rule of the meta question."""
        return "meta" if cls.question == "meta" else cls.category

    @classmethod
    def help_uri(cls) -> str:
        return f"docs/rules/{cls.code}.md"

    def finding(
        self,
        location: Location,
        message: str,
        *,
        tool: ToolFacts | str | None = None,
        confidence: Confidence = Confidence.HIGH,
        evidence: Sequence[EvidenceStep] = (),
        fix: Fix | None = None,
        severity: Severity | None = None,
        symbol: str | None = None,
        node_text: str = "",
        related: Sequence[Location] = (),
    ) -> Finding:
        tool_name = tool if isinstance(tool, str) or tool is None else tool.name
        if symbol is None and tool is not None and not isinstance(tool, str):
            symbol = tool.symbol
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            confidence=confidence,
            location=location,
            message=message,
            question=self.question,
            tool=tool_name,
            evidence=tuple(evidence),
            fix=fix,
            symbol=symbol,
            node_text=node_text or message,
            related=tuple(related),
        )

    def tool_finding(
        self,
        project: ProjectModel,
        tool: ToolFacts,
        cause: Location,
        message: str,
        *,
        function: str | None = None,
        evidence: Sequence[EvidenceStep] = (),
        related: Sequence[Location] = (),
        confidence: Confidence = Confidence.HIGH,
        severity: Severity | None = None,
        symbol: str | None = None,
        node_text: str = "",
        fix: Fix | None = None,
    ) -> Finding:
        """A finding about ``tool`` whose cause is at ``cause`` (in the project function
        ``function``, found from the location when not given), located where the user
        acts: in the tool's own code (see ``checks/placement.py``). A cause outside the
        tool becomes the first related location, and the calls from the tool to it join
        the evidence unless the evidence already walks a chain of calls (an effect's), whose
        first call then places the finding."""
        from agentguard.checks.placement import in_tool

        chain = [s.location for s in evidence if s.kind is StepKind.CALL and s.location]
        placed = in_tool(project, tool, cause, function, via=chain[0] if chain else None)
        steps = placed.steps if not chain else ()
        head = 1 if evidence and evidence[0].kind is StepKind.TOOL else 0
        return self.finding(
            placed.location,
            message,
            tool=tool,
            evidence=(*evidence[:head], *steps, *evidence[head:]),
            related=(*placed.related, *related),
            confidence=confidence,
            severity=severity,
            symbol=symbol,
            node_text=node_text,
            fix=fix,
        )

    # --- fix: a rule with a fix overrides both (and sets ``fix_applicability``).

    def fix_offer(self, finding: Finding, project: ProjectModel) -> FixOffer | None:
        """Whether this finding has a fix and how safe it is, decided from facts alone
        (never LibCST: text output asks this for every finding). None: no fix."""
        return None

    def fixed_text(self, finding: Finding, ctx: FixContext) -> str | None:
        """The whole new text of the finding's file with the fix made, or None when this
        finding cannot be fixed with confidence. Asked only for findings with an offer.

        Builders import LibCST inside their bodies (never at module level), so that only
        the files being fixed are parsed and commands that build no edits never import it.
        """
        return None


def point(path: str, line: int, column: int = 1) -> Location:
    return Location(path, Span.point(line, column))


@cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class under agentguard.checks, sorted by code."""
    import agentguard.checks as package

    found: dict[str, type[Rule]] = {}
    # Rules live one module each in the checklist-question groups (checks/keys/ag201_...).
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        if info.ispkg or info.name.rsplit(".", 1)[-1] in {"base", "common", "shared"}:
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, Rule) and obj is not Rule and obj.code:
                if obj.code in found and found[obj.code] is not obj:
                    raise RuntimeError(f"two rules claim {obj.code}")
                found[obj.code] = obj
    return tuple(found[c] for c in sorted(found))


def rule_by_code(code: str) -> type[Rule] | None:
    code = code.upper()
    for rule in all_rules():
        if rule.code == code or rule.name == code.lower():
            return rule
    return None


def selectable_prefixes() -> frozenset[str]:
    """Every code and code prefix a selection may name: ``AG``, ``AG2``, ``AG20``, ``AG201``."""
    prefixes = {"ALL"}
    for rule in all_rules():
        prefixes.update(rule.code[:end] for end in range(2, len(rule.code) + 1))
    return frozenset(prefixes)


def unknown_selection(codes: Sequence[str], where: str) -> str | None:
    """Why ``codes`` (from ``where``: an option or a config key) name no rule, or None.

    A typo in a selection must not turn CI green by selecting nothing, so an unknown code
    or prefix is an error naming the code and the nearest valid ones, as ruff does."""
    valid = selectable_prefixes()
    full_codes = sorted(rule.code for rule in all_rules())
    for written in codes:
        code = written.strip().upper()
        if code in valid:
            continue
        near = difflib.get_close_matches(code, full_codes, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        return (
            f"{where}: unknown rule code or prefix `{written}`{hint}; "
            "`agentguard rules` lists the valid codes"
        )
    return None


def selected(code: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """ruff-style selection: the longest matching prefix wins; ALL selects everything."""

    def best(prefixes: Sequence[str]) -> int:
        lengths = [
            len(p) if p != "ALL" else 0
            for p in (x.upper() for x in prefixes)
            if p == "ALL" or code.startswith(p)
        ]
        return max(lengths, default=-1)

    chosen = best(select) if select else 0
    dropped = best(ignore)
    return chosen >= 0 and chosen > dropped if dropped >= 0 else chosen >= 0


def passes_read(rules: Iterable[type[Rule]]) -> tuple[type[Pass[Any]], ...]:
    """The passes ``rules`` declare they read, each once, in the order the rules name them."""
    found: dict[type[Pass[Any]], None] = {}
    for rule in rules:
        for step in rule.reads:
            found.setdefault(step, None)
    return tuple(found)
