"""The contract's strict JSON rules, applied to the fields a request model knows (contract §2.2).

serde_json refuses a duplicate key or a lone surrogate only where it reads a value into a field;
an ignored field's value is skipped unread. A leniently parsed request
(``zkr.jsonio.parse_request(raw, lenient=True)``) is therefore checked here against its model:
duplicate keys among a model's fields and lone surrogates in its string values are refused; what
the model does not know is never looked at. (Types and ranges are pydantic's part.)
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any

from pydantic import BaseModel

from zkr import models as m
from zkr.errors import RequestParseError
from zkr.jsonio import JsonObject, has_lone_surrogate
from zkr.store.record_kinds import RECORD_MODEL_NAMES

__all__ = ["RECORD_MODELS", "check_known_fields"]

#: The record model of each export record ``kind`` (what ``apply`` reads a record body with).
RECORD_MODELS: dict[str, type[BaseModel]] = {
    kind: getattr(m, name) for kind, name in RECORD_MODEL_NAMES.items()
}

_LONE = "lone leading surrogate in hex escape"


def check_known_fields(value: Any, model: type[BaseModel]) -> None:
    """Refuse duplicates and lone surrogates inside the fields *model* reads from *value*.

    :raises RequestParseError: ``duplicate field `x``` or a lone surrogate.
    """
    if not isinstance(value, dict):
        return
    names = _field_names(model)
    if isinstance(value, JsonObject):
        for key in value.duplicates:
            if key in names:
                raise RequestParseError(f"duplicate field `{key}`")
    for key, annotation in names.items():
        if key in value:
            if model is m.ExportCommit and key == "records" and isinstance(value[key], list):
                for record in value[key]:
                    _check_record(record)
            else:
                _check_value(value[key], annotation)


def _check_record(envelope: Any) -> None:
    """An export record ``{"kind", "record"}``: its body is read with the model of its kind."""
    if not isinstance(envelope, dict):
        return
    if isinstance(envelope, JsonObject):
        for key in envelope.duplicates:
            if key in ("kind", "record"):
                raise RequestParseError(f"duplicate field `{key}`")
    kind = envelope.get("kind")
    if isinstance(kind, str):
        _check_value(kind, str)
        model = RECORD_MODELS.get(kind)
        if model is not None:
            check_known_fields(envelope.get("record"), model)


@functools.cache
def _field_names(model: type[BaseModel]) -> dict[str, Any]:
    """JSON key -> annotation of every field (alias and name both, as validation accepts both);
    kept per model (a bulk import asks for the same two models on every line)."""
    names: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        names[name] = field.annotation
        if field.alias:
            names[field.alias] = field.annotation
    return names


def _check_value(value: Any, annotation: Any) -> None:
    if isinstance(value, str):
        if has_lone_surrogate(value):
            raise RequestParseError(_LONE)
        return
    if not isinstance(value, dict | list):
        # A number, a boolean or null holds no key and no string: nothing to check, whatever
        # the annotation (a query vector's 384 numbers were 780 walks per hybrid request).
        return
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        _check_value(value, typing.get_args(annotation)[0])
    elif origin in (typing.Union, types.UnionType):
        _check_union_member(value, annotation)
    elif origin is list and isinstance(value, list):
        (item,) = typing.get_args(annotation) or (Any,)
        for element in value:
            if isinstance(element, str | dict | list):
                _check_value(element, item)
    elif origin is dict and isinstance(value, dict):
        _check_map(value, annotation)
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        check_known_fields(value, annotation)
    # Any (the raw records of an export page): checked by ``apply`` against each record's model.


def _check_union_member(value: Any, annotation: Any) -> None:
    """Walk into the first member of the union that would read *value*."""
    for option in typing.get_args(annotation):
        if _fits(value, option):
            _check_value(value, option)
            return


def _check_map(value: dict[Any, Any], annotation: Any) -> None:
    """A map with free keys (records of an export page): every key is read, so all are known."""
    _, item = typing.get_args(annotation) or (str, Any)
    for key, element in value.items():
        if has_lone_surrogate(key):
            raise RequestParseError(_LONE)
        _check_value(element, item)


def _fits(value: Any, option: Any) -> bool:
    """Whether a union member would read *value* (for walking into the right one)."""
    target = typing.get_origin(option) or option
    if target is typing.Annotated:
        return _fits(value, typing.get_args(option)[0])
    if value is None:
        return option is type(None)
    if isinstance(value, dict):
        return target is dict or (isinstance(target, type) and issubclass(target, BaseModel))
    if isinstance(value, list):
        return target is list
    return option is not type(None)
