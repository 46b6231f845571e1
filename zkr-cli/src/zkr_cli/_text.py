"""``--format text``: answers rendered for a person at a terminal, citations visible.

JSON stays the default output of every command. With ``--format text`` a search pack, a
``memories`` page, a claim ``history``, a ``forget`` result and an ``import`` summary are rendered
as readable lines: times as UTC dates (the stored value is seconds since the epoch), every item
with the ids of the evidence it cites. Any other answer is shown as indented JSON. Errors are one
``zkr: error: <message>`` line on stderr.

The renderers take the answer's plain JSON data (what the JSON output would print), so the text
can never show something the JSON does not hold.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable
from typing import Any

__all__ = ["FORMATS", "render_text", "when"]

#: The values ``--format`` accepts.
FORMATS = ("json", "text")

_INDENT = "    "


def when(seconds: int | None) -> str:
    """Seconds since the epoch as ``YYYY-MM-DD HH:MM:SS UTC``; ``open`` for null."""
    if seconds is None:
        return "open"
    try:
        moment = _dt.datetime.fromtimestamp(seconds, tz=_dt.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{seconds} s"
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _span(interval: dict[str, Any]) -> str:
    return f"{when(interval['from'])} -> {when(interval['until'])}"


def _quote(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    if not flat:
        return "(erased)"
    return f'"{flat}"' if len(flat) <= width else f'"{flat[: width - 3]}..."'


def _statement(claim: dict[str, Any]) -> str:
    if not (claim["subject"] or claim["predicate"] or claim["value"]):
        return "(statement erased)"
    return f"{claim['subject']} · {claim['predicate']} · {claim['value']}"


def _cites(evidence_ids: list[str]) -> str:
    return "cites " + (", ".join(evidence_ids) if evidence_ids else "nothing")


def _pack(pack: dict[str, Any]) -> list[str]:
    lines = [f"search {_quote(pack['query'])}: {len(pack['items'])} item(s)"]
    for number, item in enumerate(pack["items"], start=1):
        memory = item["memory"]
        lines.append(f"{number:>2}. [{memory['kind']} {memory['id']}] {_quote(item['excerpt'])}")
        relevance = _relevance(item["relevance_basis_points"])
        lines.append(f"{_INDENT}{relevance} · {_cites(item['evidence_ids'])}")
    lines.extend(f"({gap})" for gap in pack["gaps"])
    return lines


def _relevance(basis_points: int) -> str:
    """``relevance ██████████ best match``, or with the share of the best item's score:
    ``relevance █████████░ close to the best match (91 % of its score)``."""
    from zkr.relevance import FULL, describe_relevance, relevance_bar, relevance_percent

    words = describe_relevance(basis_points)
    if basis_points < FULL:
        words += f" ({relevance_percent(basis_points)} of its score)"
    return f"relevance {relevance_bar(basis_points)} {words}"


def _item(item: dict[str, Any]) -> list[str]:
    # One item read by id: no search, so no relevance to compare.
    memory = item["memory"]
    return [
        f" 1. [{memory['kind']} {memory['id']}] {_quote(item['excerpt'])}",
        f"{_INDENT}{_cites(item['evidence_ids'])}",
    ]


def _memories(page: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for item in page["items"]:
        claim, capture = item["claim"], item["capture"]
        if claim is not None:
            lines.append(f"{when(item['recorded_at'])}  {claim['kind']} claim  {_statement(claim)}")
            validity = _span(claim["valid_time"])
            lines.append(f"{_INDENT}valid {validity} · {claim['status']} · id {claim['id']}")
        else:
            lines.append(
                f"{when(item['recorded_at'])}  {capture['kind']} capture  {_quote(capture['text'])}"
            )
            lines.append(f"{_INDENT}captured {when(capture['captured_at'])} · id {capture['id']}")
        lines.append(f"{_INDENT}{_cites(item['evidence_ids'])}")
    if not page["items"]:
        lines.append("(nothing held)")
    if page["next_cursor"] is not None:
        lines.append(f'more: ask again with "cursor": "{page["next_cursor"]}"')
    return lines


def _history(chain: dict[str, Any]) -> list[str]:
    versions = chain["versions"]
    number = {version["claim"]["id"]: index for index, version in enumerate(versions, start=1)}
    current = chain["current_claim_id"]
    lines = [
        f"claim {chain['claim_id']}: {len(versions)} version(s), current "
        + (f"v{number[current]}" if current in number else "none")
    ]
    for index, version in enumerate(versions, start=1):
        claim = version["claim"]
        lines.append(f"v{index}  {_statement(claim)}  [{claim['status']}] {claim['kind']}")
        lines.append(f"{_INDENT}id {claim['id']}")
        lines.append(f"{_INDENT}valid    {_span(claim['valid_time'])}")
        lines.append(f"{_INDENT}recorded {_span(claim['recorded_time'])}")
        if version["erased_at"] is not None:
            lines.append(f"{_INDENT}statement erased {when(version['erased_at'])}")
        for evidence in version["evidence"]:
            state = ""
            if evidence["erased_at"] is not None:
                state = f" (erased {when(evidence['erased_at'])})"
            elif evidence["deleted_at"] is not None:
                state = f" (deleted {when(evidence['deleted_at'])})"
            quote = _quote(evidence["quote"]) if not state else ""
            confidence = evidence["confidence_basis_points"] / 100
            cited = f"evidence {evidence['evidence_id']} ({evidence['source_kind']}){state}"
            line = f"{_INDENT}{evidence['relation']} {confidence:.0f}% {cited} {quote}"
            lines.append(line.rstrip())
        correction = version["corrected_by"]
        if correction is not None:
            target = number.get(correction["claim_id"], "?")
            lines.append(
                f"{_INDENT}corrected by v{target} at {when(correction['recorded_at'])},"
                f" citing evidence {correction['evidence_id']}"
            )
    lines.append("events:")
    for event in chain["events"]:
        cited = f" evidence {event['evidence_id']}" if event["evidence_id"] else ""
        version = f"v{number.get(event['claim_id'], '?')}"
        lines.append(f"{_INDENT}{when(event['at'])}  {event['event']:<9} {version}{cited}")
    return lines


def _forget(result: dict[str, Any]) -> list[str]:
    return [
        f"forgot source {result['source_id']} at {when(result['erased_at'])}",
        f"{_INDENT}erased: {len(result['evidence_ids'])} evidence quote(s) and locator(s),"
        f" {len(result['claim_ids'])} claim statement(s), {len(result['profile_entry_ids'])}"
        f" profile entr(ies), {len(result['daily_review_ids'])} daily review(s)",
        f"{_INDENT}kept: ids, times and the fact of the erasure",
    ]


def _import(summary: dict[str, Any]) -> list[str]:
    dropped = summary.get("dropped", 0)
    lines = [
        f"{summary['lines']} line(s): {summary['stored']} stored, {summary['replayed']} replayed,"
        + (f" {dropped} dropped (forgotten)," if dropped else "")
        + f" {summary['refused_count']} refused"
    ]
    lines.extend(f"{_INDENT}line {r['line']}: {r['error']}" for r in summary["refused"])
    unlisted = summary["refused_count"] - len(summary["refused"])
    if unlisted:
        lines.append(f"{_INDENT}... and {unlisted} more refused line(s)")
    return lines


def _import_from(summary: dict[str, Any]) -> list[str]:
    lines = [
        f"{summary['format']}: {summary['read']} message(s) read: {summary['stored']} stored,"
        f" {summary['replayed']} replayed; {summary['skipped_count']} skipped,"
        f" {summary['refused_count']} refused"
    ]
    lines.extend(f"{_INDENT}skipped {n}: {why}" for why, n in summary["skipped"].items())
    lines.extend(f"{_INDENT}refused {r['item']}: {r['error']}" for r in summary["refused"])
    unlisted = summary["refused_count"] - len(summary["refused"])
    if unlisted:
        lines.append(f"{_INDENT}... and {unlisted} more refused item(s)")
    return lines


_RENDERERS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "search": _pack,
    "get": _item,
    "memories": _memories,
    "history": _history,
    "forget": _forget,
    "import": _import,
    "import-from": _import_from,
}


def render_text(command: str, answer: Any) -> str:
    """The text form of *answer* (plain JSON data) of *command*, newline-terminated."""
    renderer = _RENDERERS.get(command)
    if renderer is None or not isinstance(answer, dict):
        return json.dumps(answer, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return "\n".join(renderer(answer)) + "\n"
