"""What one hook invocation does: recall into additionalContext, or capture the new turns.

Never in the host's way: any failure (a missing or locked database, a newer schema, a torn
transcript, bad input) ends the hook with exit status 0, no output on stdout, and one line on
stderr. Claude Code and Codex treat exit 0 as success and show stderr only in verbose/debug views,
so a broken memory costs the person nothing but the memory. (Exit 2 would block the prompt; other
codes show an error to the person on every turn.)
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from zkr.db import MemoryDb
from zkr.errors import ConflictError, ZkrError
from zkr.tool_calls import run_scoped
from zkr.writes.capture import is_stored
from zkr_agent_hooks.context import Cited, render
from zkr_agent_hooks.events import CAPTURE_EVENTS, RECALL_EVENTS, HookEvent, Host
from zkr_agent_hooks.scope import Scope
from zkr_agent_hooks.transcripts import read_turns

__all__ = [
    "ABSORBED",
    "PROMPT_QUERY_CHARS",
    "RECALL_LIMIT",
    "START_LIMIT",
    "capture",
    "handle",
    "recall_context",
]

#: Memories recalled for a prompt, and listed at session start.
RECALL_LIMIT = 6
START_LIMIT = 8
#: What session start lists: every kind of claim a person states about themselves.
CLAIM_KINDS = ["profile_fact", "preference", "fact", "task", "skill", "recommendation"]
#: A prompt longer than this is searched by its beginning (a pasted file is not a question).
PROMPT_QUERY_CHARS = 2000
#: A turn larger than this is not captured (zkr refuses requests over 1 MiB).
MAX_TURN_BYTES = 512 * 1024


def _open(scope: Scope) -> MemoryDb:
    Path(scope.db).expanduser().parent.mkdir(parents=True, exist_ok=True)
    return MemoryDb(os.path.expanduser(scope.db))


def _run(db: MemoryDb, scope: Scope, name: str, fields: dict[str, Any]) -> Any:
    """Operation *name* in the hook's scope (zkr-core's run: validation, busy retry)."""
    return run_scoped(db, name, fields, tenant_id=scope.tenant_id, person_id=scope.person_id)


def recall_context(db: MemoryDb, scope: Scope, event: HookEvent) -> str:
    """The cited block for *event*: a search of the prompt, or at session start the person's
    newest current claims (what they told the agent about themselves)."""
    if event.name == "UserPromptSubmit":
        query = (event.prompt or "").strip()[:PROMPT_QUERY_CHARS]
        if not query:
            return ""
        pack = _run(db, scope, "search", {"query": query, "limit": RECALL_LIMIT})
        return render(Cited(item.excerpt, tuple(item.evidence_ids)) for item in pack.items)
    page = _run(db, scope, "memories", {"claim_kinds": CLAIM_KINDS, "limit": START_LIMIT})
    return render(
        Cited(
            f"{item.claim.subject} {item.claim.predicate} {item.claim.value}",
            tuple(item.evidence_ids),
        )
        for item in page.items
        if item.claim is not None
    )


def capture(db: MemoryDb, scope: Scope, host: Host, event: HookEvent) -> tuple[int, int]:
    """Remember the transcript's turns that are not stored yet: ``(stored, already)``.

    A turn is keyed by host, session and turn id, so a hook that fires twice (PreCompact then
    SessionEnd, or a retried hook) stores each turn once; a turn the person deleted stays deleted.
    """
    if not event.transcript_path:
        return (0, 0)
    stored = already = 0
    now = int(time.time())
    for turn in read_turns(event.transcript_path, host, event.session_id):
        text = turn.capture_text()
        if len(text.encode("utf-8")) > MAX_TURN_BYTES or is_stored(
            db.conn, scope.tenant_id, scope.person_id, turn.key
        ):
            already += 1
            continue
        captured = now if turn.captured_at is None else max(0, min(turn.captured_at, now))
        request = {
            **scope.fields(),
            "kind": "conversation",
            "text": text,
            "captured_at": captured,
            "recorded_at": now,
            "ingestion_key": turn.key,
        }
        try:
            db.remember(request)
        except ConflictError:  # another hook stored it between the check and the write
            already += 1
            continue
        stored += 1
    return (stored, already)


def handle(event: HookEvent, host: Host, scope: Scope) -> dict[str, Any] | None:
    """The JSON the hook prints for *event*, or None to print nothing."""
    if event.name not in RECALL_EVENTS | CAPTURE_EVENTS:
        return None
    with _open(scope) as db:
        if event.name in CAPTURE_EVENTS:
            capture(db, scope, host, event)
            return None
        text = recall_context(db, scope, event)
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": text}}


#: What a hook absorbs instead of failing the host's turn (bad input is a ValueError).
ABSORBED = (ZkrError, sqlite3.Error, OSError, ValueError)
