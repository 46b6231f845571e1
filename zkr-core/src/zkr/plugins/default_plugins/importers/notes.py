"""``notes``: a folder of Markdown and plain-text notes (Obsidian, Logseq, any editor).

Every ``.md``, ``.markdown`` and ``.txt`` file under the folder (hidden files and folders, such
as ``.obsidian``, are left alone) is one ``document`` capture of its whole text, verbatim. Its
captured time is the ``date`` (or ``created``) of its YAML front matter — ``2024-05-01`` or an
ISO 8601 time, UTC when it names no zone — and else the file's modification time. The folder is
the conversation and the file's path inside it the message id; the key is
``notes:<folder name>:<path>`` (a note is imported once; one edited later is not imported again).

Skipped, and counted: empty notes and files of other types. Refused, and listed, while the rest
is imported: a note that is not UTF-8 text or cannot be read. A path that is not a folder (or a
single note file) is refused as a whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import ClassVar

from zkr import models as m
from zkr.plugins.default_plugins.importers._json import refuse
from zkr.plugins.importers import Importer, ImportItem, Message, Refused, Skipped

__all__ = ["NotesImporter", "front_matter_date"]

_NAME = "notes"
_SUFFIXES = (".md", ".markdown", ".txt")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_DATE_LINE = re.compile(r"^(?:date|created)[ \t]*:[ \t]*['\"]?([^'\"\r\n]+?)['\"]?[ \t]*$", re.M)


class NotesImporter(Importer):
    """Reads a folder of Markdown and plain-text notes."""

    name: ClassVar[str] = _NAME
    description: ClassVar[str] = "a folder of Markdown (.md) and plain-text (.txt) notes"

    def read(self, path: Path) -> Iterator[ImportItem]:
        if path.is_file():
            yield _note(path.parent, path)
            return
        if not path.is_dir():
            refuse(_NAME, path, "not a folder of notes")
        for file in sorted(_files(path)):
            yield _note(path, file)


def _files(root: Path) -> Iterator[Path]:
    for file in root.rglob("*"):
        relative = file.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or not file.is_file():
            continue
        yield file


def _note(root: Path, file: Path) -> ImportItem:
    name = file.relative_to(root).as_posix()
    if file.suffix.lower() not in _SUFFIXES:
        return Skipped(name, "not a Markdown or text file")
    try:
        text = file.read_bytes().decode("utf-8-sig")
        modified = file.stat().st_mtime
    except UnicodeDecodeError:
        return Refused(name, "not UTF-8 text")
    except OSError as exc:
        return Refused(name, f"cannot read it ({exc.strerror or exc})")
    if not text.strip():
        return Skipped(name, "empty note")
    at = front_matter_date(text)
    folder = root.name or _NAME
    when = modified if at is None else at
    return Message.from_ids(
        _NAME, folder, name, text=text, at=when, author="user", kind=m.SourceKind.document
    )


def front_matter_date(text: str) -> float | None:
    """Seconds of the front matter's ``date``/``created`` (UTC when it names no zone), if any."""
    block = _FRONT_MATTER.match(text)
    if block is None:
        return None
    line = _DATE_LINE.search(block.group(1))
    if line is None:
        return None
    value = line.group(1).strip()
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return None
        moment = datetime(day.year, day.month, day.day)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
