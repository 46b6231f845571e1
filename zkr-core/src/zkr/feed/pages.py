"""Receiving an export page: the checks and the event bookkeeping every replica shares.

zkr's own ``apply`` (:mod:`zkr.feed.apply`, into SQLite) and zkr-postgres's sync (into PostgreSQL)
hold an upstream's events the same way (``docs/replication.md``): per (scope, upstream), the
applied commits plus at most one commit whose events are still arriving. What differs is only where
they keep them, so the protocol itself lives here once:

- :func:`check_header` refuses a page of another format or record schema;
- :func:`page_events` decodes a page into :class:`PageEvent` values, refusing a page that has a hole
  (it must continue the cursor it was exported with, and itself), a record of an unknown kind, a
  malformed record or a record of another scope;
- :meth:`FeedPosition.receive` tells, for each event, whether it is already applied, already
  staged, or new (and then counts it), refusing an event that does not continue what is held.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from enum import Enum

from zkr import models as m
from zkr.errors import ExportError
from zkr.feed.export import EXPORT_FORMAT
from zkr.store.commits import scope_of, serialize_record
from zkr.store.record_kinds import RECORD_MODEL_NAMES
from zkr.store.schema import CONTRACT_SCHEMA_VERSION

# typing's TYPE_CHECKING without importing typing (nor dataclasses, nor pydantic): a one-shot
# ``apply`` runs this on light classes (zkr.fastpath; issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from pydantic import BaseModel

    from zkr.store.records import ExportRecord
else:
    from zkr._named_tuple import NamedTuple

__all__ = ["FeedPosition", "Held", "PageEvent", "check_header", "page_events", "parse_record"]


class Held(Enum):
    """Where an event of a page stands against what the replica holds."""

    APPLIED = "applied"  #: its commit was applied already: a replay, nothing to do
    STAGED = "staged"  #: waiting in staging already: a replay (the replica may compare it)
    NEW = "new"  #: the next event: stage it


class PageEvent(NamedTuple):
    """One event of a page: its place in the upstream feed and its decoded record."""

    sequence: int
    recorded_at: int
    event_count: int
    event_index: int
    kind: str
    record: BaseModel

    @property
    def export_record(self) -> ExportRecord:
        return self.kind, self.record

    @property
    def payload(self) -> str:
        """The event as staged: the record's canonical serialisation (the upstream feed's own)."""
        return serialize_record((self.kind, self.record))


class FeedPosition:
    """What a replica holds of one (scope, upstream): applied commits and one staged commit."""

    __slots__ = (
        "applied_commit",
        "applied_event_count",
        "staged_commit",
        "staged_event_count",
        "staged_events",
        "staged_recorded_at",
    )

    def __init__(
        self,
        applied_commit: int,
        applied_event_count: int,
        staged_commit: int | None = None,
        staged_recorded_at: int = 0,
        staged_event_count: int = 0,
        staged_events: int = 0,
    ) -> None:
        self.applied_commit = applied_commit
        self.applied_event_count = applied_event_count
        self.staged_commit = staged_commit
        self.staged_recorded_at = staged_recorded_at
        self.staged_event_count = staged_event_count
        self.staged_events = staged_events

    def _values(self) -> tuple[int | None, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FeedPosition) and self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"FeedPosition({inner})"

    @classmethod
    def from_rows(
        cls, applied: Sequence[int] | None, staged: Sequence[Sequence[int]]
    ) -> FeedPosition:
        """The position a replica's durable rows describe.

        :param applied: ``(applied_commit, applied_event_count)`` from the cursor row, if any.
        :param staged: per staged commit, in sequence order: ``(commit_sequence, recorded_at,
            event_count, events held, highest event index held)``.
        :raises ExportError: staging holds more than one commit, or a commit with a hole.
        """
        position = cls(*(applied or (0, 0)))
        if len(staged) > 1 or (staged and staged[0][4] != staged[0][3] - 1):
            raise ExportError("replica staging is inconsistent: events are missing")
        if staged:
            sequence, recorded_at, count, held, _ = staged[0]
            position.staged_commit, position.staged_recorded_at = sequence, recorded_at
            position.staged_event_count, position.staged_events = count, held
        return position

    def cursor(self) -> tuple[int, int]:
        """The upstream cursor just after the last event held (``(0, -1)``: nothing held)."""
        if self.staged_commit is not None:
            return self.staged_commit, self.staged_events - 1
        if self.applied_commit == 0:
            return 0, -1
        return self.applied_commit, self.applied_event_count - 1

    def commit_whole(self) -> bool:
        """Whether the staged commit has all of its events (and may be applied)."""
        return self.staged_commit is not None and self.staged_events == self.staged_event_count

    def receive(self, event: PageEvent) -> Held:
        """Place *event* against what is held; a :attr:`Held.NEW` event is counted as staged.

        :raises ExportError: the event does not continue what is held (a skipped event or commit,
            or an event count or time that changed).
        """
        if event.sequence <= self.applied_commit:
            if (
                event.sequence == self.applied_commit
                and event.event_index >= self.applied_event_count
            ):
                raise ExportError(f"export commit {event.sequence} event count does not match")
            return Held.APPLIED
        if self.staged_commit is None:
            if event.event_index != 0:
                raise ExportError(
                    f"export page skips events before commit {event.sequence} index 0"
                )
            self.staged_commit, self.staged_recorded_at = event.sequence, event.recorded_at
            self.staged_event_count, self.staged_events = event.event_count, 0
        elif event.sequence != self.staged_commit:
            raise ExportError(
                f"export page skips events of commit {self.staged_commit} after index"
                f" {self.staged_events - 1}"
            )
        elif (event.event_count, event.recorded_at) != (
            self.staged_event_count,
            self.staged_recorded_at,
        ):
            raise ExportError(f"export commit {event.sequence} event count does not match")
        if event.event_index < self.staged_events:
            return Held.STAGED
        if event.event_index > self.staged_events:
            raise ExportError(
                f"export page skips events of commit {event.sequence} after index"
                f" {self.staged_events - 1}"
            )
        self.staged_events += 1
        return Held.NEW

    def applied(self) -> None:
        """The staged commit was applied: it becomes the applied position."""
        assert self.staged_commit is not None
        self.applied_commit, self.applied_event_count = self.staged_commit, self.staged_event_count
        self.staged_commit, self.staged_recorded_at = None, 0
        self.staged_event_count = self.staged_events = 0


def check_header(page: m.ExportPage) -> None:
    """Refuse a page this replica cannot read (contract §7.1's format and schema numbers)."""
    if page.export_format != EXPORT_FORMAT:
        raise ExportError(f"unsupported export_format {page.export_format}; expected 1")
    if page.database_schema_version != CONTRACT_SCHEMA_VERSION:
        raise ExportError(
            f"unsupported database_schema_version {page.database_schema_version}; expected 8"
        )


def parse_record(raw: Any) -> ExportRecord:
    """A decoded ``{"kind", "record"}`` envelope as a validated record.

    :raises ExportError: an unknown kind, or a record its model refuses.
    """
    kind = raw.get("kind") if isinstance(raw, dict) else None
    name = RECORD_MODEL_NAMES.get(kind) if isinstance(kind, str) else None
    if name is None:
        raise ExportError(f"export record kind {json.dumps(kind)} is not supported")
    try:
        # On light classes (a one-shot apply) the fast checker validated every record already.
        body = getattr(m, name).model_validate(raw.get("record"))
    except Exception as exc:
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise
        raise ExportError(f"export {kind} record is malformed: {exc.errors()[0]['msg']}") from None
    assert isinstance(kind, str)
    return kind, body


def page_events(
    page: m.ExportPage, cursor: tuple[int, int], scope: tuple[str, str]
) -> Iterator[PageEvent]:
    """The page's events, checked to follow *cursor* and each other without a hole, every record
    valid and of *scope*.

    :raises ExportError: a hole, an empty or overlong commit, a bad record, another scope's record.
    """
    previous, previous_count = cursor, None
    for commit in page.commits:
        first, count = commit.first_event_index, commit.event_count
        if commit.sequence == previous[0]:
            continuous = first == previous[1] + 1
        else:
            whole = previous_count is None or previous[1] == previous_count - 1
            continuous = commit.sequence > previous[0] and first == 0 and whole
        if not continuous or not commit.records or first + len(commit.records) > count:
            raise ExportError(
                f"export page skips events before commit {commit.sequence} index {first}"
            )
        for offset, raw in enumerate(commit.records):
            kind, record = parse_record(raw)
            if scope_of((kind, record)) != scope:
                raise ExportError("export record scope does not match its commit")
            index = first + offset
            yield PageEvent(commit.sequence, commit.recorded_at, count, index, kind, record)
        previous, previous_count = (commit.sequence, first + len(commit.records) - 1), count
