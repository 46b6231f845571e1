"""Every console script of every distribution, fuzzed through its arguments, files and stdin.

Issue 26.6: a command answers bad input with a clear line, never a Python traceback. The scripts
are read from each distribution's ``[project.scripts]`` (a new script is fuzzed the day it is
added); their subcommands and flags are read from their own ``--help``. Hypothesis builds command
lines from those words and hostile values (numbers out of range, NaN, invalid UTF-8, a DSN nothing
listens on, loopback aliases) and from prepared files (not a database, random bytes, a SQLite file
without zkr's tables, a directory, a missing path, a path under a file, junk JSON lines), with junk
on stdin. Each run gets a private home and working folder and 8 seconds; a command still running
then (a server that started) is stopped, and what it printed so far is checked too.

Property: no ``Traceback`` on stderr or stdout, and no death by a signal it did not get from us.

Profiles as in ``test_fuzz.py``: ``ZKR_FUZZ_PROFILE=ci`` (default, a few runs per script) or
``long``; ``ZKR_FUZZ_EXAMPLES=N`` overrides.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkr.db import MemoryDb

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROFILE = os.environ.get("ZKR_FUZZ_PROFILE", "ci")
EXAMPLES = int(os.environ.get("ZKR_FUZZ_EXAMPLES", 0)) or {"ci": 8, "long": 300}[PROFILE]
TIMEOUT = 8.0
TRACEBACK = b"Traceback (most recent call last)"


def console_scripts() -> list[str]:
    """Every ``[project.scripts]`` name of every distribution in the workspace."""
    names: set[str] = set()
    for pyproject in sorted(ROOT.glob("*/pyproject.toml")):
        with pyproject.open("rb") as handle:
            names.update(tomllib.load(handle).get("project", {}).get("scripts", {}))
    return sorted(names)


def test_the_scripts_are_found() -> None:
    assert {"zkr", "zkr-mcp", "zkr-web", "zkr-postgres"} <= set(console_scripts())


_FLAG = re.compile(rb"(?<![\w-])(--?[A-Za-z][\w-]*)")
_CHOICES = re.compile(rb"\{([\w,-]+)\}")
_LISTED = re.compile(rb"^  ([a-z][\w-]*)\s{2,}\S", re.MULTILINE)


def _help(argv: list[str]) -> bytes:
    done = subprocess.run(argv, capture_output=True, timeout=60, env=_environment(Path("/tmp")))
    return done.stdout + done.stderr


@cache
def vocabulary(script: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(subcommands, flags) the script's own help names, its subcommands' help included."""
    executable = str(BIN / script)
    top = _help([executable, "--help"])
    commands = {c.decode() for group in _CHOICES.findall(top) for c in group.split(b",")}
    commands |= {c.decode() for c in _LISTED.findall(top)}
    flags = {f.decode() for f in _FLAG.findall(top)}
    for command in sorted(commands)[:40]:
        flags |= {f.decode() for f in _FLAG.findall(_help([executable, command, "--help"]))}
    flags -= {"-h", "--help"}  # help is answered, not fuzzed
    return tuple(sorted(commands)), tuple(sorted(flags))


