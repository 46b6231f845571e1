"""The feed records of a new capture, built from the values in hand (issue 27).

A mutation's feed records are snapshots of its rows after the write (contract §7.3):
:mod:`zkr.store.records` reads them back from the stored rows through the models. A new capture's
rows hold exactly what its ``remember`` request gave, the ids drawn for it and constants (revision
1, nothing deleted, an accepted open claim, a full-confidence ``supports`` link), so its records
are known before they are read: ``remember`` and the bulk writer (:mod:`zkr.writes.bulk`) build
the same JSON bytes here without reading four rows back and building four models (at 100,000
memories through ``serve``, about a tenth of a ``remember``'s CPU).
"""

from __future__ import annotations

import json

from zkr import models as m
from zkr.errors import LimitExceeded
from zkr.store.commits import MAX_EXPORT_RECORD_BYTES

__all__ = ["FULL_CONFIDENCE", "capture_payloads"]

#: The confidence of the link between a claim and the evidence it was created with.
FULL_CONFIDENCE = 10_000

# The records as templates filled with JSON-encoded values: ``_text`` and ``int.__repr__`` are
# what ``json.dumps(..., ensure_ascii=False)`` writes for a str and an int, so the bytes are
# ordered_dumps' (tests/core/test_capture_feed.py compares them with the stored rows' snapshots).
# The capture's text, most of every record, is encoded once for the source and the evidence.
_text = json.encoder.encode_basestring
_SOURCE_RECORD = (
    '{{"kind":"source","record":{{"source":{{"id":{id},"tenant_id":{tenant},'
    '"person_id":{person},"revision":1,"kind":{kind},"content":{text},"captured_at":{captured},'
    '"recorded_at":{recorded},"deleted_at":null}},"ingestion_key":{key},'
    '"origin_evidence_id":{evidence},"origin_claim_id":{claim}}}}}'
)
_EVIDENCE_RECORD = (
    '{{"kind":"evidence","record":{{"evidence":{{"id":{evidence},"tenant_id":{tenant},'
    '"person_id":{person},"source_id":{id},"source_revision":1,"quote":{text},'
    '"byte_range":null,"recorded_at":{recorded}}},"locator":{locator},"deleted_at":null}}}}'
)
_LOCATOR = (
    '{{"device_id":{device},"provider":{provider},"stream_id":{stream},"segment_id":{segment},'
    '"start_ms":{start},"end_ms":{end}}}'
)
_CLAIM_RECORD = (
    '{{"kind":"claim","record":{{"id":{claim},"tenant_id":{tenant},"person_id":{person},'
    '"subject":{subject},"predicate":{predicate},"value":{value},"kind":{claim_kind},'
    '"valid_time":{{"from":{valid_from},"until":null}},'
    '"recorded_time":{{"from":{recorded},"until":null}},"status":"accepted"}}}}'
)
_LINK_RECORD = (
    '{{"kind":"claim_evidence","record":{{"tenant_id":{tenant},"person_id":{person},'
    '"claim_id":{claim},"evidence_id":{evidence},"relation":"supports",'
    '"confidence_basis_points":' + str(FULL_CONFIDENCE) + "}}}}"
)


def _nullable(value: str | None) -> str:
    return "null" if value is None else _text(value)


def _checked(payload: str) -> str:
    """*payload*, refused as remember refuses a record over its limit."""
    # Cheap first: a str of n characters is at most 4n bytes of UTF-8.
    if len(payload) * 4 > MAX_EXPORT_RECORD_BYTES and (
        len(payload.encode("utf-8")) > MAX_EXPORT_RECORD_BYTES
    ):
        raise LimitExceeded(f"export record exceeds {MAX_EXPORT_RECORD_BYTES} bytes")
    return payload


def capture_payloads(
    request: m.RememberRequest, source_id: str, evidence_id: str, claim_id: str | None
) -> tuple[str, ...]:
    """The feed records of a new capture, in remember's order (source, evidence, claim, link).

    :raises LimitExceeded: a record over 1 MiB.
    """
    loc = request.locator
    values = {
        "id": _text(source_id),
        "evidence": _text(evidence_id),
        "claim": _nullable(claim_id),
        "tenant": _text(request.tenant_id),
        "person": _text(request.person_id),
        "kind": _text(request.kind.value),
        "text": _text(request.text),
        "captured": int.__repr__(request.captured_at),
        "recorded": int.__repr__(request.recorded_at),
        "key": _nullable(request.ingestion_key),
        "locator": "null"
        if loc is None
        else _LOCATOR.format(
            device=_text(loc.device_id),
            provider=_text(loc.provider),
            stream=_text(loc.stream_id),
            segment=_text(loc.segment_id),
            start=int.__repr__(loc.start_ms),
            end=int.__repr__(loc.end_ms),
        ),
    }
    payloads = [
        _checked(_SOURCE_RECORD.format_map(values)),
        _checked(_EVIDENCE_RECORD.format_map(values)),
    ]
    claim = request.claim
    if claim is not None:
        values.update(
            subject=_text(claim.subject),
            predicate=_text(claim.predicate),
            value=_text(claim.value),
            claim_kind=_text(claim.kind.value),
            valid_from=int.__repr__(claim.valid_from),
        )
        payloads.append(_checked(_CLAIM_RECORD.format_map(values)))
        payloads.append(_checked(_LINK_RECORD.format_map(values)))
    return tuple(payloads)
