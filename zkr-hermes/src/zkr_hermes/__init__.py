"""zkr as the memory provider of Hermes Agent 0.19.0.

``ZkrMemoryProvider`` is imported lazily: ``zkr-hermes install`` and the zkr plugin hook must work
without touching Hermes or opening anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zkr.version import __version__

__all__ = ["ZkrMemoryProvider", "__version__"]

if TYPE_CHECKING:
    from zkr_hermes.provider import ZkrMemoryProvider


def __getattr__(name: str) -> Any:
    if name == "ZkrMemoryProvider":
        from zkr_hermes.provider import ZkrMemoryProvider

        return ZkrMemoryProvider
    raise AttributeError(name)
