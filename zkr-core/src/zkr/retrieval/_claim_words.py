"""Everyday words for the predicates of personal claims: a question finds the claim it asks about.

A claim is indexed by its statement read as words (``me employer Globex Ltd``), but a person asks
in their own words: "where do I *work*?", "what *pet* do we have?". A recall query therefore also
searches the **statement column only** for the other words of a small, generic vocabulary of
personal predicates: each group below holds the words a question uses for one kind of fact and
the predicate words a claim may be stored under. The group's words match claim statements only,
never a capture's own text or its neighbours', so "work" still finds "working" in a chat turn at
the weight it always had, and the added words cannot lift a capture that has no claim.

The groups are written for everyday personal memory (work, home, family, pets, tastes, skills,
plans, advice); they are not fitted to any question set. Words are compared in lower case, with a
plural ``s`` dropped; the FTS5 index stems the statement side (Porter).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["GROUPS", "statement_words"]

GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "work job employer employed employ company workplace occupation",
        "live living home address reside resident flat apartment house",
        "partner wife husband spouse girlfriend boyfriend married",
        "child children kid daughter son",
        "mother mum mom father dad parent",
        "pet dog puppy cat kitten",
        "like love favourite favorite prefer preference enjoy",
        "hate dislike avoid",
        "know skill skilled speak",
        "learn learning study studying",
        "birthday born",
        "plan planning todo task",
        "recommend recommendation suggest suggestion advice tip",
        "manager boss supervisor",
        "car drive vehicle",
    )
)
_BY_WORD: dict[str, frozenset[str]] = {word: group for group in GROUPS for word in group}


def _normal(word: str) -> str:
    lowered = word.lower()
    if lowered not in _BY_WORD and len(lowered) > 3 and lowered.endswith("s"):
        return lowered[:-1]
    return lowered


def statement_words(terms: Iterable[str]) -> list[str]:
    """The vocabulary's other words for the query *terms*, in a stable order, without the terms
    themselves (they are searched anyway)."""
    asked = {_normal(term) for term in terms}
    found: list[str] = []
    for term in terms:
        group = _BY_WORD.get(_normal(term))
        if group is not None:
            found.extend(word for word in sorted(group) if word not in asked and word not in found)
    return found
