"""Bitemporal reads are exact (issue 24): a read ``as_of`` (V, R) answers what a database that
received only the writes recorded up to R answers.

Hypothesis generates histories - remember (with or without a claim), correct (a mistake or a
change), link (supports or contradicts), delete, forget, apply (a second device's capture, through
its export feed), profile and review - each operation recorded 10 s after the one before, with
valid and captured times drawn freely (before, between or after the recorded times). The history
runs on one database (*full*). Then, for random points (V, R), a *reference* database receives the
same requests, but only those whose commit was recorded at or before R, and every read ``as_of``
(V, R) on *full* must equal the same read on *reference*:

* ``search`` with each word of the vocabulary, ``"ranking": "contract"`` and ``"recall"``;
* ``memories`` (every page);
* ``get`` of every source, evidence and claim id the history created;
* ``history`` of every claim id, ``profiles`` and ``reviews``.

What may legitimately differ, and how it is normalised (nothing else is):

* **Ids**: not normalised - made equal. Both databases draw their ids from the same generator
  keyed by (operation, n-th id of it), so the same request creates the same ids in both.
* **Deletions and erasures are absorbing.** Contract §4.11: a deleted source or evidence is never
  visible, at any time (and ``forget`` exists so that a text is gone from every past). So the
  reference also receives every ``delete`` and ``forget`` recorded *after* R, last, in order: it
  is the past as it can still be told today.
* **A search's order and relevance numbers** are compared as the set of items (memory, excerpt,
  cited evidence), the limit being above the history's size: BM25's corpus statistics (row count,
  term frequencies, average length) count every row of the FTS index, including rows recorded
  after R, so the same matches can tie or order differently. Which memories are found and what
  they cite must be equal.
* **A link's time**: ``link`` has no time of its own; zkr records it at the later of its claim's
  and its evidence's recording (its commit's ``recorded_at``). "Recorded up to R" is read from
  each operation's commit, so such a link belongs to every R after that time.

``ZKR_BITEMPORAL_EXAMPLES`` sets the number of histories (CI: 200; ``nox -s bitemporal`` runs the
long profile).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from zkr.db import MemoryDb
from zkr.errors import NotFound, ZkrError
from zkr.operations import run

capture = importlib.import_module("zkr.writes.capture")
profiles_module = importlib.import_module("zkr.writes.profiles")

EXAMPLES = int(os.environ.get("ZKR_BITEMPORAL_EXAMPLES", "200"))
SCOPE = {"tenant_id": "t", "person_id": "p"}
WORDS = ["lisbon", "porto", "tea", "dentist", "biscuit", "globex", "march", "garden"]
PREDICATES = ["lives in", "works at", "likes"]
START = 1_000
STEP = 10

word = st.sampled_from(WORDS)
text = st.lists(word, min_size=1, max_size=3).map(" ".join)
ref = st.integers(0, 40)
# Valid and captured times around the recorded ones (recorded: START + STEP * index).
moment = st.integers(START - 50, START + STEP * 24)
remember = st.tuples(
    st.just("remember"),
    text,
    moment,
    st.none() | st.tuples(st.sampled_from(PREDICATES), word, moment, st.booleans()),
)
operation = st.one_of(
    remember,
    remember,
    remember,  # three times as likely: most of a memory is what was said
    st.tuples(st.just("correct"), ref, word, st.integers(1, 200), st.booleans()),
    st.tuples(st.just("link"), ref, ref, st.booleans()),
    st.tuples(st.just("delete"), ref),
    st.tuples(st.just("forget"), ref),
    st.tuples(st.just("apply"), text, moment, st.none() | st.tuples(word, moment)),
    st.tuples(st.just("profile"), ref, st.booleans()),
    st.tuples(st.just("review"), ref, ref),
)


class Ids:
    """Deterministic ids: operation *n*'s *k*-th id is the same in every database."""

    def __init__(self) -> None:
        self.operation = 0
        self.count = 0

    def at(self, operation: int) -> None:
        self.operation, self.count = operation, 0

    def __call__(self) -> str:
        self.count += 1
        return f"{self.operation:016x}{self.count:016x}"


