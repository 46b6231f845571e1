"""zkr as a Google ADK memory service (:class:`ZkrMemoryService`)."""

from zkr.version import __version__

__all__ = ["__version__"]
