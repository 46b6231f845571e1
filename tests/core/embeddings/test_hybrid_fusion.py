"""``fuse_hybrid`` (reading only the head of the dense list) equals ``fuse`` on whole lists;
``DenseRanks`` (the lazily ranked dense list) orders exactly like a full sort.

Deep in a long list consecutive ranks truncate to the same relevance, so a target past the head can
tie the last kept one and win on target order; these cases need a head that grows.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zkr.embeddings.dense import DenseRanks
from zkr.retrieval._fusion import Target, fuse, target_key
from zkr.retrieval._hybrid import fuse_hybrid


class ListRanks:
    """A whole list behind the lazy interface, counting how much of it was read."""

    def __init__(self, targets: Sequence[Target]) -> None:
        self.targets = list(targets)
        self.read = 0

    def __len__(self) -> int:
        return len(self.targets)

    def prefix(self, count: int) -> list[Target]:
        self.read = max(self.read, count)
        return self.targets[:count]

    def position(self, target: Target) -> int | None:
        return self.targets.index(target) if target in self.targets else None


def universe(size: int) -> list[Target]:
    kinds = ("source", "evidence", "claim")
    return [(kinds[i % 3], f"{i * 7919 % 10007:05d}") for i in range(size)]


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    dense_size=st.integers(0, 2500),
    lexical_size=st.integers(0, 60),
    limit=st.sampled_from([1, 2, 3, 10, 40, 100, 700, 760, 1200]),
)
def test_lazy_fusion_equals_fusion_of_whole_lists(
    seed: int, dense_size: int, lexical_size: int, limit: int
) -> None:
    rng = random.Random(seed)
    targets = universe(3000)
    dense = rng.sample(targets, dense_size)
    # Lexical candidates: some also in the dense list, some not, repeats allowed.
    lexical = [rng.choice(targets) for _ in range(lexical_size)]
    lexical += [rng.choice(dense) for _ in range(lexical_size // 2 if dense else 0)]
    rng.shuffle(lexical)
    assert fuse_hybrid(lexical, ListRanks(dense), limit) == fuse([lexical, dense], limit)


def test_a_tie_past_the_head_is_found_by_growing_it() -> None:
    dense = universe(3000)
    dense.sort(key=lambda t: t[1], reverse=True)  # later positions have smaller ids
    ranks = ListRanks(dense)
    # 750 dense-only targets: positions 749 and 750 truncate to the same relevance (752).
    assert fuse_hybrid([], ranks, 750) == fuse([[], dense], 750)
    assert ranks.read > 750


def test_a_short_search_reads_only_the_head() -> None:
    dense = universe(3000)
    ranks = ListRanks(dense)
    lexical = [dense[2000], ("source", "nowhere")]
    assert fuse_hybrid(lexical, ranks, 10) == fuse([lexical, dense], 10)
    assert ranks.read == 12


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.sampled_from([-1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 3.5]), max_size=300),
    seed=st.integers(0, 2**32),
    count=st.integers(0, 320),
)
def test_dense_ranks_orders_by_score_then_target_order(
    scores: list[float], seed: int, count: int
) -> None:
    keys = universe(len(scores))
    random.Random(seed).shuffle(keys)
    ranks = DenseRanks(np.asarray(scores, dtype=np.float32), keys)
    expected = sorted(zip(keys, scores, strict=True), key=lambda p: (-p[1], target_key(p[0])))
    assert ranks.ranked() == expected
    assert ranks.prefix(count) == [key for key, _ in expected[:count]]
    for position, (key, _) in enumerate(expected):
        assert ranks.position(key) == position
    assert ranks.position(("claim", "absent")) is None
