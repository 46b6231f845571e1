"""``zkr``: argument rules and dispatch, in the order of contract §2.1 / §10.14.

argv check -> open and migrate the database (creating the file) -> dispatch on the command
(``unknown command``) -> stdin size check -> JSON parse -> operation -> one output line.

Contract commands take a fast path that never imports click, numpy or plugins. Everything else
(``serve``, ``plugins``, commands registered by plugins) goes through the click group of
:func:`zkr_cli.cli.build_cli`.
"""

from __future__ import annotations

import os
import sys

from zkr_cli import __version__
from zkr_cli._io import FORMATS, error_message, fail, fail_as, rust_debug_str

# Neither ``typing.TYPE_CHECKING`` nor ``NamedTuple``: importing typing is a fifth of
# ``zkr --help`` (start-up, issue 14); mypy reads any constant of this name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from zkr.store.database import Database

__all__ = ["USAGE", "default_db_path", "main", "require_directory"]

USAGE = "usage: zkr --db PATH COMMAND (use --help)"
_HELP_WORDS = frozenset({"help", "--help", "-h"})


class _Invocation:
    """``[--db PATH] COMMAND [ARGS...]`` as parsed."""

    __slots__ = ("command", "db_path", "explicit_db", "extra")

    def __init__(
        self, db_path: str, command: str, extra: tuple[str, ...], explicit_db: bool = False
    ) -> None:
        self.db_path = db_path
        self.command = command
        self.extra = extra
        #: ``--db PATH`` was given (its directory must exist); else the default location, which
        #: is created on demand.
        self.explicit_db = explicit_db


def default_db_path() -> str:
    """``$ZKR_DB`` when set and non-empty, else ``~/.zkr/memory.db`` (an addition)."""
    from zkr.settings import default_db

    return default_db()


def _parse_argv(args: Sequence[str]) -> _Invocation | None:
    """``[--db PATH] COMMAND [ARGS...]``; ``None`` means the usage error."""
    if args[0] == "--db":
        if len(args) < 3:
            return None
        return _Invocation(args[1], args[2], tuple(args[3:]), explicit_db=True)
    if args[0].startswith("-"):
        return None
    return _Invocation(default_db_path(), args[0], tuple(args[1:]))


