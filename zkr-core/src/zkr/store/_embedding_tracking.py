"""DDL of the bookkeeping that keeps ``projections`` and the dense cache independent of N.

Two structures, both maintained by triggers in the same transaction as the change (so raw SQL, a
replica's ``apply`` and another process's writes are covered exactly like zkr's own operations):

``projection_lanes`` / ``projection_backlog`` (read by :mod:`zkr.embeddings.backlog`)
    For every registered lane (scope, model, version) the backlog holds a superset of the targets
    ``projections`` may have to list. Invariant: *every candidate target (live source, live
    evidence of a live source, current claim) that has no certificate in ``embedding_checks`` for
    that lane at its current revision is in the backlog*. A target leaves the backlog when it is
    certified or stops being a candidate, and (re)enters when it becomes a candidate without such a
    certificate or loses its certificate. ``embed`` registers a lane (and fills its backlog once)
    the first time it stores a vector in it; a lane that is not registered (e.g. a database
    migrated from zkr 0.2.x) is audited with the full scan.

    The key puts the target before the lane (schema 16): the triggers find a target's entries
    (of every lane) by the key itself, and a lane's walk reads its kind in id order from the same
    key, skipping other lanes' entries (a person has one or two). Until schema 15 the key began
    with the lane and a second index served the triggers: every ``remember`` then wrote its two
    targets into two B-trees at random places, about six of its 36 WAL pages (issue 27.2).

``embedding_dirty`` (read by :mod:`zkr.embeddings.dense`)
    A monotonic tick per embedded target whose vector, liveness or retrieval mapping may have
    changed: its embedding rows, its own row, its source (for evidence), its evidence (for a
    source) or the links and claims its mapping follows. Only targets that have an embedding row
    are marked, so ``remember`` writes nothing here. A cached lane at tick T re-reads exactly the
    targets marked after T.
"""

from __future__ import annotations

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["EMBEDDING_TRACKING"]

_TICK = "(SELECT COALESCE(MAX(tick), 0) + 1 FROM embedding_dirty)"
# Upserts, not INSERT OR ...: the conflict clause of an outer statement (embed's upsert) would
# override an OR clause inside a trigger.
_RETICK = (
    "ON CONFLICT(tenant_id, person_id, target_kind, target_id) DO UPDATE SET tick = excluded.tick"
)

# kind -> (table, revision column, candidate test of a row alias {r}, watched columns)
_KINDS = {
    "source": (
        "sources",
        "revision",
        "{r}.deleted_at IS NULL",
        "id, tenant_id, person_id, content, revision, deleted_at",
    ),
    "evidence": (
        "evidence",
        "source_revision",
        "{r}.deleted_at IS NULL AND EXISTS (SELECT 1 FROM sources s WHERE s.id = {r}.source_id"
        " AND s.tenant_id = {r}.tenant_id AND s.person_id = {r}.person_id"
        " AND s.deleted_at IS NULL)",
        "id, tenant_id, person_id, source_id, source_revision, quote, deleted_at",
    ),
    "claim": (
        "claims",
        "recorded_from",
        "{r}.status = 'accepted' AND {r}.valid_until IS NULL AND {r}.recorded_until IS NULL",
        "id, tenant_id, person_id, subject, predicate, value, recorded_from, status, valid_until,"
        " recorded_until",
    ),
}


def _certified(kind: str, alias: str, lane: str = "r") -> str:
    """SQL: *alias* (a target row) has a certificate for lane *lane* at its current revision."""
    revision = _KINDS[kind][1]
    return (
        f"EXISTS (SELECT 1 FROM embedding_checks k WHERE k.tenant_id = {alias}.tenant_id"
        f" AND k.person_id = {alias}.person_id AND k.target_kind = '{kind}'"
        f" AND k.target_id = {alias}.id AND k.model = {lane}.model AND k.version = {lane}.version"
        f" AND k.target_revision = {alias}.{revision})"
    )


def _suspect(kind: str, row: str) -> str:
    """Put target *row* (NEW) in the backlog of every registered lane of its scope, if needed."""
    candidate = _KINDS[kind][2].format(r=row)
    return (
        "INSERT INTO projection_backlog(tenant_id, person_id, model, version,"
        f" target_kind, target_id) SELECT r.tenant_id, r.person_id, r.model, r.version, '{kind}',"
        f" {row}.id FROM projection_lanes r WHERE r.tenant_id = {row}.tenant_id"
        f" AND r.person_id = {row}.person_id AND {candidate}"
        f" AND NOT {_certified(kind, row)} ON CONFLICT DO NOTHING;"
    )


