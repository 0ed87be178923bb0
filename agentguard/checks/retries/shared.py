"""Which retries are limited to errors that are safe to retry, for the retry rules."""

from __future__ import annotations

from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import RetryUse


def only_transient(project: ProjectModel, use: RetryUse) -> bool:
    """A retry limited to errors raised before the request reached the service, or to
    statuses that say it was not processed (429, 423)."""
    if use.statuses is not None:
        return set(use.statuses) <= project.catalog.transient_statuses
    if use.catches is None or not use.catches:
        return False
    transient = project.catalog.transient_exceptions
    return all(name in transient or name.rsplit(".", 1)[-1] in transient for name in use.catches)
