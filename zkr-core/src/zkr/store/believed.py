"""What the store believed about a claim at a recorded time ``:recorded_at`` (SQL fragments).

A claim row holds its state *now*: a correction recorded at T rewrote the old version's status and
closed its valid time (and, for a mistake, its recorded time) at T. Read as of R < T, those
closures are knowledge from the future: at R nobody knew the value would change, so the version
was then ``accepted`` with both intervals open. Every closure of a claim is dated - a correction
by its ``corrections.recorded_at``, a retraction by ``recorded_until`` itself - so the state as of
R is recovered exactly from the rows:

* recorded until: kept when at or before R, else open;
* valid until: open when a correction superseding the claim was recorded after R (a valid time is
  only ever closed by a correction), else kept;
* status: ``accepted`` when it is ``superseded`` by a correction recorded after R, else kept.

A retracted claim stays invisible at every time (contract §4.11; deletion is absorbing). Every
read with ``as_of`` - search (both rankings), ``get``, ``memories``, dense lanes - uses these
fragments, so none of them can disagree about what was believed. Claims are aliased by the
caller; the parameters are ``:valid_at`` and ``:recorded_at``.
"""

from __future__ import annotations

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from zkr._named_tuple import NamedTuple

__all__ = [
    "SQLITE",
    "BeliefSql",
    "corrected_after",
    "recorded_until_as_of",
    "status_as_of",
    "valid_until_as_of",
    "visible_claim",
]


class BeliefSql(NamedTuple):
    """The fragments for one SQL dialect: where corrections live and how R is written.

    zkr's own store uses :data:`SQLITE`; a replica of the feed (zkr-postgres) makes its own with
    its table and placeholder, so both stores decide belief by the same rules.
    """

    corrections: str = "corrections"
    recorded_at: str = ":recorded_at"

    def corrected_after(self, alias: str) -> str:
        """True when a correction superseding claim *alias* was recorded after R."""
        k = f"k_{alias}"
        return (
            f"EXISTS (SELECT 1 FROM {self.corrections} AS {k}"
            f" WHERE {k}.tenant_id = {alias}.tenant_id AND {k}.person_id = {alias}.person_id"
            f" AND {k}.superseded_claim_id = {alias}.id"
            f" AND {k}.recorded_at > {self.recorded_at})"
        )

    def valid_until_as_of(self, alias: str) -> str:
        """The claim's valid-time end as known at R."""
        return (
            f"(CASE WHEN {alias}.valid_until IS NOT NULL AND {self.corrected_after(alias)}"
            f" THEN NULL ELSE {alias}.valid_until END)"
        )

    def recorded_until_as_of(self, alias: str) -> str:
        """The claim's recorded-time end as known at R."""
        return (
            f"(CASE WHEN {alias}.recorded_until > {self.recorded_at} THEN NULL"
            f" ELSE {alias}.recorded_until END)"
        )

    def status_as_of(self, alias: str) -> str:
        """The claim's status as known at R."""
        return (
            f"(CASE WHEN {alias}.status = 'superseded' AND {self.corrected_after(alias)}"
            f" THEN 'accepted' ELSE {alias}.status END)"
        )


#: zkr's own store: the ``corrections`` table, R as ``:recorded_at``.
SQLITE = BeliefSql()
corrected_after = SQLITE.corrected_after
valid_until_as_of = SQLITE.valid_until_as_of
recorded_until_as_of = SQLITE.recorded_until_as_of
status_as_of = SQLITE.status_as_of


def visible_claim(alias: str, *, recorded_from: bool = True) -> str:
    """Status and interval part of "visible at (V, R)" (§4.11), with each interval as known at R.

    The correction lookup runs only for a claim whose stored valid time ends at or before V.
    *recorded_from* False leaves out ``recorded_from <= :recorded_at`` for a caller whose keyset
    bound already says it (``memories``: a second bound on that column would change its plan).
    """
    started = f" AND {alias}.recorded_from <= :recorded_at" if recorded_from else ""
    return (
        f"{alias}.status IN ('accepted', 'superseded')"
        f" AND {alias}.valid_from <= :valid_at"
        f" AND ({alias}.valid_until IS NULL OR :valid_at < {alias}.valid_until"
        f" OR {corrected_after(alias)})"
        f"{started}"
        f" AND ({alias}.recorded_until IS NULL OR :recorded_at < {alias}.recorded_until)"
    )
