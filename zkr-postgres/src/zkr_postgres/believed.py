"""What the replica believed about a claim at a recorded time ``%(r)s`` (SQL fragments).

The replica's copy of :mod:`zkr.store.believed` (same rules, PostgreSQL's placeholders and schema):
a correction recorded after R had neither closed the claim's intervals nor superseded it yet, so
reads ``as_of`` R see the claim as it was then believed (issue 24).
"""

from __future__ import annotations

__all__ = ["corrected_after", "recorded_until_as_of", "status_as_of", "valid_until_as_of"]


def corrected_after(alias: str) -> str:
    """True when a correction superseding claim *alias* was recorded after ``%(r)s``."""
    k = f"k_{alias}"
    return (
        f"EXISTS (SELECT 1 FROM zkr.corrections {k} WHERE {k}.tenant_id = {alias}.tenant_id"
        f" AND {k}.person_id = {alias}.person_id AND {k}.superseded_claim_id = {alias}.id"
        f" AND {k}.recorded_at > %(r)s)"
    )


def valid_until_as_of(alias: str) -> str:
    """The claim's valid-time end as known at ``%(r)s``."""
    return (
        f"(CASE WHEN {alias}.valid_until IS NOT NULL AND {corrected_after(alias)}"
        f" THEN NULL ELSE {alias}.valid_until END)"
    )


def recorded_until_as_of(alias: str) -> str:
    """The claim's recorded-time end as known at ``%(r)s``."""
    return f"(CASE WHEN {alias}.recorded_until > %(r)s THEN NULL ELSE {alias}.recorded_until END)"


def status_as_of(alias: str) -> str:
    """The claim's status as known at ``%(r)s``."""
    return (
        f"(CASE WHEN {alias}.status = 'superseded' AND {corrected_after(alias)}"
        f" THEN 'accepted' ELSE {alias}.status END)"
    )
