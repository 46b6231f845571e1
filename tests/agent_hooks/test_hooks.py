"""zkr-agent-hooks with the hook inputs and transcripts the hosts document (samples/SOURCES.md).

Each test runs the real console script as the host does: one JSON object on stdin, the scope in
the environment, stdout and the exit status read back.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from zkr.db import MemoryDb

SAMPLES = Path(__file__).with_name("samples")
SCOPE = {"tenant_id": "local", "person_id": "alex"}


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        data = json.loads(self.stdout)
        assert isinstance(data, dict)
        return data


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "ZKR_DB": str(tmp_path / "zkr" / "memory.db"),
        "ZKR_TENANT": SCOPE["tenant_id"],
        "ZKR_PERSON": SCOPE["person_id"],
    }


def sample(name: str, **changes: Any) -> dict[str, Any]:
    data = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    data.update(changes)
    return data


def hook(host: str, payload: dict[str, Any] | bytes, env: dict[str, str]) -> Outcome:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = subprocess.run(
        [sys.executable, "-m", "zkr_agent_hooks", "run", "--host", host],
        input=body,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    return Outcome(done.returncode, done.stdout.decode(), done.stderr.decode())


def captures(env: dict[str, str]) -> list[tuple[str, str, int]]:
    with sqlite3.connect(env["ZKR_DB"]) as conn:
        rows = conn.execute(
            "SELECT ingestion_key, content, captured_at FROM sources"
            " WHERE tenant_id = ? AND person_id = ? ORDER BY captured_at, ingestion_key",
            (SCOPE["tenant_id"], SCOPE["person_id"]),
        ).fetchall()
    return [(key, text, at) for key, text, at in rows]


# -- capture ------------------------------------------------------------------------------------


def test_claude_code_session_end_remembers_each_conversation_turn(env: dict[str, str]) -> None:
    transcript = str(SAMPLES / "claude-code-transcript.jsonl")
    outcome = hook(
        "claude-code", sample("claude-code-session-end.json", transcript_path=transcript), env
    )
    assert (outcome.returncode, outcome.stdout) == (0, "")
    assert [(key.rsplit(":", 1)[1][-1], text) for key, text, _ in captures(env)] == [
        ("1", "User: I'm flying to Lisbon on the 14th for the conference."),
        ("2", "Assistant: Noted: Lisbon on the 14th. Shall I draft the packing list?"),
        ("3", "User: Yes please, and remember I prefer aisle seats."),
    ]
    keys = [key for key, _, _ in captures(env)]
    assert all(key.startswith("claude-code:abc123:c0ffee00-") for key in keys)
    # Captured when said (the transcript's timestamp), not when the hook ran.
    assert captures(env)[0][2] == 1795166102


def test_a_hook_that_fires_twice_stores_each_turn_once(env: dict[str, str]) -> None:
    transcript = str(SAMPLES / "claude-code-transcript.jsonl")
    for name in ("claude-code-pre-compact.json", "claude-code-session-end.json"):
        assert hook("claude-code", sample(name, transcript_path=transcript), env).returncode == 0
    again = hook(
        "claude-code", sample("claude-code-session-end.json", transcript_path=transcript), env
    )
    assert (again.returncode, again.stdout) == (0, "")
    assert len(captures(env)) == 3


def test_new_turns_are_added_and_deleted_ones_stay_deleted(
    env: dict[str, str], tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    lines = (SAMPLES / "claude-code-transcript.jsonl").read_text(encoding="utf-8").splitlines()
    transcript.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    event = sample("claude-code-pre-compact.json", transcript_path=str(transcript))
    hook("claude-code", event, env)
    first = captures(env)
    assert len(first) == 2
    with MemoryDb(env["ZKR_DB"]) as db:
        source = db.captures({**SCOPE, "limit": 10})
        lisbon = next(c for c in source if "Lisbon on the 14th for" in c.text)
        db.delete({**SCOPE, "source_id": lisbon.source_id, "deleted_at": int(time.time()) + 1})
    # The host appends the rest of the session, plus a torn line it is still writing.
    transcript.write_text("\n".join(lines) + '\n{"type":"user","mess', encoding="utf-8")
    hook(
        "claude-code", sample("claude-code-session-end.json", transcript_path=str(transcript)), env
    )
    with MemoryDb(env["ZKR_DB"]) as db:
        live = sorted(c.text for c in db.captures({**SCOPE, "limit": 10}))
    assert live == [
        "Assistant: Noted: Lisbon on the 14th. Shall I draft the packing list?",
        "User: Yes please, and remember I prefer aisle seats.",
    ]


def test_codex_stop_remembers_what_the_person_and_agent_said(env: dict[str, str]) -> None:
    rollout = str(SAMPLES / "codex-rollout.jsonl")
    for name in ("codex-stop.json", "codex-pre-compact.json"):
        outcome = hook("codex", sample(name, transcript_path=rollout), env)
        assert (outcome.returncode, outcome.stdout) == (0, "")
    assert [(key, text) for key, text, _ in captures(env)] == [
        (
            "codex:0199a213-81c0-7800-8aa1-bbab2a035a53:4",
            "User: Make the deploy script check the branch first; we only deploy from main.",
        ),
        (
            "codex:0199a213-81c0-7800-8aa1-bbab2a035a53:7",
            "Assistant: Done: the deploy script now checks the branch first.",
        ),
    ]


# -- recall -------------------------------------------------------------------------------------


def _remember_trip(env: dict[str, str]) -> str:
    transcript = str(SAMPLES / "claude-code-transcript.jsonl")
    hook("claude-code", sample("claude-code-session-end.json", transcript_path=transcript), env)
    with MemoryDb(env["ZKR_DB"]) as db:
        result = db.remember(
            {
                **SCOPE,
                "kind": "conversation",
                "text": "I prefer aisle seats on planes.",
                "captured_at": 1795166260,
                "recorded_at": 1795166260,
                "claim": {
                    "subject": "alex",
                    "predicate": "prefers",
                    "value": "aisle seats",
                    "kind": "preference",
                    "valid_from": 1795166260,
                },
            }
        )
    return result.evidence_id


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_prompt_gets_cited_memories_as_additional_context(host: str, env: dict[str, str]) -> None:
    _remember_trip(env)
    outcome = hook(host, sample(f"{host}-user-prompt-submit.json"), env)
    assert outcome.returncode == 0, outcome.stderr
    output = outcome.json()
    # The documented output: only hookSpecificOutput, naming its event.
    assert set(output) == {"hookSpecificOutput"}
    specific = output["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}
    assert specific["hookEventName"] == "UserPromptSubmit"
    context = specific["additionalContext"]
    assert context.startswith("[zkr cited memory]\n- ")
    line = next(line for line in context.splitlines() if "Lisbon on the 14th for" in line)
    with MemoryDb(env["ZKR_DB"]) as db:
        cited = {c.evidence_id for c in db.captures({**SCOPE, "limit": 10})}
    evidence = line.rsplit("[evidence: ", 1)[1].rstrip("]")
    assert evidence in cited


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_session_start_gives_the_persons_current_claims(host: str, env: dict[str, str]) -> None:
    evidence = _remember_trip(env)
    outcome = hook(host, sample(f"{host}-session-start.json"), env)
    assert outcome.returncode == 0, outcome.stderr
    specific = outcome.json()["hookSpecificOutput"]
    assert specific["hookEventName"] == "SessionStart"
    assert specific["additionalContext"] == (
        f"[zkr cited memory]\n- alex prefers aisle seats [evidence: {evidence}]"
    )


def test_nothing_to_recall_prints_nothing(env: dict[str, str]) -> None:
    outcome = hook("claude-code", sample("claude-code-user-prompt-submit.json"), env)
    assert (outcome.returncode, outcome.stdout) == (0, "")


def test_another_persons_memories_are_never_recalled(env: dict[str, str]) -> None:
    _remember_trip(env)
    other = {**env, "ZKR_PERSON": "sam"}
    for name in ("claude-code-user-prompt-submit.json", "claude-code-session-start.json"):
        outcome = hook("claude-code", sample(name), other)
        assert (outcome.returncode, outcome.stdout) == (0, "")


# -- never in the host's way --------------------------------------------------------------------


def _broken_databases(tmp_path: Path) -> dict[str, Path]:
    not_a_database = tmp_path / "garbage.db"
    not_a_database.write_bytes(b"this is not sqlite" * 100)
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 999")
        conn.execute("CREATE TABLE t (x)")
    unreadable_parent = tmp_path / "file-in-the-way"
    unreadable_parent.write_text("x", encoding="utf-8")
    return {
        "not a database": not_a_database,
        "a directory": tmp_path,
        "a newer schema": newer,
        "under a file": unreadable_parent / "memory.db",
    }


@pytest.mark.parametrize(
    "name",
    [
        "claude-code-user-prompt-submit.json",
        "claude-code-session-start.json",
        "claude-code-session-end.json",
        "codex-stop.json",
    ],
)
def test_a_failing_database_never_fails_the_hook(
    name: str, env: dict[str, str], tmp_path: Path
) -> None:
    transcript = str(SAMPLES / "claude-code-transcript.jsonl")
    for why, path in _broken_databases(tmp_path).items():
        outcome = hook(
            "codex" if name.startswith("codex") else "claude-code",
            sample(name, transcript_path=transcript),
            {**env, "ZKR_DB": str(path)},
        )
        assert (outcome.returncode, outcome.stdout) == (0, ""), why
        assert outcome.stderr.startswith("zkr-agent-hooks: memory skipped: "), why
        assert outcome.stderr.count("\n") == 1 and "Traceback" not in outcome.stderr, why


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b"[]", b'{"hook_event_name": "UserPromptSubmit"}', b"\xff\xfe"],
)
def test_bad_input_never_fails_the_hook(body: bytes, env: dict[str, str]) -> None:
    outcome = hook("claude-code", body, env)
    assert (outcome.returncode, outcome.stdout) == (0, "")
    assert outcome.stderr.startswith("zkr-agent-hooks: memory skipped: ")


def test_a_missing_transcript_never_fails_the_hook(env: dict[str, str], tmp_path: Path) -> None:
    event = sample("claude-code-session-end.json", transcript_path=str(tmp_path / "gone.jsonl"))
    outcome = hook("claude-code", event, env)
    assert (outcome.returncode, outcome.stdout) == (0, "")
    assert "memory skipped" in outcome.stderr


def test_events_it_does_not_handle_are_left_alone(env: dict[str, str]) -> None:
    event = sample("claude-code-user-prompt-submit.json", hook_event_name="PreToolUse")
    outcome = hook("claude-code", event, env)
    assert (outcome.returncode, outcome.stdout, outcome.stderr) == (0, "", "")
    assert not Path(env["ZKR_DB"]).exists()


def test_a_forgotten_turn_is_not_captured_again(env: dict[str, str]) -> None:
    # The transcript still holds the turn; the erased source keeps its key, so the next capture
    # skips it instead of bringing the text back (erasure is absorbing, docs/erasure.md).
    transcript = str(SAMPLES / "claude-code-transcript.jsonl")
    event = sample("claude-code-session-end.json", transcript_path=transcript)
    hook("claude-code", event, env)
    with MemoryDb(env["ZKR_DB"]) as db:
        lisbon = next(
            c for c in db.captures({**SCOPE, "limit": 10}) if "Lisbon on the 14th for" in c.text
        )
        db.forget({**SCOPE, "source_id": lisbon.source_id, "erased_at": int(time.time()) + 1})
    again = hook("claude-code", event, env)
    assert (again.returncode, again.stdout) == (0, "")
    with MemoryDb(env["ZKR_DB"]) as db:
        texts = [c.text for c in db.captures({**SCOPE, "limit": 10})]
    assert len(texts) == 2 and not any("Lisbon on the 14th for" in t for t in texts)
    assert b"flying to Lisbon" not in Path(env["ZKR_DB"]).read_bytes()