def _unsuspect(kind: str, row: str) -> str:
    return (
        f"DELETE FROM projection_backlog WHERE tenant_id = {row}.tenant_id"
        f" AND person_id = {row}.person_id AND target_kind = '{kind}' AND target_id = {row}.id;"
    )


def _has_vectors(kind: str, tenant: str, person: str, target_id: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM embeddings x WHERE x.tenant_id = {tenant}"
        f" AND x.person_id = {person} AND x.target_kind = '{kind}' AND x.target_id = {target_id})"
    )


def _mark(kind: str, row: str, rows_from: str = "") -> str:
    """Tick target *row* (its own id) in ``embedding_dirty`` when it has embedding rows; *row* is
    a trigger's ``NEW``/``OLD``, or the alias of the rows *rows_from* names."""
    return (
        "INSERT INTO embedding_dirty(tenant_id, person_id, target_kind, target_id, tick)"
        f" SELECT {row}.tenant_id, {row}.person_id, '{kind}', {row}.id, {_TICK}{rows_from}"
        f" WHERE {_has_vectors(kind, f'{row}.tenant_id', f'{row}.person_id', f'{row}.id')}"
        f" {_RETICK};"
    )


def _mark_select(kind: str, select: str) -> str:
    """Tick every (tenant_id, person_id, id) row of *select* (alias ``z``) that has vectors."""
    return _mark(kind, "z", f" FROM ({select}) z")


def _evidence_of_source(row: str) -> str:
    return (
        f"SELECT tenant_id, person_id, id FROM evidence WHERE tenant_id = {row}.tenant_id"
        f" AND person_id = {row}.person_id AND source_id = {row}.id"
    )


def _source_of_evidence(row: str) -> str:
    return (
        f"SELECT tenant_id, person_id, id FROM sources WHERE id = {row}.source_id"
        f" AND tenant_id = {row}.tenant_id AND person_id = {row}.person_id"
    )


def _evidence_of_claim(row: str) -> str:
    return (
        "SELECT v.tenant_id, v.person_id, v.id, v.source_id FROM claim_evidence ce"
        f" JOIN evidence v ON v.id = ce.evidence_id WHERE ce.claim_id = {row}.id"
    )


def _sources_of_claim(row: str) -> str:
    return (
        f"SELECT s.tenant_id, s.person_id, s.id FROM ({_evidence_of_claim(row)}) v"
        " JOIN sources s ON s.id = v.source_id"
    )


def _claim_marks(row: str) -> list[str]:
    """Tick the evidence linked to claim *row* and their sources (they may map to the claim)."""
    return [
        _mark_select("evidence", _evidence_of_claim(row)),
        _mark_select("source", _sources_of_claim(row)),
    ]


def _marks(kind: str, *rows: str) -> list[str]:
    """Tick the target of *kind* at each of *rows* (``OLD``/``NEW``), then the targets whose
    mapping follows it: a source's evidence, an evidence's source, a claim's evidence and their
    sources."""
    related: dict[str, Callable[[str], list[str]]] = {
        "source": lambda row: [_mark_select("evidence", _evidence_of_source(row))],
        "evidence": lambda row: [_mark_select("source", _source_of_evidence(row))],
        "claim": _claim_marks,
    }
    return [_mark(kind, row) for row in rows] + [
        statement for row in rows for statement in related[kind](row)
    ]


def _source_statements(row: str, *, gone: bool = False) -> list[str]:
    """Backlog entries of a source and of its evidence (whose candidacy follows the source)."""
    statements = [
        _unsuspect("source", row),
        f"DELETE FROM projection_backlog WHERE tenant_id = {row}.tenant_id"
        f" AND person_id = {row}.person_id AND target_kind = 'evidence' AND target_id IN"
        f" (SELECT id FROM evidence WHERE tenant_id = {row}.tenant_id"
        f" AND person_id = {row}.person_id AND source_id = {row}.id);",
    ]
    if not gone:
        statements += [
            _suspect("source", row),
            "INSERT INTO projection_backlog(tenant_id, person_id, model, version,"
            " target_kind, target_id) SELECT r.tenant_id, r.person_id, r.model, r.version,"
            " 'evidence', v.id FROM evidence v JOIN projection_lanes r"
            " ON r.tenant_id = v.tenant_id AND r.person_id = v.person_id"
            " WHERE v.tenant_id = {r}.tenant_id AND v.person_id = {r}.person_id"
            " AND v.source_id = {r}.id AND {r}.deleted_at IS NULL AND v.deleted_at IS NULL"
            " AND NOT {cert} ON CONFLICT DO NOTHING;".format(
                r=row, cert=_certified("evidence", "v")
            ),
        ]
    return statements


