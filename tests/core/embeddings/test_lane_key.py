"""Dense lanes of two scopes never share a cache slot (issue 18, defect 5).

Tenant, person, model and version were joined with NUL to key the lane cache, and NUL is legal in
an id: (``x\\0y``, ``z``) and (``x``, ``y\\0z``) shared a lane, so the second scope's search failed
(or, worse, ranked the first scope's targets).
"""

from __future__ import annotations

from typing import Any

import pytest

from zkr import operations
from zkr.db import MemoryDb
from zkr.embeddings.projections import input_hash

SCOPES = [("x\x00y", "z"), ("x", "y\x00z")]


def run(db: MemoryDb, command: str, scope: tuple[str, str], **payload: Any) -> Any:
    return operations.run(db, command, {"tenant_id": scope[0], "person_id": scope[1], **payload})


@pytest.mark.parametrize("order", [SCOPES, SCOPES[::-1]])
def test_scopes_whose_joined_keys_collide_keep_their_own_lanes(
    db: MemoryDb, order: list[tuple[str, str]]
) -> None:
    stored = {}
    for index, scope in enumerate(order):
        text = f"memory of scope {index}"
        memory = run(db, "remember", scope, kind="conversation", text=text, captured_at=1,
                     recorded_at=1)  # fmt: skip
        run(db, "embed", scope, target={"kind": "source", "id": memory["source_id"]},
            embedding={"vector": [1.0, float(index)], "model": "m", "version": "1",
                       "input_hash": input_hash(text), "normalization": "none",
                       "distance": "cosine"})  # fmt: skip
        stored[scope] = memory["source_id"]
    for scope in order:  # warm every lane first, then ask each scope again from the cache
        run(db, "search", scope, query="nothing lexical", query_embedding={
            "model": "m", "version": "1", "vector": [1.0, 0.0]})  # fmt: skip
    for scope in order:
        pack = run(db, "search", scope, query="nothing lexical", query_embedding={
            "model": "m", "version": "1", "vector": [1.0, 0.0]})  # fmt: skip
        assert [item["memory"]["id"] for item in pack["items"]] == [stored[scope]]
