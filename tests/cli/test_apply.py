"""``zkr apply`` through the real command: pages printed by ``zkr export`` rebuild the scope.

The source is filled through ``serve`` (one process), then every step of the replication is its own
``zkr --db ... export`` / ``zkr --db ... apply`` process, exactly as a shell pipeline would run it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Outcome, db_snapshot, remember_payload

SCOPE = {"tenant_id": "a", "person_id": "sam"}
Run = Callable[..., Outcome]


def _line(command: str, request: Any) -> bytes:
    return json.dumps({"command": command, "request": request}).encode() + b"\n"


def _serve(run: Run, db: Path, lines: list[bytes]) -> list[Any]:
    outcome = run("--db", str(db), "serve", stdin=b"".join(lines))
    assert outcome.returncode == 0 and outcome.stderr == b"", outcome.stderr
    answers = [json.loads(line) for line in outcome.stdout.splitlines()]
    assert len(answers) == len(lines)
    return answers


@pytest.fixture
def source(run: Run, tmp_path: Path) -> Path:
    """Scope (a, sam) with remember, correct (a multi-record commit), profile and review; plus a
    memory of scope (b, sam) that must never reach the replica."""
    path = tmp_path / "source.db"
    city = remember_payload("Berlin", text="Sam lives in Berlin")
    city["claim"] = {**city["claim"], "predicate": "city", "kind": "profile_fact"}
    first, lives = _serve(
        run, path, [_line("remember", remember_payload("Acme")), _line("remember", city)]
    )
    answers = _serve(
        run,
        path,
        [
            _line(
                "remember", remember_payload("Globex", text="Sam moved to Globex", recorded_at=20)
            ),
            _line("remember", {**remember_payload("Hidden"), "tenant_id": "b"}),
            _line(
                "correct",
                {
                    **SCOPE,
                    "claim_id": first["claim_id"],
                    "text": "Actually Sam works at Initech",
                    "value": "Initech",
                    "valid_at": 30,
                    "recorded_at": 30,
                },
            ),
            _line(
                "profile",
                {**SCOPE, "stability": "stable", "claim_id": lives["claim_id"], "recorded_at": 35},
            ),
            _line(
                "review",
                {
                    **SCOPE,
                    "day": "2024-01-01",
                    "summary": "jobs",
                    "evidence_ids": [first["evidence_id"]],
                    "recorded_at": 40,
                },
            ),
        ],
    )
    assert all("error" not in answer for answer in answers), answers
    return path


def _export(run: Run, db: Path, after: tuple[int, int], mark: int | None, limit: int) -> Any:
    request = {
        **SCOPE,
        "export_format": 1,
        "after_commit": after[0],
        "after_event_index": after[1],
        "limit": limit,
    }
    if mark is not None:
        request["high_water_mark"] = mark
    return run("--db", str(db), "export", stdin=request).json


def _pages(run: Run, db: Path, limit: int) -> list[tuple[tuple[int, int], Any]]:
    """Every page of the scope's feed with the cursor it was exported with (mark frozen)."""
    pages: list[tuple[tuple[int, int], Any]] = []
    after, mark = (0, -1), None
    while True:
        page = _export(run, db, after, mark, limit)
        pages.append((after, page))
        mark = page["high_water_mark"]
        after = (page["next_after_commit"], page["next_after_event_index"])
        if page["complete"]:
            return pages


def _apply_request(after: tuple[int, int], page: Any) -> dict[str, Any]:
    return {**SCOPE, "after_commit": after[0], "after_event_index": after[1], "page": page}


def _without_sequences(page: Any) -> Any:
    return [
        (c["recorded_at"], c["event_count"], c["first_event_index"], c["records"])
        for c in page["commits"]
    ]


def _answers_of(run: Run, db: Path) -> list[Any]:
    """What a reader sees: current and historical search, plus profiles and reviews.

    The contract ranking, whose answer depends on the scope's rows alone: the recall ranking's
    relevance is a share of bm25 scores, whose statistics count every scope of the file, and the
    replica holds one scope of the source's two.
    """
    contract = {**SCOPE, "query": "Sam", "ranking": "contract"}
    return _serve(
        run,
        db,
        [
            _line("search", contract),
            _line("search", {**contract, "as_of": {"valid_at": 25, "recorded_at": 25}}),
            _line("profiles", SCOPE),
            _line("reviews", SCOPE),
            _line("search", {**contract, "tenant_id": "b"}),
        ],
    )


