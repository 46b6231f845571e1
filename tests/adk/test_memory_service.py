"""zkr-adk against real google-adk objects: sessions made by ADK's own InMemorySessionService,
events built as an ADK runner builds them (no model is called), the service driven through the
``BaseMemoryService`` methods ADK's agents and tools call."""

from __future__ import annotations

import asyncio
import string
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from google.adk.events import Event
from google.adk.memory import BaseMemoryService
from google.adk.sessions import InMemorySessionService, Session
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import NotFound
from zkr_adk import ZkrMemoryService

NOW = 1_800_000_000


def text_event(author: str, text: str, **extra: object) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        invocation_id="invocation-1",
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        **extra,
    )


async def session_with(
    sessions: InMemorySessionService, app: str, user: str, events: list[Event]
) -> Session:
    session = await sessions.create_session(app_name=app, user_id=user)
    for event in events:
        await sessions.append_event(session, event)
    fetched = await sessions.get_session(app_name=app, user_id=user, session_id=session.id)
    assert fetched is not None
    return fetched


def captures(db: MemoryDb, app: str, user: str) -> list[m.Capture]:
    request = m.CapturesRequest(tenant_id=app, person_id=user, key_prefix="adk:", limit=100)
    listed: list[m.Capture] = db.captures(request)
    return listed


@pytest.fixture
def service(db: MemoryDb) -> Iterator[ZkrMemoryService]:
    yield ZkrMemoryService(db, clock=lambda: NOW)


def test_it_is_an_adk_memory_service(service: ZkrMemoryService) -> None:
    assert isinstance(service, BaseMemoryService)


def test_adding_a_session_twice_stores_each_event_once(
    service: ZkrMemoryService, db: MemoryDb
) -> None:
    async def scenario() -> Session:
        sessions = InMemorySessionService()
        session = await session_with(
            sessions,
            "travel",
            "ada",
            [
                text_event("user", "I live in Lisbon and cycle to work."),
                text_event("travel_agent", "Noted: Lisbon, by bike."),
            ],
        )
        await service.add_session_to_memory(session)
        await service.add_session_to_memory(session)
        # The session grows; adding it again stores only the new event.
        await sessions.append_event(session, text_event("user", "Book me a train to Porto."))
        await service.add_session_to_memory(session)
        await service.add_session_to_memory(session)
        return session

    session = asyncio.run(scenario())
    stored = captures(db, "travel", "ada")
    assert sorted(c.text for c in stored) == sorted(
        [
            "I live in Lisbon and cycle to work.",
            "Noted: Lisbon, by bike.",
            "Book me a train to Porto.",
        ]
    )
    by_text = {c.text: c for c in stored}
    for event in session.events:
        capture = by_text[event.content.parts[0].text]
        assert capture.captured_at == int(event.timestamp)
        assert capture.kind == m.SourceKind.conversation
        locator = db.locator(
            m.LocatorRequest(tenant_id="travel", person_id="ada", evidence_id=capture.evidence_id)
        )
        assert locator is not None
        assert (locator.stream_id, locator.segment_id) == (session.id, event.id)
        assert locator.device_id == event.author
        assert locator.start_ms == round(event.timestamp * 1000)


def test_events_without_final_text_are_not_captured(
    service: ZkrMemoryService, db: MemoryDb
) -> None:
    call = types.Part(function_call=types.FunctionCall(name="lookup", args={"city": "Lisbon"}))
    thought = types.Part(text="Let me think about trains.", thought=True)
    events = [
        Event(author="agent", invocation_id="i", content=types.Content(role="model", parts=[call])),
        Event(
            author="agent", invocation_id="i", content=types.Content(role="model", parts=[thought])
        ),
        text_event("agent", "Partial chunk of a strea", partial=True),
        Event(author="user", invocation_id="i"),
        text_event("user", "   "),
        text_event("user", "The only real message."),
    ]

    async def scenario() -> None:
        session = await session_with(InMemorySessionService(), "app", "u", events)
        await service.add_session_to_memory(session)

    asyncio.run(scenario())
    assert [c.text for c in captures(db, "app", "u")] == ["The only real message."]


def test_search_returns_cited_entries(service: ZkrMemoryService, db: MemoryDb) -> None:
    async def scenario() -> tuple[Session, list[m.RetrievalItem]]:
        session = await session_with(
            InMemorySessionService(),
            "travel",
            "ada",
            [
                text_event("user", "My sister Rita lives in Porto."),
                text_event("travel_agent", "I will remember that Rita is in Porto."),
                text_event("user", "I prefer window seats on trains."),
            ],
        )
        await service.add_session_to_memory(session)
        found = await service.search_memory(app_name="travel", user_id="ada", query="Porto Rita")
        return session, found.memories

    session, entries = asyncio.run(scenario())
    assert len(entries) >= 2
    events = {event.id: event for event in session.events}
    for entry in entries:
        citation = entry.custom_metadata["zkr"]
        assert citation["memory"]["id"] == entry.id
        assert 0 < citation["relevance_basis_points"] <= 10_000
        event = events[citation["event_id"]]
        assert citation["session_id"] == session.id
        assert entry.author == event.author
        stamp = datetime.fromisoformat(entry.timestamp)
        assert stamp.timestamp() == pytest.approx(event.timestamp, abs=0.001)
        text = entry.content.parts[0].text
        assert text == event.content.parts[0].text
        # The cited evidence is live in this scope and quotes the entry.
        for evidence_id in citation["evidence_ids"]:
            item = db.get(
                m.GetRequest(
                    tenant_id="travel",
                    person_id="ada",
                    target=m.TargetRef(kind=m.TargetKind.evidence, id=evidence_id),
                )
            )
            assert item.excerpt == text
    relevance = [e.custom_metadata["zkr"]["relevance_basis_points"] for e in entries]
    assert relevance == sorted(relevance, reverse=True)
    assert "window seats" not in {e.content.parts[0].text for e in entries[:2]}