def _void(kind: str, row: str) -> str:
    """A hard-deleted target's certificates go with it (a row re-inserted later is new text)."""
    return (
        f"DELETE FROM embedding_checks WHERE tenant_id = {row}.tenant_id"
        f" AND person_id = {row}.person_id AND target_kind = '{kind}' AND target_id = {row}.id;"
    )


def _trigger(name: str, event: str, table: str, statements: list[str], when: str = "") -> str:
    body = "\n  ".join(statements)
    condition = f"\nWHEN {when}" if when else ""
    return (
        f"CREATE TRIGGER IF NOT EXISTS {name} {event} ON {table} FOR EACH ROW{condition}\n"
        f"BEGIN\n  {body}\nEND;\n"
    )


def _target_triggers() -> str:
    columns = {kind: spec[3] for kind, spec in _KINDS.items()}
    out = []
    # sources: the source itself, plus its evidence (live only while the source is).
    out.append(
        _trigger(
            "tracking_source_insert",
            "AFTER INSERT",
            "sources",
            [_suspect("source", "NEW"), _mark("source", "NEW")],
        )
    )
    out.append(
        _trigger(
            "tracking_source_update",
            f"AFTER UPDATE OF {columns['source']}",
            "sources",
            _source_statements("OLD", gone=True)
            + _source_statements("NEW")
            + _marks("source", "OLD", "NEW"),
        )
    )
    out.append(
        _trigger(
            "tracking_source_delete",
            "AFTER DELETE",
            "sources",
            [
                *_source_statements("OLD", gone=True),
                _void("source", "OLD"),
                *_marks("source", "OLD"),
            ],
        )
    )
    # evidence: itself, plus its source (whose mapping follows its evidence and their links).
    out.append(
        _trigger(
            "tracking_evidence_insert",
            "AFTER INSERT",
            "evidence",
            [_suspect("evidence", "NEW"), *_marks("evidence", "NEW")],
        )
    )
    out.append(
        _trigger(
            "tracking_evidence_update",
            f"AFTER UPDATE OF {columns['evidence']}",
            "evidence",
            [
                _unsuspect("evidence", "OLD"),
                _suspect("evidence", "NEW"),
                *_marks("evidence", "OLD", "NEW"),
            ],
        )
    )
    out.append(
        _trigger(
            "tracking_evidence_delete",
            "AFTER DELETE",
            "evidence",
            [
                _unsuspect("evidence", "OLD"),
                _void("evidence", "OLD"),
                *_marks("evidence", "OLD"),
            ],
        )
    )
    # claims: itself, plus the evidence linked to it and their sources (mapping to the claim).
    out.append(
        _trigger(
            "tracking_claim_insert",
            "AFTER INSERT",
            "claims",
            [_suspect("claim", "NEW"), *_marks("claim", "NEW")],
        )
    )
    out.append(
        _trigger(
            "tracking_claim_update",
            f"AFTER UPDATE OF {columns['claim']}",
            "claims",
            [
                _unsuspect("claim", "OLD"),
                _suspect("claim", "NEW"),
                *_marks("claim", "OLD", "NEW"),
            ],
        )
    )
    out.append(
        _trigger(
            "tracking_claim_delete",
            "AFTER DELETE",
            "claims",
            [
                _unsuspect("claim", "OLD"),
                _void("claim", "OLD"),
                *_marks("claim", "OLD"),
            ],
        )
    )
    # claim_evidence: the evidence's and its source's mapping follow their supports links.
    for event, rows in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
        statements = []
        for row in rows:
            evidence = (
                f"SELECT tenant_id, person_id, id, source_id FROM evidence"
                f" WHERE id = {row}.evidence_id"
            )
            statements.append(_mark_select("evidence", evidence))
            statements.append(
                _mark_select(
                    "source",
                    f"SELECT s.tenant_id, s.person_id, s.id FROM ({evidence}) v"
                    " JOIN sources s ON s.id = v.source_id",
                )
            )
        out.append(
            _trigger(
                f"tracking_link_{event.lower()}", f"AFTER {event}", "claim_evidence", statements
            )
        )
    return "".join(out)


def _mark_embedding(row: str) -> str:
    return (
        "INSERT INTO embedding_dirty(tenant_id, person_id, target_kind, target_id, tick)"
        f" VALUES ({row}.tenant_id, {row}.person_id, {row}.target_kind, {row}.target_id, {_TICK})"
        f" {_RETICK};"
    )


