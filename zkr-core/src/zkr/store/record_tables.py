"""Each export record's table, described once, as data (public: replicas build on it).

A feed record (contract §7.3) is a stored row's after-mutation snapshot. One :class:`RecordTable`
per record kind says which table holds it and, column by column, which field of the record model
fills it and how SQLite stores it. Everything that moves a record between a model and a row is
generated from that: the SQLite upserts of ``apply`` and the readers that snapshot a row as a
record (:func:`read_record`, by column name, never by position), and the PostgreSQL replica's
upserts (zkr-postgres adds only its own columns: upstream, the NUL-exact text, the inline
locator). A table that gains a column gains it here, once.

Capture's inserts can come from the same descriptions (:func:`insert_sql` with
:meth:`RecordTable.sqlite_values`): a record built in memory is one row's values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from enum import Enum

from zkr import models as m
from zkr.jsonio import ordered_dumps

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, NamedTuple

    # Annotations only: a one-shot command reads records on light classes (zkr.fastpath).
    from pydantic import BaseModel

    #: How SQLite stores a field: as is, JSON-quoted (the contract's enum columns: source kind,
    #: relation, stability), or as a JSON array (a review's evidence ids).
    Storage = Literal["plain", "quoted", "json"]
else:
    from zkr._named_tuple import NamedTuple

__all__ = [
    "CLAIM",
    "CLAIM_EVIDENCE",
    "CORRECTION",
    "DAILY_REVIEW",
    "EVIDENCE",
    "EVIDENCE_LOCATOR",
    "PROFILE",
    "RECORD_TABLES",
    "SOURCE",
    "Column",
    "RecordTable",
    "insert_sql",
    "read_record",
    "upsert_sql",
]


class Column(NamedTuple):
    """One column: its *name* and the record field (*path*, dotted attribute names) it holds."""

    name: str
    path: str
    storage: Storage = "plain"
    #: Text a replica serves (search reads it): PostgreSQL keeps its NUL-exact original.
    served: bool = False
    #: Text a replica keeps but never serves.
    kept: bool = False
    #: It refers to rows of the same commit (a source's origins): SQLite sets it once they exist.
    deferred: bool = False


class RecordTable(NamedTuple):
    """Where one kind of export record is stored, column by column."""

    kind: str
    model: type[BaseModel]
    table: str
    columns: tuple[Column, ...]
    #: The row's key within its scope (tenant_id, person_id come first in every table).
    key: tuple[str, ...] = ("id",)
    #: Fields the table does not hold, with the value every record has for them.
    constants: Mapping[str, Any] | None = None

    def key_where(self, placeholder: str = "?") -> str:
        """The condition that finds one row by its scope and key."""
        names = ("tenant_id", "person_id", *self.key)
        return " AND ".join(f"{name} = {placeholder}" for name in names)

    @property
    def names(self) -> list[str]:
        return [column.name for column in self.columns]

    def column(self, name: str) -> Column:
        return next(column for column in self.columns if column.name == name)

    def values(self, record: BaseModel) -> dict[str, Any]:
        """Column name -> the record's value (an enum as its value; nothing encoded yet)."""
        return {column.name: _plain(_get(record, column.path)) for column in self.columns}

    def sqlite_values(self, record: BaseModel, names: Sequence[str] | None = None) -> list[Any]:
        """The values SQLite stores for *names* (default: every column), in that order."""
        wanted = self.names if names is None else names
        values = self.values(record)
        return [_to_sqlite(self.column(name).storage, values[name]) for name in wanted]

    def select_sql(self, where: str) -> str:
        """``SELECT <every column> FROM <table> WHERE <where>``: rows for :func:`read_record`."""
        return f"SELECT {', '.join(self.names)} FROM {self.table} WHERE {where}"


def _get(record: Any, path: str) -> Any:
    for part in path.split("."):
        if record is None:
            return None
        record = getattr(record, part)
    return record


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _to_sqlite(storage: Storage, value: Any) -> Any:
    if value is None or storage == "plain":
        return value
    if storage == "quoted":
        return json.dumps(value)
    return ordered_dumps(value)


def _from_sqlite(storage: Storage, stored: Any) -> Any:
    if stored is None or storage == "plain":
        return stored
    value = json.loads(stored)
    if storage == "quoted" and not isinstance(value, str):
        raise ValueError(f"stored enum is not a JSON string: {stored!r}")
    return value


def read_record(table: RecordTable, row: Mapping[str, Any]) -> BaseModel:
    """The record a SQLite row holds (*row*: column name -> stored value)."""
    fields: dict[str, Any] = dict(table.constants or {})
    for column in table.columns:
        fields[column.path] = _from_sqlite(column.storage, row[column.name])
    nested: dict[str, Any] = {}
    for path, value in fields.items():
        *parents, leaf = path.split(".")
        target = nested
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return table.model.model_validate(nested)


