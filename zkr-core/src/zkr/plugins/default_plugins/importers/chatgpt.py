"""``chatgpt``: the ``conversations.json`` of a ChatGPT data export (Settings → Data controls →
Export data).

The file is a JSON array of conversations. A conversation has an ``id`` (or ``conversation_id``),
a ``create_time`` (seconds, a float), an optional ``current_node`` and a ``mapping``: node id →
``{"id", "parent", "children", "message"}``, a tree whose root has no message. A message has an
``id``, ``author.role`` (``user``, ``assistant``, ``system``, ``tool``), ``create_time`` (may be
null) and ``content`` (``content_type`` and ``parts``, the text pieces; other content types may
hold objects in ``parts``).

What is captured: the messages of the user and the assistant on the conversation's current branch
(from ``current_node`` up to the root, the thread the person saw), oldest first. Skipped, and
counted: system and tool messages, messages the export marks hidden, messages without text, and
messages on branches that an edit left behind.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from zkr.plugins.default_plugins.importers._json import conversations, refuse, text_field
from zkr.plugins.importers import Importer, ImportItem, Message, Skipped

__all__ = ["ChatGptImporter"]

_NAME = "chatgpt"
_SPOKEN = ("user", "assistant")


class ChatGptImporter(Importer):
    """Reads a ChatGPT ``conversations.json``."""

    name: ClassVar[str] = _NAME
    description: ClassVar[str] = "ChatGPT data export: conversations.json"

    def read(self, path: Path) -> Iterator[ImportItem]:
        for index, conversation in enumerate(conversations(_NAME, path, "ChatGPT")):
            yield from _conversation(path, index, conversation)


def _conversation(path: Path, index: int, conversation: object) -> Iterator[ImportItem]:
    where = f"conversation {index}"
    if not isinstance(conversation, dict) or not isinstance(conversation.get("mapping"), dict):
        refuse(_NAME, path, f"not a ChatGPT export ({where} has no mapping)")
    conversation_id = text_field(
        conversation.get("conversation_id") or conversation.get("id"), f"{where} id", _NAME, path
    )
    mapping: dict[str, Any] = conversation["mapping"]
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            refuse(_NAME, path, f"{where}: node {node_id!r} is not an object")
    default_time = _seconds(conversation.get("create_time"), f"{where} create_time", path)
    current = _current_branch(mapping, conversation.get("current_node"))
    for node_id in _tree_order(mapping):
        message = mapping[node_id].get("message")
        if message is None:
            continue  # the synthetic root
        if not isinstance(message, dict):
            refuse(_NAME, path, f"{where}: message of node {node_id!r} is not an object")
        yield _message(path, conversation_id, node_id, message, default_time, current)


def _message(
    path: Path,
    conversation_id: str,
    node_id: str,
    message: Mapping[str, Any],
    default_time: float | None,
    current: set[str] | None,
) -> ImportItem:
    where = f"message {node_id!r}"
    message_id = text_field(message.get("id", node_id), f"{where} id", _NAME, path)
    author = message.get("author")
    if not isinstance(author, dict) or not isinstance(author.get("role"), str):
        refuse(_NAME, path, f"{where} has no author.role")
    role: str = author["role"]
    content = message.get("content")
    if not isinstance(content, dict):
        refuse(_NAME, path, f"{where} has no content")
    at = _seconds(message.get("create_time"), f"{where} create_time", path)
    at = default_time if at is None else at
    metadata = message.get("metadata")
    if current is not None and node_id not in current:
        return Skipped(message_id, "not on the current branch")
    if role not in _SPOKEN:
        return Skipped(message_id, f"{role} message")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return Skipped(message_id, "hidden message")
    text = _text(content)
    if not text.strip():
        return Skipped(message_id, "no text")
    if at is None:
        refuse(_NAME, path, f"{where} has no create_time, nor has its conversation")
    return Message.from_ids(_NAME, conversation_id, message_id, text=text, at=at, author=role)


def _text(content: Mapping[str, Any]) -> str:
    """The text pieces of ``parts`` (objects such as images are left out), joined by newlines."""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(part for part in parts if isinstance(part, str))
    text = content.get("text")
    return text if isinstance(text, str) else ""


def _seconds(value: object, where: str, path: Path) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    refuse(_NAME, path, f"{where} must be a number of seconds")


def _current_branch(mapping: Mapping[str, Any], current_node: object) -> set[str] | None:
    """The node ids from *current_node* up to the root; ``None`` when the export names none."""
    if not isinstance(current_node, str) or current_node not in mapping:
        return None
    branch: set[str] = set()
    node_id: object = current_node
    while isinstance(node_id, str) and node_id in mapping and node_id not in branch:
        branch.add(node_id)
        node_id = mapping[node_id].get("parent")
    return branch


def _tree_order(mapping: Mapping[str, Any]) -> list[str]:
    """Node ids parents first (children in their listed order), then any node no root reaches,
    in the file's order: every node once, even in a malformed (cyclic) mapping."""
    ordered: list[str] = []
    seen: set[str] = set()
    roots = [node_id for node_id, node in mapping.items() if node.get("parent") not in mapping]
    stack = list(reversed(roots))
    while stack:
        node_id = stack.pop()
        if node_id in seen or node_id not in mapping:
            continue
        seen.add(node_id)
        ordered.append(node_id)
        children = mapping[node_id].get("children")
        if isinstance(children, list):
            stack.extend(child for child in reversed(children) if isinstance(child, str))
    ordered.extend(node_id for node_id in mapping if node_id not in seen)
    return ordered
