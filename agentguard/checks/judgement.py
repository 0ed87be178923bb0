"""Whole-project judgements the rules share, as passes of the build: a rule declares the
judgements it reads (``Rule.reads``), the engine hands them to ``build_project``, and each
is worked out once, before any rule runs, from the built model."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from agentguard.project.passes import Pass, PassResults
from agentguard.project.project_model import PROJECT_PASSES, ProjectModel

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

Judged = TypeVar("Judged", covariant=True)
Answer = TypeVar("Answer")


class Judgement(Pass[Judged]):
    """A pass of the checks layer: it reads the model the project passes build (and the
    judgements it adds to ``needs``)."""

    needs: ClassVar[tuple[type[Pass[Any]], ...]] = PROJECT_PASSES

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> Judged:
        return cls.judge(ProjectModel.built(index, results))

    @classmethod
    def of(cls: type[Pass[Answer]], project: ProjectModel) -> Answer:
        """This judgement of the built ``project``: a rule that reads it lists it in
        ``Rule.reads``, so the build has worked it out."""
        return project.results[cls]

    @classmethod
    @abstractmethod
    def judge(cls, project: ProjectModel) -> Judged:
        """The judgement, from the model."""
