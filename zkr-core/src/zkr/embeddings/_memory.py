"""Giving freed memory back to the operating system after a large, one-off piece of work.

CPython returns small objects to its own arenas and glibc's ``malloc`` keeps freed pages in its
heap, so a process that built a large structure once (a dense lane from SQLite rows) stays that
much bigger for its whole life unless the C heap is trimmed. Large numpy arrays are separate
mappings and go back on their own; this is for everything else.
"""

from __future__ import annotations

__all__ = ["return_free_memory"]


def return_free_memory() -> None:
    """Ask glibc's allocator to give its free pages back (``malloc_trim(0)``); a no-op where the
    C library has no such function (macOS, musl, Windows)."""
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):
        return
    trim(0)