@contextmanager
def deterministic_ids() -> Iterator[Ids]:
    ids = Ids()
    with pytest.MonkeyPatch.context() as patch:
        for module in (capture, profiles_module):
            patch.setattr(module, "new_id", ids)
        yield ids


@dataclass
class Step:
    """One request that succeeded on the full database, and its commit's recorded time."""

    index: int
    name: str
    payload: dict[str, Any]
    recorded_at: int


@dataclass
class History:
    full: MemoryDb
    steps: list[Step] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    profile_claims: list[str] = field(default_factory=list)


def newest_commit(db: MemoryDb) -> int:
    row = db.conn.execute("SELECT max(sequence) FROM memory_commits").fetchone()
    return int(row[0] or 0)


def pick(pool: list[str], index: int) -> str | None:
    return pool[index % len(pool)] if pool else None


def request_of(
    history: History, device: MemoryDb, index: int, at: int, op: tuple[Any, ...]
) -> tuple[str, dict[str, Any]] | None:
    """The request of generated operation *op* at recorded time *at* (``None``: nothing to do)."""
    name = op[0]
    if name == "remember":
        _, words, captured, claim = op
        payload: dict[str, Any] = {
            **SCOPE,
            "kind": "conversation",
            "text": f"{words} {index}",
            "captured_at": captured,
            "recorded_at": at,
        }
        if claim is not None:
            predicate, value, valid_from, profile_fact = claim
            payload["claim"] = {
                "subject": "me",
                "predicate": predicate,
                "value": value,
                "kind": "profile_fact" if profile_fact else "fact",
                "valid_from": valid_from,
            }
        return name, payload
    if name == "correct":
        _, claim, value, later, change = op
        claim_id = pick(history.claims, claim)
        if claim_id is None:
            return None
        row = history.full.conn.execute(
            "SELECT valid_from FROM claims WHERE id = ?", (claim_id,)
        ).fetchone()
        return name, {
            **SCOPE,
            "claim_id": claim_id,
            "text": f"now {value} {index}",
            "value": value,
            "valid_at": row[0] + later,
            "recorded_at": at,
            "mode": "change" if change else "mistake",
        }
    if name == "link":
        _, claim, evidence, supports = op
        claim_id, evidence_id = pick(history.claims, claim), pick(history.evidence, evidence)
        if claim_id is None or evidence_id is None:
            return None
        return name, {
            **SCOPE,
            "claim_id": claim_id,
            "evidence_id": evidence_id,
            "relation": "supports" if supports else "contradicts",
            "confidence_basis_points": 7000,
        }
    if name in ("delete", "forget"):
        source_id = pick(history.sources, op[1])
        if source_id is None:
            return None
        key = "deleted_at" if name == "delete" else "erased_at"
        return name, {**SCOPE, "source_id": source_id, key: at}
    if name == "apply":
        return name, device_page(device, index, at, op)
    if name == "profile":
        claim_id = pick(history.profile_claims, op[1])
        if claim_id is None:
            return None
        stability = "stable" if op[2] else "current"
        return name, {**SCOPE, "claim_id": claim_id, "stability": stability, "recorded_at": at}
    evidence_ids = sorted({e for e in (pick(history.evidence, i) for i in op[1:]) if e})
    if not evidence_ids:
        return None
    return name, {
        **SCOPE,
        "day": f"day {index % 3}",
        "summary": f"review {index}",
        "evidence_ids": evidence_ids,
        "recorded_at": at,
    }


