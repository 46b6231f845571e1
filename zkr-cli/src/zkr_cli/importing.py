"""``zkr import FILE``: JSON lines of ``remember`` requests, stored once each.

Every line is one ``remember`` request, validated exactly as ``zkr remember`` validates its stdin.
A line is atomic: a refused line leaves nothing behind, and the lines around it are stored. Lines
are committed in batches (one transaction per :data:`BATCH_LINES` lines); a crash or a kill loses
at most the uncommitted batch, and a re-run stores it then (the lines before it are replays).

New captures are written together (:class:`zkr.writes.bulk.CaptureBatch`: the rows, feed and
search projections ``remember`` writes for each, with reused statements); a line whose key is
already stored is replayed through ``remember`` itself, after the captures before it are written.

Idempotent: a line's ``ingestion_key`` makes a second run a replay. A line without one gets a key
derived from its content (``import-sha256:`` + the SHA-256 of the request's canonical JSON), so a
re-run stores nothing twice either; two identical keyless lines are one memory. Such a key would
let a guess of the text be checked, so ``forget`` replaces it (``import-erased:<source id>``,
docs/erasure.md): after a forget, a keyless line of that text is a new memory again, while a line
whose own ``ingestion_key`` names a forgotten memory is dropped and counted in ``dropped``.

Progress goes to stderr when stderr is a terminal; the summary (``stored``, ``replayed``,
``refused`` with each line number and reason, ``lines``) is the command's one output line. Only the
first :data:`MAX_REFUSED_LISTED` refused lines are listed (``refused_count`` counts them all), so a
file of millions of bad lines does not grow the summary without bound.
"""

from __future__ import annotations

import hashlib
import itertools
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, cast

import zkr.feed.erasure as _erasure

if TYPE_CHECKING:
    from zkr import models as m
    from zkr.db import MemoryDb
    from zkr.errors import ZkrError
    from zkr.writes.bulk import CaptureBatch

__all__ = [
    "BATCH_LINES",
    "DERIVED_KEY_PREFIX",
    "MAX_REFUSED_LISTED",
    "ImportSummary",
    "derived_key",
    "import_lines",
]

#: Lines per transaction (what a kill can lose and a re-run then stores).
BATCH_LINES = 2000
#: Prefix of the ingestion key given to a line that has none (one definition, in zkr-core, which
#: knows to replace such keys when it erases their source).
DERIVED_KEY_PREFIX = _erasure.DERIVED_KEY_PREFIX
#: Refused lines listed with their reason in the summary (all are counted).
MAX_REFUSED_LISTED = 1000
#: Bytes read at a time while skipping the rest of an over-long line.
_SKIP_PIECE = 1 << 16
#: Seconds between two progress updates on a terminal.
_PROGRESS_EVERY = 0.2


@dataclass
class ImportSummary:
    """What an import did."""

    lines: int = 0
    stored: int = 0
    replayed: int = 0
    #: Lines whose ``ingestion_key`` names a forgotten memory: not stored (erasure wins).
    dropped: int = 0
    refused: list[dict[str, Any]] = field(default_factory=list)
    refused_count: int = 0

    def refuse(self, line: int, error: str) -> None:
        self.refused_count += 1
        if len(self.refused) < MAX_REFUSED_LISTED:
            self.refused.append({"line": line, "error": error})

    def to_json(self) -> dict[str, Any]:
        """What ``zkr import`` prints: every field (``refused`` capped, ``refused_count`` not)."""
        return asdict(self)


def derived_key(request: m.RememberRequest) -> str:
    """The ingestion key of a keyless line: a digest of everything the request stores."""
    from zkr.jsonio import canonical_dumps

    body = request.model_dump(mode="json", by_alias=True, exclude={"ingestion_key"})
    digest = hashlib.sha256(canonical_dumps(body).encode("utf-8")).hexdigest()
    return DERIVED_KEY_PREFIX + digest


def _numbered_lines(stream: BinaryIO, cap: int) -> Iterator[tuple[int, bytes]]:
    """Each line without its line ending, read in bounded pieces: a line longer than *cap* bytes
    (plus ``\r\n``) is handed on as its first ``cap + 1`` bytes, which the request size check
    refuses, and the rest of it is skipped without ever being held (a file may hold one 16 GiB
    line)."""
    number = 0
    while raw := stream.readline(cap + 3):
        number += 1
        if len(raw) == cap + 3 and not raw.endswith(b"\n"):
            while (rest := stream.readline(_SKIP_PIECE)) and not rest.endswith(b"\n"):
                pass
            yield number, raw[: cap + 1]
            continue
        yield number, raw.rstrip(b"\r\n")


