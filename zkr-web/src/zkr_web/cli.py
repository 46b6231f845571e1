"""``zkr-web``: serve one person's memory page on this machine.

``zkr-web --db PATH --tenant T --person P [--host 127.0.0.1] [--port N] [--token-file PATH]``;
also ``zkr web`` when zkr-cli is installed (same options but ``--db``, which ``zkr`` takes itself).

The access token comes from ``--token-file`` or ``$ZKR_WEB_TOKEN``, or is made at random. The
old ``--token T`` is refused: a command line is readable by every user of the machine (``ps``), so
by the time the flag is parsed the token has leaked, and a warning would not take it back.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from zkr import settings
from zkr.console import one_line_errors
from zkr.errors import SettingError

__all__ = ["DEFAULT_PORT", "ServeOptions", "main", "serve"]

#: zkr's shared setting (``$ZKR_WEB_PORT``); zkr-mcp's HTTP default differs, so both can run.
DEFAULT_PORT = int(settings.WEB_PORT.default)
LOOPBACK = "127.0.0.1"


#: The refusal of the removed ``--token`` flag (one line, names the ways that do not leak).
TOKEN_FLAG_REFUSED = (
    "zkr-web: --token is no longer accepted: a command line is visible to every user (ps); "
    "put the token in a file and pass --token-file PATH, or set ZKR_WEB_TOKEN"
)


class ServeOptions(argparse.Namespace):
    db: str
    tenant: str | None
    person: str | None
    embedder: str | None
    host: str
    port: int | None
    token: str | None
    token_file: str | None


def read_token(token_file: str | None) -> str | None:
    """The token of ``--token-file``, else ``$ZKR_WEB_TOKEN`` (the host kit reads either,
    surrounding whitespace dropped); ``None`` when neither holds one (a random token is made).

    :raises ValueError: the file cannot be read or holds no printable ASCII token.
    """
    try:
        found = settings.read_token(token_file, "ZKR_WEB_TOKEN")
    except SettingError as exc:
        raise ValueError(str(exc)) from None
    return None if found is None else found[0] or None


def default_db() -> str:
    """``$ZKR_DB``, else ``~/.zkr/memory.db`` (zkr's shared setting)."""
    return settings.default_db()


def add_arguments(parser: argparse.ArgumentParser, *, with_db: bool) -> None:
    if with_db:
        parser.add_argument(
            "--db", default=None, help="database file (default $ZKR_DB, else ~/.zkr/memory.db)"
        )
    parser.add_argument(
        "--tenant", default=None, help="tenant of the person shown (default $ZKR_TENANT)"
    )
    parser.add_argument(
        "--person", default=None, help="the person whose memory is shown (default $ZKR_PERSON)"
    )
    parser.add_argument(
        "--embedder",
        default=None,
        metavar="MODEL/VERSION",
        help="installed embedder plugin: search by meaning too (hybrid) and embed new memories"
        " in the background (default $ZKR_EMBEDDER; unset: words only)",
    )
    parser.add_argument(
        "--host", default=LOOPBACK, help="address to bind (default 127.0.0.1: this machine only)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"port (default $ZKR_WEB_PORT, else {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--token-file",
        default=None,
        metavar="PATH",
        help="file holding the access token (or $ZKR_WEB_TOKEN; default: a random one, printed)",
    )
    # Kept only to refuse it with a clear message (argparse would say "unrecognized arguments").
    parser.add_argument("--token", default=None, help=argparse.SUPPRESS)


def serve(
    db_path: str,
    tenant: str | None,
    person: str | None,
    host: str,
    port: int | None,
    token_file: str | None = None,
    embedder: str | None = None,
) -> int:
    """Check the options, print the address with its token, and serve until interrupted."""
    import uvicorn

    from zkr_web.app import WebConfig, create_app
    from zkr_web.embedding import EmbedderSettingError, check_embedder, parse_embedder
    from zkr_web.security import new_token

    tenant = tenant or settings.TENANT.value()
    person = person or settings.PERSON.value()
    if not tenant.strip() or not person.strip():
        print(
            "zkr-web: give the scope: --tenant T --person P (or ZKR_TENANT and ZKR_PERSON)",
            file=sys.stderr,
        )
        return 2
    if port is None:
        try:
            port = int(settings.WEB_PORT.value())
        except ValueError:
            print(f"zkr-web: {settings.WEB_PORT.env} must be a port number", file=sys.stderr)
            return 2
    try:
        token = read_token(token_file) or new_token()
    except ValueError as exc:
        print(f"zkr-web: {exc}", file=sys.stderr)
        return 2
    if len(token) < 16:
        print("zkr-web: the access token must be at least 16 characters", file=sys.stderr)
        return 2
    if not (0 <= port <= 65535):
        print("zkr-web: --port must be 0-65535", file=sys.stderr)
        return 2
    embedder = embedder or settings.EMBEDDER.value() or None
    lane = None
    if embedder is not None:
        try:
            lane = parse_embedder(embedder)
            check_embedder(lane)
        except EmbedderSettingError as exc:
            print(f"zkr-web: {exc}", file=sys.stderr)
            return 2
    if host not in (LOOPBACK, "localhost", "::1"):
        print(
            f"zkr-web: warning: serving on {host}: other machines may reach this page "
            "(the token still guards it)",
            file=sys.stderr,
        )
    from zkr import MemoryDb

    # Opened once before serving: a path that is not a usable database is refused here, in one
    # line, rather than by the server's start-up (which logs a traceback and exits).
    MemoryDb(db_path).close()
    config = WebConfig(
        db_path=db_path, tenant_id=tenant, person_id=person, token=token, embedder=lane
    )
    app = create_app(config)
    server = uvicorn.Server(
        uvicorn.Config(
            app, host=host, port=port, log_level="warning", access_log=False, lifespan="on"
        )
    )
    original_startup = server.startup

    async def startup(sockets: object = None) -> None:
        await original_startup(sockets=sockets)  # type: ignore[arg-type]
        bound = port
        for listener in getattr(server, "servers", []):
            for sock in listener.sockets:
                bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        meaning = f"; search by words and meaning ({'/'.join(lane)})" if lane else ""
        print(f"zkr-web: serving {tenant}/{person} from {db_path}{meaning}", flush=True)
        print(f"zkr-web: open http://{shown}:{bound}/?token={token}", flush=True)

    server.startup = startup  # type: ignore[method-assign]
    server.run()
    return 0


@one_line_errors("zkr-web")
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="zkr-web",
        description="A local page where you see, audit and correct what your agent remembers.",
    )
    add_arguments(parser, with_db=True)
    args = parser.parse_args(argv, namespace=ServeOptions())
    if args.token is not None:
        print(TOKEN_FLAG_REFUSED, file=sys.stderr)
        return 2
    return serve(
        args.db or default_db(),
        args.tenant,
        args.person,
        args.host,
        args.port,
        args.token_file,
        args.embedder,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
