"""``zkr-mcp``: serve one person's zkr memory over stdio or streamable HTTP.

stdout belongs to the protocol (stdio transport): everything else — logs, refusals — goes to
stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from zkr.console import one_line_errors
from zkr_mcp.config import Settings, SettingsError, parse_settings

if TYPE_CHECKING:
    from zkr_mcp.server import ZkrMcp

__all__ = ["main"]

log = logging.getLogger("zkr_mcp")


async def _serve_stdio(app: ZkrMcp) -> None:
    from mcp.server.stdio import stdio_server

    from zkr_mcp.stdio_guard import serve_guarded

    async with stdio_server() as (read_stream, write_stream):
        await serve_guarded(app.server, read_stream, write_stream)


def _serve_http(app: ZkrMcp, settings: Settings) -> None:
    import uvicorn

    from zkr_mcp.http_token import BearerTokenGuard, rebinding_protection

    asgi = app.server.streamable_http_app(
        host=settings.host, transport_security=rebinding_protection(settings.token)
    )
    guarded = asgi if settings.token is None else BearerTokenGuard(asgi, settings.token)
    uvicorn.run(guarded, host=settings.host, port=settings.port, log_level="warning")


@one_line_errors("zkr-mcp")
def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="zkr-mcp %(levelname)s: %(message)s"
    )
    try:
        settings = parse_settings(sys.argv[1:] if argv is None else argv, os.environ)
    except SettingsError as exc:
        print(f"zkr-mcp: {exc}", file=sys.stderr)
        return 2
    # Imported only now: the SDK takes a while to import, and a refused flag should not wait.
    import anyio

    from zkr.errors import ZkrError
    from zkr_mcp.server import open_server

    try:
        with open_server(settings) as app:
            if settings.transport == "stdio":
                anyio.run(_serve_stdio, app)
            else:
                log.warning(
                    "serving %s/%s on http://%s:%d/mcp%s",
                    settings.tenant_id,
                    settings.person_id,
                    settings.host,
                    settings.port,
                    "" if settings.token is None else " (bearer token required)",
                )
                _serve_http(app, settings)
    except ZkrError as exc:
        print(f"zkr-mcp: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
