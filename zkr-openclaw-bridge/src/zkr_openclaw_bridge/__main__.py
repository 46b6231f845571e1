"""``zkr-openclaw-bridge install DIR``: put the OpenClaw plugin where OpenClaw can load it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from zkr.console import one_line_errors

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zkr-openclaw-bridge", description="zkr as OpenClaw's memory slot."
    )
    commands = parser.add_subparsers(dest="action", required=True)
    install = commands.add_parser(
        "install", help="copy the plugin to DIR and print the OpenClaw configuration"
    )
    install.add_argument("directory", type=Path, metavar="DIR")
    install.add_argument("--command", help="absolute path of zkr (default: the one beside Python)")
    install.add_argument(
        "--database", help="zkr database (default: $ZKR_DB, else the plugin's ~/.zkr/memory.db)"
    )
    install.add_argument("--tenant", help="zkr tenant (default: $ZKR_TENANT, else openclaw)")
    install.add_argument(
        "--person", help="zkr person (default: $ZKR_PERSON, else the active OpenClaw agent)"
    )
    commands.add_parser("plugin-dir", help="print the folder of the shipped plugin files")
    return parser


@one_line_errors("zkr-openclaw-bridge")
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    from zkr_openclaw_bridge.install import install, plugin_dir

    args = _parser().parse_args(argv)
    if args.action == "plugin-dir":
        print(plugin_dir())
        return 0
    installation = install(
        args.directory,
        command=args.command,
        database=args.database,
        tenant=args.tenant,
        person=args.person,
    )
    print(installation.instructions())
    return 0


if __name__ == "__main__":
    sys.exit(main())
