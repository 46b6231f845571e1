"""Writes ``request_shapes.json`` from the pydantic request models of the operation table.

Only what the fast checker (:mod:`zkr.fastpath.check`) can decide exactly is described: strict
strings, integers (with their bounds), floats (infinities and NaN allowed) and booleans, string
enumerations of :mod:`zkr.enums`, null, lists, maps with string keys, nested models without
validators (a field's alias is its key; its name too where the model populates by name), and the
export records of a page (``{"kind", "record"}``, each checked with its kind's model, as ``apply``
reads it); a default is a constant or a setting of :mod:`zkr.settings` (read by the checker when
the request runs). Every other field becomes ``["opaque"]``: a request that gives it is declined
(pydantic decides). Usage: ``python -m
zkr.fastpath.generate --write`` (or ``--check``: exit 1 when the committed file differs).
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from zkr import enums
from zkr.generating import generator_main
from zkr.settings import setting_for_factory
from zkr.store.record_kinds import RECORD_MODEL_NAMES

if TYPE_CHECKING:
    from zkr.operations import Operation

__all__ = ["SHAPES_PATH", "render", "shapes"]

SHAPES_PATH = Path(__file__).with_name("request_shapes.json")

_OPAQUE = ["opaque"]
# Keys of core-schema nodes that change nothing about validation.
_NEUTRAL = {"type", "metadata", "ref", "serialization"}
# Nodes that wrap one other node: where it is.
_WRAPPED = {"list": "items_schema", "nullable": "schema"}
#: Fields that hold export records ``{"kind", "record"}`` as free maps (``dict[str, Any]``):
#: ``apply`` reads each body with its kind's model (:func:`zkr.feed.pages.parse_record`), which
#: light classes would not validate, so the checker checks each with that model's description
#: (``["record"]``); a body it cannot describe is declined. A free map anywhere else is opaque.
_RECORD_LISTS = {("ExportCommit", "records")}
_FREE_MAPS = {
    "type": "list",
    "items_schema": {
        "type": "dict",
        "keys_schema": {"type": "str"},
        "values_schema": {"type": "any"},
    },
}


def _spec(node: dict[str, Any], models: dict[str, Any]) -> list[Any]:
    """The checker's type for one core-schema node (``["opaque"]`` when not certain)."""
    kind = node.get("type")
    extra = set(node) - _NEUTRAL
    if kind in ("str", "int", "float", "bool"):
        return _scalar(node, extra)
    if kind == "enum":
        return _enum(node, extra)
    inner_key = _WRAPPED.get(str(kind))
    if inner_key is not None and extra == {inner_key}:
        inner = _spec(node[inner_key], models)
        return _OPAQUE if inner == _OPAQUE else [kind, inner]
    if kind == "model":
        name = _model(node, models)
        return _OPAQUE if name is None else ["model", name]
    if kind == "dict" and extra == {"keys_schema", "values_schema"}:
        return _map(node, models)
    return _OPAQUE


def _enum(node: dict[str, Any], extra: set[str]) -> list[Any]:
    """A string enumeration of :mod:`zkr.enums`, all of its members; ``["opaque"]`` otherwise."""
    if extra == {"cls", "members", "sub_type"} and node["sub_type"] == "str":
        cls: Any = node["cls"]
        enum_name = str(cls.__name__)
        if list(node["members"]) == list(cls) and getattr(enums, enum_name, None) is cls:
            return ["enum", enum_name]
    return _OPAQUE


def _map(node: dict[str, Any], models: dict[str, Any]) -> list[Any]:
    """A map with string keys (a decoded JSON object's keys are strings; lone surrogates are
    checked) and described values; ``["opaque"]`` otherwise."""
    keys = node["keys_schema"]
    values = _spec(node["values_schema"], models)
    if keys.get("type") == "str" and set(keys) - _NEUTRAL <= {"strict"} and values != _OPAQUE:
        return ["dict", values]
    return _OPAQUE


