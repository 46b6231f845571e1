"""OpenClaw's memory shapes <-> zkr retrieval items: the only place this mapping lives.

OpenClaw's memory tools speak in files: a hit is
``{path, startLine, endLine, score, snippet, source, citation}`` and a read is a line window
``{text, path, from, lines, truncated, nextFrom}`` (``MemorySearchResult`` / ``MemoryReadResult`` of
openclaw 2026.7.1-2). zkr answers with cited items
``{memory: {kind, id}, excerpt, relevance_basis_points, evidence_ids}``. Here an item becomes a
virtual file ``zkr://<kind>/<id>`` whose lines are the excerpt's lines, so ``memory_get`` can page
through exactly what ``memory_search`` showed, and the citation is the evidence id zkr cites.

Pure functions over plain JSON data: no database, no I/O.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "DEFAULT_READ_LINES",
    "INVALID_PATH",
    "MEMORY_PATH",
    "memory_path",
    "parse_memory_path",
    "read_window",
    "search_result",
    "search_results",
]

#: ``memory_get`` shows this many lines when the caller gives no ``lines`` (memory-core's default).
DEFAULT_READ_LINES = 50

#: The message OpenClaw sees for a path that is not one of ours (never echo the path back in it).
INVALID_PATH = "invalid zkr memory path"

#: Only what ``get`` can fetch. Ids are zkr's own; the character class keeps ``/``, spaces and
#: control characters out, so a path can never be read as anything but a record reference.
MEMORY_PATH = re.compile(r"zkr://(source|evidence|claim)/([A-Za-z0-9._:-]{1,200})")

_LINE_BREAK = re.compile(r"\r?\n")
_BASIS_POINTS = 10_000


def memory_path(kind: str, record_id: str) -> str:
    """The virtual file of one zkr record: ``zkr://claim/<id>``."""
    return f"zkr://{kind}/{record_id}"


def parse_memory_path(path: str) -> dict[str, str] | None:
    """The ``get`` target of a memory path, or None when the path is not a zkr record."""
    match = MEMORY_PATH.fullmatch(path)
    if match is None:
        return None
    return {"kind": match.group(1), "id": match.group(2)}


def _lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def search_result(item: dict[str, Any]) -> dict[str, Any]:
    """One retrieval item as a ``MemorySearchResult`` (plus memory-core's ``corpus`` tag).

    The line range covers the whole excerpt (``memory_get`` of the path returns it); the score is
    the relevance on OpenClaw's 0..1 scale; the citation is the evidence zkr cites for the item.
    """
    memory = item["memory"]
    return {
        "path": memory_path(memory["kind"], memory["id"]),
        "startLine": 1,
        "endLine": len(_lines(item["excerpt"])),
        "score": item["relevance_basis_points"] / _BASIS_POINTS,
        "snippet": item["excerpt"],
        "source": "memory",
        "citation": ", ".join(item["evidence_ids"]),
        "corpus": "memory",
    }


def search_results(pack: dict[str, Any], min_score: float | None = None) -> list[dict[str, Any]]:
    """A retrieval pack's items as search results, best first, keeping ``score >= min_score``."""
    results = [search_result(item) for item in pack["items"]]
    floor = 0.0 if min_score is None else min_score
    return [result for result in results if result["score"] >= floor]


def read_window(
    item: dict[str, Any], path: str, start: int | None = None, count: int | None = None
) -> dict[str, Any]:
    """A line window of an item's excerpt as a ``MemoryReadResult``.

    ``start`` is 1-based (default 1), ``count`` defaults to :data:`DEFAULT_READ_LINES`. When lines
    remain after the window, ``truncated`` is true and ``nextFrom`` is where the next window starts.
    """
    lines = _lines(item["excerpt"])
    first = 1 if start is None else start
    wanted = DEFAULT_READ_LINES if count is None else count
    selected = lines[first - 1 : first - 1 + wanted]
    next_from = first + len(selected)
    truncated = next_from <= len(lines)
    result: dict[str, Any] = {
        "text": "\n".join(selected),
        "path": path,
        "from": first,
        "lines": len(selected),
        "truncated": truncated,
    }
    if truncated:
        result["nextFrom"] = next_from
    return result
