"""One-shot ``embed`` and ``apply`` on the fast path (issue 27.4) answer as the normal path does.

Their requests carry what the generated description once left opaque: ``embed`` a vector of
float32 values (now checked and encoded without numpy), ``apply`` an export page whose records
are read with their kind's model. For valid requests and for hostile ones (the contract's errors
on both paths), ``zkr --db DB embed|apply`` in a fresh process that never imported pydantic gives
the same exit status, stdout and stderr bytes and the same database (every row, the feed
included) as this process, where pydantic validates and the table's handler runs. A valid one
never imports pydantic; an invalid one the checker cannot vouch for still gets pydantic's error.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Outcome, db_snapshot
from tests.cli.test_fast_path_cli import _counted_ids, _Forked, forked, seeded
from tests.integration.test_fuzz import input_hash, seed
from zkr.db import MemoryDb

__all__ = ["forked", "seeded"]  # the fixtures, shared with test_fast_path_cli

SCOPE = {"tenant_id": "t", "person_id": "p"}


@pytest.fixture(scope="module")
def peer_page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A peer's export page holding every kind of record seed() writes (claims with their
    ``valid_time.from`` alias, links, profiles, reviews)."""
    with MemoryDb(tmp_path_factory.mktemp("peer") / "peer.db") as peer:
        seed(peer, key="k2", predicate="city")
        page = peer.run("export", {**SCOPE, "export_format": 1})
    dumped: dict[str, Any] = page.model_dump(mode="json", by_alias=True)
    return dumped


