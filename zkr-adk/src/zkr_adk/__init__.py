"""zkr as a Google ADK memory service: :class:`ZkrMemoryService` (app → tenant, user → person,
session events → cited captures)."""

from zkr.version import __version__
from zkr_adk.service import ZkrMemoryService

__all__ = ["ZkrMemoryService", "__version__"]