def _embedding_triggers() -> str:
    key = (
        "tenant_id = {r}.tenant_id AND person_id = {r}.person_id AND target_kind = {r}.target_kind"
        " AND target_id = {r}.target_id AND model = {r}.model AND version = {r}.version"
    )
    # Is the certified target a candidate (checked on the target's current row)?
    candidate = (
        "CASE OLD.target_kind"
        " WHEN 'source' THEN EXISTS (SELECT 1 FROM sources t WHERE t.id = OLD.target_id"
        " AND t.tenant_id = OLD.tenant_id AND t.person_id = OLD.person_id AND "
        + _KINDS["source"][2].format(r="t")
        + ") WHEN 'evidence' THEN EXISTS (SELECT 1 FROM evidence t WHERE t.id = OLD.target_id"
        " AND t.tenant_id = OLD.tenant_id AND t.person_id = OLD.person_id AND "
        + _KINDS["evidence"][2].format(r="t")
        + ") WHEN 'claim' THEN EXISTS (SELECT 1 FROM claims t WHERE t.id = OLD.target_id"
        " AND t.tenant_id = OLD.tenant_id AND t.person_id = OLD.person_id AND "
        + _KINDS["claim"][2].format(r="t")
        + ") ELSE 0 END"
    )
    # A certificate written for another revision than the target's current one does not count.
    other_revision = (
        "CASE NEW.target_kind"
        " WHEN 'source' THEN EXISTS (SELECT 1 FROM sources t WHERE t.id = NEW.target_id"
        " AND t.tenant_id = NEW.tenant_id AND t.person_id = NEW.person_id"
        " AND t.revision IS NOT NEW.target_revision)"
        " WHEN 'evidence' THEN EXISTS (SELECT 1 FROM evidence t WHERE t.id = NEW.target_id"
        " AND t.tenant_id = NEW.tenant_id AND t.person_id = NEW.person_id"
        " AND t.source_revision IS NOT NEW.target_revision)"
        " WHEN 'claim' THEN EXISTS (SELECT 1 FROM claims t WHERE t.id = NEW.target_id"
        " AND t.tenant_id = NEW.tenant_id AND t.person_id = NEW.person_id"
        " AND t.recorded_from IS NOT NEW.target_revision)"
        " ELSE 0 END"
    )
    registered = (
        "EXISTS (SELECT 1 FROM projection_lanes r WHERE r.tenant_id = OLD.tenant_id"
        " AND r.person_id = OLD.person_id AND r.model = OLD.model AND r.version = OLD.version)"
    )
    return "".join(
        [
            _trigger(
                "tracking_check_insert",
                "AFTER INSERT",
                "embedding_checks",
                [f"DELETE FROM projection_backlog WHERE {key.format(r='NEW')};"],
                when=f"NOT ({other_revision})",
            ),
            _trigger(
                "tracking_check_delete",
                "AFTER DELETE",
                "embedding_checks",
                [
                    "INSERT INTO projection_backlog(tenant_id, person_id, model, version,"
                    " target_kind, target_id) VALUES (OLD.tenant_id, OLD.person_id, OLD.model,"
                    " OLD.version, OLD.target_kind, OLD.target_id) ON CONFLICT DO NOTHING;"
                ],
                when=f"{registered} AND {candidate}",
            ),
            # A row written by raw SQL (INSERT OR REPLACE included) carries no certificate.
            _trigger(
                "tracking_embedding_insert",
                "AFTER INSERT",
                "embeddings",
                [
                    f"DELETE FROM embedding_checks WHERE {key.format(r='NEW')};",
                    _mark_embedding("NEW"),
                ],
            ),
            _trigger(
                "tracking_embedding_update",
                "AFTER UPDATE",
                "embeddings",
                [_mark_embedding("OLD"), _mark_embedding("NEW")],
            ),
            _trigger(
                "tracking_embedding_delete", "AFTER DELETE", "embeddings", [_mark_embedding("OLD")]
            ),
        ]
    )


EMBEDDING_TRACKING = (
    """
CREATE TABLE IF NOT EXISTS projection_lanes(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  model TEXT NOT NULL, version TEXT NOT NULL,
  PRIMARY KEY(tenant_id, person_id, model, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS projection_backlog(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  model TEXT NOT NULL, version TEXT NOT NULL, target_kind TEXT NOT NULL, target_id TEXT NOT NULL,
  PRIMARY KEY(tenant_id, person_id, target_kind, target_id, model, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embedding_dirty(tenant_id TEXT NOT NULL, person_id TEXT NOT NULL,
  target_kind TEXT NOT NULL, target_id TEXT NOT NULL, tick INTEGER NOT NULL,
  PRIMARY KEY(tenant_id, person_id, target_kind, target_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embedding_dirty_by_tick ON embedding_dirty(tick);
"""
    + _target_triggers()
    + _embedding_triggers()
)
