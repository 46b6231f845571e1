"""The docs say what is: every ``ZKR_*`` variable they name is one zkr reads (a shared setting of
``zkr.settings`` or a host's own) and an old spelling is only named as such; they state the
current schema version; each host's page names every tool the host offers."""

from __future__ import annotations

import re
from pathlib import Path

from zkr import settings

ROOT = Path(__file__).resolve().parents[1]
VARIABLE = re.compile(r"\bZKR_[A-Z0-9_]*[A-Z0-9]\b")


def _documents() -> list[Path]:
    return sorted([ROOT / "README.md", *ROOT.glob("zkr-*/README.md"), *ROOT.glob("docs/*.md")])


def _read_by_code() -> set[str]:
    """Every ZKR_* variable a distribution's code or a test harness names."""
    names: set[str] = set()
    for path in [
        *ROOT.glob("zkr-*/src/**/*.py"),
        *ROOT.glob("zkr-*/src/**/*.js"),
        ROOT / "noxfile.py",
    ]:
        names.update(VARIABLE.findall(path.read_text(encoding="utf-8")))
    names.update(VARIABLE.findall((ROOT / "tox.ini").read_text(encoding="utf-8")))
    for path in ROOT.glob("tests/**/*.py"):
        names.update(VARIABLE.findall(path.read_text(encoding="utf-8")))
    for path in ROOT.glob("zkr-*/scripts/*"):
        names.update(VARIABLE.findall(path.read_text(encoding="utf-8")))
    return names


def test_every_documented_variable_is_read_by_zkr() -> None:
    known = _read_by_code()
    unknown = {
        (path.relative_to(ROOT).as_posix(), name)
        for path in _documents()
        for name in VARIABLE.findall(path.read_text(encoding="utf-8"))
        if name not in known
    }
    assert not unknown, f"documented but read nowhere: {sorted(unknown)}"


def test_old_spellings_are_only_named_as_old() -> None:
    """A line naming an old spelling says it is old, or names the new one beside it."""
    new_of = {v: s.env for s in settings.SETTINGS.values() for v in s.deprecated_envs}
    for path in _documents():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for old in set(new_of) & set(VARIABLE.findall(line)):
                said = re.search(r"\b(old|deprecated)\b", line) or new_of[old] in line
                assert said, f"{path.name}:{number}: {line}"


def test_the_shared_settings_are_documented_once_in_the_cli_page() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for setting in settings.SETTINGS.values():
        assert f"`{setting.env}`" in page, f"docs/cli.md does not name {setting.env}"


def test_the_docs_name_the_current_schema_version() -> None:
    from zkr.store.schema import SCHEMA_VERSION

    claims = re.compile(
        r"Our schema is version (\d+)|newer than supported version (\d+)|\(schema version (\d+);"
        r"|migrates it \(schema version (\d+)\)"
    )
    found = {
        (path.relative_to(ROOT).as_posix(), next(g for g in match.groups() if g))
        for path in _documents()
        for match in claims.finditer(path.read_text(encoding="utf-8"))
    }
    assert len(found) >= 3, found  # docs/cli.md, README.md, zkr-core/README.md
    assert {version for _, version in found} == {str(SCHEMA_VERSION)}, found


def test_every_host_readme_names_every_tool_the_host_offers() -> None:
    from zkr.tools import tool_specs

    names = {spec.name for spec in tool_specs()}
    for dist in ("zkr-hermes", "zkr-openclaw-bridge", "zkr-mcp"):
        text = (ROOT / dist / "README.md").read_text(encoding="utf-8")
        text += (
            (ROOT / "docs" / "zkr-mcp.md").read_text(encoding="utf-8") if dist == "zkr-mcp" else ""
        )
        missing = sorted(name for name in names if f"`{name}`" not in text)
        assert not missing, f"{dist}/README.md does not name {missing}"


def test_every_readme_has_an_install_block_the_wheels_session_runs() -> None:
    # scripts/readme_blocks.py (run by `nox -s wheels`) runs the blocks marked <!-- readme-test -->;
    # a README without one would be silently untested.
    import importlib.util
    import sys

    script = ROOT / "scripts" / "readme_blocks.py"
    spec = importlib.util.spec_from_file_location("readme_blocks", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_blocks"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    for readme in module.readmes(ROOT):
        blocks = list(module.marked_blocks(readme))
        assert blocks, f"{readme.relative_to(ROOT)} marks no install block"
        assert all(block.text.strip() for block in blocks)
        assert blocks, f"{readme.relative_to(ROOT)} marks no install block"
        assert all(block.text.strip() for block in blocks)


def test_readme_figures_are_the_committed_benchmark_reports() -> None:
    # README.md's performance and recall figures are rendered from benchmarks/reports/*.json by
    # scripts/readme_figures.py; a figure typed by hand, or a new report not rendered, fails here.
    import importlib.util
    import sys

    script = ROOT / "scripts" / "readme_figures.py"
    spec = importlib.util.spec_from_file_location("readme_figures", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_figures"] = module
    spec.loader.exec_module(module)
    reports = module.load_reports()
    assert "bench" in reports, "benchmarks/reports/bench.json is the README's source"
    readme = (ROOT / "README.md").read_text("utf-8")
    assert module.rendered_readme(readme, reports) == readme
