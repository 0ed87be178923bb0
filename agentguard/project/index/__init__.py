"""The project index: the read-only tables every pass and rule reads, built once from the
per-file facts. Three jobs, one module each: the symbol table (``symbols``), the type
guesses (``guessed_types``) and call resolution (``resolution``, whose ``ProjectIndex``
is all three); it imports no pass."""

from __future__ import annotations

from agentguard.project.index.call_site import CallSite
from agentguard.project.index.resolution import ProjectIndex

__all__ = ["CallSite", "ProjectIndex"]
