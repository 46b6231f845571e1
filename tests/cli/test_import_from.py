"""``zkr import --from chatgpt|claude|mem0|notes`` (issue 28): the hand-written samples in
``import_samples/`` (see its README for where each format's description comes from) import with
their times, conversations and authors kept; a re-import changes nothing; a truncated or
wrong-format file is refused with one line and an unchanged database; 10,000 ChatGPT messages
import in one run with progress on a terminal."""

from __future__ import annotations

import json
import os
import pty
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Outcome, db_snapshot
from zkr import hookimpl
from zkr import models as m
from zkr.db import MemoryDb
from zkr.plugins.importers import Importer, ImportItem, Message, Skipped

SAMPLES = Path(__file__).with_name("import_samples")
SCOPE = ("--tenant", "t", "--person", "ada")
Run = Callable[..., Outcome]


def utc(text: str) -> int:
    return int(datetime.fromisoformat(text).astimezone(UTC).timestamp())


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """The notes sample, copied so the file without front matter has a known mtime."""
    folder = tmp_path / "notes"
    shutil.copytree(SAMPLES / "notes", folder)
    os.utime(folder / "journal" / "2024-06-01.txt", (1_717_243_200.75, 1_717_243_200.75))
    return folder


def source_of(name: str, notes: Path) -> Path:
    return notes if name == "notes" else SAMPLES / f"{name}-{_FILES[name]}"


_FILES = {
    "chatgpt": "conversations.json",
    "claude": "conversations.json",
    "mem0": "memories.json",
}

# What each sample holds: (text, captured_at, conversation, message id, author, kind).
EXPECTED: dict[str, list[tuple[str, int, str, str, str, str]]] = {
    "chatgpt": [
        (
            "I am moving to Lisbon in May. Which neighbourhood suits a cyclist?",
            1714557620,
            "c0ffee00-0000-4000-8000-000000000001",
            "u-1-edited",
            "user",
            "conversation",
        ),
        (
            "Parque das Nações is flat and has cycle lanes along the river.",
            1714557630,
            "c0ffee00-0000-4000-8000-000000000001",
            "a-1",
            "assistant",
            "conversation",
        ),
        (
            "Here is my bike, a green Brompton.",
            1714557700,
            "c0ffee00-0000-4000-8000-000000000001",
            "u-2",
            "user",
            "conversation",
        ),
        # No create_time of its own: the conversation's.
        (
            "I prefer green tea to coffee.",
            1717236000,
            "c0ffee00-0000-4000-8000-000000000002",
            "u-3",
            "user",
            "conversation",
        ),
    ],
    "claude": [
        (
            "My allotment is plot 14 and I grow broad beans there.",
            utc("2024-03-10T09:15:05Z"),
            "5e1f0a2b-0000-4000-8000-00000000c1a1",
            "m-0001",
            "human",
            "conversation",
        ),
        (
            "Broad beans can be sown in March on plot 14.",
            utc("2024-03-10T09:15:20Z"),
            "5e1f0a2b-0000-4000-8000-00000000c1a1",
            "m-0002",
            "assistant",
            "conversation",
        ),
    ],
    "mem0": [
        (
            "Prefers morning meetings and async communication",
            utc("2024-07-20T21:10:00-07:00"),
            "arjun",
            "0b9e2d4c-0000-4000-8000-0000000000a1",
            "mem0",
            "integration",
        ),
        (
            "Is leading the API redesign project, targeting a Q2 launch",
            utc("2024-08-02T16:30:00Z"),
            "run-42",
            "0b9e2d4c-0000-4000-8000-0000000000a2",
            "planner",
            "integration",
        ),
    ],
    "notes": [
        (
            "Dentist appointment moved to Thursday 14:30.\nBring the X-ray from last year.\n",
            1_717_243_200,
            "notes",
            "journal/2024-06-01.txt",
            "user",
            "document",
        ),
        (
            '---\ncreated: "2024-06-02T10:30:00+02:00"\n---\n'
            "Met Rita about the garden share: she takes plot 15 from July.\n",
            utc("2024-06-02T08:30:00Z"),
            "notes",
            "journal/meeting.markdown",
            "user",
            "document",
        ),
        (
            (SAMPLES / "notes" / "shopping.md").read_text(encoding="utf-8"),
            utc("2024-05-03T00:00:00Z"),
            "notes",
            "shopping.md",
            "user",
            "document",
        ),
    ],
}

