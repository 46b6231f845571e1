"""``zkr_suggest``: the installed extractors' proposed claims for recent turns, stored nowhere.

Each suggestion names the evidence (the stored turn) it comes from, so the agent can keep it with
an ordinary cited ``zkr_store`` or ``zkr_correct`` call. Nothing here writes to the database.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Any

from zkr.db import MemoryDb
from zkr_hermes import lookups
from zkr_hermes.config import Scope

__all__ = ["suggest"]

log = logging.getLogger("zkr_hermes")

MAX_SUGGESTIONS = 50
_CLAIM_FIELDS = ("subject", "predicate", "value", "kind", "valid_from")


def _extractors() -> list[tuple[str, Any]]:
    from zkr import plugins

    found = plugins.get_extractors()
    items = found.items() if isinstance(found, dict) else ((None, e) for e in found)
    return [(str(key or _ident(ext)), ext) for key, ext in items]


def _ident(extractor: Any) -> str:
    for attr in ("id", "name"):
        value = getattr(extractor, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(extractor).__name__


def _as_dict(proposal: Any) -> dict[str, Any]:
    if isinstance(proposal, dict):
        return dict(proposal)
    dump = getattr(proposal, "model_dump", None)
    if callable(dump):
        data = dump(mode="json")
        return data if isinstance(data, dict) else {}
    if dataclasses.is_dataclass(proposal) and not isinstance(proposal, type):
        return dataclasses.asdict(proposal)
    return {}


def _plain(value: Any) -> Any:
    return getattr(value, "value", value)


def _propose(extractor: Any, text: str, captured_at: int) -> Iterable[Any]:
    extract = getattr(extractor, "extract", None)
    if not callable(extract):
        return ()
    try:
        return list(extract(text, captured_at=captured_at))
    except TypeError:
        return list(extract(text))


def suggest(db: MemoryDb, scope: Scope, turns: int) -> dict[str, Any]:
    """Proposals for the newest *turns* stored turns of *scope*, newest first."""
    stored = lookups.recent_turns(db, scope, turns)
    suggestions: list[dict[str, Any]] = []
    for extractor_id, extractor in _extractors():
        for turn in stored:
            try:
                proposals = _propose(extractor, turn.text, turn.captured_at)
            except Exception as exc:  # one faulty plugin must not hide the others
                log.warning("zkr: extractor %s failed: %s", extractor_id, type(exc).__name__)
                break
            for proposal in proposals:
                data = _as_dict(proposal)
                claim_data = data.get("claim") if isinstance(data.get("claim"), dict) else data
                claim = {k: _plain(claim_data[k]) for k in _CLAIM_FIELDS if k in claim_data}
                if not claim.get("value"):
                    continue
                claim.setdefault("valid_from", turn.captured_at)
                suggestion = {
                    "extractor": extractor_id,
                    "claim": claim,
                    "evidence_id": turn.evidence_id,
                    "source_id": turn.source_id,
                    "quote": _plain(data.get("quote")) or turn.text,
                }
                suggestions.append(suggestion)
                if len(suggestions) >= MAX_SUGGESTIONS:
                    return _result(suggestions, len(stored))
    return _result(suggestions, len(stored))


def _result(suggestions: list[dict[str, Any]], turns: int) -> dict[str, Any]:
    return {
        "suggestions": suggestions,
        "turns_read": turns,
        "stored": False,
        "note": "Nothing was stored. Keep a suggestion with zkr_store (cite it in content) "
        "or zkr_correct.",
    }
