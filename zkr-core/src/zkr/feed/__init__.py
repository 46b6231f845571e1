"""The export feed: commits appended by every mutation, read as bounded pages (``export``) and
applied elsewhere (``apply``)."""

from __future__ import annotations

from zkr.feed.apply import apply
from zkr.feed.export import export

__all__ = ["apply", "export"]
