"""Every surface comes from the operation table (issue 12): the hosts' tools agree, no host reads
zkr's tables, and a throwaway operation reaches every surface with no other edit."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from tests.mcp.conftest import settings_for, sync_client
from tests.tool_drift import assert_offered_tools_match_table
from zkr import MemoryDb
from zkr import _generate_methods as methods
from zkr.models import ScopedRequest
from zkr.operations import OPERATIONS, Operation, ToolProjection
from zkr.store.database import Database
from zkr_cli import docs
from zkr_cli.__main__ import main as zkr_main
from zkr_cli._help import help_text
from zkr_cli.serve import handle_line
from zkr_hermes.provider import ZkrMemoryProvider
from zkr_openclaw_bridge import tool_list
from zkr_openclaw_bridge import tools as openclaw_tools
from zkr_web.memory import ScopedMemory

ROOT = Path(__file__).resolve().parents[1]


def _hermes_tools() -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in ZkrMemoryProvider().get_tool_schemas()}


def _openclaw_tools() -> dict[str, dict[str, Any]]:
    return tool_list.generated_tools()


def test_hermes_and_openclaw_offer_the_same_tool_with_the_same_arguments() -> None:
    hermes, openclaw = _hermes_tools(), _openclaw_tools()
    shared = set(hermes) & set(openclaw)
    table = {op.tool.name for op in OPERATIONS.values() if op.tool is not None}
    # Every table tool is on both hosts; the rest is host-specific.
    assert table <= shared
    assert set(hermes) - shared == {"zkr_suggest"}
    assert set(openclaw) - shared == {"memory_search", "memory_get"}
    for name in sorted(shared):
        # Arguments, types, limits, required fields, descriptions: all of it, exactly.
        assert hermes[name]["parameters"] == openclaw[name]["parameters"], name
        assert hermes[name]["description"] == openclaw[name]["description"], name
    assert openclaw["zkr_search"]["parameters"]["properties"]["limit"]["maximum"] == 50
    # A host default is the default the model is shown.
    for op in OPERATIONS.values():
        if op.tool is not None:
            for name, value in op.tool.defaults.items():
                assert openclaw[op.tool.name]["parameters"]["properties"][name]["default"] == value
    # And each is the table's (the check the MCP server's tools pass too).
    for offered in (hermes, openclaw):
        assert_offered_tools_match_table(
            {name: offered[name]["parameters"] for name in offered if name in table}
        )


def test_the_drift_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    # A hand-edited limit on one host is a difference the comparison above reports.
    hermes, openclaw = _hermes_tools(), _openclaw_tools()
    openclaw["zkr_search"]["parameters"]["properties"]["limit"]["maximum"] = 100
    assert hermes["zkr_search"]["parameters"] != openclaw["zkr_search"]["parameters"]


def test_the_committed_openclaw_tool_list_is_the_generated_one() -> None:
    assert tool_list.main(["--check"]) == 0, "run python -m zkr_openclaw_bridge.tool_list"
    committed = openclaw_tools.tool_definitions()
    assert committed == tool_list.generated_tools()


# ------------------------------------------------------------------------------------------------
# No host touches the schema
# ------------------------------------------------------------------------------------------------


def _zkr_tables() -> list[str]:
    with MemoryDb(":memory:") as db, db.atomic(write=False) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        return sorted(str(row[0]) for row in rows if not str(row[0]).startswith("sqlite_"))


def _sql_against(tables: list[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(t) for t in sorted(tables, key=len, reverse=True))
    return re.compile(rf"\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+[\"`]?(?:{names})\b[\"`]?(?![\w-])")


def _other_distributions() -> Iterator[Path]:
    for dist in sorted(ROOT.glob("zkr-*")):
        if dist.is_dir() and dist.name != "zkr-core":
            for path in sorted(dist.rglob("*")):
                if (
                    path.suffix in {".py", ".js", ".mjs", ".ts", ".sql"}
                    and "node_modules" not in path.parts
                ):
                    yield path


def test_no_distribution_but_zkr_core_has_sql_against_zkrs_tables() -> None:
    tables = _zkr_tables()
    assert {"sources", "evidence", "claims", "memory_commits"} <= set(tables)
    pattern = _sql_against(tables)
    hits = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in _other_distributions()
        for match in pattern.finditer(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert hits == []


def test_the_sql_grep_finds_sql() -> None:
    pattern = _sql_against(_zkr_tables())
    assert pattern.search('conn.execute("SELECT max(sequence) FROM memory_commits WHERE x")')
    assert pattern.search("JOIN claim_evidence ce ON")
    assert not pattern.search("the sources it cites, from sources and evidence")


# ------------------------------------------------------------------------------------------------
# A throwaway operation reaches every surface
# ------------------------------------------------------------------------------------------------


class EchoRequest(ScopedRequest):
    """Echo a note back (a throwaway operation of this test)."""

    note: str = Field(description="The note to echo back.")
    times: int = Field(default=1, description="How often to repeat it.")


class EchoResult(BaseModel):
    """The echoed note."""

    echoed: str = Field(description="The note, repeated.")


def _echo(db: Database, request: EchoRequest) -> EchoResult:
    return EchoResult(echoed=" ".join([request.note] * request.times))


@pytest.fixture
def throwaway(monkeypatch: pytest.MonkeyPatch) -> Operation:
    operation = Operation(
        "echo_note",
        _echo,
        EchoRequest,
        EchoResult,
        "echo a throwaway note",
        "Echo a note back, to show that one table row reaches every surface.",
        "read",
        idempotent=True,
        tool=ToolProjection("zkr_echo_note", limits={"times": 3}),
    )
    monkeypatch.setitem(OPERATIONS, operation.name, operation)
    return operation


def _run_cli(monkeypatch: pytest.MonkeyPatch, *argv: str, stdin: bytes = b"") -> tuple[int, str]:
    out = io.BytesIO()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(out, write_through=True))
    code = zkr_main(list(argv))
    return code, out.getvalue().decode("utf-8")


def test_a_throwaway_operation_reaches_every_surface(
    throwaway: Operation, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scope = {"tenant_id": "t", "person_id": "p"}
    # zkr --help
    assert "  echo_note    echo a throwaway note" in help_text().splitlines()
    # zkr echo_note --help: its fields and an example, from its models
    code, text = _run_cli(monkeypatch, "echo_note", "--help")
    assert code == 0
    assert re.search(r"^  note +string, required$", text, re.M)
    assert re.search(r"^  times +integer, default 1$", text, re.M)
    assert "How often to repeat it." in text
    # zkr --db PATH echo_note (one shot) and serve
    db_path = tmp_path / "memory.db"
    request = {**scope, "note": "hi", "times": 2}
    code, text = _run_cli(
        monkeypatch, "--db", str(db_path), "echo_note", stdin=json.dumps(request).encode()
    )
    assert (code, json.loads(text)) == (0, {"echoed": "hi hi"})
    with MemoryDb(db_path) as db:
        line = json.dumps({"command": "echo_note", "request": request}).encode()
        assert json.loads(handle_line(db, line) or b"") == {"echoed": "hi hi"}
        assert db.run("echo_note", EchoRequest(**scope, note="x")) == EchoResult(echoed="x")
    # MemoryDb's typed method: generated, so the committed methods lack it until regenerated
    assert "def echo_note(self, request: EchoRequest | Mapping[str, Any]) -> EchoResult:" in (
        methods.render()
    )
    assert methods.main(["--check"]) == 1
    # the generated reference of docs/cli.md
    reference = docs.generated_reference()
    assert "### `echo_note`" in reference and "| `times` | integer | default 1 |" in reference
    # both hosts' tool lists, with the same arguments and the tool's limit
    hermes, openclaw = _hermes_tools(), _openclaw_tools()
    assert hermes["zkr_echo_note"]["parameters"] == openclaw["zkr_echo_note"]["parameters"]
    assert openclaw["zkr_echo_note"]["parameters"]["properties"]["times"]["maximum"] == 3
    assert openclaw["zkr_echo_note"]["operation"] == "echo_note"
    assert tool_list.main(["--check"]) == 1  # the committed tools.json lacks it until regenerated
    # and Hermes offers it
    provider = ZkrMemoryProvider()
    assert "zkr_echo_note" in {s["name"] for s in provider.get_tool_schemas()}
    # the MCP server, through the real SDK client: listed, run, and held to the tool's limit
    # (one call_tool in zkr-core runs every host's tools)
    with sync_client(settings_for(db_path, "t", "p")) as (_, client):
        listed = {tool.name: tool for tool in client.tools()}
        assert listed["zkr_echo_note"].input_schema["properties"]["times"]["maximum"] == 3
        answered = client.call("zkr_echo_note", {"note": "hi", "times": 2})
        assert not answered.is_error and answered.structured_content == {"echoed": "hi hi"}
        refused = client.call("zkr_echo_note", {"note": "hi", "times": 4})
        assert refused.is_error and (refused.meta or {})["zkr/error_code"] == "parse_error"
    # the web page's one door to the database, in the page's scope
    with MemoryDb(db_path) as db:
        assert ScopedMemory(db, "t", "p").run("echo_note", note="ok") == EchoResult(echoed="ok")


# ------------------------------------------------------------------------------------------------
# The first hour (issue 14): what the READMEs and docs promise
# ------------------------------------------------------------------------------------------------

_TIME_FIELD = re.compile(r"\b(?:captured_at|recorded_at|valid_at|deleted_at|valid_from|as_of)\b")


def _documents() -> list[Path]:
    return sorted([ROOT / "README.md", *ROOT.glob("zkr-*/README.md"), *ROOT.glob("docs/*.md")])


def test_every_doc_that_shows_a_time_says_its_unit() -> None:
    silent = [
        str(path.relative_to(ROOT))
        for path in _documents()
        if _TIME_FIELD.search(text := path.read_text(encoding="utf-8"))
        and "seconds since the Unix epoch" not in " ".join(text.split())
    ]
    assert silent == []


def _pip_install_paths(readme: Path) -> set[str]:
    text = readme.read_text(encoding="utf-8")
    commands = re.findall(r"pip install ((?:\./zkr-[\w-]+ ?)+)", text)
    assert commands, f"{readme.relative_to(ROOT)} gives no install command from a checkout"
    return {path for command in commands for path in command.split()}


def _closure(dist: str) -> set[str]:
    """*dist* and every zkr distribution it depends on (zkr is not on the package index)."""
    import tomllib

    found, pending = set(), [dist]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.add(name)
        project = tomllib.loads((ROOT / name / "pyproject.toml").read_text())["project"]
        for dep in project.get("dependencies", []):
            match = re.match(r"(zkr-[a-z0-9-]+)", dep)
            if match:
                pending.append(match.group(1))
    return found


@pytest.mark.parametrize("dist", ["zkr-hermes", "zkr-openclaw-bridge", "zkr-langgraph"])
def test_host_readmes_install_from_a_checkout_with_every_zkr_dependency(dist: str) -> None:
    paths = _pip_install_paths(ROOT / dist / "README.md")
    for path in paths:
        assert (ROOT / path / "pyproject.toml").exists(), path
    assert {p.removeprefix("./") for p in paths} >= _closure(dist)


def test_the_openclaw_readme_says_how_to_get_openclaw_and_check_it() -> None:
    text = (ROOT / "zkr-openclaw-bridge" / "README.md").read_text(encoding="utf-8")
    assert "npm install -g openclaw@2026.7.1-2" in text
    assert "22.22.3" in text and "Node 20" in text
    assert "### Check that it works" in text
    assert "openclaw plugins inspect zkr --runtime" in text


def test_the_hermes_readme_setup_matches_what_hermes_memory_setup_does() -> None:
    # The picker (`hermes memory setup` without a name) asks the provider's questions;
    # `hermes memory setup zkr` only selects the provider (hosts/hermes.md §2.3).
    text = (ROOT / "zkr-hermes" / "README.md").read_text(encoding="utf-8")
    assert "hermes memory setup                # pick" in text
    assert (
        "`hermes memory setup zkr` and `hermes config set memory.provider zkr`\nonly select" in text
    )
    assert "hermes memory setup zkr` asks" not in text