def _environment(home: Path) -> dict[str, str]:
    # Nothing of the caller's zkr settings, tokens or databases: a private home.
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "HERMES_HOME": str(home / "hermes"),
        "ZKR_E5_THREADS": "1",
        "ZKR_MINILM_THREADS": "1",
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Input files of every awkward kind, made once; runs get them by path."""
    folder = tmp_path_factory.mktemp("console-fuzz")
    made = {
        "zkr_db": folder / "memory.db",
        "not_db": folder / "notes.txt",
        "random": folder / "random.bin",
        "empty": folder / "empty",
        "foreign_sqlite": folder / "other.db",
        "directory": folder / "folder",
        "missing": folder / "missing.db",
        "under_file": folder / "notes.txt" / "x.db",
        "junk_lines": folder / "junk.jsonl",
        "bad_utf8": folder / "bad.txt",
    }
    with MemoryDb(made["zkr_db"]) as db:
        db.run(
            "remember",
            {"tenant_id": "t", "person_id": "p", "kind": "conversation", "text": "Sam likes tea",
             "captured_at": 1, "recorded_at": 1},
        )  # fmt: skip
    made["not_db"].write_bytes(b"not a database\n" * 50)
    made["random"].write_bytes(bytes(range(256)) * 8)
    made["empty"].write_bytes(b"")
    with sqlite3.connect(made["foreign_sqlite"]) as conn:
        conn.execute("CREATE TABLE t(x)")
    made["directory"].mkdir()
    made["junk_lines"].write_bytes(
        b'{"tenant_id":"t"}\n[1,2]\nnot json\n{"text":NaN}\n{"id":"\\ud800"}\n' + b"[" * 5000
    )
    made["bad_utf8"].write_bytes(b"token\xff\xfe\n")
    return made


HOSTILE = [
    "", " ", "0", "-1", "1", "65536", "99999999999999999999", "1e999", "nan", "-0", "a/b",
    "m/", "/v", "x" * 3000, "\udcff\udcfe", "é💥", "127.0.0.2", "LOCALHOST", "0.0.0.0", "::1",
    "not a dsn", "postgresql://zkr@127.0.0.1:1/none?connect_timeout=3", "t", "p", "stdio",
    "streamable-http", "-", "--", "NAME=x", "{}", '{"command":"search"}',
]  # fmt: skip
STDIN = [
    b"",
    b"\n\n",
    b"not json\n",
    b'{"id":1,"command":"search","request":{"tenant_id":"t","person_id":"p","query":NaN}}\n',
    b'{"id":"x","command":"search","request":{"query":"\xff"}}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n',
    b'{"tenant_id":"t","person_id":"p","query":"tea"}',
    b"[" * 10000,
]


#: A command line that gets past argument parsing, per script; the fuzz appends options to it (a
#: later flag overrides an earlier one), so hostile values reach the code behind the parser. No base
#: for zkr-web: a well-formed one serves until stopped (8 s per example).
BASES: dict[str, list[str]] = {
    "zkr-mcp": ["--db", "{zkr_db}", "--tenant", "t", "--person", "p"],
    "zkr-postgres": ["sync", "--dsn", "postgresql://zkr@127.0.0.1:1/none?connect_timeout=3",
                     "--db", "{zkr_db}"],
    "zkr-hermes": ["status"],
    "zkr-openclaw-bridge": ["install", "{directory}"],
    "zkr": ["--db", "{zkr_db}", "search"],
}  # fmt: skip


def command_lines(script: str, files: dict[str, Path]) -> st.SearchStrategy[list[str]]:
    commands, flags = vocabulary(script)
    paths = [str(path) for path in files.values()]
    # What a command line can hold: no NUL, no surrogate but the escapes of invalid bytes.
    typed = st.text(
        st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12
    )
    value = st.one_of(st.sampled_from(HOSTILE), st.sampled_from(paths), typed)
    option = st.one_of(
        st.tuples(st.sampled_from(flags or ("--x",)), value).map(list),
        st.sampled_from(flags or ("--x",)).map(lambda flag: [flag]),
        value.map(lambda v: [v]),
    )
    head = (
        st.one_of(st.sampled_from(commands).map(lambda c: [c]), st.just([]))
        if commands
        else (st.just([]))
    )
    # zkr takes --db before its command: give it a database most of the time.
    db = st.sampled_from(paths).map(lambda p: ["--db", p]) if script == "zkr" else st.just([])
    built = st.tuples(db, head, st.lists(option, max_size=5)).map(
        lambda parts: [*parts[0], *parts[1], *(word for pair in parts[2] for word in pair)]
    )
    if script not in BASES:
        return built
    base = [word.format(**{k: str(v) for k, v in files.items()}) for word in BASES[script]]
    extended = st.lists(option, max_size=3).map(
        lambda options: [*base, *(word for pair in options for word in pair)]
    )
    return st.one_of(built, extended)


def _run(script: str, argv: list[str], stdin: bytes, home: Path) -> tuple[int, bytes, bytes, bool]:
    process = subprocess.Popen(
        [str(BIN / script), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=home,
        env=_environment(home),
        start_new_session=True,
    )
    try:
        out, err = process.communicate(stdin, timeout=TIMEOUT)
        return process.returncode, out, err, False
    except subprocess.TimeoutExpired:  # a server that started: stop it, keep what it printed
        process.kill()
        out, err = process.communicate()
        return process.returncode, out, err, True


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("script", console_scripts())
def test_no_console_script_ever_prints_a_traceback(
    script: str, files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    if not (BIN / script).exists():
        pytest.skip(f"{script} is not installed in this environment")
    seen = {"runs": 0, "failed": 0, "served": 0}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(argv=command_lines(script, files), stdin=st.sampled_from(STDIN) | st.binary(max_size=64))
    def run_one(argv: list[str], stdin: bytes) -> None:
        home = tmp_path_factory.mktemp("home")
        try:
            status, out, err, served = _run(script, argv, stdin, home)
        finally:
            shutil.rmtree(home, ignore_errors=True)
        seen["runs"] += 1
        seen["failed"] += status not in (0, None) and not served
        seen["served"] += served
        shown = err.decode("utf-8", "replace")[-3000:]
        assert TRACEBACK not in err and TRACEBACK not in out, (argv, shown)
        assert served or status >= 0, (argv, status, shown)  # never killed by a signal of its own

    run_one()
    print(f"{script}: {seen}")


#: What printed a traceback on zkr 0.3 (issue 26), each as the command line that did it.
KNOWN = [
    ("zkr-mcp", ["--db", "{not_db}", "--tenant", "a", "--person", "b"]),
    ("zkr-mcp", ["--db", "{under_file}", "--tenant", "a", "--person", "b"]),
    ("zkr-web", ["--db", "{not_db}", "--tenant", "a", "--person", "b", "--port", "0"]),
    ("zkr-web", ["--db", "{under_file}", "--tenant", "a", "--person", "b", "--port", "0"]),
    ("zkr-hermes", ["install", "--hermes-home", "{not_db}"]),
    ("zkr-openclaw-bridge", ["install", "{not_db}"]),
    ("zkr-openclaw-bridge", ["install", "{under_file}"]),
]


@pytest.mark.parametrize(("script", "template"), KNOWN)
def test_each_known_traceback_is_now_one_line(
    script: str, template: list[str], files: dict[str, Path], home: Path
) -> None:
    if not (BIN / script).exists():
        pytest.skip(f"{script} is not installed in this environment")
    argv = [word.format(**{k: str(v) for k, v in files.items()}) for word in template]
    status, out, err, served = _run(script, argv, b"", home)
    assert not served and status == 1, (status, err)
    assert TRACEBACK not in err and TRACEBACK not in out
    lines = err.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script}: "), lines
