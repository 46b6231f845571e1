"""scripts/check_size.py: zkr-core's modules and functions stay within their limits, and a list of
what is still over them can only shrink."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_size", ROOT / "scripts/check_size.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _load_script()

#: A function of complexity 16 (15 ``if``s), a method of 2, a nested function of 16.
_BRANCHY = "def branchy(x):\n" + "".join(
    f"    if x == {i}:\n        return {i}\n" for i in range(15)
)
_NESTED = "class Holder:\n    def method(self, x):\n        return 1 if x else 2\n\n" + (
    "def outer():\n    def inner(x):\n"
    + "".join(f"        if x == {i}:\n            return {i}\n" for i in range(15))
    + "    return inner\n"
)


def test_measure_counts_lines_and_the_complexity_of_functions_methods_and_closures(
    tmp_path: Path,
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "branchy.py").write_text(_BRANCHY, encoding="utf-8")
    (tmp_path / "pkg" / "nested.py").write_text(_NESTED, encoding="utf-8")
    found = check.measure(tmp_path)
    assert found["pkg/branchy.py"] == 31
    assert found["pkg/branchy.py:branchy"] == 16
    assert found["pkg/nested.py:Holder.method"] == 2
    assert found["pkg/nested.py:outer.inner"] == 16


def test_a_module_or_function_over_a_limit_fails_unless_pending() -> None:
    found = {"a.py": 501, "a.py:f": 16, "b.py": 500, "b.py:g": 15}
    assert check.problems(found, {}) == [
        "a.py: 501 lines (at most 500)",
        "a.py:f: 16 complexity (at most 15)",
    ]
    assert check.problems(found, {"a.py": 501, "a.py:f": 16}) == []


def test_a_pending_entry_may_not_grow_and_is_struck_once_within_the_limits() -> None:
    found = {"a.py": 600, "a.py:f": 15}
    assert check.problems(found, {"a.py": 590, "a.py:f": 20, "gone.py": 700}) == [
        "a.py: 600 lines, grew from 590 (at most 500)",
        "a.py:f: within the limits now: strike it from PENDING",
        "gone.py: within the limits now: strike it from PENDING",
    ]


def test_zkr_core_is_within_its_limits() -> None:
    assert check.problems(check.measure()) == []
