"""The turns of a host's transcript file, each with a stable key (pure reading; no writes).

- **Claude Code** writes one JSON object per line (``~/.claude/projects/<dir>/<session>.jsonl``):
  ``{"type": "user"|"assistant", "uuid": ..., "timestamp": ISO-8601, "message": {"role": ...,
  "content": str | [blocks]}, ...}``. A turn's words are its ``text`` blocks (or its string
  content); tool calls and tool results, sub-agent lines (``isSidechain``), meta lines (``isMeta``)
  and slash-command echoes (``<command-…>``, ``<local-command-…>``) are not the person's
  conversation and are skipped. The key is the line's ``uuid``.
- **Codex** writes a rollout file (``~/.codex/sessions/…/rollout-….jsonl``) of
  ``{"timestamp": ISO-8601, "type": ..., "payload": {...}}`` lines; what the person typed and what
  the agent answered are the ``event_msg`` lines whose payload type is ``user_message`` or
  ``agent_message`` (``payload.message``). Their files are append-only, so the line number is a
  stable key.

Keys name the host, the session and the turn only — never a digest of the text, which would let
anyone who holds the key test guesses of an erased text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from zkr_agent_hooks.events import Host

__all__ = ["Turn", "read_turns"]

_NOISE_PREFIXES = ("<command-", "<local-command-", "<system-reminder>")


@dataclass(frozen=True)
class Turn:
    key: str
    role: str  # "user" or "assistant"
    text: str
    captured_at: int | None

    def capture_text(self) -> str:
        speaker = "User" if self.role == "user" else "Assistant"
        return f"{speaker}: {self.text}"


def _seconds(stamp: object) -> int | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def _claude_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


def _claude_turn(line: dict[str, object], session_id: str) -> Turn | None:
    kind, uuid, message = line.get("type"), line.get("uuid"), line.get("message")
    if kind not in ("user", "assistant") or not isinstance(uuid, str) or not uuid:
        return None
    if line.get("isSidechain") is True or line.get("isMeta") is True:
        return None
    if not isinstance(message, dict):
        return None
    text = _claude_text(message.get("content")).strip()
    if not text or text.startswith(_NOISE_PREFIXES):
        return None
    return Turn(
        f"claude-code:{session_id}:{uuid}", str(kind), text, _seconds(line.get("timestamp"))
    )


def _codex_turn(line: dict[str, object], session_id: str, number: int) -> Turn | None:
    payload = line.get("payload")
    if line.get("type") != "event_msg" or not isinstance(payload, dict):
        return None
    role = {"user_message": "user", "agent_message": "assistant"}.get(str(payload.get("type")))
    text = payload.get("message")
    if role is None or not isinstance(text, str) or not text.strip():
        return None
    return Turn(f"codex:{session_id}:{number}", role, text.strip(), _seconds(line.get("timestamp")))


def read_turns(path: str | Path, host: Host, session_id: str) -> Iterator[Turn]:
    """The conversation turns of the transcript at *path*, in file order.

    A line that is not a JSON object (a torn last line while the host is still writing, say) is
    skipped, not fatal: the next capture reads it again.
    """
    with Path(path).expanduser().open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                line = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                continue
            if not isinstance(line, dict):
                continue
            turn = (
                _claude_turn(line, session_id)
                if host == "claude-code"
                else _codex_turn(line, session_id, number)
            )
            if turn is not None:
                yield turn
