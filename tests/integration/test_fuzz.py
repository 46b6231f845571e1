"""Property-based fuzzing of every operation, through ``zkr serve`` and the library (issue 18).

For every operation of the table, hypothesis generates requests from the operation's own request
model (so a new operation is fuzzed the day it is added): mostly well-formed ones with ids of both
scopes, then mutated - values swapped for hostile ones (numbers out of every range, ``-0``, deep
nesting, lone surrogates, NUL, huge text), fields dropped, unknown fields added. ``apply`` also gets
real export pages of a peer, mutated the same way. An id field gets, most of the time, a stored id
of its kind (a ``claim_id`` a claim's), so that writes needing one get past ``record not found``;
through the library most accepted writes are rolled back afterwards, so the seeded records stay.

Properties, for every request:

* **serve**: each request line gets exactly one answer line, strict JSON (no NaN/Infinity), and
  the process never writes a traceback or dies;
* **library**: ``MemoryDb.run`` answers or raises a :class:`~zkr.errors.ZkrError`, nothing else;
* a **refused** request changes nothing: every table (FTS shadow tables, feed and
  ``sqlite_sequence`` included) is compared before and after;
* an **accepted** answer never holds an id (or the secret text) of the other scope, unless the
  request itself carried it.

Profiles: ``ZKR_FUZZ_PROFILE=ci`` (default, a few dozen requests per operation and surface, for
CI) or ``long`` (``nox -s fuzz``: at least 2,000 per operation and surface);
``ZKR_FUZZ_EXAMPLES=N`` overrides the count (to profile or to try a fix). Each test prints its
figures (requests, accepted, refused, violations).
"""

from __future__ import annotations

import enum
import json
import os
import sqlite3
import subprocess
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from tests.core.conftest import table_snapshot
from zkr.db import MemoryDb
from zkr.embeddings.projections import input_hash
from zkr.errors import ZkrError
from zkr.jsonio import parse_request
from zkr.operations import OPERATIONS

PROFILE = os.environ.get("ZKR_FUZZ_PROFILE", "ci")
EXAMPLES = int(os.environ.get("ZKR_FUZZ_EXAMPLES", 0)) or {"ci": 15, "long": 2000}[PROFILE]
SCOPE = ("t", "p")
VICTIM = ("victim", "v")
SECRET = "zebrafinch-secret"
I64 = 2**63

# ----------------------------------------------------------------------------------------------
# The database every example starts from: one scope to fuzz, one victim scope to protect
# ----------------------------------------------------------------------------------------------


def seed(db: MemoryDb, key: str = "k1", predicate: str = "employer") -> dict[str, Any]:
    """Both scopes with every kind of record; returns the ids and a peer's export page."""
    ids: dict[str, Any] = {}
    for tenant, person in (SCOPE, VICTIM):
        text = f"{SECRET} works at Acme" if (tenant, person) == VICTIM else "Sam works at Acme"
        stored = db.run(
            "remember",
            {"tenant_id": tenant, "person_id": person, "kind": "conversation", "text": text,
             "captured_at": 10, "recorded_at": 10, "ingestion_key": key,
             "claim": {"subject": "Sam", "predicate": predicate, "value": "Acme",
                       "kind": "profile_fact", "valid_from": 10},
             "locator": {"device_id": "d", "provider": "p", "stream_id": "s", "segment_id": "g",
                         "start_ms": 1, "end_ms": 2}},
        )  # fmt: skip
        scope = {"tenant_id": tenant, "person_id": person}
        profile = db.run(
            "profile", {**scope, "stability": "stable", "claim_id": stored.claim_id,
                        "recorded_at": 11},
        )  # fmt: skip
        review = db.run(
            "review", {**scope, "day": "2024-01-01", "summary": "a day",
                       "evidence_ids": [stored.evidence_id], "recorded_at": 12},
        )  # fmt: skip
        db.run(
            "embed", {**scope, "target": {"kind": "source", "id": stored.source_id},
                      "embedding": {"vector": [1.0, 0.5], "model": "m", "version": "1",
                                    "input_hash": input_hash(text), "normalization": "none",
                                    "distance": "cosine"}},
        )  # fmt: skip
        # A second capture (no claim): its evidence can be linked to the claim.
        second = db.run(
            "remember", {**scope, "kind": "conversation", "text": "Sam likes tea",
                         "captured_at": 12, "recorded_at": 12},
        )  # fmt: skip
        ids[f"{tenant}"] = [
            stored.source_id, stored.evidence_id, stored.claim_id, profile.id, review.id,
            second.source_id, second.evidence_id,
        ]  # fmt: skip
    return ids


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A seeded database file (copied per surface) and a peer's export pages for ``apply``."""
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "seed.db"
    with MemoryDb(path) as db:
        ids = seed(db)
    with MemoryDb(folder / "peer.db") as peer:
        seed(peer, key="k2", predicate="city")
        page = peer.run("export", {"tenant_id": "t", "person_id": "p", "export_format": 1})
        pages = [page.model_dump(mode="json", by_alias=True)]
    return {"path": path, "ids": ids, "pages": pages}


