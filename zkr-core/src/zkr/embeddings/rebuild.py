"""``rebuild`` (an addition): fill a lane's stale or missing projections with an installed embedder.

One pass over the scope's work in (kind, id) order: read a batch of issues (``projections``' logic,
without its page limits), embed their texts in one ``embed_batch`` call, and store each vector
through ``embed``'s own validation, one transaction per batch. A target that changed or disappeared
in between is skipped (it shows up again in ``projections``). Interrupting loses at most the batch
in flight; rerunning continues with what is still stale or missing.

A source and its evidence carry the same text: each distinct text is embedded once per run (the
vectors of texts already embedded are kept, up to :data:`_REMEMBERED_TEXTS`), which halves the
model's work on captures. On a terminal, stderr shows progress with the rate and the time left.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TextIO

from zkr import models as m
from zkr.embeddings.backlog import iter_issues
from zkr.embeddings.projections import Target, current_lane, require_lane_names
from zkr.embeddings.storing import InputChangedError, checked_vector, store_embedding
from zkr.errors import EmbeddingError, NotFound
from zkr.plugins.embedders import embed_texts
from zkr.store.validation import require_scope

if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = ["DEFAULT_BATCH_SIZE", "rebuild"]

DEFAULT_BATCH_SIZE = 32
#: Vectors of distinct texts kept during one run (a source and its evidence share their text).
_REMEMBERED_TEXTS = 100_000


class _Progress:
    """A one-line counter on stderr with rate and time left, only when stderr is a terminal."""

    def __init__(self, stream: TextIO, total: Callable[[], int]) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.shown = False
        self.total = total() if self.enabled else 0
        self.started = time.monotonic()

    def update(self, embedded: int, skipped: int) -> None:
        if not self.enabled:
            return
        done = embedded + skipped
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = done / elapsed
        line = f"\rzkr rebuild: {done}/{self.total} ({embedded} embedded, {skipped} skipped)"
        line += f" {rate:.1f}/s"
        if rate > 0 and self.total >= done:
            left = int((self.total - done) / rate)
            line += f", {left // 60}:{left % 60:02d} left"
        self.stream.write(line + "  ")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


@contextlib.contextmanager
def _lane_issues(
    db: Database, request: m.RebuildRequest, after: Target | None
) -> Iterator[Iterator[m.ProjectionIssue]]:
    """The lane's work after *after*, in (kind, id) order, read in one read transaction."""
    with db.atomic(write=False) as conn:
        lane_key = (request.tenant_id, request.person_id, request.model, request.version)
        issues = iter_issues(conn, lane_key, current_lane(conn, *lane_key), after)
        try:
            yield issues
        finally:
            issues.close()


def _next_batch(
    db: Database, request: m.RebuildRequest, after: Target | None, size: int
) -> list[m.ProjectionIssue]:
    with _lane_issues(db, request, after) as issues:
        return list(itertools.islice(issues, size))


def _work_left(db: Database, request: m.RebuildRequest) -> int:
    """How many targets the run has to embed (for the progress line)."""
    with _lane_issues(db, request, None) as issues:
        total = sum(1 for _ in issues)
    return total if request.max_items is None else min(total, request.max_items)


def _vectors(embedder: Any, texts: list[str], known: dict[str, list[float]]) -> list[list[float]]:
    """One vector per text; only texts not in *known* are embedded (each once), then kept."""
    fresh = [text for text in dict.fromkeys(texts) if text not in known]
    if fresh:
        try:
            produced = embed_texts(embedder, fresh, "passage")
            vectors = [
                row.tolist() if hasattr(row, "tolist") else [float(v) for v in row]
                for row in produced
            ]
        except Exception as exc:  # third-party code: report it as the contract's embedder failure
            raise EmbeddingError(f"embedder failed: {exc}") from exc
        if len(vectors) != len(fresh):
            raise EmbeddingError(
                f"embedder failed: returned {len(vectors)} vectors for {len(fresh)} texts"
            )
        if len(known) + len(fresh) > _REMEMBERED_TEXTS:
            known.clear()
        known.update(zip(fresh, vectors, strict=True))
        if any(text not in known for text in texts):  # more fresh texts than can be kept
            lookup = dict(zip(fresh, vectors, strict=True))
            return [known.get(text) or lookup[text] for text in texts]
    return [known[text] for text in texts]


def rebuild(db: Database, request: m.RebuildRequest) -> m.RebuildResult:
    """Embed the stale or missing projections of (scope, model, version) (one pass).

    Two stages overlap: a worker thread embeds the next batch (the model runs on every core: the
    plugins' runtimes release the GIL) while this thread stores the previous one in SQLite, so
    the model never waits for the database.

    :raises InvalidRequest: blank scope; :class:`~zkr.errors.EmbeddingError` for a blank
        model/version, an embedder failure, or a vector ``embed`` refuses (e.g. a lane conflict).
    :raises UnknownPluginError: no installed embedder serves (model, version).
    """
    from zkr.plugins import get_embedder

    require_scope(request.tenant_id, request.person_id)
    require_lane_names(request.model, request.version)
    embedder = get_embedder(request.model, request.version)
    batch_size = request.batch_size or getattr(embedder, "batch_size", None) or DEFAULT_BATCH_SIZE
    run = _Run(db, request, embedder, batch_size)
    progress = _Progress(sys.stderr, lambda: _work_left(db, request))
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="zkr-rebuild") as pool:
            run.pass_over(pool, progress)
    finally:
        progress.done()
    return m.RebuildResult(
        model=request.model,
        version=request.version,
        embedded=run.embedded,
        skipped=run.skipped,
        batches=run.batches,
        complete=run.complete,
    )


class _Run:
    """One rebuild pass: what was read, embedded and stored so far."""

    def __init__(
        self, db: Database, request: m.RebuildRequest, embedder: Any, batch_size: int
    ) -> None:
        self.db, self.request, self.embedder, self.batch_size = db, request, embedder, batch_size
        self.embedded = self.skipped = self.batches = self.issued = 0
        self.after: Target | None = None
        self.complete = True
        self.known: dict[str, list[float]] = {}

    def _read(self) -> list[m.ProjectionIssue]:
        """The next batch of work (empty at the end or when the budget is spent)."""
        size = self.batch_size
        if self.request.max_items is not None:
            size = min(size, self.request.max_items - self.issued)
            if size <= 0:
                self.complete = not _next_batch(self.db, self.request, self.after, 1)
                return []
        batch = _next_batch(self.db, self.request, self.after, size)
        if batch:
            last = batch[-1].input.target
            self.after = (last.kind.value, last.id)
            self.issued += len(batch)
        return batch

    def pass_over(self, pool: ThreadPoolExecutor, progress: _Progress) -> None:
        """Read, embed (on *pool*) and store every batch; batch N is stored while N+1 embeds."""
        pending: tuple[list[m.ProjectionIssue], Future[list[list[float]]]] | None = None
        while True:
            batch = self._read()
            embedding = None
            if batch:
                texts = [issue.input.text for issue in batch]
                embedding = pool.submit(_vectors, self.embedder, texts, self.known)
            if pending is not None:
                self._store(*pending)
                progress.update(self.embedded, self.skipped)
            if embedding is None:
                return
            pending = (batch, embedding)

    def _store(self, batch: list[m.ProjectionIssue], embedding: Future[list[list[float]]]) -> None:
        stored, changed = _store_batch(
            self.db, self.request, self.embedder, batch, embedding.result()
        )
        self.embedded += stored
        self.skipped += changed
        self.batches += 1


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
