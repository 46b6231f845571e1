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

and when fewer than half of those hits are in the question's language, the keyword list weighs
:data:`FOREIGN_SHARE` instead of the usual share (:func:`lexical_share`). Pure functions, no
database: zkr-core's fusion and the PostgreSQL replica's call the same ones. A question in the
same language as the memories — every English LoCoMo question — is fused exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from zkr.store.languages import latin_language

__all__ = ["FOREIGN_SHARE", "HEAD", "lexical_share", "text_language"]

#: The keyword list's share when its first hits are not in the question's language. Chosen on
#: XQuAD's development languages (English questions over de/es/ru/zh/ar/hi paragraphs, every 4th
#: question): 0.1 left hybrid hit@1 2.0-6.4 points below dense alone, 0 leaves it 0.3-3.0 below.
FOREIGN_SHARE = 0.0
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


def text_language(text: str) -> str:
    """The language a text is mostly written in: its most frequent script's language (Latin by
    function words); ``""`` when that cannot be told (no letters, or Latin letters without a
    function word). Japanese wins over Chinese when a tenth of the Han-and-kana letters are
    kana."""
    sample = text[:_SAMPLE]
    if sample.isascii():  # only the Latin class can match: skip the others' patterns
        has_letters = any(char.isalpha() for char in sample)
        return latin_language(sample, default="") if has_letters else ""
    counts = {name: len(pattern.findall(sample)) for name, pattern in _scripts()}
    if counts["ja"] and counts["ja"] * 10 >= counts["ja"] + counts["zh"]:
        counts["ja"] += counts.pop("zh")
    best = max(counts, key=lambda name: counts[name])
    if not counts[best]:
        return ""
    return latin_language(sample, default="") if best == "latin" else best


def lexical_share(share: float, query: str, hits: Sequence[str]) -> float:
    """The keyword list's share in the fusion: *share* when at least half of *hits* (the texts
    of the list's first :data:`HEAD` hits) whose language can be told are in *query*'s
    language, else :data:`FOREIGN_SHARE` (never more than *share*). A question or hits whose
    language cannot be told keep *share*."""
    asked = text_language(query)
    if not asked:
        return share
    told = [language for text in hits[:HEAD] if (language := text_language(text))]
    if not told:
        return share
    same = sum(language == asked for language in told)
    return share if 2 * same >= len(told) else min(share, FOREIGN_SHARE)
