"""Automatic zkr memory for Claude Code and Codex, through their command hooks.

The hosts run ``zkr-agent-hooks run --host claude-code|codex`` with one JSON object on stdin at
their lifecycle events. On session start and on each prompt it answers with cited memories as
``additionalContext``; on compaction, session end (Claude Code) and turn end (Codex) it remembers
the transcript's new turns, once each. Whatever goes wrong, the host's turn goes on: the hook
exits 0 and says what happened on stderr (see :mod:`zkr_agent_hooks.run`).
"""

from __future__ import annotations

__all__: list[str] = []
