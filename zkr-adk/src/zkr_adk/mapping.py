"""The one place ADK's memory shapes meet zkr's: pure functions, both ways.

An ADK session's event becomes one zkr capture (a :class:`~zkr.writes.messages.Message`)::

    Session(app_name="travel", user_id="ada", id="s1")  ->  scope (tenant "travel", person "ada")
    Event(id="e7", author="user", timestamp=1714557601.5,
          content=Content(parts=[Part(text="I live in Lisbon")]))
        ->  Message(key="adk:s1:e7", text="I live in Lisbon", at=1714557601.5,
                    source="google-adk", conversation_id="s1", message_id="e7", author="user")

(the text parts joined by newlines; an event without text — a function call, a partial streaming
chunk, a model's thought — is not captured). zkr stores the session, event, author and the time in
milliseconds in the capture's transcript locator.

A cited zkr search item becomes an ADK ``MemoryEntry``::

    RetrievalItem(memory={"kind": "source", "id": "9f…"}, excerpt="I live in Lisbon",
                  relevance_basis_points=9500, evidence_ids=["3c…"])
    + locator(device_id="user", stream_id="s1", segment_id="e7", start_ms=1714557601500)
        ->  MemoryEntry(id="9f…", author="user", timestamp="2024-05-01T10:00:01.500000+00:00",
                        content=Content(role="user", parts=[Part(text="I live in Lisbon")]),
                        custom_metadata={"zkr": {"memory": {"kind": "source", "id": "9f…"},
                                                 "evidence_ids": ["3c…"],
                                                 "relevance_basis_points": 9500,
                                                 "session_id": "s1", "event_id": "e7"}})

A memory stored without a locator (written by another zkr surface) has no author, timestamp or
session. ``content.role`` is ``user`` for the user's words and ``model`` for everything else, as
ADK's ``Content`` expects.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.adk.events import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from zkr import models as m
from zkr.writes.messages import Message

__all__ = [
    "KEY_PREFIX",
    "SOURCE",
    "UNKNOWN_AUTHOR",
    "UNKNOWN_SESSION",
    "event_message",
    "event_text",
    "memory_entry",
]

#: The ``provider`` of every locator this adapter writes.
SOURCE = "google-adk"
#: The first part of every ingestion key this adapter writes (``adk:<session>:<event>``).
KEY_PREFIX = "adk"
#: The session of events added without one (``add_events_to_memory(session_id=None)``).
UNKNOWN_SESSION = "unknown-session"
#: The author of an event whose ``author`` is blank (ADK does not forbid one).
UNKNOWN_AUTHOR = "unknown"


def event_text(event: Event) -> str:
    """The event's text parts joined by newlines (thoughts left out); ``""`` when it has none."""
    if event.content is None or not event.content.parts:
        return ""
    pieces = [part.text for part in event.content.parts if part.text and not part.thought]
    return "\n".join(pieces)


def event_message(session_id: str, event: Event) -> Message | None:
    """The capture of *event*, or ``None`` when it holds no final text."""
    text = event_text(event)
    if event.partial or not text.strip():
        return None
    return Message(
        key=f"{KEY_PREFIX}:{session_id}:{event.id}",
        text=text,
        at=event.timestamp,
        source=SOURCE,
        conversation_id=session_id,
        message_id=event.id,
        author=event.author.strip() or UNKNOWN_AUTHOR,
    )


def memory_entry(item: m.RetrievalItem, locator: m.LocatorInput | None) -> MemoryEntry:
    """The ADK memory entry of a cited search *item* (and its evidence's *locator*, if any)."""
    citation: dict[str, Any] = {
        "memory": {"kind": item.memory.kind.value, "id": item.memory.id},
        "evidence_ids": list(item.evidence_ids),
        "relevance_basis_points": item.relevance_basis_points,
    }
    author: str | None = None
    timestamp: str | None = None
    if locator is not None:
        author = locator.device_id
        timestamp = datetime.fromtimestamp(locator.start_ms / 1000, tz=UTC).isoformat()
        citation["session_id"] = locator.stream_id
        citation["event_id"] = locator.segment_id
    return MemoryEntry(
        id=item.memory.id,
        author=author,
        timestamp=timestamp,
        content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=item.excerpt)]
        ),
        custom_metadata={"zkr": citation},
    )
