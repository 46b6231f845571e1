"""``zkr.writes.messages``: other tools' messages as captures (imports, framework adapters)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import InvalidRequest
from zkr.writes.messages import Message, check_message, remember_messages, to_remember_request

MESSAGE = Message(
    key="chat:c1:m1",
    text="I moved to Lisbon.",
    at=1_714_557_601.5,
    source="chat",
    conversation_id="c1",
    message_id="m1",
    author="user",
)


def test_the_remember_request_keeps_time_conversation_and_author() -> None:
    request = to_remember_request("t", "p", MESSAGE, recorded_at=1_800_000_000)
    assert (request.captured_at, request.recorded_at) == (1_714_557_601, 1_800_000_000)
    assert request.ingestion_key == "chat:c1:m1" and request.kind == m.SourceKind.conversation
    assert request.locator == m.LocatorInput(
        device_id="user",
        provider="chat",
        stream_id="c1",
        segment_id="m1",
        start_ms=1_714_557_601_500,
        end_ms=1_714_557_601_500,
    )
    before_1970 = dataclasses.replace(MESSAGE, at=-10.25)
    early = to_remember_request("t", "p", before_1970, recorded_at=1)
    assert early.captured_at == -11 and early.locator is not None and early.locator.start_ms == 0


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"key": " "}, "ingestion_key must not be empty"),
        ({"text": "\n"}, "chat:c1:m1: text must not be empty"),
        ({"author": ""}, "chat:c1:m1: author must not be empty"),
        ({"conversation_id": ""}, "chat:c1:m1: conversation_id must not be empty"),
        ({"at": math.nan}, "chat:c1:m1: time nan is out of range"),
        ({"at": 1e300}, "chat:c1:m1: time 1e+300 is out of range"),
    ],
)
def test_a_message_no_remember_could_store_is_refused_by_name(
    change: dict[str, object], error: str
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        check_message(dataclasses.replace(MESSAGE, **change))  # type: ignore[arg-type]
    assert refused.value.message == error


def test_stored_once_and_all_or_nothing(db: MemoryDb) -> None:
    second = dataclasses.replace(MESSAGE, key="chat:c1:m2", message_id="m2", text="And a bike.")
    counts = remember_messages(db, "t", "p", [MESSAGE], recorded_at=1)
    assert (counts.stored, counts.replayed) == (1, 0)
    counts = remember_messages(db, "t", "p", [MESSAGE, second], recorded_at=2)
    assert (counts.stored, counts.replayed) == (1, 1)
    too_big = dataclasses.replace(MESSAGE, key="chat:c1:m4", message_id="m4", text="x" * 1_100_000)
    third = dataclasses.replace(MESSAGE, key="chat:c1:m3", message_id="m3", text="A third.")
    with pytest.raises(InvalidRequest, match="chat:c1:m4: export record exceeds"):
        remember_messages(db, "t", "p", [third, too_big], recorded_at=3)
    listed = db.captures(m.CapturesRequest(tenant_id="t", person_id="p"))
    assert sorted(c.text for c in listed) == ["And a bike.", "I moved to Lisbon."]
