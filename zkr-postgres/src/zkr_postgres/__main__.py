"""``zkr-postgres``: migrate, sync, rebuild and serve a PostgreSQL replica of zkr databases.

    zkr-postgres migrate --dsn DSN
    zkr-postgres sync    --dsn DSN --db PATH [--db NAME=PATH …] [--follow] [--interval S]
    zkr-postgres rebuild --dsn DSN --embedder MODEL/VERSION [--batch-size N]
    zkr-postgres serve   --dsn DSN

``sync``, ``migrate`` and ``rebuild`` need the owner's DSN (``sync`` migrates first); ``serve`` may
use any role that is a member of ``zkr_serving``. Each command prints one JSON line on stdout
(``serve``: one per request); errors go to stderr with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zkr-postgres",
        description="Replicate zkr databases into PostgreSQL (pgvector) and serve them per person.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    dsn_help = "PostgreSQL connection string, e.g. postgresql://user:password@host:5432/db"

    migrate = commands.add_parser("migrate", help="create or upgrade the replica's schema")
    migrate.add_argument("--dsn", required=True, help=dsn_help)

    sync = commands.add_parser("sync", help="apply every scope's export feed to PostgreSQL")
    sync.add_argument("--dsn", required=True, help=dsn_help)
    sync.add_argument(
        "--db",
        action="append",
        required=True,
        metavar="[NAME=]PATH",
        help="a zkr database (repeatable); NAME keys its cursors (default host:/absolute/path)",
    )
    sync.add_argument("--follow", action="store_true", help="keep tailing until interrupted")
    sync.add_argument(
        "--interval", type=float, default=1.0, help="seconds between idle passes of --follow"
    )

    rebuild = commands.add_parser("rebuild", help="embed memories with an installed embedder")
    rebuild.add_argument("--dsn", required=True, help=dsn_help)
    rebuild.add_argument("--embedder", required=True, metavar="MODEL/VERSION")
    rebuild.add_argument("--batch-size", type=int, default=None)

    serve = commands.add_parser(
        "serve", help="answer search/get/memories/history JSON lines on stdin"
    )
    serve.add_argument("--dsn", required=True, help=dsn_help)
    return parser


def _print(data: Any) -> None:
    sys.stdout.write(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _sync(args: argparse.Namespace) -> None:
    from zkr.db import MemoryDb
    from zkr_postgres._db import connect
    from zkr_postgres.schema import migrate
    from zkr_postgres.sync import SyncStats, follow, sync_database, upstream_of

    upstreams = [upstream_of(argument) for argument in args.db]
    for upstream in upstreams:
        if not upstream.path.is_file():
            raise SystemExit(f"zkr-postgres: no zkr database at {upstream.path}")
    with connect(args.dsn) as conn:
        migrate(conn)
        databases = [(upstream, MemoryDb(upstream.path)) for upstream in upstreams]
        try:
            if args.follow:
                running = [True]

                def stop(*_: object) -> None:
                    running[0] = False

                signal.signal(signal.SIGTERM, stop)
                signal.signal(signal.SIGINT, stop)
                total = follow(
                    conn,
                    databases,
                    interval=args.interval,
                    keep_going=lambda: running[0],
                    report=lambda found: _print(asdict(found)),
                )
            else:
                total = SyncStats()
                for upstream, db in databases:
                    total.add(sync_database(conn, db, upstream.name))
        finally:
            for _, db in databases:
                db.close()
    _print(asdict(total))


def _rebuild(args: argparse.Namespace) -> None:
    from zkr_postgres._db import connect
    from zkr_postgres.rebuild import rebuild
    from zkr_postgres.schema import migrate

    model, sep, version = args.embedder.rpartition("/")
    if not sep or not model or not version:
        raise SystemExit("zkr-postgres: --embedder takes MODEL/VERSION")
    with connect(args.dsn) as conn:
        migrate(conn)
        stats = rebuild(conn, model, version, batch_size=args.batch_size)
    _print(asdict(stats))


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    from zkr.errors import ZkrError

    try:
        if args.command == "migrate":
            from zkr_postgres._db import connect
            from zkr_postgres.schema import migrate

            with connect(args.dsn) as conn:
                _print({"schema_version": migrate(conn)})
        elif args.command == "sync":
            _sync(args)
        elif args.command == "rebuild":
            _rebuild(args)
        else:
            from zkr_postgres.serve import main_loop

            main_loop(args.dsn)
    except ZkrError as exc:
        sys.stderr.write(f"zkr-postgres: {exc.message}\n")
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