def device_page(device: MemoryDb, index: int, at: int, op: tuple[Any, ...]) -> dict[str, Any]:
    """A capture made on another device at *at*, as the page of its feed that carries it."""
    _, words, captured, claim = op
    status = run(device, "apply", {**SCOPE, "upstream": "device"})  # where the device's feed is
    del status
    before = newest_commit(device)
    payload: dict[str, Any] = {
        **SCOPE,
        "kind": "document",
        "text": f"{words} device {index}",
        "captured_at": captured,
        "recorded_at": at,
    }
    if claim is not None:
        payload["claim"] = {
            "subject": "me",
            "predicate": "works at",
            "value": claim[0],
            "kind": "fact",
            "valid_from": claim[1],
        }
    run(device, "remember", payload)
    cursor = {"after_commit": before, "after_event_index": -1}
    page = run(device, "export", {**SCOPE, "export_format": 1, **cursor})
    return {**SCOPE, "upstream": "device", **cursor, "page": page}


def record(history: History, step: Step, result: Any) -> None:
    """Remember what the step created, for later operations to refer to."""
    if step.name == "remember":
        history.sources.append(result["source_id"])
        history.evidence.append(result["evidence_id"])
        if result.get("claim_id"):
            history.claims.append(result["claim_id"])
            if step.payload["claim"]["kind"] == "profile_fact":
                history.profile_claims.append(result["claim_id"])
    elif step.name == "correct":
        history.sources.append(result["source_id"])
        history.evidence.append(result["evidence_id"])
        history.claims.append(result["claim_id"])
        if history.full.conn.execute(
            "SELECT kind FROM claims WHERE id = ?", (result["claim_id"],)
        ).fetchone() == ("profile_fact",):
            history.profile_claims.append(result["claim_id"])
    elif step.name == "apply":
        rows = history.full.conn.execute(
            "SELECT s.id, e.id FROM sources s JOIN evidence e ON e.source_id = s.id"
            " WHERE s.id NOT IN (SELECT value FROM json_each(?))",
            (json_list(history.sources),),
        ).fetchall()
        for source_id, evidence_id in rows:
            history.sources.append(source_id)
            history.evidence.append(evidence_id)
        history.claims.extend(
            row[0]
            for row in history.full.conn.execute(
                "SELECT id FROM claims WHERE id NOT IN (SELECT value FROM json_each(?))",
                (json_list(history.claims),),
            )
        )


def json_list(values: list[str]) -> str:
    import json

    return json.dumps(values)


def play(tmp: Path, ops: list[tuple[Any, ...]], ids: Ids) -> History:
    history = History(MemoryDb(tmp / "full.db"))
    with MemoryDb(tmp / "device.db") as device:
        for index, op in enumerate(ops):
            at = START + STEP * index
            ids.at(index)
            built = request_of(history, device, index, at, op)
            if built is None:
                continue
            name, payload = built
            before = newest_commit(history.full)
            try:
                result = run(history.full, name, payload)
            except ZkrError:
                continue  # refused: changed nothing, so it is not part of the history
            commits = history.full.conn.execute(
                "SELECT max(recorded_at) FROM memory_commits WHERE sequence > ?", (before,)
            ).fetchone()[0]
            if commits is None:
                continue  # a no-op (an identical link or profile): nothing was recorded
            step = Step(index, name, payload, int(commits))
            history.steps.append(step)
            record(history, step, result)
    return history


def reference(tmp: Path, history: History, recorded_at: int, ids: Ids, name: str) -> MemoryDb:
    """A database that received only the writes recorded up to *recorded_at* - and every
    deletion and erasure (absorbing: see the module docstring)."""
    db = MemoryDb(tmp / f"reference-{name}.db")
    known = [s for s in history.steps if s.recorded_at <= recorded_at]
    absorbing = [
        s for s in history.steps if s.recorded_at > recorded_at and s.name in ("delete", "forget")
    ]
    for step in known:
        ids.at(step.index)
        run(db, step.name, step.payload)  # recorded then: it must be accepted again
    for step in absorbing:
        with suppress(NotFound):  # its capture was recorded after R: nothing to delete
            run(db, step.name, step.payload)
    return db


