"""Host adapters: agent hosts (Hermes, OpenClaw, ...) that use zkr as their memory.

A host adapter tells ``zkr plugins`` and the docs what the host is, how the adapter is installed,
and whether it is healthy on this machine.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

__all__ = ["HostAdapter", "HostHealth"]


class HostHealth(BaseModel):
    """The result of a host adapter's health check."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ok: bool
    detail: str


class HostAdapter(ABC):
    """Base class of host adapters; ``name`` is the adapter's id."""

    name: ClassVar[str]
    #: One or two sentences: how a user installs and enables this adapter.
    install: ClassVar[str]

    @abstractmethod
    def health(self) -> HostHealth:
        """Check that the host side is usable (installed, configured); never raises."""
