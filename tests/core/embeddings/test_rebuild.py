"""``rebuild`` (an addition): fill stale or missing projections through an installed embedder."""

from __future__ import annotations

from typing import Any

import pytest

from zkr import hookimpl
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import EmbeddingError, InvalidRequest, UnknownPluginError
from zkr.operations import OPERATIONS, parse, run


def rebuild(db: MemoryDb, **extra: Any) -> m.RebuildResult:
    payload = {"tenant_id": "t", "person_id": "p", "model": "hash", "version": "1", **extra}
    return db.rebuild(m.RebuildRequest.model_validate(payload))


def lane_issues(mem: Any) -> list[m.ProjectionIssue]:
    return mem.projections(limit=100, model="hash", version="1")


def test_rebuild_fills_every_projection_in_batches(mem: Any, hash_embedder: Any) -> None:
    mem.claim("Acme")
    mem.raw("a walk in the park")
    assert len(lane_issues(mem)) == 5
    result = rebuild(mem.db)
    assert result == m.RebuildResult(
        model="hash", version="1", embedded=5, skipped=0, batches=3, complete=True
    )
    # Batches of its batch_size (2) targets; a source and its evidence share their text, which
    # is embedded once: three distinct texts, each in exactly one call.
    assert all(len(call) <= 2 for call in hash_embedder.calls)
    embedded = sorted(text for call in hash_embedder.calls for text in call)
    assert embedded == sorted(["Sam works at Acme", "Sam employer Acme", "a walk in the park"])
    assert lane_issues(mem) == []
    # Rerunning finds nothing to do.
    assert rebuild(mem.db).embedded == 0


def test_rebuild_vectors_are_searchable(mem: Any, hash_embedder: Any) -> None:
    note = mem.raw("the blue notebook is in the drawer")
    rebuild(mem.db)
    # zkr 0.2.3's ranking lists the source and its evidence (each has a vector) ...
    pack = mem.search("qqqq notebook drawer", model="hash", version="1", ranking="contract")
    assert [(i.memory.kind.value, i.memory.id) for i in pack.items] == [
        ("source", note.source_id),
        ("evidence", note.evidence_id),
    ]
    # ... the default (recall) gives one entry per memory.
    pack = mem.search("qqqq notebook drawer", model="hash", version="1")
    assert [(i.memory.kind.value, i.memory.id) for i in pack.items] == [("source", note.source_id)]


def test_rebuild_is_resumable_with_max_items(mem: Any, hash_embedder: Any) -> None:
    for n in range(3):
        mem.raw(f"note number {n}")
    first = rebuild(mem.db, max_items=4, batch_size=3)
    assert (first.embedded, first.complete) == (4, False)
    second = rebuild(mem.db)
    assert (second.embedded, second.complete) == (2, True)
    assert lane_issues(mem) == []


def test_rebuild_repairs_stale_projections(mem: Any, hash_embedder: Any) -> None:
    ids = mem.claim("Acme")
    rebuild(mem.db)
    fixed = mem.correct(ids.claim_id, "Initech")
    result = rebuild(mem.db)
    assert result.embedded == 3  # the correction's claim, evidence and source
    assert lane_issues(mem) == []
    pack = mem.search("qqqq Initech", model="hash", version="1")
    assert pack.items[0].memory.id == fixed.claim_id


