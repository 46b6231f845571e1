"""Storing the messages of other tools' conversations (exports, agent frameworks) as captures.

One definition of "a message becomes a capture", shared by ``zkr import --from FORMAT`` and the
framework adapters (zkr-adk):

- each message is one ``remember`` of kind ``conversation`` (a note: ``document``) whose text is
  the message's text, verbatim, captured at the message's own time;
- its ingestion key is derived from the source's own ids (``chatgpt:<conversation>:<message>``),
  so storing the same message again is a replay and changes nothing;
- its transcript locator keeps where it came from: ``provider`` = the source (``chatgpt``,
  ``google-adk:<app>``), ``stream_id`` = the conversation or session, ``segment_id`` = the
  message, ``device_id`` = its author (``user``, ``assistant``, an agent's name) and
  ``start_ms``/``end_ms`` = its time in milliseconds (0 before 1970).

A message whose key the scope already holds is counted as ``replayed`` and not written again, even
if its text changed since (an export re-downloaded later holds the same messages): the first
import is what the person's memory cites, and a deleted memory is never brought back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zkr import models as m
from zkr.errors import InvalidRequest, ZkrError
from zkr.models import I64_MAX, I64_MIN
from zkr.plugins.importers import Message  # what importers read; stored here
from zkr.store.validation import is_blank, require_scope, require_text
from zkr.writes.bulk import CaptureBatch, KeyState, journals_in_memory

if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = [
    "Message",
    "MessageCounts",
    "check_message",
    "remember_messages",
    "to_remember_request",
]

_U64_MAX = 2**63 - 1  # what the locator columns can store


@dataclass
class MessageCounts:
    """How many messages were stored, and how many the scope already held."""

    stored: int = 0
    replayed: int = 0


def check_message(message: Message) -> None:
    """Refuse a message no ``remember`` could store, naming it: a blank key, text or locator
    part, or a time that is not a finite number of seconds in the storage range. A reader calls it
    on every message before anything is written.

    :raises InvalidRequest: ``<key>: <what is wrong>``.
    """
    require_text(message.key, "ingestion_key")
    for name, value in (
        ("text", message.text),
        ("source", message.source),
        ("conversation_id", message.conversation_id),
        ("message_id", message.message_id),
        ("author", message.author),
    ):
        if is_blank(value):
            raise InvalidRequest(f"{message.key}: {name} must not be empty")
    if not (math.isfinite(message.at) and I64_MIN <= message.at < I64_MAX):
        raise InvalidRequest(f"{message.key}: time {message.at!r} is out of range")


def to_remember_request(
    tenant_id: str, person_id: str, message: Message, *, recorded_at: int
) -> m.RememberRequest:
    """The ``remember`` request of *message* (see the module docstring for the mapping).

    :raises InvalidRequest: see :func:`check_message`.
    """
    check_message(message)
    millis = min(max(round(message.at * 1000), 0), _U64_MAX)
    return m.RememberRequest(
        tenant_id=tenant_id,
        person_id=person_id,
        kind=message.kind,
        text=message.text,
        captured_at=int(message.at // 1),
        recorded_at=recorded_at,
        ingestion_key=message.key,
        locator=m.LocatorInput(
            device_id=message.author,
            provider=message.source,
            stream_id=message.conversation_id,
            segment_id=message.message_id,
            start_ms=millis,
            end_ms=millis,
        ),
    )


def remember_messages(
    db: Database,
    tenant_id: str,
    person_id: str,
    messages: Iterable[Message],
    *,
    recorded_at: int,
    progress: Callable[[MessageCounts], None] | None = None,
) -> MessageCounts:
    """Store every message not yet stored, all in one transaction: any refusal stores none.
    The new ones are written together (:class:`zkr.writes.bulk.CaptureBatch`: what ``remember``
    writes for each).

    :raises InvalidRequest: a blank scope, key or text, or a message ``remember`` refuses (the
        transaction is rolled back, so the database is unchanged).
    """
    require_scope(tenant_id, person_id)
    counts = MessageCounts()
    with journals_in_memory(db.conn), db.atomic() as conn:
        batch = CaptureBatch(conn)
        for message in messages:
            check_message(message)
            if batch.key_state(tenant_id, person_id, message.key) is not KeyState.NEW:
                counts.replayed += 1
            else:
                request = to_remember_request(
                    tenant_id, person_id, message, recorded_at=recorded_at
                )
                try:
                    batch.add(request)
                except ZkrError as exc:  # name the message: the whole batch is rolled back
                    raise InvalidRequest(f"{message.key}: {exc.message}") from exc
                counts.stored += 1
            if progress is not None:
                progress(counts)
        batch.flush()
    return counts
