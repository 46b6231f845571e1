"""``typing.NamedTuple`` for modules on a one-shot command's path, without importing :mod:`typing`.

Importing :mod:`typing` costs a one-shot ``zkr`` command about a fifth of ``python -c pass``
(issue 27.4), and the named tuples of the store and retrieval code were the last thing that needed
it at run time. Such a module writes::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from zkr._named_tuple import NamedTuple

mypy reads a constant named ``TYPE_CHECKING`` as true, so it checks the class against typing's
``NamedTuple``; at run time :class:`NamedTuple` builds what typing's builds for the class forms
zkr uses: a :func:`collections.namedtuple` of the annotated fields, in order, with the defaults
the class body gives (trailing ones, as typing requires), its ``__annotations__`` (as written:
typing wraps each in a ``ForwardRef``, which nothing in zkr reads), and the body's methods,
properties, class methods and docstring. The functional form
(``NamedTuple("P", [...])``) and generic named tuples are not supported.
``tests/core/test_named_tuple.py`` compares the two.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["NamedTuple"]

# Called through a plain name: mypy would check a literal call as a class definition.
_namedtuple: Callable[..., Any] = collections.namedtuple

# What the class body holds that is not copied onto the named tuple (as typing.NamedTuple).
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make",
     "_replace", "_asdict", "_source"}
)  # fmt: skip


class _NamedTupleMeta(type):
    def __new__(mcs, typename: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
        if not bases:  # NamedTuple itself
            return super().__new__(mcs, typename, bases, namespace)
        given: Any = namespace.get("__annotations__") or {}
        annotations: dict[str, object] = dict(given)
        with_default: list[str] = []
        for name in annotations:
            if name in namespace:
                with_default.append(name)
            elif with_default:
                raise TypeError(
                    f"Non-default namedtuple field {name} cannot follow default field"
                    f"{'s' if len(with_default) > 1 else ''} {', '.join(with_default)}"
                )
        built: Any = _namedtuple(
            typename,
            list(annotations),
            defaults=[namespace[name] for name in with_default],
            module=str(namespace["__module__"]),
        )
        built.__annotations__ = built.__new__.__annotations__ = annotations
        for key, value in namespace.items():
            if key in _PROHIBITED:
                raise AttributeError(f"Cannot overwrite NamedTuple attribute {key}")
            if key not in _SPECIAL and key not in built._fields:
                setattr(built, key, value)
        made: type = built
        return made


class NamedTuple(metaclass=_NamedTupleMeta):
    """Subclass it with annotated fields (see the module's docstring); the class made is a
    :func:`collections.namedtuple`, not a subclass of this one."""
