"""Mirror Hermes' built-in ``memory`` tool (MEMORY.md / USER.md notes) into zkr.

Each added note becomes a cited memory: an ``integration`` source with a ``fact`` claim
``(<user|agent>, noted, <note>)``. Hermes edits notes by substring (``old_text``), so a replace
corrects the newest live note claim containing that text (history is kept), and a remove deletes
the sources that support it. A replace whose note zkr never saw is stored as a new note.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from zkr.db import MemoryDb
from zkr_hermes.config import Scope

__all__ = ["mirror_note"]

log = logging.getLogger("zkr_hermes")

NOTE_KEY_PREFIX = "hermes-memory:"
NOTE_PREDICATE = "noted"


def _subject(target: str) -> str:
    # Hermes' targets: "user" (USER.md, about the user) and "memory" (MEMORY.md, the agent's notes).
    return "user" if target == "user" else "agent"


def _note_request(scope: Scope, target: str, content: str, now: int) -> dict[str, Any]:
    return {
        "tenant_id": scope.tenant_id,
        "person_id": scope.person_id,
        "kind": "integration",
        "text": content,
        "captured_at": now,
        "recorded_at": now,
        "ingestion_key": f"{NOTE_KEY_PREFIX}{uuid.uuid4()}",
        "claim": {
            "subject": _subject(target),
            "predicate": NOTE_PREDICATE,
            "value": content,
            "kind": "fact",
            "valid_from": now,
        },
    }


def mirror_note(
    db: MemoryDb,
    scope: Scope,
    enqueue: Callable[[dict[str, Any]], None],
    action: str,
    target: str,
    content: str,
    metadata: dict[str, Any] | None,
) -> None:
    """Apply one built-in memory write. Adds go through the durable queue; edits run now."""
    content = str(content or "").strip()
    old_text = str((metadata or {}).get("old_text") or "").strip()
    now = int(time.time())
    subject = _subject(str(target))
    if action == "add":
        if content:
            enqueue(_note_request(scope, str(target), content, now))
        return
    if action not in ("replace", "remove"):
        return
    claim = _live_note_claim(db, scope, subject, old_text) if old_text else None
    if action == "replace":
        if not content:
            return
        if claim is None:
            enqueue(_note_request(scope, str(target), content, now))
            return
        _run_tool(
            db, scope, "correct", {"claim_id": claim.id, "text": content, "value": content}, now
        )
        return
    if claim is None:
        log.debug("zkr: removed note not found in zkr")
        return
    for source_id in claim.source_ids:
        _run_tool(db, scope, "delete", {"source_id": source_id}, now)


def _live_note_claim(db: MemoryDb, scope: Scope, subject: str, fragment: str) -> Any:
    """The newest live note claim about *subject* whose value contains *fragment*, or None."""
    found = db.run(
        "claims",
        {
            "tenant_id": scope.tenant_id,
            "person_id": scope.person_id,
            "subject": subject,
            "predicate": NOTE_PREDICATE,
            "contains": fragment,
            "limit": 1,
        },
    )
    return found[0] if found else None


def _run_tool(db: MemoryDb, scope: Scope, name: str, args: dict[str, Any], now: int) -> None:
    """Run *name* as its tool would: "now" lands after the claim or source it touches."""
    from zkr.operations import OPERATIONS
    from zkr.tool_calls import call_tool

    call_tool(
        db, OPERATIONS[name], args, tenant_id=scope.tenant_id, person_id=scope.person_id, now=now
    )
