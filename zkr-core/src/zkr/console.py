"""Console scripts answer with one line, never a Python traceback (issue 26).

Every distribution's command (``zkr-mcp``, ``zkr-web``, ``zkr-hermes``, ``zkr-openclaw-bridge``,
``zkr-postgres``) wraps its ``main`` in :func:`one_line_errors`: an error it did not foresee (a
file that is not a database, a folder it cannot write, an unreadable path) becomes
``PROG: message`` on stderr with exit status 1. ``ZKR_DEBUG=1`` shows the traceback instead, for a
bug report. The messages name no stored data: a zkr error's message is the contract's, and SQLite's
and the OS's name only the failure and the path given.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from zkr.envelope import error_message

__all__ = ["error_line", "one_line_errors"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def error_line(exc: BaseException) -> str:
    """One line saying what went wrong, without internals."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename is not None else ""
        message = f"{exc.strerror}{where}"
    else:  # what every surface says (zkr.envelope)
        message = error_message(exc)
    lines = message.strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def one_line_errors(prog: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R | int]]:
    """Decorate a console script's ``main``: unforeseen errors become ``PROG: …`` and status 1."""

    def decorate(main: Callable[_P, _R]) -> Callable[_P, _R | int]:
        @functools.wraps(main)
        def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R | int:
            try:
                return main(*args, **kwargs)
            except KeyboardInterrupt:
                return 130
            except Exception as exc:
                if os.environ.get("ZKR_DEBUG") == "1":
                    raise
                try:
                    sys.stderr.write(f"{prog}: {error_line(exc)}\n")
                    sys.stderr.flush()
                except (OSError, ValueError):  # stderr itself is gone: nothing left to tell
                    pass
                return 1

        return guarded

    return decorate
