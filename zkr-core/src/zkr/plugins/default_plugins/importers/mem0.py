"""``mem0``: memories exported from mem0 (``get_all`` / an export job, saved as JSON).

The file is either a JSON array of memories or an object whose ``results`` (or ``memories``) is
that array, as mem0's ``get_all`` answers. A memory has an ``id``, ``memory`` (its text),
``user_id``, ``created_at`` and ``updated_at`` (ISO 8601; ``updated_at`` may be null), optional
``agent_id``, ``run_id`` and ``metadata``.

What is captured: each memory's text, captured at ``updated_at`` (when the text became what it
is; ``created_at`` when never updated), as an ``integration`` capture; its ``run_id`` (else its
``user_id``) is the conversation and its ``agent_id`` (else ``mem0``) the author. An export that
holds the memories of more than one ``user_id`` is refused: import each person's memories into
their own scope. Skipped, and counted: memories without text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from zkr import models as m
from zkr.plugins.default_plugins.importers._json import (
    iso_seconds,
    load_json,
    refuse,
    text_field,
)
from zkr.plugins.importers import Importer, ImportItem, Message, Skipped

__all__ = ["Mem0Importer"]

_NAME = "mem0"


class Mem0Importer(Importer):
    """Reads a mem0 memories export."""

    name: ClassVar[str] = _NAME
    description: ClassVar[str] = "mem0 export: a JSON list of memories (or get_all's results)"

    def read(self, path: Path) -> Iterator[ImportItem]:
        memories = _memories(path, load_json(_NAME, path))
        users = sorted({str(memory.get("user_id")) for memory in memories})
        if len(users) > 1:
            shown = ", ".join(users[:3]) + (", …" if len(users) > 3 else "")
            refuse(
                _NAME,
                path,
                f"holds the memories of {len(users)} users ({shown}); export one user's memories",
            )
        for memory in memories:
            yield _memory(path, memory)


def _memories(path: Path, data: object) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        data = data.get("results", data.get("memories"))
    if not isinstance(data, list):
        refuse(_NAME, path, "not a mem0 export (no list of memories)")
    for index, memory in enumerate(data):
        if not isinstance(memory, dict) or "memory" not in memory:
            refuse(_NAME, path, f"not a mem0 export (item {index} has no memory)")
    return data


def _memory(path: Path, memory: dict[str, Any]) -> ImportItem:
    memory_id = text_field(memory.get("id"), "memory id", _NAME, path)
    where = f"memory {memory_id!r}"
    text = memory["memory"]
    if not isinstance(text, str):
        refuse(_NAME, path, f"{where}: memory must be a string")
    changed = memory.get("updated_at") or memory.get("created_at")
    at = iso_seconds(changed, f"{where} updated_at/created_at", _NAME, path)
    if not text.strip():
        return Skipped(memory_id, "no text")
    conversation = memory.get("run_id") or memory.get("user_id") or _NAME
    author = memory.get("agent_id") or _NAME
    return Message(
        key=f"{_NAME}:{memory_id}",
        text=text,
        at=at,
        source=_NAME,
        conversation_id=str(conversation),
        message_id=memory_id,
        author=str(author),
        kind=m.SourceKind.integration,
    )
