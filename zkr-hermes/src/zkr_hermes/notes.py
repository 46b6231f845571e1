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

from zkr import operations
from zkr.db import MemoryDb
from zkr_hermes import lookups
from zkr_hermes.config import Scope

__all__ = ["mirror_note"]

log = logging.getLogger("zkr_hermes")


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
        "ingestion_key": f"{lookups.NOTE_KEY_PREFIX}{uuid.uuid4()}",
        "claim": {
            "subject": _subject(target),
            "predicate": lookups.NOTE_PREDICATE,
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
    claim_id = lookups.live_note_claim(db, scope, subject, old_text) if old_text else None
    if action == "replace":
        if not content:
            return
        if claim_id is None:
            enqueue(_note_request(scope, str(target), content, now))
            return
        valid_at, recorded_at = lookups.correction_times(db, scope, claim_id, now)
        operations.run(
            db,
            "correct",
            {
                "tenant_id": scope.tenant_id,
                "person_id": scope.person_id,
                "claim_id": claim_id,
                "text": content,
                "value": content,
                "valid_at": valid_at,
                "recorded_at": recorded_at,
            },
        )
        return
    if claim_id is None:
        log.debug("zkr: removed note not found in zkr")
        return
    for source_id in lookups.supporting_sources(db, scope, claim_id):
        deleted_at = lookups.deletion_time(db, scope, source_id, now)
        operations.run(
            db,
            "delete",
            {
                "tenant_id": scope.tenant_id,
                "person_id": scope.person_id,
                "source_id": source_id,
                "deleted_at": deleted_at,
            },
        )
