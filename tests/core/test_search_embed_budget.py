"""Embedding the query runs under the search's time budget (issue 26).

The budget interrupts SQLite through a progress handler, which cannot stop an embedder: an
unbounded e5 query ran 77 s inside a 5 s budget, and the search failed only after it. Now the
query is embedded on a worker thread that the search waits for only as long as its budget has
left. The stalled embedder here is held until the search has answered, so the test shows the
order of events rather than timing them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import LimitExceeded
from zkr.plugins import Embedder, hookimpl

SCOPE = {"tenant_id": "a", "person_id": "sam"}


class StalledEmbedder(Embedder):
    """Embeds a passage at once; a query only once the test releases it (or after 20 s)."""

    model: ClassVar[str] = "test/stalled"
    version: ClassVar[str] = "1"
    dimension: ClassVar[int] = 3
    normalization: ClassVar[str] = "l2"
    distance: ClassVar[str] = "cosine"
    roles: ClassVar[tuple[str, ...]] = ("query", "passage")
    release = threading.Event()
    finished = threading.Event()

    def embed_batch(self, texts: Sequence[str], role: str = "passage") -> list[list[float]]:
        if role == "query":
            self.release.wait(20)
            self.finished.set()
        return [[1.0, 0.0, 0.0] for _ in texts]


class StalledPlugin:
    @hookimpl
    def zkr_register_embedders(self, register: Callable[[Embedder], None]) -> None:
        register(StalledEmbedder())


@pytest.mark.parametrize("ranking", list(m.Ranking))
def test_a_stalled_query_embedding_ends_the_search_at_its_budget(
    tmp_path: Path, registered_plugin: Callable[..., Any], ranking: m.Ranking
) -> None:
    registered_plugin(StalledPlugin(), name="stalled")
    StalledEmbedder.release.clear()
    StalledEmbedder.finished.clear()
    with MemoryDb(tmp_path / "m.db") as db:
        db.remember(
            m.RememberRequest.model_validate(
                {**SCOPE, "kind": "document", "text": "kiwi jam", "captured_at": 1,
                 "recorded_at": 1}
            )
        )  # fmt: skip
        db.rebuild(
            m.RebuildRequest(tenant_id="a", person_id="sam", model="test/stalled", version="1")
        )
        db.search_budget_seconds = 0.3
        request = m.SearchRequest.model_validate(
            {**SCOPE, "query": "kiwi", "ranking": ranking,
             "query_embedding": {"model": "test/stalled", "version": "1"}}
        )  # fmt: skip
        try:
            with pytest.raises(LimitExceeded, match=r"time budget of 0\.3 seconds"):
                db.search(request)
            # The search answered while the embedder was still stalled.
            assert not StalledEmbedder.finished.is_set()
        finally:
            StalledEmbedder.release.set()
        assert StalledEmbedder.finished.wait(20)
        # Without the stall, the same search answers.
        db.search_budget_seconds = 5.0
        assert [item.excerpt for item in db.search(request).items][:1] == ["kiwi jam"]
