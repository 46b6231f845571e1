"""A rule-based claim extractor: explicit first-person statements only.

It recognises sentences such as "I prefer tea", "My name is Ada", "I work at Acme", "I live in
Lisbon", "I like/love hiking", and suggests one claim for each, citing the sentence. It never
guesses: anything that is not one of these patterns yields nothing. Suggestions are not stored.
"""

from __future__ import annotations

import re
from typing import ClassVar

from zkr.models import ClaimInput, ClaimKind
from zkr.plugins.extractors import ClaimExtractor, Suggestion
from zkr.plugins.hookspecs import hookimpl

__all__ = ["RuleExtractor", "zkr_register_extractors"]

# (pattern, claim kind, predicate). The value runs to the end of the sentence.
_RULES: tuple[tuple[re.Pattern[str], ClaimKind, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), kind, predicate)
    for pattern, kind, predicate in (
        (r"\bmy name is\s+(?P<value>.+)", ClaimKind.profile_fact, "name"),
        (r"\bI(?:'m| am) called\s+(?P<value>.+)", ClaimKind.profile_fact, "name"),
        (r"\bI (?:work|am working) (?:at|for)\s+(?P<value>.+)", ClaimKind.profile_fact, "employer"),
        (r"\bI live in\s+(?P<value>.+)", ClaimKind.profile_fact, "home"),
        (r"\bI(?: really)? prefer\s+(?P<value>.+)", ClaimKind.preference, "prefers"),
        (r"\bI(?: really)? love\s+(?P<value>.+)", ClaimKind.preference, "loves"),
        (r"\bI(?: really)? like\s+(?P<value>.+)", ClaimKind.preference, "likes"),
    )
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_TRAILING = " \t.,;:!?\"'"


class RuleExtractor(ClaimExtractor):
    """Suggest claims from explicit first-person statements."""

    name: ClassVar[str] = "rules"

    def extract(self, text: str, *, valid_from: int, subject: str = "user") -> list[Suggestion]:
        suggestions: list[Suggestion] = []
        for match in _SENTENCE.finditer(text):
            sentence = match.group(0).strip()
            for pattern, kind, predicate in _RULES:
                found = pattern.search(sentence)
                if found is None:
                    continue
                value = found.group("value").strip(_TRAILING)
                if value:
                    claim = ClaimInput(
                        subject=subject,
                        predicate=predicate,
                        value=value,
                        kind=kind,
                        valid_from=valid_from,
                    )
                    suggestions.append(
                        Suggestion(claim=claim, evidence_text=sentence, extractor=self.name)
                    )
                break  # one claim per sentence: the first rule that matches
        return suggestions


@hookimpl
def zkr_register_extractors(register: object) -> None:
    """Register the rule-based extractor."""
    register(RuleExtractor())  # type: ignore[operator]
