"""Importers: plugins that read another tool's export (ChatGPT, Claude, mem0, notes) as messages.

An importer only reads: it turns a file (or folder) into :class:`Message` items (which
:mod:`zkr.writes.messages` stores as captures), :class:`Skipped` items (nothing to capture: an
empty or hidden message) and :class:`Refused` items (one unreadable part of a folder). A file
that is not what the importer reads — truncated JSON, another tool's export — is refused as a
whole by raising :class:`~zkr.errors.InvalidRequest` with a one-line message. ``zkr import
--from NAME`` reads everything first and writes only when the whole file was read, in one
transaction.

Message keys must come from the source's own ids (never from the time of the import), so that a
second import of the same export is a replay.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from zkr import models as m

__all__ = ["ImportItem", "Importer", "Message", "Refused", "Skipped"]


@dataclass(frozen=True)
class Message:
    """One message of a conversation (or one note) to capture."""

    #: The ingestion key, derived from the source's ids (``chatgpt:<conversation>:<message>``).
    key: str
    #: The message's text, stored verbatim (not blank).
    text: str
    #: When it was written, seconds since the Unix epoch (may carry a fraction).
    at: float
    #: The source: ``chatgpt``, ``claude``, ``mem0``, ``notes``, ``google-adk:<app>``.
    source: str
    #: The conversation (session, thread, notes folder) it belongs to.
    conversation_id: str
    #: Its own id inside the conversation.
    message_id: str
    #: Who wrote it: ``user``, ``assistant``, an agent's name.
    author: str
    kind: m.SourceKind = m.SourceKind.conversation

    @classmethod
    def from_ids(
        cls,
        source: str,
        conversation_id: str,
        message_id: str,
        *,
        text: str,
        at: float,
        author: str,
        kind: m.SourceKind = m.SourceKind.conversation,
    ) -> Message:
        """A message keyed ``source:conversation_id:message_id``: the key of every export that
        names both (chatgpt, claude, notes), so a re-import of the same export replays."""
        key = f"{source}:{conversation_id}:{message_id}"
        return cls(key, text, at, source, conversation_id, message_id, author, kind)


@dataclass(frozen=True)
class Skipped:
    """A part of the export with nothing to capture (an empty, hidden or system message)."""

    #: Where it is: a message id, a file name.
    where: str
    #: Why it was skipped, a short phrase shared by every item skipped for the same reason.
    reason: str


@dataclass(frozen=True)
class Refused:
    """A part of the export that could not be read while the rest could (a folder's bad file)."""

    where: str
    error: str


ImportItem = Message | Skipped | Refused


class Importer(ABC):
    """Base class of importers; ``name`` is the importer's id (``zkr import --from NAME``)."""

    name: ClassVar[str]
    #: One line: what it reads (shown by ``zkr import --help`` and ``zkr plugins``).
    description: ClassVar[str]

    @abstractmethod
    def read(self, path: Path) -> Iterator[ImportItem]:
        """Every item of the export at *path*, in order.

        :raises InvalidRequest: *path* is not an export this importer reads (one line, no
            traceback); raised before or during iteration, it refuses the whole import.
        """
