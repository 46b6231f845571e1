"""``MemoryDb``'s typed methods are the operation table's rows, generated (no ``__getattr__``)."""

from __future__ import annotations

import inspect

import pytest

from zkr._generate_methods import METHODS_PATH, main, render
from zkr.db import MemoryDb
from zkr.operation_methods import OperationMethods
from zkr.operations import OPERATIONS


def test_the_committed_methods_are_the_generated_ones() -> None:
    assert METHODS_PATH.read_text(encoding="utf-8") == render(), (
        "run python -m zkr._generate_methods --write"
    )
    assert main(["--check"]) == 0


def test_every_operation_is_a_method_and_nothing_else_is() -> None:
    generated = {
        name
        for name, member in vars(OperationMethods).items()
        if inspect.isfunction(member) and name != "run"
    }
    assert generated == set(OPERATIONS)
    for name, operation in OPERATIONS.items():
        hints = inspect.signature(getattr(MemoryDb, name)).parameters["request"].annotation
        assert operation.request.__name__ in str(hints)


def test_a_misspelt_operation_is_an_attribute_error(db: MemoryDb) -> None:
    with pytest.raises(AttributeError):
        db.serach  # type: ignore[attr-defined]  # noqa: B018


def test_a_method_runs_its_operation_from_a_model_or_a_mapping(db: MemoryDb) -> None:
    from tests.conftest import remember_payload
    from zkr.models import RememberRequest

    first = db.remember(RememberRequest.model_validate(remember_payload()))
    again = db.remember({**remember_payload("Globex"), "ingestion_key": "k"})
    assert first.source_id != again.source_id
    target = {"kind": "source", "id": again.source_id}
    got = db.get({"tenant_id": "a", "person_id": "sam", "target": target})
    assert "Globex" in got.excerpt
