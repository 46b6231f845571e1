"""Deletion reaches every search projection, as a property (issue 13, acceptance 4).

Random sequences of remember (some with a claim), correct, link and delete, on one timeline where
captures are neighbours of each other. Each capture carries a marker word of its own (claim values
carry other words: a claim outlives a deleted capture when other evidence supports it). Afterwards:

* no search — contract, recall lexical, recall hybrid — returns a deleted capture, or returns
  anything when asked for a deleted capture's marker (so no context row still holds its words);
* no row of ``recall_fts`` holds a deleted capture's marker;
* the incrementally kept recall index equals one built from scratch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkr import models as m
from zkr.db import MemoryDb
from zkr.plugins import Embedder, hookimpl, load_plugins, pm
from zkr.store.recall_index import build_recall_index

SCOPE = {"tenant_id": "a", "person_id": "sam"}
LANE = {"model": "test/prop", "version": "1"}
WORDS = ["garden", "nurse", "violin", "harbour", "pottery"]


class CharEmbedder(Embedder):
    """Character counts of the first 16 letters, L2-normalised (deterministic, never zero)."""

    model: ClassVar[str] = "test/prop"
    version: ClassVar[str] = "1"
    dimension: ClassVar[int] = 16
    roles: ClassVar[tuple[str, ...]] = ("query", "passage")

    def embed_batch(self, texts: Sequence[str], role: str | None = None) -> list[list[float]]:
        rows = []
        for text in texts:
            counts = [text.lower().count(chr(97 + i)) + 0.5 for i in range(16)]
            norm = sum(v * v for v in counts) ** 0.5
            rows.append([v / norm for v in counts])
        return rows


class Plugin:
    @hookimpl
    def zkr_register_embedders(self, register: Callable[[Embedder], None]) -> None:
        register(CharEmbedder())


@pytest.fixture(scope="module")
def embedder_plugin() -> Iterator[None]:
    load_plugins()
    name = pm.register(Plugin(), name="recall-property")
    try:
        yield
    finally:
        pm.unregister(name=name)


def marker(index: int) -> str:
    return f"mk{index:03d}q"


operation = st.one_of(
    st.tuples(st.just("remember"), st.integers(0, 4), st.booleans(), st.integers(0, 3)),
    st.tuples(st.just("correct"), st.integers(0, 50)),
    st.tuples(st.just("link"), st.integers(0, 50), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(operation, min_size=1, max_size=14))
def test_no_search_sees_a_deleted_capture(
    tmp_path: Path, embedder_plugin: None, operations: list[tuple[Any, ...]]
) -> None:
    path = tmp_path / f"prop-{abs(hash(tuple(operations)))}.db"
    path.unlink(missing_ok=True)
    with MemoryDb(path) as db:
        live: dict[str, str] = {}  # source id -> marker
        deleted: dict[str, str] = {}
        claims: list[str] = []
        evidence: list[str] = []
        clock = 1000
        for index, op in enumerate(operations):
            clock += 1
            if op[0] == "remember":
                _, word, with_claim, gap = op
                clock += gap * 2000  # sometimes a new session
                text = f"{WORDS[word]} {marker(index)}"
                payload: dict[str, Any] = {
                    **SCOPE,
                    "kind": "conversation",
                    "text": text,
                    "captured_at": clock,
                    "recorded_at": clock,
                }
                if with_claim:
                    payload["claim"] = {
                        "subject": "sam",
                        "predicate": "likes_thing",
                        "value": f"{WORDS[word]} cv{index:03d}z",
                        "kind": "fact",
                        "valid_from": clock,
                    }
                stored = db.remember(m.RememberRequest.model_validate(payload))
                live[stored.source_id] = marker(index)
                evidence.append(stored.evidence_id)
                if stored.claim_id is not None:
                    claims.append(stored.claim_id)
            elif op[0] == "correct" and claims:
                claim_id = claims[op[1] % len(claims)]
                try:
                    corrected = db.correct(
                        m.CorrectRequest(
                            **SCOPE,
                            claim_id=claim_id,
                            text=f"correction {marker(index)}",
                            value=f"value cv{index:03d}z",
                            valid_at=clock,
                            recorded_at=clock,
                        )
                    )
                except Exception:  # superseded, retracted or not advancing: refused, unchanged
                    continue
                claims.append(corrected.claim_id)
                live[corrected.source_id] = marker(index)
                evidence.append(corrected.evidence_id)
            elif op[0] == "link" and claims and evidence:
                try:
                    db.link(
                        m.LinkRequest(
                            **SCOPE,
                            claim_id=claims[op[1] % len(claims)],
                            evidence_id=evidence[op[2] % len(evidence)],
                            relation=m.EvidenceRelation.supports,
                            confidence_basis_points=8000,
                        )
                    )
                except Exception:  # not accepted, deleted, or a conflicting link: refused
                    continue
            elif op[0] == "delete" and live:
                source_id = sorted(live)[op[1] % len(live)]
                try:
                    db.delete(m.DeleteRequest(**SCOPE, source_id=source_id, deleted_at=clock))
                except Exception:  # a claim interval that cannot close yet: refused, unchanged
                    continue
                deleted[source_id] = live.pop(source_id)
        db.rebuild(m.RebuildRequest(**SCOPE, **LANE))

        rows = db.conn.execute("SELECT content, statement, context FROM recall_fts").fetchall()
        for word in deleted.values():
            assert not any(word in str(row) for row in rows), word
        for word in [*deleted.values(), *WORDS]:
            for ranking, extra in (
                ("contract", {}),
                ("recall", {}),
                ("recall", {"query_embedding": LANE}),
                ("contract", {"query_embedding": LANE}),
            ):
                request = {**SCOPE, "query": word, "ranking": ranking, "limit": 100, **extra}
                pack = db.search(m.SearchRequest.model_validate(request))
                for item in pack.items:
                    assert not any(gone in item.excerpt for gone in deleted.values()), item
                if word in deleted.values() and "query_embedding" not in extra:
                    assert pack.items == [], (word, ranking)
        kept = db.conn.execute("SELECT rowid, * FROM recall_fts ORDER BY rowid").fetchall()
        with db.atomic() as conn:
            build_recall_index(conn)
        assert db.conn.execute("SELECT rowid, * FROM recall_fts ORDER BY rowid").fetchall() == kept
