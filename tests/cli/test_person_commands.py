"""``memories``, ``history`` and ``forget`` through the real CLI, and ``--format text`` (issue 14).

JSON stays the default (the contract's envelope, checked by ``Outcome.json``); ``--format text``
renders packs, listings and histories for a person, every item with the evidence ids it cites.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.conftest import Outcome, remember_payload

SCOPE = {"tenant_id": "a", "person_id": "sam"}


def test_the_person_operations_answer_json_by_default(zkr: Callable[..., Outcome]) -> None:
    stored = zkr("remember", remember_payload("Acme")).json
    corrected = zkr(
        "correct",
        {
            **SCOPE,
            "claim_id": stored["claim_id"],
            "text": "now Beta",
            "value": "Beta",
            "valid_at": 20,
            "recorded_at": 20,
        },
    ).json
    page = zkr("memories", {**SCOPE, "claim_kinds": ["fact"]}).json
    assert [item["claim"]["value"] for item in page["items"]] == ["Beta"]
    assert page["next_cursor"] is None
    chain = zkr("history", {**SCOPE, "claim_id": stored["claim_id"]}).json
    assert [v["claim"]["value"] for v in chain["versions"]] == ["Acme", "Beta"]
    assert chain["current_claim_id"] == corrected["claim_id"]
    forgot = zkr("forget", {**SCOPE, "source_id": stored["source_id"], "erased_at": 30}).json
    assert forgot["claim_ids"] == [stored["claim_id"]]
    assert zkr("history", {**SCOPE, "claim_id": "f" * 32}).error == "record not found"
    assert zkr("memories", {**SCOPE, "cursor": "nope"}).error == "cursor is not a memories cursor"


def _text(run: Callable[..., Outcome], db_path: Path, command: str, request: Any) -> list[str]:
    outcome = run("--db", str(db_path), command, "--format", "text", stdin=request)
    assert outcome.returncode == 0 and outcome.stderr == b"", outcome
    return outcome.stdout.decode("utf-8").splitlines()


def test_text_format_shows_statements_times_and_citations(
    zkr: Callable[..., Outcome], run: Callable[..., Outcome], db_path: Path
) -> None:
    at = 1_767_225_600  # 2026-01-01 00:00:00 UTC
    stored = zkr(
        "remember",
        remember_payload(
            "Acme",
            captured_at=at,
            recorded_at=at,
            claim={
                "subject": "Sam",
                "predicate": "employer",
                "value": "Acme",
                "kind": "fact",
                "valid_from": at,
            },
        ),
    ).json
    corrected = zkr(
        "correct",
        {
            **SCOPE,
            "claim_id": stored["claim_id"],
            "text": "Sam moved to Beta",
            "value": "Beta",
            "valid_at": at + 86_400,
            "recorded_at": at + 86_400,
        },
    ).json

    pack = _text(run, db_path, "search", {**SCOPE, "query": "Beta"})
    assert pack[0] == 'search "Beta": 1 item(s)'
    assert pack[1] == f' 1. [claim {corrected["claim_id"]}] "Sam employer Beta"'
    # Relevance reads as a bar and words, not as basis points (issue 24).
    assert pack[2] == f"    relevance ██████████ best match · cites {corrected['evidence_id']}"

    listing = _text(run, db_path, "memories", {**SCOPE, "claim_kinds": ["fact"]})
    assert listing == [
        "2026-01-02 00:00:00 UTC  fact claim  Sam · employer · Beta",
        f"    valid 2026-01-02 00:00:00 UTC -> open · accepted · id {corrected['claim_id']}",
        f"    cites {corrected['evidence_id']}",
    ]

    chain = _text(run, db_path, "history", {**SCOPE, "claim_id": corrected["claim_id"]})
    assert chain[0] == f"claim {corrected['claim_id']}: 2 version(s), current v2"
    assert "v1  Sam · employer · Acme  [superseded] fact" in chain
    assert "    valid    2026-01-01 00:00:00 UTC -> 2026-01-02 00:00:00 UTC" in chain
    assert (
        f'    supports 100% evidence {stored["evidence_id"]} (conversation) "Sam works at Acme"'
        in chain
    )
    assert chain[-1] == (
        f"    2026-01-02 00:00:00 UTC  corrected v1 evidence {corrected['evidence_id']}"
    )

    forgot = _text(
        run,
        db_path,
        "forget",
        {**SCOPE, "source_id": stored["source_id"], "erased_at": at + 2 * 86_400},
    )
    assert forgot[0] == f"forgot source {stored['source_id']} at 2026-01-03 00:00:00 UTC"
    after = _text(run, db_path, "history", {**SCOPE, "claim_id": stored["claim_id"]})
    assert "v1  (statement erased)  [superseded] fact" in after
    assert "    statement erased 2026-01-03 00:00:00 UTC" in after


def test_text_errors_and_bad_formats(
    run: Callable[..., Outcome], db_path: Path, zkr: Callable[..., Outcome]
) -> None:
    outcome = run(
        "--db", str(db_path), "history", "--format=text", stdin={**SCOPE, "claim_id": "x"}
    )
    assert (outcome.returncode, outcome.stdout, outcome.stderr) == (
        1,
        b"",
        b"zkr: error: record not found\n",
    )
    bad = run("--db", str(db_path), "search", "--format", "xml", stdin={**SCOPE, "query": "x"})
    assert bad.error == "--format takes one of: json, text"
    missing = run("--db", str(db_path), "search", "--format", stdin={**SCOPE, "query": "x"})
    assert missing.error == "--format takes one of: json, text"
    # An answer without its own text form is shown as indented JSON.
    profiles = run("--db", str(db_path), "profiles", "--format", "text", stdin=SCOPE)
    assert profiles.returncode == 0 and profiles.stdout == b"[]\n"


def test_serve_answers_the_person_operations(
    run: Callable[..., Outcome], zkr: Callable[..., Outcome], db_path: Path
) -> None:
    stored = zkr("remember", remember_payload("Acme")).json
    lines = [
        {"command": "memories", "request": {**SCOPE, "limit": 1}},
        {"command": "history", "request": {**SCOPE, "claim_id": stored["claim_id"]}},
        {
            "command": "forget",
            "request": {**SCOPE, "source_id": stored["source_id"], "erased_at": 11},
        },
        {
            "command": "history",
            "request": {"tenant_id": "b", "person_id": "sam", "claim_id": stored["claim_id"]},
        },
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    outcome = run("--db", str(db_path), "serve", stdin=stdin)
    answers = [json.loads(line) for line in outcome.stdout.splitlines()]
    assert len(answers[0]["items"]) == 1 and answers[0]["next_cursor"] is not None
    assert answers[1]["versions"][0]["claim"]["value"] == "Acme"
    assert answers[2]["evidence_ids"] == [stored["evidence_id"]]
    assert answers[3] == {"error": "record not found", "code": "not_found"}


def test_text_relevance_is_a_bar_and_words_not_basis_points() -> None:
    from zkr_cli._text import render_text

    item = {"memory": {"kind": "claim", "id": "c1"}, "excerpt": "Sam employer Beta"}
    pack = {
        "query": "Beta",
        "items": [
            {**item, "relevance_basis_points": 10_000, "evidence_ids": ["e1"]},
            {**item, "relevance_basis_points": 9_166, "evidence_ids": ["e2"]},
            {**item, "relevance_basis_points": 0, "evidence_ids": []},
        ],
        "gaps": [],
    }
    lines = render_text("search", pack).splitlines()
    assert lines[2] == "    relevance ██████████ best match · cites e1"
    assert lines[4] == (
        "    relevance █████████░ close to the best match (91 % of its score) · cites e2"
    )
    assert lines[6] == (
        "    relevance ░░░░░░░░░░ far behind the best match (0 % of its score) · cites nothing"
    )
    assert "9166" not in "\n".join(lines) and "91.66" not in "\n".join(lines)


def test_text_get_shows_the_item_without_a_relevance() -> None:
    from zkr_cli._text import render_text

    item = {
        "memory": {"kind": "source", "id": "s1"},
        "excerpt": "Sam works at Acme",
        "relevance_basis_points": 10_000,
        "evidence_ids": ["e1"],
    }
    assert render_text("get", item) == ' 1. [source s1] "Sam works at Acme"\n    cites e1\n'