def test_events_added_without_a_session_and_deleted_by_entry_id(
    service: ZkrMemoryService, db: MemoryDb
) -> None:
    event = text_event("user", "The spare key is under the blue pot.")

    async def scenario() -> None:
        for _ in range(2):
            await service.add_events_to_memory(app_name="home", user_id="sam", events=[event])
        found = await service.search_memory(app_name="home", user_id="sam", query="spare key")
        assert [e.custom_metadata["zkr"]["event_id"] for e in found.memories] == [event.id]
        await service.delete_memory(app_name="home", user_id="sam", memory_id=found.memories[0].id)
        after = await service.search_memory(app_name="home", user_id="sam", query="spare key")
        assert after.memories == []
        with pytest.raises(NotFound):
            await service.delete_memory(app_name="home", user_id="bob", memory_id="nope")

    asyncio.run(scenario())
    assert captures(db, "home", "sam") == []


def test_a_path_opens_a_database_the_service_closes(tmp_path: Path) -> None:
    service = ZkrMemoryService(tmp_path / "adk.db")
    try:
        asyncio.run(
            service.add_events_to_memory(
                app_name="a",
                user_id="u",
                session_id="s",
                events=[text_event("user", "hello there")],
            )
        )
        found = asyncio.run(service.search_memory(app_name="a", user_id="u", query="hello"))
        assert [e.custom_metadata["zkr"]["session_id"] for e in found.memories] == ["s"]
        assert (
            asyncio.run(service.search_memory(app_name="a", user_id="u", query=" ")).memories == []
        )
    finally:
        service.close()


# ----------------------------------------------------------------------------------------------
# Isolation: another (app, user) pair's memories never appear
# ----------------------------------------------------------------------------------------------

# Mostly a few shared names, so that pairs often share an app or a user; sometimes any text.
_IDS = st.one_of(
    st.sampled_from(["travel", "ada", "bob", "A", "a"]),
    st.text(alphabet=string.ascii_letters + string.digits + "-_. éü:", min_size=1, max_size=8),
)
_PAIRS = st.lists(
    st.tuples(_IDS, _IDS).filter(lambda pair: all(part.strip() for part in pair)),
    min_size=2,
    max_size=4,
    unique=True,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pairs=_PAIRS)
def test_another_users_memories_never_appear(pairs: list[tuple[str, str]], tmp_path: Path) -> None:
    """Every pair stores the shared word and its own marker; each pair's search for the shared
    word finds its own memory and nothing of the others', and another pair's marker finds
    nothing (pairs may share an app or a user, just not both)."""
    markers = [f"marker{index}x" for index in range(len(pairs))]

    async def scenario(db: MemoryDb) -> None:
        service = ZkrMemoryService(db, clock=lambda: NOW)
        sessions = InMemorySessionService()
        own_events: dict[tuple[str, str], set[str]] = {}
        for (app, user), marker in zip(pairs, markers, strict=True):
            session = await session_with(
                sessions, app, user, [text_event("user", f"umbrella {marker} stored here")]
            )
            await service.add_session_to_memory(session)
            own_events[(app, user)] = {event.id for event in session.events}
        for (app, user), marker in zip(pairs, markers, strict=True):
            found = await service.search_memory(app_name=app, user_id=user, query="umbrella")
            seen = {e.custom_metadata["zkr"]["event_id"] for e in found.memories}
            assert seen == own_events[(app, user)]
            for other in markers:
                hits = await service.search_memory(app_name=app, user_id=user, query=other)
                assert bool(hits.memories) == (other == marker)

    # A fresh database per example (hypothesis may replay an example with the same pairs).
    db = MemoryDb(tmp_path / f"isolation-{uuid.uuid4().hex}.db")
    try:
        asyncio.run(scenario(db))
    finally:
        db.close()


def test_an_event_without_an_author_is_kept_as_unknown(
    service: ZkrMemoryService, db: MemoryDb
) -> None:
    event = text_event("", "Someone said the meeting moved to Friday.")
    asyncio.run(service.add_events_to_memory(app_name="a", user_id="u", events=[event]))
    (capture,) = captures(db, "a", "u")
    request = m.LocatorRequest(tenant_id="a", person_id="u", evidence_id=capture.evidence_id)
    locator = db.locator(request)
    assert locator is not None and locator.device_id == "unknown"
