"""The click group of zkr's additional commands (``serve``, ``plugins``, ``import``) and plugin
commands.

Contract commands never come here (see :mod:`zkr_cli.__main__`): building this group imports click
and loads plugins, which a plain ``zkr --db PATH search`` must not pay for.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zkr_cli._io import debug_enabled, error_message, fail, write_line

if TYPE_CHECKING:
    import click
    import pluggy

    from zkr.db import MemoryDb

__all__ = ["ZkrContext", "add_hookspecs", "build_cli", "run_click_command"]


@dataclass(frozen=True)
class ZkrContext:
    """What every non-contract command receives as its click ``obj``."""

    #: The database named by ``--db`` (or ``$ZKR_DB``, or ``~/.zkr/memory.db``); not yet opened.
    db_path: str
    #: ``--db`` named it: its directory must exist (the default location is created on demand).
    explicit_db: bool = False

    def open_db(self) -> MemoryDb:
        """Open (creating and migrating) the database; the caller closes it.

        Long-lived and plugin commands open it through the plugins, so every
        ``zkr_prepare_connection`` hook runs on the connection (the one-shot contract commands
        skip plugins to start fast).
        """
        from zkr.db import MemoryDb
        from zkr.plugins import prepare_connection
        from zkr_cli.__main__ import require_directory

        if self.explicit_db:
            require_directory(self.db_path)
        return MemoryDb(self.db_path, prepare_connection=prepare_connection)

    def emit(self, value: Any) -> None:
        """Print *value* as the command's one JSON line (compact, keys sorted, UTF-8)."""
        write_line(sys.stdout.buffer, value)


def add_hookspecs(pm: pluggy.PluginManager) -> None:
    """Teach *pm* the ``zkr_register_commands`` hook (idempotent)."""
    from zkr_cli import hookspecs

    caller = getattr(pm.hook, "zkr_register_commands", None)
    if caller is None or not caller.has_spec():
        pm.add_hookspecs(hookspecs)


def _serve_command() -> click.Command:
    import click

    @click.command(name="serve", help="Answer JSON lines {command, request} until EOF.")
    @click.pass_obj
    def serve(ctx: ZkrContext) -> int:
        from zkr_cli.serve import serve_forever

        with ctx.open_db() as db:
            serve_forever(db, sys.stdin.buffer, sys.stdout.buffer)
        return 0

    return serve


def _plugins_command() -> click.Command:
    import click

    @click.command(name="plugins", help="List installed plugins as JSON.")
    @click.pass_obj
    def plugins(ctx: ZkrContext) -> int:
        from zkr.plugins import get_plugins

        ctx.emit(get_plugins())
        return 0

    return plugins


def _import_command() -> click.Command:
    import click

    from zkr_cli._io import FORMATS

    @click.command(
        name="import",
        help="Store JSON lines of remember requests from FILE (- for stdin), each line once;"
        " print a summary (stored, replayed, refused lines with reasons). With --from FORMAT"
        " (chatgpt, claude, mem0, notes or a plugin's), read that tool's export at FILE into"
        " the --tenant/--person scope instead, each message once.",
    )
    @click.argument("file")
    @click.option("--format", "output_format", type=click.Choice(FORMATS), default="json")
    @click.option("--from", "source_format", default=None, help="the export's format")
    @click.option("--tenant", default=None, help="tenant of --from (default $ZKR_TENANT)")
    @click.option("--person", default=None, help="person of --from (default $ZKR_PERSON)")
    @click.pass_obj
    def import_(
        ctx: ZkrContext,
        file: str,
        output_format: str,
        source_format: str | None,
        tenant: str | None,
        person: str | None,
    ) -> int:
        from zkr_cli._io import fail_as
        from zkr_cli.importing import import_lines, open_input

        if source_format is not None:
            return _import_from(ctx, file, output_format, source_format, tenant, person)
        try:
            stream = open_input(file)
        except OSError as exc:
            return fail_as(output_format, f"cannot read {file}: {exc.strerror or exc}")
        try:
            with ctx.open_db() as db:
                summary = import_lines(db, stream, progress=sys.stderr).to_json()
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
        _emit_summary(ctx, output_format, "import", summary)
        return 0

    return import_


def _import_from(
    ctx: ZkrContext,
    file: str,
    output_format: str,
    source_format: str,
    tenant: str | None,
    person: str | None,
) -> int:
    """``zkr import --from FORMAT``: see :mod:`zkr_cli.importing_from`."""
    import time
    from pathlib import Path

    from zkr.errors import ZkrError
    from zkr.settings import PERSON, TENANT
    from zkr_cli._io import fail_as
    from zkr_cli.importing_from import import_from, importer_named

    tenant = tenant or TENANT.value()
    person = person or PERSON.value()
    try:
        summary = import_from(
            ctx.open_db,
            importer_named(source_format),
            Path(file),
            tenant_id=tenant,
            person_id=person,
            recorded_at=int(time.time()),
            progress=sys.stderr,
        )
    except ZkrError as exc:
        return fail_as(output_format, exc.message)
    _emit_summary(ctx, output_format, "import-from", summary.to_json())
    return 0


def _emit_summary(ctx: ZkrContext, output_format: str, command: str, summary: Any) -> None:
    if output_format == "text":
        from zkr_cli._text import render_text

        sys.stdout.write(render_text(command, summary))
        sys.stdout.flush()
    else:
        ctx.emit(summary)


def build_cli(*, load_plugins: bool = True) -> click.Group:
    """The click group of non-contract commands, with plugin commands when *load_plugins*.

    Plugin commands come from the ``zkr_register_commands`` hook; ``serve`` and ``plugins`` are
    added last so that a plugin cannot replace them.
    """
    import click

    group = click.Group(name="zkr", help="zkr's additional and plugin commands.")
    if load_plugins:
        from zkr import plugins

        add_hookspecs(plugins.pm)
        plugins.load_plugins()
        plugins.pm.hook.zkr_register_commands(cli=group)
    group.add_command(_serve_command())
    group.add_command(_plugins_command())
    group.add_command(_import_command())
    return group


def _needs_plugins(command: str) -> bool:
    # `serve` never needs plugins; everything else may be (or list) a plugin's.
    return command != "serve"


def run_click_command(
    db_path: str, command: str, extra: Sequence[str], *, explicit_db: bool = False
) -> int | None:
    """Run *command* from the click group; ``None`` when no such command exists.

    Errors follow the contract's envelope: ``{"error": ...}`` on stderr, exit status 1.
    """
    import click

    # The plugin loader reports a broken plugin on stderr. Held back until the command is known:
    # an unknown command must still print exactly the contract's one error line.
    warnings = io.StringIO()
    try:
        with contextlib.redirect_stderr(warnings):
            group = build_cli(load_plugins=_needs_plugins(command))
    except Exception as exc:
        sys.stderr.write(warnings.getvalue())
        return fail(error_message(exc), exc)
    if command not in group.commands:
        if debug_enabled():
            sys.stderr.write(warnings.getvalue())
        return None
    sys.stderr.write(warnings.getvalue())
    sys.stderr.flush()
    try:
        outcome = group.main(
            args=[command, *extra],
            prog_name="zkr",
            standalone_mode=False,
            obj=ZkrContext(db_path, explicit_db=explicit_db),
        )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        return fail("aborted")
    except click.ClickException as exc:
        return fail(exc.format_message(), exc)
    except Exception as exc:
        return fail(error_message(exc), exc)
    return outcome if isinstance(outcome, int) else 0
