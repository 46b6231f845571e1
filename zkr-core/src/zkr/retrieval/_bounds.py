"""Bounds on the work of one search (issue 18, defect 2).

FTS5 evaluates a phrase of N tokens at a cost of about N times the tokens' frequency in the whole
index (every tenant's rows: ``source_fts`` is one index), and a repeated token makes its position
matching quadratic. The phrase query is the whole user query, so a long query of common words
could take minutes and gigabytes, even for a scope that holds nothing. Three bounds keep every
search small without changing what an ordinary query answers:

* **A phrase that cannot match in scope is not run.** A row matches a phrase of N tokens only if
  it holds at least N tokens. A query holds at least :func:`phrase_tokens_at_least` tokens (a lower
  bound that never overcounts FTS5's unicode61 tokenizer), and FTS5's own ``docsize`` table gives
  every row's token count; when no row of the scope is long enough, the phrase's rows are known to
  be none without asking FTS5. The answer is exactly the same.
* **A phrase of more than** :data:`MAX_PHRASE_TOKENS` **tokens is not run as a phrase** (its
  words still recall through the token query). This is the one place where a search can answer
  differently from zkr 0.2.3: for a query of more than 256 words that appears verbatim in a source
  of the scope. Memory use of FTS5 grows with the phrase length before any budget can interrupt it,
  so such a phrase is never handed to it.
* **A scope without a live source runs no full-text query.** Every lexical row resolves to a
  live source of the scope (the resolution joins nothing else), so there the lists are known to
  be empty; otherwise an empty scope would pay for bm25 over every other tenant's matches.

The fourth bound, every search's time budget, is the store's (:mod:`zkr.store.budget`): it also
bounds the dense lane's query embedding, below this layer.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

__all__ = [
    "MAX_PHRASE_TOKENS",
    "phrase_is_worth_running",
    "phrase_tokens_at_least",
    "scope_has_live_source",
]

#: A longer phrase is never given to FTS5 (see the module docstring).
MAX_PHRASE_TOKENS = 256
#: Phrases of more tokens than this are checked against the scope's longest row first; shorter
#: ones (nearly every real query) run directly, as they always did.
_CHECK_SCOPE_ABOVE = 16

# unicode61 treats every ASCII character but [0-9A-Za-z] as a separator, and non-ASCII characters
# by their Unicode category. A maximal run between ASCII separators that holds an ASCII letter or
# digit therefore holds at least one token: counting such runs never counts more tokens than FTS5.
_RUN = re.compile(r"[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")
_ASCII_ALNUM = re.compile(r"[0-9A-Za-z]")

_SCOPE_ROW_SIZES = """
SELECT d.sz FROM sources AS s JOIN source_fts_docsize AS d ON d.id = s.rowid
WHERE s.tenant_id = :tenant AND s.person_id = :person
UNION ALL
SELECT d.sz FROM source_fts AS f JOIN source_fts_docsize AS d ON d.id = f.rowid
WHERE f.rowid < 0 AND f.tenant_id = :tenant AND f.person_id = :person
"""


_LIVE_SOURCE = (
    "SELECT 1 FROM sources WHERE tenant_id = ? AND person_id = ? AND deleted_at IS NULL LIMIT 1"
)


def scope_has_live_source(conn: sqlite3.Connection, tenant_id: str, person_id: str) -> bool:
    """Whether the scope holds a live source (one index seek); without one no lexical row of a
    search can resolve, whatever the query."""
    return conn.execute(_LIVE_SOURCE, (tenant_id, person_id)).fetchone() is not None


def phrase_tokens_at_least(query: str, *, stop_after: int) -> int:
    """A lower bound on the number of tokens FTS5 finds in *query*, counted up to *stop_after*."""
    count = 0
    for run in _RUN.finditer(query):
        if _ASCII_ALNUM.search(run.group()):
            count += 1
            if count >= stop_after:
                break
    return count


def _varints(blob: bytes) -> Iterator[int]:
    """The SQLite varints of an FTS5 ``docsize`` record (one token count per column)."""
    value = 0
    for byte in blob:  # token counts fit in 8 bytes: the 9-byte form never occurs
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            yield value
            value = 0


def _scope_holds_a_row_of(
    conn: sqlite3.Connection, tenant_id: str, person_id: str, tokens: int
) -> bool:
    """Whether some FTS row of the scope has at least *tokens* tokens (True when unknown)."""
    try:
        rows = conn.execute(_SCOPE_ROW_SIZES, {"tenant": tenant_id, "person": person_id})
        for (size,) in rows:
            if not isinstance(size, bytes) or sum(_varints(size)) >= tokens:
                return True
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # an FTS table without column sizes: cannot tell
            return True
        raise
    return False


def phrase_is_worth_running(
    conn: sqlite3.Connection, query: str, tenant_id: str, person_id: str
) -> bool:
    """Whether the phrase query of *query* should be given to FTS5 at all (module docstring)."""
    tokens = phrase_tokens_at_least(query, stop_after=MAX_PHRASE_TOKENS + 1)
    if tokens > MAX_PHRASE_TOKENS:
        return False
    if tokens > _CHECK_SCOPE_ABOVE:
        return _scope_holds_a_row_of(conn, tenant_id, person_id, tokens)
    return True
