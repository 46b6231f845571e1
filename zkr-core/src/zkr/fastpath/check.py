"""The fast checker: accept a decoded request exactly as its pydantic model would, or decline.

It reads ``request_shapes.json`` (generated from the models by :mod:`zkr.fastpath.generate`) and
imports neither pydantic nor the models. Declining is always safe: the caller then validates
with pydantic, which accepts or gives the contract's error. So every rule here only ever narrows
what pydantic accepts: a strict string (no lone surrogate: the contract refuses those in known
fields), a strict integer in range (not a bool, not ``-0``, which the lenient parser reads as a
float), a strict float (a float, or an integer of at most 2**53 in magnitude, as a float: exact),
a strict boolean, an enumeration's exact spelling, null where the model allows it, a nested
object (by its alias, or its name where the model populates by name, never both), a list or a
map of any of these, an export record ``{"kind", "record"}`` whose body its kind's model accepts
(as ``apply`` reads it), a default for what is left out (a constant, an empty list, or a setting
of :mod:`zkr.settings` such as ``$ZKR_RANKING``, read each time). Duplicate known keys, unknown
keys in a model that forbids them, a missing required field, and anything the description marks
opaque are declined.
"""

from __future__ import annotations

from zkr import enums, settings
from zkr.errors import ZkrError
from zkr.fastpath.shapes import load_shapes
from zkr.jsonio import has_lone_surrogate

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["accept", "fast_operation", "load_shapes"]


class _Decline(Exception):
    """The request is not certainly valid: pydantic decides."""


def fast_operation(name: str) -> str | None:
    """The ``"module:function"`` JSON handler of operation *name*, if it has a fast path."""
    entry = load_shapes()["operations"].get(name)
    return None if entry is None else str(entry["handler"])


def accept(name: str, payload: Any) -> Any | None:
    """*payload* (from ``parse_request(raw, lenient=True)``) as a request object with exactly the
    attribute values pydantic's model would have; ``None`` to decline (pydantic decides)."""
    shapes = load_shapes()
    entry = shapes["operations"].get(name)
    if entry is None:
        return None
    try:
        return _model(shapes, entry["request"], payload)
    except _Decline:
        return None


def _model(shapes: dict[str, Any], name: str, value: Any) -> Any:
    if not isinstance(value, dict):
        raise _Decline
    shape = shapes["models"][name]
    keys = {field["key"] for field in shape["fields"]}
    keys.update(field["name"] for field in shape["fields"] if "name" in field)
    if any(key in keys for key in getattr(value, "duplicates", ())):
        raise _Decline
    if shape["forbid"] and any(key not in keys for key in value):
        raise _Decline
    values = {field["key"]: _field(shapes, field, value) for field in shape["fields"]}
    from zkr.fastpath.light import light_models

    return getattr(light_models(), name)(**values)


def _field(shapes: dict[str, Any], field: dict[str, Any], value: dict[str, Any]) -> Any:
    """One field's value: given (by its key, or by its name where the model allows it), or its
    default."""
    key, by_name = field["key"], field.get("name")
    if by_name is not None and by_name in value:
        if key in value:
            raise _Decline  # both the alias and the name: pydantic picks; let it
        return _value(shapes, field["type"], value[by_name])
    if key in value:
        return _value(shapes, field["type"], value[key])
    if "default" in field:
        return _value(shapes, field["type"], field["default"])
    if "default_setting" in field:
        return _value(shapes, field["type"], _setting(field["default_setting"]))
    if "default_factory" in field:
        return []
    raise _Decline  # missing: pydantic words the error


def _setting(name: str) -> str:
    """The setting's value in force; an invalid one is pydantic's path to report (decline)."""
    try:
        return settings.SETTINGS[name].value()
    except ZkrError:
        raise _Decline from None


def _value(shapes: dict[str, Any], spec: list[Any], value: Any) -> Any:
    check = _KINDS.get(spec[0])
    if check is None:
        raise _Decline  # opaque: pydantic decides
    return check(shapes, spec, value)


def _nullable(shapes: dict[str, Any], spec: list[Any], value: Any) -> Any:
    return None if value is None else _value(shapes, spec[1], value)


def _list(shapes: dict[str, Any], spec: list[Any], value: Any) -> list[Any]:
    if type(value) is not list:
        raise _Decline
    return [_value(shapes, spec[1], item) for item in value]


def _map(shapes: dict[str, Any], spec: list[Any], value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or getattr(value, "duplicates", None):
        raise _Decline
    return {_key(key): _value(shapes, spec[1], item) for key, item in value.items()}


def _key(key: Any) -> str:
    if type(key) is not str or has_lone_surrogate(key):
        raise _Decline
    return key


def _str(shapes: dict[str, Any], spec: list[Any], value: Any) -> str:
    if type(value) is not str or has_lone_surrogate(value):
        raise _Decline
    return value


def _int(shapes: dict[str, Any], spec: list[Any], value: Any) -> int:
    if type(value) is not int or not spec[1] <= value <= spec[2]:
        raise _Decline
    return value


def _float(shapes: dict[str, Any], spec: list[Any], value: Any) -> float:
    """A strict float as pydantic holds it: a float, or an integer (not a bool) as a float; only
    integers a float holds exactly (an exact conversion cannot differ)."""
    if type(value) is float:
        return value
    if type(value) is int and -(2**53) <= value <= 2**53:
        return float(value)
    raise _Decline


def _bool(shapes: dict[str, Any], spec: list[Any], value: Any) -> bool:
    if type(value) is not bool:
        raise _Decline
    return value


def _enum(shapes: dict[str, Any], spec: list[Any], value: Any) -> Any:
    if type(value) is not str:
        raise _Decline
    try:
        return getattr(enums, spec[1])(value)
    except ValueError:
        raise _Decline from None


def _nested(shapes: dict[str, Any], spec: list[Any], value: Any) -> Any:
    return _model(shapes, spec[1], value)


def _record(shapes: dict[str, Any], spec: list[Any], envelope: Any) -> Any:
    """An export record ``{"kind", "record"}``, unchanged, once its body is certainly what its
    kind's model accepts (``apply`` reads it with that model: light classes do not check)."""
    if not isinstance(envelope, dict) or getattr(envelope, "duplicates", None):
        raise _Decline
    kind = envelope.get("kind")
    name = shapes["records"].get(kind) if type(kind) is str else None
    if name is None:
        raise _Decline  # an unknown kind (or one not described): apply's error, pydantic's path
    _model(shapes, name, envelope.get("record"))
    return envelope


#: The checker of each kind of the description (``["opaque"]`` has none: declined).
_KINDS: dict[str, Callable[[dict[str, Any], list[Any], Any], Any]] = {
    "nullable": _nullable,
    "model": _nested,
    "list": _list,
    "dict": _map,
    "enum": _enum,
    "str": _str,
    "int": _int,
    "float": _float,
    "bool": _bool,
    "record": _record,
}
