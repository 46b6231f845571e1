"""``zkr._named_tuple.NamedTuple`` builds what ``typing.NamedTuple`` builds, without importing
typing (one-shot start-up, issue 27.4)."""

from __future__ import annotations

import subprocess
import sys
import typing
from typing import Any

import pytest

from zkr._named_tuple import NamedTuple


def _classes(base: Any) -> Any:
    class Point(base):  # type: ignore[misc,valid-type]
        """A point."""

        x: int
        y: int = 2
        label: str = "p"

        def total(self) -> int:
            return int(self.x + self.y)

        @property
        def doubled(self) -> int:
            return int(2 * self.x)

        @classmethod
        def origin(cls) -> Any:
            return cls(0, 0)

    return Point


def test_a_class_is_built_as_typing_builds_it() -> None:
    ours, theirs = _classes(NamedTuple), _classes(typing.NamedTuple)
    for attribute in ("_fields", "_field_defaults", "__doc__", "__qualname__", "__module__"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    # typing wraps each annotation in a ForwardRef; the names and their order are the same.
    assert list(ours.__annotations__) == list(theirs.__annotations__) == ["x", "y", "label"]
    assert ours.__bases__ == theirs.__bases__ == (tuple,)
    a, b = ours(1), theirs(1)
    assert tuple(a) == tuple(b) == (1, 2, "p")
    assert repr(a) == repr(b) == "Point(x=1, y=2, label='p')"
    assert a == (1, 2, "p") and hash(a) == hash(b)
    assert a.total() == b.total() == 3 and a.doubled == b.doubled == 2
    assert tuple(ours.origin()) == tuple(theirs.origin()) == (0, 0, "p")
    assert a._replace(y=5) == b._replace(y=5) and a._asdict() == b._asdict()
    with pytest.raises(AttributeError):
        a.x = 3  # type: ignore[misc]
    assert not isinstance(a, NamedTuple)


def test_the_same_mistakes_are_refused() -> None:
    for base in (NamedTuple, typing.NamedTuple):
        with pytest.raises(TypeError, match="Non-default namedtuple field y cannot follow"):

            class _Late(base):  # type: ignore[misc,valid-type]
                x: int = 1
                y: int

        with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _make"):

            class _Clash(base):  # type: ignore[misc,valid-type]
                x: int

                def _make(self) -> None: ...


def test_importing_it_does_not_import_typing() -> None:
    probe = "import sys, zkr._named_tuple; print('typing' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