class _Progress:
    """A one-line counter rewritten in place on a terminal; silent otherwise."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream if stream is not None and stream.isatty() else None
        self.shown = 0.0

    def update(self, summary: ImportSummary, *, final: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not final and now - self.shown < _PROGRESS_EVERY:
            return
        self.shown = now
        self.stream.write(
            f"\rimport: line {summary.lines}: {summary.stored} stored, {summary.replayed} replayed,"
            f" {summary.refused_count} refused"
        )
        if final:
            self.stream.write("\n")
        self.stream.flush()


def import_lines(
    db: MemoryDb, stream: BinaryIO, *, progress: TextIO | None = None
) -> ImportSummary:
    """Store every good line of *stream*; report the others by line number."""
    from zkr.writes.bulk import CaptureBatch, journals_in_memory

    summary = ImportSummary()
    shown = _Progress(progress)
    lines = _numbered_lines(stream, _max_request_bytes())
    done = False
    with journals_in_memory(db.conn):
        while not done:
            # A transaction's lines are read and parsed first, so that one query per scope
            # tells which of their keys are stored (CaptureBatch.read_keys).
            chunk = [(number, _parse(raw)) for number, raw in itertools.islice(lines, BATCH_LINES)]
            done = len(chunk) < BATCH_LINES
            with db.atomic() as conn:
                batch = CaptureBatch(conn)
                batch.read_keys(_keys_of(chunk))
                for number, parsed in chunk:
                    summary.lines = number
                    if parsed is not None:
                        _one(db, batch, number, parsed, summary)
                    shown.update(summary)
                batch.flush()
    shown.update(summary, final=True)
    return summary


def _max_request_bytes() -> int:
    from zkr.operations import MAX_REQUEST_BYTES

    return MAX_REQUEST_BYTES


def _parse(raw: bytes) -> m.RememberRequest | ZkrError | None:
    """A line's request, with its ingestion key (derived when it has none); the refusal of a bad
    line; ``None`` for a blank one."""
    from zkr.errors import ZkrError
    from zkr.operations import OPERATIONS, parse

    if not raw.strip():
        return None
    try:
        request = cast("m.RememberRequest", parse(OPERATIONS["remember"], raw))
        if request.ingestion_key is None:
            request = request.model_copy(update={"ingestion_key": derived_key(request)})
    except ZkrError as exc:
        return exc
    return request


def _keys_of(
    chunk: list[tuple[int, m.RememberRequest | ZkrError | None]],
) -> Iterator[tuple[str, str, str]]:
    from zkr.errors import ZkrError

    for _, parsed in chunk:
        if parsed is not None and not isinstance(parsed, ZkrError):
            yield parsed.tenant_id, parsed.person_id, str(parsed.ingestion_key)


def _one(
    db: MemoryDb,
    batch: CaptureBatch,
    number: int,
    parsed: m.RememberRequest | ZkrError,
    summary: ImportSummary,
) -> None:
    """Queue one new line in *batch*, or replay it (``remember`` in a savepoint of the batch's
    transaction), or drop it, or refuse it."""
    from zkr.errors import ZkrError
    from zkr.operations import OPERATIONS
    from zkr.writes.bulk import KeyState

    if isinstance(parsed, ZkrError):
        summary.refuse(number, parsed.message)
        return
    request = parsed
    try:
        state = batch.key_state(request.tenant_id, request.person_id, str(request.ingestion_key))
        if state is KeyState.ERASED:
            summary.dropped += 1
            return
        if state is KeyState.NEW:
            batch.add(request)
            summary.stored += 1
            return
        batch.flush()  # the replay sees every line before it
        OPERATIONS["remember"].call(db, request)
    except ZkrError as exc:
        summary.refuse(number, exc.message)
        return
    summary.replayed += 1


def open_input(path: str) -> BinaryIO:
    """The stream to import: *path*, or stdin for ``-``."""
    if path == "-":
        return sys.stdin.buffer
    # Closed by the caller (it is not closed when it is stdin).
    return open(path, "rb")