SKIPPED = {
    "chatgpt": {
        "no text": 1,
        "not on the current branch": 1,
        "system message": 1,
        "tool message": 1,
    },
    "claude": {"no text": 1},
    "mem0": {"no text": 1},
    "notes": {"empty note": 1, "not a Markdown or text file": 1},
}


def stored(db_path: Path) -> list[tuple[str, int, str, str, str, str]]:
    """Every capture with its locator, as (text, captured_at, stream, segment, device, kind)."""
    with MemoryDb(db_path) as db:
        captures: list[m.Capture] = db.captures(
            m.CapturesRequest(tenant_id="t", person_id="ada", limit=100)
        )
        rows = []
        for capture in captures:
            locator = db.locator(
                m.LocatorRequest(tenant_id="t", person_id="ada", evidence_id=capture.evidence_id)
            )
            assert locator is not None
            assert locator.start_ms // 1000 == capture.captured_at
            row = (capture.text, capture.captured_at, locator.stream_id, locator.segment_id)
            rows.append((*row, locator.device_id, capture.kind.value))
    return sorted(rows)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_sample_imports_and_a_reimport_changes_nothing(
    name: str, run: Run, db_path: Path, notes: Path
) -> None:
    path = str(source_of(name, notes))
    first = run("--db", str(db_path), "import", "--from", name, path, *SCOPE).json
    expected = sorted(EXPECTED[name])
    assert first == {
        "format": name,
        "read": len(expected),
        "stored": len(expected),
        "replayed": 0,
        "skipped": SKIPPED[name],
        "skipped_count": sum(SKIPPED[name].values()),
        "refused": [],
        "refused_count": 0,
    }
    assert stored(db_path) == expected
    before = db_snapshot(db_path)
    again = run("--db", str(db_path), "import", "--from", name, path, *SCOPE).json
    assert (again["stored"], again["replayed"]) == (0, len(expected))
    assert db_snapshot(db_path) == before


def test_imported_messages_are_found_by_search(run: Run, db_path: Path, notes: Path) -> None:
    for name in sorted(EXPECTED):
        run("--db", str(db_path), "import", "--from", name, str(source_of(name, notes)), *SCOPE)
    request = {"tenant_id": "t", "person_id": "ada", "query": "cycle Lisbon", "ranking": "recall"}
    pack = run("--db", str(db_path), "search", stdin=request).json
    assert pack["items"][0]["excerpt"].startswith("I am moving to Lisbon")
    assert all(item["evidence_ids"] for item in pack["items"])


def test_the_text_summary(run: Run, db_path: Path) -> None:
    path = str(SAMPLES / "claude-conversations.json")
    done = run("--db", str(db_path), "import", "--from", "claude", path, *SCOPE, "--format", "text")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines() == [
        "claude: 2 message(s) read: 2 stored, 0 replayed; 1 skipped, 0 refused",
        "    skipped 1: no text",
    ]


# ----------------------------------------------------------------------------------------------
# Bad files: refused with one line, nothing written
# ----------------------------------------------------------------------------------------------