@pytest.fixture
def both(
    seeded: tuple[Path, dict[str, Any]],
    forked: _Forked,
    zkr_inprocess: Callable[..., Outcome],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Callable[[str, bytes], tuple[Outcome, bool]]:
    """``both(name, body)`` runs *body* both ways on copies of the seeded database."""
    return functools.partial(_both, seeded, forked, zkr_inprocess, monkeypatch, tmp_path)


def _both(
    seeded: tuple[Path, dict[str, Any]],
    forked: _Forked,
    zkr_inprocess: Callable[..., Outcome],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
    body: bytes,
) -> tuple[Outcome, bool]:
    """Runs *body* both ways on copies of the seeded database; asserts they agree byte for byte
    and answers the fast run's outcome and whether it imported pydantic."""
    fast_db, normal_db = tmp_path / "fast.db", tmp_path / "normal.db"
    for path in (fast_db, normal_db):
        shutil.copyfile(seeded[0], path)
    fast, pydantic = forked(["--db", str(fast_db), name], body, {}, ["ZKR_RANKING"])
    with monkeypatch.context() as patch:
        _counted_ids(patch)
        normal = zkr_inprocess("--db", str(normal_db), name, stdin=body)
    assert _unclocked(fast) == _unclocked(normal), body
    for path in (fast_db, normal_db):
        _unclock_db(path)
    assert db_snapshot(fast_db) == db_snapshot(normal_db), body
    return fast, pydantic


# An embedding's created_at is SQLite's clock (unixepoch()): the two runs may straddle a second.
_CREATED_AT = re.compile(rb'"created_at":\d+')


def _unclocked(outcome: Outcome) -> Outcome:
    return Outcome(
        outcome.returncode, _CREATED_AT.sub(b'"created_at":0', outcome.stdout), outcome.stderr
    )


def _unclock_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE embeddings SET created_at = 0")
    conn.close()


def _embedding(vector: Any, **more: Any) -> dict[str, Any]:
    return {"vector": vector, "model": "m2", "version": "1", "normalization": "l2",
            "distance": "cosine", "input_hash": input_hash("Sam likes tea"), **more}  # fmt: skip


# (embedding, expected): "light" is valid and never imports pydantic; "valid" is stored but may
# take pydantic's path (an integer beyond 2**53: the checker declines); "refused" is an error.
EMBEDDINGS = [
    (_embedding([0.6, 0.8]), "light"),
    (_embedding([1, 0]), "light"),  # integers are floats
    (_embedding([-0, 1]), "light"),  # -0 is a float for the lenient parser
    (_embedding([3, 4], normalization="none", distance="dot"), "light"),
    (_embedding([1e-50, 1.0]), "light"),  # rounds to 0 in float32
    (_embedding([0.6, 0.8], distance="euclidean"), "light"),
    (_embedding([10**30], normalization="none"), "valid"),
    (_embedding([9007199254740993], normalization="none"), "valid"),
    (_embedding([1.0, 1.0]), "refused"),  # not of unit magnitude
    (_embedding([1.0, 0.015]), "refused"),  # 1.0001125: just outside the tolerance
    (_embedding([1.0, 0.014]), "light"),  # 1.000098: just inside it
    (_embedding([]), "refused"),
    (_embedding([1e39, 0.0], normalization="none"), "refused"),  # an infinity in float32
    (_embedding([True, 0.0]), "refused"),  # a boolean is no float (strict)
    (_embedding(["1", 0.0]), "refused"),
    (_embedding([10**400], normalization="none"), "refused"),
    (_embedding([0.6, 0.8], input_hash="sha256:00"), "refused"),  # another text's hash
    (_embedding([0.6, 0.8], model=" "), "refused"),
    (_embedding([0.6, 0.8], normalization="L2"), "refused"),
    (_embedding(None), "refused"),
    (_embedding([[0.6], 0.8]), "refused"),
]


@pytest.mark.parametrize(("embedding", "expected"), EMBEDDINGS)
def test_embed_answers_and_writes_alike_and_a_valid_one_never_imports_pydantic(
    embedding: dict[str, Any],
    expected: str,
    seeded: tuple[Path, dict[str, Any]],
    both: Callable[[str, bytes], tuple[Outcome, bool]],
) -> None:
    target = {"kind": "source", "id": seeded[1]["t"][5]}  # "Sam likes tea", no vector yet
    body = json.dumps({**SCOPE, "target": target, "embedding": embedding}).encode()
    outcome, pydantic = both("embed", body)
    assert outcome.returncode == (1 if expected == "refused" else 0), outcome.stderr
    if expected == "light":
        assert pydantic is False


@pytest.mark.parametrize("vector", ["[1e400, 0]", "[-1e400, 0]", "[Infinity, 0]", "[NaN, 0]"])
def test_embed_of_numbers_beyond_a_double_answers_alike(
    vector: str,
    seeded: tuple[Path, dict[str, Any]],
    both: Callable[[str, bytes], tuple[Outcome, bool]],
) -> None:
    # 1e400 parses as an infinity (finite-checked after); the non-JSON literals are refused.
    target = {"kind": "source", "id": seeded[1]["t"][5]}
    body = json.dumps({**SCOPE, "target": target, "embedding": _embedding("VECTOR")})
    body = body.replace('"VECTOR"', vector)
    outcome, _ = both("embed", body.encode())
    assert outcome.returncode == 1


def test_embed_into_a_lane_of_another_dimension_is_refused_alike(
    seeded: tuple[Path, dict[str, Any]],
    both: Callable[[str, bytes], tuple[Outcome, bool]],
) -> None:
    # seed() stored a 2-value vector in lane m/1: three values conflict with it.
    target = {"kind": "source", "id": seeded[1]["t"][5]}
    embedding = _embedding([0.6, 0.8, 0.0], model="m", normalization="none")
    body = json.dumps({**SCOPE, "target": target, "embedding": embedding}).encode()
    outcome, pydantic = both("embed", body)
    assert outcome.returncode == 1 and b"conflicts with the existing" in outcome.stderr
    assert pydantic is False  # a valid request: the handler's own error, without pydantic


def _edit(page: dict[str, Any], kind: str, change: Callable[[dict[str, Any]], Any]) -> Any:
    """A copy of *page* with *change* applied to the envelope of its first record of *kind*."""
    edited = copy.deepcopy(page)
    for envelope in edited["commits"][0]["records"] + edited["commits"][-1]["records"]:
        if envelope["kind"] == kind:
            change(envelope)
            return edited
    raise AssertionError(f"no {kind} record on the page")


def _claim_from_by_name(envelope: dict[str, Any]) -> None:
    valid_time = envelope["record"]["valid_time"]
    valid_time["from_"] = valid_time.pop("from")


def _set(*path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(envelope: dict[str, Any]) -> None:
        node = envelope
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _drop(*path: str) -> Callable[[dict[str, Any]], None]:
    def change(envelope: dict[str, Any]) -> None:
        node = envelope
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return change


# (name, page edit, expected), as EMBEDDINGS
PAGES: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("as exported", lambda page: page, "light"),
    ("from by its name", lambda page: _edit(page, "claim", _claim_from_by_name), "light"),
    ("unknown record field", lambda page: _edit(page, "source", _set("record", "x", value=1)),
     "light"),
    ("byte range", lambda page: _edit(page, "evidence", _set(
        "record", "evidence", "byte_range", value={"start": 0, "end": 3})), "light"),
    ("both from and from_", lambda page: _edit(page, "claim", _set(
        "record", "valid_time", "from_", value=5)), "valid"),  # the alias wins: pydantic's
    ("unknown kind", lambda page: _edit(page, "source", _set("kind", value="bogus")), "refused"),
    ("content not text", lambda page: _edit(page, "source", _set(
        "record", "source", "content", value=5)), "refused"),
    ("source missing", lambda page: _edit(page, "source", _drop("record", "source")), "refused"),
    ("revision a bool", lambda page: _edit(page, "source", _set(
        "record", "source", "revision", value=True)), "refused"),
    ("claim kind misspelled", lambda page: _edit(page, "claim", _set(
        "record", "kind", value="Fact")), "refused"),
    ("another scope", lambda page: _edit(page, "source", _set(
        "record", "source", "tenant_id", value="victim")), "refused"),
    ("record not an object", lambda page: _edit(page, "source", _set("record", value=[])),
     "refused"),
    ("byte range of text", lambda page: _edit(page, "evidence", _set(
        "record", "evidence", "byte_range", value={"start": "0"})), "refused"),
    ("complete an integer", lambda page: {**page, "complete": 1}, "refused"),
    ("format 2", lambda page: {**page, "export_format": 2}, "refused"),
    ("sequence 0", lambda page: {**page, "commits": [
        {**page["commits"][0], "sequence": 0}, *page["commits"][1:]]}, "refused"),
    ("records not objects", lambda page: {**page, "commits": [
        {**page["commits"][0], "records": ["x"]}]}, "refused"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "expected"), [(edit, expected) for _, edit, expected in PAGES],
                         ids=[name for name, _, _ in PAGES])  # fmt: skip
def test_apply_answers_and_writes_alike_and_a_valid_page_never_imports_pydantic(
    edit: Callable[[dict[str, Any]], Any],
    expected: str,
    peer_page: dict[str, Any],
    both: Callable[[str, bytes], tuple[Outcome, bool]],
) -> None:
    request = {**SCOPE, "upstream": "peer", "after_commit": 0, "after_event_index": -1,
               "page": edit(peer_page)}  # fmt: skip
    body = json.dumps(request).encode()
    outcome, pydantic = both("apply", body)
    assert outcome.returncode == (1 if expected == "refused" else 0), outcome.stderr
    if expected == "light":
        assert pydantic is False
        assert json.loads(outcome.stdout)["applied_commits"] == len(peer_page["commits"])


@pytest.mark.parametrize(
    "request_body",
    [
        {**SCOPE, "upstream": "peer"},  # no page: where to resume
        {**SCOPE, "page": None, "after_commit": 3},
        {**SCOPE, "page": "x"},
        {"tenant_id": " ", "person_id": "p"},
    ],
)
def test_apply_without_a_page_answers_alike(
    request_body: dict[str, Any],
    both: Callable[[str, bytes], tuple[Outcome, bool]],
) -> None:
    body = json.dumps(request_body).encode()
    both("apply", body)


def test_a_page_without_its_cursor_is_refused_alike(
    peer_page: dict[str, Any],
    both: Callable[[str, bytes], tuple[Outcome, bool]],
) -> None:
    body = json.dumps({**SCOPE, "page": peer_page}).encode()
    outcome, pydantic = both("apply", body)
    assert outcome.returncode == 1 and b"after_commit and after_event_index" in outcome.stderr
    assert pydantic is False
