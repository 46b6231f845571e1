"""Acceptance 4: two servers with different scopes on one database never see each other's memories.

Hypothesis drives two in-process servers (each behind the SDK's client, each with its own database
handle on the same file) through interleaved remembers, searches and attempts on the other
scope's ids. A server's answers only ever cite its own records; every reach into the other scope
reads "record not found" and changes nothing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.mcp.conftest import SyncClient, settings_for, sync_client, table_rows
from zkr_mcp.tools import mcp_tools

WORDS = ("tea", "coffee", "lisbon", "porto", "dog", "piano", "chess", "rain")
SCOPES = {
    # Same tenant, different person; different tenant, same person.
    "person": (("acme", "ana"), ("acme", "bo")),
    "tenant": (("acme", "ana"), ("globex", "ana")),
}
TOOL = {entry.operation.name: name for name, entry in mcp_tools().items()}

action = st.tuples(
    st.sampled_from(["A", "B"]),
    st.sampled_from(["remember", "search", "get", "correct", "delete"]),
    st.sampled_from(WORDS),
)


def _remember(client: SyncClient, word: str) -> dict[str, Any]:
    result = client.call(
        TOOL["remember"],
        {
            "kind": "conversation",
            "text": f"I like {word} a lot",
            "claim": {
                "subject": "me",
                "predicate": "likes",
                "value": word,
                "kind": "preference",
                "valid_from": 1,
            },
        },
    )
    assert not result.is_error, result.content
    stored: dict[str, Any] = result.structured_content or {}
    return stored


def _refused(result: Any) -> None:
    assert result.is_error
    assert result.content[0].text == "record not found"


@settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(split=st.sampled_from(sorted(SCOPES)), actions=st.lists(action, min_size=1, max_size=10))
def test_two_scopes_on_one_database_stay_apart(
    split: str, actions: list[tuple[str, str, str]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "memory.db"
        (ta, pa), (tb, pb) = SCOPES[split]
        owned: dict[str, set[str]] = {"A": set(), "B": set()}
        claims: dict[str, list[str]] = {"A": [], "B": []}
        sources: dict[str, list[str]] = {"A": [], "B": []}
        with (
            sync_client(settings_for(db, ta, pa)) as (_, a),
            sync_client(settings_for(db, tb, pb)) as (_, b),
        ):
            clients = {"A": a, "B": b}
            for who, verb, word in actions:
                me, other = clients[who], "B" if who == "A" else "A"
                if verb == "remember":
                    stored = _remember(me, word)
                    owned[who].update(v for v in stored.values() if v)
                    claims[who].append(stored["claim_id"])
                    sources[who].append(stored["source_id"])
                elif verb == "search":
                    found = me.call(TOOL["search"], {"query": word})
                    assert not found.is_error, found.content
                    for item in (found.structured_content or {})["items"]:
                        assert item["memory"]["id"] in owned[who]
                        assert set(item["evidence_ids"]) <= owned[who]
                else:
                    before = table_rows(db)
                    for claim in claims[other]:
                        if verb == "get":
                            target = {"kind": "claim", "id": claim}
                            _refused(me.call(TOOL["get"], {"target": target}))
                        elif verb == "correct":
                            arguments = {"claim_id": claim, "text": f"no, {word}", "value": word}
                            _refused(me.call(TOOL["correct"], arguments))
                    if verb == "delete":
                        for source in sources[other]:
                            _refused(me.call(TOOL["delete"], {"source_id": source}))
                    assert table_rows(db) == before
            # Each side still finds all of its own memories and only those.
            for who, client in clients.items():
                found = client.call(TOOL["search"], {"query": " ".join(WORDS), "limit": 50})
                cited = {item["memory"]["id"] for item in (found.structured_content or {})["items"]}
                assert cited <= owned[who]
                assert set(claims[who]) <= cited | {None}
