"""The recall injected before each turn: bounded background searches, and the warm recall.

Hermes 0.19.0 calls ``queue_prefetch(<the user message of the turn that just ended>)`` on its
background worker, then at the next turn ``prefetch(<the new user message>)``, waiting for it
before the model is called. The two queries differ, so a cache keyed by query would never hit.
What the queued search does instead:

- it runs in the background right after the turn, on the same read connection as the next
  ``prefetch``, so that connection's caches (pages, the dense lane, the query embedder) are warm;
- its items are the *warm recall*: what memory says about the conversation's latest topic, kept
  for the same session for at most ``WARM_RECALL_SECONDS`` and only while nothing was written to
  the scope since (``lookups.scope_sequence``, read before each search).

``prefetch`` then searches the new message. When a valid warm recall exists it waits only
``FAST_WAIT_SECONDS`` for that fresh search: a fresh answer comes first and the warm recall adds up
to ``WARM_EXTRA_ITEMS`` items it lacks (a follow-up question often shares no words with the memory
it is about); a fresh search that is slower than that (a cold embedder, a large database) is left
running and the warm recall answers the turn on its own, instead of the turn waiting up to
``prefetch_timeout``.

Only one search runs per provider at a time: a stuck search is never waited on twice and never
piles up threads (Hermes itself skips a provider whose prefetch is still running).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FAST_WAIT_SECONDS",
    "WARM_EXTRA_ITEMS",
    "WARM_RECALL_SECONDS",
    "Search",
    "SearchSlot",
    "Warm",
    "merge",
    "render",
    "without_evidence",
]

#: How long a turn that has a valid warm recall waits for its fresh search.
FAST_WAIT_SECONDS = 0.3
#: A warm recall older than this is not used (the conversation has moved on).
WARM_RECALL_SECONDS = 300.0
#: Warm items added after the fresh ones.
WARM_EXTRA_ITEMS = 2
#: A prefetched excerpt is cut to this many characters: the block rides on every request.
EXCERPT_CHARS = 500

Items = list[dict[str, Any]]


def monotonic() -> float:
    return time.monotonic()


@dataclass
class Search:
    """One background search. ``sequence`` (the scope's newest commit, read first) is published
    before the items, so a slow search can still tell whether a warm recall is current."""

    kind: str  # "fresh" (prefetch) or "queued" (queue_prefetch)
    sequence: int | None = None
    items: Items | None = None
    sequence_ready: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def publish_sequence(self, sequence: int) -> None:
        self.sequence = sequence
        self.sequence_ready.set()

    @property
    def running(self) -> bool:
        # ``done`` is set when the body has returned; the thread may live a moment longer, and a
        # search in that state must not make the next one fail to start.
        return self.thread is not None and not self.done.is_set()


@dataclass(frozen=True)
class Warm:
    """The queued search's items for the turn that just ended."""

    session_id: str
    sequence: int
    items: Items
    finished_at: float

    def usable(self, session_id: str, now: float) -> bool:
        return self.session_id == session_id and now - self.finished_at <= WARM_RECALL_SECONDS


class SearchSlot:
    """At most one running search per provider, and the warm recall it may leave behind."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: Search | None = None
        self._warm: Warm | None = None

    def start(self, kind: str, body: Callable[[Search], None]) -> Search | None:
        """Start *body* on a daemon thread, unless a search is still running (then None)."""
        search = Search(kind)

        def run() -> None:
            try:
                body(search)
            finally:
                search.sequence_ready.set()
                search.done.set()

        with self._lock:
            if self._current is not None and self._current.running:
                return None
            search.thread = threading.Thread(target=run, name=f"zkr-prefetch-{kind}", daemon=True)
            self._current = search
            search.thread.start()
        return search

    def running(self) -> Search | None:
        with self._lock:
            current = self._current
        return current if current is not None and current.running else None

    def keep_warm(self, warm: Warm) -> None:
        with self._lock:
            self._warm = warm

    def take_warm(self, session_id: str) -> Warm | None:
        """The warm recall if it is this session's and fresh enough; used once either way (the
        next turn's queue_prefetch leaves a new one)."""
        with self._lock:
            warm, self._warm = self._warm, None
        return warm if warm is not None and warm.usable(session_id, monotonic()) else None

    def forget_warm(self) -> None:
        with self._lock:
            self._warm = None


def _key(item: dict[str, Any]) -> tuple[str, str]:
    memory = item.get("memory") or {}
    return str(memory.get("kind", "")), str(memory.get("id", ""))


def merge(fresh: Items, warm: Items, extra: int = WARM_EXTRA_ITEMS) -> Items:
    """*fresh* first, then up to *extra* warm items it does not already hold."""
    seen = {_key(item) for item in fresh}
    added = [item for item in warm if _key(item) not in seen][:extra]
    return [*fresh, *added]


def without_evidence(items: Items, evidence_ids: Iterable[str]) -> Items:
    """Drop items cited only by *evidence_ids* (turns the model still has in its context)."""
    known = set(evidence_ids)
    return [item for item in items if not known.issuperset(item.get("evidence_ids") or ["<none>"])]


def render(items: Items) -> str:
    """The block Hermes injects: one cited line per item, or nothing."""
    lines = []
    for item in items:
        excerpt = " ".join(str(item.get("excerpt", "")).split())
        if len(excerpt) > EXCERPT_CHARS:
            excerpt = excerpt[: EXCERPT_CHARS - 1] + "…"
        evidence = ", ".join(item.get("evidence_ids", []))
        lines.append(f"- {excerpt} [evidence: {evidence}]")
    return "\n".join(["[zkr cited memory]", *lines]) if lines else ""
