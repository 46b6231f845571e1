"""The tools the provider shows the model: zkr's table tools plus Hermes' own ``zkr_suggest``.

The zkr tools (``zkr_search``, ``zkr_store``, ``zkr_get``, ``zkr_correct``, ``zkr_delete``,
``zkr_reflect`` …) are :func:`zkr.tools.tool_specs`: the same names, arguments and limits as on
every other host, generated from zkr's operation table. A model's arguments become a request
through :func:`zkr.tools.tool_request`, which fills the scope (never taken from the model), "now"
and the host defaults. Only ``zkr_suggest`` is Hermes' own. The schemas are plain data, valid
before ``initialize`` (Hermes asks for them first and drops a provider whose schemas raise).
"""

from __future__ import annotations

import copy
import math
from typing import Any

__all__ = [
    "MAX_SUGGEST_TURNS",
    "SUGGEST",
    "TURN_KEY_PREFIX",
    "ToolArgumentError",
    "suggest_turns",
    "tool_names",
    "tool_schemas",
]

SUGGEST = "zkr_suggest"
MAX_SUGGEST_TURNS = 10

#: Ingestion keys of the conversation turns the provider stores (``zkr_suggest`` reads those).
TURN_KEY_PREFIX = "hermes-turn:"

_SUGGEST_SCHEMA: dict[str, Any] = {
    "name": SUGGEST,
    "description": (
        "Propose claims found in the most recent conversation turns, each with the evidence "
        "id of the turn it comes from. Nothing is stored: keep a suggestion by calling "
        "zkr_store with its store_args (or zkr_correct for a changed value)."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "turns": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SUGGEST_TURNS,
                "description": "How many recent turns to read (default 3).",
            }
        },
        "additionalProperties": False,
    },
}


def _schemas() -> tuple[dict[str, Any], ...]:
    # Not cached: read from the table each time, so the provider offers what the table holds.
    from zkr.tools import tool_specs

    generated = [
        {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
        for spec in tool_specs()
    ]
    return (*generated, _SUGGEST_SCHEMA)


def tool_schemas() -> list[dict[str, Any]]:
    """Fresh copies of the OpenAI function schemas (callers may mutate them)."""
    return copy.deepcopy(list(_schemas()))


def tool_names() -> tuple[str, ...]:
    """Every tool the provider offers, in schema order (without building the schemas)."""
    from zkr.operations import OPERATIONS

    table = (op.tool.name for op in OPERATIONS.values() if op.tool is not None)
    return (*table, SUGGEST)


class ToolArgumentError(ValueError):
    """The model's arguments do not fit ``zkr_suggest``; the message is shown to the model."""


def suggest_turns(args: dict[str, Any]) -> int:
    turns = args.get("turns")
    if turns is None:
        return 3
    # Models sometimes send 3.0; accept exact integers only.
    if isinstance(turns, float) and math.isfinite(turns) and turns.is_integer():
        turns = int(turns)
    if not isinstance(turns, int) or isinstance(turns, bool):
        raise ToolArgumentError("turns must be an integer")
    if not 1 <= turns <= MAX_SUGGEST_TURNS:
        raise ToolArgumentError(f"turns must be between 1 and {MAX_SUGGEST_TURNS}")
    return turns