# ----------------------------------------------------------------------------------------------
# Requests, from the operation's own request model
# ----------------------------------------------------------------------------------------------

HOSTILE_NUMBERS = [0, -1, 1, 2**31, 2**32, 2**63 - 1, -(2**63), I64, 2**64, -(2**64), 10**30]
HOSTILE_LITERALS = [
    "-0", "1e999", "-1e999", "1.5", "1e3", "9" * 400, "true", "null", '"\\ud800"',
    '"\\udc00x"', '"a\\u0000b"', "[" * 300 + "]" * 300, '{"k":1,"k":2}', '"' + "x" * 5000 + '"',
]  # fmt: skip


class Raw:
    """A JSON fragment written as is into the request text (``-0``, ``1e999``, lone surrogates)."""

    def __init__(self, text: str) -> None:
        self.text = text


def texts(ids: list[str]) -> st.SearchStrategy[str]:
    # Mostly stored ids (of both scopes) and words of the stored texts, so requests get far.
    known = st.sampled_from([*ids, "Acme", "Sam works", "m", "1", "sha256:", "2024-01-02"])
    odd = st.one_of(
        st.sampled_from(["", " ", SCOPE[0], SCOPE[1], "0" * 32]),
        st.text(max_size=20),
        st.text(alphabet="ab \x00\u00e9\u2028\U0001f600", max_size=8),
    )
    return st.one_of(known, known, known, known, known, known, odd)


def value_for(annotation: Any, ids: list[str], depth: int = 0) -> st.SearchStrategy[Any]:
    """A value of *annotation*'s type (mostly valid), by walking the type."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return value_for(args[0], ids, depth)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([value_for(option, ids, depth) for option in args])
    if origin is list:
        return st.lists(value_for(args[0] if args else Any, ids, depth + 1), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=5), value_for(args[1], ids, depth + 1), max_size=2)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if annotation is type(None):
        return st.none()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_value(annotation, ids, depth + 1) if depth < 4 else st.just({})
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return st.sampled_from([member.value for member in annotation])
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        # Mostly small valid times and counts (so writes get through); hostile ones a sixth of
        # the time here, and again through the mutations.
        valid = st.integers(0, 60)
        return st.one_of(valid, valid, valid, valid, valid, st.sampled_from(HOSTILE_NUMBERS))
    if annotation is float:
        return st.floats(-2.0, 2.0, allow_nan=False)
    if annotation is str:
        return texts(ids)
    return st.recursive(
        st.none() | st.booleans() | st.integers() | texts(ids),
        lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner,
                                                                    max_size=2),
        max_leaves=4,
    )  # fmt: skip


class Known(list[str]):
    """The stored ids (a list, as :func:`texts` samples them) and, by record kind, those an id
    field of that kind is given most of the time: a ``claim_id`` gets a claim's id, so writes
    that need one (correct, link, profile) get past ``record not found`` and are exercised."""

    def __init__(self, ids: list[str], by_kind: dict[str, list[str]]) -> None:
        super().__init__(ids)
        self.by_kind = by_kind


def _field_value(name: str, annotation: Any, ids: list[str], depth: int) -> st.SearchStrategy[Any]:
    anything = value_for(annotation, ids, depth)
    kind = next((k for k in ("claim", "source", "evidence") if name.endswith(f"{k}_id")), None)
    if name == "evidence_ids":
        kind = "evidence"
    if kind is None or not isinstance(ids, Known):
        return anything
    typed = st.sampled_from(ids.by_kind[kind])
    if name.endswith("_ids"):
        return st.one_of(st.lists(typed, min_size=1, max_size=3), anything)
    return st.one_of(typed, typed, typed, anything)


def model_value(model: type[BaseModel], ids: list[str], depth: int) -> st.SearchStrategy[Any]:
    fields = {
        (field.alias or name): _field_value(field.alias or name, field.annotation, ids, depth)
        for name, field in model.model_fields.items()
    }
    required = {
        (field.alias or name) for name, field in model.model_fields.items() if field.is_required()
    }
    return st.fixed_dictionaries(
        {key: strategy for key, strategy in fields.items() if key in required},
        optional={key: strategy for key, strategy in fields.items() if key not in required},
    )


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> Any:
    """*base* with a few leaves replaced by hostile values, keys dropped or unknown keys added."""
    if isinstance(base, dict):
        result = dict(base)
        for key in list(result):
            roll = draw(st.integers(0, 3 * len(result)))  # about one change per object
            if roll == 0:
                del result[key]
            elif roll == 1:
                result[key] = Raw(draw(st.sampled_from(HOSTILE_LITERALS)))
            elif roll == 2:
                result[key] = draw(mutated(result[key]))
        if draw(st.booleans()):
            result[draw(st.sampled_from(["zz", "extra", "\u00e9"]))] = Raw(
                draw(st.sampled_from(HOSTILE_LITERALS))
            )
        return result
    if isinstance(base, list) and base:
        index = draw(st.integers(0, len(base) - 1))
        copy = list(base)
        copy[index] = draw(mutated(copy[index]))
        return copy
    if draw(st.booleans()):
        return Raw(draw(st.sampled_from(HOSTILE_LITERALS)))
    return base


def requests_for(name: str, template: dict[str, Any]) -> st.SearchStrategy[Any]:
    model = OPERATIONS[name].request
    # Own-scope ids weigh more (so writes that need two of them get through), the other scope's
    # are there to be refused exactly like missing ones.
    own, victim = template["ids"][SCOPE[0]], template["ids"][VICTIM[0]]
    ids: list[str] = own * 4 + victim
    if len(own) >= 7 and len(victim) >= 3:  # a template of seed()'s (others give plain ids)
        by_kind = {
            "source": [own[0], own[5]] * 2 + [victim[0]],
            "evidence": [own[1], own[6]] * 2 + [victim[1]],
            "claim": [own[2]] * 4 + [victim[2]],
        }
        ids = Known(ids, by_kind)
    base = model_value(model, ids, 0).map(lambda request: {**request, **_scoped(request)})
    if name == "apply":
        base = st.builds(
            lambda request, page, cursor: {**request, "page": page, "after_commit": cursor[0],
                                           "after_event_index": cursor[1]},
            base, st.sampled_from(template["pages"]), st.sampled_from([(0, -1), (1, 0)]),
        )  # fmt: skip
    return st.one_of(base, base, base.flatmap(mutated))


def _scoped(request: dict[str, Any]) -> dict[str, Any]:
    # The fuzzed scope (mutations may still blank or break it); the victim scope is never asked
    # for: it is what is protected.
    return {"tenant_id": SCOPE[0], "person_id": SCOPE[1]}


def encode(value: Any) -> str:
    """JSON text of *value*, with :class:`Raw` fragments written as they are."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + encode(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(encode(v) for v in value) + "]"
    return json.dumps(value)


