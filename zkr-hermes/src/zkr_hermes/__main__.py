"""Command line of zkr-hermes: ``zkr-hermes install`` and ``zkr-hermes status``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from zkr.console import one_line_errors
from zkr_hermes import __version__
from zkr_hermes.config import default_hermes_home, load_config
from zkr_hermes.install import CONFIG_HINT, PLUGIN_NAME, InstallError, install

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zkr-hermes", description="zkr as the memory provider of Hermes Agent 0.19.0."
    )
    parser.add_argument("--version", action="version", version=f"zkr-hermes {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    inst = commands.add_parser(
        "install", help=f"write the provider shim into $HERMES_HOME/plugins/{PLUGIN_NAME}"
    )
    inst.add_argument("--hermes-home", type=Path, default=None, help="default: Hermes' home")
    inst.add_argument("--force", action="store_true", help="replace a folder with other files")
    status = commands.add_parser("status", help="database, scope settings and queue state (JSON)")
    status.add_argument("--hermes-home", type=Path, default=None)
    return parser


def _status(hermes_home: Path | None) -> dict[str, object]:
    from zkr_hermes.queue import TurnQueue

    config = load_config(hermes_home)
    queue: dict[str, object] = {"path": str(config.queue_path)}
    if config.queue_path.exists():
        turns = TurnQueue(config.queue_path)
        queue["pending"] = turns.count_pending()
        queue["quarantined"] = [
            {"id": f.id, "reason": f.last_error, "failed_at": f.failed_at} for f in turns.failed()
        ]
    shim = config.hermes_home / "plugins" / PLUGIN_NAME
    return {
        "hermes_home": str(config.hermes_home),
        "shim_installed": (shim / "__init__.py").exists(),
        "db_path": str(config.db_path),
        "tenant_id": config.tenant_id or None,
        "person_id": config.person_id or None,
        "queue": queue,
    }


@one_line_errors("zkr-hermes")
def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "status":
        print(json.dumps(_status(args.hermes_home), indent=2, sort_keys=True))
        return 0
    home = args.hermes_home or default_hermes_home()
    try:
        target = install(home, force=args.force)
    except InstallError as exc:
        print(f"zkr-hermes: {exc}", file=sys.stderr)
        return 1
    print(f"Installed the zkr memory provider for Hermes in {target}")
    print(f"Select it in {Path(home).expanduser() / 'config.yaml'}:\n")
    print(CONFIG_HINT)
    print(f"\n(or run: hermes config set memory.provider {PLUGIN_NAME})")
    try:
        import hermes_constants  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        print(
            "\nNote: Hermes is not installed in this Python environment. Install zkr-hermes into "
            "the environment Hermes runs in, or it cannot import the provider.",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
