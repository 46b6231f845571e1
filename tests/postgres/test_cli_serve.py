"""The ``zkr-postgres`` command: sync, rebuild and serve as processes, against a real server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.postgres.hash_embedder import HashEmbedder
from zkr import models as m
from zkr.db import MemoryDb
from zkr_postgres._db import connect
from zkr_postgres.api import Replica
from zkr_postgres.rebuild import rebuild
from zkr_postgres.schema import lane_table

SCOPE = {"tenant_id": "acme", "person_id": "sam"}


def _cli(
    *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zkr_postgres", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "laptop.db"
    db = MemoryDb(path)
    db.remember(
        m.RememberRequest(
            **SCOPE,
            kind=m.SourceKind.conversation,
            text="Sam is learning the violin with a teacher in Lisbon",
            captured_at=10,
            recorded_at=10,
            claim=m.ClaimInput(
                subject="Sam", predicate="learns", value="violin", kind="skill", valid_from=10
            ),
        )
    )
    db.remember(
        m.RememberRequest(
            **SCOPE,
            kind="conversation",
            text="Sam's sister runs marathons",
            captured_at=11,
            recorded_at=11,
        )
    )
    db.remember(
        m.RememberRequest(
            tenant_id="acme",
            person_id="max",
            kind="conversation",
            text="Max plays the violin too",
            captured_at=12,
            recorded_at=12,
        )
    )
    db.close()
    return path


def test_sync_then_serve_answers_json_lines(source: Path, pg: str) -> None:
    synced = _cli("sync", "--dsn", pg, "--db", f"laptop={source}")
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout) == {
        "commits": 3,
        "dropped_events": 0,
        "erasures": 0,
        "events": 8,
        "pages": 2,
        "refused_scopes": 0,
        "scopes": 2,
    }
    again = _cli("sync", "--dsn", pg, "--db", f"laptop={source}")
    assert json.loads(again.stdout)["commits"] == 0  # nothing new: every scope is skipped

    lines = [
        {"command": "search", "request": {**SCOPE, "query": "violins"}},
        {
            "id": 7,
            "command": "search",
            "request": {"tenant_id": "acme", "person_id": "max", "query": "marathon"},
        },
        {"command": "get", "request": {**SCOPE, "target": {"kind": "claim", "id": "nope"}}},
        {"command": "search", "request": {**SCOPE, "query": "   "}},
        {"command": "search", "request": {**SCOPE}},
        {"command": "remember", "request": {**SCOPE}},
        {"id": "x", "command": "search", "request": {"person_id": "sam", "query": "violin"}},
    ]
    served = _cli(
        "serve", "--dsn", pg, stdin="\n".join(json.dumps(line) for line in lines) + "\n\nnot json\n"
    )
    assert served.returncode == 0, served.stderr
    answers: list[dict[str, Any]] = [json.loads(line) for line in served.stdout.splitlines()]
    assert len(answers) == len(lines) + 1
    violin = m.RetrievalPack.model_validate(answers[0])
    # The claim first; the capture right after it may follow through its neighbour context.
    assert violin.items[0].excerpt == "Sam learns violin"
    assert "Max" not in " ".join(i.excerpt for i in violin.items)
    # Another person's marathon is not Max's.
    assert answers[1] == {
        "id": 7,
        "result": {"query": "marathon", "items": [], "gaps": ["no cited memory matched"]},
    }
    assert answers[2] == {"error": "record not found", "code": "not_found"}
    assert answers[3] == {"error": "query must not be empty", "code": "invalid"}
    assert answers[4]["code"] == "parse_error" and "query" in answers[4]["error"]
    assert answers[5]["code"] == "invalid" and "remember" in answers[5]["error"]
    assert answers[6]["id"] == "x" and "tenant_id" in answers[6]["error"]
    assert answers[7]["code"] == "parse_error"


def test_rebuild_fills_a_lane_and_hybrid_search_uses_it(source: Path, pg: str) -> None:
    assert _cli("sync", "--dsn", pg, "--db", f"laptop={source}").returncode == 0
    with connect(pg) as conn:
        stats = rebuild(conn, HashEmbedder.model, HashEmbedder.version, embedder=HashEmbedder())
        # 3 live captures and 1 current claim; a second run has nothing left to do.
        assert stats.embedded == 4
        again = rebuild(conn, HashEmbedder.model, HashEmbedder.version, embedder=HashEmbedder())
        assert again.embedded == 0
        lane = lane_table("hash-words", "1")
        row = conn.execute(
            f"SELECT count(*), max(vector_dims(embedding)) FROM zkr.{lane}"  # type: ignore[arg-type]
        ).fetchone()
    embedding = m.QueryEmbedding(
        model="hash-words", version="1", vector=HashEmbedder().embed("sister marathons")
    )
    with Replica(pg) as replica:
        pack = replica.search(
            m.SearchRequest(**SCOPE, query="sister marathons", query_embedding=embedding)
        )
        assert pack.items[0].excerpt == "Sam's sister runs marathons"
        # A dense hit alone (no word in common) still reaches the list.
        dense_only = replica.search(
            m.SearchRequest(
                **SCOPE,
                query="zzz",
                query_embedding=m.QueryEmbedding(
                    model="hash-words", version="1", vector=HashEmbedder().embed("sister")
                ),
            )
        )
        assert dense_only.items
        with pytest.raises(Exception, match="does not match stored dimension 32"):
            replica.search(
                m.SearchRequest(
                    **SCOPE,
                    query="x",
                    query_embedding=m.QueryEmbedding(model="hash-words", version="1", vector=[1.0]),
                )
            )
    assert row == (4, 32)


def _strict(line: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"non-JSON constant {name}")

    return json.loads(line, parse_constant=refuse)


def test_serve_answers_hostile_lines_with_one_json_line_each(pg: str) -> None:
    # The eleven defect classes of issue 18, at zkr-postgres serve's door: every line gets one
    # strict-JSON answer (no Infinity, no lone surrogate, no crash), bad JSON is a parse error
    # (not "internal error"), an over-long line is refused unread, and a usable id comes back.
    search = '"command":"search","request":{"tenant_id":"acme","person_id":"sam","query":"x"}'
    long_line = '{"command":"search","request":{"query":"' + "a" * (1_048_576 + 70_000) + '"}}'
    lines = [
        '{"id":1e999,' + search + "}",
        '{"id":NaN,' + search + "}",
        '{"id":"\\ud800",' + search + "}",
        '{"id":5,"command":"search","request":{"tenant_id":"acme","person_id":"sam",'
        '"query":"\\udc00x"}}',
        '{"id":6,"command":"search","request":{"tenant_id":"acme","person_id":"sam",'
        '"query":Infinity}}',
        '{"command":"search","command":"get",' + search[len('"command":"search",') :] + "}",
        "[" * 200_000 + "]" * 200_000,
        long_line,
        '{"id":9,' + search + "}",
    ]
    served = _cli("serve", "--dsn", pg, stdin="\n".join(lines) + "\n")
    assert served.returncode == 0, served.stderr[-2000:]
    assert "Traceback" not in served.stderr
    answers = [_strict(line) for line in served.stdout.splitlines()]
    assert len(answers) == len(lines)
    assert all("error" in answer for answer in answers[:8]), answers
    # A line whose id is fine is answered with it even when its request holds Infinity (issue
    # 26, D11), as in ``zkr serve``; an id that is not JSON itself never comes back.
    assert [answer.get("id") for answer in answers] == [
        None,
        None,
        None,
        5,
        6,
        None,
        None,
        None,
        9,
    ]
    assert answers[6]["code"] == "parse_error"
    assert answers[7] == {"error": "request exceeds 1048576 bytes", "code": "limit_exceeded"}
    assert answers[8]["result"]["gaps"] == ["no cited memory matched"]


def test_serve_ranks_for_recall_by_default(tmp_path: Path, pg: str) -> None:
    # Issue 24's reproduction 1 on the replica: the claim is found by a word of its value only.
    path = tmp_path / "berlin.db"
    with MemoryDb(path) as db:
        made = db.remember(
            m.RememberRequest(
                **SCOPE,
                kind="conversation",
                text="Note for later.",
                captured_at=10,
                recorded_at=10,
                claim=m.ClaimInput(
                    subject="me", predicate="plans", value="fly to Berlin", kind="task",
                    valid_from=10,
                ),
            )
        )  # fmt: skip
    assert _cli("sync", "--dsn", pg, "--db", f"laptop={path}").returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "ZKR_RANKING"}
    line = json.dumps({"command": "search", "request": {**SCOPE, "query": "Berlin"}}) + "\n"
    served = _cli("serve", "--dsn", pg, stdin=line, env=env)
    assert served.returncode == 0, served.stderr
    pack = m.RetrievalPack.model_validate_json(served.stdout)
    assert [(i.memory.kind.value, i.memory.id) for i in pack.items] == [("claim", made.claim_id)]
    # zkr's setting is read (and checked) by the replica's request model too.
    served = _cli("serve", "--dsn", pg, stdin=line, env={**env, "ZKR_RANKING": "best"})
    assert json.loads(served.stdout) == {
        "error": 'ZKR_RANKING must be "contract" or "recall", not "best"',
        "code": "invalid_setting",
    }
