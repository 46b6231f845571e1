"""The timeline: what the scope holds, newest first, by kind, a page at a time (``memories``)."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from zkr import models as m
from zkr.errors import InvalidRequest
from zkr_web.rendering import Pages, as_of_param

__all__ = ["CLAIM_KINDS", "SOURCE_KINDS", "timeline_page"]

CLAIM_KINDS = [kind.value for kind in m.ClaimKind]
SOURCE_KINDS = [kind.value for kind in m.SourceKind]
#: Rows on one page of the timeline.
TIMELINE_PAGE = 50


def timeline_page(pages: Pages, request: Request) -> Response:
    kinds = request.query_params.getlist("kind")
    unknown = [kind for kind in kinds if kind not in CLAIM_KINDS and kind not in SOURCE_KINDS]
    if unknown:
        raise InvalidRequest(f"unknown kind {unknown[0]!r}")
    cursor = request.query_params.get("cursor") or None
    as_of = as_of_param(request)
    page = pages.memory.memories(
        TIMELINE_PAGE,
        claim_kinds=[kind for kind in kinds if kind in CLAIM_KINDS],
        source_kinds=[kind for kind in kinds if kind in SOURCE_KINDS],
        cursor=cursor,
        as_of=as_of,
    )
    return pages.render(
        request,
        "timeline.html",
        title="zkr — timeline",
        page=page,
        kinds=kinds,
        claim_kinds=CLAIM_KINDS,
        source_kinds=SOURCE_KINDS,
        first_page=cursor is None,
        newest_link=_address(kinds, None, as_of),
        next_link=_address(kinds, page.next_cursor, as_of),
    )


def _address(kinds: list[str], cursor: str | None, as_of: int | None) -> str:
    """The timeline's address for these filters, this cursor and this moment."""
    pairs = [("kind", kind) for kind in kinds]
    if cursor:
        pairs.append(("cursor", cursor))
    if as_of is not None:
        pairs.append(("as_of", str(as_of)))
    return "/" + ("?" + urlencode(pairs) if pairs else "")
