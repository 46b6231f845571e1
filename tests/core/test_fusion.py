"""``fusion.fuse`` reads only list heads; it must equal the contract's full sort (§5.5) exactly.

The reference below scores every target of every list and sorts them all by (truncated relevance
descending, kind, id). Random lists draw from a small pool of ids, so targets repeat inside a list
(only the first position counts), lists overlap, and truncated relevances tie often.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zkr.retrieval._fusion import KIND_ORDER, fuse, rank_contribution

Target = tuple[str, str]


def full_sort(rankings: list[list[Target]], limit: int) -> list[tuple[Target, int]]:
    scores: dict[Target, int] = {}
    for ranking in rankings:
        counted: set[Target] = set()
        for position, target in enumerate(ranking):
            if target not in counted:
                counted.add(target)
                scores[target] = scores.get(target, 0) + 1_000_000 // (61 + position)
    if not scores:
        return []
    best = max(scores.values())
    fused = [(target, score * 10_000 // best) for target, score in scores.items()]
    fused.sort(key=lambda pair: (-pair[1], KIND_ORDER[pair[0][0]], pair[0][1]))
    return fused[:limit]


def targets(pool: int) -> st.SearchStrategy[Target]:
    return st.tuples(
        st.sampled_from(["source", "evidence", "claim"]),
        st.integers(0, pool).map(lambda number: f"t{number:04d}"),
    )


@st.composite
def ranking_lists(draw: st.DrawFn) -> list[list[Target]]:
    pool = draw(st.sampled_from([3, 30, 300, 3000]))
    count = draw(st.integers(0, 3))
    return [
        draw(st.lists(targets(pool), max_size=draw(st.sampled_from([0, 5, 50, 600]))))
        for _ in range(count)
    ]


@settings(max_examples=400, deadline=None)
@given(ranking_lists(), st.one_of(st.integers(1, 120), st.integers(1, 2000)))
def test_fuse_equals_the_full_sort(rankings: list[list[Target]], limit: int) -> None:
    assert fuse(rankings, limit) == full_sort(rankings, limit)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 100),
    st.integers(0, 400),
    st.integers(0, 5000),
    st.randoms(use_true_random=False),
)
def test_a_long_dense_list_behind_a_lexical_one(
    limit: int, lexical_size: int, dense_size: int, rng: object
) -> None:
    # The search's shape: a short lexical list and a long, duplicate-free dense list that holds
    # most lexical targets somewhere (often deep), so the head must look them up in the tail.
    import random

    assert isinstance(rng, random.Random)
    pool = [("claim" if n % 3 else "source", f"id{n:05d}") for n in range(dense_size + 50)]
    dense = rng.sample(pool, dense_size)
    lexical = rng.sample(pool, min(lexical_size, len(pool)))
    assert fuse([lexical, dense], limit) == full_sort([lexical, dense], limit)


def test_truncated_ties_at_the_cut_pull_in_deeper_targets() -> None:
    # Far down a list, neighbouring positions truncate to the same basis points: the target that
    # wins the tie on its id may sit deeper than `limit` + the other list's length.
    dense = [("claim", f"z{n:05d}") for n in range(3000)]
    lexical = [dense[0]]
    limits = (1, 2, 50, 100, 600, 601, 900, 1500)
    for limit in limits:
        assert fuse([lexical, dense], limit) == full_sort([lexical, dense], limit)
    reversed_ids = [("claim", f"z{9999 - n:05d}") for n in range(3000)]
    for limit in limits:
        got = fuse([[reversed_ids[0]], reversed_ids], limit)
        assert got == full_sort([[reversed_ids[0]], reversed_ids], limit)


def test_one_list_keeps_its_order_for_every_position_a_search_can_have() -> None:
    # A lexical-only search builds only its first `limit` targets (zkr.retrieval._search): that is
    # exact
    # because one list's relevance falls strictly over the 400 positions a list can have.
    best = rank_contribution(0)
    points = [rank_contribution(p) * 10_000 // best for p in range(401)]
    assert all(points[p] > points[p + 1] for p in range(400))
    ranking = [("claim", f"{400 - n:03d}") for n in range(400)]
    assert [t for t, _ in fuse([ranking], 100)] == ranking[:100]
    assert fuse([ranking[:10]], 10) == fuse([ranking], 10)


def test_degenerate_inputs() -> None:
    assert fuse([], 10) == []
    assert fuse([[], []], 10) == []
    ranking = [("source", "a"), ("source", "b")]
    assert fuse([ranking], 0) == full_sort([ranking], 0) == []
