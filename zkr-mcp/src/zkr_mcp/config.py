"""The server's settings: database, scope, transport and embedder, from flags or the environment.

The scope (tenant, person) belongs to the server, never to a tool call: an MCP client config names
it once (``--tenant``/``--person`` or ``ZKR_TENANT``/``ZKR_PERSON``), and no model-facing schema
has a field for it, so a model cannot reach another person's memory.

Over HTTP, a bind other than exactly 127.0.0.1, ::1 or localhost needs a bearer token
(``ZKR_MCP_TOKEN``, or a file named by ``--token-file``): a person's memory is not served to the
network unauthenticated. The token is never a plain flag, because a command line is visible to
every user of the machine.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from zkr import settings as zkr_settings
from zkr.errors import SettingError
from zkr.settings import Setting

__all__ = [
    "ENVIRONMENT",
    "LOOPBACK_HOSTS",
    "TOKEN_VARIABLE",
    "Settings",
    "SettingsError",
    "is_loopback",
    "parse_settings",
]

Transport = Literal["stdio", "streamable-http"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "streamable-http")

#: The flags whose variable, default and old spellings are zkr's shared settings (zkr.settings).
SHARED: dict[str, Setting] = {
    "db": zkr_settings.DB,
    "tenant": zkr_settings.TENANT,
    "person": zkr_settings.PERSON,
    "port": zkr_settings.MCP_PORT,
    "embedder": zkr_settings.EMBEDDER,
}

#: flag destination -> environment variable read when the flag is absent.
ENVIRONMENT: dict[str, str] = {
    **{name: setting.env for name, setting in SHARED.items()},
    "transport": "ZKR_MCP_TRANSPORT",
    "host": "ZKR_MCP_HOST",
    "token_file": "ZKR_MCP_TOKEN_FILE",
}

#: The token itself comes only from the environment (or the file above), never from a flag.
TOKEN_VARIABLE = "ZKR_MCP_TOKEN"

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = int(zkr_settings.MCP_PORT.default)


class SettingsError(ValueError):
    """A missing or malformed setting; the message names the flag and its variable."""


@dataclass(frozen=True)
class Settings:
    """Everything one ``zkr-mcp`` process is started with."""

    db: str
    tenant_id: str
    person_id: str
    transport: Transport = "stdio"
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    #: ``(model, version)`` of an installed embedder plugin, or None for lexical search only.
    embedder: tuple[str, str] | None = None
    #: The bearer token every HTTP request must carry, or None (then only loopback is served).
    token: str | None = None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zkr-mcp",
        description="Serve one person's zkr memory to MCP clients (stdio or streamable HTTP).",
        epilog="Every flag can also come from the environment variable named in its help.",
    )
    parser.add_argument("--db", help="database file (ZKR_DB, default ~/.zkr/memory.db)")
    parser.add_argument("--tenant", help="tenant id of the scope served (ZKR_TENANT)")
    parser.add_argument("--person", help="person id of the scope served (ZKR_PERSON)")
    parser.add_argument(
        "--transport", choices=TRANSPORTS, help="stdio (default) or streamable-http"
    )
    parser.add_argument("--host", help=f"HTTP bind address (ZKR_MCP_HOST, default {DEFAULT_HOST})")
    parser.add_argument("--port", help=f"HTTP port (ZKR_MCP_PORT, default {DEFAULT_PORT})")
    parser.add_argument(
        "--embedder",
        metavar="MODEL/VERSION",
        help="installed embedder plugin: embed new memories, search hybrid (ZKR_EMBEDDER)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help=f"file holding the HTTP bearer token (ZKR_MCP_TOKEN_FILE; or the token itself in "
        f"{TOKEN_VARIABLE}); required to serve an address other than loopback",
    )
    return parser


#: The only binds served without a token. Exactly these spellings: the MCP SDK's DNS-rebinding
#: protection (the guard of a token-less server, see ``http_token``) recognises only these names in
#: the Host and Origin headers, so any other loopback alias (``127.0.0.2``, ``LOCALHOST``,
#: ``0:0:0:0:0:0:0:1``) would be served with a guard that does not know it, or none at all.
LOOPBACK_HOSTS: frozenset[str] = frozenset({"127.0.0.1", "::1", "[::1]", "localhost"})


def is_loopback(host: str) -> bool:
    """Whether *host* is one of the loopback binds served without a token (exact spelling)."""
    return host in LOOPBACK_HOSTS


def _token(values: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    """The bearer token from ``--token-file`` or the variable (the host kit reads it); an empty
    one is refused: a server that must check a token cannot check against nothing."""
    try:
        found = zkr_settings.read_token(values.get("token_file"), TOKEN_VARIABLE, environ)
    except SettingError as exc:
        raise SettingsError(str(exc)) from None
    if found is None:
        return None
    token, source = found
    if not token:
        raise SettingsError(f"{source} holds no token")
    return token


def _split_embedder(value: str) -> tuple[str, str]:
    # The host kit's reading (zkr-web's too); only the error class is this host's.
    from zkr.background_embedding import EmbedderSettingError, parse_embedder

    try:
        return parse_embedder(value)
    except EmbedderSettingError as exc:
        raise SettingsError(str(exc)) from None


def parse_settings(argv: Sequence[str], environ: Mapping[str, str]) -> Settings:
    """Flags first, then the environment; refuse a missing or blank scope or database.

    :raises SettingsError: a required setting is missing or malformed.
    :raises SystemExit: argparse's own refusal (unknown flag, bad choice) or ``--help``.
    """
    args = vars(_parser().parse_args(list(argv)))
    values: dict[str, str] = {}
    for name, variable in ENVIRONMENT.items():
        value = args.get(name)
        if value is None and name == "db":
            # zkr's database unless told otherwise ($ZKR_DB, else ~/.zkr/memory.db), as for every
            # zkr command: `uvx zkr-mcp --tenant me --person me` is the whole configuration.
            value = zkr_settings.default_db(environ)
        elif value is None and name in SHARED:
            # The shared reading: old spellings with a warning.
            value = SHARED[name].value(environ)
        elif value is None:
            value = environ.get(variable)
        if value is not None:
            values[name] = value
    for name in ("db", "tenant", "person"):
        if not values.get(name, "").strip():
            raise SettingsError(f"--{name} (or {ENVIRONMENT[name]}) is required and not blank")
    transport = values.get("transport", "stdio")
    if transport not in TRANSPORTS:
        raise SettingsError(
            f"--transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}"
        )
    try:
        port = int(values.get("port", DEFAULT_PORT))
    except ValueError:
        raise SettingsError(f"--port must be an integer, got {values['port']!r}") from None
    if not 0 <= port <= 65535:
        raise SettingsError(f"--port must be 0..65535, got {port}")
    embedder = values.get("embedder")
    host = values.get("host", DEFAULT_HOST)
    token = _token(values, environ)
    if transport == "streamable-http" and token is None and not is_loopback(host):
        raise SettingsError(
            f"--host {host} is not exactly 127.0.0.1, ::1 or localhost: serving it needs "
            f"a bearer token ({TOKEN_VARIABLE} or --token-file)"
        )
    return Settings(
        db=values["db"],
        tenant_id=values["tenant"],
        person_id=values["person"],
        transport="streamable-http" if transport == "streamable-http" else "stdio",
        host=host,
        port=port,
        embedder=_split_embedder(embedder) if embedder else None,
        token=token,
    )
