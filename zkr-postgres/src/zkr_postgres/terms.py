"""The replica's recall terms: each text as zkr's recall index stores it, and a capture's context.

zkr's recall ranking matches a question's words against its recall index
(:mod:`zkr.store.recall_index`): each capture's text analysed for its language (Snowball stems,
bigrams of Chinese, Japanese and Thai runs) and tokenized by FTS5 (folded, Porter-stemmed), plus
the same terms of its timeline neighbours as context. The replica stores those very terms —
computed by zkr-core (:func:`zkr.retrieval.replica_parts.recall_terms`), not by a PostgreSQL text
search configuration — in ``terms`` (a source's text, a claim's statement) and ``context`` (a
source's neighbours' terms); the tsvector, term frequencies and length are generated from them
(``zkr_postgres.schema``, migration 5). A bulk loader writes ``terms`` with :func:`terms_of` and
``context`` with :data:`CONTEXT_SQL` (or lets ``apply`` refresh it).
"""

from __future__ import annotations

from collections.abc import Sequence

from zkr.retrieval import replica_parts as core
from zkr_postgres._db import Conn

__all__ = [
    "CONTEXT_SQL",
    "MAX_TERM_BYTES",
    "backfill_terms",
    "claim_terms",
    "source_terms",
    "terms_of",
]

#: A longer token is left out: a tsvector lexeme holds at most 2 KiB, and no question holds one.
MAX_TERM_BYTES = 1024


def terms_of(texts: Sequence[str]) -> list[str]:
    """Each text's recall terms, space-separated, in order (what ``terms`` holds)."""
    return [
        " ".join(term for term in terms if len(term.encode()) <= MAX_TERM_BYTES)
        for terms in core.recall_terms(texts)
    ]


def source_terms(content: str) -> str:
    """A capture's ``terms``: its text's recall terms."""
    return terms_of([content])[0]


def claim_terms(subject: str, predicate: str, value: str) -> str:
    """A claim's ``terms``: its statement read as words (``alice lives in Lisbon``)."""
    return terms_of([core.statement_text(subject, predicate, value)])[0]


def _near(offset: int) -> str:
    function = "lag" if offset < 0 else "lead"
    return (
        f"{function}(terms, {abs(offset)}) OVER w AS n{offset + 10},"
        f" {function}(captured_at::numeric, {abs(offset)}) OVER w AS t{offset + 10}"
    )


_OFFSETS = [*range(-core.BEFORE, 0), *range(1, core.AFTER + 1)]
#: Every live capture's ``context`` in *one* scope (``%(t)s``, ``%(p)s``; all scopes when those
#: are NULL), set-wise: the terms of the up to ``BEFORE`` captures before it and ``AFTER`` after
#: it on its timeline (same kind, by ``captured_at`` then arrival), within the session gap — the
#: recall index's window (:func:`zkr.store.recall_index.window_around`).
CONTEXT_SQL = f"""
WITH ordered AS (
  SELECT tenant_id, person_id, id, captured_at::numeric AS at, {", ".join(map(_near, _OFFSETS))}
    FROM zkr.sources
   WHERE deleted_at IS NULL AND (%(t)s::text IS NULL OR (tenant_id = %(t)s AND person_id = %(p)s))
  WINDOW w AS (PARTITION BY tenant_id, person_id, kind ORDER BY captured_at, seq))
UPDATE zkr.sources s SET context = concat_ws(' ', {
    ", ".join(
        f"CASE WHEN t{o + 10} BETWEEN at - {core.SESSION_GAP_SECONDS}"
        f" AND at + {core.SESSION_GAP_SECONDS} THEN nullif(n{o + 10}, '') END"
        for o in _OFFSETS
    )
})
  FROM ordered o
 WHERE s.tenant_id = o.tenant_id AND s.person_id = o.person_id AND s.id = o.id
"""


def backfill_terms(conn: Conn) -> None:
    """Compute ``terms`` of every source and claim from its stored text, then every context
    (migration 5, in the migration's transaction)."""
    for table, text in (
        ("sources", "content"),
        ("claims", "subject || ' ' || replace(predicate, '_', ' ') || ' ' || value"),
    ):
        conn.execute(
            "CREATE TEMP TABLE zkr_terms(tenant_id text, person_id text, id text, terms text)"
            " ON COMMIT DROP"
        )
        with conn.cursor(name=f"zkr_backfill_{table}") as rows:
            rows.itersize = 2000
            rows.execute(f"SELECT tenant_id, person_id, id, {text} FROM zkr.{table}")
            while batch := rows.fetchmany(2000):
                terms = terms_of([str(row[3]) for row in batch])
                with conn.cursor().copy("COPY zkr_terms FROM STDIN") as copy:
                    for row, found in zip(batch, terms, strict=True):
                        copy.write_row((row[0], row[1], row[2], found))
        conn.execute(
            f"UPDATE zkr.{table} x SET terms = n.terms FROM zkr_terms n"
            " WHERE x.tenant_id = n.tenant_id AND x.person_id = n.person_id AND x.id = n.id"
        )
        conn.execute("DROP TABLE zkr_terms")
    conn.execute(CONTEXT_SQL, {"t": None, "p": None})
