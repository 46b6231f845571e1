"""What a whole process may choose through its environment, each defined once.

One row per setting, in datasette's ``Setting`` style: its name, the environment variable that
sets it for a process, its built-in default, the values it accepts and a help line. Every surface
(the library, the CLI and ``serve``, Hermes, OpenClaw, MCP, zkr-web, the PostgreSQL replica) reads
a setting from here, so its default is written in exactly one place.

The table holds what every host shares: the database, the scope (tenant and person), the search
ranking, the embedder and the ports of the two HTTP servers. A host reads them from here and only
adds its own flags on top (``--db`` beats ``$ZKR_DB``), so a variable has one spelling
everywhere. An old spelling (``ZKR_TENANT_ID``, ``ZKR_PERSON_ID``) is still read, with a warning
that names the new one.

A ``search`` request that names no ``ranking`` gets :func:`default_ranking` (``$ZKR_RANKING``,
else ``recall``) when it is validated; a request that names one keeps it. This module imports
neither pydantic nor the models: the one-shot fast path (:mod:`zkr.fastpath`) reads it at
start-up.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Mapping

from zkr.enums import Ranking
from zkr.errors import SettingError

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from zkr._named_tuple import NamedTuple

__all__ = [
    "DB",
    "EMBEDDER",
    "MCP_PORT",
    "PERSON",
    "RANKING",
    "SETTINGS",
    "TENANT",
    "WEB_PORT",
    "Setting",
    "default_db",
    "default_ranking",
    "read_token",
    "setting_for_factory",
]


# A NamedTuple, not a dataclass: every one-shot process reads a setting, and importing
# dataclasses (with inspect) is a tenth of its start-up (issue 27.4).
class Setting(NamedTuple):
    """One setting: *env* chooses it for a process; left unset (or empty) it is *default*."""

    name: str
    env: str
    default: str
    help: str
    #: The values it accepts; empty: any text.
    choices: tuple[str, ...] = ()
    #: Older spellings of *env*, still read (with a warning) when *env* is unset.
    deprecated_envs: tuple[str, ...] = ()

    def value(self, environ: Mapping[str, str] | None = None) -> str:
        """The value in force: ``$env`` when set and not empty (else a deprecated spelling, with a
        warning), else the default.

        :raises SettingError: the variable holds a value the setting does not accept.
        """
        env = os.environ if environ is None else environ
        raw = env.get(self.env, "")
        for old in self.deprecated_envs:
            if raw.strip() == "" and env.get(old, "").strip():
                raw = env[old]
                warnings.warn(f"{old} is deprecated: set {self.env}", FutureWarning, stacklevel=2)
        if raw.strip() == "":
            return self.default
        if not self.choices:
            return raw.strip()
        if raw not in self.choices:
            # json.dumps quotes the value and keeps the message on one line whatever it holds.
            allowed = " or ".join(json.dumps(choice) for choice in self.choices)
            raise SettingError(f"{self.env} must be {allowed}, not {json.dumps(raw)}")
        return raw


# The table: name, environment variable, built-in default, help (datasette's ``Setting`` rows).

#: The ranking of a search that does not name one.
RANKING = Setting(
    "ranking",
    "ZKR_RANKING",
    Ranking.recall.value,
    "How a search ranks when its request names no ranking: recall (built to find the memory) or "
    "contract (zkr 0.2.3's order, byte for byte).",
    choices=tuple(ranking.value for ranking in Ranking),
)
#: The memory's SQLite file (``~`` is the user's home: see :func:`default_db`).
DB = Setting("db", "ZKR_DB", "~/.zkr/memory.db", "The database file.")
#: The scope a host serves: hosts that serve one person require both (no default).
TENANT = Setting(
    "tenant",
    "ZKR_TENANT",
    "",
    "The tenant of the person whose memory is served.",
    deprecated_envs=("ZKR_TENANT_ID",),
)
PERSON = Setting(
    "person",
    "ZKR_PERSON",
    "",
    "The person whose memory is served.",
    deprecated_envs=("ZKR_PERSON_ID",),
)
#: An installed embedder plugin (``MODEL/VERSION``); unset: words only.
EMBEDDER = Setting(
    "embedder",
    "ZKR_EMBEDDER",
    "",
    "An installed embedder, MODEL/VERSION: new memories are embedded and search is hybrid.",
)
#: The two HTTP servers a person may run side by side get different ports.
WEB_PORT = Setting("web_port", "ZKR_WEB_PORT", "8765", "The port of zkr-web's page on 127.0.0.1.")
MCP_PORT = Setting(
    "mcp_port", "ZKR_MCP_PORT", "8766", "The port of zkr-mcp's streamable HTTP transport."
)

#: Every setting, by name.
SETTINGS: Mapping[str, Setting] = {
    setting.name: setting for setting in (DB, TENANT, PERSON, RANKING, EMBEDDER, WEB_PORT, MCP_PORT)
}


def default_db(environ: Mapping[str, str] | None = None) -> str:
    """``$ZKR_DB``, else ``~/.zkr/memory.db``, with ``~`` expanded."""
    return os.path.expanduser(DB.value(environ))


def default_ranking() -> Ranking:
    """The ranking of a search whose request names none: ``$ZKR_RANKING``, else ``recall``.

    :raises SettingError: ``$ZKR_RANKING`` is neither ``recall`` nor ``contract``.
    """
    return Ranking(RANKING.value())


def read_token(
    token_file: str | None, variable: str, environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """An HTTP host's bearer token with where it came from: the file of ``--token-file``, else
    the environment *variable*; surrounding whitespace dropped, ``None`` when neither is given.
    Never a plain flag: a command line is visible to every user of the machine. What an empty
    token means (refused, or a random one) is the host's to decide.

    :raises SettingError: the file cannot be read, or the token is not printable ASCII (it
        travels in an HTTP header).
    """
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as file:
                token, source = file.read().strip(), "--token-file"
        except (OSError, UnicodeError) as exc:
            raise SettingError(f"--token-file: cannot read {token_file!r}: {exc}") from None
    else:
        environ = os.environ if environ is None else environ
        if variable not in environ:
            return None
        token, source = environ[variable].strip(), variable
    if not token.isascii() or not token.isprintable():
        raise SettingError(f"{source}: a token is printable ASCII (it travels in an HTTP header)")
    return token, source


#: Request fields whose default is a setting: the field's ``default_factory`` -> its setting.
#: The generated artefacts (the fast path's shapes, the reference, tool schemas) read the
#: built-in default and the variable from here instead of calling the factory, so what they
#: show does not depend on the environment they were generated in.
_FACTORIES: Mapping[Callable[[], object], Setting] = {default_ranking: RANKING}


def setting_for_factory(factory: object) -> Setting | None:
    """The setting a request field's ``default_factory`` reads, or ``None``."""
    for known, setting in _FACTORIES.items():
        if factory is known:
            return setting
    return None