def reads(db: MemoryDb, history: History, valid_at: int, recorded_at: int) -> dict[str, Any]:
    """Every read ``as_of`` (V, R), normalised as the module docstring says."""
    as_of = {"valid_at": valid_at, "recorded_at": recorded_at}
    answers: dict[str, Any] = {}
    for query in WORDS:
        for ranking in ("contract", "recall"):
            pack = run(
                db,
                "search",
                {**SCOPE, "query": query, "limit": 100, "ranking": ranking, "as_of": as_of},
            )
            answers[f"search {ranking} {query}"] = sorted(
                (i["memory"]["kind"], i["memory"]["id"], i["excerpt"], i["evidence_ids"])
                for i in pack["items"]
            )
    pages, cursor = [], None
    while True:
        page = run(db, "memories", {**SCOPE, "limit": 7, "cursor": cursor, "as_of": as_of})
        pages.extend(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    answers["memories"] = pages
    for kind, pool in (
        ("source", history.sources),
        ("evidence", history.evidence),
        ("claim", history.claims),
    ):
        for target_id in pool:
            answers[f"get {kind} {target_id}"] = answer(
                db, "get", {**SCOPE, "target": {"kind": kind, "id": target_id}, "as_of": as_of}
            )
    for claim_id in history.claims:
        answers[f"history {claim_id}"] = answer(
            db, "history", {**SCOPE, "claim_id": claim_id, "as_of": as_of}
        )
    answers["profiles"] = run(db, "profiles", {**SCOPE, "limit": 100, "as_of": as_of})
    answers["reviews"] = run(db, "reviews", {**SCOPE, "limit": 100, "as_of": as_of})
    return answers


def answer(db: MemoryDb, name: str, payload: dict[str, Any]) -> Any:
    """The read's answer, or the error it gives (``record not found`` for what did not exist)."""
    try:
        return run(db, name, payload)
    except ZkrError as error:
        return {"error": str(error)}


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    # The explain phase replays a failure hundreds of times: minutes, and nothing a diff lacks.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)
@given(
    ops=st.tuples(remember, st.lists(operation, min_size=3, max_size=24)).map(
        lambda first_and_rest: [first_and_rest[0], *first_and_rest[1]]
    ),
    # Recorded times just before, at and after the operations' (START + STEP * k).
    points=st.lists(
        st.builds(
            lambda valid_at, k, offset: (valid_at, START + STEP * k + offset),
            moment | st.just(START + STEP * 30),  # some time, or after every valid time drawn
            st.integers(-1, 25),
            st.sampled_from([-1, 0, 5]),
        ),
        min_size=1,
        max_size=3,
    ),
)
# A claim recorded later and linked to an earlier capture: as of before it, the capture must not
# be found by the claim's words (the recall index holds its statement in the capture's row).
@example(
    ops=[
        ("remember", "tea", 990, None),
        ("remember", "garden", 990, ("lives in", "lisbon", 990, False)),
        ("link", 0, 0, True),
    ],
    points=[(1_000, 1_005)],
)
# A mistake corrected later: as of before it, the claim is listed as then believed.
@example(
    ops=[
        ("remember", "porto", 950, ("lives in", "porto", 950, False)),
        ("correct", 0, "tea", 5, False),
    ],
    points=[(960, 1_005), (2_000, 1_005)],
)
def test_every_read_as_of_equals_the_read_of_what_was_recorded_then(
    tmp_path_factory: pytest.TempPathFactory,
    ops: list[tuple[Any, ...]],
    points: list[tuple[int, int]],
) -> None:
    tmp = tmp_path_factory.mktemp("replay")
    with deterministic_ids() as ids:
        history = play(tmp, ops, ids)
        try:
            # Always one point just before the last correction was recorded, if any.
            corrections = [s.recorded_at for s in history.steps if s.name == "correct"]
            checked = list(points)
            if corrections:
                checked.append((corrections[-1] - 1, corrections[-1] - 1))
            for n, (valid_at, recorded_at) in enumerate(checked):
                expected_db = reference(tmp, history, recorded_at, ids, str(n))
                try:
                    expected = reads(expected_db, history, valid_at, recorded_at)
                finally:
                    expected_db.close()
                assert reads(history.full, history, valid_at, recorded_at) == expected, (
                    valid_at,
                    recorded_at,
                )
        finally:
            history.full.close()
