"""The hook input both hosts send on stdin, read into one shape (pure; no I/O).

Claude Code (https://code.claude.com/docs/en/hooks, "Hook input") and Codex
(codex-rs/hooks/schema/generated/*.command.input.schema.json) send one JSON object with
``hook_event_name``, ``session_id``, ``transcript_path`` (Codex: may be null) and ``cwd``, plus per
event: ``prompt`` (UserPromptSubmit), ``source`` (SessionStart), ``trigger`` (PreCompact),
``reason`` (SessionEnd), ``turn_id`` (Codex). Unknown fields are ignored: both hosts add fields
over time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

__all__ = ["CAPTURE_EVENTS", "RECALL_EVENTS", "HookEvent", "HookInputError", "Host", "parse"]

Host = Literal["claude-code", "codex"]

#: Events answered with cited memories as additionalContext.
RECALL_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
#: Events after which the transcript's new turns are remembered. Codex has no SessionEnd; its
#: Stop fires at the end of every turn.
CAPTURE_EVENTS = frozenset({"PreCompact", "SessionEnd", "Stop"})


class HookInputError(ValueError):
    """The hook's stdin is not a hook input object."""


@dataclass(frozen=True)
class HookEvent:
    name: str
    session_id: str
    transcript_path: str | None = None
    prompt: str | None = None
    source: str | None = None


def _text(raw: dict[str, object], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) else None


def parse(data: bytes | str) -> HookEvent:
    """The event in *data* (the hook's whole stdin).

    :raises HookInputError: not a JSON object with a ``hook_event_name`` and a ``session_id``.
    """
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise HookInputError(f"hook input is not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise HookInputError("hook input is not a JSON object")
    name, session = _text(raw, "hook_event_name"), _text(raw, "session_id")
    if not name or not session:
        raise HookInputError("hook input lacks hook_event_name or session_id")
    return HookEvent(
        name=name,
        session_id=session,
        transcript_path=_text(raw, "transcript_path"),
        prompt=_text(raw, "prompt"),
        source=_text(raw, "source"),
    )
