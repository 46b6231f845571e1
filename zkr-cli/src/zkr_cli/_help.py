"""The help text of contract §2.1, with the additional commands listed before ``help``."""

from __future__ import annotations

__all__ = ["ADDITIONAL_COMMANDS", "help_text"]

#: Commands of this implementation that are not operations of the contract (built into zkr-cli).
ADDITIONAL_COMMANDS: dict[str, str] = {
    "serve": 'answer {"command","request"} JSON lines until EOF',
    "plugins": "list installed plugins as JSON",
}

_HEADING = (
    "Commands read one JSON object from stdin and write JSON to stdout"
    " (times: seconds since the Unix epoch):"
)


def _line(name: str, summary: str) -> str:
    # Two-space indent, name padded to a 13-character column (never glued to its summary).
    return f"  {name:<12} {summary}"


def help_text() -> str:
    """``zkr --db PATH COMMAND``, a blank line, the heading, one line per command, ``help`` last.

    The operations come from ``zkr.operations.OPERATIONS`` in table order, so an operation appended
    there is listed without touching the CLI.
    """
    from zkr.operations import OPERATIONS

    lines = ["zkr --db PATH COMMAND", "", _HEADING]
    lines.extend(_line(op.name, op.summary) for op in OPERATIONS.values())
    lines.extend(_line(name, summary) for name, summary in ADDITIONAL_COMMANDS.items())
    lines.append(_line("help", "print this help (zkr COMMAND --help: one command's fields)"))
    return "\n".join(lines) + "\n"
