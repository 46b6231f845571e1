"""What the browser tests share: a small seeded life and the screenshot helper."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.web.conftest import WebServer
from zkr import models as m

MARCH = int(datetime(2026, 3, 1, 9, 30, tzinfo=UTC).timestamp())
APRIL = int(datetime(2026, 4, 2, 18, 0, tzinfo=UTC).timestamp())
LOCATOR = {
    "device_id": "pendant-7",
    "provider": "omi",
    "stream_id": "s-0412",
    "segment_id": "seg-19",
    "start_ms": 81_200,
    "end_ms": 84_950,
}


def seed(web: WebServer) -> dict[str, m.RememberResult]:
    """A small life: where Ana lives (with a transcript locator), her employer, a preference."""
    made = {
        "home": web.remember(
            "Ana: I live in Lisbon, near the river.",
            {"subject": "Ana", "predicate": "lives_in", "value": "Lisbon"},
            at=MARCH,
            locator=LOCATOR,
        ),
        "work": web.remember(
            "Ana started as a nurse at Santa Maria hospital.",
            {"subject": "Ana", "predicate": "employer", "value": "Santa Maria hospital"},
            at=MARCH + 3600,
        ),
        "tea": web.remember(
            "Ana prefers green tea in the afternoon.",
            {"subject": "Ana", "predicate": "prefers", "value": "green tea", "kind": "preference"},
            at=APRIL,
        ),
    }
    return made


def shot(page: Any, artifacts: Path, name: str) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)
