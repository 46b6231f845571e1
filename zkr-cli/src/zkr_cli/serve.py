"""``zkr --db PATH serve``: one long-lived process answering JSON lines, for hosts and benchmarks.

The loop and its envelope are zkr-core's (:mod:`zkr.serve_lines`, shared with ``zkr-postgres
serve``): each answer is what ``zkr --db PATH NAME`` would print for that request, or
``{"error": message, "code": code}`` with the same message. One ``MemoryDb`` stays open, so
caches (dense lane matrices) stay warm between requests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from zkr.db import MemoryDb
    from zkr.serve_lines import Runner

__all__ = ["handle_line", "serve_forever"]

#: Commands a plugin serves besides the contract's: name -> ``fn(db, request) -> JSON data``.
#: Passed by a plugin's own serve command (for instance ``zkr openclaw-serve``); plain ``serve``
#: has none, so it never loads plugins.
ExtraCommands = Mapping[str, "Callable[[MemoryDb, Any], Any]"]


def _surface(db: MemoryDb, extra: ExtraCommands | None) -> tuple[Runner, Callable[[str], bool]]:
    """What answers a command on this file: the operation table, then a plugin's commands."""
    from zkr.operations import OPERATIONS, to_json, validate

    plugins: ExtraCommands = extra or {}

    def run(name: str, request: Any) -> Any:
        operation = OPERATIONS.get(name)
        if operation is None:
            return plugins[name](db, request)
        return to_json(operation.call(db, validate(operation, request)))

    return run, lambda name: name in OPERATIONS or name in plugins


def handle_line(db: MemoryDb, line: bytes, extra: ExtraCommands | None = None) -> bytes | None:
    """The answer line (newline-terminated) for one input line; ``None`` for a blank line."""
    from zkr.serve_lines import answer_line

    return answer_line(*_surface(db, extra), line)


def serve_forever(
    db: MemoryDb, stdin: BinaryIO, stdout: BinaryIO, extra: ExtraCommands | None = None
) -> None:
    """Answer every line of *stdin* on *stdout* until EOF (*extra*: a plugin's own commands)."""
    from zkr.serve_lines import serve_lines

    serve_lines(*_surface(db, extra), stdin, stdout)
