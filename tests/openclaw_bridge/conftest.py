"""Fixtures of the OpenClaw bridge tests: a real zkr database and a tool-call helper."""

from __future__ import annotations

from typing import Any

import pytest

from zkr.db import MemoryDb
from zkr.operations import run
from zkr_openclaw_bridge.tools import run_tool

TENANT = "openclaw"
PERSON = "main"


@pytest.fixture
def call(db: MemoryDb) -> Any:
    """``call(tool, args, person=PERSON)``: one tool call as the plugin sends it."""

    def _call(tool: str, args: Any, person: str = PERSON) -> dict[str, Any]:
        return run_tool(db, {"tenant_id": TENANT, "person_id": person, "tool": tool, "args": args})

    return _call


@pytest.fixture
def plans(db: MemoryDb) -> dict[str, Any]:
    """The contract's example: "I prefer short plans." with the preference claim, for PERSON."""
    result: dict[str, Any] = run(
        db,
        "remember",
        {
            "tenant_id": TENANT,
            "person_id": PERSON,
            "kind": "conversation",
            "text": "I prefer short plans.",
            "captured_at": 10,
            "recorded_at": 10,
            "claim": {
                "subject": "me",
                "predicate": "prefers",
                "value": "short plans",
                "kind": "preference",
                "valid_from": 10,
            },
        },
    )
    return result
