"""Light classes: :mod:`zkr.models` rebuilt without pydantic, from the generated description.

Every model of :mod:`zkr.models` has no validator, serializer or computed field (the generator
refuses one), so what a handler does with a model — build it from keywords or a dict
(``model_validate``), read its attributes, copy it with changes (``model_copy``), compare it, test
``isinstance`` and dump it (``model_dump``, JSON or Python mode, by name or by alias) — needs only
the fields: their order, JSON keys, conversions (a nested model from a dict, an enumeration member
from its value) and defaults. :func:`light_models` builds a module with one such class per model
and the names of :mod:`zkr.enums` that :mod:`zkr.models` re-exports.

What it does not do is validate: it is only ever given requests the fast checker accepted (so
pydantic would have accepted them, with the same values) and results the handlers build from
stored rows. ``tests/core/test_light_models.py`` checks the dumps against pydantic's for drawn
values of every model, and ``tests/cli/test_fast_path_cli.py`` every operation end to end.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Callable

from zkr import enums, settings
from zkr.fastpath.shapes import load_shapes

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

__all__ = ["LightModel", "light_models"]

_MODULE: types.ModuleType | None = None


class LightModel:
    """The base of every light class: fields from ``_fields`` (name, key, conversion, default)."""

    _fields: ClassVar[tuple[dict[str, Any], ...]] = ()
    _by_name: ClassVar[bool] = True
    _module: ClassVar[types.ModuleType]

    def __init__(self, **data: Any) -> None:
        for field in self._fields:
            name, key = field["name"], field["key"]
            if key in data:
                value = data[key]
            elif name in data and (name == key or self._by_name):
                value = data[name]
            elif "default" in field:
                value = field["default"]
            elif "default_factory" in field:
                value = []
            elif "default_setting" in field:
                value = settings.SETTINGS[field["default_setting"]].value()
            else:
                raise TypeError(f"{type(self).__name__}: missing field `{key}`")
            object.__setattr__(self, name, _convert(self._module, field["convert"], value))

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(_hashable(v) for v in vars(self).values())))

    def __repr__(self) -> str:
        inner = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({inner})"

    @classmethod
    def model_validate(cls, obj: Any) -> Any:
        if isinstance(obj, cls):
            return obj
        if not isinstance(obj, dict):
            raise TypeError(f"{cls.__name__}: expected a dict, got {type(obj).__name__}")
        return cls(**obj)

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        copy = object.__new__(type(self))
        copy.__dict__.update(vars(self))
        copy.__dict__.update(update or {})
        return copy

    def model_dump(self, *, mode: str = "python", by_alias: bool = False, **_: Any) -> Any:
        json_mode = mode == "json"
        return {
            (field["key"] if by_alias else field["name"]): _dump(
                getattr(self, field["name"]), json_mode, by_alias
            )
            for field in self._fields
        }


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def _convert(module: types.ModuleType, spec: list[Any], value: Any) -> Any:
    kind = spec[0]
    if kind == "model":
        return getattr(module, spec[1]).model_validate(value) if isinstance(value, dict) else value
    if kind == "enum":
        return getattr(enums, spec[1])(value) if isinstance(value, str) else value
    if kind == "nullable":
        return None if value is None else _convert(module, spec[1], value)
    if kind == "list":
        if len(spec) == 1:
            return list(value) if isinstance(value, tuple) else value
        return [_convert(module, spec[1], item) for item in value]
    return value


def _dump(value: Any, json_mode: bool, by_alias: bool) -> Any:
    if isinstance(value, LightModel):
        return value.model_dump(mode="json" if json_mode else "python", by_alias=by_alias)
    if isinstance(value, enum.Enum):
        return value.value if json_mode else value
    if isinstance(value, list | tuple):
        return [_dump(item, json_mode, by_alias) for item in value]
    if isinstance(value, dict):
        return {key: _dump(item, json_mode, by_alias) for key, item in value.items()}
    return value


def light_models() -> types.ModuleType:
    """A module standing in for :mod:`zkr.models`: a light class per model, each built the first
    time it is named (a one-shot command names a handful of the ~75; building them all was a
    tenth of its start-up, issue 27.4)."""
    global _MODULE
    if _MODULE is None:
        module = types.ModuleType("zkr.models", "zkr.models as light classes (zkr.fastpath).")
        module.__light__ = True  # type: ignore[attr-defined]
        for name in dir(enums):
            if not name.startswith("_"):
                setattr(module, name, getattr(enums, name))
        module.__getattr__ = _class_builder(module)  # type: ignore[method-assign]
        _MODULE = module
    return _MODULE


def _class_builder(module: types.ModuleType) -> Callable[[str], type[LightModel]]:
    """The module's ``__getattr__`` (PEP 562): builds the light class of a model on first use."""
    classes = load_shapes()["classes"]

    def build(name: str) -> type[LightModel]:
        shape = classes.get(name)
        if shape is None:
            raise AttributeError(f"module 'zkr.models' has no attribute {name!r}")
        attributes = {
            "__module__": "zkr.models",
            "__qualname__": name,
            "_fields": tuple(shape["fields"]),
            "_by_name": shape["by_name"],
            "_module": module,
        }
        cls = type(name, (LightModel,), attributes)
        setattr(module, name, cls)
        return cls

    return build
