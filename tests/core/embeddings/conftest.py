"""Fixtures of the embedding, dense retrieval and plugin tests.

``HashEmbedder`` is the tests' deterministic embedder: each word is hashed into one of
``dimension`` buckets, and the counts are L2-normalised. Texts that share words get close
vectors; it needs no model. It lives here, never in a shipped package.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from zkr import hookimpl
from zkr import models as m
from zkr.db import MemoryDb
from zkr.embeddings.projections import input_hash

MODEL, VERSION = "hash", "1"


class HashEmbedder:
    """Bag of hashed words, L2-normalised; an all-zero text gets a fixed unit vector."""

    model: ClassVar[str] = MODEL
    version: ClassVar[str] = VERSION
    dimension: ClassVar[int] = 16
    normalization: ClassVar[str] = "l2"
    distance: ClassVar[str] = "cosine"
    batch_size: ClassVar[int] = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def vector(self, text: str) -> list[float]:
        counts = [0.0] * self.dimension
        for word in re.findall(r"\w+", text.lower()):
            bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
            counts[bucket % self.dimension] += 1.0
        if not any(counts):
            counts[0] = 1.0
        norm = math.sqrt(sum(c * c for c in counts))
        return [c / norm for c in counts]

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self.vector(text) for text in texts]


class Memory:
    """Small helpers over one database and scope (tenant ``t``, person ``p``)."""

    def __init__(self, db: MemoryDb, tenant: str = "t", person: str = "p") -> None:
        self.db, self.tenant, self.person = db, tenant, person

    def scope(self, **extra: Any) -> dict[str, Any]:
        return {"tenant_id": self.tenant, "person_id": self.person, **extra}

    def raw(self, text: str, at: int = 10) -> m.RememberResult:
        return self.db.remember(
            m.RememberRequest.model_validate(
                self.scope(kind="conversation", text=text, captured_at=at, recorded_at=at)
            )
        )

    def claim(self, value: str, text: str | None = None, at: int = 10) -> m.RememberResult:
        claim = {
            "subject": "Sam",
            "predicate": "employer",
            "value": value,
            "kind": "fact",
            "valid_from": at,
        }
        return self.db.remember(
            m.RememberRequest.model_validate(
                self.scope(
                    kind="conversation",
                    text=text or f"Sam works at {value}",
                    captured_at=at,
                    recorded_at=at,
                    claim=claim,
                )
            )
        )

    def embed(
        self,
        kind: str,
        target_id: str,
        vector: list[float],
        text: str | None = None,
        *,
        normalization: str = "none",
        distance: str = "cosine",
        model: str = "m",
        version: str = "v",
        tenant: str | None = None,
    ) -> m.EmbedResult:
        if text is None:
            text = self.text_of(kind, target_id)
        payload = {
            "tenant_id": tenant or self.tenant,
            "person_id": self.person,
            "target": {"kind": kind, "id": target_id},
            "embedding": {
                "vector": vector,
                "model": model,
                "version": version,
                "input_hash": input_hash(text),
                "normalization": normalization,
                "distance": distance,
            },
        }
        return self.db.embed(m.EmbedRequest.model_validate(payload))

    def text_of(self, kind: str, target_id: str) -> str:
        if kind == "claim":
            row = self.db.conn.execute(
                "SELECT subject || ' ' || predicate || ' ' || value FROM claims WHERE id = ?",
                (target_id,),
            ).fetchone()
        elif kind == "evidence":
            row = self.db.conn.execute(
                "SELECT quote FROM evidence WHERE id = ?", (target_id,)
            ).fetchone()
        else:
            row = self.db.conn.execute(
                "SELECT content FROM sources WHERE id = ?", (target_id,)
            ).fetchone()
        assert row is not None
        return str(row[0])

    def projections(
        self, limit: int = 10, model: str = "m", version: str = "v"
    ) -> list[m.ProjectionIssue]:
        return self.db.projections(
            m.ProjectionsRequest.model_validate(
                self.scope(model=model, version=version, limit=limit)
            )
        )

    def search(
        self,
        query: str,
        vector: list[float] | None = None,
        *,
        model: str = "m",
        version: str = "v",
        limit: int = 10,
        embedding: bool = True,
        ranking: str | None = None,
    ) -> m.RetrievalPack:
        payload = self.scope(query=query, limit=limit)
        if ranking is not None:
            payload["ranking"] = ranking
        if embedding:
            query_embedding: dict[str, Any] = {"model": model, "version": version}
            if vector is not None:
                query_embedding["vector"] = vector
            payload["query_embedding"] = query_embedding
        return self.db.search(m.SearchRequest.model_validate(payload))

    def delete(self, source_id: str, at: int = 20) -> m.DeleteResult:
        return self.db.delete(
            m.DeleteRequest.model_validate(self.scope(source_id=source_id, deleted_at=at))
        )

    def correct(self, claim_id: str, value: str, at: int = 20) -> m.CorrectResult:
        return self.db.correct(
            m.CorrectRequest.model_validate(
                self.scope(
                    claim_id=claim_id,
                    text=f"Actually Sam works at {value}",
                    value=value,
                    valid_at=at,
                    recorded_at=at,
                )
            )
        )


@pytest.fixture
def mem(db: MemoryDb) -> Memory:
    return Memory(db)


@pytest.fixture
def hash_embedder(registered_plugin: Any) -> HashEmbedder:
    """A :class:`HashEmbedder` registered through ``zkr_register_embedders`` for one test."""
    embedder = HashEmbedder()

    class Plugin:
        @hookimpl
        def zkr_register_embedders(self, register: Any) -> None:
            register(embedder)

    registered_plugin(Plugin(), name="hash-embedder")
    return embedder
