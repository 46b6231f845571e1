"""The write operations: storing captures and claims, superseding, linking, deleting, profiles and
reviews. Each handler is ``handler(db, request) -> response`` and runs in one transaction."""

from __future__ import annotations

from zkr.writes.capture import locator, remember
from zkr.writes.correction import correct
from zkr.writes.deletion import delete
from zkr.writes.linking import link
from zkr.writes.profiles import profile, profiles, review, reviews

__all__ = [
    "correct",
    "delete",
    "link",
    "locator",
    "profile",
    "profiles",
    "remember",
    "review",
    "reviews",
]
