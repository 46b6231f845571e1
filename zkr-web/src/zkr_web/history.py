"""The claim page: a claim's statement, its intervals, cited evidence and whole history."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from zkr_web.rendering import Pages, as_of_param

__all__ = ["believed_at", "claim_page"]


def _contains(interval: Any, moment: int) -> bool:
    return bool(interval.from_ <= moment and (interval.until is None or moment < interval.until))


def believed_at(versions: list[Any], moment: int) -> str | None:
    """The id of the version that was true and believed at *moment*, if one was."""
    for version in versions:
        claim = version.claim
        if claim.status.value == "retracted" or version.erased_at is not None:
            continue
        if _contains(claim.valid_time, moment) and _contains(claim.recorded_time, moment):
            return str(claim.id)
    return None


def claim_page(pages: Pages, request: Request, claim_id: str) -> Response:
    history = pages.memory.history(claim_id)
    versions = list(history.versions)
    by_id = {version.claim.id: version for version in versions}
    as_of = as_of_param(request)
    believed = None if as_of is None else believed_at(versions, as_of)
    # Headline: the version believed at the chosen moment, else the current one.
    preferred = [believed, history.current_claim_id, claim_id]
    shown = next((by_id[key] for key in preferred if key in by_id), versions[-1])
    # Transcript locators of live evidence: one operation per cited evidence, never a scan.
    locators: dict[str, Any] = {}
    for version in versions:
        for evidence in version.evidence:
            if evidence.deleted_at is None and evidence.evidence_id not in locators:
                locators[evidence.evidence_id] = pages.memory.locator(evidence.evidence_id)
    statement = _statement(shown.claim)
    return pages.render(
        request,
        "history.html",
        title=f"zkr — {statement}",
        history=history,
        versions=versions,
        shown=shown,
        asked=claim_id,
        statement=statement,
        locators=locators,
        believed=believed,
    )


def _statement(claim: Any) -> str:
    return f"{claim.subject} {claim.predicate} {claim.value}"
