"""``zkr_suggest``: the installed extractors' proposed claims for recent turns, stored nowhere.

Extractors (``zkr_register_extractors`` plugins; zkr-core ships a rule-based one) read the user's
side of each recent stored turn. Each suggestion names the turn's evidence and carries ready-made
``zkr_store`` arguments, so the agent keeps one with an ordinary cited call. Nothing here writes.
"""

from __future__ import annotations

import logging
from typing import Any

from zkr.db import MemoryDb
from zkr_hermes.config import Scope
from zkr_hermes.tools import TURN_KEY_PREFIX

__all__ = ["MAX_SUGGESTIONS", "suggest", "user_side"]

log = logging.getLogger("zkr_hermes")

MAX_SUGGESTIONS = 50
_USER, _ASSISTANT = "User: ", "\nAssistant: "


def user_side(turn_text: str) -> str:
    """What the user said in a stored turn: an assistant's "I like ..." is not about the user."""
    text = turn_text[len(_USER) :] if turn_text.startswith(_USER) else turn_text
    return text.split(_ASSISTANT, 1)[0]


def _extractors() -> dict[str, Any]:
    from zkr import plugins

    return plugins.get_extractors()


def suggest(db: MemoryDb, scope: Scope, turns: int) -> dict[str, Any]:
    """Proposals for the newest *turns* stored turns of *scope*, newest turn first."""
    stored = db.run(
        "captures",
        {
            "tenant_id": scope.tenant_id,
            "person_id": scope.person_id,
            "key_prefix": TURN_KEY_PREFIX,
            "limit": turns,
        },
    )
    extractors = _extractors()
    suggestions: list[dict[str, Any]] = []
    for turn in stored:
        said = user_side(turn.text)
        for name, extractor in sorted(extractors.items()):
            try:
                proposals = extractor.extract(said, valid_from=turn.captured_at, subject="user")
            except Exception as exc:  # one faulty plugin must not hide the others
                log.warning("zkr: extractor %s failed: %s", name, type(exc).__name__)
                continue
            for proposal in proposals:
                claim = proposal.claim.model_dump(mode="json")
                suggestions.append(
                    {
                        "extractor": proposal.extractor,
                        "claim": claim,
                        "evidence_id": turn.evidence_id,
                        "source_id": turn.source_id,
                        "evidence_text": proposal.evidence_text,
                        # zkr_store's arguments (the remember request without the scope).
                        "store_args": {
                            "text": proposal.evidence_text,
                            "claim": {
                                "subject": claim["subject"],
                                "predicate": claim["predicate"],
                                "value": claim["value"],
                                "kind": claim["kind"],
                                "valid_from": claim["valid_from"],
                            },
                        },
                    }
                )
                if len(suggestions) >= MAX_SUGGESTIONS:
                    return _result(suggestions, len(stored), sorted(extractors))
    return _result(suggestions, len(stored), sorted(extractors))


def _result(suggestions: list[dict[str, Any]], turns: int, extractors: list[str]) -> dict[str, Any]:
    return {
        "suggestions": suggestions,
        "turns_read": turns,
        "extractors": extractors,
        "stored": False,
        "note": "Nothing was stored. Keep a suggestion by calling zkr_store with its store_args.",
    }
