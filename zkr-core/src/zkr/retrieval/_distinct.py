"""The first distinct items of a stream, up to a count: a query's terms (case folded) and a
lexical list's targets (phrase matches, then token matches) are collected alike."""

from __future__ import annotations

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable
    from typing import Any, TypeVar

    _Item = TypeVar("_Item")

__all__ = ["extend_distinct"]


def extend_distinct(
    out: list[_Item],
    items: Iterable[_Item],
    seen: set[Any],
    limit: int,
    key: Callable[[_Item], Hashable] | None = None,
) -> bool:
    """Append each item whose *key* (the item itself without one) is not in *seen* yet, and
    remember the key, until *out* holds *limit* items; ``True`` when it does. *items* is read
    lazily: nothing after the item that completes *out* is asked for (a row never looked up)."""
    for item in items:
        mark = item if key is None else key(item)
        if mark not in seen:
            seen.add(mark)
            out.append(item)
            if len(out) == limit:
                return True
    return False
