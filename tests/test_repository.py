"""Repository-wide rules: lockstep versions, licences, and no redistributed evaluation data."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Every published distribution: the workspace's members (a new one is covered without an edit).
DISTRIBUTIONS: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"][
    "workspace"
]["members"]


def _project(dist: str) -> dict[str, object]:
    data = tomllib.loads((ROOT / dist / "pyproject.toml").read_text())
    project = data["project"]
    assert isinstance(project, dict)
    return project


def _version() -> str:
    """The one written version (zkr-core's ``zkr/version.py``)."""
    text = (ROOT / "zkr-core/src/zkr/version.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    assert match, "zkr/version.py must assign __version__ a string literal"
    return match.group(1)


def test_every_distribution_reads_its_version_from_the_one_file() -> None:
    for dist in DISTRIBUTIONS:
        pyproject = tomllib.loads((ROOT / dist / "pyproject.toml").read_text())
        assert "version" not in pyproject["project"], dist
        assert pyproject["project"]["dynamic"] == ["version"], dist
        source = (ROOT / dist / pyproject["tool"]["hatch"]["version"]["path"]).resolve()
        assert source == (ROOT / "zkr-core/src/zkr/version.py").resolve(), dist


def test_internal_pins_and_manifests_are_lockstep() -> None:
    version = _version()
    for dist in DISTRIBUTIONS:
        deps = _project(dist).get("dependencies", [])
        assert isinstance(deps, list)
        for dep in deps:
            match = re.match(r"^(zkr-[a-z0-9-]+)\s*(.*)$", dep)
            if match:
                assert match.group(2) == f"=={version}", f"{dist}: {dep}"
    plugin = ROOT / "zkr-openclaw-bridge/src/zkr_openclaw_bridge/plugin"
    for manifest in ("openclaw.plugin.json", "package.json"):
        assert json.loads((plugin / manifest).read_text())["version"] == version, manifest
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"] == version


def test_packages_import_their_version_from_zkr() -> None:
    import zkr
    import zkr_adk
    import zkr_cli
    import zkr_hermes
    import zkr_langgraph
    import zkr_openclaw_bridge

    for module in (zkr, zkr_cli, zkr_hermes, zkr_openclaw_bridge, zkr_adk, zkr_langgraph):
        assert module.__version__ == _version(), module.__name__


def test_every_distribution_ships_the_isc_licence() -> None:
    root_licence = (ROOT / "LICENSE").read_text()
    assert root_licence.startswith("ISC License")
    for dist in DISTRIBUTIONS:
        assert (ROOT / dist / "LICENSE").read_text() == root_licence
        assert str(_project(dist)["license"]).split(" AND ")[0] == "ISC"


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
        "LangGraph",
    ]:
        assert name in text, name


def test_locomo_data_is_never_tracked() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout
    if not tracked:
        return  # not a git checkout (e.g. an sdist): nothing can be tracked
    assert not re.search(r"locomo10\.json|locomo-audit", tracked, re.IGNORECASE)


def _quick_start_commands() -> list[str]:
    """The one-line ``sh`` blocks of the README's Quick start, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)\n```", section, flags=re.DOTALL)
    assert all("\n" not in block for block in blocks), blocks
    return blocks


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    commands = _quick_start_commands()
    assert len(commands) == 2  # install-and-run, then install-and-test
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    after_claim = readme.split("this is exactly what CI runs", 1)[1]
    (announced,) = re.findall(r"\A:?\n\n```sh\n(.*?)\n```", after_claim, flags=re.DOTALL)
    assert announced == commands[1]

    script = ROOT / ".ci" / "run"
    assert script.stat().st_mode & 0o111, ".ci/run must be executable"
    lines = [
        line
        for line in script.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    # Strict mode and the checkout root, then the README's command verbatim and nothing else.
    assert lines == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', announced]


def test_every_distribution_is_described_for_the_package_index() -> None:
    # What PyPI shows and filters on: a summary, keywords, the Python versions CI tests (nox's
    # hermes matrix runs 3.11-3.13), that the package is typed (it ships py.typed) and its status.
    # No licence classifier: `license = "ISC"` is the SPDX expression, and PEP 639 forbids both.
    for dist in DISTRIBUTIONS:
        project = _project(dist)
        classifiers = project.get("classifiers")
        assert isinstance(classifiers, list), dist
        for version in ("3.11", "3.12", "3.13"):
            assert f"Programming Language :: Python :: {version}" in classifiers, dist
        assert "Typing :: Typed" in classifiers and list((ROOT / dist).glob("src/*/py.typed")), dist
        assert any(c.startswith("Development Status ::") for c in classifiers), dist
        assert not any(c.startswith("License ::") for c in classifiers), dist
        assert project.get("keywords") and project.get("description"), dist
        assert project.get("requires-python") == ">=3.11", dist


def test_the_release_workflow_tests_the_wheels_before_publishing_them_without_a_token() -> None:
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text("utf-8"))
    jobs = workflow["jobs"]
    build = "\n".join(str(step.get("run", "")) for step in jobs["build-and-test"]["steps"])
    # The release rehearsal CI runs too: every wheel built, checked, installed alone, READMEs run.
    assert "nox -s wheels" in build and "GITHUB_REF_NAME" in build
    publish = jobs["publish-pypi"]
    assert publish["needs"] == "build-and-test"
    assert publish["permissions"] == {"id-token": "write"}
    assert any("gh-action-pypi-publish" in step.get("uses", "") for step in publish["steps"])
    # Trusted publishing: no stored password or token anywhere in the workflow.
    text = (ROOT / ".github/workflows/release.yml").read_text("utf-8")
    assert "secrets." not in text and "password" not in text
    assert jobs["publish-mcp-registry"]["needs"] == "publish-pypi"
