from __future__ import annotations

from collections.abc import Iterator

from agentguard.checks.base import Invalid, Rule, Valid
from agentguard.checks.common import effect_phrase, tool_evidence
from agentguard.checks.keys.shared import declares_create_or_get, describes_dedupe
from agentguard.diagnostics import Confidence, EvidenceStep, Finding, Severity, StepKind
from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import ToolFacts


class MissingIdempotencyKey(Rule):
    """
    ## What it does
    Flags a non-idempotent remote write (HTTP POST/PATCH, a payment, a message, a ticket, a
    cloud create) that reaches its service without an idempotency key: no `Idempotency-Key`
    header, no `idempotency_key=` (Stripe), `ClientToken` (AWS), dedupe id, and no
    `@guarded(key=...)` on the tool.

    Local writes (files, a local git repository) and writes to the application's own
    database (a SQL statement, an ORM's create, a lease claimed in its cache) have no service
    downstream that takes a key; they are judged by AG101 (a unique constraint or an upsert
    is how a database deduplicates). Idempotent verbs (PUT, DELETE by id) need no key,
    nor does a POST that sets a state (`/issue/{key}/transitions`) or links existing things
    by id (`/cards/{id}/idMembers`). The request decides, not the verb alone: a PUT or save
    that names what it writes with `uuid4()` or the time, or writes back a list it read
    after appending to it, repeats its effect. A create behind a guard needs no key: an
    `If-None-Match`/`If-Match` precondition, a lookup of the same natural key first
    (check-then-create), a name that declares a create-or-get (`get_or_create_label`), or a
    description that documents the service's own dedupe ("The rating is idempotent per
    search id"; "not idempotent" says the opposite).

    Declarations are evidence: a tool that declares a create (MCP `idempotentHint=False`
    with `destructiveHint=False`) is flagged at its declaration when no key is found, even
    where no write is found in its code; a tool declared idempotent is not flagged on a
    verb's guess (AG102 reports the disagreement).

    A write made through a client shared by several tools is reported in each tool, at the
    tool's own call that leads to it, with the shared sink as evidence.

    ## Why it matters
    The client times out after the service committed; the retry (the model's or a
    library's) arrives as a new request and the order is placed twice.

    ## Example
    ```python
    @tool
    def create_order(cart_id: str) -> dict:
        return requests.post(ORDERS_URL, json={"cart": cart_id}).json()
    ```

    ## Use instead
    ```python
    @tool
    @guarded(runtime, risk="write", idempotency="conditional", replay="never",
             key=lambda call: f"order:{call.user_id}:{call.args['cart_id']}:{call.run_id}")
    def create_order(cart_id: str) -> dict:
        headers = {"Idempotency-Key": current_call().idempotency_key}
        return requests.post(ORDERS_URL, json={"cart": cart_id}, headers=headers).json()
    ```

    ## Fix safety
    No automatic fix: the key's business parts (user, resource, run, approval) must be chosen.
    """

    code, name, question = "AG201", "missing-idempotency-key", "Q2"
    severity = Severity.ERROR
    VALID = (
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n"
            "from agentguard.runtime import current_call\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    headers = {"Idempotency-Key": current_call().idempotency_key}\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}, headers=headers).json()\n'
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def rename_order(order_id: str, label: str) -> dict:\n"
            '    """Set an order label."""\n'
            '    return requests.put(f"https://shop.example/orders/{order_id}/label", json={"label": label}).json()\n'
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_page(slug: str, body: str) -> dict:\n"
            '    """Create a wiki page unless it exists."""\n'
            '    headers = {"If-None-Match": "*"}\n'
            '    return requests.post(f"https://wiki.example/pages/{slug}", json={"body": body}, headers=headers).json()\n'
        ),
        Valid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def rate_search(search_id: str, rating: int) -> dict:\n"
            '    """Rate a search. The rating is idempotent per search id."""\n'
            '    url = f"https://search.example/searches/{search_id}/rating"\n'
            '    return requests.post(url, json={"rating": rating}).json()\n'
        ),
        Valid(
            "from pathlib import Path\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def save_note(text: str) -> str:\n"
            '    """Append a note."""\n'
            '    with open("notes.txt", "a") as fh:\n'
            "        fh.write(text)\n"
            '    return "saved"\n'
        ),
    )
    INVALID = (
        Invalid(
            "import requests\n"
            "from langchain_core.tools import tool\n\n"
            "@tool\n"
            "def create_order(cart_id: str) -> dict:\n"
            '    """Create an order."""\n'
            '    return requests.post("https://shop.example/orders", json={"cart": cart_id}).json()\n',
            span=(7, 12, 7, 80),
            message_contains="requests.post",
        ),
        Invalid(
            "import stripe\n"
            "from agents import function_tool\n\n"
            "@function_tool\n"
            "def charge(customer: str, cents: int) -> str:\n"
            "    intent = stripe.PaymentIntent.create(customer=customer, amount=cents, currency='eur')\n"
            "    return intent.id\n",
            span=(6, 14, 6, 90),
        ),
        Invalid(
            "from mcp.server.fastmcp import FastMCP\n"
            "from mcp.types import ToolAnnotations\n"
            "from crm_sdk import Crm\n\n"
            'mcp = FastMCP("crm")\n'
            "crm = Crm()\n\n"
            "@mcp.tool(annotations=ToolAnnotations(destructiveHint=False, idempotentHint=False))\n"
            "def add_contact(name: str) -> dict:\n"
            "    return crm.contacts.make(name)\n",
            span=(8, 77, 8, 82),
        ),
    )

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for tool in project.tools:
            guarded = tool.guarded
            if guarded is not None and guarded.has_key:
                continue
            decl = tool.declaration
            flagged = keyed = False
            for effect in tool.effects:
                if not (effect.remote_write and effect.non_idempotent):
                    continue
                if effect.key is not None:
                    keyed = True
                    continue
                if effect.heuristic and decl is not None and decl.says_idempotent:
                    continue  # an explicit declaration beats a verb's guess
                if declares_create_or_get(project.catalog, tool, effect):
                    keyed = True  # a declared create-or-get: a repeat finds what it made
                    continue
                if describes_dedupe(project, tool):
                    keyed = True  # the service deduplicates, as the description says
                    continue
                flagged = True
                yield self.tool_finding(
                    project,
                    tool,
                    effect.site,
                    f"Tool `{tool.name}` makes {effect_phrase(effect)} with no "
                    "idempotency key: a retry after a timeout repeats it",
                    function=effect.function or None,
                    confidence=effect.confidence,
                    evidence=tool_evidence(tool, effect),
                    node_text=f"{tool.name}:{effect.call.text}",
                )
            if not (flagged or keyed) and _declared_create(tool):
                yield self._declared(tool)

    def _declared(self, tool: ToolFacts) -> Finding:
        """A tool that declares a create while inference found no keyed write to judge."""
        decl = tool.declaration
        assert decl is not None
        where = decl.fields.get("idempotent_hint") or decl.fields.get("idempotency")
        said = [
            name
            for name in ("idempotent_hint", "destructive", "idempotency", "risk")
            if name in decl.fields
        ]
        step = EvidenceStep(
            StepKind.DECLARATION,
            where or decl.location,
            subject=decl.source,
            detail=", ".join(said) or "non-idempotent",
        )
        head = EvidenceStep(StepKind.TOOL, tool.anchor, subject=tool.name, detail=tool.framework)
        return self.finding(
            where or decl.location,
            f"Tool `{tool.name}` declares a non-idempotent write that adds something on each "
            f"call ({decl.source}) and passes no idempotency key: a retry after a timeout "
            "repeats it",
            tool=tool,
            confidence=Confidence.MEDIUM,
            evidence=(head, step),
            node_text=f"{tool.name}:declared",
        )


def _declared_create(tool: ToolFacts) -> bool:
    """The tool declares itself a create (``ToolFacts.declaration``), and what inference found
    does not say otherwise: no write that stays local, nothing judged from a schema alone."""
    decl = tool.declaration
    if decl is None or decl.source == "guarded" or not decl.says_additive_non_idempotent:
        return False
    if tool.schema_only:
        return False
    writes = tool.writes()
    return not writes or any(e.remote_write for e in writes)
