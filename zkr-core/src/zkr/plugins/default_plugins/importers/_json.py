"""What the JSON importers share: reading the file, refusing it in one line, reading times."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from zkr.errors import InvalidRequest

__all__ = ["conversations", "iso_seconds", "load_json", "refuse", "text_field"]


def refuse(importer: str, path: Path, why: str) -> NoReturn:
    """Refuse the whole file with one line naming the importer, the file and the reason."""
    raise InvalidRequest(f"{importer}: {path.name}: {why}")


def load_json(importer: str, path: Path) -> Any:
    """The file's JSON value; a missing, unreadable, non-UTF-8 or truncated file is refused."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        refuse(importer, path, f"cannot read it ({exc.strerror or exc})")
    try:
        return json.loads(raw.decode("utf-8-sig"), parse_constant=_not_json)
    except _NotJson as exc:
        refuse(importer, path, f"not valid JSON: {exc.args[0]} is not a JSON number")
    except UnicodeDecodeError:
        refuse(importer, path, "not UTF-8 text")
    except json.JSONDecodeError as exc:
        refuse(
            importer,
            path,
            f"not valid JSON (truncated?): {exc.msg} (line {exc.lineno}, column {exc.colno})",
        )
    except RecursionError:
        refuse(importer, path, "JSON nested too deeply")


def conversations(importer: str, path: Path, export: str) -> list[Any]:
    """The conversations of a chat export (ChatGPT's and Claude's ``conversations.json`` are a
    JSON list of them); any other top level refuses the file."""
    data = load_json(importer, path)
    if not isinstance(data, list):
        refuse(importer, path, f"not a {export} export (the top level must be a list)")
    return data


class _NotJson(ValueError):
    """Python's json module reads ``NaN`` and ``Infinity``; JSON has no such numbers."""


def _not_json(constant: str) -> float:
    raise _NotJson(constant)


def text_field(value: object, where: str, importer: str, path: Path) -> str:
    """A required string field (an id); anything else refuses the file."""
    if isinstance(value, str) and value.strip():
        return value
    refuse(importer, path, f"{where} must be a non-empty string")


def iso_seconds(value: object, where: str, importer: str, path: Path) -> float:
    """Seconds since the epoch of an ISO 8601 time (no zone: UTC); anything else refuses."""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return moment.timestamp()
    refuse(importer, path, f"{where} must be an ISO 8601 time, not {value!r:.40}")
