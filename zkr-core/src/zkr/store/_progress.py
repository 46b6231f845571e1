"""A progress line on stderr for long store work (a migration rebuilding an index), shown only
when stderr is a terminal: a pipe or a log file gets nothing, so JSON answers stay clean."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["terminal_progress"]

#: Seconds between two updates of the line.
_EVERY = 0.5


def terminal_progress(what: str, stream: TextIO | None = None) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback that redraws ``WHAT: done / total`` on *stream*
    (stderr) at most every half second and ends the line when ``done == total``; a no-op when
    the stream is not a terminal."""
    out = sys.stderr if stream is None else stream
    if not out.isatty():
        return lambda done, total: None
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < _EVERY:
            return
        last[0] = now
        out.write(f"\r{what}: {done:,} / {total:,}" + ("\n" if done >= total else ""))
        out.flush()

    return progress
