"""``rebuild`` (an addition): fill a lane's stale or missing projections with an installed embedder.

One pass over the scope's work in (kind, id) order: read a batch of issues (``projections``' logic,
without its page limits), embed their texts in one ``embed_batch`` call, and store each vector
through ``embed``'s own validation, one transaction per batch. A target that changed or disappeared
in between is skipped (it shows up again in ``projections``). Interrupting loses at most the batch
in flight; rerunning continues with what is still stale or missing.
"""

from __future__ import annotations

import itertools
import sys
from typing import TYPE_CHECKING, Any, TextIO

from zkr import models as m
from zkr.embeddings.projections import (
    InputChangedError,
    Target,
    checked_vector,
    current_lane,
    iter_issues,
    require_lane_names,
    store_embedding,
)
from zkr.errors import EmbeddingError, NotFound
from zkr.store.validation import require_scope

if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = ["DEFAULT_BATCH_SIZE", "rebuild"]

DEFAULT_BATCH_SIZE = 32


class _Progress:
    """A one-line counter on stderr, only when stderr is a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.shown = False

    def update(self, embedded: int, skipped: int) -> None:
        if self.enabled:
            self.stream.write(f"\rzkr rebuild: {embedded} embedded, {skipped} skipped")
            self.stream.flush()
            self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _next_batch(
    db: Database, request: m.RebuildRequest, after: Target | None, size: int
) -> list[m.ProjectionIssue]:
    with db.atomic(write=False) as conn:
        lane = current_lane(
            conn, request.tenant_id, request.person_id, request.model, request.version
        )
        issues = iter_issues(
            conn, request.tenant_id, request.person_id, request.model, request.version, lane, after
        )
        try:
            return list(itertools.islice(issues, size))
        finally:
            issues.close()


def _vectors(embedder: Any, texts: list[str]) -> list[list[float]]:
    try:
        produced = embedder.embed_batch(texts)
        vectors = [
            row.tolist() if hasattr(row, "tolist") else [float(v) for v in row] for row in produced
        ]
    except Exception as exc:  # third-party code: report it as the contract's embedder failure
        raise EmbeddingError(f"embedder failed: {exc}") from exc
    if len(vectors) != len(texts):
        raise EmbeddingError(
            f"embedder failed: returned {len(vectors)} vectors for {len(texts)} texts"
        )
    return vectors


def rebuild(db: Database, request: m.RebuildRequest) -> m.RebuildResult:
    """Embed the stale or missing projections of (scope, model, version) (one pass).

    :raises InvalidRequest: blank scope; :class:`~zkr.errors.EmbeddingError` for a blank
        model/version, an embedder failure, or a vector ``embed`` refuses (e.g. a lane conflict).
    :raises UnknownPluginError: no installed embedder serves (model, version).
    """
    from zkr.plugins import get_embedder

    require_scope(request.tenant_id, request.person_id)
    require_lane_names(request.model, request.version)
    embedder = get_embedder(request.model, request.version)
    batch_size = request.batch_size or getattr(embedder, "batch_size", None) or DEFAULT_BATCH_SIZE
    budget = request.max_items
    embedded = skipped = batches = 0
    after: Target | None = None
    progress = _Progress(sys.stderr)
    complete = True
    try:
        while True:
            size = batch_size
            if budget is not None:
                size = min(size, budget - embedded - skipped)
                if size <= 0:
                    complete = not _next_batch(db, request, after, 1)
                    break
            batch = _next_batch(db, request, after, size)
            if not batch:
                break
            last = batch[-1].input.target
            after = (last.kind.value, last.id)
            vectors = _vectors(embedder, [issue.input.text for issue in batch])
            stored, changed = _store_batch(db, request, embedder, batch, vectors)
            embedded += stored
            skipped += changed
            batches += 1
            progress.update(embedded, skipped)
    finally:
        progress.done()
    return m.RebuildResult(
        model=request.model,
        version=request.version,
        embedded=embedded,
        skipped=skipped,
        batches=batches,
        complete=complete,
    )


def _store_batch(
    db: Database,
    request: m.RebuildRequest,
    embedder: Any,
    batch: list[m.ProjectionIssue],
    vectors: list[list[float]],
) -> tuple[int, int]:
    stored = changed = 0
    with db.atomic() as conn:
        for issue, values in zip(batch, vectors, strict=True):
            embedding = m.EmbeddingInput(
                vector=values,
                model=request.model,
                version=request.version,
                input_hash=issue.input.input_hash,
                normalization=m.VectorNormalization(embedder.normalization),
                distance=m.VectorDistance(embedder.distance),
            )
            vector = checked_vector(embedding)
            target: Target = (issue.input.target.kind.value, issue.input.target.id)
            try:
                with db.atomic():  # a savepoint: a target that moved on is skipped alone
                    store_embedding(
                        conn, request.tenant_id, request.person_id, target, embedding, vector
                    )
            except (NotFound, InputChangedError):
                changed += 1
            else:
                stored += 1
    return stored, changed