def _inlined(node: Any, definitions: dict[str, Any], seen: frozenset[str] = frozenset()) -> Any:
    """*node* with every ``definition-ref`` replaced by its definition (a model used twice, such
    as ``TimeRange``, is a shared definition); a recursive one stays a reference (opaque)."""
    if isinstance(node, list):
        return [_inlined(item, definitions, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("schema_ref")
    if node.get("type") == "definition-ref" and ref in definitions and ref not in seen:
        return _inlined(definitions[ref], definitions, seen | {ref})
    return {key: _inlined(value, definitions, seen) for key, value in node.items()}


def _core_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's core schema, definitions inlined (``defer_build``: built here)."""
    model.model_rebuild()
    schema: Any = model.__pydantic_core_schema__
    if schema.get("type") == "definitions":
        definitions = {d["ref"]: d for d in schema["definitions"]}
        schema = _inlined(schema["schema"], definitions)
    return dict(schema)


def _scalar(node: dict[str, Any], extra: set[str]) -> list[Any]:
    """A strict string, integer with both bounds, float (infinities and NaN allowed: JSON has
    none, the lenient parser may) or boolean; ``["opaque"]`` otherwise."""
    if node.get("strict") is not True:
        return _OPAQUE
    if node["type"] in ("str", "bool") and extra == {"strict"}:
        return [node["type"]]
    if node["type"] == "float" and extra == {"strict", "allow_inf_nan"} and node["allow_inf_nan"]:
        return ["float"]
    if node["type"] == "int" and extra == {"strict", "ge", "le"}:
        return ["int", node["ge"], node["le"]]
    return _OPAQUE


def _default(value: Any) -> Any:
    """A default as JSON, or ``...`` when it is not a plain scalar the checker can rebuild."""
    if value is None or (type(value) in (int, str)):
        return value
    if isinstance(value, Enum) and getattr(enums, type(value).__name__, None) is type(value):
        return value.value
    return ...


def _keys(name: str, field: dict[str, Any], by_name: bool) -> dict[str, Any] | None:
    """A field's key: its alias if it has one (then, with *by_name*, ``populate_by_name``, its
    name is accepted too), else its name; ``None`` for what the checker cannot follow."""
    alias = field.get("validation_alias")
    if set(field) - _NEUTRAL - {"schema", "validation_alias", "serialization_alias"}:
        return None  # frozen/exclude flags, validators on the field: not ours to decide
    if alias is None:
        return {"key": name}
    if type(alias) is not str or field.get("serialization_alias") != alias:
        return None  # an alias path or choices, or another key out than in
    return {"key": alias, "name": name} if by_name else {"key": alias}


def _field(
    name: str, field: dict[str, Any], models: dict[str, Any], by_name: bool
) -> dict[str, Any] | None:
    """One field's description; ``None`` when the model cannot be described at all."""
    described = _keys(name, field, by_name)
    if described is None:
        return None
    schema = field["schema"]
    if schema.get("type") == "default":
        setting = setting_for_factory(schema.get("default_factory"))
        if setting is not None and set(schema) - _NEUTRAL == {
            "schema",
            "default_factory",
            "default_factory_takes_data",
        }:
            # A default read from a setting ($ZKR_RANKING): the checker reads the same setting.
            spec = _spec(schema["schema"], models)
            described["type"] = spec
            if spec != _OPAQUE and not schema["default_factory_takes_data"]:
                described["default_setting"] = setting.name
            return described
        if schema.get("default_factory") is list and set(schema) - _NEUTRAL == {
            "schema",
            "default_factory",
            "default_factory_takes_data",
        }:
            # An empty list when left out (a fresh one each time, as pydantic makes it).
            described["type"] = _spec(schema["schema"], models)
            if described["type"] != _OPAQUE:
                described["default_factory"] = "list"
            return described
        if set(schema) - _NEUTRAL != {"schema", "default"}:
            described["type"] = _OPAQUE  # a default factory or validate_default: give up
            return described
        default = _default(schema["default"])
        spec = _spec(schema["schema"], models)
        if default is ... or spec == _OPAQUE:
            # Left out or given, pydantic decides (left out: declined as missing).
            described["type"] = _OPAQUE
            return described
        described["type"] = spec
        described["default"] = default
        return described
    described["type"] = _spec(schema, models)
    return described


def _plain(node: dict[str, Any]) -> bool:
    """Whether a ``model`` node is fields and nothing else: no custom ``__init__``, root model,
    computed field, or configuration beyond extra keys, a title and keys by alias (and name)."""
    config = node.get("config", {})
    inner = node.get("schema", {})
    return (
        set(node) - _NEUTRAL == {"cls", "config", "custom_init", "root_model", "schema"}
        and node["custom_init"] is False
        and node["root_model"] is False
        and set(config)
        <= {"extra_fields_behavior", "title", "validate_by_alias", "validate_by_name"}
        and config.get("validate_by_alias", True) is True
        and config.get("extra_fields_behavior") in ("ignore", "forbid")
        and inner.get("type") == "model-fields"
        and set(inner) - _NEUTRAL <= {"fields", "model_name", "computed_fields"}
        and not inner.get("computed_fields")
    )


def _model(node: dict[str, Any], models: dict[str, Any]) -> str | None:
    """Describe a ``model`` node into *models*; its name, or ``None`` when it cannot be."""
    name = str(node["cls"].__name__)
    if name in models:
        return name if models[name] is not None else None
    config = node.get("config", {})
    inner = node.get("schema", {})
    models[name] = None  # while describing (and for good, if it cannot be)
    if not _plain(node):
        return None
    fields = []
    by_name = config.get("validate_by_name") is True
    for field_name, field in inner["fields"].items():
        described = _field(field_name, field, models, by_name)
        if described is None:
            return None
        if (name, field_name) in _RECORD_LISTS and field["schema"] == _FREE_MAPS:
            described["type"] = ["list", ["record"]]
        fields.append(described)
    models[name] = {"forbid": config["extra_fields_behavior"] == "forbid", "fields": fields}
    return name


def _conversion(annotation: Any) -> list[Any]:
    """How a light class turns a constructor argument into the attribute pydantic would hold:
    a nested model from a dict, an enumeration member from its value, item by item in a list."""
    origin = get_origin(annotation)
    arguments = [a for a in get_args(annotation) if a is not type(None)]
    if origin is Annotated:
        return _conversion(arguments[0])
    if origin in (Union, UnionType) and len(arguments) == 1:
        inner = _conversion(arguments[0])
        return ["any"] if inner == ["any"] else ["nullable", inner]
    if origin is list:
        inner = _conversion(arguments[0])
        return ["list"] if inner == ["any"] else ["list", inner]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ["model", annotation.__name__]
    name = getattr(annotation, "__name__", "")
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return ["enum", name] if getattr(enums, name, None) is annotation else ["any"]
    return ["any"]


def _class_field(name: str, info: FieldInfo) -> dict[str, Any]:
    """One field of a light class: its name, its key in JSON, its conversion and default."""
    described: dict[str, Any] = {"name": name, "key": info.alias or name}
    described["convert"] = _conversion(info.annotation)
    setting = setting_for_factory(info.default_factory)
    if setting is not None:
        described["default_setting"] = setting.name
    elif info.default_factory is list:
        described["default_factory"] = "list"
    elif info.default_factory is not None:
        raise TypeError(f"{name}: a default factory the light classes cannot rebuild")
    elif info.default is not PydanticUndefined:
        default = info.default if type(info.default) is bool else _default(info.default)
        if default is ...:
            raise TypeError(f"{name}: a default the light classes cannot rebuild")
        described["default"] = default
    return described


def classes() -> dict[str, Any]:
    """Every pydantic model of :mod:`zkr.models`, as the light classes of :mod:`zkr.fastpath.light`
    rebuild it: fields in order, JSON keys (aliases), conversions and defaults. A model with a
    validator, a serializer or a computed field would not be the same without pydantic: it fails
    here, at generation, rather than answering differently at run time."""
    from zkr import models

    described: dict[str, Any] = {}
    for name, cls in sorted(vars(models).items()):
        if (
            not (isinstance(cls, type) and issubclass(cls, BaseModel))
            # zkr.models is a package: its models live in its modules (requests, responses, ...)
            or cls.__module__.partition(".models")[0] + ".models" != models.__name__
        ):
            continue
        decorators = cls.__pydantic_decorators__
        if any(
            getattr(decorators, kind)
            for kind in (
                "validators",
                "field_validators",
                "root_validators",
                "field_serializers",
                "model_serializers",
                "model_validators",
                "computed_fields",
            )
        ):
            raise TypeError(f"{name}: validators and serializers have no light class")
        config = cls.model_config
        described[name] = {
            "by_name": bool(config.get("populate_by_name")),
            "fields": [_class_field(key, info) for key, info in cls.model_fields.items()],
        }
    return described


#: Operations left to the normal path whatever the request: their handlers load plugins, whose
#: registration (extractors, hosts) builds pydantic models; light classes must not meet those.
NORMAL_PATH_ONLY = frozenset({"rebuild"})


def _handler(operation: Operation) -> str:
    handler = operation.handler
    return f"{handler.__module__}:{handler.__qualname__}"


def shapes() -> dict[str, Any]:
    """The description of every operation, its request check and every model, from the live
    table and models."""
    from zkr import models as zkr_models
    from zkr.operations import OPERATIONS

    models: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    for operation in OPERATIONS.values():
        if operation.name in NORMAL_PATH_ONLY:
            continue
        name = _model(_core_schema(operation.request), models)
        if name is None:
            continue
        operations[operation.name] = {"request": name, "handler": _handler(operation)}
    records = {}
    for kind, model_name in RECORD_MODEL_NAMES.items():
        described = _model(_core_schema(getattr(zkr_models, model_name)), models)
        if described is not None:
            records[kind] = described
    return {
        "generated": "by `python -m zkr.fastpath.generate --write` from zkr.operations and "
        "zkr.models: do not edit",
        "operations": operations,
        "models": {name: shape for name, shape in sorted(models.items()) if shape is not None},
        "records": records,
        "classes": classes(),
    }


def render() -> str:
    return json.dumps(shapes(), indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    return generator_main(SHAPES_PATH, render, module="zkr.fastpath.generate", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
