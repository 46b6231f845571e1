"""The help text of contract §2.1, with the additional commands listed before ``help``."""

from __future__ import annotations

import sys

__all__ = ["ADDITIONAL_COMMANDS", "help_text"]

#: Commands of this implementation that are not operations of the contract (built into zkr-cli).
ADDITIONAL_COMMANDS: dict[str, str] = {
    "serve": 'answer {"command","request"} JSON lines until EOF',
    "plugins": "list installed plugins as JSON",
    "import": "store JSON lines of remember requests from FILE (- for stdin)",
}

_HEADING = (
    "Commands read one JSON object from stdin and write JSON to stdout"
    " (times: seconds since the Unix epoch):"
)


def _line(name: str, summary: str) -> str:
    # Two-space indent, name padded to a 13-character column (never glued to its summary).
    return f"  {name:<12} {summary}"


def _summaries() -> list[tuple[str, str]]:
    table = sys.modules.get("zkr.operations")
    if table is not None:
        return [(op.name, op.summary) for op in table.OPERATIONS.values()]
    from zkr_cli._summaries import SUMMARIES

    return list(SUMMARIES)


def help_text() -> str:
    """``zkr --db PATH COMMAND``, a blank line, the heading, one line per command, ``help`` last.

    The operations come from ``zkr.operations.OPERATIONS`` in table order, so an operation appended
    there is listed without touching the CLI. A process that has not loaded the table (a plain
    ``zkr --help``) reads the generated index :mod:`zkr_cli._summaries` instead of importing it:
    loading the table costs pydantic and every handler, as much as a search.
    """
    lines = ["zkr --db PATH COMMAND", "", _HEADING]
    lines.extend(_line(name, summary) for name, summary in _summaries())
    lines.extend(_line(name, summary) for name, summary in ADDITIONAL_COMMANDS.items())
    lines.append(_line("help", "print this help (zkr COMMAND --help: one command's fields)"))
    return "\n".join(lines) + "\n"
