"""zkr's plugin entry point for zkr-postgres (entry-point group ``zkr``, name ``postgres``).

``zkr postgres ARGS`` is ``zkr-postgres ARGS`` (migrate, sync, rebuild, serve), parsed by
zkr-postgres itself. Kept import-light: psycopg is imported only when the command runs.
"""

from __future__ import annotations

from zkr.plugins.passthrough import passthrough_command

__all__ = ["zkr_register_commands"]

zkr_register_commands = passthrough_command(
    "postgres",
    "Replicate zkr databases into PostgreSQL and serve them (zkr postgres --help).",
    "zkr_postgres.__main__:main",
)
