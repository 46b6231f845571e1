"""How much the hybrid fusion trusts the keyword list: less when the question and the memories
its keywords found are in different languages (issue 29).

The recall fusion gives the best lexical hit a fixed share of the score (0.55, chosen on English
LoCoMo). When a question is asked in one language over memories written in another (an English
question over German notes), the keyword list is noise — a shared name or number at best — while
the multilingual dense lane still finds the memory; at the fixed share the noise outranked it
(XQuAD, English questions: hybrid hit@1 8-29 points below dense alone). So the fusion asks:

* the **question's language** (:func:`text_language`): the script most of its letters are
  written in, and for Latin script the language of its function words
  (:func:`zkr.store.languages.latin_language`);
* the **languages of the keyword list's first hits** (:data:`HEAD`), decided the same way from
  their text;

and when fewer than half of those hits are in the question's language, it trusts the keyword
list :data:`FOREIGN_TRUST` (:func:`keyword_trust`). The trust multiplies the whole keyword list's
part of the fusion — its share *and* its session term (``fuse_scores(keyword_trust=…)``): with
the share alone lowered, the session term (half the best keyword hit's score, for a memory in a
session of its own) still let the foreign keyword list outrank the dense lane (XQuAD, English
questions, all 1,190: hybrid hit@1 1.8, 3.5 and 2.6 points below dense alone over German, Russian
and Chinese paragraphs; with the trust on both, 0.0 in every development language). Measured and
not taken: calling a Latin question whose function words tie between languages ("Was bedeutet
Plastid?": "was" is English and German) undecided instead of English — 0.1 point worse in de,
es and English-over-es. Pure functions, no database: zkr-core's fusion and the PostgreSQL
replica's call the same ones. A question in the same language as the memories — every English
LoCoMo question — is fused exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from zkr.store.languages import latin_language

__all__ = [
    "FOREIGN_SHARE",
    "FOREIGN_TRUST",
    "HEAD",
    "keyword_trust",
    "lexical_share",
    "text_language",
]

#: How much the keyword list is trusted when its first hits are not in the question's language.
#: Chosen on XQuAD's development languages (English questions over de/es/ru/zh/ar/hi paragraphs,
#: all 1,190 questions): any trust above 0 leaves hybrid hit@1 below dense alone.
FOREIGN_TRUST = 0.0
#: The keyword share :func:`lexical_share` gives a foreign list (its trust times any share).
FOREIGN_SHARE = FOREIGN_TRUST
#: How many of the keyword list's first hits decide whether it speaks the question's language.
HEAD = 5
#: Letters read to decide a text's script (a memory's first ones are enough).
_SAMPLE = 2000

# Scripts and the language each names; Latin is decided by function words. Kana before Han: a
# Japanese text mixes both, a Chinese one has no kana.
_SCRIPT_CLASSES: tuple[tuple[str, str], ...] = (
    ("ja", "[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]"),
    ("zh", "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    ("ko", "[\uac00-\ud7af\u1100-\u11ff]"),
    ("th", "[\u0e00-\u0e7f]"),
    ("ru", "[\u0400-\u052f]"),
    ("ar", "[\u0600-\u06ff\u0750-\u077f]"),
    ("hi", "[\u0900-\u097f]"),
    ("el", "[\u0370-\u03ff\u1f00-\u1fff]"),
    ("he", "[\u0590-\u05ff]"),
    ("latin", "[A-Za-z\u00c0-\u024f]"),
)


@cache
def _scripts() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The classes compiled, on first use: compiling them is milliseconds of a one-shot
    command's start-up (issue 27.4), and an ASCII text never needs them."""
    return tuple((name, re.compile(chars)) for name, chars in _SCRIPT_CLASSES)


def _script(text: str) -> str:
    """The language named by the script most of *text*'s first letters are in (``"latin"`` for
    Latin script, ``""`` without letters). Japanese wins over Chinese when a tenth of the
    Han-and-kana letters are kana."""
    sample = text[:_SAMPLE]
    if sample.isascii():  # only the Latin class can match: skip the others' patterns
        return "latin" if any(char.isalpha() for char in sample) else ""
    counts = {name: len(pattern.findall(sample)) for name, pattern in _scripts()}
    if counts["ja"] and counts["ja"] * 10 >= counts["ja"] + counts["zh"]:
        counts["ja"] += counts.pop("zh")
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] else ""


def text_language(text: str) -> str:
    """The language a text is mostly written in: its most frequent script's language (Latin by
    function words, English on a tie); ``""`` when that cannot be told (no letters, or Latin
    letters without a function word)."""
    script = _script(text)
    return latin_language(text[:_SAMPLE], default="") if script == "latin" else script


def keyword_trust(query: str, hits: Sequence[str]) -> float:
    """How much the fusion trusts the keyword list, 0..1: 1 when at least half of *hits* (the
    texts of the list's first :data:`HEAD` hits) whose language can be told are in *query*'s
    language, else :data:`FOREIGN_TRUST`. A question or hits whose language cannot be told
    trust fully."""
    asked = text_language(query)
    if not asked:
        return 1.0
    told = [language for text in hits[:HEAD] if (language := text_language(text))]
    if not told:
        return 1.0
    same = sum(language == asked for language in told)
    return 1.0 if 2 * same >= len(told) else FOREIGN_TRUST


def lexical_share(share: float, query: str, hits: Sequence[str]) -> float:
    """The keyword list's share in the fusion: *share* times :func:`keyword_trust`. (The fusion
    takes the trust itself, ``fuse_scores(keyword_trust=…)``, which also scales the session
    term; this is the share alone.)"""
    return share * keyword_trust(query, hits)
