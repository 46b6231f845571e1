"""The zkr-core README's example runs as written and finds the memory it stored."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "zkr-core" / "README.md"


def test_zkr_core_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    match = re.search(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert match is not None
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(match.group(1), str(README), "exec"), namespace)
    assert (tmp_path / "memory.db").exists()
    pack = namespace["pack"]
    assert [item.excerpt for item in pack.items] == ["me prefers short plans"]  # type: ignore[attr-defined]