def _truncated(tmp_path: Path, name: str) -> Path:
    whole = (SAMPLES / f"{name}-{_FILES[name]}").read_bytes()
    path = tmp_path / f"truncated-{name}.json"
    path.write_bytes(whole[: len(whole) // 2])
    return path


def _written(tmp_path: Path, value: Any) -> Path:
    path = tmp_path / "other.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def _raw(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "raw.json"
    path.write_text(text, encoding="utf-8")
    return path


def _one_message_export(create_time: str) -> str:
    message = (
        '{"id": "m", "author": {"role": "user"}, "create_time": TIME,'
        ' "content": {"content_type": "text", "parts": ["hello"]}}'
    ).replace("TIME", create_time)
    return (
        '[{"id": "c", "mapping": {"m": {"id": "m", "parent": null, "message": MESSAGE}}}]'.replace(
            "MESSAGE", message
        )
    )


BAD_FILES: list[tuple[str, Callable[[Path], Path], str]] = [
    *[
        (
            name,
            lambda tmp, name=name: _truncated(tmp, name),  # type: ignore[misc]
            f"{name}: truncated-{name}.json: not valid JSON (truncated?): ",
        )
        for name in ("chatgpt", "claude", "mem0")
    ],
    (
        "chatgpt",
        lambda tmp: SAMPLES / "claude-conversations.json",
        "chatgpt: claude-conversations.json: not a ChatGPT export (conversation 0 has no mapping)",
    ),
    (
        "claude",
        lambda tmp: SAMPLES / "chatgpt-conversations.json",
        "claude: chatgpt-conversations.json: not a Claude export"
        " (conversation 0 has no chat_messages)",
    ),
    (
        "mem0",
        lambda tmp: SAMPLES / "chatgpt-conversations.json",
        "mem0: chatgpt-conversations.json: not a mem0 export (item 0 has no memory)",
    ),
    (
        "chatgpt",
        lambda tmp: SAMPLES / "mem0-memories.json",
        "chatgpt: mem0-memories.json: not a ChatGPT export (the top level must be a list)",
    ),
    (
        "mem0",
        lambda tmp: _written(
            tmp,
            [
                {"id": "1", "memory": "x", "user_id": "a", "created_at": "2024-01-01T00:00:00Z"},
                {"id": "2", "memory": "y", "user_id": "b", "created_at": "2024-01-01T00:00:00Z"},
            ],
        ),
        "mem0: other.json: holds the memories of 2 users (a, b); export one user's memories",
    ),
    (
        "claude",
        lambda tmp: _written(
            tmp,
            [
                {
                    "uuid": "c",
                    "chat_messages": [
                        {
                            "uuid": "m1",
                            "sender": "human",
                            "text": "fine",
                            "created_at": "2024-01-01",
                        },
                        {"uuid": "m2", "sender": "human", "text": "late", "created_at": "soon"},
                    ],
                }
            ],
        ),
        "claude: other.json: message 'm2' created_at must be an ISO 8601 time, not 'soon'",
    ),
    (
        "chatgpt",
        lambda tmp: _raw(tmp, _one_message_export("Infinity")),
        "chatgpt: raw.json: not valid JSON: Infinity is not a JSON number",
    ),
    (
        "chatgpt",
        lambda tmp: _raw(tmp, _one_message_export("1e300")),
        "chatgpt:c:m: time 1e+300 is out of range",
    ),
    (
        "chatgpt",
        lambda tmp: tmp / "missing.json",
        "chatgpt: missing.json: cannot read it (No such file or directory)",
    ),
    ("notes", lambda tmp: tmp / "no-such-folder", "notes: no-such-folder: not a folder of notes"),
    (
        "evernote",
        lambda tmp: SAMPLES / "chatgpt-conversations.json",
        "unknown import format 'evernote' (installed: chatgpt, claude, mem0, notes)",
    ),
]


@pytest.mark.parametrize(("name", "make", "error"), BAD_FILES)
def test_a_bad_file_is_refused_in_one_line_and_changes_nothing(
    name: str, make: Callable[[Path], Path], error: str, run: Run, db_path: Path, tmp_path: Path
) -> None:
    path = str(SAMPLES / "claude-conversations.json")
    run("--db", str(db_path), "import", "--from", "claude", path, *SCOPE).ok()
    before = db_snapshot(db_path)
    message = run("--db", str(db_path), "import", "--from", name, str(make(tmp_path)), *SCOPE).error
    assert message.startswith(error), message
    assert db_snapshot(db_path) == before
    # Refused before the database is opened: a new one is not even created.
    fresh = tmp_path / "fresh.db"
    args = ("--db", str(fresh), "import", "--from", name, str(make(tmp_path)), *SCOPE)
    assert run(*args).error == message
    assert not fresh.exists()


def test_a_blank_scope_is_refused(run: Run, db_path: Path) -> None:
    path = str(SAMPLES / "claude-conversations.json")
    error = run("--db", str(db_path), "import", "--from", "claude", path).error
    assert error == "tenant_id must not be empty"


def test_a_notes_file_that_is_not_text_is_refused_and_the_rest_imported(
    run: Run, db_path: Path, notes: Path
) -> None:
    (notes / "scan.txt").write_bytes(b"\xff\xfe\x00garbage")
    summary = run("--db", str(db_path), "import", "--from", "notes", str(notes), *SCOPE).json
    assert summary["refused"] == [{"item": "scan.txt", "error": "not UTF-8 text"}]
    assert (summary["stored"], summary["refused_count"]) == (3, 1)


# ----------------------------------------------------------------------------------------------
# A third-party importer (the hook), and a refusal in the middle of writing
# ----------------------------------------------------------------------------------------------


class _LinesImporter(Importer):
    """``lines``: each line of a text file is a message; a line ``!`` yields a message of over
    1 MiB, which ``remember`` refuses (its export record is too big) after the lines before it
    were written."""

    name = "lines"
    description = "one message per line"

    def read(self, path: Path) -> Iterator[ImportItem]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                yield Skipped(str(number), "blank line")
                continue
            yield Message(
                key=f"lines:{path.name}:{number}",
                text="x" * 1_100_000 if line == "!" else line,
                at=1_700_000_000 + number,
                source="lines",
                conversation_id=path.name,
                message_id=str(number),
                author="user",
            )


class _LinesPlugin:
    @hookimpl
    def zkr_register_importers(self, register: Any) -> None:
        register(_LinesImporter())


def test_a_plugin_importer_is_used_by_zkr_import(
    registered_plugin: Any, zkr_inprocess: Run, db_path: Path, tmp_path: Path
) -> None:
    registered_plugin(_LinesPlugin(), name="lines-plugin")
    source = tmp_path / "diary.txt"
    source.write_text("first line\n\nsecond line\n", encoding="utf-8")
    summary = zkr_inprocess("--db", str(db_path), "import", "--from", "lines", str(source), *SCOPE)
    assert summary.json["stored"] == 2 and summary.json["skipped"] == {"blank line": 1}
    before = db_snapshot(db_path)
    later = tmp_path / "later.txt"
    later.write_text("third line\nfourth line\n!\n", encoding="utf-8")
    args = ("--db", str(db_path), "import", "--from", "lines", str(later), *SCOPE)
    error = "lines:later.txt:3: export record exceeds 1048576 bytes"
    assert zkr_inprocess(*args).error == error
    assert db_snapshot(db_path) == before  # the two good lines before it were rolled back


# ----------------------------------------------------------------------------------------------
# 10,000 ChatGPT messages, with progress on a terminal
# ----------------------------------------------------------------------------------------------


def chatgpt_export(conversations: int, per_conversation: int) -> list[dict[str, Any]]:
    """A generated export: linear conversations of alternating user and assistant turns."""
    export = []
    for c in range(conversations):
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None}}
        parent = "root"
        for i in range(per_conversation):
            node = f"c{c}-m{i}"
            mapping[parent]["children"] = [node]
            mapping[node] = {
                "id": node,
                "parent": parent,
                "children": [],
                "message": {
                    "id": node,
                    "author": {"role": "user" if i % 2 == 0 else "assistant"},
                    "create_time": 1_700_000_000 + c * 1000 + i + 0.5,
                    "content": {
                        "content_type": "text",
                        "parts": [f"turn {i} of conversation {c} about topic{(c * i) % 97}"],
                    },
                },
            }
            parent = node
        export.append({"id": f"conv-{c}", "create_time": 1_700_000_000.0, "mapping": mapping,
                       "current_node": parent})  # fmt: skip
    return export


