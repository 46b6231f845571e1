"""What the replica believed about a claim at a recorded time ``%(r)s`` (SQL fragments).

zkr's own rules (:mod:`zkr.store.believed`) with PostgreSQL's schema and placeholder: a correction
recorded after R had neither closed the claim's intervals nor superseded it yet, so reads
``as_of`` R see the claim as it was then believed (issue 24).
"""

from __future__ import annotations

from zkr.store.believed import BeliefSql
from zkr_postgres.schema import SCHEMA

__all__ = ["corrected_after", "recorded_until_as_of", "status_as_of", "valid_until_as_of"]

_REPLICA = BeliefSql(corrections=f"{SCHEMA}.corrections", recorded_at="%(r)s")
corrected_after = _REPLICA.corrected_after
valid_until_as_of = _REPLICA.valid_until_as_of
recorded_until_as_of = _REPLICA.recorded_until_as_of
status_as_of = _REPLICA.status_as_of
