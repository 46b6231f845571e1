"""``zkr import --from FORMAT PATH --tenant T --person P``: another tool's export, once each.

The importer named by ``--from`` (a ``zkr_register_importers`` plugin; zkr-core ships
``chatgpt``, ``claude``, ``mem0`` and ``notes``) reads the whole export first, before the database
is opened: a file it refuses (truncated JSON, another tool's export) fails the command with one
line and nothing is written.
Then every message is stored in one transaction (:func:`zkr.writes.messages.remember_messages`),
each under the ingestion key the importer derived from the source's ids, so a second import of the
same export stores nothing and reports every message as replayed.

Progress goes to stderr when stderr is a terminal. The summary (the command's one output line)
says what was read, stored, replayed, skipped (by reason) and refused (a folder's unreadable
files, listed up to :data:`MAX_REFUSED_LISTED`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from zkr.db import MemoryDb
    from zkr.plugins.importers import Importer
    from zkr.writes.messages import Message, MessageCounts

__all__ = ["MAX_REFUSED_LISTED", "FromSummary", "import_from", "importer_named"]

#: Refused items listed with their reason in the summary (all are counted).
MAX_REFUSED_LISTED = 1000
#: Seconds between two progress updates on a terminal.
_PROGRESS_EVERY = 0.2


@dataclass
class FromSummary:
    """What an import of another tool's export did."""

    format: str
    read: int = 0
    stored: int = 0
    replayed: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    refused: list[dict[str, str]] = field(default_factory=list)
    refused_count: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "read": self.read,
            "stored": self.stored,
            "replayed": self.replayed,
            "skipped": dict(sorted(self.skipped.items())),
            "skipped_count": sum(self.skipped.values()),
            "refused": self.refused,
            "refused_count": self.refused_count,
        }


def importer_named(name: str) -> Importer:
    """The registered importer *name*.

    :raises InvalidRequest: none is registered under that name (the message lists those that are).
    """
    from zkr.errors import InvalidRequest
    from zkr.plugins import get_importers

    importers = get_importers()
    if name not in importers:
        known = ", ".join(sorted(importers)) or "none"
        raise InvalidRequest(f"unknown import format {name!r} (installed: {known})")
    importer: Importer = importers[name]
    return importer


class _Progress:
    """A one-line counter rewritten in place on a terminal; silent otherwise."""

    def __init__(self, stream: TextIO | None, summary: FromSummary) -> None:
        self.stream = stream if stream is not None and stream.isatty() else None
        self.summary = summary
        self.shown = 0.0

    def show(self, line: str, *, final: bool = False, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not (final or force) and now - self.shown < _PROGRESS_EVERY:
            return
        self.shown = now
        self.stream.write(f"\rimport {self.summary.format}: {line}" + ("\n" if final else ""))
        self.stream.flush()

    def reading(self) -> None:
        self.show(f"read {self.summary.read} message(s)")

    def storing(self, counts: MessageCounts, *, force: bool = False) -> None:
        done = counts.stored + counts.replayed
        self.show(
            f"{done}/{self.summary.read} message(s): {counts.stored} stored,"
            f" {counts.replayed} replayed",
            force=force,
        )


def import_from(
    open_db: Callable[[], MemoryDb],
    importer: Importer,
    path: Path,
    *,
    tenant_id: str,
    person_id: str,
    recorded_at: int,
    progress: TextIO | None = None,
) -> FromSummary:
    """Read everything *importer* finds at *path*; only then open the database (*open_db*, closed
    here) and store it in one transaction, so a refused file never even creates the database.

    :raises InvalidRequest: the importer refused the file, or a message was refused while storing
        (nothing is written in either case).
    """
    from zkr.store.validation import require_scope
    from zkr.writes.messages import remember_messages

    require_scope(tenant_id, person_id)
    summary = FromSummary(format=importer.name)
    shown = _Progress(progress, summary)
    messages = _read(importer, path, summary, shown)
    with open_db() as db:
        counts = remember_messages(
            db, tenant_id, person_id, messages, recorded_at=recorded_at, progress=shown.storing
        )
    summary.stored, summary.replayed = counts.stored, counts.replayed
    shown.storing(counts, force=True)
    shown.show(
        f"{summary.read} message(s): {summary.stored} stored, {summary.replayed} replayed,"
        f" {sum(summary.skipped.values())} skipped, {summary.refused_count} refused",
        final=True,
    )
    return summary


def _read(importer: Importer, path: Path, summary: FromSummary, shown: _Progress) -> list[Message]:
    """Every message of the export, counting what is skipped and refused on the way."""
    from zkr.plugins.importers import Refused, Skipped
    from zkr.writes.messages import check_message

    messages: list[Message] = []
    for item in importer.read(path):
        if isinstance(item, Skipped):
            summary.skipped[item.reason] += 1
        elif isinstance(item, Refused):
            summary.refused_count += 1
            if len(summary.refused) < MAX_REFUSED_LISTED:
                summary.refused.append({"item": item.where, "error": item.error})
        else:
            check_message(item)
            messages.append(item)
            summary.read += 1
            shown.reading()
    return messages
