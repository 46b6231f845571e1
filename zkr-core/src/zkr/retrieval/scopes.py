"""``scopes`` (an addition): the persons of one tenant, paged.

A scope exists once anything was written to it: every mutation appends a commit to
``memory_commits``, whose index ``memory_commits_scope`` is ordered by (tenant, person, sequence).
A page is found with ``limit + 1`` seeks of that index (each "the first person after the last
one"), never a scan of the tenant's commits, so a page costs the same whatever the tenant holds.
Paging is keyset: the opaque cursor is the last person listed, and persons that appear later never
shift it. Only the requested tenant's rows are ever read: another tenant's persons look missing.
"""

from __future__ import annotations

import base64
import binascii
import sqlite3

from zkr import models as m
from zkr.errors import InvalidRequest
from zkr.jsonio import compact_len
from zkr.store.validation import require_text
from zkr.writes.profiles import MAX_READ_PAGE_BYTES

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr.store.database import Database

__all__ = ["decode_scopes_cursor", "encode_scopes_cursor", "scopes"]

_CURSOR_PREFIX = "s1:"
_INVALID_CURSOR = "cursor is not a scopes cursor"

_FIRST = "SELECT person_id FROM memory_commits WHERE tenant_id = ? ORDER BY person_id LIMIT 1"
_NEXT = (
    "SELECT person_id FROM memory_commits WHERE tenant_id = ? AND person_id > ?"
    " ORDER BY person_id LIMIT 1"
)


def encode_scopes_cursor(person_id: str) -> str:
    """The opaque cursor after *person_id*."""
    raw = f"{_CURSOR_PREFIX}{person_id}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_scopes_cursor(cursor: str) -> str:
    """The person a cursor made by :func:`encode_scopes_cursor` continues after.

    :raises InvalidRequest: anything else.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        raise InvalidRequest(_INVALID_CURSOR) from None
    if not raw.startswith(_CURSOR_PREFIX) or len(raw) == len(_CURSOR_PREFIX):
        raise InvalidRequest(_INVALID_CURSOR)
    return raw[len(_CURSOR_PREFIX) :]


def _persons_after(
    conn: sqlite3.Connection, tenant_id: str, after: str | None, count: int
) -> list[str]:
    """Up to *count* persons of the tenant after *after* (from the first when ``None``)."""
    persons: list[str] = []
    while len(persons) < count:
        last = persons[-1] if persons else after
        row = (
            conn.execute(_FIRST, (tenant_id,))
            if last is None
            else conn.execute(_NEXT, (tenant_id, last))
        ).fetchone()
        if row is None:
            break
        persons.append(str(row[0]))
    return persons


def scopes(db: Database, request: m.ScopesRequest) -> m.ScopesPage:
    """One page of the tenant's persons, in ascending order of person id.

    The page holds at most ``limit`` persons (0 -> 10, at most 100) and at most 1,000,000 bytes of
    compact JSON items (always at least one); ``next_cursor`` continues after its last person.

    :raises InvalidRequest: a blank tenant, a cursor that is not one.
    """
    require_text(request.tenant_id, "tenant_id")
    after = None if request.cursor is None else decode_scopes_cursor(request.cursor)
    limit = m.bounded_limit(request.limit)
    with db.atomic(write=False) as conn:
        persons = _persons_after(conn, request.tenant_id, after, limit + 1)
    page: list[m.ScopeEntry] = []
    size = 2  # "[]"
    for person_id in persons[:limit]:
        item = m.ScopeEntry(person_id=person_id)
        item_size = compact_len(item.model_dump(mode="json")) + (1 if page else 0)
        if page and size + item_size > MAX_READ_PAGE_BYTES:
            break
        page.append(item)
        size += item_size
    more = len(persons) > len(page)
    return m.ScopesPage(
        items=page, next_cursor=encode_scopes_cursor(page[-1].person_id) if more else None
    )
