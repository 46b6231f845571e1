"""Repository-wide rules: lockstep versions, licences, and no redistributed evaluation data."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = ["zkr-core", "zkr-cli", "zkr-hermes", "zkr-openclaw-bridge"]


def _project(dist: str) -> dict[str, object]:
    data = tomllib.loads((ROOT / dist / "pyproject.toml").read_text())
    project = data["project"]
    assert isinstance(project, dict)
    return project


def test_versions_and_internal_pins_are_lockstep() -> None:
    versions = {dist: _project(dist)["version"] for dist in DISTRIBUTIONS}
    assert len(set(versions.values())) == 1, versions
    (version,) = set(versions.values())
    for dist in DISTRIBUTIONS:
        deps = _project(dist).get("dependencies", [])
        assert isinstance(deps, list)
        for dep in deps:
            match = re.match(r"^(zkr-[a-z-]+)\s*(.*)$", dep)
            if match:
                assert match.group(2) == f"=={version}", f"{dist}: {dep}"


def test_package_version_matches_distribution() -> None:
    init = (ROOT / "zkr-core/src/zkr/__init__.py").read_text()
    assert f'__version__ = "{_project("zkr-core")["version"]}"' in init


def test_every_distribution_ships_the_isc_licence() -> None:
    root_licence = (ROOT / "LICENSE").read_text()
    assert root_licence.startswith("ISC License")
    for dist in DISTRIBUTIONS:
        assert (ROOT / dist / "LICENSE").read_text() == root_licence
        assert _project(dist)["license"] == "ISC"


def test_acknowledgements_name_the_systems_that_informed_zkr() -> None:
    text = (ROOT / "ACKNOWLEDGEMENTS.md").read_text()
    for name in [
        "zkr 0.2.3",
        "Omi",
        "Graphiti",
        "Zep",
        "Mem0",
        "HippoRAG",
        "A-MEM",
        "MemOS",
        "Hermes Agent",
        "OpenClaw",
    ]:
        assert name in text, name


def test_locomo_data_is_never_tracked() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout
    if not tracked:
        return  # not a git checkout (e.g. an sdist): nothing can be tracked
    assert not re.search(r"locomo10\.json|locomo-audit", tracked, re.IGNORECASE)