def _split_format(extra: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """``--format FORMAT`` / ``--format=FORMAT`` taken out of an operation's arguments (an
    addition; the last one wins); ``None`` for a missing or unknown format."""
    output_format, rest = "json", []
    args = iter(extra)
    for arg in args:
        if arg == "--format":
            output_format = next(args, "")
        elif arg.startswith("--format="):
            output_format = arg.partition("=")[2]
        else:
            rest.append(arg)
    if output_format not in FORMATS:
        return None
    return output_format, tuple(rest)


def _print_help() -> int:
    from zkr_cli._help import help_text

    sys.stdout.write(help_text())
    sys.stdout.flush()
    return 0


def _skip_pydantic_plugins(command: str) -> None:
    """A one-shot operation runs without pydantic plugins unless ``PYDANTIC_DISABLE_PLUGINS`` says.

    Looking for them scans every installed distribution's metadata, and importing the loader that
    scans pulls in ``importlib.metadata`` (with email, zipfile, socket): together about a tenth of
    a one-shot search. zkr's models use no pydantic plugin. Long-lived commands (``serve``,
    plugin commands) keep them; set ``PYDANTIC_DISABLE_PLUGINS=`` (empty) to keep them here too.
    """
    from zkr_cli._summaries import SUMMARIES

    if not any(name == command for name, _ in SUMMARIES):
        return
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        return
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    # The loader's one name that pydantic imports (plugin/_schema_validator.py), answering what
    # the real one answers under PYDANTIC_DISABLE_PLUGINS=__all__, without importing
    # importlib.metadata. Only when pydantic has not loaded the real one yet.
    if "pydantic.plugin._loader" not in sys.modules:
        import types

        loader = types.ModuleType("pydantic.plugin._loader")
        loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
        sys.modules["pydantic.plugin._loader"] = loader


def _print_command_help(command: str) -> int | None:
    """``zkr COMMAND --help`` for an operation of the table; ``None`` for any other command (the
    additional and plugin commands answer ``--help`` through click). Opens no database."""
    from zkr.operations import OPERATIONS

    operation = OPERATIONS.get(command)
    if operation is None:
        return None
    from zkr_cli.reference import command_help

    sys.stdout.write(command_help(operation))
    sys.stdout.flush()
    return 0


def require_directory(path: str) -> None:
    """Refuse an explicit ``--db`` whose directory does not exist, creating nothing.

    A mistyped path must not leave a new directory tree and an empty database behind; only the
    default location (``$ZKR_DB`` or ``~/.zkr/``) is created on demand.

    :raises zkr.errors.InvalidRequest: ``unable to open database file: PATH``.
    """
    if path == ":memory:" or path.startswith("file:"):
        return
    if not os.path.isdir(os.path.dirname(os.path.expanduser(path)) or "."):
        from zkr.errors import InvalidRequest

        raise InvalidRequest(f"unable to open database file: {path}")


def _open_db(invocation: _Invocation, *, plain: bool = False) -> Database:
    """Open and migrate the database; *plain*: as a bare :class:`~zkr.store.database.Database`
    (what every handler takes), without importing the operation table that ``MemoryDb`` needs."""
    if invocation.explicit_db:
        require_directory(invocation.db_path)
    if plain:
        from zkr.store.database import Database

        return Database(invocation.db_path)
    from zkr.db import MemoryDb

    return MemoryDb(invocation.db_path)


def _dispatch(args: Sequence[str]) -> int:
    # §2.1 rule 1: nothing, or a lone help word.
    if not args or (len(args) == 1 and args[0] in _HELP_WORDS):
        return _print_help()
    if list(args) == ["--version"]:
        sys.stdout.write(f"zkr {__version__}\n")
        return 0
    # §2.1 rule 2: help without opening (or creating) the database. Addition: `--db PATH --help`
    # (or `-h`) is help too; zkr 0.2.3 created PATH and answered `unknown command "--help"`.
    if len(args) == 3 and args[0] == "--db" and (args[2] == "help" or args[2] in _HELP_WORDS):
        return _print_help()
    invocation = _parse_argv(args)
    if invocation is None:
        return fail(USAGE)
    if invocation.extra in (("--help",), ("-h",)):
        outcome = _print_command_help(invocation.command)
        if outcome is not None:
            return outcome

    _skip_pydantic_plugins(invocation.command)
    # Operations with a fast path (zkr.fastpath) start without importing the table (pydantic).
    from zkr.fastpath.run import available

    fast = available(invocation.command)
    operation = None
    if not fast:
        from zkr.operations import OPERATIONS

        operation = OPERATIONS.get(invocation.command)
    known = fast or operation is not None
    if known or invocation.command == "help":
        output_format, extra = "json", invocation.extra
        if known:
            split = _split_format(extra)
            if split is None:
                return fail(f"--format takes one of: {', '.join(FORMATS)}")
            output_format, extra = split
        # Contract commands take exactly three arguments (plus, as an addition, --format).
        if extra or not known:
            return fail(USAGE)
        from zkr_cli._oneshot import run_fast_operation, run_operation

        try:
            db = _open_db(invocation, plain=fast)
        except Exception as exc:
            return fail_as(output_format, error_message(exc), exc)
        with db:
            if fast:
                return run_fast_operation(db, invocation.command, output_format)
            assert operation is not None
            return run_operation(db, operation, output_format)
    return _dispatch_additional(invocation)


def _dispatch_additional(invocation: _Invocation) -> int:
    """``serve``, ``plugins``, plugin commands, or the contract's ``unknown command``."""
    from zkr_cli._help import ADDITIONAL_COMMANDS

    if invocation.command not in ADDITIONAL_COMMANDS and not invocation.extra:
        # Contract order for what may be an unknown command: open and migrate the database first.
        try:
            _open_db(invocation).close()
        except Exception as exc:
            return fail(error_message(exc), exc)
    from zkr_cli.cli import run_click_command

    outcome = run_click_command(
        invocation.db_path, invocation.command, invocation.extra, explicit_db=invocation.explicit_db
    )
    if outcome is None:
        if invocation.extra:
            return fail(USAGE)
        return fail(f"unknown command {rust_debug_str(invocation.command)}")
    return outcome


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``zkr`` with *argv* (default ``sys.argv[1:]``); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away; there is nobody left to tell.
        return 1
    except Exception as exc:
        return fail(error_message(exc), exc)


if __name__ == "__main__":
    sys.exit(main())
