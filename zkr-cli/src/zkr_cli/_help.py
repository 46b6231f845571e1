"""The help text of contract §2.1, with the additional and plugin commands listed before ``help``,
then zkr's options and the environment every command and host reads (additions)."""

from __future__ import annotations

import os
import sys

__all__ = ["ADDITIONAL_COMMANDS", "OPTIONS", "help_text"]

#: Commands of this implementation that are not operations of the contract (built into zkr-cli).
ADDITIONAL_COMMANDS: dict[str, str] = {
    "serve": 'answer {"command","request"} JSON lines until EOF',
    "plugins": "list installed plugins as JSON",
    "import": "store JSON lines of remember requests from FILE (- for stdin)",
}

#: zkr's options, the same for every command (``--format`` goes after the command).
OPTIONS: tuple[tuple[str, str], ...] = (
    ("--db PATH", "the database file (before COMMAND; default $ZKR_DB)"),
    ("--format F", "after an operation or import: json (default) or text"),
    ("--version", "print zkr's version"),
    ("COMMAND -h", "one command's fields or options (also --help)"),
)

_HEADING = (
    "Commands read one JSON object from stdin and write JSON to stdout"
    " (times: seconds since the Unix epoch):"
)


def _line(name: str, summary: str) -> str:
    # Two-space indent, name padded to a 13-character column (never glued to its summary).
    return f"  {name:<12} {summary}"


def _normalize(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def _plugin_lines() -> list[tuple[str, str]]:
    """The commands of installed plugins, as ``zkr`` would load them: ``ZKR_LOAD_PLUGINS``, when
    set, names the only distributions loaded (empty: none)."""
    from zkr_cli._plugin_index import plugin_commands

    reserved = {name for name, _ in _summaries()} | set(ADDITIONAL_COMMANDS) | {"help"}
    only = os.environ.get("ZKR_LOAD_PLUGINS")
    wanted = None if only is None else {_normalize(name) for name in only.split(",")}
    return [
        (name, f"a command of {distribution} (zkr {name} --help)")
        for name, distribution in plugin_commands()
        if name not in reserved and (wanted is None or _normalize(distribution) in wanted)
    ]


def _settings() -> tuple[tuple[str, str], ...]:
    from zkr_cli._summaries import SETTINGS

    return SETTINGS


def _summaries() -> list[tuple[str, str]]:
    table = sys.modules.get("zkr.operations")
    if table is not None:
        return [(op.name, op.summary) for op in table.OPERATIONS.values()]
    from zkr_cli._summaries import SUMMARIES

    return list(SUMMARIES)


def help_text() -> str:
    """``zkr --db PATH COMMAND``, a blank line, the heading, one line per command, ``help`` last;
    then (additions) a blank line and the options, a blank line and the environment variables.

    Plugin commands come from their distributions' metadata (:mod:`zkr_cli._plugin_index`), so
    the help loads no plugin.

    The operations come from ``zkr.operations.OPERATIONS`` in table order, so an operation appended
    there is listed without touching the CLI. A process that has not loaded the table (a plain
    ``zkr --help``) reads the generated index :mod:`zkr_cli._summaries` instead of importing it:
    loading the table costs pydantic and every handler, as much as a search.
    """
    lines = ["zkr --db PATH COMMAND", "", _HEADING]
    lines.extend(_line(name, summary) for name, summary in _summaries())
    lines.extend(_line(name, summary) for name, summary in ADDITIONAL_COMMANDS.items())
    lines.extend(_line(name, summary) for name, summary in _plugin_lines())
    lines.append(_line("help", "print this help (zkr COMMAND --help: one command's fields)"))
    lines.extend(["", "Options:"])
    lines.extend(_line(name, summary) for name, summary in OPTIONS)
    lines.extend(["", "Environment (every command and host reads it; an option wins):"])
    lines.extend(_line(name, summary) for name, summary in _settings())
    return "\n".join(lines) + "\n"
