"""zkr's plugin entry point for zkr-web (entry-point group ``zkr``, name ``web``): ``zkr web``.

Kept import-light: zkr loads it for every non-contract command, so the web stack is imported only
when ``zkr web`` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from zkr import hookimpl

if TYPE_CHECKING:
    import click

__all__ = ["zkr_register_commands"]


class _Context(Protocol):
    """What zkr-cli passes to a command as its click ``obj`` (``zkr_cli.cli.ZkrContext``)."""

    db_path: str


# optionalhook: the spec belongs to zkr-cli, which adds it only when it builds its command line.
@hookimpl(optionalhook=True)
def zkr_register_commands(cli: click.Group) -> None:
    """Add ``zkr web`` (the options of ``zkr-web``; the database is ``zkr --db``)."""
    import click

    from zkr_web.cli import DEFAULT_PORT, LOOPBACK, TOKEN_FLAG_REFUSED

    @cli.command(name="web", help="Serve the memory page of one person on this machine.")
    @click.option("--tenant", default=None, help="tenant (default $ZKR_TENANT)")
    @click.option("--person", default=None, help="person (default $ZKR_PERSON)")
    @click.option(
        "--embedder",
        default=None,
        metavar="MODEL/VERSION",
        help="installed embedder: hybrid search, new memories embedded (default $ZKR_EMBEDDER)",
    )
    @click.option("--host", default=LOOPBACK, show_default=True, help="address to bind")
    @click.option(
        "--port", default=None, type=int, help=f"port (default $ZKR_WEB_PORT, else {DEFAULT_PORT})"
    )
    @click.option(
        "--token-file",
        default=None,
        metavar="PATH",
        help="file holding the access token (or $ZKR_WEB_TOKEN; default: random, printed)",
    )
    # Kept hidden only to refuse it: a token on the command line is visible in `ps`.
    @click.option("--token", default=None, hidden=True)
    @click.pass_obj
    def web(
        ctx: _Context,
        tenant: str | None,
        person: str | None,
        embedder: str | None,
        host: str,
        port: int | None,
        token_file: str | None,
        token: str | None,
    ) -> int:
        from zkr_web.cli import serve

        if token is not None:
            click.echo(TOKEN_FLAG_REFUSED, err=True)
            return 2
        return serve(str(ctx.db_path), tenant, person, host, port, token_file, embedder)