def insert_sql(target: str, names: Sequence[str], placeholder: str = "?") -> str:
    """``INSERT INTO target(names) VALUES (...)`` with one *placeholder* per column."""
    marks = ", ".join([placeholder] * len(names))
    return f"INSERT INTO {target}({', '.join(names)}) VALUES ({marks})"


def upsert_sql(
    target: str,
    names: Sequence[str],
    conflict: Sequence[str],
    *,
    placeholder: str = "?",
    where: str = "",
) -> str:
    """An insert that, on a row with the same *conflict* columns, sets every other column.

    *where* (optional) guards the update: a row it excludes is left alone (SQLite's scope check).
    """
    updates = ", ".join(f"{name} = excluded.{name}" for name in names if name not in conflict)
    return (
        f"{insert_sql(target, names, placeholder)} ON CONFLICT ({', '.join(conflict)})"
        f" DO UPDATE SET {updates}{where}"
    )


def _fields(
    *names: str, under: str = "", storage: Storage = "plain", **flags: bool
) -> tuple[Column, ...]:
    """Columns named as the record fields they hold (those of *under*, a nested body)."""
    prefix = f"{under}." if under else ""
    return tuple(Column(name, prefix + name, storage, **flags) for name in names)


_ID_AND_SCOPE = _fields("id", "tenant_id", "person_id")

SOURCE = RecordTable(
    "source",
    m.SourceRecord,
    "sources",
    (
        *_fields("id", "tenant_id", "person_id", "revision", under="source"),
        *_fields("kind", under="source", storage="quoted"),
        *_fields("content", under="source", served=True),
        *_fields("captured_at", "recorded_at", "deleted_at", under="source"),
        *_fields("ingestion_key", served=True),
        *_fields("origin_evidence_id", "origin_claim_id", deferred=True),
    ),
)

EVIDENCE = RecordTable(
    "evidence",
    m.EvidenceRecord,
    "evidence",
    (
        *_fields("id", "tenant_id", "person_id", "source_id", "source_revision", under="evidence"),
        *_fields("quote", under="evidence", served=True),
        *_fields("recorded_at", under="evidence"),
        *_fields("deleted_at"),
    ),
    # Never recorded (contract §7.3); the locator is its own table (EVIDENCE_LOCATOR).
    constants={"evidence.byte_range": None, "locator": None},
)

#: An evidence record's transcript locator (its fields are the ``LocatorInput``'s): its own table
#: in SQLite, keyed by the evidence, inline in PostgreSQL's evidence rows.
EVIDENCE_LOCATOR = RecordTable(
    "evidence",
    m.LocatorInput,
    "evidence_locators",
    (
        *_fields("device_id", "provider", "stream_id", "segment_id", kept=True),
        *_fields("start_ms", "end_ms"),
    ),
    key=("evidence_id",),
)

CLAIM = RecordTable(
    "claim",
    m.ClaimRecord,
    "claims",
    (
        *_ID_AND_SCOPE,
        *_fields("subject", "predicate", "value", served=True),
        *_fields("kind"),
        Column("valid_from", "valid_time.from_"),
        Column("valid_until", "valid_time.until"),
        Column("recorded_from", "recorded_time.from_"),
        Column("recorded_until", "recorded_time.until"),
        *_fields("status"),
    ),
)

CLAIM_EVIDENCE = RecordTable(
    "claim_evidence",
    m.ClaimEvidenceRecord,
    "claim_evidence",
    (
        *_fields("tenant_id", "person_id", "claim_id", "evidence_id"),
        *_fields("relation", storage="quoted"),
        *_fields("confidence_basis_points"),
    ),
    key=("claim_id", "evidence_id"),
)

CORRECTION = RecordTable(
    "correction",
    m.CorrectionRecord,
    "corrections",
    _fields(
        "tenant_id",
        "person_id",
        "superseded_claim_id",
        "claim_id",
        "source_id",
        "evidence_id",
        "valid_at",
        "recorded_at",
    ),
    key=("superseded_claim_id", "claim_id"),
)

PROFILE = RecordTable(
    "profile",
    m.ProfileRecord,
    "profile_entries",
    (
        *_ID_AND_SCOPE,
        *_fields("key", "value", kept=True),
        *_fields("stability", storage="quoted"),
        *_fields("claim_id", "recorded_at"),
    ),
)

DAILY_REVIEW = RecordTable(
    "daily_review",
    m.DailyReviewRecord,
    "daily_reviews",
    (
        *_ID_AND_SCOPE,
        *_fields("day", "summary", kept=True),
        *_fields("evidence_ids", storage="json"),
        *_fields("recorded_at"),
    ),
)

#: Every record kind held in a table of its own, by kind (deletions and erasures are events).
RECORD_TABLES: Mapping[str, RecordTable] = {
    table.kind: table
    for table in (SOURCE, EVIDENCE, CLAIM, CLAIM_EVIDENCE, CORRECTION, PROFILE, DAILY_REVIEW)
}
