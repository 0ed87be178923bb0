"""What a scan hands its readers: the findings (as a run memo records them), the config and
timings, and the linked project for the commands that read more than the findings. Its own
module, so the outputs and the fix machinery can name it without importing the pipeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentguard.config import Config
from agentguard.engine.baseline import BaselineOutcome
from agentguard.engine.display_paths import PathPresenter
from agentguard.engine.run_memo import ScanOutcome
from agentguard.project.project_model import ProjectModel


@dataclass(kw_only=True)
class ScanResult(ScanOutcome):
    """A scan's outcome (what the outputs read, as a run memo records it), its config and
    timings, and the linked project for the commands that read more than the findings."""

    root: Path
    config: Config
    timings: dict[str, float] = field(default_factory=dict)
    # Set by `check --baseline`: which findings were accepted, which entries went stale.
    baseline: BaselineOutcome | None = None
    # Whether the run memo answered (nothing was parsed or linked).
    from_memo: bool = False
    # The linked project; for a run memo's answer, how to link it on first use.
    _project: ProjectModel | None = field(default=None, repr=False)
    _link: Callable[[], ProjectModel] | None = field(default=None, repr=False, compare=False)
    _paths: PathPresenter | None = field(default=None, repr=False, compare=False)

    @property
    def paths(self) -> PathPresenter:
        """How every output shows this scan's paths: relative to the repository root."""
        if self._paths is None:
            self._paths = PathPresenter.for_config(self.config)
        return self._paths

    @property
    def project(self) -> ProjectModel:
        """The project model, for commands that read more than the findings (the report,
        the fixer). A run memo's answer links it now, from the cached facts."""
        if self._project is None:
            assert self._link is not None  # a result is linked, or knows how to link
            self._project = self._link()
        return self._project
