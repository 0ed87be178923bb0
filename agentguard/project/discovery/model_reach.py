"""Which functions of a project call a model, directly or through its own functions.

A model is called through a model API that takes tool specs or an answer's schema (the
catalogue's ``spec_sinks`` and ``answer_schemas``), or by an HTTP POST to a model's host.
Finders ask it whether a prompt or a description of tools is written where it reaches one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.facts.module_facts import Call, ModuleFacts
from agentguard.project.sink_keys import local_value

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

# How many callers up a function is looked for that calls a model.
CALLER_HOPS = 3


class ModelReach:
    """Which functions call a model, directly or through the project's functions: worked
    out forward from the few functions asked about."""

    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        catalog = project.catalog
        models: set[str] = set()
        posts: set[str] = set()
        for resolved in (True, False):
            models |= project.callees_matching(catalog.spec_sinks, resolved=resolved)
            models |= project.callees_matching(catalog.answer_schemas, resolved=resolved)
            posts |= project.callees_matching(catalog.request_bodies, resolved=resolved)
        self.calling: set[str] = set()
        for site in project.source_call_sites():
            call = site.call
            if call.function is None:
                continue
            named = {site.callee, call.callee}
            if site.target is None and site.caller is not None:
                # ``asyncio.to_thread(client.chat.completions.create, ...)``: the model API a
                # callable runner is handed is what the call runs
                handed = project.followed_site(call, site.caller, site.facts)
                if handed.call is not call and any(
                    matcher.first(handed.callee, handed.call.callee) is not None
                    for matcher in (catalog.spec_sinks, catalog.answer_schemas)
                ):
                    self.calling.add(call.function)
                    continue
            if named & models or (named & posts and to_a_model(project, call, site.facts)):
                self.calling.add(call.function)
        self._reaches: dict[str, bool] = {}

    def reaches(self, qualname: str, hops: int = CALLER_HOPS) -> bool:
        if qualname in self.calling:
            return True
        known = self._reaches.get(qualname)
        if known is not None or hops == 0:
            return bool(known)
        self._reaches[qualname] = False  # a cycle ends here
        found = any(
            self.reaches(target, hops - 1)
            for _, target in self.project.call_edges(qualname)
            if target in self.project.functions
        )
        self._reaches[qualname] = found
        return found

    def near(self, qualname: str | None) -> bool:
        """Whether ``qualname`` reaches a model or is called by a function that does (a
        module's constant: the prompt's text and the dispatch decide)."""
        if qualname is None:
            return True
        if self.reaches(qualname):
            return True
        return any(self.reaches(caller) for caller in self.project.callers_of(qualname))


def to_a_model(project: ProjectIndex, call: Call, facts: ModuleFacts) -> bool:
    """Whether an HTTP POST goes to a model's host (``requests.post(HF_URL, json=...)``)."""
    if not call.args:
        return False
    url = call.args[0]
    if url.kind == "name":
        fn = project.function(call.function) if call.function else None
        held = local_value(project, url.text, fn, facts, call.order) if fn else None
        url = held or project.held_value(url.text, fn, facts) or url
    written = url.string() or "".join(p.const for p in url.parts if isinstance(p.const, str))
    return bool(written) and project.catalog.post_read_hosts.search(written) is not None