@pytest.mark.slow
def test_exported_pages_applied_by_the_command_rebuild_the_scope(
    run: Run, source: Path, tmp_path: Path
) -> None:
    replica = tmp_path / "replica.db"
    pages = _pages(run, source, limit=2)
    # Some page ends inside a commit, so apply has to stage and finish it from the next page.
    assert any(
        commit["first_event_index"] + len(commit["records"]) < commit["event_count"]
        for _, page in pages
        for commit in page["commits"]
    )
    for after, page in pages:
        result = run("--db", str(replica), "apply", stdin=_apply_request(after, page)).json
        assert result["next_after_commit"] == page["next_after_commit"]
        assert result["next_after_event_index"] == page["next_after_event_index"]
    assert result["pending_events"] == 0
    assert result["applied_commit"] == pages[-1][1]["next_after_commit"]

    everything = {**SCOPE, "export_format": 1, "limit": 100}
    # The same feed, numbered locally (issue 18: an upstream's numbers never steer the replica's).
    assert _without_sequences(run("--db", str(replica), "export", stdin=everything).json) == (
        _without_sequences(run("--db", str(source), "export", stdin=everything).json)
    )
    replicated, original = _answers_of(run, replica), _answers_of(run, source)
    assert replicated[:4] == original[:4]
    assert original[4]["items"] and not replicated[4]["items"]  # scope b stayed behind
    assert replicated[0]["items"] and replicated[1]["items"] != replicated[0]["items"]

    # A replayed page is accepted and changes nothing.
    before = db_snapshot(replica)
    for after, page in pages[:2]:
        again = run("--db", str(replica), "apply", stdin=_apply_request(after, page)).json
        assert (again["applied_commits"], again["received_events"]) == (0, 0)
    assert db_snapshot(replica) == before


@pytest.mark.slow
def test_a_page_that_skips_events_is_refused_and_applies_nothing(
    run: Run, source: Path, tmp_path: Path
) -> None:
    replica = tmp_path / "replica.db"
    pages = _pages(run, source, limit=1)
    run("--db", str(replica), "apply", stdin=_apply_request(*pages[0])).ok()
    before = db_snapshot(replica)

    # The third page, while the replica holds only the first: a gap between cursor and page.
    skipped = run("--db", str(replica), "apply", stdin=_apply_request(*pages[2]))
    assert skipped.error.startswith("export page does not continue the applied feed")
    assert db_snapshot(replica) == before

    # The third page presented as if it followed the first: a gap inside the page.
    after, _ = pages[1]
    lying = run("--db", str(replica), "apply", stdin=_apply_request(after, pages[2][1]))
    assert lying.error.startswith("export page skips events")
    assert db_snapshot(replica) == before

    # The replica still resumes where it was.
    resume = run("--db", str(replica), "apply", stdin=SCOPE).json
    assert (resume["next_after_commit"], resume["next_after_event_index"]) == pages[1][0]


@pytest.mark.slow
def test_apply_round_trip_through_serve(run: Run, source: Path, tmp_path: Path) -> None:
    replica = tmp_path / "replica.db"
    pages = _pages(run, source, limit=3)
    answers = _serve(
        run,
        replica,
        [_line("apply", _apply_request(after, page)) for after, page in pages]
        + [_line("apply", _apply_request(*pages[0])), _line("apply", SCOPE)],
    )
    *applied, replay, cursor = answers
    assert all("error" not in answer for answer in applied), applied
    assert sum(answer["applied_commits"] for answer in applied) == len(
        {commit["sequence"] for _, page in pages for commit in page["commits"]}
    )
    assert (replay["applied_commits"], replay["received_events"]) == (0, 0)
    last = pages[-1][1]
    assert (cursor["next_after_commit"], cursor["next_after_event_index"]) == (
        last["next_after_commit"],
        last["next_after_event_index"],
    )
    assert _answers_of(run, replica)[:4] == _answers_of(run, source)[:4]