def test_rebuild_needs_an_installed_embedder(mem: Any) -> None:
    with pytest.raises(UnknownPluginError, match=r"no installed embedder for model 'hash'"):
        rebuild(mem.db)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"tenant_id": " "}, "tenant_id must not be empty"),
        ({"model": ""}, "embedding model must not be empty"),
        ({"version": " "}, "embedding version must not be empty"),
    ],
)
def test_rebuild_validates_its_request(db: MemoryDb, extra: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        rebuild(db, **extra)
    assert str(raised.value) == message


def test_embedder_failures_are_reported_and_store_nothing(mem: Any, registered_plugin: Any) -> None:
    class Failing:
        model, version, dimension, normalization, distance = "hash", "1", 2, "none", "dot"

        def embed_batch(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("model file missing")

    class Plugin:
        @hookimpl
        def zkr_register_embedders(self, register: Any) -> None:
            register(Failing())

    registered_plugin(Plugin(), name="failing")
    mem.raw("text")
    with pytest.raises(EmbeddingError, match=r"^embedder failed: model file missing$"):
        rebuild(mem.db)
    assert mem.db.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0


def test_vectors_from_an_embedder_pass_embed_validation(mem: Any, registered_plugin: Any) -> None:
    class NotUnit:
        model, version, dimension, normalization, distance = "hash", "1", 2, "l2", "cosine"

        def embed_batch(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 1.0] for _ in texts]

    class Plugin:
        @hookimpl
        def zkr_register_embedders(self, register: Any) -> None:
            register(NotUnit())

    registered_plugin(Plugin(), name="not-unit")
    mem.raw("text")
    with pytest.raises(EmbeddingError, match=r"^l2-normalized embedding vector must have unit"):
        rebuild(mem.db)


def test_rebuild_refuses_an_embedder_off_the_lane(mem: Any, hash_embedder: Any) -> None:
    first, second = mem.raw("first"), mem.raw("second")
    mem.embed("evidence", first.evidence_id, [1.0], model="hash", version="1")
    mem.embed("source", first.source_id, [1.0], model="hash", version="1")
    del second
    with pytest.raises(EmbeddingError, match=r"conflicts with the existing model/version lane"):
        rebuild(mem.db)


def test_rebuild_is_an_operation_with_json_in_and_out(mem: Any, hash_embedder: Any) -> None:
    mem.raw("through the operation table")
    assert "rebuild" in OPERATIONS
    request = parse(
        OPERATIONS["rebuild"], b'{"tenant_id":"t","person_id":"p","model":"hash","version":"1"}'
    )
    assert isinstance(request, m.RebuildRequest)
    out = run(mem.db, "rebuild", request.model_dump())
    assert out == {
        "model": "hash",
        "version": "1",
        "embedded": 2,
        "skipped": 0,
        "batches": 1,
        "complete": True,
    }


class _Terminal:
    """A stderr that says it is a terminal and keeps what is written."""

    def __init__(self, tty: bool) -> None:
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("tty", [True, False])
def test_rebuild_shows_rate_and_time_left_only_on_a_terminal(
    mem: Any, hash_embedder: Any, monkeypatch: pytest.MonkeyPatch, tty: bool
) -> None:
    for n in range(3):
        mem.raw(f"note number {n}")
    stream = _Terminal(tty)
    monkeypatch.setattr("sys.stderr", stream)
    assert rebuild(mem.db).embedded == 6
    if not tty:
        assert stream.text == ""
        return
    last = stream.text.rstrip("\n").split("\r")[-1]
    assert last.startswith("zkr rebuild: 6/6 (6 embedded, 0 skipped) ")
    assert "/s" in last and "left" in last
    assert stream.text.endswith("\n")


def test_rebuild_embeds_on_a_worker_while_storing_on_the_caller(
    mem: Any, hash_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model runs on a worker thread, so batch N+1 embeds while batch N is stored."""
    import threading

    threads: list[str] = []
    embed_batch = hash_embedder.embed_batch

    def recording(texts: Any, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return embed_batch(texts, *args, **kwargs)

    monkeypatch.setattr(hash_embedder, "embed_batch", recording)
    for n in range(5):
        mem.raw(f"note number {n}")
    result = rebuild(mem.db, batch_size=2)
    assert result.embedded == 10 and result.complete
    assert threads and all(name.startswith("zkr-rebuild") for name in threads)
    assert threading.current_thread().name not in threads
    assert lane_issues(mem) == []
