"""``embed`` (contract §6.4): check one vector, then store it for a live target, certified.

Step 1 (:func:`check_embedding_request`: scope, lane names, hash, a finite and, for ``l2``, unit
vector) runs before the transaction; steps 2-6 (:func:`store_embedding`: the hash is the target's
current input, the configuration is its lane's, upsert, certify) inside it, so ``rebuild`` stores a
batch in one transaction with the same checks.
"""

from __future__ import annotations

import json
import math
import sqlite3

from zkr import models as m
from zkr.embeddings.backlog import register_lane
from zkr.embeddings.float32 import encode_f32, is_unit_f32, to_f32
from zkr.embeddings.projections import (
    Config,
    Target,
    _checks,
    current_lane,
    projection_input,
    require_lane_names,
)
from zkr.errors import EmbeddingError
from zkr.store.validation import is_blank, require_scope

# typing's TYPE_CHECKING without importing typing (nor numpy: the vector is checked and encoded
# by zkr.embeddings.float32): a one-shot ``embed`` runs this on light classes (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import array

    from zkr.store.database import Database

__all__ = [
    "InputChangedError",
    "check_embedding_request",
    "checked_vector",
    "embed",
    "store_embedding",
]


class InputChangedError(EmbeddingError):
    """The vector was computed for other text than the target's current input."""


def checked_vector(embedding: m.EmbeddingInput) -> array.array[float]:
    """The request's vector as float32: non-empty, finite and, for ``l2``, of unit magnitude."""
    vector = to_f32(embedding.vector)
    if len(vector) == 0 or not all(map(math.isfinite, vector)):
        raise EmbeddingError("embedding vector must contain finite values")
    if embedding.normalization is m.VectorNormalization.l2 and not is_unit_f32(vector):
        raise EmbeddingError("l2-normalized embedding vector must have unit magnitude")
    return vector


def store_embedding(
    conn: sqlite3.Connection,
    tenant_id: str,
    person_id: str,
    target: Target,
    embedding: m.EmbeddingInput,
    vector: array.array[float],
) -> m.EmbedResult:
    """Steps 2-6 of ``embed`` inside the caller's write transaction (vector already checked)."""
    current = projection_input(conn, tenant_id, person_id, *target)
    expected = current.input_hash
    if embedding.input_hash != expected:
        raise InputChangedError(
            f"embedding input_hash does not match current target input; expected {expected}"
        )
    config: Config = (len(vector), embedding.normalization.value, embedding.distance.value)
    lane = current_lane(
        conn, tenant_id, person_id, embedding.model, embedding.version, replacing=target
    )
    if lane is not None and lane != config:
        raise EmbeddingError(
            "embedding configuration conflicts with the existing model/version lane"
        )
    key = (tenant_id, person_id, target[0], target[1], embedding.model, embedding.version)
    created_at: int = conn.execute(
        "INSERT INTO embeddings(tenant_id, person_id, target_kind, target_id, model, version,"
        " dimension, input_hash, normalization, distance, vector, target_revision, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, unixepoch())"
        " ON CONFLICT(tenant_id, person_id, target_kind, target_id, model, version) DO UPDATE SET"
        " dimension = excluded.dimension, input_hash = excluded.input_hash,"
        " normalization = excluded.normalization, distance = excluded.distance,"
        " vector = excluded.vector, target_revision = excluded.target_revision,"
        " created_at = excluded.created_at RETURNING created_at",
        (
            *key,
            config[0],
            expected,
            json.dumps(config[1]),
            json.dumps(config[2]),
            encode_f32(vector),
            current.revision,
        ),
    ).fetchone()[0]
    if _checks(conn) == "embedding_checks":
        register_lane(conn, tenant_id, person_id, embedding.model, embedding.version)
        conn.execute(
            "INSERT OR REPLACE INTO embedding_checks(tenant_id, person_id, target_kind, target_id,"
            " model, version, target_revision, dimension, normalization, distance)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*key, current.revision, *config),
        )
    return m.EmbedResult(
        target=m.MemoryRef(kind=m.MemoryKind(target[0]), id=target[1]),
        dimension=config[0],
        target_revision=current.revision,
        input_hash=expected,
        created_at=created_at,
    )


def check_embedding_request(
    tenant_id: str, person_id: str, embedding: m.EmbeddingInput
) -> array.array[float]:
    """Step 1 of ``embed``: scope, names, hash, finite (unit) vector. Returns the float32 vector."""
    require_scope(tenant_id, person_id)
    require_lane_names(embedding.model, embedding.version)
    if is_blank(embedding.input_hash):
        raise EmbeddingError("embedding input_hash must not be empty")
    return checked_vector(embedding)


def embed(db: Database, request: m.EmbedRequest) -> m.EmbedResult:
    """Store one vector for a live target (contract §6.4). No commit-feed event.

    :raises InvalidRequest: blank scope; :class:`~zkr.errors.EmbeddingError` for a blank name or
        hash, a non-finite or non-unit vector, a hash of other text, or a lane conflict.
    :raises NotFound: the target is not live in this scope.
    """
    vector = check_embedding_request(request.tenant_id, request.person_id, request.embedding)
    target: Target = (request.target.kind.value, request.target.id)
    with db.atomic() as conn:
        return store_embedding(
            conn, request.tenant_id, request.person_id, target, request.embedding, vector
        )
