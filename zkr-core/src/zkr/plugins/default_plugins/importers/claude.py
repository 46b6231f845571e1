"""``claude``: the ``conversations.json`` of a Claude data export (Settings → Privacy → Export
data).

The file is a JSON array of conversations: ``uuid``, ``name``, ``created_at`` and
``chat_messages``, a list in the order the turns were written. A message has a ``uuid``, a
``sender`` (``human`` or ``assistant``), ``created_at`` (ISO 8601), ``text`` (the whole turn) and
``content`` (blocks: ``{"type": "text", "text": ...}``, ``tool_use``, ``tool_result``).

What is captured: every message with text (``text``, or else the text blocks of ``content``),
its sender kept as the author. Skipped, and counted: messages without text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from zkr.plugins.default_plugins.importers._json import (
    conversations,
    iso_seconds,
    refuse,
    text_field,
)
from zkr.plugins.importers import Importer, ImportItem, Message, Skipped

__all__ = ["ClaudeImporter"]

_NAME = "claude"


class ClaudeImporter(Importer):
    """Reads a Claude ``conversations.json``."""

    name: ClassVar[str] = _NAME
    description: ClassVar[str] = "Claude data export: conversations.json"

    def read(self, path: Path) -> Iterator[ImportItem]:
        for index, conversation in enumerate(conversations(_NAME, path, "Claude")):
            where = f"conversation {index}"
            if not isinstance(conversation, dict) or not isinstance(
                conversation.get("chat_messages"), list
            ):
                refuse(_NAME, path, f"not a Claude export ({where} has no chat_messages)")
            conversation_id = text_field(conversation.get("uuid"), f"{where} uuid", _NAME, path)
            for message in conversation["chat_messages"]:
                yield _message(path, conversation_id, message)


def _message(path: Path, conversation_id: str, message: object) -> ImportItem:
    if not isinstance(message, dict):
        refuse(_NAME, path, f"a message of conversation {conversation_id!r} is not an object")
    message_id = text_field(message.get("uuid"), "message uuid", _NAME, path)
    where = f"message {message_id!r}"
    sender = text_field(message.get("sender"), f"{where} sender", _NAME, path)
    at = iso_seconds(message.get("created_at"), f"{where} created_at", _NAME, path)
    text = _text(message)
    if not text.strip():
        return Skipped(message_id, "no text")
    return Message.from_ids(_NAME, conversation_id, message_id, text=text, at=at, author=sender)


def _text(message: Mapping[str, Any]) -> str:
    text = message.get("text")
    if isinstance(text, str) and text.strip():
        return text
    blocks = message.get("content")
    if not isinstance(blocks, list):
        return ""
    pieces = [block for block in blocks if isinstance(block, dict) and block.get("type") == "text"]
    return "\n".join(block["text"] for block in pieces if isinstance(block.get("text"), str))