# ----------------------------------------------------------------------------------------------
# The checks
# ----------------------------------------------------------------------------------------------


class Tally:
    def __init__(self) -> None:
        self.requests = self.accepted = self.refused = 0
        self.violations: list[str] = []

    def report(self, label: str) -> None:
        print(
            f"\n[fuzz {PROFILE}] {label}: {self.requests} requests, {self.accepted} accepted,"
            f" {self.refused} refused, {len(self.violations)} violations"
        )


def leaked(answer_text: str, request_text: str, victim_ids: list[str]) -> list[str]:
    """Victim ids (and the victim's secret) in an answer that the request did not carry."""
    return [
        secret
        for secret in [*victim_ids, SECRET]
        if secret in answer_text and secret not in request_text
    ]


class Watcher:
    """Every table of a file that another process (``serve``) writes, read cheaply and exactly.

    One read connection stays open for the whole test (opening a :class:`MemoryDb` per look cost
    ~9 ms: migration check, pragmas, a WAL checkpoint on close). ``PRAGMA data_version`` changes
    whenever another connection commits to the file, so while it is unchanged the last snapshot is
    still every row of the file; otherwise every table is read again. The comparison is the same
    full one; only reads that could not find a difference are skipped.
    """

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.version: int | None = None
        self.rows: Any = None

    def snapshot(self) -> Any:
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self.version:
            self.version, self.rows = version, table_snapshot(self.conn)
        return self.rows

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def fuzz_db(template: dict[str, Any], tmp_path: Path) -> Path:
    path = tmp_path / "fuzz.db"
    path.write_bytes(template["path"].read_bytes())
    return path


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_library_answers_or_refuses_cleanly(
    name: str, template: dict[str, Any], fuzz_db: Path
) -> None:
    tally = Tally()
    victim_ids = template["ids"][VICTIM[0]]
    with MemoryDb(fuzz_db) as db:

        @settings(
            max_examples=EXAMPLES, deadline=None, database=None,
            suppress_health_check=list(HealthCheck),
        )  # fmt: skip
        @given(request=requests_for(name, template), roll=st.integers(0, 15))
        def run_one(request: Any, roll: int) -> None:
            keep = roll == 0
            text = encode(request)
            tally.requests += 1
            before = table_snapshot(db)
            try:
                # The library as a host uses it on text: the contract's parse, then the operation.
                result = run_kept_or_undone(db, name, parse_request(text, lenient=True), keep)
            except ZkrError:
                tally.refused += 1
                if table_snapshot(db) != before:
                    tally.violations.append(f"refused {name} changed the database: {text[:200]}")
                return
            except Exception as exc:
                tally.violations.append(f"{name} raised {type(exc).__name__}: {exc}: {text[:200]}")
                return
            tally.accepted += 1
            answer = json.dumps(_plain(result), ensure_ascii=False)
            for secret in leaked(answer, text, victim_ids):
                tally.violations.append(f"{name} answered the other scope's {secret}: {text[:200]}")

        run_one()
    tally.report(f"library {name}")
    assert tally.violations == []
    assert tally.requests >= EXAMPLES


