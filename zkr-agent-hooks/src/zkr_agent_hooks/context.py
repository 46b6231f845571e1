"""The cited memories a hook hands the model, as text (pure).

One line per memory, each naming the evidence it rests on, under a header that says where the
lines come from; the same block zkr-hermes injects, so a model reads zkr's recall the same way in
every host. Bounded: the hosts cap additionalContext (Claude Code keeps about 10,000 characters),
and the block rides on every prompt.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["EXCERPT_CHARS", "HEADER", "MAX_CHARS", "Cited", "render"]

HEADER = "[zkr cited memory]"
#: One memory's excerpt is cut to this many characters.
EXCERPT_CHARS = 500
#: The whole block stays under this many characters.
MAX_CHARS = 6000


@dataclass(frozen=True)
class Cited:
    text: str
    evidence_ids: tuple[str, ...]


def render(memories: Iterable[Cited]) -> str:
    """``[zkr cited memory]`` then ``- text [evidence: id, …]`` lines; ``""`` for no memory."""
    lines = [HEADER]
    size = len(HEADER)
    for memory in memories:
        text = " ".join(memory.text.split())
        if len(text) > EXCERPT_CHARS:
            text = text[: EXCERPT_CHARS - 1] + "…"
        line = f"- {text} [evidence: {', '.join(memory.evidence_ids)}]"
        if size + 1 + len(line) > MAX_CHARS:
            break
        lines.append(line)
        size += 1 + len(line)
    return "\n".join(lines) if len(lines) > 1 else ""
