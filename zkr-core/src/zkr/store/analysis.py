"""Words as the recall index stores and searches them, in every language (schema 14).

FTS5 tokenizers cannot be written in Python, so the recall index's text is prepared before it is
stored, and a query's words the same way before they are matched (one function each:
:func:`index_text`, :func:`query_terms`). FTS5 then tokenizes the result with
:data:`RECALL_TOKENIZER`: Porter over unicode61, combining marks kept inside words (SQLite's
default splits Devanagari, Thai and vowelled Arabic at every vowel sign).

* **English** (and any Latin text whose language is not decided otherwise) is left as it is:
  FTS5's Porter stemmer stems it, as it did before schema 14 — the index of an English capture is
  the same, byte for byte.
* **Stemmed languages**: each word of a language zkr knows (:mod:`zkr.store.languages`: Russian,
  Arabic, Hindi, Greek by script; German, Spanish, French, Italian, Portuguese, Dutch, Swedish,
  Turkish, Romanian by their function words) is lower-cased and replaced by its Snowball stem
  (``snowballstemmer``, pure Python, imported per language on first use).
* **Scripts written without spaces** (Han, kana, Thai, Lao, Khmer, Myanmar): each run becomes its
  overlapping character **bigrams** (``黑豹队的`` → ``黑豹 豹队 队的``; a lone character stays
  itself) — no dictionary, the same rule for every such script; chosen over trigrams and over
  bigrams with unigrams on the development languages (``benchmarks/multilingual.py``).

A mixed text is handled word by word: Cyrillic words by the Russian stemmer, Han runs by bigrams,
Latin words by the text's Latin language, all in one row.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from functools import cache, lru_cache

from zkr.store.languages import ENGLISH, latin_language, script_of, stop_words

__all__ = ["MAX_QUERY_TERMS", "RECALL_TOKENIZER", "index_text", "query_terms", "words_of"]

#: The recall index's FTS5 tokenizer: Porter over unicode61, with combining marks (M*) as part
#: of words.
RECALL_TOKENIZER = "porter unicode61 categories 'L* N* Co M*'"
#: A query keeps at most this many terms (the contract's token query's bound).
MAX_QUERY_TERMS = 32

# Scripts written without spaces between words: Han (with its extensions and compatibility
# block), Hiragana, Katakana, Thai, Lao, Myanmar, Khmer.
_NO_SPACE = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff\U00020000-\U0003134f"
)
# Combining marks inside words of the scripts zkr handles (Latin combining diacritics, Arabic
# harakat, the Indic blocks without their danda punctuation, ZWNJ/ZWJ).
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0963\u0966-\u0dff\u200c\u200d\u3099\u309a"
)


# Compiled on first use, not at import: these character classes cost a one-shot command
# milliseconds to compile (issue 27.4), and an ASCII text never needs them (see _needs_work).
@cache
def _word() -> re.Pattern[str]:
    return re.compile(f"(?:[^\\W_]|[{_MARKS}{_NO_SPACE}])+")


@cache
def _no_space_run() -> re.Pattern[str]:
    return re.compile(f"[{_NO_SPACE}]+")


@cache
def _needs_work_pattern() -> re.Pattern[str]:
    # Any character that is not left to FTS5 as it is: the no-space scripts and the stemmed ones.
    return re.compile(f"[{_NO_SPACE}\u0370-\u03ff\u1f00-\u1fff\u0400-\u058f\u0600-\u06ff"
                      "\u0750-\u077f\u0900-\u097f\u0b80-\u0bff]")  # fmt: skip


def _needs_work(text: str) -> bool:
    """Whether *text* holds a character of a no-space or stemmed script (never an ASCII one)."""
    return not text.isascii() and _needs_work_pattern().search(text) is not None


_SNOWBALL = {
    "ar": "arabic",
    "de": "german",
    "el": "greek",
    "es": "spanish",
    "fr": "french",
    "hi": "hindi",
    "hy": "armenian",
    "it": "italian",
    "nl": "dutch",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
}


@cache
def _stemmer(language: str) -> Callable[[str], str] | None:
    """The Snowball stemmer of *language* (its module alone is imported), or ``None``."""
    name = _SNOWBALL.get(language)
    if name is None:
        return None
    module = importlib.import_module(f"snowballstemmer.{name}_stemmer")
    stemmer = getattr(module, f"{name.title()}Stemmer")()
    stem: Callable[[str], str] = stemmer.stemWord
    return stem


def _bigrams(run: str) -> list[str]:
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _language(word: str, latin: str) -> str:
    """The language a word (of one script) is stemmed in."""
    return script_of(word[0]) or (latin if word[0].isalpha() else ENGLISH)


def words_of(word: str, latin: str) -> list[str]:
    """One word of text (a run of letters, digits and marks) as index terms, with *latin* the
    language of the text's Latin words."""
    pieces: list[str] = []
    start = 0
    for run in _no_space_run().finditer(word):
        if run.start() > start:
            pieces.append(_stemmed(word[start : run.start()], latin))
        pieces.extend(_bigrams(run.group()))
        start = run.end()
    if start < len(word):
        pieces.append(_stemmed(word[start:], latin))
    return pieces


#: Stems already computed, by (language, word): Snowball in pure Python costs tens of
#: microseconds a word, and a person's words repeat. Cleared when it grows past this.
_STEMS_KEPT = 100_000
_stems: dict[tuple[str, str], str] = {}


def _stemmed(word: str, latin: str) -> str:
    language = _language(word, latin)
    if language == ENGLISH:
        return word
    key = (language, word)
    found = _stems.get(key)
    if found is None:
        stem = _stemmer(language)
        found = word if stem is None else stem(word.lower())
        if len(_stems) >= _STEMS_KEPT:
            _stems.clear()
        _stems[key] = found
    return found


@lru_cache(maxsize=512)
def _index_short_text(text: str) -> str:
    return _index_text(text)


def index_text(text: str) -> str:
    """*text* as the recall index stores it: English unchanged, other languages' words stemmed,
    runs of scripts without spaces as bigrams (see the module's docstring).

    Short texts are remembered (a few hundred): each ``remember`` prepares its neighbours' texts
    again for their context, and those were prepared when they were stored."""
    return _index_short_text(text) if len(text) <= _CACHED_LENGTH else _index_text(text)


#: Texts up to this many characters are kept by :func:`index_text`'s cache.
_CACHED_LENGTH = 4096


def _index_text(text: str) -> str:
    latin = latin_language(text)
    if latin == ENGLISH and not _needs_work(text):
        return text
    return _word().sub(lambda found: " ".join(words_of(found.group(), latin)), text)


def query_terms(query: str, terms: list[str]) -> list[str]:
    """The recall query's terms of *query*: *terms* (its words as the contract splits them,
    English stop words already dropped) for an English query, else its words as
    :func:`index_text` stores them, without the function words of their language (all of them
    when only function words remain), unique, at most :data:`MAX_QUERY_TERMS`."""
    # A question is short: one function word of another language decides it.
    latin = latin_language(query, min_votes=1)
    if latin == ENGLISH and not _needs_work(query):
        return terms
    kept: dict[str, None] = {}
    every: dict[str, None] = {}
    for found in _word().finditer(query):
        word = found.group()
        stop = word.lower() in stop_words(_language(word, latin))
        for term in words_of(word, latin):
            every.setdefault(term.lower())
            if not stop:
                kept.setdefault(term.lower())
    return list(kept or every)[:MAX_QUERY_TERMS]