def _run_on_a_terminal(argv: list[str]) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run zkr with stderr on a pseudo-terminal; the progress it wrote there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    env["ZKR_LOAD_PLUGINS"] = ""
    master, slave = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "zkr_cli", *argv],
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
            timeout=600,
            check=False,
        )
        os.close(slave)
        progress = b""
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            progress += chunk
    finally:
        os.close(master)
    return done, progress


@pytest.mark.slow
def test_ten_thousand_chatgpt_messages_import_with_progress(tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(1000, 10)), encoding="utf-8")
    db = tmp_path / "memory.db"
    argv = ["--db", str(db), "import", "--from", "chatgpt", str(export), *SCOPE]
    done, progress = _run_on_a_terminal(argv)
    assert done.returncode == 0, progress
    summary = json.loads(done.stdout)
    assert (summary["read"], summary["stored"], summary["replayed"]) == (10_000, 10_000, 0)
    assert b"import chatgpt: 10000/10000 message(s): 10000 stored, 0 replayed" in progress
    assert b"10000 message(s): 10000 stored, 0 replayed, 0 skipped, 0 refused\r\n" in progress
    conn = sqlite3.connect(db)
    try:
        count = conn.execute("SELECT count(*) FROM sources WHERE ingestion_key LIKE 'chatgpt:%'")
        assert count.fetchone()[0] == 10_000
        last = conn.execute(
            "SELECT captured_at FROM sources WHERE ingestion_key = 'chatgpt:conv-999:c999-m9'"
        ).fetchone()
        assert last == (1_700_000_000 + 999 * 1000 + 9,)
    finally:
        conn.close()
