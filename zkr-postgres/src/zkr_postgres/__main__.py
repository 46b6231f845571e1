"""``zkr-postgres``: migrate, sync, rebuild and serve a PostgreSQL replica of zkr databases.

    zkr-postgres migrate --dsn DSN [--partitions N]
    zkr-postgres sync    --dsn DSN --db PATH [--db NAME=PATH …] [--follow] [--interval S]
                         [--partitions N]
    zkr-postgres rebuild --dsn DSN --embedder MODEL/VERSION [--batch-size N] [--partitions N]
    zkr-postgres analyze --dsn DSN
    zkr-postgres serve   --dsn DSN

``--partitions N`` (every command that migrates takes it, spelled the same) hash-partitions the
replica's tables by scope into N partitions, converting a plain replica; without it the layout
stays as it is. ``serve`` reads from any server holding the replica — the primary or a streaming
standby of it (``docs/zkr-postgres.md``).

``analyze`` takes the planner's statistics of every table now (``sync`` and ``rebuild`` already
analyze what they changed a lot: ``zkr_postgres.analyze``).

``sync``, ``migrate``, ``rebuild`` and ``analyze`` need the owner's DSN (``sync`` migrates
first); ``serve`` may use any role that is a member of ``zkr_serving``. Each command prints one
JSON line on stdout (``serve``: one per request); errors go to stderr as one line with exit
status 1 — never a Python traceback (an unreachable server, a file that is not a zkr database,
a bad DSN included).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sqlite3
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
    _add_partitions(migrate)

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
    _add_partitions(sync)

    rebuild = commands.add_parser("rebuild", help="embed memories with an installed embedder")
    rebuild.add_argument("--dsn", required=True, help=dsn_help)
    rebuild.add_argument("--embedder", required=True, metavar="MODEL/VERSION")
    rebuild.add_argument("--batch-size", type=int, default=None)
    _add_partitions(rebuild)

    analyze = commands.add_parser(
        "analyze", help="take the planner's statistics of every table of the replica now"
    )
    analyze.add_argument("--dsn", required=True, help=dsn_help)

    serve = commands.add_parser(
        "serve", help="answer search/get/memories/history JSON lines on stdin"
    )
    serve.add_argument("--dsn", required=True, help=dsn_help)
    return parser


def _add_partitions(command: argparse.ArgumentParser) -> None:
    """The one spelling of the layout option, on every command that migrates."""
    command.add_argument(
        "--partitions",
        type=int,
        default=None,
        metavar="N",
        help="hash-partition the tables by scope into N partitions (default: keep the layout)",
    )


def _print(data: Any) -> None:
    sys.stdout.write(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _sync(args: argparse.Namespace) -> None:
    from zkr.db import MemoryDb
    from zkr_postgres._db import connect
    from zkr_postgres.schema import migrate
    from zkr_postgres.sync import SyncStats, follow, sync_database, upstream_of

    if args.follow and not (math.isfinite(args.interval) and args.interval > 0):
        raise SystemExit("zkr-postgres: --interval must be a positive number of seconds")
    upstreams = [upstream_of(argument) for argument in args.db]
    for upstream in upstreams:
        _check_zkr_database(upstream.path)
    with connect(args.dsn) as conn:
        migrate(conn, args.partitions)
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


def _check_zkr_database(path: Any) -> None:
    """Refuse, before anything is opened for writing, a path that is not a zkr database.

    Opening a file with ``MemoryDb`` creates zkr's tables in it: an unrelated SQLite file named by
    mistake would be changed, and a file that is not SQLite failed with a traceback.
    """
    if not path.is_file():
        raise SystemExit(f"zkr-postgres: no zkr database at {path}")
    try:
        reader = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            found = reader.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memory_commits'"
            ).fetchone()
        finally:
            reader.close()
    except sqlite3.Error as exc:
        raise SystemExit(f"zkr-postgres: {path} is not a zkr database ({exc})") from None
    if found is None:
        raise SystemExit(f"zkr-postgres: {path} is not a zkr database (it has no export feed)")


def _rebuild(args: argparse.Namespace) -> None:
    from zkr_postgres._db import connect
    from zkr_postgres.rebuild import rebuild
    from zkr_postgres.schema import migrate

    model, sep, version = args.embedder.rpartition("/")
    if not sep or not model or not version:
        raise SystemExit("zkr-postgres: --embedder takes MODEL/VERSION")
    if args.batch_size is not None and not 1 <= args.batch_size <= 4096:
        raise SystemExit("zkr-postgres: --batch-size must be 1..4096")
    with connect(args.dsn) as conn:
        migrate(conn, args.partitions)
        stats = rebuild(conn, model, version, batch_size=args.batch_size)
    _print(asdict(stats))


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if getattr(args, "partitions", None) is not None:
        from zkr_postgres.partitions import LayoutError, check_count

        try:
            check_count(args.partitions)
        except LayoutError as exc:
            raise SystemExit(f"zkr-postgres: {exc}") from None
    import psycopg

    from zkr.errors import ZkrError
    from zkr_postgres.partitions import LayoutError

    try:
        if args.command == "migrate":
            from zkr_postgres._db import connect
            from zkr_postgres.schema import migrate

            with connect(args.dsn) as conn:
                _print({"schema_version": migrate(conn, args.partitions)})
        elif args.command == "sync":
            _sync(args)
        elif args.command == "rebuild":
            _rebuild(args)
        elif args.command == "analyze":
            from zkr_postgres._db import connect
            from zkr_postgres.analyze import analyze_all

            with connect(args.dsn) as conn:
                _print({"analyzed_tables": len(analyze_all(conn))})
        else:
            from zkr_postgres.serve import main_loop

            main_loop(args.dsn)
    except ZkrError as exc:
        _fail(exc.message)
    except LayoutError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except psycopg.OperationalError as exc:  # unreachable, refused, authentication failed
        _fail(f"cannot use PostgreSQL: {_first_line(exc)}")
    except psycopg.Error as exc:  # a malformed DSN, a server-side refusal
        _fail(f"PostgreSQL error: {_first_line(exc)}")
    except sqlite3.Error as exc:
        _fail(f"SQLite error: {_first_line(exc)}")
    except OSError as exc:
        _fail(_first_line(exc))
    except Exception as exc:  # never a traceback: ZKR_DEBUG=1 prints one for a bug report
        if os.environ.get("ZKR_DEBUG"):
            raise
        _fail(f"internal error ({type(exc).__name__}): {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _fail(message: str) -> None:
    sys.stderr.write(f"zkr-postgres: {message}\n")
    raise SystemExit(1) from None


if __name__ == "__main__":
    main()
