"""Bad input (contract §2.2, issue 2 acceptance 4): every refusal is exit status 1, one
``{"error": ...}`` line on stderr, nothing on stdout, and the database holds exactly what it held
before (every table, the export feed included).

A short list runs the real command in a subprocess; the long matrix runs the same ``main()``
in-process, where a process per case would only add seconds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import MAX_REQUEST_BYTES, Outcome, db_snapshot, remember_payload

SCOPE = {"tenant_id": "a", "person_id": "sam"}


def _json(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")


def _remember(**changes: Any) -> bytes:
    payload = remember_payload("Acme")
    payload.update(changes)
    return _json({k: v for k, v in payload.items() if v is not _DROP})


def _claim(**changes: Any) -> bytes:
    payload = remember_payload("Acme")
    payload["claim"] = {**payload["claim"], **changes}
    return _json(payload)


_DROP = object()

# (id, command, stdin, the exact message or None when only the envelope is contractual)
CASES: list[tuple[str, str, bytes, str | None]] = [
    ("empty stdin", "remember", b"", "EOF while parsing a value at line 1 column 0"),
    ("whitespace stdin", "search", b" \n\t ", None),
    ("invalid json", "remember", b"{", None),
    ("not json", "search", b"remember me", None),
    ("trailing data", "search", _json({**SCOPE, "query": "x"}) + b" {}", None),
    ("two objects", "remember", _remember() + _remember(), None),
    ("array", "remember", b"[]", None),
    ("string", "search", b'"query"', None),
    ("null", "get", b"null", None),
    ("invalid utf-8", "remember", b'{"text":"\xff"}', None),
    ("missing text", "remember", _remember(text=_DROP), None),
    ("missing tenant", "remember", _remember(tenant_id=_DROP), None),
    ("missing query", "search", _json(SCOPE), None),
    (
        "missing claim field",
        "remember",
        _json({**remember_payload(), "claim": {"subject": "S"}}),
        None,
    ),
    ("blank tenant", "remember", _remember(tenant_id="  "), "tenant_id must not be empty"),
    ("blank person", "remember", _remember(person_id="\u3000"), "person_id must not be empty"),
    (
        "blank tenant search",
        "search",
        _json({**SCOPE, "tenant_id": "", "query": "x"}),
        "tenant_id must not be empty",
    ),
    ("blank text", "remember", _remember(text=" \n"), "text must not be empty"),
    ("blank claim subject", "remember", _claim(subject=" "), "claim subject must not be empty"),
    ("blank query", "search", _json({**SCOPE, "query": "  "}), "query must not be empty"),
    ("tenant number", "remember", _remember(tenant_id=1), None),
    ("text list", "remember", _remember(text=["a"]), None),
    ("captured_at string", "remember", _remember(captured_at="10"), None),
    ("claim string", "remember", _remember(claim="Sam"), None),
    ("unknown source kind", "remember", _remember(kind="diary"), None),
    ("unknown claim kind", "remember", _claim(kind="opinion"), None),
    (
        "get profile target",
        "get",
        _json({**SCOPE, "target": {"kind": "profile_entry", "id": "x"}}),
        None,
    ),
    (
        "float 10.0",
        "remember",
        b'{"tenant_id":"a","person_id":"sam","kind":"conversation",'
        b'"text":"t","captured_at":10.0,"recorded_at":10}',
        None,
    ),
    (
        "float 1e3",
        "remember",
        b'{"tenant_id":"a","person_id":"sam","kind":"conversation",'
        b'"text":"t","captured_at":10,"recorded_at":1e3}',
        None,
    ),
    ("float valid_from", "remember", _claim(valid_from=10.5), None),
    (
        "float limit",
        "search",
        b'{"tenant_id":"a","person_id":"sam","query":"x","limit":10.0}',
        None,
    ),
    (
        "float start_ms",
        "remember",
        _remember(
            locator={
                "device_id": "d",
                "provider": "p",
                "stream_id": "s",
                "segment_id": "g",
                "start_ms": 1.0,
                "end_ms": 2,
            }
        ),
        None,
    ),
    ("bool captured_at", "remember", _remember(captured_at=True), None),
    ("bool limit", "search", _json({**SCOPE, "query": "x", "limit": False}), None),
    (
        "bool confidence",
        "link",
        _json(
            {
                **SCOPE,
                "claim_id": "c",
                "evidence_id": "e",
                "relation": "supports",
                "confidence_basis_points": True,
            }
        ),
        None,
    ),
    ("null limit", "search", _json({**SCOPE, "query": "x", "limit": None}), None),
    (
        "null after_commit",
        "export",
        _json({**SCOPE, "export_format": 1, "after_commit": None}),
        None,
    ),
    ("null tenant", "remember", _remember(tenant_id=None), None),
    ("null captured_at", "remember", _remember(captured_at=None), None),
    ("i64 overflow", "remember", _remember(captured_at=2**63), None),
    ("i64 underflow", "remember", _remember(recorded_at=-(2**63) - 1), None),
    ("negative limit", "search", _json({**SCOPE, "query": "x", "limit": -1}), None),
    ("u32 overflow", "search", _json({**SCOPE, "query": "x", "limit": 2**32}), None),
    (
        "u16 overflow",
        "link",
        _json(
            {
                **SCOPE,
                "claim_id": "c",
                "evidence_id": "e",
                "relation": "supports",
                "confidence_basis_points": 65536,
            }
        ),
        None,
    ),
    (
        "negative start_ms",
        "remember",
        _remember(
            locator={
                "device_id": "d",
                "provider": "p",
                "stream_id": "s",
                "segment_id": "g",
                "start_ms": -1,
                "end_ms": 2,
            }
        ),
        None,
    ),
    (
        "duplicate key",
        "remember",
        b'{"tenant_id":"a","tenant_id":"a","person_id":"sam","kind":"conversation","text":"t",'
        b'"captured_at":1,"recorded_at":1}',
        None,
    ),
    ("duplicate nested key", "remember", _remember()[:-1] + b',"claim":null}', None),
    (
        "lone surrogate",
        "remember",
        _remember()[:-1].replace(b'"Sam works at Acme"', b'"Sam \\ud800 at Acme"') + b"}",
        None,
    ),
    (
        "lone trailing surrogate",
        "search",
        b'{"tenant_id":"a","person_id":"sam","query":"\\udc00"}',
        None,
    ),
    ("NaN", "remember", _remember()[:-1] + b',"captured_at":NaN}', None),
    (
        "NaN only",
        "remember",
        _remember().replace(b'"captured_at": 10', b'"captured_at": NaN'),
        None,
    ),
    (
        "Infinity vector",
        "search",
        b'{"tenant_id":"a","person_id":"sam","query":"x",'
        b'"query_embedding":{"model":"m","version":"v","vector":[Infinity]}}',
        None,
    ),
    (
        "profile unknown field",
        "profile",
        _json({**SCOPE, "stability": "stable", "claim_id": "c", "recorded_at": 10, "key": "k"}),
        None,
    ),
    (
        "remember locator end before start",
        "remember",
        _remember(
            locator={
                "device_id": "d",
                "provider": "p",
                "stream_id": "s",
                "segment_id": "g",
                "start_ms": 5,
                "end_ms": 2,
            }
        ),
        "locator end_ms must not precede start_ms",
    ),
    ("oversized", "remember", b" " * (MAX_REQUEST_BYTES + 1), "request exceeds 1048576 bytes"),
    (
        "correct missing claim",
        "correct",
        _json(
            {
                **SCOPE,
                "claim_id": "0" * 32,
                "text": "t",
                "value": "v",
                "valid_at": 20,
                "recorded_at": 20,
            }
        ),
        "record not found",
    ),
    (
        "delete missing source",
        "delete",
        _json({**SCOPE, "source_id": "0" * 32, "deleted_at": 20}),
        "record not found",
    ),
    (
        "get missing",
        "get",
        _json({**SCOPE, "target": {"kind": "claim", "id": "0" * 32}}),
        "record not found",
    ),
]


@pytest.fixture
def populated(zkr_inprocess: Callable[..., Outcome], db_path: Path) -> Path:
    """A database holding one claim memory (so the feed is not empty)."""
    zkr_inprocess("--db", str(db_path), "remember", stdin=remember_payload("Acme")).ok()
    return db_path


@pytest.mark.parametrize(
    ("command", "stdin", "message"),
    [pytest.param(c, s, m, id=i) for i, c, s, m in CASES],
)
def test_bad_input_is_refused_and_changes_nothing(
    zkr_inprocess: Callable[..., Outcome],
    populated: Path,
    command: str,
    stdin: bytes,
    message: str | None,
) -> None:
    before = db_snapshot(populated)
    error = zkr_inprocess("--db", str(populated), command, stdin=stdin).error
    assert error
    if message is not None:
        assert error == message
    assert db_snapshot(populated) == before


def test_specific_parse_messages(zkr_inprocess: Callable[..., Outcome], db_path: Path) -> None:
    def err(command: str, stdin: bytes) -> str:
        return zkr_inprocess("--db", str(db_path), command, stdin=stdin).error

    assert "`text`" in err("remember", _remember(text=_DROP))
    assert "missing field" in err("remember", _remember(text=_DROP))
    assert "duplicate field `tenant_id`" in err(
        "search", b'{"tenant_id":"a","tenant_id":"b","person_id":"p","query":"q"}'
    )
    assert "unknown field `key`" in err(
        "profile",
        _json({**SCOPE, "stability": "stable", "claim_id": "c", "recorded_at": 1, "key": "k"}),
    )


@pytest.mark.parametrize(
    ("command", "stdin", "message"),
    [
        pytest.param("remember", b"{", None, id="invalid json"),
        pytest.param("remember", b"", "EOF while parsing a value at line 1 column 0", id="empty"),
        pytest.param("remember", _remember(captured_at="10"), None, id="wrong type"),
        pytest.param("remember", _remember(captured_at=10.0), None, id="float 10.0"),
        pytest.param(
            "search",
            b'{"tenant_id":"a","person_id":"sam","query":"x","limit":1e3}',
            None,
            id="float 1e3",
        ),
        pytest.param("remember", _remember(text=_DROP), None, id="missing field"),
        pytest.param(
            "remember", _remember(tenant_id=" "), "tenant_id must not be empty", id="blank tenant"
        ),
        pytest.param(
            "remember",
            b"{" + b" " * MAX_REQUEST_BYTES + b"}",
            "request exceeds 1048576 bytes",
            id="1048578 bytes",
        ),
        pytest.param("teleport", _remember(), 'unknown command "teleport"', id="unknown command"),
    ],
)
def test_bad_input_through_the_real_command(
    zkr: Callable[..., Outcome],
    db_path: Path,
    command: str,
    stdin: bytes,
    message: str | None,
) -> None:
    zkr("remember", remember_payload("Acme")).ok()
    before = db_snapshot(db_path)
    error = zkr(command, stdin).error
    if message is not None:
        assert error == message
    assert db_snapshot(db_path) == before


def _padded(request: dict[str, Any], size: int) -> bytes:
    body = _json(request)
    return body + b" " * (size - len(body))


def test_exactly_1048576_bytes_is_accepted_and_1048577_refused(
    zkr: Callable[..., Outcome], db_path: Path
) -> None:
    stored = zkr("remember", remember_payload("Acme")).json
    request = {**SCOPE, "query": "Acme"}
    accepted = zkr("search", _padded(request, MAX_REQUEST_BYTES))
    assert accepted.json["items"][0]["evidence_ids"] == [stored["evidence_id"]]

    before = db_snapshot(db_path)
    assert zkr("search", _padded(request, MAX_REQUEST_BYTES + 1)).error == (
        "request exceeds 1048576 bytes"
    )
    # a mutation of 1,048,577 bytes is refused before parsing and stores nothing
    remember = _padded(remember_payload("Beta"), MAX_REQUEST_BYTES + 1)
    assert zkr("remember", remember).error == "request exceeds 1048576 bytes"
    assert db_snapshot(db_path) == before


def test_unknown_fields_are_ignored_except_in_profile(
    zkr_inprocess: Callable[..., Outcome], db_path: Path
) -> None:
    def run(command: str, request: Any) -> Outcome:
        return zkr_inprocess("--db", str(db_path), command, stdin=request)

    payload = remember_payload("Acme")
    payload["mood"] = "happy"
    payload["claim"]["confidence"] = 3
    stored = run("remember", payload).json
    assert run("search", {**SCOPE, "query": "Acme", "extra": [1, 2]}).json["items"]
    assert (
        run("get", {**SCOPE, "target": {"kind": "claim", "id": stored["claim_id"], "x": 1}}).json[
            "excerpt"
        ]
        == "Sam employer Acme"
    )
    profile = {**SCOPE, "stability": "stable", "claim_id": stored["claim_id"], "recorded_at": 10}
    before = db_snapshot(db_path)
    assert "unknown field `value`" in run("profile", {**profile, "value": "Beta"}).error
    assert db_snapshot(db_path) == before


def test_optional_fields_accept_null(zkr_inprocess: Callable[..., Outcome], db_path: Path) -> None:
    payload = remember_payload("Acme", ingestion_key=None, claim=None, locator=None)
    stored = zkr_inprocess("--db", str(db_path), "remember", stdin=payload).json
    assert stored["claim_id"] is None
    pack = zkr_inprocess(
        "--db",
        str(db_path),
        "search",
        stdin={**SCOPE, "query": "Acme", "as_of": None, "query_embedding": None},
    ).ok()
    assert pack["items"][0]["memory"]["kind"] == "source"
