"""The committed description ``request_shapes.json``, read once (by the checker and the light
classes alike)."""

from __future__ import annotations

import json
import os

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["load_shapes"]

_SHAPES: dict[str, Any] | None = None


def load_shapes() -> dict[str, Any]:
    """The committed ``request_shapes.json`` (read once)."""
    global _SHAPES
    if _SHAPES is None:
        path = os.path.join(os.path.dirname(__file__), "request_shapes.json")
        with open(path, encoding="utf-8") as handle:
            _SHAPES = json.load(handle)
    return _SHAPES
