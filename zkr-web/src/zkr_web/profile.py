"""The Profile page: the person's profile facts as then believed, each with the quotes it cites.

A profile fact is a claim of kind ``profile_fact`` (``me lives_in Lisbon``, found by an extractor
or stated by the agent). The ``profiles`` operation lists only *profile entries*, which something
must build explicitly with ``profile`` (one per key, with a stability); a person whose agent
stored profile facts but never built entries saw an empty page. So the page lists the facts
themselves through ``memories`` (kind ``profile_fact``, newest first, paged, ``as_of`` aware: the
facts believed then), and shows an entry's stability beside the fact that backs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from zkr_web.rendering import Pages, as_of_param

__all__ = ["PROFILE_PAGE", "profile_page"]

#: Profile facts on one page (each cites a few quotes: one ``get`` and ``locator`` per quote).
PROFILE_PAGE = 50
#: Daily reviews and profile entries read for the page (the operations' own bound is larger).
LISTED = 100


def profile_page(
    pages: Pages, request: Request, evidence: Callable[[str], dict[str, Any]]
) -> Response:
    """Render ``/profile``; *evidence* reads one cited quote with its locator."""
    memory = pages.memory
    as_of = as_of_param(request)
    cursor = request.query_params.get("cursor") or None
    facts = memory.memories(
        PROFILE_PAGE, claim_kinds=["profile_fact"], source_kinds=[], cursor=cursor, as_of=as_of
    )
    cited: dict[str, dict[str, Any]] = {}
    for item in facts.items:
        for evidence_id in item.evidence_ids:
            if evidence_id not in cited:
                cited[evidence_id] = evidence(evidence_id)
    # Entries and reviews have no as_of of their own: at a past moment, only those recorded by
    # then are shown (an entry's stability is shown only while the fact it names is listed).
    entries = [e for e in memory.profiles(LISTED) if as_of is None or e.recorded_at <= as_of]
    reviews = [r for r in memory.reviews(LISTED) if as_of is None or r.recorded_at <= as_of]
    return pages.render(
        request,
        "profile.html",
        title="zkr — profile and reviews",
        facts=facts,
        cited=cited,
        stability={entry.claim_id: entry.stability.value for entry in entries},
        first_page=cursor is None,
        reviews=reviews,
    )
