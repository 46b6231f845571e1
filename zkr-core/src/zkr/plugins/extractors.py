"""Claim extractors: plugins that propose claims from a captured text.

An extractor returns :class:`Suggestion` objects — the ``claim`` object of ``remember`` plus the
evidence text it came from. Suggestions are never stored by zkr; a caller that accepts one stores it
with ``remember`` (or ``correct``), which cites the evidence like any other claim.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from zkr.models import ClaimInput

__all__ = ["ClaimExtractor", "Suggestion"]


class Suggestion(BaseModel):
    """A proposed claim and the exact text that supports it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    claim: ClaimInput = Field(description="The `claim` object of a `remember` request.")
    evidence_text: str = Field(description="The span of the captured text the claim came from.")
    extractor: str = Field(description="The name of the extractor that proposed it.")


class ClaimExtractor(ABC):
    """Base class of claim extractors; ``name`` is the extractor's id."""

    name: ClassVar[str]

    @abstractmethod
    def extract(self, text: str, *, valid_from: int, subject: str = "user") -> list[Suggestion]:
        """Suggestions for *text*; ``valid_from`` is the capture time, ``subject`` who "I" is."""
