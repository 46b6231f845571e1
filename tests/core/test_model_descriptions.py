"""Every model an operation speaks describes itself, and every field of it.

Help, ``docs/cli.md`` and every host's tool schema are generated from these descriptions, so a
field without one would show up undocumented everywhere. The walk starts at the operation table
(request and response of every row) and follows every nested model and enumeration.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

from pydantic import BaseModel

from zkr import models
from zkr.operations import OPERATIONS


def _nested(annotation: Any) -> list[type]:
    """The model and enum classes inside an annotation (``list[X] | None`` -> ``[X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel | enum.Enum):
        return [annotation]
    found: list[type] = []
    for argument in typing.get_args(annotation):
        found.extend(_nested(argument))
    return found


def reachable_classes() -> set[type]:
    pending: list[type] = []
    for operation in OPERATIONS.values():
        pending.extend(_nested(operation.request))
        pending.extend(_nested(operation.response))
    seen: set[type] = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if issubclass(cls, BaseModel):
            for info in cls.model_fields.values():
                pending.extend(_nested(info.annotation))
    return seen


def _own_doc(cls: type) -> str:
    # A docstring inherited from a base class or from Enum/BaseModel does not describe *this* one.
    doc = cls.__dict__.get("__doc__")
    return doc.strip() if isinstance(doc, str) else ""


def test_the_walk_reaches_requests_responses_and_nested_records() -> None:
    reached = reachable_classes()
    for expected in (
        models.SearchRequest,
        models.AsOf,
        models.RetrievalPack,
        models.MemoryRef,
        models.ExportCommit,
        models.ClaimKind,
    ):
        assert expected in reached
    assert types.NoneType not in reached


def test_every_reachable_model_and_field_has_a_description() -> None:
    undescribed: list[str] = []
    for cls in sorted(reachable_classes(), key=lambda c: c.__name__):
        if not _own_doc(cls):
            undescribed.append(cls.__name__)
        if issubclass(cls, BaseModel):
            for name, info in cls.model_fields.items():
                if not (info.description or "").strip():
                    undescribed.append(f"{cls.__name__}.{name}")
    assert undescribed == []


def test_every_exported_model_of_the_module_has_a_description() -> None:
    # Also the record models that only the feed carries (not reachable through the table).
    undescribed: list[str] = []
    for name in models.__all__:
        cls = getattr(models, name)
        if not isinstance(cls, type) or not issubclass(cls, BaseModel | enum.Enum):
            continue
        if not _own_doc(cls):
            undescribed.append(name)
        if issubclass(cls, BaseModel):
            undescribed.extend(
                f"{name}.{field}"
                for field, info in cls.model_fields.items()
                if not (info.description or "").strip()
            )
    assert undescribed == []


def test_every_timestamp_field_says_its_unit() -> None:
    # A field typed Timestamp (or named *_at) must say "seconds since the Unix epoch".
    missing: list[str] = []
    for cls in reachable_classes() | {getattr(models, n) for n in models.__all__}:
        if not isinstance(cls, type) or not issubclass(cls, BaseModel):
            continue
        for name, info in cls.model_fields.items():
            timestamp = name.endswith("_at") or name in ("from_", "until", "valid_from")
            if timestamp and "seconds since the Unix epoch" not in (info.description or ""):
                missing.append(f"{cls.__name__}.{name}")
    assert missing == []