class _Undo(Exception):
    def __init__(self, result: Any) -> None:
        self.result = result


def run_kept_or_undone(db: MemoryDb, name: str, payload: Any, keep: bool) -> Any:
    """Run the operation; unless *keep*, inside a transaction that is then rolled back.

    Most accepted writes are undone, so the seeded records stay for later examples (once a claim
    is corrected or a source deleted, every later correct or delete of it is refused, and the
    write paths would hardly run); one in sixteen is kept, so examples also meet the states
    earlier writes leave.
    """
    if keep:
        return db.run(name, payload)
    try:
        with db.atomic():
            raise _Undo(db.run(name, payload))
    except _Undo as undone:
        return undone.result


def _plain(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True)
    if isinstance(result, list):
        return [_plain(item) for item in result]
    return result


class Serve:
    """A real ``zkr serve`` process answering one line at a time."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "zkr_cli", "--db", str(path), "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip

    def ask(self, line: bytes) -> bytes:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()
        return self.process.stdout.readline()

    def close(self) -> tuple[int, bytes, bytes]:
        out, err = self.process.communicate(timeout=60)
        return self.process.returncode, out, err


@pytest.fixture
def serve(fuzz_db: Path) -> Iterator[Serve]:
    process = Serve(fuzz_db)
    yield process
    if process.process.poll() is None:
        process.process.kill()


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_serve_answers_every_line_with_one_json_line(
    name: str, template: dict[str, Any], fuzz_db: Path, serve: Serve
) -> None:
    tally = Tally()
    victim_ids = template["ids"][VICTIM[0]]
    watcher = Watcher(fuzz_db)

    @settings(
        max_examples=EXAMPLES, deadline=None, database=None,
        suppress_health_check=list(HealthCheck),
    )  # fmt: skip
    @given(
        request=requests_for(name, template),
        envelope_id=st.one_of(st.none(), st.integers(), st.sampled_from(["1e999", '"\\ud800"'])),
        garbage=st.sampled_from([None, b"{", b"[1]", b'{"command":1}', b"\xff\xfe", b"nan"]),
    )
    def run_one(request: Any, envelope_id: Any, garbage: bytes | None) -> None:
        text = encode(request)
        id_part = "" if envelope_id is None else f'"id":{envelope_id},'
        line = ("{" + id_part + f'"command":{json.dumps(name)},"request":' + text + "}").encode()
        for sent in [garbage, line] if garbage else [line]:
            tally.requests += 1
            before = watcher.snapshot()
            answer_line = serve.ask(sent)
            if not answer_line.endswith(b"\n"):
                tally.violations.append(f"no answer line (process died?) for {sent[:200]!r}")
                raise AssertionError(tally.violations[-1])
            try:
                answer = json.loads(answer_line, parse_constant=_not_json)
            except ValueError as exc:
                tally.violations.append(f"answer is not JSON ({exc}): {answer_line[:200]!r}")
                continue
            refused = isinstance(answer, dict) and "error" in answer
            if refused:
                tally.refused += 1
                if watcher.snapshot() != before:
                    tally.violations.append(f"refused line changed the database: {sent[:200]!r}")
            else:
                tally.accepted += 1
                for secret in leaked(answer_line.decode(), sent.decode("utf-8", "replace"),
                                     victim_ids):  # fmt: skip
                    tally.violations.append(f"answer holds the other scope's {secret}")

    run_one()
    watcher.close()
    code, rest, err = serve.close()
    tally.report(f"serve {name}")
    assert (code, rest) == (0, b""), (code, rest[:200])
    assert b"Traceback" not in err and err == b"", err[:500]
    assert tally.violations == []
    assert tally.requests >= EXAMPLES


def _not_json(name: str) -> Any:
    raise ValueError(f"non-JSON constant {name}")
