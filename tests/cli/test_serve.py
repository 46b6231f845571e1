"""``zkr --db PATH serve``: one process, one JSON line per request, errors never end the loop."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.conftest import MAX_REQUEST_BYTES, Outcome, db_snapshot, remember_payload

SCOPE = {"tenant_id": "a", "person_id": "sam"}


def _line(command: str, request: Any, **extra: Any) -> bytes:
    return json.dumps({"command": command, "request": request, **extra}).encode() + b"\n"


def _answers(outcome: Outcome) -> list[Any]:
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stderr == b""
    assert outcome.stdout.endswith(b"\n")
    return [json.loads(line) for line in outcome.stdout.splitlines()]


def test_serve_answers_each_line_and_survives_failures(
    run: Callable[..., Outcome], zkr: Callable[..., Outcome], db_path: Path
) -> None:
    stdin = b"".join(
        [
            _line("remember", remember_payload("Acme")),
            b"{not json\n",
            _line("remember", {**remember_payload("Beta"), "tenant_id": " "}),
            _line("teleport", {}),
            b'{"request": {}}\n',
            b"[1, 2]\n",
            _line("search", {**SCOPE, "query": "Acme", "limit": 10.0}),
            _line("search", {**SCOPE, "query": "Acme"}),
            _line("locator", {**SCOPE, "evidence_id": "0" * 32}),
            b"   \n",  # blank: no answer
            _line("profiles", SCOPE),
            b'{"command":"search","request":{"tenant_id":"a","tenant_id":"a"}}\n',
        ]
    )
    answers = _answers(run("--db", str(db_path), "serve", stdin=stdin))
    assert len(answers) == 11
    stored = answers[0]
    assert set(stored) == {"claim_id", "evidence_id", "source_id"}
    # One envelope: the contract's message and the error's stable code (zkr.envelope).
    assert answers[1]["code"] == "parse_error" and set(answers[1]) == {"error", "code"}
    assert answers[2] == {"error": "tenant_id must not be empty", "code": "invalid"}
    assert answers[3] == {"error": 'unknown command "teleport"', "code": "invalid"}
    assert answers[4] == {"error": "missing field `command`", "code": "parse_error"}
    assert answers[5]["code"] == "parse_error" and set(answers[5]) == {"error", "code"}
    assert answers[6]["code"] == "parse_error"  # float for an integer
    [item] = answers[7]["items"]
    assert item["evidence_ids"] == [stored["evidence_id"]]
    assert answers[8] is None
    assert answers[9] == []
    assert "duplicate field `tenant_id`" in answers[10]["error"]

    # The same request answered by the one-shot command prints the same bytes.
    one_shot = zkr("search", {**SCOPE, "query": "Acme"})
    assert (
        one_shot.stdout
        == json.dumps(answers[7], sort_keys=True, separators=(",", ":")).encode() + b"\n"
    )


def test_serve_lines_are_byte_identical_to_one_shot_output(
    run: Callable[..., Outcome], zkr: Callable[..., Outcome], db_path: Path
) -> None:
    zkr("remember", remember_payload("Zoë's café")).ok()
    request = {**SCOPE, "query": "café"}
    served = run("--db", str(db_path), "serve", stdin=_line("search", request))
    assert served.stdout == zkr("search", request).stdout


def test_serve_refuses_oversized_lines_and_keeps_going(
    run: Callable[..., Outcome], db_path: Path
) -> None:
    huge_request = {**SCOPE, "query": "x" * (MAX_REQUEST_BYTES + 10)}
    enormous = b"y" * (3 * MAX_REQUEST_BYTES)  # not even JSON: refused before parsing
    exact = {**SCOPE, "query": "x"}
    padding = MAX_REQUEST_BYTES - len(json.dumps(exact, separators=(",", ":")))
    exact["query"] = "x" * (1 + padding)  # compact request of exactly 1,048,576 bytes
    assert len(json.dumps(exact, separators=(",", ":")).encode()) == MAX_REQUEST_BYTES
    stdin = b"".join(
        [
            _line("search", huge_request),
            enormous + b"\n",
            # The raw request text is measured (issue 18): written compactly, it is exactly 1 MiB.
            json.dumps({"command": "search", "request": exact}, separators=(",", ":")).encode()
            + b"\n",
            _line("search", {**SCOPE, "query": "tea"}),
        ]
    )
    answers = _answers(run("--db", str(db_path), "serve", stdin=stdin))
    too_large = {"error": "request exceeds 1048576 bytes", "code": "limit_exceeded"}
    assert answers[0] == answers[1] == too_large
    assert answers[2]["gaps"] == ["no cited memory matched"]
    assert answers[3]["query"] == "tea"
    assert len(answers) == 4


def test_serve_failed_mutations_change_nothing(
    run: Callable[..., Outcome], zkr: Callable[..., Outcome], db_path: Path
) -> None:
    zkr("remember", remember_payload("Acme")).ok()
    before = db_snapshot(db_path)
    bad = remember_payload("Beta", captured_at=1.5)
    stdin = b"".join(
        [
            _line("remember", bad),
            _line("remember", {**remember_payload("Beta"), "text": "  "}),
            _line("delete", {**SCOPE, "source_id": "0" * 32, "deleted_at": 5}),
        ]
    )
    answers = _answers(run("--db", str(db_path), "serve", stdin=stdin))
    assert [set(answer) for answer in answers] == [{"error", "code"}] * 3
    assert answers[1] == {"error": "text must not be empty", "code": "invalid"}
    assert answers[2] == {"error": "record not found", "code": "not_found"}
    assert db_snapshot(db_path) == before


def test_serve_echoes_an_id_for_pipelining_hosts(
    run: Callable[..., Outcome], db_path: Path
) -> None:
    stdin = b"".join(
        [
            _line("locator", {**SCOPE, "evidence_id": "e"}, id=1),
            _line("search", {**SCOPE, "query": " "}, id="q-2"),
            _line("profiles", SCOPE, id=None),
        ]
    )
    answers = _answers(run("--db", str(db_path), "serve", stdin=stdin))
    assert answers == [
        {"id": 1, "result": None},
        {"id": "q-2", "error": "query must not be empty", "code": "invalid"},
        {"id": None, "result": []},
    ]


def test_serve_ends_cleanly_on_eof(run: Callable[..., Outcome], db_path: Path) -> None:
    outcome = run("--db", str(db_path), "serve", stdin=b"")
    assert (outcome.returncode, outcome.stdout, outcome.stderr) == (0, b"", b"")
    assert db_path.exists()
    # a last line without its newline is still answered
    last = _line("profiles", SCOPE).rstrip(b"\n")
    assert _answers(run("--db", str(db_path), "serve", stdin=last)) == [[]]


def test_serve_answers_while_the_host_waits(cli_env: dict[str, str], db_path: Path) -> None:
    """Each answer is flushed at once: a host can write a line, read its answer, and go on."""
    process = subprocess.Popen(
        [sys.executable, "-m", "zkr_cli", "--db", str(db_path), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(_line("remember", remember_payload("Acme")))
        process.stdin.flush()
        stored = json.loads(process.stdout.readline())
        process.stdin.write(b"nonsense\n")
        process.stdin.flush()
        assert set(json.loads(process.stdout.readline())) == {"error", "code"}
        process.stdin.write(
            _line("get", {**SCOPE, "target": {"kind": "claim", "id": stored["claim_id"]}})
        )
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["excerpt"] == "Sam employer Acme"
        process.stdin.close()
        assert process.wait(timeout=30) == 0
        assert process.stdout.read() == b""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        assert process.stderr is not None
        process.stderr.close()
